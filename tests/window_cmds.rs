//! Command-level tests of what the window shows beside the graph, without a window: the context
//! window of the session's model at a node (override > Pi's model table > default, remembered in
//! Arbor's state file), the one-time keyring notice, cancelling / resuming the library's index
//! pass, and whether the window is composited. Included by tests/app.rs.

use crate::support::{env, Env};
use arbor_app::commands::keys;
use arbor_app::commands::library as lib_cmd;
use arbor_app::commands::{model_window, sessions};
use arbor_app::state::library::{self as lib_state, LibraryState, RawHandler};
use arbor_app::state::state_file::ArborStateFile;
use arbor_app::view::keys::KeyringStatus;
use arbor_app::view::library::{LibraryUiEvent, ListingQuery};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// model_change anthropic/claude-sonnet-4-5, a user message, then two answers on two branches:
/// openai/gpt-5 (a5) and an unknown model (a6); a7 answers after a5 with no provider.
const MODELS_SESSION: &str = concat!(
    "{\"type\":\"session\",\"version\":3,\"id\":\"01960000-0000-7000-8000-0000000000aa\",\"timestamp\":\"2025-04-02T10:00:00.000Z\",\"cwd\":\"/w\"}\n",
    "{\"type\":\"model_change\",\"id\":\"a0000001\",\"parentId\":null,\"timestamp\":\"2025-04-02T10:00:00.500Z\",\"provider\":\"anthropic\",\"modelId\":\"claude-sonnet-4-5\"}\n",
    "{\"type\":\"message\",\"id\":\"a0000002\",\"parentId\":\"a0000001\",\"timestamp\":\"2025-04-02T10:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1743588001000}}\n",
    "{\"type\":\"message\",\"id\":\"a0000005\",\"parentId\":\"a0000002\",\"timestamp\":\"2025-04-02T10:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"provider\":\"openai\",\"model\":\"gpt-5\",\"timestamp\":1743588002000}}\n",
    "{\"type\":\"message\",\"id\":\"a0000006\",\"parentId\":\"a0000002\",\"timestamp\":\"2025-04-02T10:00:03.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"b\"}],\"provider\":\"local\",\"model\":\"mystery-model-1\",\"timestamp\":1743588003000}}\n",
    "{\"type\":\"message\",\"id\":\"a0000007\",\"parentId\":\"a0000005\",\"timestamp\":\"2025-04-02T10:00:04.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"c\"}],\"model\":\"claude-opus-4-5\",\"timestamp\":1743588004000}}\n",
);

/// Where [`models_env`] writes `MODELS_SESSION`: in Pi's sessions folder of `e`'s agent dir.
fn models_file(e: &Env) -> PathBuf {
    e.agent.join("sessions").join("--w--").join("2025-04-02T10-00-00-000Z_models.jsonl")
}

/// An [`Env`] with `MODELS_SESSION` open.
fn models_env() -> Env {
    let e = env();
    let f = models_file(&e);
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(&f, MODELS_SESSION).unwrap();
    sessions::open(&e.state, &f, false).unwrap();
    e
}

#[test]
fn context_window_comes_from_the_models_table_at_the_selected_node() {
    let e = models_env();
    let state = e.state.clone();
    // at the model_change: Pi's table
    let w = model_window::context_window(&state, Some("a0000002")).unwrap();
    assert_eq!((w.tokens, w.source.as_str()), (200_000, "table"));
    assert_eq!((w.provider.as_deref(), w.model.as_deref()), (Some("anthropic"), Some("claude-sonnet-4-5")));
    assert_eq!(w.label, "claude-sonnet-4-5 · 200k from Pi's model table");
    // the assistant's own provider/model decides after it
    let w = model_window::context_window(&state, Some("a0000005")).unwrap();
    assert_eq!((w.tokens, w.model.as_deref()), (400_000, Some("gpt-5")));
    // a model without a provider is found by its id
    let w = model_window::context_window(&state, Some("a0000007")).unwrap();
    assert_eq!((w.tokens, w.source.as_str(), w.provider.as_deref()), (200_000, "table", None));
    // an unknown model: the default, said so
    let w = model_window::context_window(&state, Some("a0000006")).unwrap();
    assert_eq!((w.tokens, w.source.as_str()), (200_000, "default"));
    assert_eq!(w.label, "mystery-model-1: unknown model, 200k default");
    assert!(model_window::context_window(&state, Some("nope")).is_err());
}

/// Pi's own `models.json` in its agent folder defines the window of a custom model; an edit is
/// seen on the next click, and a file Pi would ignore is ignored with a sentence saying so.
#[test]
fn pis_models_json_gives_a_custom_models_window_and_is_followed_live() {
    let e = models_env();
    let state = e.state.clone();
    let models = e.agent.join("models.json");
    let write = |window: u32| {
        std::fs::write(
            &models,
            format!("{{\n  // the user's local server\n  \"providers\": {{\"local\": {{\"baseUrl\": \"http://127.0.0.1:9/v1\", \"api\": \"openai-completions\", \"apiKey\": \"x\", \"models\": [{{\"id\": \"mystery-model-1\", \"contextWindow\": {window}}},]}}}}\n}}"),
        )
        .unwrap()
    };
    write(13_000);
    let sel = arbor_app::commands::graph::select(&state, "a0000006", 2_000, true).unwrap();
    assert_eq!((sel.window.tokens, sel.window.source.as_str()), (13_000, "piModels"));
    assert_eq!(sel.window.label, "mystery-model-1 · 13k from Pi's models.json (local)");
    assert_eq!(
        (sel.context.context_window, sel.context.threshold),
        (13_000, 11_000),
        "Pi compacts above 11,000 tokens"
    );
    // The other branch's built-in model is untouched.
    assert_eq!(model_window::context_window(&state, Some("a0000005")).unwrap().tokens, 400_000);
    // Edited while the session is open: the next click sees it.
    write(32_768);
    assert_eq!(model_window::context_window(&state, Some("a0000006")).unwrap().tokens, 32_768);
    // Broken: Pi ignores the whole file, so does Arbor, and it says what to do.
    std::fs::write(&models, "{ \"providers\": ").unwrap();
    let w = model_window::context_window(&state, Some("a0000006")).unwrap();
    assert_eq!((w.tokens, w.source.as_str()), (200_000, "default"));
    let warning = w.warning.unwrap_or_default();
    assert!(warning.contains("models.json") && warning.contains("fix the file"), "{warning}");
}

/// A click's one round trip: the entry's detail, the window of the model at that node, and the
/// context view computed with that window (gpt-5's 400k at a5, the default at a6).
#[test]
fn select_entry_answers_detail_window_and_context_at_once() {
    let e = models_env();
    let state = e.state.clone();
    for (id, window, messages) in [("a0000005", 400_000, 2), ("a0000006", 200_000, 2), ("a0000002", 200_000, 1)] {
        let sel = arbor_app::commands::graph::select(&state, id, 16_384, true).unwrap();
        assert_eq!(sel.detail.id, id);
        assert_eq!(sel.window, model_window::context_window(&state, Some(id)).unwrap());
        assert_eq!(sel.window.tokens, window, "{id}");
        assert_eq!(sel.context.leaf_id.as_deref(), Some(id));
        assert_eq!(
            (sel.context.context_window, sel.context.threshold),
            (window, window - 16_384),
            "{id}: the context uses the node's window"
        );
        assert_eq!(sel.context.messages.len(), messages, "{id}");
    }
    let e = arbor_app::commands::graph::select(&state, "nope", 16_384, true).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
}

#[test]
fn an_override_is_remembered_per_model_and_can_be_cleared() {
    let e = models_env();
    let state = e.state.clone();
    let w = model_window::set_context_window(&state, Some("a0000006"), Some(32_768)).unwrap();
    assert_eq!(
        (w.tokens, w.source.as_str(), w.label.as_str()),
        (32_768, "override", "mystery-model-1 · 32.8k set by you")
    );
    // another model is not affected
    assert_eq!(model_window::context_window(&state, Some("a0000005")).unwrap().source, "table");
    // remembered in Arbor's state file, so a later start (a new AppState) sees it
    let saved = ArborStateFile::load(&state.state_file());
    assert_eq!(saved.context_windows.get("local/mystery-model-1"), Some(&32_768));
    let again = e.restart();
    sessions::open(&again, &models_file(&e), false).unwrap();
    assert_eq!(model_window::context_window(&again, Some("a0000006")).unwrap().tokens, 32_768);
    // an override on a model of the table keeps the table's number alongside
    let w = model_window::set_context_window(&again, Some("a0000002"), Some(24_000)).unwrap();
    assert_eq!((w.tokens, w.table_tokens), (24_000, Some(200_000)));
    // cleared: back to the table / the default
    let w = model_window::set_context_window(&again, Some("a0000002"), None).unwrap();
    assert_eq!((w.tokens, w.source.as_str()), (200_000, "table"));
    // nonsense is refused and nothing is written
    let before = std::fs::read(again.state_file()).unwrap();
    assert!(model_window::set_context_window(&again, Some("a0000006"), Some(5)).is_err());
    assert_eq!(std::fs::read(again.state_file()).unwrap(), before);
}

#[test]
fn the_keyring_notice_is_shown_once_until_dismissed() {
    let e = env();
    let (app, st) = (&e.state, &e.st);
    let down = KeyringStatus {
        ok: false,
        backend: "secret-service".into(),
        message: "no Secret Service on the session bus".into(),
    };
    *st.keyring.lock().unwrap() = Some(down.clone());
    let n = keys::keyring_notice(st, app);
    assert!(n.show);
    assert_eq!(n.status, down);
    let n = keys::dismiss_notice(st, app).unwrap();
    assert!(!n.show && !n.status.ok, "dismissed, the details are still there");
    // remembered across starts
    assert!(!keys::keyring_notice(st, &e.restart()).show);
    // a working keyring never shows it
    let fresh = env();
    *fresh.st.keyring.lock().unwrap() =
        Some(KeyringStatus { ok: true, backend: "secret-service".into(), message: "ok".into() });
    assert!(!keys::keyring_notice(&fresh.st, &fresh.state).show);
}

/// A session of 30 user/assistant turns.
fn small_session(i: usize) -> String {
    let mut s = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"01960000-0000-7000-8000-{i:012}\",\"timestamp\":\"2025-04-02T10:00:00.000Z\",\"cwd\":\"/home/dev/project\"}}\n"
    );
    let mut parent = "null".to_string();
    for k in 0..60 {
        let id = format!("{:08x}", k + 1);
        let msg = if k % 2 == 0 {
            format!("{{\"role\":\"user\",\"content\":\"question {k} of session {i} about the tokenizer and the parser\",\"timestamp\":1743588001000}}")
        } else {
            format!("{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"answer {k}: we changed the lexer\"}}],\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"timestamp\":1743588001000}}")
        };
        s.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2025-04-02T10:{:02}:{:02}.000Z\",\"message\":{msg}}}\n",
            k / 60,
            k % 60
        ));
        parent = format!("\"{id}\"");
    }
    s
}

fn wait_for(rx: &Receiver<LibraryUiEvent>, what: &str, f: impl Fn(&LibraryUiEvent) -> bool) -> LibraryUiEvent {
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        if let Ok(ev) = rx.recv_timeout(Duration::from_millis(200)) {
            if f(&ev) {
                return ev;
            }
        }
    }
    panic!("timed out waiting for {what}");
}

#[test]
fn cancelling_the_index_pass_keeps_what_was_indexed_and_resume_indexes_the_rest() {
    const N: usize = 300;
    let e = env();
    let proj = e.agent.join("sessions").join("--home-dev-project--");
    std::fs::create_dir_all(&proj).unwrap();
    for i in 0..N {
        std::fs::write(proj.join(format!("2025-03-01T09-00-00-000Z_s{i:03}.jsonl")), small_session(i)).unwrap();
    }
    let app = e.state.clone();
    let lib = Arc::new(LibraryState::open(lib_state::db_path_for(&e.data), vec![e.agent.join("sessions")]));
    let (tx, events) = channel();
    let tx = Mutex::new(tx);
    lib.subscribe(Arc::new(move |ev| tx.lock().unwrap().send(ev).is_ok()));
    let (l2, a2) = (lib.clone(), app.clone());
    let handler: RawHandler = Arc::new(move |ev| l2.handle_event(&a2, ev));
    lib.start_watcher(handler.clone()).unwrap();
    wait_for(&events, "progress", |e| matches!(e, LibraryUiEvent::Indexing { .. }));
    lib.cancel_indexing().unwrap();
    let ev = wait_for(&events, "the end of the pass", |e| {
        matches!(e, LibraryUiEvent::Cancelled { .. } | LibraryUiEvent::Synced { .. })
    });
    let LibraryUiEvent::Cancelled { files, indexed, full_text_left } = ev else { panic!("not cancelled: {ev:?}") };
    assert_eq!(files as usize, N);
    assert!(
        (indexed as usize) < N || full_text_left > 0,
        "the pass stopped early: {indexed} indexed, {full_text_left} without full text"
    );
    let st = lib.status();
    assert!(st.cancelled && st.synced && st.full_text_left == full_text_left, "{st:?}");
    // what was indexed is listed; nothing more arrives while cancelled
    let listed = lib_cmd::listing(&lib, &app, &ListingQuery::default()).unwrap().sessions.len();
    assert_eq!(listed, indexed as usize);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(lib_cmd::listing(&lib, &app, &ListingQuery::default()).unwrap().sessions.len(), listed);
    // resume: progress again, then the whole index
    let st = lib.resume_indexing().unwrap();
    assert!(!st.synced && !st.cancelled);
    let ev = wait_for(&events, "the resumed pass", |e| {
        matches!(e, LibraryUiEvent::Synced { .. } | LibraryUiEvent::Cancelled { .. })
    });
    assert!(matches!(ev, LibraryUiEvent::Synced { files, .. } if files as usize == N), "{ev:?}");
    assert_eq!(lib_cmd::listing(&lib, &app, &ListingQuery::default()).unwrap().sessions.len(), N);
    let st = lib.status();
    assert!(st.synced && !st.cancelled && st.files as usize == N, "{st:?}");
    lib.stop_watcher();
    // without a watcher there is nothing to cancel: said in a sentence
    assert!(lib.cancel_indexing().is_err());
}

/// A session the real `pi` program wrote for its custom 13k model, opened with the agent folder
/// of that recording (Pi's models.json and settings.json): every window and threshold the app
/// shows is Pi's (11,000 = 13,000 − 2,000: where Pi compacted), the drop alarm rings only on the
/// compaction that lost a constraint, and the summaries name Pi and that model.
#[test]
fn a_session_the_real_pi_wrote_gets_pis_window_threshold_and_quiet_alarms() {
    use arbor_app::commands::{budgets, summary, timeline};
    use arbor_app::view::budgets::SettingsScope;
    let e = env();
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/session-engine/tests/fixtures/real-pi");
    let agent = &e.agent;
    let f = agent.join("sessions").join("--tmp-ledger--").join("print-autocompact.jsonl");
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::copy(real.join("print-autocompact.jsonl"), &f).unwrap();
    for name in ["models.json", "settings.json"] {
        std::fs::copy(real.join("agent").join(name), agent.join(name)).unwrap();
    }
    let state = e.state.clone();
    let opened = sessions::open(&state, &f, false).unwrap();
    let leaf = opened.leaf_id.clone().unwrap();

    let b = budgets::load(&state, SettingsScope::Global).unwrap().budgets;
    assert_eq!((b.reserve_tokens, b.keep_recent_tokens), (2_000, 3_500));
    let sel = arbor_app::commands::graph::select(&state, &leaf, b.reserve_tokens, b.enabled).unwrap();
    assert_eq!((sel.window.tokens, sel.window.source.as_str()), (13_000, "piModels"), "{}", sel.window.label);
    assert_eq!(sel.context.threshold, 11_000);
    let tl = timeline::timeline(
        &state,
        &arbor_app::state::timeline::TimelineCache::new(),
        None,
        sel.window.tokens,
        b.reserve_tokens,
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!((tl.head.context_window, tl.head.threshold), (13_000, 11_000));

    let ids: Vec<String> = state
        .with_open(|o| {
            Ok((0..o.session.len())
                .filter(|&i| o.session.kind(i) == session_engine::Kind::Compaction)
                .map(|i| o.session.id(i).to_string())
                .collect())
        })
        .unwrap();
    let marks = summary::markers(&state, &ids, Duration::from_secs(60)).unwrap();
    assert_eq!(marks.iter().map(|m| m.dropped).collect::<Vec<_>>(), [0, 0, 1], "only the third summary lost something");
    let v = summary::view(&state, &ids[2]).unwrap();
    assert_eq!((v.author.as_str(), v.author_detail.as_str()), ("pi", "loopback/scripted-13k"));
    assert!(v.check.dropped[0].text.contains("ledger/legacy.py"), "{:?}", v.check.dropped);
}

/// WebKit's OpenGL compositing is turned off only on a machine with no GPU render node, and
/// never against the user's own setting of the variable, whatever its value.
#[test]
fn compositing_is_turned_off_only_without_a_gpu_and_without_a_users_setting() {
    use arbor_app::renderer::{compositing_off, has_render_node};
    use std::ffi::OsStr;
    assert!(compositing_off(None, false));
    assert!(!compositing_off(None, true));
    assert!(!compositing_off(Some(OsStr::new("0")), false));
    assert!(!compositing_off(Some(OsStr::new("1")), true));

    let dir = tempfile::tempdir().unwrap();
    let dri = dir.path().join("dri");
    assert!(!has_render_node(&dri), "no /dev/dri at all: no GPU");
    std::fs::create_dir(&dri).unwrap();
    std::fs::write(dri.join("card0"), "").unwrap();
    assert!(!has_render_node(&dri), "a display card without a render node does not run OpenGL for WebKit");
    std::fs::write(dri.join("renderD128"), "").unwrap();
    assert!(has_render_node(&dri));
}
