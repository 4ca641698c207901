//! `arbor-cli summary score|cite`: is a summary good enough to keep working from. Both only
//! read; the rules are summary_analysis::quality's.
use super::summary::{print_json, summary_entry, ShowArgs};
use super::{open_session, preview, CmdResult};
use clap::Args;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use summary_analysis::quality::{self, ProbeKind};

#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The compaction or branch_summary entry
    #[arg(long)]
    pub entry: String,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

pub fn score(a: ScoreArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = summary_entry(&session, &a.entry)?;
    let q = summary_analysis::quality(&session, i);
    if a.json {
        let f = q.forgetting.as_ref();
        print_json(&json!({
            "entryId": q.entry_id,
            "score": q.score,
            "byKind": q.by_kind,
            "probes": q.probes,
            "unsupported": q.unsupported,
            "growth": q.growth,
            "forgetting": f.map(|f| json!({
                "rereadFiles": f.reread_files,
                "rerunCommands": f.rerun_commands,
                "callsBeforeFirstEdit": f.calls_before_first_edit,
                "edited": f.edited,
                "baselineCallsBeforeFirstEdit": f.baseline_calls_before_first_edit,
                "windowEntries": f.window_entries,
            })),
        }));
        return Ok(());
    }
    let mut out = String::new();
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    let _ = writeln!(out, "summary {}: score {}", q.entry_id, q.score.map_or("— (no probe)".into(), pct));
    for k in ProbeKind::ALL {
        let s = q.by_kind.get(k);
        if s.probes > 0 {
            let _ = writeln!(out, "  {:<13}{}/{} answered", k.as_str(), s.answered, s.probes);
        }
    }
    let g = &q.growth;
    let _ = writeln!(
        out,
        "growth: {} tokens for {} replaced{}{}",
        g.summary_tokens,
        g.replaced_tokens,
        g.previous_summary_tokens.map(|p| format!(", previous summary {p}")).unwrap_or_default(),
        match g.flag {
            Some(quality::GrowthFlag::NotSmaller) => " — not smaller than what it replaced",
            Some(quality::GrowthFlag::Grew) => " — grew more than 1.5× over the previous summary",
            None => "",
        }
    );
    if let Some(f) = &q.forgetting {
        let _ = writeln!(
            out,
            "after it: {} files re-read, {} commands re-run, {} tool calls before the first edit{} (session start: {})",
            f.reread_files.len(),
            f.rerun_commands.len(),
            f.calls_before_first_edit,
            if f.edited { "" } else { " (no edit yet)" },
            f.baseline_calls_before_first_edit.map_or("no edit".into(), |b| b.to_string())
        );
    }
    if !q.unsupported.is_empty() {
        let _ = writeln!(out, "\nunsupported ({}): nothing in the span says these", q.unsupported.len());
        for u in &q.unsupported {
            let _ = writeln!(out, "  [{}] {}", u.section, preview(&u.text, 160));
        }
    }
    let _ = writeln!(out, "\nprobes:");
    for p in &q.probes {
        let _ = writeln!(
            out,
            "  {} {:<13}{}  ({})",
            if p.answered { "✓" } else { "✗" },
            p.kind.as_str(),
            preview(&p.expected, 140),
            p.source_entry_id
        );
    }
    print!("{out}");
    Ok(())
}

pub fn cite(a: ShowArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = summary_entry(&session, &a.entry)?;
    let c = summary_analysis::citations(&session, i, summary_analysis::summary_text(&session, i));
    if a.json {
        print_json(&serde_json::to_value(&c).expect("JSON"));
        return Ok(());
    }
    let mut out = String::new();
    for it in &c.items {
        let src: Vec<String> = it.sources.iter().map(|s| format!("{} ({:.2})", s.entry_id, s.score)).collect();
        let _ = writeln!(
            out,
            "[{}] {}\n    {}",
            it.section,
            preview(&it.text, 160),
            if it.unsupported {
                "unsupported: nothing in the span says this".to_string()
            } else if src.is_empty() {
                "(too short to cite)".to_string()
            } else {
                src.join(", ")
            }
        );
    }
    print!("{out}");
    Ok(())
}
