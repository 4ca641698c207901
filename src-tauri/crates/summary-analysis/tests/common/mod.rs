//! What both test files of the crate share: the engine's fixtures, a small session builder, and
//! two summaries of one session (the earlier and the later compaction).
#![allow(dead_code)] // each test file uses a different part

use pi_json::Value;
use session_engine::entries;
use session_engine::Session;
use std::path::{Path, PathBuf};

/// The engine's fixtures (the conformance corpus and the random oracle sessions).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures")
}

/// This crate's fixtures (summary texts as models write them).
pub fn own_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

// ---- a small session builder ------------------------------------------------------------

pub const TS: &str = "2026-01-01T00:00:00.000Z";

pub struct B {
    pub lines: Vec<String>,
    pub n: usize,
    pub leaf: Option<String>,
}

pub fn v(text: &str) -> Value {
    pi_json::parse(text).unwrap()
}

impl B {
    pub fn new() -> B {
        B { lines: vec![entries::line(&entries::header("sess", TS, "/p", None))], n: 0, leaf: None }
    }
    pub fn next_id(&mut self) -> String {
        self.n += 1;
        format!("e{:03}", self.n)
    }
    pub fn ts(&self) -> String {
        format!("2026-01-01T00:{:02}:{:02}.000Z", self.n / 60, self.n % 60)
    }
    pub fn push(&mut self, e: Value) -> String {
        let id = e.str_field("id").unwrap().to_string();
        self.lines.push(entries::line(&e));
        self.leaf = Some(id.clone());
        id
    }
    pub fn msg(&mut self, m: Value) -> String {
        let id = self.next_id();
        let ts = self.ts();
        let e = entries::message(&id, self.leaf.as_deref(), &ts, m);
        self.push(e)
    }
    pub fn user(&mut self, text: &str) -> String {
        self.msg(v(&format!(r#"{{"role":"user","content":{},"timestamp":1}}"#, pi_json::quote(text))))
    }
    pub fn assistant(&mut self, text: &str) -> String {
        self.msg(v(&format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":{}}}],"provider":"p","model":"m","timestamp":1}}"#,
            pi_json::quote(text)
        )))
    }
    /// An assistant message with tool calls: (name, arguments JSON).
    pub fn calls(&mut self, calls: &[(&str, &str)]) -> String {
        let blocks: Vec<String> = calls
            .iter()
            .enumerate()
            .map(|(i, (n, a))| format!(r#"{{"type":"toolCall","id":"c{i}","name":"{n}","arguments":{a}}}"#))
            .collect();
        self.msg(v(&format!(
            r#"{{"role":"assistant","content":[{}],"provider":"p","model":"m","timestamp":1}}"#,
            blocks.join(",")
        )))
    }
    pub fn result(&mut self, tool: &str, text: &str, is_error: bool) -> String {
        self.msg(v(&format!(
            r#"{{"role":"toolResult","toolCallId":"c0","toolName":"{tool}","content":[{{"type":"text","text":{}}}],"isError":{is_error},"timestamp":1}}"#,
            pi_json::quote(text)
        )))
    }
    pub fn bash(&mut self, command: &str, output: &str) -> String {
        self.msg(v(&format!(
            r#"{{"role":"bashExecution","command":{},"output":{},"exitCode":0,"timestamp":1}}"#,
            pi_json::quote(command),
            pi_json::quote(output)
        )))
    }
    pub fn compaction(&mut self, text: &str, first_kept: &str, details: Option<Value>) -> String {
        let id = self.next_id();
        let ts = self.ts();
        let e = entries::compaction(&id, self.leaf.as_deref(), &ts, text, first_kept, 1000.0, details, false);
        self.push(e)
    }
    pub fn branch_summary(&mut self, text: &str) -> String {
        let id = self.next_id();
        let ts = self.ts();
        let e = entries::branch_summary(&id, self.leaf.as_deref(), &ts, text, None, false);
        self.push(e)
    }
    pub fn at(&mut self, id: &str) {
        self.leaf = Some(id.to_string());
    }
    pub fn text(&self) -> String {
        self.lines.join("\n") + "\n"
    }
    pub fn session(&self) -> Session {
        Session::from_bytes(self.text().into_bytes())
    }
}

pub fn idx(session: &Session, id: &str) -> usize {
    session.index_of(id).unwrap_or_else(|| panic!("no entry {id}"))
}

// ---- two summaries of one session ---------------------------------------------------------

pub const PREV: &str = "## Goal
Build the parser.

## Constraints & Preferences
- Never rewrite session files
- Use Rust only

## Progress
### Done
- [x] Read the format docs

### In Progress
- [ ] Write the section parser
- [ ] Add CRLF support

### Blocked
- (none)

## Key Decisions
- **similar crate**: word diffs come from a maintained library

## Next Steps
1. Write tests

## Critical Context
- Tests live in tests/summary.rs

<read-files>
docs/format.md
</read-files>";

pub const NEXT: &str = "## Goal
Build the parser.

## Constraints & Preferences
- Never rewrite the session files

## Progress
### Done
- [x] Read the format docs
- [x] Write the section parser
- [x] CRLF support added

### In Progress
- [ ] Benchmark the parser

## Key Decisions
- **Parser**: one pass over lines

## Next Steps
1. Write tests
2. Run the benchmark

## Critical Context
- Tests live in tests/summary.rs

<read-files>
docs/format.md
</read-files>

<modified-files>
src/parse.rs
</modified-files>";
