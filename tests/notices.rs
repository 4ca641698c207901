//! Notices of summaries written by others, through the app's state without a window: a real
//! session file appended to by a separate process (as Pi appends), the live-follow reload, and a
//! capturing sink in place of the desktop's notification service.

use arbor_app::commands::{notices, summarize};
use arbor_app::state::library::reload_if_open;
use arbor_app::state::notices::{Notice, NoticeKind, NoticeSink};
use arbor_app::state::state_file::ArborStateFile;
use std::path::Path;
use std::sync::{Arc, Mutex};

mod support;
use support::provider::{block, budgets};
use support::Env;

#[derive(Default)]
struct Capture(Mutex<Vec<Notice>>);

impl NoticeSink for Capture {
    fn show(&self, n: Notice) {
        self.0.lock().unwrap().push(n);
    }
}

impl Capture {
    fn take(&self) -> Vec<Notice> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn capture(e: &Env) -> Arc<Capture> {
    let c = Arc::new(Capture::default());
    e.state.notices.set_sink(c.clone());
    c
}

/// Appends one line from another process (`sh -c 'printf … >> file'`), as Pi would.
fn append_from_other_process(file: &Path, line: &str) {
    let st = std::process::Command::new("sh")
        .args(["-c", "printf '%s\\n' \"$1\" >> \"$2\"", "sh", line, &file.display().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

fn file_leaf(file: &Path) -> (String, String) {
    let s = session_engine::Session::open(file).unwrap();
    let leaf = s.file_leaf().unwrap();
    let path = s.path(Some(leaf));
    // A user message well before the leaf: the kept part of Pi's compaction.
    let kept = path.iter().rev().skip(3).find(|&&i| s.role(i) == Some("user")).copied().unwrap();
    (s.id(leaf).to_string(), s.id(kept).to_string())
}

fn pi_compaction(id: &str, parent: &str, kept: &str) -> String {
    serde_json::json!({
        "type": "compaction", "id": id, "parentId": parent, "timestamp": "2025-03-01T11:00:00.000Z",
        "summary": "## Goal\nShip the parser.\n\n## Progress\n### Done\n- [x] Wrote `src/parser.rs`\n",
        "firstKeptEntryId": kept, "tokensBefore": 12000
    })
    .to_string()
}

#[test]
fn a_compaction_appended_by_another_writer_is_notified_with_the_workbench_facts() {
    let e = Env::with_demo();
    let sink = capture(&e);
    let (leaf, kept) = file_leaf(&e.file);
    append_from_other_process(&e.file, &pi_compaction("c0ffee01", &leaf, &kept));
    let opened = reload_if_open(&e.state, &e.file, true).unwrap().expect("the open session was read again");
    assert_eq!(opened.file_leaf_id.as_deref(), Some("c0ffee01"));
    let got = sink.take();
    assert_eq!(got.len(), 1, "{got:?}");
    let n = &got[0];
    assert_eq!(n.kind, NoticeKind::Compaction);
    assert_eq!(n.entry_id, "c0ffee01");
    assert_eq!(n.session_path, e.file);
    // Named by the session's name, or its file stem.
    let s = session_engine::Session::open(&e.file).unwrap();
    let name =
        s.name().map(str::to_string).unwrap_or_else(|| support::DEMO_FILE_NAME.trim_end_matches(".jsonl").into());
    assert!(n.title.starts_with(&name) && n.title.contains("compacted"), "{}", n.title);
    // The drop alarm and retention the workbench shows for this entry.
    let idx = s.index_of("c0ffee01").unwrap();
    let check = arbor_app::view::summary::check_of(&s, idx);
    let alarms = check.dropped.len();
    assert!(
        n.body.contains(&format!("{alarms} drop alarm")) || (alarms == 0 && n.body.contains("no drop alarm")),
        "{}",
        n.body
    );
    let retention = match check.retention.total {
        0 => "no facts to retain".to_string(),
        t => format!("retention {}/{t} facts", check.retention.mentioned),
    };
    assert!(n.body.contains(&retention), "{} vs {:?}", n.body, check.retention);
    // Read once: a second reload has nothing new and says nothing.
    assert!(reload_if_open(&e.state, &e.file, true).unwrap().is_none());
    assert!(sink.take().is_empty());
}

#[test]
fn arbor_s_own_summaries_are_not_notified_and_the_setting_turns_them_off() {
    let e = Env::with_demo();
    let sink = capture(&e);
    // Arbor's own compaction, then the watcher's reload for that append: nothing to say.
    block(summarize::compact(&e.state, &e.st, &budgets(24000), None, None)).unwrap();
    let _ = reload_if_open(&e.state, &e.file, true).unwrap();
    assert!(sink.take().is_empty(), "Arbor's own compaction is not notified");

    // Turned off (Arbor's state file): a branch summary by another writer says nothing.
    let clicks = notices::NoticeClicks::default();
    assert!(notices::settings(&e.state, &clicks).enabled, "on by default");
    assert!(!notices::set_enabled(&e.state, &clicks, false).unwrap().enabled);
    assert!(ArborStateFile::load(&e.state.state_file()).summary_notices_off);
    let (leaf, _) = file_leaf(&e.file);
    let branch = |id: &str, parent: &str| {
        serde_json::json!({"type": "branch_summary", "id": id, "parentId": parent, "timestamp": "2025-03-01T12:00:00.000Z",
            "fromId": parent, "summary": "The branch tried a regex parser and gave it up."})
        .to_string()
    };
    append_from_other_process(&e.file, &branch("b0a7c0de", &leaf));
    assert!(reload_if_open(&e.state, &e.file, true).unwrap().is_some());
    assert!(sink.take().is_empty(), "turned off");

    // On again: the next branch summary is one notice.
    assert!(notices::set_enabled(&e.state, &clicks, true).unwrap().enabled);
    append_from_other_process(&e.file, &branch("b0a7c0df", "b0a7c0de"));
    reload_if_open(&e.state, &e.file, true).unwrap();
    let got = sink.take();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].kind, got[0].entry_id.as_str()), (NoticeKind::BranchSummary, "b0a7c0df"));
    assert!(got[0].title.contains("branch summarized"), "{}", got[0].title);
}

/// Pi's compaction read by Arbor's own compaction before the watcher's reload came: it is
/// notified then (once), and Arbor's compaction after it is not.
#[test]
fn another_writer_s_compaction_read_by_an_arbor_compaction_is_notified_once() {
    let e = Env::with_demo();
    let sink = capture(&e);
    let (leaf, kept) = file_leaf(&e.file);
    append_from_other_process(&e.file, &pi_compaction("c0ffee02", &leaf, &kept));
    // Pi's compaction is the file's leaf: add a message after it so that Arbor may compact again.
    let msg = serde_json::json!({"type": "message", "id": "fee10001", "parentId": "c0ffee02",
        "timestamp": "2025-03-01T11:00:05.000Z",
        "message": {"role": "user", "content": "and now the tests", "timestamp": 1740826805000u64}})
    .to_string();
    append_from_other_process(&e.file, &msg);
    // Arbor's leaf followed Pi's before; this window has not read the appends yet.
    let r = block(summarize::compact(&e.state, &e.st, &budgets(24000), None, None));
    let got = sink.take();
    assert_eq!(got.iter().map(|n| n.entry_id.as_str()).collect::<Vec<_>>(), ["c0ffee02"], "{r:?}");
    let _ = reload_if_open(&e.state, &e.file, true).unwrap();
    assert!(sink.take().is_empty(), "no second notice, none for Arbor's own");
}
