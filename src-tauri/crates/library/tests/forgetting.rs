//! The cost of forgetting summed per session: what the index stores equals the sum of
//! `summary_analysis::quality::forgetting` over the session's compactions, however the file was
//! indexed (whole, streamed in windows, or grown by appends), and it sorts the listing.
mod support;

use library::{Change, IndexOptions, Library, SessionFilter, SessionSort};
use serde_json::{json, Value};
use session_engine::session::{Kind, Session};
use std::path::Path;

/// Session lines with explicit tool calls.
struct S {
    lines: Vec<Value>,
    n: u32,
}

impl S {
    fn new() -> S {
        let header =
            json!({"type":"session","version":3,"id":"f0r6e771","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/p"});
        S { lines: vec![header], n: 0 }
    }

    fn push(&mut self, parent: Option<&str>, v: Value) -> String {
        self.n += 1;
        let id = format!("e{:07}", self.n);
        self.push_as(&id, parent, v)
    }

    /// With a given id (a duplicate of an earlier one, or one a line before already names).
    fn push_as(&mut self, id: &str, parent: Option<&str>, mut v: Value) -> String {
        let o = v.as_object_mut().unwrap();
        o.insert("id".into(), json!(id));
        o.insert("parentId".into(), json!(parent));
        o.insert("timestamp".into(), json!(format!("2025-03-01T10:{:02}:{:02}.000Z", self.n / 60 % 60, self.n % 60)));
        self.lines.push(v);
        id.to_string()
    }

    fn user(&mut self, parent: Option<&str>, text: &str) -> String {
        self.push(parent, json!({"type":"message","message":{"role":"user","content":text,"timestamp":1}}))
    }

    /// An assistant message with tool calls: ("read", path), ("bash", command), ("edit", path).
    fn calls(&mut self, parent: Option<&str>, calls: &[(&str, &str)]) -> String {
        let content: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, arg))| {
                let key = if *name == "bash" { "command" } else { "path" };
                json!({"type":"toolCall","id":format!("c{i}"),"name":name,"arguments":{key: arg}})
            })
            .collect();
        self.push(
            parent,
            json!({"type":"message","message":{"role":"assistant","content":content,"provider":"p","model":"m",
                   "usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"toolUse","timestamp":2}}),
        )
    }

    /// A command the user ran with `!`.
    fn bash_exec(&mut self, parent: Option<&str>, command: &str) -> String {
        self.push(
            parent,
            json!({"type":"message","message":{"role":"bashExecution","command":command,"output":"ok","exitCode":0,
                   "cancelled":false,"truncated":false,"timestamp":3}}),
        )
    }

    fn compaction(&mut self, parent: &str, first_kept: &str) -> String {
        self.push(
            Some(parent),
            json!({"type":"compaction","summary":"## Goal\nwork","firstKeptEntryId":first_kept,"tokensBefore":5000}),
        )
    }

    /// An edit of compaction `origin`, as the workbench appends one.
    fn edit_of(&mut self, parent: &str, origin: &str, first_kept: &str) -> String {
        self.push(
            Some(parent),
            json!({"type":"compaction","summary":"## Goal\nedited","firstKeptEntryId":first_kept,"tokensBefore":5000,
                   "details":{"editKind":"edit","editOrigin":origin}}),
        )
    }

    fn line(&self, i: usize) -> String {
        support::line(&self.lines[i])
    }

    fn text(&self, lines: std::ops::Range<usize>) -> String {
        lines.map(|i| self.line(i)).collect()
    }
}

/// The sum of `summary_analysis::quality::forgetting` over the file's compactions, and their number.
fn oracle(path: &Path) -> (i64, i64) {
    let s = Session::open(path).unwrap();
    let mut sum = (0, 0);
    for i in 0..s.len() {
        if s.kind(i) == Kind::Compaction {
            sum.0 += summary_analysis::forgetting(&s, i).unwrap().cost() as i64;
            sum.1 += 1;
        }
    }
    sum
}

fn stored(lib: &Library, path: &Path) -> (Option<i64>, Option<i64>) {
    let s = lib.session(path).unwrap().unwrap();
    (s.forgetting_cost, s.forgetting_compactions)
}

fn libs(dir: &Path) -> [Library; 2] {
    let whole = Library::open(&dir.join("whole.sqlite3")).unwrap();
    let mut streamed = Library::open(&dir.join("streamed.sqlite3")).unwrap();
    // every file streamed, in windows smaller than a line
    streamed.set_index_options(IndexOptions { stream_from: 0, window: 300 });
    [whole, streamed]
}

/// Before the cut: reads of a.rs, b.rs, d.rs and `cargo test`. After the compaction: a.rs and
/// b.rs again, `cargo test` again (spaced), c.rs (read after the cut, in the kept part: not
/// forgotten) and a.rs a third time (counted once): 3.
fn three_redone() -> S {
    let mut s = S::new();
    let u1 = s.user(None, "fix the parser");
    let a1 =
        s.calls(Some(&u1), &[("read", "src/a.rs"), ("read", "src/b.rs"), ("read", "src/d.rs"), ("bash", "cargo test")]);
    let u2 = s.user(Some(&a1), "go on");
    let a2 = s.calls(Some(&u2), &[("read", "src/c.rs"), ("edit", "src/a.rs")]);
    let c = s.compaction(&a2, &u2);
    let u3 = s.user(Some(&c), "where were we");
    let a3 = s.calls(
        Some(&u3),
        &[("read", "src/a.rs"), ("read", " src/b.rs"), ("read", "src/c.rs"), ("bash", "  cargo test ")],
    );
    s.calls(Some(&a3), &[("read", "src/a.rs")]);
    s
}

#[test]
fn re_reads_and_re_runs_after_a_compaction_are_summed_and_an_append_adds_to_them() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("s");
    std::fs::create_dir_all(&root).unwrap();
    let f = root.join("s.jsonl");
    let mut s = three_redone();
    let upto = s.lines.len();
    std::fs::write(&f, s.text(0..upto)).unwrap();
    assert_eq!(oracle(&f), (3, 1));
    let mut libs = libs(d.path());
    for lib in &mut libs {
        lib.sync_file(&f, Some(&root)).unwrap();
        assert_eq!(stored(lib, &f), (Some(3), Some(1)));
    }
    // appended at the leaf: a re-read of d.rs (read before the cut) adds one; a.rs again, a
    // command the user runs that the agent ran before, and a new file add nothing
    let leaf = s.lines[upto - 1]["id"].as_str().unwrap().to_string();
    let a5 = s.calls(Some(&leaf), &[("read", "src/d.rs"), ("read", "src/a.rs"), ("read", "src/new.rs")]);
    let b = s.bash_exec(Some(&a5), "cargo test");
    support::append_from_other_process(&f, &s.text(upto..s.lines.len()));
    assert_eq!(oracle(&f), (4, 1));
    for lib in &mut libs {
        assert_eq!(lib.sync_file(&f, Some(&root)).unwrap().change, Change::Appended);
        assert_eq!(stored(lib, &f), (Some(4), Some(1)));
    }
    // `cargo test` again, by the agent and by the user: counted once already
    let from = s.lines.len();
    let u = s.user(Some(&b), "and build");
    let a = s.calls(Some(&u), &[("bash", "cargo test")]);
    s.bash_exec(Some(&a), "cargo test");
    support::append_from_other_process(&f, &s.text(from..s.lines.len()));
    for lib in &mut libs {
        lib.sync_file(&f, Some(&root)).unwrap();
        assert_eq!(stored(lib, &f), (Some(4), Some(1)), "cargo test was already counted");
    }
    // a fresh index of the grown file says the same
    let mut fresh = Library::open(&d.path().join("fresh.sqlite3")).unwrap();
    fresh.sync_file(&f, Some(&root)).unwrap();
    assert_eq!(stored(&fresh, &f), (Some(4), Some(1)));
}

#[test]
fn a_branch_an_edit_and_a_second_compaction_recompute_the_sum() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("s");
    std::fs::create_dir_all(&root).unwrap();
    let f = root.join("s.jsonl");
    let mut s = three_redone();
    let mut upto = s.lines.len();
    std::fs::write(&f, s.text(0..upto)).unwrap();
    let mut libs = libs(d.path());
    for lib in &mut libs {
        lib.sync_file(&f, Some(&root)).unwrap();
    }
    let id = |s: &S, i: usize| s.lines[i]["id"].as_str().unwrap().to_string();
    let mut steps = Vec::new();
    // 1. a branch from before the compaction: the compaction leaves the leaf's path (its window
    //    is then its newest child's line), and the branch re-reads nothing after any cut
    let u2 = id(&s, 3);
    let ub = s.user(Some(&u2), "another way");
    s.calls(Some(&ub), &[("read", "src/a.rs"), ("bash", "cargo test")]);
    steps.push(s.lines.len());
    // 2. a new line right after the compaction: the leaf's path runs through it again, and its
    //    window is that line, which re-reads nothing
    let c = id(&s, 5);
    s.user(Some(&c), "start over");
    steps.push(s.lines.len());
    // 3. back on the compaction's first line, one more re-read of d.rs
    let tip = id(&s, upto - 1);
    s.calls(Some(&tip), &[("read", "src/d.rs")]);
    steps.push(s.lines.len());
    // 4. an edit of the compaction, appended at the leaf: it cuts where its origin cut, not at
    //    its own (missing) first kept entry
    let leaf = id(&s, s.lines.len() - 1);
    let e = s.edit_of(&leaf, &c, "e0000999");
    s.calls(Some(&e), &[("read", "src/a.rs"), ("read", "src/d.rs"), ("bash", "cargo test")]);
    steps.push(s.lines.len());
    // 5. a second compaction that keeps from the edit; what it forgets is everything before
    let leaf = id(&s, s.lines.len() - 1);
    let c2 = s.compaction(&leaf, &leaf);
    steps.push(s.lines.len());
    // 6. linear appends after it: its window grows one act at a time
    let mut prev = c2;
    for call in [("read", "src/b.rs"), ("read", "src/b.rs"), ("bash", "cargo test"), ("read", "src/zzz.rs")] {
        prev = s.calls(Some(&prev), &[call]);
        steps.push(s.lines.len());
    }
    let mut seen = Vec::new();
    for to in steps {
        support::append_from_other_process(&f, &s.text(upto..to));
        upto = to;
        let want = oracle(&f);
        for lib in &mut libs {
            lib.sync_file(&f, Some(&root)).unwrap();
            assert_eq!(stored(lib, &f), (Some(want.0), Some(want.1)), "after {to} lines");
        }
        seen.push(want.0);
    }
    // the steps did move the sum, up and down
    assert!(seen.windows(2).any(|w| w[1] > w[0]) && seen.windows(2).any(|w| w[1] < w[0]), "{seen:?}");
}

/// A small deterministic generator: branches, compactions with kept entries on the path, off it
/// or missing, edits, user commands, reads and commands from small pools (with spaces), now and
/// then a duplicate id or a `parentId` cycle (the engine loads both; the paths of a cycle are
/// walked with its bound).
fn random_session(seed: u64, n: usize) -> S {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut r = move |m: usize| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((x >> 33) as usize) % m
    };
    let paths = ["a.rs", "b.rs", " b.rs", "c.rs", "d/e.rs", "f.md"];
    let cmds = ["cargo test", "cargo test ", "ls", "git diff", "make"];
    let mut s = S::new();
    let mut ids: Vec<String> = Vec::new();
    let mut compactions: Vec<String> = Vec::new();
    let mut leaf: Option<String> = None;
    for _ in 0..n {
        let parent = match r(12) {
            0 if !ids.is_empty() => Some(ids[r(ids.len())].clone()),
            _ => leaf.clone(),
        };
        let id = match r(10) {
            0..=2 => s.user(parent.as_deref(), "q"),
            3..=6 => {
                let calls: Vec<(&str, &str)> = (0..1 + r(3))
                    .map(|_| match r(4) {
                        0 | 1 => ("read", paths[r(paths.len())]),
                        2 => ("bash", cmds[r(cmds.len())]),
                        _ => ("edit", paths[r(paths.len())]),
                    })
                    .collect();
                s.calls(parent.as_deref(), &calls)
            }
            7 => s.bash_exec(parent.as_deref(), cmds[r(cmds.len())]),
            8 if r(3) == 0 && !ids.is_empty() => {
                // an earlier id again, often one a compaction keeps from
                let dup = ids[r(ids.len())].clone();
                let v = json!({"type":"message","message":{"role":"assistant","content":[
                    {"type":"toolCall","id":"d","name":"read","arguments":{"path":paths[r(paths.len())]}}]}});
                s.push_as(&dup, parent.as_deref(), v)
            }
            8 if r(4) == 0 && seed.is_multiple_of(5) => {
                // x's parent is y, the next line, whose parent is x
                let y = format!("e{:07}", s.n + 2);
                let x = s.calls(Some(&y), &[("read", paths[r(paths.len())])]);
                ids.push(x.clone());
                s.calls(Some(&x), &[("bash", cmds[r(cmds.len())])])
            }
            _ if parent.is_some() && !ids.is_empty() => {
                let p = parent.clone().unwrap();
                let kept = match r(4) {
                    0 => "missing".to_string(),
                    _ => ids[r(ids.len())].clone(),
                };
                if r(3) == 0 && !compactions.is_empty() {
                    let o = compactions[r(compactions.len())].clone();
                    s.edit_of(&p, &o, &kept)
                } else {
                    let c = s.compaction(&p, &kept);
                    compactions.push(c.clone());
                    c
                }
            }
            _ => s.user(parent.as_deref(), "q"),
        };
        ids.push(id.clone());
        leaf = Some(id);
    }
    s
}

#[test]
fn random_sessions_agree_with_summary_analysis_whole_streamed_and_appended() {
    let d = tempfile::tempdir().unwrap();
    let (whole_root, grown_root) = (d.path().join("whole"), d.path().join("grown"));
    std::fs::create_dir_all(&whole_root).unwrap();
    std::fs::create_dir_all(&grown_root).unwrap();
    let mut libs = libs(d.path());
    let mut grown = Library::open(&d.path().join("grown.sqlite3")).unwrap();
    let (mut nonzero, mut appended) = (0, 0);
    for seed in 0..40u64 {
        let s = random_session(seed, 30 + (seed as usize % 4) * 20);
        let n = s.lines.len();
        let name = format!("r{seed}.jsonl");
        let (w, g) = (whole_root.join(&name), grown_root.join(&name));
        std::fs::write(&w, s.text(0..n)).unwrap();
        let want = oracle(&w);
        nonzero += (want.0 > 0) as usize;
        for lib in &mut libs {
            lib.sync_file(&w, Some(&whole_root)).unwrap();
            assert_eq!(stored(lib, &w), (Some(want.0), Some(want.1)), "seed {seed}");
        }
        // grown a few lines at a time, checked after each append
        let mut upto = 1 + n / 3;
        std::fs::write(&g, s.text(0..upto)).unwrap();
        grown.sync_file(&g, Some(&grown_root)).unwrap();
        while upto < n {
            let to = (upto + 1 + (seed as usize + upto) % 4).min(n);
            support::append_from_other_process(&g, &s.text(upto..to));
            upto = to;
            appended += (grown.sync_file(&g, Some(&grown_root)).unwrap().change == Change::Appended) as usize;
            let want = oracle(&g);
            assert_eq!(stored(&grown, &g), (Some(want.0), Some(want.1)), "seed {seed}, {upto} of {n} lines");
        }
    }
    assert!(nonzero > 10, "only {nonzero} sessions forgot anything");
    assert!(appended > 100, "{appended}");
}

#[test]
fn the_listing_sorts_by_the_cost_of_forgetting() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("s");
    std::fs::create_dir_all(&root).unwrap();
    // 3 re-done; 1 re-done; a compaction that forgets nothing; no compaction
    let three = three_redone();
    std::fs::write(root.join("three.jsonl"), three.text(0..three.lines.len())).unwrap();
    let mut one = S::new();
    let u = one.user(None, "q");
    let a = one.calls(Some(&u), &[("read", "x.rs")]);
    let u = one.user(Some(&a), "q");
    let c = one.compaction(&u, &u);
    one.calls(Some(&c), &[("read", "x.rs")]);
    std::fs::write(root.join("one.jsonl"), one.text(0..one.lines.len())).unwrap();
    let mut zero = S::new();
    let u = zero.user(None, "q");
    let c = zero.compaction(&u, &u);
    zero.calls(Some(&c), &[("read", "y.rs")]);
    std::fs::write(root.join("zero.jsonl"), zero.text(0..zero.lines.len())).unwrap();
    let mut none = S::new();
    let u = none.user(None, "q");
    none.calls(Some(&u), &[("read", "y.rs"), ("read", "y.rs")]);
    std::fs::write(root.join("none.jsonl"), none.text(0..none.lines.len())).unwrap();
    let mut lib = Library::open(&d.path().join("i.sqlite3")).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    let order = |ascending: bool| -> Vec<(String, Option<i64>, Option<i64>)> {
        let f = SessionFilter { sort: SessionSort::Forgetting, ascending, ..Default::default() };
        lib.sessions(&f)
            .unwrap()
            .into_iter()
            .map(|s| {
                let name = s.path.file_stem().unwrap().to_string_lossy().to_string();
                (name, s.forgetting_cost, s.forgetting_compactions)
            })
            .collect()
    };
    let most_first = order(false);
    assert_eq!(
        most_first,
        [
            ("three".to_string(), Some(3), Some(1)),
            ("one".to_string(), Some(1), Some(1)),
            ("none".to_string(), Some(0), Some(0)),
            ("zero".to_string(), Some(0), Some(1)),
        ]
    );
    let least_first: Vec<_> = order(true).into_iter().map(|x| x.0).collect();
    assert_eq!(least_first, ["none", "zero", "one", "three"]);
}

#[test]
fn an_index_from_before_the_cost_of_forgetting_is_rebuilt_with_it() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("s");
    std::fs::create_dir_all(&root).unwrap();
    let s = three_redone();
    let f = root.join("s.jsonl");
    std::fs::write(&f, s.text(0..s.lines.len())).unwrap();
    let db = d.path().join("i.sqlite3");
    let mut lib = Library::open(&db).unwrap();
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    drop(lib);
    // the previous schema: the same tables without the cost of forgetting's columns
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "ALTER TABLE files DROP COLUMN forget_cost; ALTER TABLE files DROP COLUMN forget_compactions;
             ALTER TABLE files DROP COLUMN forget_open; ALTER TABLE entries DROP COLUMN acts;
             ALTER TABLE entries DROP COLUMN edit_origin; PRAGMA user_version = 3;",
        )
        .unwrap();
    let mut lib = Library::open(&db).unwrap();
    assert!(lib.notices().is_empty(), "an older index is a cache to refill, not damage");
    assert_eq!(lib.session(&f).unwrap(), None, "its rows are gone, not left without the cost");
    lib.sync_roots(std::slice::from_ref(&root), &mut |_| {}).unwrap();
    assert_eq!(stored(&lib, &f), (Some(3), Some(1)));
}
