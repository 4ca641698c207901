//! `arbor-cli export FILE --format markdown|html [--leaf ID] [--context] [--out PATH] [--force]
//! [--keep-secrets] [--json]`: the whole session (the path to the leaf first, then every branch),
//! the branch to `--leaf`, or with `--context` what the model sees at the leaf, as Markdown or as
//! one self-contained HTML file (`session_export`: no script, no external request, content
//! escaped).
//!
//! Secrets (API keys, tokens, private keys, `KEY=value` secrets) are redacted unless
//! `--keep-secrets`; stderr says how many and `arbor-cli secrets FILE` lists them. With `--out`,
//! `--json` prints a report on stdout: `{out, entries, branches, keptSecrets, redacted: [{entryId,
//! field, kind, start, end}]}` (positions as `arbor-cli secrets` gives them).
//!
//! The export streams through a buffered writer into a temporary file beside PATH, which then
//! takes PATH's name (refused when PATH exists, unless `--force`; never the session file
//! itself). Without `--out` it goes to stdout. Big files report progress on stderr.
use super::CmdResult;
use session_engine::store::{same_file, write_new_file, NewFileError};
use session_export::{export_with, Format, Options, Scope, Stats};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// `arbor-cli export` arguments.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Session file (.jsonl); it is only read
    pub file: PathBuf,
    /// markdown | html
    #[arg(long)]
    pub format: String,
    /// Export the branch from the root to this entry (with --context: the context at it)
    #[arg(long)]
    pub leaf: Option<String>,
    /// Export only what the model sees at the leaf (or --leaf)
    #[arg(long)]
    pub context: bool,
    /// Write here instead of stdout (refused when it exists, unless --force)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing --out file (never the session file)
    #[arg(long)]
    pub force: bool,
    /// Write API keys, tokens and private keys as they are (they are redacted by default)
    #[arg(long)]
    pub keep_secrets: bool,
    /// With --out: print a JSON report on stdout (what was written, and the secrets redacted)
    #[arg(long)]
    pub json: bool,
}

/// Files above this size report progress on stderr.
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

pub fn run(args: ExportArgs) -> CmdResult {
    let format = match args.format.as_str() {
        "markdown" | "md" => Format::Markdown,
        "html" => Format::Html,
        other => return Err(format!("unknown format {other:?}; use --format markdown or --format html")),
    };
    if args.json && args.out.is_none() {
        return Err("--json prints a report on stdout, where the export goes without --out; add --out PATH.".into());
    }
    let opts = Options { keep_secrets: args.keep_secrets };
    if let Some(out) = &args.out {
        if same_file(out, &args.file) {
            return Err(format!(
                "{} is the session file itself; nothing was written. Pick another --out path.",
                out.display()
            ));
        }
        if out.exists() && !args.force {
            return Err(format!(
                "{} already exists; nothing was written. Pick another --out path, or pass --force to replace it.",
                out.display()
            ));
        }
        if out.is_dir() {
            return Err(format!("{} is a folder; nothing was written. Give --out a file name.", out.display()));
        }
    }
    let session = super::open_session(&args.file)?;
    let leaf = super::leaf_arg(&session, args.leaf.as_deref())?;
    let scope = match (args.context, &args.leaf) {
        (true, _) => Scope::Context { leaf },
        (false, Some(_)) => Scope::Branch { leaf },
        (false, None) => Scope::Session { leaf },
    };
    let file_name = args.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let title = match session.name() {
        Some(n) => format!("{n} ({file_name})"),
        None => file_name,
    };
    let big = session.file_len() >= PROGRESS_MIN_BYTES;
    let mut last_pct = u64::MAX;
    let mut progress = |done: u64, total: u64| {
        if !big || total == 0 {
            return;
        }
        let pct = done * 100 / total;
        if pct / 5 != last_pct / 5 || last_pct == u64::MAX {
            last_pct = pct;
            eprintln!("arbor-cli: exporting {}: {pct}%", args.file.display());
        }
    };
    let io_err =
        |what: &Path, e: std::io::Error| format!("cannot write {}: {e}; nothing was written there", what.display());
    match &args.out {
        None => {
            let stdout = std::io::stdout();
            let mut w = BufWriter::with_capacity(1 << 20, stdout.lock());
            let stats = export_with(&session, scope, format, opts, &title, &mut w, &mut progress)
                .and_then(|s| w.flush().map(|_| s))
                .map_err(|e| format!("cannot write the export to stdout: {e}"))?;
            tell_redacted(&stats);
        }
        Some(out) => {
            // Checked again just before writing: the session file is never the target.
            if args.force && same_file(out, &args.file) {
                return Err(format!("{} is the session file itself; nothing was written.", out.display()));
            }
            let stats = write_new_file(out, args.force, |w| {
                export_with(&session, scope, format, opts, &title, w, &mut progress)
            })
            .map_err(|e| match e {
                NewFileError::Exists => format!(
                    "{} appeared while exporting; nothing was written. Pass --force to replace it.",
                    out.display()
                ),
                NewFileError::IsDir => {
                    format!("{} is a folder; nothing was written. Give --out a file name.", out.display())
                }
                NewFileError::Io(e) => io_err(out, e),
            })?;
            if big {
                eprintln!("arbor-cli: wrote {}", out.display());
            }
            if args.json {
                let report = serde_json::json!({
                    "out": out.display().to_string(),
                    "entries": stats.entries,
                    "branches": stats.branches,
                    "keptSecrets": args.keep_secrets,
                    "redacted": super::secrets::findings_json(&stats.secrets),
                });
                println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
            } else {
                tell_redacted(&stats);
            }
        }
    }
    Ok(())
}

/// One line on stderr when secrets were left out, so the user knows the export differs from
/// the session and how to see or keep them.
fn tell_redacted(stats: &Stats) {
    if stats.secrets.is_empty() {
        return;
    }
    let mut kinds: Vec<&str> = stats.secrets.iter().map(|f| f.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    eprintln!(
        "arbor-cli: redacted {} secret(s) ({}); `arbor-cli secrets FILE` lists them, --keep-secrets keeps them",
        stats.secrets.len(),
        kinds.join(", ")
    );
}
