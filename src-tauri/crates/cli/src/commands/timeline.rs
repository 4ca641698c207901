//! `arbor-cli timeline FILE [--leaf ID] --json`: for every entry on the path to the leaf, the
//! context tokens Pi would estimate with that entry as the leaf (`session_engine::timeline`),
//! the usage its assistant message reports (or null), whether it is a compaction, and its cost.
//! Non-finite numbers (Pi's `NaN` for a malformed usage) are written as `null`.
use super::CmdResult;
use pi_json::Value;
use session_engine::timeline::timeline;
use std::io::Write;
use std::path::PathBuf;

/// `arbor-cli timeline` arguments.
#[derive(clap::Args, Debug)]
pub struct TimelineArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The path to this entry instead of the file's leaf
    #[arg(long)]
    pub leaf: Option<String>,
    /// Print `{leafId, points: [{entryId, type, contextTokens, usageTokens, compaction, cost}]}`
    #[arg(long)]
    pub json: bool,
}

fn num(x: f64) -> String {
    pi_json::to_string(&Value::Num(x))
}

pub fn run(args: TimelineArgs) -> CmdResult {
    let session = super::open_session(&args.file)?;
    let leaf = super::leaf_arg(&session, args.leaf.as_deref())?;
    let points = timeline(&session, leaf);
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let io = |e: std::io::Error| format!("cannot write the timeline: {e}");
    if args.json {
        write!(
            w,
            "{{\"leafId\":{},\"points\":[",
            leaf.map(|i| pi_json::quote(session.id(i))).unwrap_or_else(|| "null".into())
        )
        .map_err(io)?;
        for (n, p) in points.iter().enumerate() {
            let e = session.entry(p.entry);
            write!(
                w,
                "{}{{\"entryId\":{},\"type\":{},\"contextTokens\":{},\"usageTokens\":{},\"compaction\":{},\"cost\":{}}}",
                if n == 0 { "" } else { "," },
                pi_json::quote(&e.id),
                pi_json::quote(&e.type_name),
                num(p.context_tokens),
                p.usage_tokens.map(num).unwrap_or_else(|| "null".into()),
                p.compaction,
                p.cost.map(num).unwrap_or_else(|| "null".into()),
            )
            .map_err(io)?;
        }
        writeln!(w, "]}}").map_err(io)?;
    } else {
        writeln!(w, "{:>8}  {:<10} {:<22} {:>12} {:>12}", "#", "id", "type", "context", "usage").map_err(io)?;
        for (n, p) in points.iter().enumerate() {
            let e = session.entry(p.entry);
            let usage = p.usage_tokens.map(num).unwrap_or_default();
            let mark = if p.compaction { "  ▼ compaction" } else { "" };
            writeln!(
                w,
                "{n:>8}  {:<10} {:<22} {:>12} {usage:>12}{mark}",
                super::preview(&e.id, 10),
                super::preview(&e.type_name, 22),
                num(p.context_tokens)
            )
            .map_err(io)?;
        }
    }
    w.flush().map_err(io)?;
    Ok(())
}
