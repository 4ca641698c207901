//! The app as Pi's reviewer, through its command layer and a real Unix socket: a client speaks
//! the extension's protocol (docs/PI-REVIEW-PROTOCOL.md) about a session the real Pi agent
//! wrote, and the person's choices made through the commands come back as Pi's answers. The
//! real Pi with the extension against the window is driven by tests/e2e/e2e-review.mjs.
use arbor_app::commands::review::{cut_preview, decide, review_view, save_prefs};
use arbor_app::state::review::ReviewState;
use arbor_app::view::review::{ReviewChoice, ReviewEvent, ReviewPolicy, ReviewPrefs};
use serde_json::{json, Value};
use session_engine::{Kind, Session};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

fn recorded() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src-tauri/crates/session-engine/tests/fixtures/real-pi/print-autocompact.jsonl")
}

/// A copy of Pi's recorded session cut just before its last compaction: Pi's leaf then, the
/// compaction Pi wrote (its draft and cut) for the request.
struct Case {
    file: PathBuf,
    leaf_id: String,
    first_kept: String,
    summary: String,
    written: String,
}

fn case(e: &crate::support::Env) -> Case {
    let text = std::fs::read_to_string(recorded()).unwrap();
    let session = Session::open(&recorded()).unwrap();
    let last = (0..session.len()).rev().find(|&i| session.kind(i) == Kind::Compaction).unwrap();
    let compaction_id = session.id(last).to_string();
    let leaf_id = session.id(session.parent_of(last).unwrap()).to_string();
    let v: Value =
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|v| v["id"] == compaction_id).unwrap();
    let lines: Vec<&str> = text.lines().take_while(|l| !l.contains(&format!("\"id\":\"{compaction_id}\""))).collect();
    let file = e.dir.join("pi.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    Case {
        written: std::fs::read_to_string(&file).unwrap(),
        file,
        leaf_id,
        first_kept: v["firstKeptEntryId"].as_str().unwrap().to_string(),
        summary: v["summary"].as_str().unwrap().to_string(),
    }
}

fn request(c: &Case, round: u32, first_kept: &str) -> Value {
    json!({
        "type": "review", "protocol": 1, "requestId": "r-1", "round": round, "kind": "compaction",
        "extension": {"version": "test"}, "pi": {"version": "0.73.1"},
        "session": {"file": c.file.display().to_string(), "id": "s", "cwd": "/tmp", "leafId": c.leaf_id},
        "model": {"provider": "loopback", "id": "scripted-13k"},
        "waitMs": 60000,
        "compaction": {"firstKeptEntryId": first_kept, "tokensBefore": 11500, "isSplitTurn": true,
            "messagesToSummarize": 9, "turnPrefixMessages": 2, "branchEntries": 40, "hasPreviousSummary": true,
            "settings": {"enabled": true, "reserveTokens": 2000, "keepRecentTokens": 3500}},
        "draft": {"summary": c.summary, "firstKeptEntryId": first_kept, "tokensBefore": 11500}
    })
}

/// Pi's side of one connection: the greeting, then each request line and its answer.
struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Client {
    fn connect(socket: &Path) -> (Client, Value) {
        let stream = UnixStream::connect(socket).expect("Arbor listens");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut c = Client { reader: BufReader::new(stream.try_clone().unwrap()), writer: stream };
        let hello = c.line();
        (c, hello)
    }
    fn line(&mut self) -> Value {
        let mut l = String::new();
        self.reader.read_line(&mut l).unwrap();
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"))
    }
    fn ask(&mut self, req: &Value) -> Value {
        writeln!(self.writer, "{req}").unwrap();
        self.line()
    }
}

fn subscribed(review: &ReviewState) -> mpsc::Receiver<ReviewEvent> {
    let (tx, rx) = mpsc::channel();
    review.subscribe(Arc::new(move |e| tx.send(e).is_ok()));
    rx
}

fn next_request(rx: &mpsc::Receiver<ReviewEvent>) -> u32 {
    loop {
        match rx.recv_timeout(Duration::from_secs(20)).expect("the dialog is asked to open") {
            ReviewEvent::Request { prompt } => return prompt.review_id,
            _ => continue,
        }
    }
}

fn prefs(policy: ReviewPolicy, timeout_secs: u32) -> ReviewPrefs {
    ReviewPrefs { policy, timeout_secs, artifact_ledger: false }
}

#[test]
fn an_edit_made_in_the_dialog_is_what_pi_is_told_to_write() {
    let e = crate::support::env();
    let c = case(&e);
    let review = ReviewState::with_socket(e.tmp.path().join("run/review.sock"));
    let status = save_prefs(&e.state, &review, prefs(ReviewPolicy::Review, 60)).unwrap();
    assert!(status.listening, "{status:?}");
    let rx = subscribed(&review);
    let (mut pi, hello) = Client::connect(&review.socket());
    assert_eq!(hello["policy"], "review");
    assert_eq!(hello["timeoutMs"], 60_000);
    let req = request(&c, 1, &c.first_kept);
    let answer = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| pi.ask(&req));
        let id = next_request(&rx);
        // The dialog: Pi's session opened, the draft in sections, its drop alarm and retention.
        let v = review_view(&e.state, &review, id).unwrap();
        assert!(v.opened.is_some(), "Pi's session was opened for the review");
        assert!(
            v.sections.iter().any(|s| s.title == "Goal"),
            "{:?}",
            v.sections.iter().map(|s| &s.title).collect::<Vec<_>>()
        );
        let check = v.check.as_ref().expect("the draft was analysed");
        assert_eq!(check.dropped.len(), 1, "the recorded third summary lost one constraint: {:?}", check.dropped);
        assert!(check.retention.total > 0 && check.retention.mentioned <= check.retention.total);
        assert!(!v.span_entry_ids.is_empty() && !v.span_entry_ids.contains(&c.first_kept));
        assert!(v.kept_tokens.unwrap() > 0.0);
        assert!(v.valid_cuts.contains(&c.first_kept) || v.is_split_turn, "Pi's own cut is a valid cut point");
        // A tool result is no place to cut: refused, with the nearest valid points named.
        let session = Session::open(&c.file).unwrap();
        let tool_result = (0..session.len()).rev().find(|&i| session.role(i) == Some("toolResult")).unwrap();
        let bad = cut_preview(&e.state, &review, id, session.id(tool_result)).unwrap();
        assert!(
            !bad.valid && bad.reason.as_deref().unwrap().contains("tool result") && !bad.nearest.is_empty(),
            "{bad:?}"
        );
        let refused = decide(
            &e.state,
            &review,
            id,
            ReviewChoice::MoveCut { first_kept_entry_id: session.id(tool_result).into() },
        );
        assert!(refused.is_err(), "an invalid cut is never sent to Pi");
        let edited = format!("{}\n- Arbor: keep the constraint", c.summary);
        decide(&e.state, &review, id, ReviewChoice::Edit { summary: edited.clone() }).unwrap();
        (waiting.join().unwrap(), edited)
    });
    let (answer, edited) = answer;
    assert_eq!(answer["type"], "answer");
    assert_eq!(answer["decision"], "edit");
    assert_eq!(answer["summary"], edited);
    // Arbor wrote nothing to Pi's file: Pi writes the compaction itself.
    assert_eq!(std::fs::read_to_string(&c.file).unwrap(), c.written);
    assert!(matches!(rx.recv_timeout(Duration::from_secs(5)), Ok(ReviewEvent::Ended { .. })));
}

#[test]
fn a_moved_cut_is_checked_and_sent_then_the_next_round_is_reviewed() {
    let e = crate::support::env();
    let c = case(&e);
    let review = ReviewState::with_socket(e.tmp.path().join("review.sock"));
    save_prefs(&e.state, &review, prefs(ReviewPolicy::Review, 60)).unwrap();
    let rx = subscribed(&review);
    let (mut pi, _) = Client::connect(&review.socket());
    let req = request(&c, 1, &c.first_kept);
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| {
            let first = pi.ask(&req);
            let moved = first["firstKeptEntryId"].as_str().unwrap().to_string();
            let mut again = request(&c, 2, &moved);
            again["compaction"]["movedFrom"] = json!(c.first_kept);
            (first, pi.ask(&again))
        });
        let id = next_request(&rx);
        let v = review_view(&e.state, &review, id).unwrap();
        let other = v.valid_cuts.iter().rev().find(|id| **id != c.first_kept).unwrap().clone();
        let p = cut_preview(&e.state, &review, id, &other).unwrap();
        assert!(p.valid, "{p:?}");
        decide(&e.state, &review, id, ReviewChoice::MoveCut { first_kept_entry_id: other.clone() }).unwrap();
        let id2 = next_request(&rx);
        assert_ne!(id, id2);
        let v2 = review_view(&e.state, &review, id2).unwrap();
        assert_eq!(v2.first_kept_entry_id.as_deref(), Some(other.as_str()));
        assert_eq!(v2.moved_from.as_deref(), Some(c.first_kept.as_str()));
        decide(&e.state, &review, id2, ReviewChoice::Accept).unwrap();
        let (first, second) = waiting.join().unwrap();
        assert_eq!(first["decision"], "move_cut");
        assert_eq!(first["firstKeptEntryId"], other);
        assert_eq!(second["decision"], "accept");
        assert_eq!(second["round"], 2);
    });
}

#[test]
fn past_the_time_limit_pi_keeps_its_draft_and_the_dialog_is_told() {
    let e = crate::support::env();
    let c = case(&e);
    let review = ReviewState::with_socket(e.tmp.path().join("review.sock"));
    save_prefs(&e.state, &review, prefs(ReviewPolicy::Review, 1)).unwrap();
    let rx = subscribed(&review);
    let (mut pi, _) = Client::connect(&review.socket());
    let answer = pi.ask(&request(&c, 1, &c.first_kept));
    assert_eq!(answer["decision"], "accept");
    assert!(answer["note"].as_str().unwrap().contains("no decision within"), "{answer}");
    let id = next_request(&rx);
    let ended = loop {
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            ReviewEvent::Ended { review_id, reason } if review_id == id => break reason,
            _ => continue,
        }
    };
    assert!(ended.contains("time limit"), "{ended}");
    assert!(
        decide(&e.state, &review, id, ReviewChoice::Accept).is_err(),
        "a late choice is refused, not lost silently"
    );
}

#[test]
fn watch_answers_at_once_and_off_listens_to_nothing() {
    let e = crate::support::env();
    let c = case(&e);
    let review = ReviewState::with_socket(e.tmp.path().join("review.sock"));
    save_prefs(&e.state, &review, prefs(ReviewPolicy::Watch, 300)).unwrap();
    let rx = subscribed(&review);
    let (mut pi, hello) = Client::connect(&review.socket());
    assert_eq!(hello["policy"], "watch");
    let answer = pi.ask(&request(&c, 1, &c.first_kept));
    assert_eq!(answer["decision"], "accept");
    match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
        ReviewEvent::Watched { kind, session_file, .. } => {
            assert_eq!(kind, "compaction");
            assert_eq!(session_file.as_deref(), Some(c.file.to_str().unwrap()));
        }
        other => panic!("expected a watched compaction, got {other:?}"),
    }
    // The policy is remembered for the next start.
    assert_eq!(arbor_app::commands::review::load_prefs(&e.state).policy, ReviewPolicy::Watch);
    let status = save_prefs(&e.state, &review, prefs(ReviewPolicy::Off, 300)).unwrap();
    assert!(!status.listening);
    assert!(UnixStream::connect(review.socket()).is_err(), "off: Pi finds no reviewer and goes on at once");
}

#[test]
fn a_second_reviewer_is_named_not_replaced() {
    let e = crate::support::env();
    let socket = e.tmp.path().join("review.sock");
    let first = ReviewState::with_socket(socket.clone());
    assert!(first.apply(prefs(ReviewPolicy::Review, 60)).listening);
    let second = ReviewState::with_socket(socket);
    let status = second.apply(prefs(ReviewPolicy::Review, 60));
    assert!(!status.listening);
    assert!(status.problem.as_deref().unwrap().contains("already listening"), "{status:?}");
}

#[test]
fn arbor_drafts_the_same_span_with_its_own_summarizer_and_pi_is_sent_that() {
    let e = crate::support::env();
    let c = case(&e);
    let review = ReviewState::with_socket(e.tmp.path().join("review.sock"));
    save_prefs(&e.state, &review, prefs(ReviewPolicy::Review, 60)).unwrap();
    let rx = subscribed(&review);
    let (mut pi, _) = Client::connect(&review.socket());
    let req = request(&c, 1, &c.first_kept);
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| pi.ask(&req));
        let id = next_request(&rx);
        review_view(&e.state, &review, id).unwrap();
        // The Model tab's default is the offline summarizer: no key, no network.
        let draft = tauri::async_runtime::block_on(arbor_app::commands::review::arbor_draft(
            &e.state, &e.st, &review, id, None,
        ))
        .unwrap();
        assert!(draft.contains("## Goal") && draft != c.summary, "{draft}");
        decide(&e.state, &review, id, ReviewChoice::Edit { summary: draft.clone() }).unwrap();
        let answer = waiting.join().unwrap();
        assert_eq!(answer["decision"], "edit");
        assert_eq!(answer["summary"], draft);
    });
    assert_eq!(std::fs::read_to_string(&c.file).unwrap(), c.written, "Arbor's draft wrote nothing");
}

#[test]
fn a_socket_left_by_a_killed_arbor_is_replaced_and_said() {
    let e = crate::support::env();
    let socket = e.tmp.path().join("review.sock");
    // A socket file nobody listens on, as a killed Arbor leaves it.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(socket.exists());
    let review = ReviewState::with_socket(socket.clone());
    let status = review.apply(prefs(ReviewPolicy::Review, 60));
    assert!(status.listening, "{status:?}");
    assert!(status.notes.iter().any(|n| n.contains("no longer running")), "{:?}", status.notes);
    assert!(UnixStream::connect(&socket).is_ok());
}

#[test]
fn the_ledger_box_sends_pi_its_draft_with_the_ledger_and_the_dialog_shows_what_it_answers() {
    use arbor_app::commands::review::decide_with_ledger;
    let e = crate::support::env();
    let c = case(&e);
    let review = ReviewState::with_socket(e.tmp.path().join("run/review.sock"));
    let mut p = prefs(ReviewPolicy::Review, 60);
    p.artifact_ledger = true;
    assert!(save_prefs(&e.state, &review, p).unwrap().prefs.artifact_ledger, "the preference is kept");
    assert!(arbor_app::commands::review::load_prefs(&e.state).artifact_ledger, "and saved in Arbor's state");
    let rx = subscribed(&review);
    let (mut pi, _) = Client::connect(&review.socket());
    let req = request(&c, 1, &c.first_kept);
    let (answer, ledger) = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| pi.ask(&req));
        let id = next_request(&rx);
        let v = review_view(&e.state, &review, id).unwrap();
        let l = v.ledger.clone().expect("the draft's ledger is shown");
        assert!(!l.lines.is_empty(), "Pi's recorded draft leaves artifacts out");
        for line in &l.lines {
            assert!(l.text.contains(&format!("\n{line}\n")), "{line} is in the text with the ledger");
        }
        assert!(l.text.starts_with(c.summary.split("\n\n<read-files>").next().unwrap()), "the draft, then the ledger");
        assert!(l.tokens_added > 0.0);
        assert!(l.with.artifact.answered > l.without.artifact.answered, "{l:?}");
        assert_eq!(l.with.artifact.probes, l.without.artifact.probes, "the same probes, the same span");
        assert_eq!(l.with.recall.probes, l.without.recall.probes);
        // Accept with the box checked: Pi is told to write its draft with the ledger.
        decide_with_ledger(&e.state, &review, id, ReviewChoice::Accept, true).unwrap();
        (waiting.join().unwrap(), l)
    });
    assert_eq!(answer["decision"], "edit", "{answer}");
    assert_eq!(answer["summary"], ledger.text);
    assert_eq!(std::fs::read_to_string(&c.file).unwrap(), c.written, "Pi writes it, not Arbor");

    // The box unchecked: Pi's own draft, accepted as it is. (A final answer ends a connection.)
    let (mut pi, _) = Client::connect(&review.socket());
    let req = request(&c, 1, &c.first_kept);
    let answer = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| pi.ask(&req));
        let id = next_request(&rx);
        decide_with_ledger(&e.state, &review, id, ReviewChoice::Accept, false).unwrap();
        waiting.join().unwrap()
    });
    assert_eq!(answer["decision"], "accept", "{answer}");

    // An empty edit is refused with the box checked too: never a ledger alone.
    let (mut pi, _) = Client::connect(&review.socket());
    let req = request(&c, 1, &c.first_kept);
    let answer = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| pi.ask(&req));
        let id = next_request(&rx);
        let empty = ReviewChoice::Edit { summary: " \n".into() };
        assert!(decide_with_ledger(&e.state, &review, id, empty, true).is_err());
        decide_with_ledger(&e.state, &review, id, ReviewChoice::Accept, false).unwrap();
        waiting.join().unwrap()
    });
    assert_eq!(answer["decision"], "accept", "{answer}");

    // An edit gets the ledger of the edited text: what the edit names is not listed again.
    let (mut pi, _) = Client::connect(&review.socket());
    let req = request(&c, 1, &c.first_kept);
    let named = ledger.lines[0].clone();
    let edited = format!("{}\n\nAlso: {named}", c.summary.split("\n\n<read-files>").next().unwrap());
    let answer = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| pi.ask(&req));
        let id = next_request(&rx);
        decide_with_ledger(&e.state, &review, id, ReviewChoice::Edit { summary: edited.clone() }, true).unwrap();
        waiting.join().unwrap()
    });
    assert_eq!(answer["decision"], "edit");
    let sent = answer["summary"].as_str().unwrap();
    assert!(sent.starts_with(&edited), "{sent}");
    assert_eq!(sent.matches(named.as_str()).count(), 1, "{named} is named once, by the edit: {sent}");
    for l in &ledger.lines[1..] {
        assert!(sent.contains(l.as_str()), "the rest of the ledger is sent: {l}");
    }
}
