//! `arbor-cli`: the same engine as the app, headless.
//!
//! Each subcommand lives in `commands/<name>.rs` and is a thin adapter over one crate:
//! `inspect`, `tree`, `context` over `session-engine`; `compact`, `navigate` over `summarizer`;
//! `index`, `search` over `library`.
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod commands;

#[derive(Parser)]
#[command(name = "arbor-cli", version, about = "Inspect, compact, navigate and search Pi coding-agent sessions")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Budget flags shared by `inspect`, `compact` and `navigate` (the oracle's flags).
#[derive(Args, Debug, Clone, Default)]
pub struct BudgetArgs {
    /// The model's context window in tokens [default: the session model's, from Pi's models.json,
    /// else Pi's model table, else 200000; `inspect` keeps the oracle's 200000]
    #[arg(long)]
    pub context_window: Option<u64>,
    /// compaction.reserveTokens [default: Pi's settings files, else 16384]
    #[arg(long)]
    pub reserve_tokens: Option<u64>,
    /// compaction.keepRecentTokens [default: Pi's settings files, else 20000]
    #[arg(long)]
    pub keep_recent_tokens: Option<u64>,
    /// compaction.enabled (only `false` disables)
    #[arg(long)]
    pub compaction_enabled: Option<bool>,
    /// branchSummary.reserveTokens [default: Pi's settings files, else 16384]
    #[arg(long)]
    pub branch_reserve_tokens: Option<u64>,
    /// Explicit token budget for branch-entry selection (0 = unlimited)
    #[arg(long)]
    pub branch_budget: Option<u64>,
}

/// Provider flags shared by `compact` and `navigate`.
#[derive(Args, Debug, Clone)]
pub struct ProviderArgs {
    /// openai | anthropic | gemini | offline
    #[arg(long, default_value = "offline")]
    pub provider: String,
    /// Model id, e.g. gpt-4o-mini, claude-sonnet-4-5, gemini-2.5-flash
    #[arg(long)]
    pub model: Option<String>,
    /// Base URL: OpenAI-compatible ends in /v1; Anthropic and Gemini take the host
    #[arg(long)]
    pub base_url: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Print what Pi would compute for a session file, as JSON (the conformance report)
    Inspect(InspectArgs),
    /// Print the session tree as ASCII: active path, leaf, labels, compactions, branch summaries
    Tree(TreeArgs),
    /// Print, readably, what the model would see at the leaf (or --leaf), with token counts
    Context(ContextArgs),
    /// Compact the session now: summarize old history and append a `compaction` entry
    Compact(CompactArgs),
    /// Move the leaf to another node, optionally appending a `branch_summary` of the branch left
    Navigate(NavigateArgs),
    /// Build or update the SQLite index of session files
    Index(IndexArgs),
    /// Full-text search across indexed sessions
    Search(SearchArgs),
    /// Set or clear an entry's label: appends Pi's `label` entry (synced before the id is printed)
    Label(LabelArgs),
    /// Summary workbench: show, check (drop alarm, retention), diff, edit and revert summaries
    Summary(commands::summary::SummaryArgs),
    /// For every entry on the path, the context tokens Pi would estimate with it as the leaf
    Timeline(commands::timeline::TimelineArgs),
    /// Export the session, a branch (--leaf) or the context at a node as Markdown or self-contained HTML
    Export(commands::export::ExportArgs),
    /// List the API keys, tokens and private keys an export would redact (the session is only read)
    Secrets(commands::secrets::SecretsArgs),
    /// Save a version 1 or 2 session as a new version 3 file (the original is not changed)
    Migrate(commands::migrate::MigrateArgs),
    /// Name the session: appends Pi's `session_info` entry (synced before the id is printed)
    Rename(commands::rename::RenameArgs),
    /// Arbor's Pi extension: install, uninstall, status, and `serve` (review Pi's compactions before Pi writes them)
    Pi(commands::pi::PiArgs),
    /// Two nodes side by side: common ancestor, and per side entries, context, summaries, files, commands, errors, cost
    Compare(commands::compare::CompareArgs),
    /// Bring entries the model no longer sees back into context: one custom message at the leaf
    Recall(commands::recall::RecallArgs),
}

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// Inspect as if this entry were the leaf (`null` = before the first entry)
    #[arg(long)]
    pub leaf: Option<String>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Navigation target: adds the `branch` section
    #[arg(long)]
    pub target: Option<String>,
    /// Custom instructions (accepted for oracle compatibility)
    #[arg(long)]
    pub custom_instructions: Option<String>,
    /// Read options from a JSON object with the oracle's `options` keys
    #[arg(long)]
    pub options_json: Option<PathBuf>,
    /// Pretty-print the JSON
    #[arg(long)]
    pub pretty: bool,
}

#[derive(Args, Debug)]
pub struct TreeArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// Mark this entry as the leaf instead of the file's last entry
    #[arg(long)]
    pub leaf: Option<String>,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// Show the context as if this entry were the leaf
    #[arg(long)]
    pub leaf: Option<String>,
    /// Context window used for the threshold line [default: the session model's, from Pi's
    /// models.json, else Pi's model table, else 200000]
    #[arg(long)]
    pub context_window: Option<u64>,
    /// compaction.reserveTokens used for the threshold line [default: Pi's settings files, else 16384]
    #[arg(long)]
    pub reserve_tokens: Option<u64>,
}

#[derive(Args, Debug)]
pub struct CompactArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// Compact as if this entry were the leaf
    #[arg(long)]
    pub leaf: Option<String>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Extra focus for the summary
    #[arg(long)]
    pub instructions: Option<String>,
    /// Compact up to here: keep from this entry (a valid cut point of the path) instead of where
    /// keepRecentTokens puts the cut; an invalid one is refused, with the nearest valid ones
    #[arg(long, value_name = "ID")]
    pub keep_from: Option<String>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    #[command(flatten)]
    pub provider: ProviderArgs,
}

/// The artifact ledger of a written summary (default: Arbor's setting `artifactLedger`, else off).
#[derive(Args, Debug, Clone, Copy)]
pub struct LedgerArgs {
    /// Add the artifact ledger: a `## Artifacts` section listing the paths, commands and errors
    /// of the summarized span that the summary does not mention
    #[arg(long, overrides_with = "no_ledger")]
    pub ledger: bool,
    /// No artifact ledger, whatever Arbor's settings say
    #[arg(long, overrides_with = "ledger")]
    pub no_ledger: bool,
}

impl LedgerArgs {
    /// The flags first, then Arbor's setting; off when neither says (Pi's text alone).
    pub fn resolve(self, setting: Option<bool>) -> bool {
        if self.ledger {
            true
        } else if self.no_ledger {
            false
        } else {
            setting.unwrap_or(false)
        }
    }
}

#[derive(Args, Debug)]
pub struct NavigateArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// Entry to navigate to
    #[arg(long)]
    pub target: String,
    /// Navigate from this leaf instead of the file's last entry
    #[arg(long)]
    pub leaf: Option<String>,
    /// Summarize the branch being left
    #[arg(long)]
    pub summarize: bool,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Extra focus for the branch summary
    #[arg(long)]
    pub instructions: Option<String>,
    /// Label to attach
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    #[command(flatten)]
    pub provider: ProviderArgs,
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Session roots to index (default: Pi's sessions root)
    #[arg(long = "root")]
    pub roots: Vec<PathBuf>,
    /// Index database file (default: Arbor's app-data folder)
    #[arg(long)]
    pub db: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Full-text query
    pub query: String,
    /// Session roots (default: Pi's sessions root)
    #[arg(long = "root")]
    pub roots: Vec<PathBuf>,
    /// Only sessions of this project (cwd)
    #[arg(long)]
    pub project: Option<String>,
    /// Print hits as a JSON array
    #[arg(long)]
    pub json: bool,
    /// Index database file (default: Arbor's app-data folder)
    #[arg(long)]
    pub db: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["text", "clear"]))]
pub struct LabelArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The entry to label
    #[arg(long)]
    pub entry: String,
    /// The label text
    #[arg(long)]
    pub text: Option<String>,
    /// Remove the entry's label
    #[arg(long)]
    pub clear: bool,
    /// Print `{"entryId": …}` instead of the bare id
    #[arg(long)]
    pub json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(a) => commands::inspect::run(a),
        Command::Tree(a) => commands::tree::run(a),
        Command::Context(a) => commands::context::run(a),
        Command::Compact(a) => commands::compact::run(a),
        Command::Navigate(a) => commands::navigate::run(a),
        Command::Index(a) => commands::index::run(a),
        Command::Search(a) => commands::search::run(a),
        Command::Label(a) => commands::label::run(a),
        Command::Summary(a) => commands::summary::run(a),
        Command::Compare(a) => commands::compare::run(a),
        Command::Recall(a) => commands::recall::run(a),
        Command::Timeline(a) => commands::timeline::run(a),
        Command::Export(a) => commands::export::run(a),
        Command::Secrets(a) => commands::secrets::run(a),
        Command::Migrate(a) => commands::migrate::run(a),
        Command::Rename(a) => commands::rename::run(a),
        Command::Pi(a) => commands::pi::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arbor-cli: {e}");
            ExitCode::from(2)
        }
    }
}
