use super::CmdResult;
use session_engine::report::{self, InspectOptions};

/// Prints the oracle-compatible report. Flags override `--options-json`.
pub fn run(a: crate::InspectArgs) -> CmdResult {
    // Unlike the other commands, inspect also reports on files Pi rejects (headerAccepted: false).
    let session = session_engine::Session::open(&a.file).map_err(|e| e.to_string())?;
    let mut o = match &a.options_json {
        Some(p) => {
            let bytes = std::fs::read(p).map_err(|e| format!("{}: cannot read the options file: {e}", p.display()))?;
            let v = pi_json::parse_bytes(&bytes).map_err(|e| {
                format!("{}: invalid JSON ({e}); pass an object like {{\"keepRecentTokens\": 800}}", p.display())
            })?;
            InspectOptions::from_oracle_json(&v)
        }
        None => InspectOptions::default(),
    };
    if let Some(l) = &a.leaf {
        o.leaf = Some(if l == "null" { None } else { Some(l.clone()) });
    }
    let b = &a.budget;
    if let Some(n) = b.context_window {
        o.context_window = n as f64;
    }
    if let Some(n) = b.reserve_tokens {
        o.compaction.reserve_tokens = n as f64;
    }
    if let Some(n) = b.keep_recent_tokens {
        o.compaction.keep_recent_tokens = n as f64;
    }
    if let Some(e) = b.compaction_enabled {
        o.compaction.enabled = e;
    }
    if let Some(n) = b.branch_reserve_tokens {
        o.branch_reserve_tokens = n as f64;
    }
    if let Some(n) = b.branch_budget {
        o.branch_budget = Some(n as f64);
    }
    if a.target.is_some() {
        o.target = a.target.clone();
    }
    if a.custom_instructions.is_some() {
        o.custom_instructions = a.custom_instructions.clone();
    }
    let v = report::inspect(&session, &o).map_err(|e| e.to_string())?;
    let text = if a.pretty { pi_json::to_pretty(&v) } else { pi_json::to_string(&v) };
    println!("{text}");
    Ok(())
}
