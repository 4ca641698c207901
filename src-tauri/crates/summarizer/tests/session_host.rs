//! The operations on a session someone holds (`SessionHost`): the held session is free while the
//! model answers, what is appended is read back into it (it then equals a fresh open of the file),
//! and an append by another program between the plan and the write is checked again: a
//! compaction that would hang on a stale parent is refused with nothing written, one whose plan
//! still holds is written. Real files, a loopback model whose handler plays the other program.
mod support;
use serde_json::Value as J;
use session_engine::context::CompactionSettings;
use session_engine::Session;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use summarizer::run::{Backend, RunOptions};
use summarizer::session_ops::{compact_on, continue_on, ContinueOptions, FileHost, SessionHost};
use summarizer::{ApiKey, CancellationToken, Client, ProviderConfig, Wire};
use support::loopback::{ok_answer, Fmt, Server};

fn settings(keep: f64) -> CompactionSettings {
    CompactionSettings { enabled: true, reserve_tokens: 16384.0, keep_recent_tokens: keep }
}

fn opts() -> ContinueOptions {
    ContinueOptions {
        settings: settings(2000.0),
        context_window: 200_000,
        max_tokens: 4096,
        run: RunOptions { record_extras: false, ..RunOptions::default() },
    }
}

fn lines(p: &Path) -> Vec<J> {
    std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn model(server: &Server) -> Backend {
    Backend::Model(support::anthropic_client(server))
}

/// What Pi would append while Arbor waits for the model: a label on `parent`, as its child.
fn pi_appends(file: &Path, id: &str, parent: &str) {
    use std::io::Write;
    let v = session_engine::entries::label(id, Some(parent), "2025-03-01T10:00:00.000Z", parent, Some("pi was here"));
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(format!("{}\n", session_engine::entries::line(&v)).as_bytes()).unwrap();
}

/// Entries (id, parent) in file order and the file's leaf.
fn shape(session: &Session) -> (Vec<(String, Option<String>)>, Option<String>) {
    let ids = (0..session.len())
        .map(|i| (session.id(i).to_string(), session.parent_of(i).map(|p| session.id(p).to_string())))
        .collect();
    (ids, session.file_leaf().map(|l| session.id(l).to_string()))
}

/// A host that records whether its session was free whenever the model was asked.
struct Probe {
    path: PathBuf,
    session: Mutex<Session>,
}

impl SessionHost for Probe {
    fn path(&self) -> &Path {
        &self.path
    }
    fn with<T>(&self, f: impl FnOnce(&mut Session) -> summarizer::Result<T>) -> summarizer::Result<T> {
        f(&mut self.session.lock().unwrap())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_held_session_is_free_while_the_model_answers_and_ends_equal_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let host = Arc::new(Probe { path: file.clone(), session: Mutex::new(Session::open(&file).unwrap()) });
    let n0 = host.session.lock().unwrap().len();
    let (h2, busy) = (host.clone(), Arc::new(AtomicBool::new(false)));
    let b2 = busy.clone();
    let server = Server::start(move |r, _| {
        // Held across the request, this lock would be taken; the app's clicks would wait.
        match h2.session.try_lock() {
            Ok(s) => assert_eq!(s.len(), n0 + 1, "the user message is in the held session before the request"),
            Err(_) => b2.store(true, Ordering::SeqCst),
        }
        ok_answer(Fmt::Anthropic, r, "Noted.")
    })
    .await;
    let done = continue_on(
        &*host,
        None,
        "Go on",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    assert!(!busy.load(Ordering::SeqCst), "the session was locked while the model answered");
    assert_eq!(server.count(), 1);
    let held = host.session.lock().unwrap();
    let fresh = Session::open(&file).unwrap();
    assert_eq!(shape(&held), shape(&fresh), "the held session has exactly the file's entries");
    assert_eq!(held.file_len(), fresh.file_len());
    assert_eq!(shape(&fresh).1.as_deref(), Some(done.assistant_entry_id.as_str()));
}

#[tokio::test]
async fn a_pi_append_during_the_reply_is_read_and_the_reply_keeps_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let n0 = lines(&file).len();
    let f2 = file.clone();
    let server = Server::start(move |r, _| {
        // Pi continues from Arbor's user message while the model answers.
        let user = lines(&f2).last().unwrap()["id"].as_str().unwrap().to_string();
        pi_appends(&f2, "feed0001", &user);
        ok_answer(Fmt::Anthropic, r, "Noted.")
    })
    .await;
    let host = FileHost::open(&file).unwrap();
    let done = continue_on(
        &host,
        None,
        "Go on",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    let after = lines(&file);
    assert_eq!(after.len(), n0 + 3, "user, Pi's label, assistant");
    assert_eq!(after[n0 + 1]["id"], "feed0001");
    assert_eq!(
        after[n0 + 2]["parentId"],
        done.user_entry_id.as_str(),
        "the reply answers the request built at the user message"
    );
    let held = host.into_session();
    assert_eq!(
        shape(&held),
        shape(&Session::open(&file).unwrap()),
        "Pi's line and the reply were both read into the held session"
    );
}

#[tokio::test]
async fn a_compaction_whose_parent_went_stale_meanwhile_is_refused_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-tool-chain");
    let leaf = lines(&file).last().unwrap()["id"].as_str().unwrap().to_string();
    let (f2, l2) = (file.clone(), leaf.clone());
    let server = Server::start(move |r, _| {
        // Pi continues from the leaf the compaction was planned on.
        if !lines(&f2).iter().any(|l| l["id"] == "feed0002") {
            pi_appends(&f2, "feed0002", &l2);
        }
        ok_answer(Fmt::Anthropic, r, "## Goal\nsummary")
    })
    .await;
    let host = FileHost::open(&file).unwrap();
    let before = std::fs::read(&file).unwrap();
    let e = compact_on(
        &host,
        None,
        &settings(2000.0),
        &model(&server),
        &RunOptions::default(),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap_err();
    assert!(
        e.to_string().contains("changed while the summary was being written")
            && e.to_string().contains("nothing was written"),
        "{e}"
    );
    let after = std::fs::read(&file).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let added = lines(&file).len() - before.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count();
    assert_eq!(added, 1, "only Pi's line");
    assert!(lines(&file).iter().all(|l| l["type"] != "compaction"));
    // The held session read Pi's line; the next compaction plans on it and is written.
    let done = compact_on(
        &host,
        None,
        &settings(2000.0),
        &model(&server),
        &RunOptions::default(),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    let last = lines(&file).pop().unwrap();
    assert_eq!(last["id"], done.entry_id.as_str());
    assert_eq!(last["parentId"], "feed0002");
    assert_eq!(shape(&host.into_session()), shape(&Session::open(&file).unwrap()));
}

#[tokio::test]
async fn a_compaction_off_the_file_leaf_is_checked_again_and_written_when_its_plan_holds() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-tool-chain");
    let all = lines(&file);
    let leaf = all.last().unwrap()["id"].as_str().unwrap().to_string();
    // Arbor's leaf moved back a few entries (the user navigated): a compaction there makes a branch.
    let inner = all[all.len() - 5]["id"].as_str().unwrap().to_string();
    let (f2, l2) = (file.clone(), leaf.clone());
    let server = Server::start(move |r, _| {
        if !lines(&f2).iter().any(|l| l["id"] == "feed0003") {
            pi_appends(&f2, "feed0003", &l2);
        }
        ok_answer(Fmt::Anthropic, r, "## Goal\nsummary")
    })
    .await;
    let host = FileHost::open(&file).unwrap();
    let n0 = all.len();
    let done = compact_on(
        &host,
        Some(&inner),
        &settings(500.0),
        &model(&server),
        &RunOptions::default(),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    let after = lines(&file);
    assert_eq!(after.len(), n0 + 2, "Pi's line, then the compaction");
    assert_eq!(after[n0]["id"], "feed0003");
    assert_eq!(after[n0 + 1]["type"], "compaction");
    assert_eq!(
        after[n0 + 1]["parentId"],
        inner.as_str(),
        "the path to the compacted entry did not change, so its plan held"
    );
    assert_eq!(after[n0 + 1]["id"], done.entry_id.as_str());
    assert_eq!(shape(&host.into_session()), shape(&Session::open(&file).unwrap()));
}

/// A host that stops holding the file after its first steps (the app opened another session).
struct Swapped {
    path: PathBuf,
    session: Mutex<Session>,
    calls: Mutex<usize>,
    allowed: usize,
}

impl SessionHost for Swapped {
    fn path(&self) -> &Path {
        &self.path
    }
    fn with<T>(&self, f: impl FnOnce(&mut Session) -> summarizer::Result<T>) -> summarizer::Result<T> {
        let mut n = self.calls.lock().unwrap();
        *n += 1;
        if *n > self.allowed {
            return Err(summarizer::Error::Session(
                "another session was opened while this ran, so nothing more was written".into(),
            ));
        }
        f(&mut self.session.lock().unwrap())
    }
}

#[tokio::test]
async fn a_host_that_lets_go_between_steps_stops_the_send_with_nothing_more_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let n0 = lines(&file).len();
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "Noted.")).await;
    // One step: the user message and the request; the reply's step is refused.
    let host = Swapped {
        path: file.clone(),
        session: Mutex::new(Session::open(&file).unwrap()),
        calls: Mutex::new(0),
        allowed: 1,
    };
    let e = continue_on(
        &host,
        None,
        "Go on",
        &support::anthropic_client(&server),
        &Backend::Offline,
        &opts(),
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("another session was opened"), "{e}");
    assert_eq!(server.count(), 1);
    let after = lines(&file);
    assert_eq!(after.len(), n0 + 1, "the user message only (as Pi after a failed request)");
    assert_eq!(after[n0]["message"]["role"], "user");
}

/// The app runs these in Tauri async commands, which need `Send` futures.
#[test]
fn host_operations_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let dir = tempfile::tempdir().unwrap();
    let file = support::copy_case(dir.path(), "basic-simple-chat");
    let host = FileHost::open(&file).unwrap();
    let (backend, cancel) = (Backend::Offline, CancellationToken::new());
    let c = Client::new(ProviderConfig::new(Wire::Anthropic, "m", Some(ApiKey::new("k")))).unwrap();
    assert_send(&compact_on(&host, None, &settings(2000.0), &backend, &RunOptions::default(), &cancel, None));
    assert_send(&continue_on(&host, None, "x", &c, &backend, &opts(), &cancel, None));
    assert_send(&summarizer::session_ops::navigate_on(
        &host,
        None,
        "x",
        true,
        0.0,
        None,
        &backend,
        &RunOptions::default(),
        &cancel,
        None,
    ));
}
