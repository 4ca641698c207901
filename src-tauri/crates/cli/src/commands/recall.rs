//! `arbor-cli recall FILE --entry ID [--entry ID…] [--max-chars N] [--dry-run] [--json]`: brings
//! entries the model no longer sees back into context as one Pi `custom_message` at the file's
//! leaf (`session_engine::recall`). The preview (`--dry-run`) says what it costs and whether the
//! context would then be past the compaction threshold. The write takes the session lock and is
//! planned on the bytes read: a recall's meaning depends on the leaf, so when another program
//! appended meanwhile nothing is written.
use super::{open_session, CmdResult};
use clap::Args;
use serde_json::json;
use session_engine::recall::{plan_recall, recall_entry, DEFAULT_MAX_CHARS};
use session_engine::store::{append_entry_planned, SessionLock};
use session_engine::{ids, time};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RecallArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// An entry to bring back (repeat for several: they become one message)
    #[arg(long = "entry", required = true)]
    pub entries: Vec<String>,
    /// Longest text brought back per entry, in characters (longer ones are cut with a marker)
    #[arg(long, default_value_t = DEFAULT_MAX_CHARS)]
    pub max_chars: usize,
    /// Show the cost and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Bring back API keys, tokens and private keys as they are (by default they are redacted,
    /// as in an export: the message goes to a model provider)
    #[arg(long)]
    pub keep_secrets: bool,
    #[command(flatten)]
    pub budget: crate::BudgetArgs,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: RecallArgs) -> CmdResult {
    let _lock = if a.dry_run { None } else { Some(SessionLock::try_acquire(&a.file).map_err(|e| e.to_string())?) };
    let session = open_session(&a.file)?;
    if let Some(why) = session.read_only_reason() {
        return Err(format!(
            "{}: this session is read-only, so nothing was brought back: {why} From the command line, `arbor-cli migrate` writes that version 3 copy.",
            a.file.display()
        ));
    }
    let leaf = session.file_leaf();
    let idx = a
        .entries
        .iter()
        .map(|id| {
            session.index_of(id).ok_or_else(|| {
                format!("no entry with id {id} in this session; run `arbor-cli tree FILE` to see the ids")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let settings = super::navigate::compaction_settings(&session, &a.budget);
    let window = a.budget.context_window.unwrap_or_else(|| super::session_window(&session, leaf).tokens) as f64;
    let keep = a.keep_secrets;
    let redact = move |t: &str| {
        let (text, found) = secrets::redact_unless(t, keep);
        (text, found.iter().map(|f| (f.kind.to_string(), f.start, f.end)).collect())
    };
    let plan = plan_recall(&session, leaf, &idx, a.max_chars, &settings, window, &redact)
        .map_err(|e| format!("{e}; nothing was written"))?;
    let preview = json!({
        "tokens": plan.tokens,
        "contextTokens": plan.context_tokens,
        "contextTokensAfter": plan.context_tokens_after,
        "threshold": plan.threshold,
        "crossesThreshold": plan.crosses_threshold,
        "cut": plan.cut,
        "sources": plan.sources.iter().map(|(id, place)| json!({"entryId": id, "where": place})).collect::<Vec<_>>(),
        "secrets": plan.secrets.iter().map(|s| json!({"entryId": s.entry_id, "kind": s.kind, "start": s.start, "end": s.end})).collect::<Vec<_>>(),
        "secretsKept": keep,
    });
    if !plan.secrets.is_empty() && !a.json {
        eprintln!(
            "{} secret(s) in the text brought back, {}:",
            plan.secrets.len(),
            if keep { "kept as they are (--keep-secrets)" } else { "redacted (--keep-secrets keeps them)" }
        );
        for s in &plan.secrets {
            eprintln!("  {} in entry {} at {}..{}", s.kind, s.entry_id, s.start, s.end);
        }
    }
    if a.dry_run {
        if a.json {
            println!("{}", serde_json::to_string_pretty(&preview).expect("JSON"));
        } else {
            println!(
                "{}\n\n{} tokens; the context goes from {} to {} (threshold {}){}",
                plan.text,
                plan.tokens,
                plan.context_tokens,
                plan.context_tokens_after,
                plan.threshold,
                if plan.crosses_threshold {
                    ": past the threshold, so Pi will compact before the next prompt; compact first (`arbor-cli compact`) to keep it"
                } else {
                    ""
                }
            );
        }
        return Ok(());
    }
    let id = ids::new_entry_id(|id| session.index_of(id).is_some());
    let parent = leaf.map(|l| session.id(l));
    let entry = recall_entry(&plan, &id, parent, &time::now_iso());
    append_entry_planned(&a.file, &entry, true, session.file_len()).map_err(|e| e.to_string())?;
    if plan.crosses_threshold {
        eprintln!(
            "note: the context is now past the compaction threshold ({} > {}): Pi compacts before the next prompt",
            plan.context_tokens_after, plan.threshold
        );
    }
    if a.json {
        let mut v = preview;
        v["entryId"] = json!(id);
        println!("{}", serde_json::to_string_pretty(&v).expect("JSON"));
    } else {
        println!("{id}");
    }
    Ok(())
}
