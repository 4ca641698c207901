//! The offline summarizer: a deterministic, extractive summary in the same sections as the
//! model prompts, built from the transcript alone. It is the default when no key is set, so
//! compaction and branch summaries work on first start without a network.
//!
//! What it extracts: the user's requests and stated constraints, completed edits and commands,
//! errors, exact paths, and the last stated next step. It never invents decisions; sections it
//! cannot fill say "(none)".
use pi_json::Value;
use session_engine::blocks::{blocks, Block};

/// Which summary is being produced (same kinds as the model calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    History,
    TurnPrefix,
    Branch,
}

const MAX_ITEMS: usize = 20;
const CONSTRAINT_WORDS: &[&str] = &[
    "must",
    "don't",
    "do not",
    "never",
    "always",
    "prefer",
    "should",
    "only",
    "without",
    "avoid",
    "keep",
    "make sure",
    "no ",
];
const NEXT_WORDS: &[&str] = &["next", "then i", "i will", "i'll", "todo", "remaining", "still need", "let me"];

pub fn summarize(kind: Kind, messages: &[Value], previous_summary: Option<&str>, custom: Option<&str>) -> String {
    let f = Facts::extract(messages);
    let prev = previous_summary.map(parse_sections).unwrap_or_default();
    match kind {
        Kind::TurnPrefix => {
            let mut out = String::new();
            section(
                &mut out,
                "## Original Request",
                &f.requests.first().cloned().into_iter().collect::<Vec<_>>(),
                false,
            );
            let mut early: Vec<String> = f.done.clone();
            early.extend(f.errors.iter().map(|e| format!("Error: {e}")));
            section(&mut out, "## Early Progress", &bullets(&early), false);
            let mut ctx: Vec<String> = f.paths.iter().map(|p| format!("`{p}`")).collect();
            if let Some(n) = &f.next_step {
                ctx.push(format!("Last stated step: {n}"));
            }
            section(&mut out, "## Context for Suffix", &bullets(&ctx), false);
            out.push_str("\n(Offline summary: extracted by Arbor without a model.)");
            out
        }
        Kind::History | Kind::Branch => {
            let mut out = String::new();
            let mut goal = prev_lines(&prev, "Goal");
            for r in f.requests.iter().take(1).chain(f.requests.iter().skip(1).last()) {
                goal.push(format!("- {r}"));
            }
            section(&mut out, "## Goal", &dedupe(goal), false);
            let mut cons = prev_lines(&prev, "Constraints & Preferences");
            cons.extend(bullets(&f.constraints));
            if let Some(c) = custom.filter(|c| !c.trim().is_empty()) {
                cons.push(format!("- Requested focus: {}", clip(c, 200)));
            }
            section(&mut out, "## Constraints & Preferences", &dedupe(cons), false);
            out.push_str("## Progress\n");
            let mut done = prev_lines(&prev, "Done");
            done.extend(f.done.iter().map(|d| format!("- [x] {d}")));
            section(&mut out, "### Done", &dedupe(done), true);
            let in_progress: Vec<String> = match (&f.last_request_open, f.requests.last()) {
                (true, Some(r)) => vec![format!("- [ ] {r}")],
                _ => prev_lines(&prev, "In Progress"),
            };
            section(&mut out, "### In Progress", &in_progress, true);
            let mut blocked: Vec<String> = Vec::new();
            blocked.extend(f.errors.iter().map(|e| format!("- {e}")));
            section(&mut out, "### Blocked", &dedupe(blocked), true);
            section(&mut out, "## Key Decisions", &prev_lines(&prev, "Key Decisions"), false);
            let next: Vec<String> = match &f.next_step {
                Some(n) => vec![format!("1. {n}")],
                None => prev_lines(&prev, "Next Steps"),
            };
            section(&mut out, "## Next Steps", &next, false);
            if kind == Kind::History {
                let mut crit = prev_lines(&prev, "Critical Context");
                crit.retain(|l| !l.contains("Offline summary"));
                crit.extend(f.paths.iter().map(|p| format!("- `{p}`")));
                crit.extend(f.commands.iter().map(|c| format!("- Command: `{c}`")));
                section(&mut out, "## Critical Context", &dedupe(crit), false);
            }
            out.push_str("(Offline summary: extracted by Arbor without a model.)");
            out
        }
    }
}

#[derive(Default)]
struct Facts {
    requests: Vec<String>,
    constraints: Vec<String>,
    done: Vec<String>,
    commands: Vec<String>,
    errors: Vec<String>,
    paths: Vec<String>,
    next_step: Option<String>,
    last_request_open: bool,
}

impl Facts {
    fn extract(messages: &[Value]) -> Facts {
        let mut f = Facts::default();
        for m in messages {
            match m.str_field("role") {
                Some("user") => {
                    let text = text_of(m.get("content"));
                    if text.trim().is_empty() {
                        continue;
                    }
                    f.requests.push(clip(first_line(&text), 300));
                    for sentence in sentences(&text) {
                        let lower = sentence.to_lowercase();
                        if CONSTRAINT_WORDS.iter().any(|w| lower.contains(w)) {
                            push_unique(&mut f.constraints, clip(sentence, 200));
                        }
                    }
                    f.last_request_open = true;
                }
                Some("assistant") => {
                    if let Some(Value::Arr(_)) = m.get("content") {
                        let mut texts = String::new();
                        for b in blocks(m.get("content")) {
                            match b {
                                Block::ToolCall(b) => f.tool_call(b),
                                Block::Text(_) => {
                                    texts.push_str(b.text().unwrap_or(""));
                                    texts.push('\n');
                                }
                                Block::Thinking(_) | Block::Image(_) | Block::Other(_) => {}
                            }
                        }
                        if let Some(n) = sentences(&texts).into_iter().rev().find(|s| {
                            let l = s.to_lowercase();
                            NEXT_WORDS.iter().any(|w| l.contains(w))
                        }) {
                            f.next_step = Some(clip(n, 240));
                        }
                        if !texts.trim().is_empty() {
                            f.last_request_open = false;
                        }
                    }
                    if m.str_field("stopReason") == Some("error") {
                        if let Some(e) = m.str_field("errorMessage") {
                            push_unique(&mut f.errors, format!("Model error: {}", clip(first_line(e), 200)));
                        }
                    }
                }
                Some("toolResult") if m.get("isError").is_some_and(Value::truthy) => {
                    let name = m.str_field("toolName").unwrap_or("tool");
                    let text = text_of(m.get("content"));
                    push_unique(&mut f.errors, format!("`{name}` failed: {}", clip(first_line(&text), 200)));
                }
                Some("bashExecution") => {
                    let cmd = m.str_field("command").unwrap_or("");
                    if !cmd.is_empty() {
                        push_unique(&mut f.commands, clip(first_line(cmd), 160));
                        let code = m.get("exitCode").and_then(Value::as_f64);
                        if code.is_some_and(|c| c != 0.0) {
                            let out = m.str_field("output").unwrap_or("");
                            push_unique(
                                &mut f.errors,
                                format!(
                                    "`{}` exited with {}: {}",
                                    clip(first_line(cmd), 80),
                                    code.unwrap_or(0.0),
                                    clip(last_line(out), 160)
                                ),
                            );
                        } else {
                            push_unique(&mut f.done, format!("Ran `{}`", clip(first_line(cmd), 160)));
                        }
                    }
                }
                Some("compactionSummary" | "branchSummary") => {
                    // An earlier summary inside the range: keep its goal line as context.
                    if let Some(s) = m.str_field("summary") {
                        if let Some(goal) = parse_sections(s)
                            .into_iter()
                            .find(|(h, _)| h == "Goal")
                            .and_then(|(_, l)| l.into_iter().next())
                        {
                            push_unique(&mut f.requests, goal.trim_start_matches("- ").to_string());
                            f.last_request_open = false;
                        }
                    }
                }
                _ => {}
            }
        }
        f
    }

    fn tool_call(&mut self, b: &Value) {
        let name = b.str_field("name").unwrap_or("");
        let args = b.get("arguments");
        let path = args.and_then(|a| a.str_field("path")).filter(|p| !p.is_empty());
        if let Some(p) = path {
            push_unique(&mut self.paths, p.to_string());
        }
        match (name, path) {
            ("edit", Some(p)) => push_unique(&mut self.done, format!("Edited `{p}`")),
            ("write", Some(p)) => push_unique(&mut self.done, format!("Wrote `{p}`")),
            ("bash", _) => {
                if let Some(c) = args.and_then(|a| a.str_field("command")) {
                    push_unique(&mut self.commands, clip(first_line(c), 160));
                    push_unique(&mut self.done, format!("Ran `{}`", clip(first_line(c), 160)));
                }
            }
            _ => {}
        }
    }
}

fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::Str(s)) => s.to_string(),
        Some(Value::Arr(_)) => blocks(content).filter_map(Block::text).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("")
}

fn last_line(s: &str) -> &str {
    s.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("")
}

fn sentences(text: &str) -> Vec<&str> {
    text.split(['\n', '.', '!', '?']).map(str::trim).filter(|s| s.len() > 3).collect()
}

fn clip(s: &str, max_chars: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max_chars {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max_chars).collect::<String>())
    }
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !s.is_empty() && !v.contains(&s) {
        v.push(s);
    }
}

fn bullets(items: &[String]) -> Vec<String> {
    items.iter().map(|i| format!("- {i}")).collect()
}

fn dedupe(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if i.trim() != "(none)" && !out.contains(&i) {
            out.push(i);
        }
    }
    // Keep the newest items when a long session piles up.
    if out.len() > MAX_ITEMS {
        out.drain(..out.len() - MAX_ITEMS);
    }
    out
}

fn section(out: &mut String, heading: &str, lines: &[String], _sub: bool) {
    out.push_str(heading);
    out.push('\n');
    if lines.is_empty() {
        out.push_str("(none)\n");
    } else {
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    out.push('\n');
}

/// Splits a summary into (heading text, non-empty lines) pairs, for merging with a previous one.
fn parse_sections(summary: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in summary.lines() {
        let t = line.trim_end();
        if let Some(h) = t.strip_prefix("### ").or_else(|| t.strip_prefix("## ")) {
            out.push((h.trim().to_string(), Vec::new()));
        } else if t.starts_with('<') {
            // File-list appendix: regenerated from details, not carried as text.
            out.push(("<appendix>".into(), Vec::new()));
        } else if let Some((_, lines)) = out.last_mut() {
            if !t.trim().is_empty() && t.trim() != "(none)" && !t.starts_with("(Offline summary") {
                lines.push(t.to_string());
            }
        }
    }
    out
}

fn prev_lines(prev: &[(String, Vec<String>)], heading: &str) -> Vec<String> {
    prev.iter().filter(|(h, _)| h == heading).flat_map(|(_, l)| l.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_json::parse;

    fn msgs() -> Vec<Value> {
        [
            r#"{"role":"user","content":"Add retry to src/net/client.rs. Do not change the public API."}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"Reading it."},{"type":"toolCall","id":"1","name":"read","arguments":{"path":"src/net/client.rs"}}]}"#,
            r#"{"role":"toolResult","toolCallId":"1","toolName":"read","content":[{"type":"text","text":"fn get() {}"}],"isError":false}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"2","name":"edit","arguments":{"path":"src/net/client.rs","oldText":"a","newText":"b"}},{"type":"toolCall","id":"3","name":"bash","arguments":{"command":"cargo test -p net"}}]}"#,
            r#"{"role":"toolResult","toolCallId":"3","toolName":"bash","content":[{"type":"text","text":"error[E0308]: mismatched types\n --> src/net/client.rs:4"}],"isError":true}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"The build fails. Next I will fix the type mismatch in client.rs."}]}"#,
        ]
        .iter()
        .map(|s| parse(s).unwrap())
        .collect()
    }

    #[test]
    fn extracts_requests_constraints_edits_errors_paths_and_next_step() {
        let s = summarize(Kind::History, &msgs(), None, None);
        assert!(s.starts_with("## Goal\n- Add retry"), "{s}");
        assert!(s.contains("Add retry to src/net/client.rs"));
        assert!(s.contains("- Do not change the public API"), "{s}");
        assert!(s.contains("- [x] Edited `src/net/client.rs`"));
        assert!(s.contains("- [x] Ran `cargo test -p net`"));
        assert!(s.contains("`bash` failed: error[E0308]: mismatched types"));
        assert!(s.contains("1. Next I will fix the type mismatch in client"), "{s}");
        assert!(s.contains("## Critical Context\n- `src/net/client.rs`"));
        for h in [
            "## Constraints & Preferences",
            "## Progress",
            "### Done",
            "### In Progress",
            "### Blocked",
            "## Key Decisions",
            "## Next Steps",
        ] {
            assert!(s.contains(h), "{h}");
        }
        // Deterministic.
        assert_eq!(s, summarize(Kind::History, &msgs(), None, None));
        // Branch summaries have no Critical Context.
        assert!(!summarize(Kind::Branch, &msgs(), None, None).contains("## Critical Context"));
    }

    #[test]
    fn update_keeps_previous_items() {
        let first = summarize(Kind::History, &msgs(), None, None);
        let more = vec![parse(r#"{"role":"user","content":"Now also add a timeout. Always log retries."}"#).unwrap()];
        let s = summarize(Kind::History, &more, Some(&first), Some("tests"));
        assert!(s.contains("Edited `src/net/client.rs`"), "{s}");
        assert!(s.contains("Always log retries"));
        assert!(s.contains("Requested focus: tests"));
        assert!(s.contains("- [ ] Now also add a timeout"), "{s}");
        assert_eq!(s.matches("(Offline summary").count(), 1);
    }

    #[test]
    fn empty_input_still_has_every_section() {
        let s = summarize(Kind::History, &[], None, None);
        assert!(s.contains("## Goal\n(none)"));
        let p = summarize(Kind::TurnPrefix, &msgs(), None, None);
        assert!(p.starts_with("## Original Request\nAdd retry"), "{p}");
    }
}
