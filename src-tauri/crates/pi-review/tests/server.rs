//! The server in-process: modes, greeting, decisions, validation, limits, time, concurrency,
//! stale sockets, with a [`Reviewer`] closure in place of the app's dialog.
#![cfg(unix)]
use pi_review::protocol::*;
use pi_review::reviewer::{DecideCommand, EditCommand};
use pi_review::server::{Client, LogRecord, Logger, ServeError, Server, ServerConfig};
use pi_review::{Decision, Review, Reviewer, Verdict};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../session-engine/tests/fixtures/real-pi")
        .join(format!("{name}.jsonl"))
}

struct Fixture {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    session: PathBuf,
    log: Arc<Mutex<Vec<LogRecord>>>,
}

fn fixture_dir() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("rpc-manual.jsonl");
    std::fs::copy(fixture("rpc-manual"), &session).unwrap();
    Fixture { socket: dir.path().join("arbor").join("review.sock"), session, _dir: dir, log: Arc::default() }
}

fn logger(f: &Fixture) -> Logger {
    let log = f.log.clone();
    Arc::new(move |r: &LogRecord, _: Option<&ReviewRequest>| log.lock().unwrap().push(r.clone()))
}

/// The log once it holds `n` records matching `pred`: the server logs a request after it has
/// answered it, so a test that reads the log right after the answer must wait for that line.
fn log_when(f: &Fixture, n: usize, pred: impl Fn(&LogRecord) -> bool) -> Vec<LogRecord> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let log = f.log.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if log.iter().filter(|r| pred(r)).count() >= n || std::time::Instant::now() > deadline {
            return log;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn serve(f: &Fixture, reviewer: impl Reviewer + 'static, timeout: Duration) -> Server {
    let mut c = ServerConfig::new(f.socket.clone());
    c.timeout = timeout;
    c.server_name = "test".into();
    Server::bind(c, Arc::new(reviewer), logger(f)).unwrap()
}

fn request(f: &Fixture, id: &str, round: u32, first_kept: &str) -> ReviewRequest {
    ReviewRequest {
        protocol: PROTOCOL_VERSION,
        request_id: id.into(),
        round,
        kind: ReviewKind::Compaction,
        extension: Versioned { version: Some("0.1.0".into()) },
        pi: Versioned { version: Some("0.73.1".into()) },
        session: SessionRef {
            file: Some(f.session.display().to_string()),
            id: Some("sid".into()),
            cwd: None,
            leaf_id: Some("8d25023b".into()),
        },
        model: ModelRef::default(),
        wait_ms: None,
        compaction: Some(CompactionFacts {
            first_kept_entry_id: first_kept.into(),
            tokens_before: Some(4000.0),
            messages_to_summarize: 7,
            branch_entries: 57,
            ..Default::default()
        }),
        branch: None,
        draft: Draft {
            summary: "Pi's draft".into(),
            first_kept_entry_id: Some(first_kept.into()),
            tokens_before: Some(4000.0),
            details: None,
        },
    }
}

fn ask(f: &Fixture, req: &ReviewRequest) -> Answer {
    let mut c = Client::connect(&f.socket, Duration::from_secs(10)).unwrap();
    c.send(req).unwrap();
    match c.receive().unwrap() {
        Some(ServerMessage::Answer(a)) => a,
        other => panic!("{other:?}"),
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_socket_is_private_and_greets() {
    let f = fixture_dir();
    let server = serve(&f, |_: &Review| Decision::Accept.into(), Duration::from_secs(7));
    assert_eq!(mode(f.socket.parent().unwrap()), 0o700);
    assert_eq!(mode(&f.socket), 0o600);
    let c = Client::connect(&f.socket, Duration::from_secs(5)).unwrap();
    assert_eq!(
        c.hello,
        ServerMessage::Hello(Hello {
            arbor: "review".into(),
            protocol: 1,
            server: "test".into(),
            policy: Policy::Review,
            timeout_ms: 7000,
            max_line_bytes: MAX_LINE_BYTES
        })
    );
    drop(c);
    server.shutdown();
    assert!(!f.socket.exists(), "shutdown removes the socket");
}

#[test]
fn each_decision_reaches_the_client_and_the_log() {
    let f = fixture_dir();
    let choice = Arc::new(Mutex::new(Decision::Accept));
    let c2 = choice.clone();
    let _server = serve(
        &f,
        move |_: &Review| Verdict { decision: c2.lock().unwrap().clone(), note: Some("n".into()) },
        Duration::from_secs(10),
    );
    for (d, tag) in [
        (Decision::Accept, DecisionTag::Accept),
        (Decision::Edit("better".into()), DecisionTag::Edit),
        (Decision::Cancel, DecisionTag::Cancel),
        (Decision::LetPiDecide, DecisionTag::PiDecides),
    ] {
        *choice.lock().unwrap() = d.clone();
        let a = ask(&f, &request(&f, "r1", 1, "5ea325e4"));
        assert_eq!(a.decision, tag);
        assert_eq!(a.request_id, "r1");
        assert_eq!(a.note.as_deref(), Some("n"));
        assert_eq!(a.summary.as_deref(), if let Decision::Edit(s) = &d { Some(s.as_str()) } else { None });
    }
    let log = log_when(&f, 4, |_| true);
    assert_eq!(log.len(), 4);
    let r = &log[1];
    assert_eq!((r.event, r.action, r.kind), ("review", Some(DecisionTag::Edit), Some("compaction")));
    assert_eq!(r.session.as_deref(), Some(f.session.to_str().unwrap()));
    assert_eq!(r.entries.as_ref().map(|e| (e.branch, e.to_summarize)), Some((Some(57), 7)));
}

#[test]
fn a_moved_cut_is_checked_on_the_session_file_and_takes_a_second_round() {
    let f = fixture_dir();
    let target = Arc::new(Mutex::new(String::new()));
    let t2 = target.clone();
    let _server = serve(
        &f,
        move |r: &Review| {
            if r.request.round == 1 {
                Decision::MoveCut(t2.lock().unwrap().clone()).into()
            } else {
                Decision::Accept.into()
            }
        },
        Duration::from_secs(10),
    );
    // A valid cut: answered as is; round 2 of the same request is reviewed again.
    *target.lock().unwrap() = "90847218".into();
    let mut c = Client::connect(&f.socket, Duration::from_secs(10)).unwrap();
    c.send(&request(&f, "m1", 1, "5ea325e4")).unwrap();
    let Some(ServerMessage::Answer(a)) = c.receive().unwrap() else { panic!() };
    assert_eq!((a.decision, a.first_kept_entry_id.as_deref()), (DecisionTag::MoveCut, Some("90847218")));
    let mut r2 = request(&f, "m1", 2, "90847218");
    r2.compaction.as_mut().unwrap().moved_from = Some("5ea325e4".into());
    c.send(&r2).unwrap();
    let Some(ServerMessage::Answer(a)) = c.receive().unwrap() else { panic!() };
    assert_eq!(a.decision, DecisionTag::Accept);
    assert_eq!(c.receive().unwrap(), None, "the connection ends after the last answer");

    // Invalid cuts: Pi's draft, with the reason and the nearest valid points.
    for (bad, why) in [
        ("86dfb0db", "tool result"),
        ("69176e28", "before the previous compaction"),
        ("nope0000", "no entry has this id"),
    ] {
        *target.lock().unwrap() = bad.into();
        let a = ask(&f, &request(&f, "m2", 1, "5ea325e4"));
        assert_eq!(a.decision, DecisionTag::Accept, "{bad}");
        let note = a.note.unwrap();
        assert!(
            note.contains(why) && note.contains("nearest valid cut points") && note.ends_with("; Pi's draft is used"),
            "{note}"
        );
    }
    // A round out of order is refused.
    let mut c = Client::connect(&f.socket, Duration::from_secs(10)).unwrap();
    c.send(&request(&f, "m3", 2, "5ea325e4")).unwrap();
    let Some(ServerMessage::Error(e)) = c.receive().unwrap() else { panic!() };
    assert_eq!(e.code, ErrorCode::BadRequest);
}

#[test]
fn bad_lines_get_an_error_answer_with_a_clear_message() {
    let f = fixture_dir();
    let _server = serve(&f, |_: &Review| Decision::Accept.into(), Duration::from_secs(10));
    let mut v2 = serde_json::to_value(ClientMessage::Review(request(&f, "v", 1, "5ea325e4"))).unwrap();
    v2["protocol"] = 2.into();
    let cases: Vec<(Vec<u8>, ErrorCode, &str)> = vec![
        (
            serde_json::to_vec(&v2).unwrap(),
            ErrorCode::ProtocolVersion,
            "this Arbor speaks review protocol 1 and the client speaks 2",
        ),
        (b"{oops".to_vec(), ErrorCode::BadRequest, "not JSON"),
        (
            br#"{"type":"review","protocol":1,"requestId":"x","round":1,"kind":"compaction","draft":{"summary":"s"}}"#
                .to_vec(),
            ErrorCode::BadRequest,
            "needs its `compaction` facts",
        ),
        (vec![b'x'; MAX_LINE_BYTES + 1], ErrorCode::TooLarge, "longer than 4194304 bytes"),
    ];
    for (line, code, text) in cases {
        let mut c = Client::connect(&f.socket, Duration::from_secs(10)).unwrap();
        c.send_raw(&line).unwrap();
        match c.receive().unwrap() {
            Some(ServerMessage::Error(e)) => {
                assert_eq!(e.code, code);
                assert!(e.message.contains(text), "{}", e.message);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.receive().unwrap(), None, "closed after an error");
    }
    assert_eq!(log_when(&f, 4, |r| r.event == "refused").iter().filter(|r| r.event == "refused").count(), 4);
}

#[test]
fn past_the_time_limit_pis_draft_is_used_and_the_reviewer_is_told() {
    let f = fixture_dir();
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let s2 = saw_cancel.clone();
    let _server = serve(
        &f,
        move |r: &Review| {
            while !r.is_cancelled() {
                std::thread::sleep(Duration::from_millis(10));
            }
            s2.store(true, Ordering::SeqCst);
            Decision::Cancel.into()
        },
        Duration::from_millis(300),
    );
    let t0 = Instant::now();
    let a = ask(&f, &request(&f, "t", 1, "5ea325e4"));
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert_eq!(a.decision, DecisionTag::Accept);
    assert_eq!(a.note.as_deref(), Some("no decision within 0.3 s; Pi's draft is used"));
    assert!(log_when(&f, 1, |r| r.timed_out)[0].timed_out);
    let t1 = Instant::now();
    while !saw_cancel.load(Ordering::SeqCst) && t1.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(saw_cancel.load(Ordering::SeqCst), "the reviewer is told its time is up");
}

#[test]
fn a_client_that_leaves_cancels_its_review() {
    let f = fixture_dir();
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let s2 = saw_cancel.clone();
    let _server = serve(
        &f,
        move |r: &Review| {
            while !r.is_cancelled() {
                std::thread::sleep(Duration::from_millis(10));
            }
            s2.store(true, Ordering::SeqCst);
            Decision::Accept.into()
        },
        Duration::from_secs(30),
    );
    let mut c = Client::connect(&f.socket, Duration::from_secs(10)).unwrap();
    c.send(&request(&f, "g", 1, "5ea325e4")).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    drop(c);
    let t0 = Instant::now();
    while !saw_cancel.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(saw_cancel.load(Ordering::SeqCst));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(log_when(&f, 1, |r| r.event == "gone").last().map(|r| r.event), Some("gone"));
}

#[test]
fn two_clients_are_reviewed_at_the_same_time() {
    let f = fixture_dir();
    let _server = serve(
        &f,
        |_: &Review| {
            std::thread::sleep(Duration::from_millis(600));
            Decision::Accept.into()
        },
        Duration::from_secs(30),
    );
    let t0 = Instant::now();
    let f = Arc::new(f);
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let f = f.clone();
            std::thread::spawn(move || ask(&f, &request(&f, &format!("c{i}"), 1, "5ea325e4")))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().decision, DecisionTag::Accept);
    }
    assert!(t0.elapsed() < Duration::from_millis(1100), "{:?}", t0.elapsed());
}

#[test]
fn watch_accepts_at_once_without_asking() {
    let f = fixture_dir();
    let mut c = ServerConfig::new(f.socket.clone());
    c.policy = Policy::Watch;
    let _server =
        Server::bind(c, Arc::new(|_: &Review| -> Verdict { panic!("watch never asks the reviewer") }), logger(&f))
            .unwrap();
    let t0 = Instant::now();
    assert_eq!(ask(&f, &request(&f, "w", 1, "5ea325e4")).decision, DecisionTag::Accept);
    assert!(t0.elapsed() < Duration::from_millis(500));
}

#[test]
fn stale_sockets_are_replaced_and_live_ones_refused() {
    let f = fixture_dir();
    std::fs::create_dir_all(f.socket.parent().unwrap()).unwrap();
    // A socket file whose server is gone: bound, then the listener dropped without unlinking.
    drop(std::os::unix::net::UnixListener::bind(&f.socket).unwrap());
    assert!(f.socket.exists());
    let server = serve(&f, |_: &Review| Decision::Accept.into(), Duration::from_secs(5));
    assert!(
        server.notes().iter().any(|n| n.contains("left by a reviewer that is no longer running")),
        "{:?}",
        server.notes()
    );
    let second =
        Server::bind(ServerConfig::new(f.socket.clone()), Arc::new(pi_review::reviewer::AcceptAll), logger(&f));
    assert!(matches!(second, Err(ServeError::AlreadyRunning(_))));
    drop(server);
    std::fs::write(&f.socket, b"not a socket").unwrap();
    let third = Server::bind(ServerConfig::new(f.socket.clone()), Arc::new(pi_review::reviewer::AcceptAll), logger(&f));
    assert!(matches!(third, Err(ServeError::NotASocket(_))), "a file that is not a socket is never removed");
    assert_eq!(std::fs::read(&f.socket).unwrap(), b"not a socket");
}

#[test]
fn a_folder_open_to_others_is_closed_and_one_of_another_user_refused() {
    let f = fixture_dir();
    let dir = f.socket.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = serve(&f, |_: &Review| Decision::Accept.into(), Duration::from_secs(5));
    assert_eq!(mode(&dir), 0o700);
    assert!(server.notes().iter().any(|n| n.contains("was open to other users (mode 755)")));
    drop(server);
    if rustix_uid() == 0 {
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        let e = Server::bind(ServerConfig::new(f.socket.clone()), Arc::new(pi_review::reviewer::AcceptAll), logger(&f))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("belongs to uid 65534, not to you (uid 0)"), "{e}");
    }
}

fn rustix_uid() -> u32 {
    pi_review::paths::uid()
}

#[test]
fn edit_and_decide_commands() {
    let f = fixture_dir();
    let review = |cmd: Box<dyn Reviewer>, req: ReviewRequest, limit: Duration| {
        cmd.review(&Review::new(req, Instant::now() + limit, Arc::new(AtomicBool::new(false))))
    };
    let req = request(&f, "e", 1, "5ea325e4");
    let edit = |c: &str| Box::new(EditCommand { command: c.into() }) as Box<dyn Reviewer>;
    let s = Duration::from_secs(10);
    assert_eq!(review(edit("tr a-z A-Z"), req.clone(), s).decision, Decision::Edit("PI'S DRAFT".into()));
    assert_eq!(
        review(edit("echo \"$ARBOR_KIND $ARBOR_FIRST_KEPT_ENTRY_ID $ARBOR_ROUND\""), req.clone(), s).decision,
        Decision::Edit("compaction 5ea325e4 1".into())
    );
    assert_eq!(review(edit("cat"), req.clone(), s).decision, Decision::Accept);
    let v = review(edit("true"), req.clone(), s);
    assert_eq!(
        (v.decision, v.note.as_deref()),
        (Decision::Accept, Some("edit command printed nothing; Pi's draft is used"))
    );
    let v = review(edit("echo x; exit 3"), req.clone(), s);
    assert_eq!(v.decision, Decision::Accept);
    assert!(v.note.unwrap().contains("exit status: 3"));
    let t0 = Instant::now();
    let v = review(edit("sleep 20 & sleep 20; echo late"), req.clone(), Duration::from_millis(300));
    assert!(t0.elapsed() < Duration::from_secs(3), "the whole group is killed at the limit");
    assert_eq!(v.note.as_deref(), Some("edit command: killed at the review time limit; Pi's draft is used"));
    let t0 = Instant::now();
    assert_eq!(review(edit("(sleep 20 &) ; echo quick"), req.clone(), s).decision, Decision::Edit("quick".into()));
    assert!(t0.elapsed() < Duration::from_secs(3), "a background child holding stdout does not hold the review");

    let decide = |c: &str| Box::new(DecideCommand { command: c.into() }) as Box<dyn Reviewer>;
    assert_eq!(
        review(decide(r#"echo '{"decision":"move_cut","firstKeptEntryId":"90847218"}'"#), req.clone(), s).decision,
        Decision::MoveCut("90847218".into())
    );
    assert_eq!(
        review(decide(r#"grep -q '"requestId":"e"' && echo '{"decision":"cancel"}'"#), req.clone(), s).decision,
        Decision::Cancel
    );
    let v = review(decide("echo maybe"), req.clone(), s);
    assert_eq!(v.decision, Decision::Accept);
    assert!(v.note.unwrap().starts_with("decide command printed no decision"));
    let v = review(decide(r#"echo '{"decision":"edit"}'"#), req, s);
    assert_eq!(v.note.as_deref(), Some("decide command chose edit without a summary; Pi's draft is used"));
}
