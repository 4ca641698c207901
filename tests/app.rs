//! App-level tests without a window: the command bodies over real files in temp dirs, and the
//! generated bindings drift check.

use arbor_app::commands::{budgets, graph, navigate, sessions};
use arbor_app::state::state_file::ArborStateFile;
use arbor_app::view::budgets::{BudgetArgs, Budgets, SettingsScope};
use arbor_app::view::graph::{GraphRowKind, GraphViewport};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Compare, Bring back into context, forks across files: tests/branch_cmds.rs.
mod branch_cmds;
/// The artifact ledger in the workbench's edits and the app's compactions: tests/ledger_cmds.rs.
mod ledger_cmds;
/// The session library in the app (picker, search, live follow): tests/library_cmds.rs.
mod library_cmds;
/// A big session's preview against its full open: tests/preview_cmds.rs.
mod preview_cmds;
/// Summary quality: the workbench's panel and the background marks: tests/quality.rs.
mod quality;
/// The app as Pi's reviewer over a real socket: tests/review.rs.
mod review;
/// Context window from the model table, the keyring notice, cancelling the index pass: tests/window_cmds.rs.
mod window_cmds;

mod support;
use support::{env, Env};

fn copy_demo_to(dir: &Path) -> PathBuf {
    write_session(dir, "2025-03-01T09-00-00-000Z_demo.jsonl", sessions::DEMO_SESSION)
}

/// Writes `text` as session file `name` in `dir` (created when missing).
fn write_session(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bindings_are_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src/ipc/bindings.ts");
    let fresh = arbor_app::render_bindings();
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if fresh != committed {
        std::fs::write(&path, &fresh).unwrap();
        panic!("ui/src/ipc/bindings.ts was out of date; it has been regenerated, review and commit it");
    }
}

#[test]
fn the_demo_opens_rich() {
    let e = env();
    let opened = sessions::open_demo(&e.state).unwrap();
    assert!(opened.is_demo);
    assert_eq!(opened.entry_count, 113, "the demo's entries (scripts/gen-demo.mjs)");
    assert!(opened.lanes >= 2, "the demo has branches");
    let w = graph::window(&e.state, 0, opened.total_rows).unwrap();
    let has = |m: &str| w.rows.iter().any(|r| r.marks.iter().any(|x| x == m));
    for m in ["compaction", "firstKept", "branchSummary", "beyondHorizon", "leaf", "labeled"] {
        assert!(has(m), "demo graph shows {m}");
    }
}

#[test]
fn continue_from_user_message_moves_leaf_to_parent_and_is_remembered() {
    let e = env();
    let path = copy_demo_to(&e.agent.join("sessions").join("p"));
    let opened = sessions::open(&e.state, &path, false).unwrap();
    // A user message that is not on the active path.
    let w = graph::window(&e.state, 0, opened.total_rows).unwrap();
    let target = w
        .rows
        .iter()
        .find(|r| r.kind == GraphRowKind::User && !r.marks.iter().any(|m| m == "active"))
        .expect("an off-path user message");
    let detail = graph::select(&e.state, &target.entry_id, 16_384, true).unwrap().detail;
    let nav = navigate::continue_from(&e.state, &target.entry_id).unwrap();
    assert_eq!(nav.session.leaf_id, detail.parent_id, "leaf = parent of the user message");
    assert!(nav.composer_text.as_deref().is_some_and(|t| !t.is_empty()));
    assert!(nav.session.leaf_moved);
    let before = std::fs::read(&path).unwrap();
    assert_eq!(before, sessions::DEMO_SESSION, "navigation never writes the session");
    // Remembered across a restart (a fresh AppState over the same data dir).
    let st = ArborStateFile::load(&e.state.state_file());
    assert_eq!(st.leaves.get(&path.display().to_string()), nav.session.leaf_id.as_ref());
    let again = e.restart();
    let reopened = sessions::open(&again, &path, false).unwrap();
    assert_eq!(reopened.leaf_id, nav.session.leaf_id);
    // The context view of the new leaf differs from Pi's leaf.
    let a = navigate::context(&again, None, 24000, 6000, true).unwrap();
    let b = navigate::context(&again, opened.leaf_id.as_deref(), 24000, 6000, true).unwrap();
    assert_ne!(
        a.messages.len() as i64 * 1_000_000 + a.estimated_tokens as i64,
        b.messages.len() as i64 * 1_000_000 + b.estimated_tokens as i64
    );
}

/// After an append the graph builds only the new entries' nodes (and a new label's target
/// flag); they equal the nodes built from scratch, for labels set and cleared on old entries.
#[test]
fn appended_entries_extend_the_graph_nodes_as_a_full_build_would() {
    let e = env();
    let path = copy_demo_to(&e.agent.join("sessions").join("p"));
    let opened = sessions::open(&e.state, &path, false).unwrap();
    let ids: Vec<String> =
        e.state.with_open(|o| Ok((0..o.session.len()).map(|i| o.session.id(i).to_string()).collect())).unwrap();
    let same = |why: &str| {
        e.state
            .with_open(|o| {
                let kept = format!("{:?}", o.nodes.nodes(&o.session));
                assert_eq!(kept, format!("{:?}", arbor_app::view::graph::nodes(&o.session)), "{why}");
                Ok(kept)
            })
            .unwrap()
    };
    let first = same("after open");
    let old = &ids[ids.len() / 2];
    navigate::set_label(&e.state, old, Some("midway"), 1_740_000_000_000, None).unwrap();
    let labelled = same("a label on an old entry");
    assert_ne!(first, labelled, "the old entry's flag changed");
    navigate::set_label(&e.state, old, None, 1_740_000_001_000, None).unwrap();
    same("the label cleared");
    let leaf = opened.leaf_id.clone().unwrap();
    navigate::set_label(&e.state, &leaf, Some("end"), 1_740_000_002_000, None).unwrap();
    same("a label on the old leaf");
    assert_eq!(e.state.with_open(|o| Ok(o.session.len())).unwrap(), ids.len() + 3);
}

#[test]
fn label_is_an_appended_entry_and_clears() {
    let e = env();
    let path = copy_demo_to(&e.agent.join("sessions").join("p"));
    let opened = sessions::open(&e.state, &path, false).unwrap();
    let target = opened.leaf_id.clone().unwrap();
    let after =
        navigate::set_label(&e.state, &target, Some("checkpoint"), 1_740_000_000_000, Some("1abe1000")).unwrap();
    assert_eq!(after.entry_count, opened.entry_count + 1);
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(sessions::DEMO_SESSION), "append-only: earlier bytes unchanged");
    let last = String::from_utf8_lossy(&bytes[sessions::DEMO_SESSION.len()..]).to_string();
    let v: serde_json::Value = serde_json::from_str(last.trim()).unwrap();
    assert_eq!(v["type"], "label");
    assert_eq!(v["id"], "1abe1000");
    // Pi's key order.
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "id", "parentId", "timestamp", "targetId", "label"]);
    assert_eq!(v["targetId"], target.as_str());
    assert_eq!(v["label"], "checkpoint");
    assert_eq!(v["parentId"], target.as_str());
    assert_eq!(v["timestamp"], "2025-02-19T21:20:00.000Z");
    assert_eq!(graph::select(&e.state, &target, 16_384, true).unwrap().detail.label.as_deref(), Some("checkpoint"));
    navigate::set_label(&e.state, &target, None, 1_740_000_001_000, None).unwrap();
    assert_eq!(graph::select(&e.state, &target, 16_384, true).unwrap().detail.label, None);
    let last_line = std::fs::read_to_string(&path).unwrap().lines().last().unwrap().to_string();
    assert!(!last_line.contains("\"label\":"), "clearing omits the label key: {last_line}");
}

/// A label means the same whatever the leaf: when another program appended since Arbor read the
/// file, Arbor reads the new line and plans again, on the grown file's leaf when Arbor's leaf
/// was the file's, and on Arbor's own leaf when the user had moved it.
#[test]
fn label_replans_when_another_program_appended_unseen() {
    let e = env();
    let path = copy_demo_to(&e.agent.join("sessions").join("p"));
    let opened = sessions::open(&e.state, &path, false).unwrap();
    let target = opened.leaf_id.clone().unwrap();
    // Pi appends a line that the open session has not read yet (no watcher runs here).
    let pi_line = format!(
        "{{\"type\":\"label\",\"id\":\"0p1a0001\",\"parentId\":\"{target}\",\"timestamp\":\"2025-03-02T00:00:00.000Z\",\"targetId\":\"{target}\",\"label\":\"pi\"}}\n"
    );
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(pi_line.as_bytes()).unwrap();
    let before = std::fs::read(&path).unwrap();
    let after = navigate::set_label(&e.state, &target, Some("replanned"), 0, None).unwrap();
    let text = std::fs::read(&path).unwrap();
    assert!(text.starts_with(&before), "Pi's line stays, nothing is rewritten");
    let last: serde_json::Value =
        serde_json::from_str(std::str::from_utf8(&text[before.len()..]).unwrap().trim_end()).unwrap();
    assert_eq!(last["label"], "replanned");
    assert_eq!(last["parentId"], "0p1a0001", "planned again on the grown file's leaf");
    assert_eq!(after.leaf_id.as_deref(), last["id"].as_str());
    assert_eq!(after.entry_count, opened.entry_count + 2, "Arbor read Pi's line too");

    // With Arbor's leaf moved off the file's leaf, the label stays under Arbor's leaf.
    let parent_of_leaf = {
        let session = session_engine::Session::open(&path).unwrap();
        let i = session.index_of(&target).unwrap();
        session.id(session.parent_of(i).unwrap()).to_string()
    };
    let args = BudgetArgs { budgets: Budgets::default(), context_window: 24000 };
    navigate::continue_here(&e.state, &parent_of_leaf, &args, None).unwrap();
    let pi_line2 = pi_line.replace("0p1a0001", "0p1a0002");
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(pi_line2.as_bytes()).unwrap();
    navigate::set_label(&e.state, &target, Some("here"), 0, None).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!((last["label"].as_str(), last["parentId"].as_str()), (Some("here"), Some(parent_of_leaf.as_str())));
}

#[test]
fn budgets_write_in_place_keeping_other_keys() {
    let e = env();
    std::fs::create_dir_all(&e.agent).unwrap();
    let settings = e.agent.join("settings.json");
    std::fs::write(&settings, "{\"theme\":\"dark\",\"compaction\":{\"enabled\":true,\"other\":1},\"zeta\":[1,2]}")
        .unwrap();
    let b = Budgets { enabled: false, reserve_tokens: 9000, keep_recent_tokens: 7000, branch_reserve_tokens: 5000 };
    let saved = budgets::save(&e.state, SettingsScope::Global, &b).unwrap();
    assert_eq!(saved.budgets, b);
    let text = std::fs::read_to_string(&settings).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["theme"], "dark");
    assert_eq!(v["compaction"]["other"], 1);
    assert_eq!(v["compaction"]["keepRecentTokens"], 7000);
    assert_eq!(v["branchSummary"]["reserveTokens"], 5000);
    assert!(text.find("\"theme\"").unwrap() < text.find("\"zeta\"").unwrap(), "key order kept");
    // The project scope needs a real project folder: the demo's made-up cwd is never created.
    sessions::open_demo(&e.state).unwrap();
    assert!(budgets::save(&e.state, SettingsScope::Project, &b).is_err());
    assert!(!Path::new("/home/dev/project/.pi").exists());
    // A broken file is never overwritten.
    std::fs::write(&settings, "{not json").unwrap();
    assert!(budgets::save(&e.state, SettingsScope::Global, &b).is_err());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{not json");
}

#[test]
fn preview_cut_moves_with_keep_recent() {
    let e = env();
    let path = copy_demo_to(&e.agent.join("sessions").join("p"));
    sessions::open(&e.state, &path, false).unwrap();
    // The demo keeps about 1100 tokens after its last compaction's cut: 500 cuts inside them.
    let small = budgets::preview(&e.state, 500, 6000, 24000, true).unwrap();
    let large = budgets::preview(&e.state, 8000, 6000, 24000, true).unwrap();
    assert_eq!(small.refusal, None);
    assert!(small.first_kept_row.unwrap() > large.first_kept_row.unwrap(), "more kept = earlier cut");
    assert!(small.tokens_kept < large.tokens_kept);
    assert!(small.tokens_to_summarize > large.tokens_to_summarize);
}

/// A session header line (cwd `/p`).
fn session_header(id: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/p"}}"#) + "\n"
}

/// A message entry line with id `id` (as 8 hex digits) under `parent`: a user message with
/// `body` as its content, or an assistant message with one text block.
fn message_line(id: u32, parent: Option<u32>, user: bool, body: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p:08x}\""));
    let (role, content) = if user {
        ("user", format!("\"{body}\""))
    } else {
        ("assistant", format!(r#"[{{"type":"text","text":"{body}"}}]"#))
    };
    format!(
        r#"{{"type":"message","id":"{id:08x}","parentId":{parent},"timestamp":"2025-03-01T09:00:00.000Z","message":{{"role":"{role}","content":{content},"timestamp":1740819600000}}}}"#
    ) + "\n"
}

#[test]
fn the_open_already_gives_the_default_cut_its_row() {
    let e = env();
    // A linear session of 40 messages of ~100 tokens: its graph folds the run that the cut of
    // the Budgets panel's default settings (global scope, 500 tokens kept) falls in.
    let mut text = session_header("5e551011");
    for i in 0..40u32 {
        text.push_str(&message_line(
            i + 1,
            (i > 0).then_some(i),
            i.is_multiple_of(2),
            &format!("message {i} ").repeat(40),
        ));
    }
    let path = write_session(&e.agent.join("sessions").join("p"), "2025-03-01T09-00-00-000Z_linear.jsonl", &text);
    std::fs::write(e.agent.join("settings.json"), r#"{"compaction":{"keepRecentTokens":500}}"#).unwrap();
    let opened = sessions::open(&e.state, &path, false).unwrap();
    let p = budgets::preview(&e.state, 500, 6000, 24000, true).unwrap();
    assert_eq!(p.refusal, None);
    let row = p.first_kept_row.expect("a cut");
    assert_eq!(p.total_rows, opened.total_rows, "the preview had to lay the graph out again");
    assert_eq!(
        graph::window(&e.state, row, row + 1).unwrap().rows[0].entry_id,
        p.first_kept_id.clone().unwrap(),
        "the cut has a row of its own"
    );
    // Other budgets: the cut has its row too (the run was unfolded whole).
    let other = budgets::preview(&e.state, 1500, 6000, 24000, true).unwrap();
    let row = other.first_kept_row.expect("a cut");
    assert_ne!(other.first_kept_id, p.first_kept_id);
    assert_eq!(graph::window(&e.state, row, row + 1).unwrap().rows[0].entry_id, other.first_kept_id.unwrap());
}

/// "Continue from here" lays the graph out once, with the cut of the Budgets panel's first
/// preview already unfolded: the preview that the UI asks for right after finds its row.
#[test]
fn continue_already_gives_the_new_leafs_default_cut_its_row() {
    let e = env();
    // Two lines of 40 messages (~100 tokens each) from entry 10: the file's leaf ends the second,
    // so the open unfolds a run of the second line; Continue moves to the end of the first, whose
    // cut (500 tokens kept) lies in a run the open left folded.
    let mut text = session_header("5e551012");
    let mut line = |id: u32, parent: Option<u32>, i: u32| {
        text.push_str(&message_line(id, parent, i.is_multiple_of(2), &format!("message {id} ").repeat(40)))
    };
    for i in 0..40u32 {
        line(i + 1, (i > 0).then_some(i), i);
    }
    for i in 10..50u32 {
        line(0x100 + i, Some(if i == 10 { 10 } else { 0x100 + i - 1 }), i);
    }
    let path = write_session(&e.agent.join("sessions").join("p"), "2025-03-01T09-00-00-000Z_forked.jsonl", &text);
    std::fs::write(e.agent.join("settings.json"), r#"{"compaction":{"keepRecentTokens":500}}"#).unwrap();
    let opened = sessions::open(&e.state, &path, false).unwrap();
    assert_eq!(opened.leaf_id.as_deref(), Some("00000131"));
    let at_open = budgets::preview(&e.state, 500, 6000, 24000, true).unwrap();
    assert_eq!(at_open.total_rows, opened.total_rows, "the open's cut has its row");
    let nav = navigate::continue_from(&e.state, "00000028").unwrap();
    assert_eq!(nav.session.leaf_id.as_deref(), Some("00000028"));
    let p = budgets::preview(&e.state, 500, 6000, 24000, true).unwrap();
    let row = p.first_kept_row.expect("a cut");
    let cut = p.first_kept_id.clone().unwrap();
    assert!(cut.starts_with("000000"), "the cut is on the first line: {cut}");
    assert_eq!(p.total_rows, nav.session.total_rows, "the preview had to lay the graph out again");
    assert_eq!(graph::window(&e.state, row, row + 1).unwrap().rows[0].entry_id, cut, "the cut has a row of its own");
    // The open's unfolded run stays unfolded, as one unfolded by hand would.
    assert!(nav.session.total_rows > 30, "{} rows", nav.session.total_rows);

    // The UI's Continue, in one round trip, back to the end of the second line with the panel's
    // own budgets (1500 tokens kept, not the settings' 500): its layout reveals that cut, and it
    // returns what a click on the new leaf and a preview asked for after it return.
    let args = BudgetArgs {
        budgets: Budgets { keep_recent_tokens: 1500, reserve_tokens: 6000, ..Budgets::default() },
        context_window: 24000,
    };
    fn json(v: &impl serde::Serialize) -> serde_json::Value {
        serde_json::to_value(v).unwrap()
    }
    // A view of 4 rows at the top, chunks of 8 rows: the answer carries the rows that view draws
    // once scrolled to the new leaf, as graph_window gives them, in whole chunks.
    let view = GraphViewport { top: 0.0, height: 4.0, margin: 2, chunk: 8 };
    let c = navigate::continue_here(&e.state, "00000131", &args, Some(&view)).unwrap();
    assert_eq!(c.navigation.session.leaf_id.as_deref(), Some("00000131"));
    let w = c.rows.as_ref().expect("the rows at the new leaf");
    let leaf_row = c.navigation.session.leaf_row.unwrap();
    let end = w.start + w.rows.len() as u32;
    let total = c.navigation.session.total_rows;
    assert!(
        w.start <= leaf_row.saturating_sub(4) && (leaf_row + 4).min(total) <= end,
        "{leaf_row} in {}..{end}",
        w.start
    );
    assert!(w.start.is_multiple_of(8), "whole chunks: {}", w.start);
    assert!(end.is_multiple_of(8) || end == total, "whole chunks: {end}");
    assert_eq!(w.total_rows, total);
    assert_eq!(w.rows[(leaf_row - w.start) as usize].entry_id, "00000131");
    assert_eq!(json(w), json(&graph::window(&e.state, w.start, end).unwrap()), "graph_window's rows");
    let row = c.preview.first_kept_row.expect("a cut");
    assert_eq!(c.preview.total_rows, c.navigation.session.total_rows, "the preview had to lay the graph out again");
    assert_eq!(
        graph::window(&e.state, row, row + 1).unwrap().rows[0].entry_id,
        c.preview.first_kept_id.clone().unwrap()
    );
    let selection = c.selection.as_ref().expect("the new leaf's selection");
    assert_eq!(selection.detail.id, "00000131");
    assert_eq!(json(selection), json(&graph::select(&e.state, "00000131", 6000, true).unwrap()));
    assert_eq!(json(&c.preview), json(&budgets::preview(&e.state, 1500, 6000, 24000, true).unwrap()));
}

/// The rows Continue sends are those the graph draws once it has scrolled to the new leaf as
/// the UI's `scrollToShow` does: the view stays when the leaf is in it, else the leaf is centred,
/// and the scroll stops at the graph's end; then the margin, widened to whole chunks.
#[test]
fn the_rows_continue_sends_are_those_the_view_draws_at_the_leaf() {
    let v = GraphViewport { top: 100.0, height: 20.0, margin: 10, chunk: 50 };
    assert_eq!(v.rows_showing(110, 1000), Some((50, 150)), "in view: rows 90..130");
    assert_eq!(v.rows_showing(500, 1000), Some((450, 550)), "centred: view 490.5..510.5, rows 480..521");
    assert_eq!(v.rows_showing(995, 1000), Some((950, 1000)), "at the end the view is 980..1000");
    assert_eq!(v.rows_showing(3, 1000), Some((0, 50)), "at the start the view is 0..20");
    assert_eq!(v.rows_showing(1000, 1000), None, "no such row");
    assert_eq!(GraphViewport { height: 0.0, ..v }.rows_showing(110, 1000), None, "a view with no height");
    assert_eq!(GraphViewport { chunk: 0, ..v }.rows_showing(110, 1000), None, "no chunk");
    assert_eq!(GraphViewport { chunk: 6000, ..v }.rows_showing(110, 100_000), None, "more than a window's 5000 rows");
}

/// An open lets the session before it go before reading the next one (at a million entries a
/// session is 2.6 GB, and a reopen held two); when the new file cannot be opened, the previous
/// session is open again, at the entry the user had moved its leaf to.
#[test]
fn a_failed_open_leaves_the_previous_session_open_at_its_leaf() {
    let e = Env::with_demo();
    let moved = e.state.with_open(|o| Ok(o.session.id(5).to_string())).unwrap();
    let args = BudgetArgs { budgets: Budgets::default(), context_window: 200_000 };
    navigate::continue_here(&e.state, &moved, &args, None).unwrap();
    let before = sessions::describe(&e.state).unwrap();
    assert!(before.leaf_moved && before.leaf_id.as_deref() == Some(moved.as_str()), "{before:?}");
    let held = std::sync::Arc::downgrade(&e.state.with_open(|o| Ok(o.session.snapshot())).unwrap());
    let missing = e.dir.join("missing.jsonl");
    assert!(sessions::open(&e.state, &missing, false).is_err());
    let after = sessions::describe(&e.state).unwrap();
    assert_eq!((after.path.as_str(), after.leaf_id.as_deref()), (before.path.as_str(), Some(moved.as_str())));
    assert!(after.leaf_moved);
    assert_eq!((after.entry_count, after.total_rows), (before.entry_count, before.total_rows));
    assert!(held.upgrade().is_none(), "the previous session was kept while the new file was read");
}

#[test]
fn errors_are_tagged_with_hints() {
    let e = env();
    let err: arbor_app::error::IpcError = graph::window(&e.state, 0, 10).unwrap_err().into();
    assert_eq!(err.kind, arbor_app::error::ErrorKind::NotFound);
    assert!(!err.hint.is_empty());
    let v = serde_json::to_value(&err).unwrap();
    assert_eq!(v["kind"], "notFound");
    let err: arbor_app::error::IpcError =
        sessions::open(&e.state, Path::new("/nonexistent.jsonl"), false).unwrap_err().into();
    assert_eq!(err.kind, arbor_app::error::ErrorKind::Io);
    // The library's and a new file's errors go through the same mapping, each with its own hint.
    use arbor_app::error::{AppError, ErrorKind, IpcError};
    use library::LibError;
    use session_engine::store::NewFileError;
    let ipc = |e: AppError| IpcError::from(e);
    let busy = ipc(LibError::Busy("the index is busy".into()).into());
    assert_eq!((busy.kind, busy.message.as_str()), (ErrorKind::Refused, "the index is busy"));
    let corrupt = ipc(LibError::Corrupt("malformed".into()).into());
    assert_eq!(corrupt.kind, ErrorKind::Refused);
    assert!(corrupt.hint.contains("rebuilt"), "{}", corrupt.hint);
    assert_eq!(ipc(LibError::Invalid("empty query".into()).into()).kind, ErrorKind::Invalid);
    let io = ipc(LibError::Io { path: "/x.jsonl".into(), message: "denied".into() }.into());
    assert_eq!((io.kind, io.message.as_str()), (ErrorKind::Io, "/x.jsonl: denied"));
    let exists = ipc(AppError::NewFile { path: "/out.md".into(), error: NewFileError::Exists });
    assert_eq!(exists.kind, ErrorKind::Refused);
    assert!(exists.message.contains("/out.md already exists") && exists.hint.contains("replace"), "{exists:?}");
    assert_eq!(ipc(AppError::NewFile { path: "/out".into(), error: NewFileError::IsDir }).kind, ErrorKind::Invalid);
    let full =
        ipc(AppError::NewFile { path: "/out.md".into(), error: NewFileError::Io(std::io::Error::other("no space")) });
    assert_eq!(full.kind, ErrorKind::Io);
    assert!(full.message.contains("no space"), "{}", full.message);
}

#[test]
fn unfold_all_shows_every_entry_and_folds_back() {
    let e = env();
    let opened = sessions::open_demo(&e.state).unwrap();
    assert_eq!(graph::unfold_all(&e.state, true).unwrap(), opened.entry_count);
    assert_eq!(graph::unfold_all(&e.state, false).unwrap(), opened.total_rows);
}

#[test]
fn search_finds_rows_and_reveal_expands_folds() {
    let e = env();
    sessions::open_demo(&e.state).unwrap();
    let hits =
        e.state.with_open(|o| Ok(arbor_app::view::graph::search(&o.session, &o.layout, "compaction", 50))).unwrap();
    assert!(!hits.is_empty());
    let w = graph::window(&e.state, 0, 5000).unwrap();
    let fold =
        w.rows.iter().find(|r| r.kind == GraphRowKind::Fold).expect("the demo session's graph folds a long linear run");
    let before = w.total_rows;
    let row = graph::reveal(&e.state, &fold.entry_id).unwrap();
    let after = graph::window(&e.state, row, row + 1).unwrap();
    assert_eq!(after.rows[0].entry_id, fold.entry_id);
    assert!(after.total_rows > before);
}

/// The demo session's graph, rendered as ASCII and compared with a committed snapshot (rewritten
/// on drift, like the bindings): reviewers see the layout of a real Pi file change.
#[test]
fn demo_graph_snapshot() {
    let s = session_engine::Session::from_bytes(sessions::DEMO_SESSION.to_vec());
    let nodes = arbor_app::view::graph::nodes(&s);
    let layout = session_graph::layout(&nodes, s.file_leaf().map(|l| l as u32), &session_graph::LayoutOptions::new());
    let ascii = session_graph::render_ascii(&layout, |i| {
        let (kind, title) = arbor_app::view::graph::entry_title(&s, i as usize);
        let title: String = title.chars().take(40).collect();
        let kind = serde_json::to_value(kind).unwrap();
        format!("{} {}: {title}", s.id(i as usize), kind.as_str().unwrap())
    });
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/demo-graph.txt");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if ascii != committed {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &ascii).unwrap();
        panic!("tests/snapshots/demo-graph.txt changed; it has been rewritten, review and commit it");
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/session-engine/tests/fixtures/conformance").join(name)
}

#[test]
fn legacy_file_opens_read_only_and_refuses_labels() {
    let e = env();
    let tmp = e.state.data_dir.join("copy");
    std::fs::create_dir_all(&tmp).unwrap();
    let path = tmp.join("legacy.jsonl");
    std::fs::copy(fixture("load-v1-legacy.jsonl"), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let opened = sessions::open(&e.state, &path, false).unwrap();
    assert!(opened.read_only.is_some(), "a v1 file is read-only in Arbor");
    let target = opened.leaf_id.clone().unwrap();
    let err: arbor_app::error::IpcError =
        navigate::set_label(&e.state, &target, Some("x"), 0, None).unwrap_err().into();
    assert_eq!(err.kind, arbor_app::error::ErrorKind::Refused);
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was written");
}

#[test]
fn corrupt_lines_are_reported_not_fatal() {
    let e = env();
    let opened = sessions::open(&e.state, &fixture("load-corrupt-lines.jsonl"), false).unwrap();
    assert!(!opened.diagnostics.is_empty());
    assert!(opened.entry_count > 0);
    graph::window(&e.state, 0, opened.total_rows).unwrap();
}

/// The security posture is configuration; pin it so a convenience edit cannot loosen it silently.
#[test]
fn security_config_stays_strict() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let conf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("tauri.conf.json")).unwrap()).unwrap();
    assert_eq!(conf["app"]["withGlobalTauri"], false, "no global Tauri object");
    assert_eq!(conf["app"]["security"]["freezePrototype"], true);
    let csp = &conf["app"]["security"]["csp"];
    for (directive, value) in csp.as_object().unwrap() {
        let value = value.as_str().unwrap();
        if directive == "connect-src" {
            assert_eq!(value, "ipc: http://ipc.localhost", "IPC only");
            continue;
        }
        for bad in ["unsafe-inline", "unsafe-eval", "*", "http:", "https:", "data:", "blob:"] {
            assert!(!value.contains(bad), "CSP {directive} must not allow {bad}: {value}");
        }
    }
    assert_eq!(csp["script-src"], "'self'");
    assert_eq!(csp["object-src"], "'none'");
    let cap: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("src-tauri/capabilities/default.json")).unwrap())
            .unwrap();
    assert_eq!(cap["permissions"], serde_json::json!([]), "app commands need no permission; nothing else is granted");
    assert_eq!(cap["windows"], serde_json::json!(["main"]));
}

/// "Save as v3 copy", how a legacy session becomes writable: the v1 fixture becomes a writable v3 file beside it with
/// the same context; the original's bytes never change; a second save refuses with a sentence.
#[test]
fn save_v3_copy_writes_a_writable_copy_beside_and_never_touches_the_original() {
    let e = env();
    let dir = e.state.data_dir.join("v3");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("legacy.jsonl");
    std::fs::copy(fixture("load-v1-legacy.jsonl"), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let opened = sessions::open(&e.state, &path, false).unwrap();
    assert!(opened.read_only.is_some());

    let copy = sessions::save_v3_copy_of_open(&e.state).unwrap();
    let copy_path = dir.join("legacy-v3.jsonl");
    assert_eq!(Path::new(&copy.path), copy_path, "the copy is beside the original and is what is open now");
    assert_eq!(copy.read_only, None, "the copy opens writable");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the original is unchanged");
    let header: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&copy_path).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["version"], 3);
    let orig = session_engine::Session::open(&path).unwrap();
    let new = session_engine::Session::open(&copy_path).unwrap();
    assert_eq!(new.version_in_file(), Some(3.0));
    let a = session_engine::context::build_context(&orig, orig.file_leaf()).agent_messages();
    let b = session_engine::context::build_context(&new, new.file_leaf()).agent_messages();
    assert!(!a.is_empty());
    assert_eq!(a, b, "same context as the original");
    // Writable for real: a label is appended to the copy.
    let leaf = copy.leaf_id.clone().unwrap();
    navigate::set_label(&e.state, &leaf, Some("migrated"), 0, None).unwrap();
    assert!(std::fs::read_to_string(&copy_path).unwrap().contains("\"migrated\""));

    // Reopen the original: a second save refuses, writes nothing.
    sessions::open(&e.state, &path, false).unwrap();
    let copy_bytes = std::fs::read(&copy_path).unwrap();
    let err: arbor_app::error::IpcError = sessions::save_v3_copy_of_open(&e.state).unwrap_err().into();
    assert_eq!(err.kind, arbor_app::error::ErrorKind::Refused);
    assert!(err.message.contains("already exists"), "{}", err.message);
    assert_eq!(std::fs::read(&copy_path).unwrap(), copy_bytes);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// The context view's categories add up to the sum of the engine's per-message estimates, and
/// each message's tokens to that estimate, at every node of every conformance case: the bar
/// splits Pi's numbers, it does not count on its own.
#[test]
fn context_categories_add_up_to_the_engine_estimate_everywhere() {
    use session_engine::context::{build_context, estimate_tokens};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/session-engine/tests/fixtures/conformance");
    let mut nodes = 0;
    let mut split = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let Ok(s) = session_engine::Session::open(&p) else { continue };
        for leaf in 0..s.len() {
            let v = arbor_app::view::context::context_view(&s, Some(leaf), 200_000, 16_384, true);
            let ctx = build_context(&s, Some(leaf));
            let engine: u64 = ctx.messages.iter().map(|m| estimate_tokens(&m.message) as u64).sum();
            let cats: u64 = v.categories.iter().map(|c| c.tokens as u64).sum();
            let msgs: u64 = v.messages.iter().map(|m| m.tokens as u64).sum();
            assert_eq!(
                (cats, msgs, v.estimated_tokens as u64),
                (engine, engine, engine),
                "{} at {}",
                p.display(),
                s.id(leaf)
            );
            split += v.categories.iter().filter(|c| c.tokens > 0).count().saturating_sub(1);
            nodes += 1;
        }
    }
    assert!(nodes > 500, "{nodes} nodes");
    assert!(split > 0, "no context had more than one category");
}

/// A leaf move lays out from the kept nodes (the same allocation, not rebuilt); an append builds
/// them again, so the new entry and its label flag are in the next layout.
#[test]
fn leaf_moves_keep_the_nodes_and_appends_rebuild_them() {
    let e = env();
    let file = copy_demo_to(&e.agent.join("sessions").join("--demo--"));
    let opened = sessions::open(&e.state, &file, false).unwrap();
    let ptr = |e: &Env| e.state.with_open(|o| Ok(o.nodes.nodes(&o.session).as_ptr() as usize)).unwrap();
    let before = ptr(&e);
    let first = e.state.with_open(|o| Ok(o.session.id(0).to_string())).unwrap();
    navigate::continue_from(&e.state, &first).unwrap();
    assert_eq!(ptr(&e), before, "a leaf move reuses the nodes");
    let n = e.state.with_open(|o| Ok(o.nodes.nodes(&o.session).len())).unwrap();
    assert_eq!(n, opened.entry_count as usize);
    navigate::set_label(&e.state, &first, Some("kept?"), 1_740_000_000_000, Some("1abe1001")).unwrap();
    let (n, labeled) = e
        .state
        .with_open(|o| {
            let i = o.session.index_of(&first).unwrap();
            let nodes = o.nodes.nodes(&o.session);
            Ok((nodes.len(), nodes[i].flags & session_graph::flags::LABELED != 0))
        })
        .unwrap();
    assert_eq!(n, opened.entry_count as usize + 1, "the label entry is a node");
    assert!(labeled, "the target's label flag is there after the append");
}
