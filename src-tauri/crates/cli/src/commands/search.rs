//! `arbor-cli search QUERY [--root DIR]... [--project P] [--json] [--db FILE]`.
//!
//! Brings the index up to date for its roots first, then answers. Each hit carries the entry's
//! status against the session's leaf as loaded: in_context, compacted or abandoned.
use super::index::{open_library, resolve_roots, sync};
use super::CmdResult;
use library::SearchQuery;
use std::io::Write;

pub fn run(args: crate::SearchArgs) -> CmdResult {
    let mut lib = open_library(args.db.as_deref())?;
    let roots = resolve_roots(&lib, &args.roots)?;
    sync(&mut lib, &roots, !args.json)?;
    let mut q = SearchQuery::new(&args.query);
    q.project = args.project.clone();
    q.roots = roots;
    q.limit = 100;
    let hits = lib.search(&q).map_err(|e| e.to_string())?;
    // Written with errors checked: a closed pipe (`| head`) ends the output quietly.
    let mut out = std::io::stdout().lock();
    let r = print_hits(&mut out, &args, &hits);
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write the results ({e})")),
        Ok(()) => Ok(()),
    }
}

fn print_hits(out: &mut impl Write, args: &crate::SearchArgs, hits: &[library::SearchHit]) -> std::io::Result<()> {
    if args.json {
        let arr: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                serde_json::json!({
                    "sessionPath": h.session_path,
                    "sessionId": h.session_id,
                    "entryId": h.entry_id,
                    "status": h.status.name(),
                    "snippet": h.snippet,
                    "entryType": h.entry_type,
                    "role": h.role,
                    "timestamp": h.timestamp,
                    "cwd": h.cwd,
                    "sessionName": h.session_name,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&arr).unwrap_or_else(|_| "[]".into()))?;
        return Ok(());
    }
    if hits.is_empty() {
        writeln!(out, "no matches for {:?}", args.query)?;
        return Ok(());
    }
    for h in hits {
        let badge = match h.status {
            library::EntryStatus::InContext => "in context",
            library::EntryStatus::Compacted => "compacted",
            library::EntryStatus::Abandoned => "abandoned branch",
        };
        writeln!(out, "[{badge}] {} #{}", h.session_path.display(), h.entry_id)?;
        match &h.snippet {
            Some(s) => writeln!(out, "    {}", s.replace('\n', " "))?,
            // the file changed at that entry since it was indexed; the search had it re-read
            None => writeln!(out, "    (no excerpt: the session file changed since it was indexed)")?,
        }
    }
    writeln!(out, "{} hit(s)", hits.len())?;
    Ok(())
}
