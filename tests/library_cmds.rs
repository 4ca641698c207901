//! Command-level tests of the session library in the app, without a window: the picker
//! listing from a real SQLite index, search with status badges, opening at a hit, live follow
//! with a second process appending, user folders, and a damaged index. Included by tests/app.rs.

use crate::support::{env, Env};
use arbor_app::commands::library as lib_cmd;
use arbor_app::commands::{graph, navigate, sessions};
use arbor_app::state::library::{self as lib_state, LibraryState, RawHandler};
use arbor_app::view::library::{HitStatus, LibraryUiEvent, ListingQuery, SearchRequest, SessionChange, SortKey};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const COMPACTED_FILE: &str = "2025-03-01T09-00-00-000Z_019550ef-1280-711a-b453-8fd0b31fd7b0.jsonl";
/// Only in user message a6771de3 of compaction-repeated.jsonl, which later compactions summarized.
const PHRASE: &str = "\"queue resolve timeout reducer\"";

/// The shared [`Env`] with the library over its agent dir's sessions.
struct LibEnv {
    e: Env,
    lib: Arc<LibraryState>,
    events: Receiver<LibraryUiEvent>,
    compacted: PathBuf,
}

fn conformance(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/session-engine/tests/fixtures/conformance").join(name)
}

fn other_project_session(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("2025-04-02T10-00-00-000Z_other.jsonl");
    std::fs::write(
        &p,
        concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"01960000-0000-7000-8000-000000000001\",\"timestamp\":\"2025-04-02T10:00:00.000Z\",\"cwd\":\"/home/dev/other\"}\n",
            "{\"type\":\"model_change\",\"id\":\"0a000000\",\"parentId\":null,\"timestamp\":\"2025-04-02T10:00:00.500Z\",\"provider\":\"openai\",\"modelId\":\"gpt-5\"}\n",
            "{\"type\":\"message\",\"id\":\"0a000001\",\"parentId\":\"0a000000\",\"timestamp\":\"2025-04-02T10:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"other project: tune the parser\",\"timestamp\":1743588001000}}\n",
        ),
    )
    .unwrap();
    p
}

/// Pi's sessions root with three sessions in /home/dev/project and one in /home/dev/other, an
/// empty index, and the watcher running (its events go through `handle_event`, as in the app).
fn lib_env() -> LibEnv {
    let e = env();
    let agent = &e.agent;
    let proj = agent.join("sessions").join("--home-dev-project--");
    std::fs::create_dir_all(&proj).unwrap();
    let compacted = proj.join(COMPACTED_FILE);
    std::fs::copy(conformance("compaction-repeated.jsonl"), &compacted).unwrap();
    std::fs::write(proj.join("2025-03-01T09-00-00-000Z_demo.jsonl"), sessions::DEMO_SESSION).unwrap();
    std::fs::copy(conformance("branch-simple-siblings.jsonl"), proj.join("2025-03-01T09-00-00-000Z_siblings.jsonl"))
        .unwrap();
    other_project_session(&agent.join("sessions").join("--home-dev-other--"));
    let lib = Arc::new(LibraryState::open(lib_state::db_path_for(&e.data), vec![agent.join("sessions")]));
    let (tx, events) = channel();
    let tx = Mutex::new(tx);
    lib.subscribe(Arc::new(move |ev| tx.lock().unwrap().send(ev).is_ok()));
    let (l2, a2) = (lib.clone(), e.state.clone());
    let handler: RawHandler = Arc::new(move |ev| l2.handle_event(&a2, ev));
    lib.start_watcher(handler).unwrap();
    let env = LibEnv { e, lib, events, compacted };
    // First start: progress events, then the end of the pass.
    let mut progress = Vec::new();
    wait_for(&env.events, "the first index pass", |e| {
        if let LibraryUiEvent::Indexing { done, total, full_text } = e {
            progress.push((*done, *total, *full_text));
        }
        matches!(e, LibraryUiEvent::Synced { .. })
    });
    // the catalog of the 4 files, then their full text, each to the end
    assert!(progress.contains(&(4, 4, false)), "catalog progress before Synced: {progress:?}");
    assert_eq!(progress.last(), Some(&(4, 4, true)), "full-text progress before Synced: {progress:?}");
    let first_full = progress.iter().position(|p| p.2).unwrap();
    assert!(progress[first_full..].iter().all(|p| p.2), "phase 2 comes after phase 1: {progress:?}");
    env
}

impl Drop for LibEnv {
    fn drop(&mut self) {
        self.lib.stop_watcher();
    }
}

fn wait_for(rx: &Receiver<LibraryUiEvent>, what: &str, mut f: impl FnMut(&LibraryUiEvent) -> bool) -> LibraryUiEvent {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        if let Ok(ev) = rx.recv_timeout(Duration::from_millis(200)) {
            if f(&ev) {
                return ev;
            }
        }
    }
    panic!("timed out waiting for {what}");
}

fn search(
    env: &LibEnv,
    text: &str,
    session: Option<&Path>,
    statuses: Vec<HitStatus>,
) -> Vec<arbor_app::view::library::LibraryHit> {
    let req = SearchRequest {
        text: text.into(),
        session_path: session.map(|p| p.display().to_string()),
        project: None,
        statuses,
        limit: Some(200),
    };
    lib_cmd::search(&env.lib, &req).unwrap()
}

/// Append one line from another process (`sh -c 'printf … >> file'`), as Pi would.
fn append_from_other_process(file: &Path, line: &str) {
    let st = std::process::Command::new("sh")
        .args(["-c", "printf '%s\\n' \"$1\" >> \"$2\"", "sh", line, &file.display().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn picker_lists_from_the_index_with_projects_sorting_and_filters() {
    let env = lib_env();
    assert!(env.lib.db_path.starts_with(env.e.tmp.path().join("data")), "the index lives in Arbor's data dir");
    assert!(env.lib.db_path.exists());
    let st = env.lib.status();
    assert!(st.synced && st.files == 4, "{st:?}");
    let all = lib_cmd::listing(&env.lib, &env.e.state, &ListingQuery::default()).unwrap();
    assert_eq!(all.sessions.len(), 4);
    let cwds: Vec<&str> = all.projects.iter().map(|p| p.cwd.as_str()).collect();
    assert!(cwds.contains(&"/home/dev/project") && cwds.contains(&"/home/dev/other"), "{cwds:?}");
    // Newest activity first by default.
    let ms: Vec<f64> = all.sessions.iter().map(|s| s.modified_ms.unwrap_or(0.0)).collect();
    assert!(ms.windows(2).all(|w| w[0] >= w[1]), "{ms:?}");
    let big = all.sessions.iter().find(|s| s.path == env.compacted.display().to_string()).unwrap();
    assert_eq!(big.compaction_count, 3);
    assert!(big.message_count > 500 && big.tokens_at_leaf > 30_000.0, "{big:?}");
    assert_eq!(
        big.first_message.split_whitespace().take(4).collect::<Vec<_>>().join(" "),
        "Queue resolve timeout reducer"
    );
    // Filter by project.
    let q = ListingQuery { project: Some("/home/dev/other".into()), ..Default::default() };
    let other = lib_cmd::listing(&env.lib, &env.e.state, &q).unwrap();
    assert_eq!(other.sessions.len(), 1);
    assert_eq!(other.sessions[0].cwd, "/home/dev/other");
    // Filter by model (the models list feeds the filter).
    assert!(all.models.iter().any(|m| m == "openai/gpt-5"), "{:?}", all.models);
    let q = ListingQuery { model: Some("gpt-5".into()), ..Default::default() };
    let by_model = lib_cmd::listing(&env.lib, &env.e.state, &q).unwrap();
    assert_eq!(by_model.sessions.len(), 1);
    assert_eq!(by_model.sessions[0].cwd, "/home/dev/other");
    // Filter by date: only sessions active since April 2025.
    let q = ListingQuery { modified_since_ms: Some(1_743_465_600_000.0), ..Default::default() };
    assert_eq!(lib_cmd::listing(&env.lib, &env.e.state, &q).unwrap().sessions.len(), 1);
    // Sort by messages, descending and ascending.
    let q = ListingQuery { sort: SortKey::Messages, ..Default::default() };
    let counts: Vec<u32> =
        lib_cmd::listing(&env.lib, &env.e.state, &q).unwrap().sessions.iter().map(|s| s.message_count).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    let q = ListingQuery { sort: SortKey::Messages, ascending: true, ..Default::default() };
    let asc: Vec<u32> =
        lib_cmd::listing(&env.lib, &env.e.state, &q).unwrap().sessions.iter().map(|s| s.message_count).collect();
    assert!(asc.windows(2).all(|w| w[0] <= w[1]), "{asc:?}");
    // Opened sessions show up as recent, from the index.
    sessions::open(&env.e.state, &env.compacted, false).unwrap();
    let again = lib_cmd::listing(&env.lib, &env.e.state, &ListingQuery::default()).unwrap();
    assert_eq!(again.recent.first().map(|s| s.path.clone()), Some(env.compacted.display().to_string()));
}

/// The comm name and nice value of each thread of this process whose name starts with `prefix`
/// (Linux's /proc; a name is cut to 15 bytes).
#[cfg(target_os = "linux")]
fn threads_named(prefix: &str) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else { continue };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let comm = &stat[open + 1..close];
        // After the name: state, ppid, pgrp, session, tty, tpgid, flags, 4 fault counts, 4
        // times, priority, then nice.
        let nice: i32 = stat[close + 2..].split(' ').nth(16).and_then(|n| n.parse().ok()).unwrap();
        if comm.starts_with(prefix) {
            out.push((comm.to_string(), nice));
        }
    }
    out
}

/// The watcher's index passes run at background priority (on two cores, a first pass of a
/// 2.6 GB session at normal priority took a core from the open of the same file), while live
/// follow of the open session, on the events thread, keeps the caller's priority.
#[cfg(target_os = "linux")]
#[test]
fn the_index_pass_runs_at_background_priority_and_live_follow_does_not() {
    let env = lib_env();
    let caller = rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap();
    let watch = threads_named("arbor-library-w");
    assert!(!watch.is_empty(), "no watcher thread found");
    assert!(watch.iter().all(|(_, nice)| *nice >= 10), "the watcher runs above background priority: {watch:?}");
    let events = threads_named("arbor-library-e");
    assert!(!events.is_empty(), "no events thread found");
    assert!(
        events.iter().any(|(_, nice)| *nice == caller),
        "live follow lost the caller's priority {caller}: {events:?}"
    );
    drop(env);
}

/// A session that re-did 3 things after its compaction: it read a.rs and b.rs and ran
/// `cargo test` before the cut, and again after it.
fn redone_three_session(dir: &Path) -> PathBuf {
    let call = |id: &str, parent: &str, calls: &[(&str, &str)]| {
        let blocks: Vec<String> = calls
            .iter()
            .map(|(name, arg)| {
                let key = if *name == "bash" { "command" } else { "path" };
                format!(r#"{{"type":"toolCall","id":"t","name":"{name}","arguments":{{"{key}":"{arg}"}}}}"#)
            })
            .collect();
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-05-01T10:00:02.000Z","message":{{"role":"assistant","content":[{}],"provider":"p","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}},"stopReason":"toolUse","timestamp":1746093602000}}}}"#,
            blocks.join(",")
        )
    };
    let lines = [
        r#"{"type":"session","version":3,"id":"01960000-0000-7000-8000-0000000000f3","timestamp":"2025-05-01T10:00:00.000Z","cwd":"/home/dev/project"}"#.to_string(),
        r#"{"type":"message","id":"f1000001","parentId":null,"timestamp":"2025-05-01T10:00:01.000Z","message":{"role":"user","content":"fix it","timestamp":1746093601000}}"#.to_string(),
        call("f1000002", "f1000001", &[("read", "a.rs"), ("read", "b.rs"), ("read", "d.rs"), ("bash", "cargo test")]),
        r#"{"type":"message","id":"f1000003","parentId":"f1000002","timestamp":"2025-05-01T10:00:03.000Z","message":{"role":"user","content":"go on","timestamp":1746093603000}}"#.to_string(),
        r#"{"type":"compaction","id":"f1000004","parentId":"f1000003","timestamp":"2025-05-01T10:00:04.000Z","summary":"fixing it","firstKeptEntryId":"f1000003","tokensBefore":900}"#.to_string(),
        call("f1000005", "f1000004", &[("read", "a.rs"), ("read", "b.rs"), ("bash", "cargo test")]),
    ];
    // written beside the root, then moved in: the watcher sees the whole file at once
    let tmp = dir.parent().unwrap().join("redone.tmp");
    std::fs::write(&tmp, lines.join("\n") + "\n").unwrap();
    let p = dir.join("2025-05-01T10-00-00-000Z_redone.jsonl");
    std::fs::rename(&tmp, &p).unwrap();
    p
}

#[test]
fn the_listing_sorts_by_what_compactions_made_the_agent_redo() {
    let env = lib_env();
    let by_forgetting = |ascending: bool| {
        let q = ListingQuery { sort: SortKey::Forgetting, ascending, ..Default::default() };
        lib_cmd::listing(&env.lib, &env.e.state, &q).unwrap().sessions
    };
    // The repeated-compaction fixture re-read and re-ran 45 things over its 3 compactions
    // (summary-analysis's count); the demo's 3 compactions and the other sessions none.
    let rows = by_forgetting(false);
    assert_eq!(rows[0].path, env.compacted.display().to_string());
    assert_eq!((rows[0].forgetting, rows[0].forgetting_compactions), (Some(45), Some(3)));
    assert!(rows[1..].iter().all(|s| s.forgetting == Some(0)), "{rows:?}");
    let demo = rows.iter().find(|s| s.path.ends_with("_demo.jsonl")).unwrap();
    assert_eq!(demo.forgetting_compactions, Some(3));
    // A session that re-did 3 arrives while the app runs; then Pi appends a re-read of d.rs,
    // read before the cut: 4
    let proj = env.e.agent.join("sessions").join("--home-dev-project--");
    let redone = redone_three_session(&proj);
    let key = redone.display().to_string();
    let forgetting_of =
        |ascending| by_forgetting(ascending).into_iter().find(|s| s.path == key).and_then(|s| s.forgetting);
    wait_for(&env.events, "the new session", |_| forgetting_of(false) == Some(3));
    let order: Vec<Option<u32>> = by_forgetting(false).iter().map(|s| s.forgetting).collect();
    assert_eq!(order, [Some(45), Some(3), Some(0), Some(0), Some(0)]);
    let order: Vec<Option<u32>> = by_forgetting(true).iter().map(|s| s.forgetting).collect();
    assert_eq!(order, [Some(0), Some(0), Some(0), Some(3), Some(45)]);
    append_from_other_process(
        &redone,
        r#"{"type":"message","id":"f1000006","parentId":"f1000005","timestamp":"2025-05-01T10:00:06.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","arguments":{"path":"d.rs"}}],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"toolUse","timestamp":1746093606000}}"#,
    );
    wait_for(&env.events, "the appended re-read", |_| forgetting_of(false) == Some(4));
    let row = by_forgetting(false).into_iter().find(|s| s.path == key).unwrap();
    assert_eq!((row.forgetting, row.forgetting_compactions), (Some(4), Some(1)));
}

#[test]
fn search_badges_compacted_and_abandoned_and_opens_at_the_entry() {
    let env = lib_env();
    let hits = search(&env, PHRASE, None, vec![]);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let h = &hits[0];
    assert_eq!(h.entry_id, "a6771de3");
    assert_eq!(h.status, HitStatus::Compacted);
    assert_eq!(h.badge, "compacted");
    assert_eq!(h.session_path, env.compacted.display().to_string());
    assert!(h.snippet.contains('«') && h.snippet.to_lowercase().contains("queue"), "{}", h.snippet);
    // Within one session: the other sessions do not answer.
    let demo = env.compacted.with_file_name("2025-03-01T09-00-00-000Z_demo.jsonl");
    assert!(search(&env, PHRASE, Some(&demo), vec![]).is_empty());
    assert_eq!(search(&env, PHRASE, Some(&env.compacted), vec![]).len(), 1);
    // The demo has abandoned branches: a status filter returns only those, badged so.
    let abandoned = search(&env, "the", Some(&demo), vec![HitStatus::Abandoned]);
    assert!(!abandoned.is_empty());
    assert!(abandoned.iter().all(|h| h.status == HitStatus::Abandoned && h.badge == "abandoned branch"));
    let in_ctx = search(&env, "the", Some(&demo), vec![HitStatus::InContext]);
    assert!(!in_ctx.is_empty() && in_ctx.iter().all(|h| h.badge == "in context"));
    // Empty text: no hits, no error.
    assert!(search(&env, "   ", None, vec![]).is_empty());
    // One click opens the session at that entry: open, then reveal (unfolding its run).
    sessions::open(&env.e.state, &env.compacted, false).unwrap();
    let row = graph::reveal(&env.e.state, &h.entry_id).unwrap();
    let w = graph::window(&env.e.state, row, row + 1).unwrap();
    assert_eq!(w.rows[0].entry_id, "a6771de3");
    assert!(w.rows[0].marks.iter().any(|m| m == "beyondHorizon"), "a compacted entry is greyed: {:?}", w.rows[0].marks);
}

#[test]
fn live_follow_reloads_the_open_session_and_keeps_a_moved_leaf() {
    let env = lib_env();
    let opened = sessions::open(&env.e.state, &env.compacted, false).unwrap();
    let leaf = opened.leaf_id.clone().unwrap();
    let line = format!(
        r#"{{"type":"message","id":"fee1f011","parentId":"{leaf}","timestamp":"2025-03-01T10:00:00.000Z","message":{{"role":"user","content":"live follow: a zebra crossing","timestamp":1740823200000}}}}"#
    );
    append_from_other_process(&env.compacted, &line);
    let ev = wait_for(&env.events, "the open session to change", |e| {
        matches!(e, LibraryUiEvent::SessionChanged { open: Some(_), .. })
    });
    let LibraryUiEvent::SessionChanged { open: Some(o), change, new_entries, .. } = ev else { unreachable!() };
    assert_eq!(change, SessionChange::Appended);
    assert_eq!(new_entries, 1);
    assert_eq!(o.entry_count, opened.entry_count + 1);
    assert_eq!(o.leaf_id.as_deref(), Some("fee1f011"), "Arbor followed Pi's leaf");
    assert!(o.total_rows >= opened.total_rows);
    // The app state itself was refreshed (graph commands see the new entry).
    let now = sessions::describe(&env.e.state).unwrap();
    assert_eq!(now.entry_count, o.entry_count);
    graph::reveal(&env.e.state, "fee1f011").unwrap();
    // The index followed: the new text is searchable, in context.
    let hits = search(&env, "zebra crossing", Some(&env.compacted), vec![]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].status, HitStatus::InContext);

    // The user moved Arbor's leaf elsewhere: a later append by Pi does not steal it.
    let nav = navigate::continue_from(&env.e.state, "8dba6ca6").unwrap();
    let moved = nav.session.leaf_id.clone().unwrap();
    assert_ne!(moved, "fee1f011");
    let line2 = r#"{"type":"message","id":"fee1f012","parentId":"fee1f011","timestamp":"2025-03-01T10:00:05.000Z","message":{"role":"user","content":"second append","timestamp":1740823205000}}"#;
    append_from_other_process(&env.compacted, line2);
    let ev = wait_for(
        &env.events,
        "the second change",
        |e| matches!(e, LibraryUiEvent::SessionChanged { open: Some(o), .. } if o.entry_count == opened.entry_count + 2),
    );
    let LibraryUiEvent::SessionChanged { open: Some(o), .. } = ev else { unreachable!() };
    assert_eq!(o.leaf_id.as_deref(), Some(moved.as_str()), "the user's leaf is kept");
    assert_eq!(o.file_leaf_id.as_deref(), Some("fee1f012"));
    // Arbor's own append (a label) reloads the session itself: a reload for that append then has
    // nothing to do (no second redraw), unless the watcher got there first.
    let labelled =
        navigate::set_label(&env.e.state, "fee1f011", Some("seen"), 1_740_823_300_000, Some("1abe10f1")).unwrap();
    assert!(lib_state::reload_if_open(&env.e.state, &env.compacted, true).unwrap().is_none());
    wait_for(
        &env.events,
        "the label's change",
        |e| matches!(e, LibraryUiEvent::SessionChanged { path, .. } if path.ends_with(COMPACTED_FILE)),
    );
    assert_eq!(sessions::describe(&env.e.state).unwrap().entry_count, labelled.entry_count);
    // A change to a session that is not open reloads nothing but still reaches the UI (picker).
    let other = env
        .compacted
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("--home-dev-other--")
        .join("2025-04-02T10-00-00-000Z_other.jsonl");
    append_from_other_process(
        &other,
        r#"{"type":"message","id":"0a000002","parentId":"0a000001","timestamp":"2025-04-02T10:00:09.000Z","message":{"role":"user","content":"more","timestamp":1743588009000}}"#,
    );
    let ev = wait_for(
        &env.events,
        "the other session's change",
        |e| matches!(e, LibraryUiEvent::SessionChanged { path, .. } if path.ends_with("_other.jsonl")),
    );
    assert!(matches!(ev, LibraryUiEvent::SessionChanged { open: None, .. }));
}

#[test]
fn user_folders_are_indexed_followed_and_removable() {
    let env = lib_env();
    let extra = env.e.tmp.path().join("elsewhere");
    other_project_session(&extra.join("nested"));
    let roots = lib_cmd::add_root(&env.lib, &extra).unwrap();
    let canon = std::fs::canonicalize(&extra).unwrap();
    assert!(roots.iter().any(|r| r.user && Path::new(&r.path) == canon), "{roots:?}");
    wait_for(&env.events, "the pass over the new folder", |e| matches!(e, LibraryUiEvent::Synced { .. }));
    let all = lib_cmd::listing(&env.lib, &env.e.state, &ListingQuery::default()).unwrap();
    assert_eq!(all.sessions.len(), 5);
    assert!(all.roots.iter().any(|r| r.user));
    // Not a folder: a clear error, nothing added.
    let err = lib_cmd::add_root(&env.lib, &extra.join("missing")).unwrap_err();
    let ipc = arbor_app::error::IpcError::from(err);
    assert!(ipc.message.contains("not a folder"), "{}", ipc.message);
    let roots = lib_cmd::remove_root(&env.lib, &canon).unwrap();
    assert!(!roots.iter().any(|r| r.user), "{roots:?}");
}

#[test]
fn a_damaged_index_is_moved_aside_rebuilt_and_reported() {
    let e = env();
    std::fs::create_dir_all(&e.data).unwrap();
    let db = lib_state::db_path_for(&e.data);
    std::fs::write(&db, vec![b'x'; 8192]).unwrap();
    let sessions_root = e.agent.join("sessions");
    other_project_session(&sessions_root.join("p"));
    let lib = LibraryState::open(db.clone(), vec![sessions_root]);
    let st = lib.status();
    assert_eq!(st.notices.len(), 1, "{st:?}");
    assert!(st.notices[0].contains("moved") && st.notices[0].contains("rebuilt"), "{}", st.notices[0]);
    let aside: Vec<_> = std::fs::read_dir(&e.data)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "the damaged file is kept aside, not deleted");
    let l = lib_cmd::listing(&lib, &e.state, &ListingQuery::default()).unwrap();
    assert!(l.sessions.is_empty(), "fresh index, before the first pass");
    assert_eq!(l.status.notices.len(), 1, "the listing carries the notice to the UI");
}

#[test]
fn a_session_opened_from_outside_the_roots_is_indexed_and_followed() {
    let env = lib_env();
    let outside = env.e.tmp.path().join("downloads");
    std::fs::create_dir_all(&outside).unwrap();
    let file = outside.join("shared-by-a-colleague.jsonl");
    std::fs::copy(conformance("branch-simple-siblings.jsonl"), &file).unwrap();
    let opened = sessions::open(&env.e.state, &file, false).unwrap();
    assert!(!env.lib.under_roots(&file));
    // Not listed among the roots' sessions, but searchable within, and listed as recent.
    let word = "the";
    let hits = search(&env, word, Some(&file), vec![]);
    assert!(!hits.is_empty() && hits.iter().all(|h| h.session_path == file.display().to_string()));
    let l = lib_cmd::listing(&env.lib, &env.e.state, &ListingQuery::default()).unwrap();
    assert_eq!(l.sessions.len(), 4, "the main list shows the roots only");
    assert_eq!(l.recent.first().map(|s| s.path.clone()), Some(file.display().to_string()));
    // Live follow: the app's follower notices the append (no file watcher covers this folder).
    let mut st = lib_state::FollowState::default();
    lib_state::follow_tick(&env.lib, &env.e.state, &mut st);
    let leaf = opened.leaf_id.clone().unwrap();
    append_from_other_process(
        &file,
        &format!(
            r#"{{"type":"message","id":"feedface","parentId":"{leaf}","timestamp":"2025-03-01T11:00:00.000Z","message":{{"role":"user","content":"appended outside","timestamp":1740826800000}}}}"#
        ),
    );
    lib_state::follow_tick(&env.lib, &env.e.state, &mut st);
    let ev = wait_for(&env.events, "the outside session to change", |e| {
        matches!(e, LibraryUiEvent::SessionChanged { open: Some(_), .. })
    });
    let LibraryUiEvent::SessionChanged { open: Some(o), .. } = ev else { unreachable!() };
    assert_eq!(o.entry_count, opened.entry_count + 1);
    assert_eq!(o.leaf_id.as_deref(), Some("feedface"));
}

#[test]
fn a_replaced_open_session_is_read_again_and_reported_as_reindexed() {
    let env = lib_env();
    let demo = env.compacted.with_file_name("2025-03-01T09-00-00-000Z_demo.jsonl");
    let opened = sessions::open(&env.e.state, &demo, false).unwrap();
    graph::unfold_all(&env.e.state, true).unwrap();
    // A sync tool replaces the file (new inode; Arbor itself never rewrites a session).
    let tmp = demo.with_extension("tmp");
    std::fs::copy(conformance("branch-simple-siblings.jsonl"), &tmp).unwrap();
    std::fs::rename(&tmp, &demo).unwrap();
    let ev = wait_for(&env.events, "the replaced session", |e| {
        matches!(e, LibraryUiEvent::SessionChanged { open: Some(_), .. })
    });
    let LibraryUiEvent::SessionChanged { open: Some(o), change, .. } = ev else { unreachable!() };
    assert_eq!(change, SessionChange::Reindexed);
    assert_ne!(o.entry_count, opened.entry_count);
    let fresh = session_engine::Session::open(&demo).unwrap();
    assert_eq!(o.entry_count as usize, fresh.len());
    assert_eq!(o.leaf_id.as_deref(), fresh.file_leaf().map(|l| fresh.id(l)));
    // The graph is usable at once (folds started over).
    graph::window(&env.e.state, 0, o.total_rows).unwrap();
}

#[test]
fn queued_changes_of_one_file_are_handled_once() {
    use library::{Change, LibraryEvent, NewEntry};
    let ne = |id: &str| NewEntry {
        entry_id: id.into(),
        parent_id: None,
        entry_type: "message".into(),
        status: library::EntryStatus::InContext,
    };
    let ch = |p: &str, c: Change, ids: &[&str]| LibraryEvent::SessionChanged {
        path: PathBuf::from(p),
        session_id: None,
        change: c,
        new_entries: ids.iter().map(|i| ne(i)).collect(),
    };
    let out = lib_state::coalesce(vec![
        ch("/a", Change::Appended, &["1"]),
        ch("/b", Change::New, &["x"]),
        LibraryEvent::Indexing { done: 1, total: 2, full_text: false },
        ch("/a", Change::Reindexed, &["2"]),
        ch("/a", Change::Appended, &["3"]),
    ]);
    assert_eq!(out.len(), 3);
    assert!(matches!(&out[0], LibraryEvent::SessionChanged { path, .. } if path == Path::new("/b")));
    assert!(matches!(&out[1], LibraryEvent::Indexing { .. }));
    match &out[2] {
        LibraryEvent::SessionChanged { path, change, new_entries, .. } => {
            assert_eq!(path, Path::new("/a"));
            assert_eq!(*change, Change::Reindexed, "the strongest change wins");
            assert_eq!(new_entries.iter().map(|e| e.entry_id.as_str()).collect::<Vec<_>>(), ["1", "2", "3"]);
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn on_a_later_start_the_picker_answers_from_the_index_before_any_pass() {
    let env = lib_env();
    env.lib.stop_watcher();
    // A second app start over the same data dir: no watcher, no pass yet.
    let again = LibraryState::open(env.lib.db_path.clone(), env.lib.pi_roots.clone());
    assert!(again.status().notices.is_empty(), "a healthy index is reused silently");
    let l = lib_cmd::listing(&again, &env.e.state, &ListingQuery::default()).unwrap();
    assert_eq!(l.sessions.len(), 4, "the index is a cache that survives restarts");
    assert_eq!(search(&env, PHRASE, None, vec![]).len(), 1);
}
