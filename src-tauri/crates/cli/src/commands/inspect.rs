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
    let mut v = report::inspect(&session, &o).map_err(|e| e.to_string())?;
    // A fork (Pi's /fork, forkFrom or newSession({parentSession})): where its parent is and
    // whether it still resolves. Only for files that name one, so the oracle's report of every
    // other file stays byte for byte what it was.
    if let (Some(p), pi_json::Value::Obj(m)) = (session_engine::fork::parent_of(&a.file, &session), &mut v) {
        let mut o = pi_json::Map::new();
        o.insert("value", pi_json::Value::from(p.parent_session.as_str()));
        o.insert("path", pi_json::Value::from(p.path.display().to_string()));
        o.insert("status", pi_json::Value::Str(p.status.as_str().into()));
        o.insert("resolves", pi_json::Value::Bool(p.status == session_engine::fork::ParentStatus::Resolves));
        o.insert("explain", pi_json::Value::from(p.status.explain(&p.parent_session)));
        let point = (p.status == session_engine::fork::ParentStatus::Resolves)
            .then(|| session_engine::Session::open(&p.path).ok())
            .flatten()
            .and_then(|parent| session_engine::fork::fork_point(&session, &parent).map(|i| parent.id(i).to_string()));
        o.insert("forkPointId", point.map_or(pi_json::Value::Null, pi_json::Value::from));
        m.insert("parentSession", pi_json::Value::Obj(o));
    }
    let text = if a.pretty { pi_json::to_pretty(&v) } else { pi_json::to_string(&v) };
    println!("{text}");
    Ok(())
}
