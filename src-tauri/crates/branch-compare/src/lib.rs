//! Two nodes of a session tree side by side (the graph's **Compare**, `arbor-cli compare`).
//!
//! A side is what Pi's branch collection gives for it (`collectEntriesForBranchSummary` with the
//! other node as the target, §13.1): the entries from the common ancestor (excluded) down to the
//! side's node, oldest first. For each side: its entries and turns (user messages), what the
//! model sees at its node (Pi's context there, tokens by category), the summaries on the side
//! (with their offline score), the files read and modified (tool calls), the commands run and
//! how each last ended, the errors seen (the retention probe's error lines), the last user
//! request, the model and the cost (`usage.cost.total` of the side's assistant messages).
//! Files are then split: touched by one side only, and touched by both; of the files both
//! modified, those whose last edit differs (another `newText`/`content`) are listed apart.
//!
//! Pure and synchronous over a loaded [`Session`]; never writes.
use pi_json::Value;
use serde::Serialize;
use session_engine::blocks::{blocks, Block};
use session_engine::branch::collect_branch_entries;
use session_engine::context::{self, build_context, estimate_chars};
use session_engine::session::{Kind, Session};
use std::collections::BTreeMap;
use summary_analysis::check::{error_lines, tool_error_lines};

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub total: f64,
    pub summary: f64,
    pub user: f64,
    pub assistant_text: f64,
    pub thinking: f64,
    pub tool_calls: f64,
    pub tool_results: f64,
    pub other: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryOnSide {
    pub entry_id: String,
    pub kind: String,
    pub score: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRun {
    pub command: String,
    /// "ok", "error" or "unknown" (no result seen on the side).
    pub last_outcome: String,
    pub entry_id: String,
    pub runs: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorSeen {
    pub text: String,
    pub entry_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub text: String,
    pub entry_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Side {
    pub tip_id: String,
    /// The side's entry ids, oldest first (the common ancestor excluded).
    pub entry_ids: Vec<String>,
    pub entries: usize,
    pub turns: usize,
    /// Pi's estimate of the context at the tip (§9.3), and the per-message estimate by category.
    pub context_tokens: f64,
    pub tokens: Tokens,
    pub summaries: Vec<SummaryOnSide>,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    /// Each file read or modified on the side → the entry of its last such tool call, so a file
    /// in a list can be followed to where the side touched it.
    pub file_entries: BTreeMap<String, String>,
    pub commands: Vec<CommandRun>,
    pub errors: Vec<ErrorSeen>,
    pub last_user_request: Option<Request>,
    pub model: Option<String>,
    pub cost: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Files {
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct BothFiles {
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    /// Modified on both sides, with a different last edit.
    pub modified_differently: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub ancestor_id: Option<String>,
    pub sides: [Side; 2],
    pub only_a: Files,
    pub only_b: Files,
    pub both: BothFiles,
}

/// What one side's walk collects besides the ids (the last edit of each modified file).
struct Walk {
    side: Side,
    last_edit: BTreeMap<String, String>,
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

fn side(session: &Session, tip: usize, entries: &[usize]) -> Walk {
    let mut s = Side {
        tip_id: session.id(tip).to_string(),
        entry_ids: entries.iter().map(|&i| session.id(i).to_string()).collect(),
        entries: entries.len(),
        turns: 0,
        context_tokens: 0.0,
        tokens: Tokens::default(),
        summaries: Vec::new(),
        read_files: Vec::new(),
        modified_files: Vec::new(),
        file_entries: BTreeMap::new(),
        commands: Vec::new(),
        errors: Vec::new(),
        last_user_request: None,
        model: None,
        cost: 0.0,
    };
    let mut last_edit = BTreeMap::new();
    // Tool call id → index into `commands`, so a result updates its command's outcome.
    let mut pending: BTreeMap<String, usize> = BTreeMap::new();
    let run = |s: &mut Side, cmd: &str, id: &str| -> usize {
        let cmd = cmd.trim();
        match s.commands.iter().position(|c| c.command == cmd) {
            Some(p) => {
                let c = &mut s.commands[p];
                c.runs += 1;
                c.entry_id = id.to_string();
                c.last_outcome = "unknown".into();
                p
            }
            None => {
                s.commands.push(CommandRun {
                    command: cmd.to_string(),
                    last_outcome: "unknown".into(),
                    entry_id: id.to_string(),
                    runs: 1,
                });
                s.commands.len() - 1
            }
        }
    };
    for &e in entries {
        let id = session.id(e);
        match session.kind(e) {
            Kind::Compaction | Kind::BranchSummary => s.summaries.push(SummaryOnSide {
                entry_id: id.to_string(),
                kind: session.entry(e).type_name.to_string(),
                score: summary_analysis::score(session, e, summary_analysis::summary_text(session, e)).score,
            }),
            Kind::Message => {
                let Some(m) = session.message(e) else { continue };
                match session.role(e) {
                    Some("user") => {
                        s.turns += 1;
                        let text = context::user_text(m.get("content").unwrap_or(&Value::Null));
                        if !text.trim().is_empty() {
                            s.last_user_request =
                                Some(Request { text: text.trim().to_string(), entry_id: id.to_string() });
                        }
                    }
                    Some("assistant") => {
                        if let (Some(p), Some(model)) = (m.str_field("provider"), m.str_field("model")) {
                            s.model = Some(format!("{p}/{model}"));
                        }
                        if let Some(c) = m
                            .get("usage")
                            .and_then(|u| u.get("cost"))
                            .and_then(|c| c.get("total"))
                            .and_then(Value::as_f64)
                        {
                            if c.is_finite() && c > 0.0 {
                                s.cost += c;
                            }
                        }
                        for b in blocks(m.get("content")) {
                            let Block::ToolCall(v) = b else { continue };
                            let args = v.get("arguments");
                            let arg = |k: &str| args.and_then(|a| a.str_field(k));
                            match v.str_field("name") {
                                Some("read") => {
                                    if let Some(p) = arg("path") {
                                        push_unique(&mut s.read_files, p);
                                        s.file_entries.insert(p.to_string(), id.to_string());
                                    }
                                }
                                Some(n @ ("write" | "edit")) => {
                                    if let Some(p) = arg("path") {
                                        push_unique(&mut s.modified_files, p);
                                        s.file_entries.insert(p.to_string(), id.to_string());
                                        let what = if n == "write" { arg("content") } else { arg("newText") };
                                        last_edit.insert(p.to_string(), format!("{n}\0{}", what.unwrap_or("")));
                                    }
                                }
                                Some("bash") => {
                                    if let Some(c) = arg("command") {
                                        let at = run(&mut s, c, id);
                                        if let Some(call) = v.str_field("id") {
                                            pending.insert(call.to_string(), at);
                                        }
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    Some("toolResult") => {
                        let text = context::text_blocks_joined(m.get("content").unwrap_or(&Value::Null), "\n");
                        let is_error = m.get("isError").is_some_and(Value::truthy);
                        if let Some(&at) = m.str_field("toolCallId").and_then(|c| pending.get(c)) {
                            s.commands[at].last_outcome = if is_error { "error" } else { "ok" }.into();
                        }
                        let lines = if is_error {
                            tool_error_lines(&text)
                        } else if m.str_field("toolName") == Some("bash") {
                            error_lines(&text)
                        } else {
                            Vec::new()
                        };
                        for l in lines {
                            s.errors.push(ErrorSeen { text: l, entry_id: id.to_string() });
                        }
                    }
                    Some("bashExecution") => {
                        if let Some(c) = m.str_field("command") {
                            let at = run(&mut s, c, id);
                            let code = m.get("exitCode").and_then(Value::as_f64);
                            s.commands[at].last_outcome = match code {
                                Some(0.0) => "ok",
                                Some(_) => "error",
                                None => "unknown",
                            }
                            .into();
                        }
                        for l in error_lines(m.str_field("output").unwrap_or("")) {
                            s.errors.push(ErrorSeen { text: l, entry_id: id.to_string() });
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    // What the model sees at the tip.
    let ctx = build_context(session, Some(tip));
    let messages = ctx.agent_messages();
    s.context_tokens = context::estimate_context(&messages).tokens;
    for m in &messages {
        if let Some(c) = estimate_chars(m) {
            let t = &mut s.tokens;
            t.summary += c.summary / 4.0;
            t.user += c.user / 4.0;
            t.assistant_text += c.assistant_text / 4.0;
            t.thinking += c.thinking / 4.0;
            t.tool_calls += c.tool_calls / 4.0;
            t.tool_results += c.tool_results / 4.0;
            t.other += c.other / 4.0;
            t.total += (c.total() / 4.0).ceil();
        }
    }
    let t = &mut s.tokens;
    for x in [
        &mut t.summary,
        &mut t.user,
        &mut t.assistant_text,
        &mut t.thinking,
        &mut t.tool_calls,
        &mut t.tool_results,
        &mut t.other,
    ] {
        *x = x.round();
    }
    s.cost = (s.cost * 1e6).round() / 1e6;
    Walk { side: s, last_edit }
}

fn minus(a: &[String], b: &[String]) -> Vec<String> {
    a.iter().filter(|x| !b.contains(x)).cloned().collect()
}

fn both(a: &[String], b: &[String]) -> Vec<String> {
    a.iter().filter(|x| b.contains(x)).cloned().collect()
}

/// Compares the nodes `a` and `b` (entry indices). Either may be an ancestor of the other: its
/// side is then empty and the ancestor is itself.
pub fn compare(session: &Session, a: usize, b: usize) -> Comparison {
    let ca = collect_branch_entries(session, Some(a), b);
    let cb = collect_branch_entries(session, Some(b), a);
    let wa = side(session, a, &ca.entries);
    let wb = side(session, b, &cb.entries);
    let (sa, sb) = (&wa.side, &wb.side);
    let modified_both = both(&sa.modified_files, &sb.modified_files);
    let modified_differently =
        modified_both.iter().filter(|f| wa.last_edit.get(*f) != wb.last_edit.get(*f)).cloned().collect();
    Comparison {
        ancestor_id: ca.common_ancestor.map(|i| session.id(i).to_string()),
        only_a: Files {
            read_files: minus(&sa.read_files, &sb.read_files),
            modified_files: minus(&sa.modified_files, &sb.modified_files),
        },
        only_b: Files {
            read_files: minus(&sb.read_files, &sa.read_files),
            modified_files: minus(&sb.modified_files, &sa.modified_files),
        },
        both: BothFiles {
            read_files: both(&sa.read_files, &sb.read_files),
            modified_files: modified_both,
            modified_differently,
        },
        sides: [wa.side, wb.side],
    }
}
