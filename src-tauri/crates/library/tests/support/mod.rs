//! A small generator of Pi-shaped session files for the tests.
#![allow(dead_code)]
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Gen {
    pub lines: Vec<Value>,
    n: u64,
    t: u64,
}

impl Gen {
    pub fn new(session_id: &str, cwd: &str) -> Gen {
        let header =
            json!({"type":"session","version":3,"id":session_id,"timestamp":"2025-03-01T09:00:00.000Z","cwd":cwd});
        Gen { lines: vec![header], n: 0, t: 0 }
    }
    fn next_id(&mut self) -> String {
        self.n += 1;
        format!("{:08x}", self.n)
    }
    fn ts(&mut self) -> (String, u64) {
        self.t += 1;
        let ms = 1740819600000u64 + self.t * 1000;
        (format!("2025-03-01T{:02}:{:02}:{:02}.000Z", 9 + self.t / 3600, (self.t / 60) % 60, self.t % 60), ms)
    }
    pub fn leaf(&self) -> Option<String> {
        self.lines.last().and_then(|l| l.get("id")).and_then(|v| v.as_str()).map(String::from)
    }
    pub fn user(&mut self, parent: Option<&str>, text: &str) -> String {
        let id = self.next_id();
        let (ts, ms) = self.ts();
        self.lines.push(json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":ms}}));
        id
    }
    pub fn assistant(&mut self, parent: Option<&str>, text: &str, model: &str) -> String {
        let id = self.next_id();
        let (ts, ms) = self.ts();
        self.lines.push(json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"assistant","content":[{"type":"text","text":text},
                {"type":"toolCall","id":"call1","name":"read","arguments":{"path":format!("src/{id}.rs")}}],
             "api":"x","provider":"prov","model":model,
             "usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120},
             "stopReason":"toolUse","timestamp":ms}}));
        id
    }
    pub fn compaction(&mut self, parent: &str, first_kept: &str, summary: &str) -> String {
        let id = self.next_id();
        let (ts, _) = self.ts();
        self.lines.push(json!({"type":"compaction","id":id,"parentId":parent,"timestamp":ts,
            "summary":summary,"firstKeptEntryId":first_kept,"tokensBefore":5000,"fromHook":false}));
        id
    }
    pub fn name(&mut self, parent: &str, name: &str) -> String {
        let id = self.next_id();
        let (ts, _) = self.ts();
        self.lines.push(json!({"type":"session_info","id":id,"parentId":parent,"timestamp":ts,"name":name}));
        id
    }
    /// A linear chain of `turns` user/assistant pairs after `parent`; returns the last id.
    pub fn chain(&mut self, mut parent: Option<String>, turns: usize, tag: &str, model: &str) -> Option<String> {
        for i in 0..turns {
            let u = self.user(parent.as_deref(), &format!("{tag} question {i} about the parser"));
            let a = self.assistant(Some(&u), &format!("{tag} answer {i}: we changed the tokenizer"), model);
            parent = Some(a);
        }
        parent
    }
    pub fn text(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(&serde_json::to_string(l).unwrap());
            s.push('\n');
        }
        s
    }
    pub fn write(&self, path: &Path) {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(path, self.text()).unwrap();
    }
}

pub fn line(v: &Value) -> String {
    let mut s = serde_json::to_string(v).unwrap();
    s.push('\n');
    s
}

/// Append bytes from a SECOND PROCESS (`sh -c 'cat >> file'`), as Pi would.
pub fn append_from_other_process(path: &Path, bytes: &str) {
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg("cat >> \"$1\"")
        .arg("sh")
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("spawn sh");
    child.stdin.take().unwrap().write_all(bytes.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
}

/// A session with: a compacted-away message holding `compacted_phrase`, an abandoned branch
/// holding `abandoned_phrase`, and an in-context message holding `live_phrase`.
pub fn three_status_session(path: &Path, id: &str, cwd: &str) -> PathBuf {
    let mut g = Gen::new(id, cwd);
    let u1 = g.user(None, "the zanzibar decision: we decided to keep sqlite");
    let a1 = g.assistant(Some(&u1), "noted", "model-a");
    let u2 = g.user(Some(&a1), "second question");
    let a2 = g.assistant(Some(&u2), "second answer", "model-a");
    // abandoned branch off a2
    let ub = g.user(Some(&a2), "a quokka branch that was abandoned");
    let _ab = g.assistant(Some(&ub), "branch answer", "model-a");
    // the active path continues from a2
    let u3 = g.user(Some(&a2), "third question");
    let c = g.compaction(&u3, &u2, "summary of the early work");
    let u4 = g.user(Some(&c), "the platypus is still in context");
    g.assistant(Some(&u4), "yes it is", "model-b");
    g.write(path);
    path.to_path_buf()
}
