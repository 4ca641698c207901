//! `arbor-cli compare FILE --a ID --b ID [--json]`: two nodes side by side (`branch_compare`).
//! Only reads.
use super::{open_session, preview, CmdResult};
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The first node (an entry id)
    #[arg(long)]
    pub a: String,
    /// The second node (an entry id)
    #[arg(long)]
    pub b: String,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: CompareArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let node = |id: &str| {
        session
            .index_of(id)
            .ok_or_else(|| format!("no entry with id {id} in this session; run `arbor-cli tree FILE` to see the ids"))
    };
    let (ia, ib) = (node(&a.a)?, node(&a.b)?);
    let c = branch_compare::compare(&session, ia, ib);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c).expect("JSON"));
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(out, "common ancestor: {}", c.ancestor_id.as_deref().unwrap_or("none (different roots)"));
    for (name, s) in ["A", "B"].iter().zip(&c.sides) {
        let _ = writeln!(
            out,
            "\n{name}: {} — {} entries, {} turns, context {} tokens, model {}, cost ${:.4}",
            s.tip_id,
            s.entries,
            s.turns,
            s.context_tokens,
            s.model.as_deref().unwrap_or("?"),
            s.cost
        );
        if let Some(r) = &s.last_user_request {
            let _ = writeln!(out, "  last request: {} ({})", preview(&r.text, 120), r.entry_id);
        }
        for sm in &s.summaries {
            let score = sm.score.map(|x| format!("{:.0} %", x * 100.0)).unwrap_or_else(|| "—".into());
            let _ = writeln!(out, "  {} {} (score {score})", sm.kind, sm.entry_id);
        }
        for cmd in &s.commands {
            let _ = writeln!(out, "  ran {} ×{} → {}", preview(&cmd.command, 100), cmd.runs, cmd.last_outcome);
        }
        for e in s.errors.iter().take(5) {
            let _ = writeln!(out, "  error: {} ({})", preview(&e.text, 120), e.entry_id);
        }
    }
    let list = |v: &[String]| if v.is_empty() { "—".to_string() } else { v.join(", ") };
    let _ = writeln!(out, "\nonly A: read {}; modified {}", list(&c.only_a.read_files), list(&c.only_a.modified_files));
    let _ = writeln!(out, "only B: read {}; modified {}", list(&c.only_b.read_files), list(&c.only_b.modified_files));
    let _ = writeln!(
        out,
        "both: read {}; modified {}; modified differently {}",
        list(&c.both.read_files),
        list(&c.both.modified_files),
        list(&c.both.modified_differently)
    );
    print!("{out}");
    Ok(())
}
