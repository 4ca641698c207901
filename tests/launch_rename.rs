//! Opening a file from the desktop and renaming a session (the app part), without a window: the
//! command line's file and a second launch's file (`commands::launch`), the `.deb`'s association
//! with `.jsonl` files (tauri.conf.json and the desktop template it names), and renaming the open
//! session (`commands::rename`), whose result Pi 0.73.1 itself loads with the new name.

use arbor_app::commands::launch::file_arg;
use arbor_app::commands::{navigate, rename, sessions};
use arbor_app::error::{ErrorKind, IpcError};
use arbor_app::state::launch::LaunchState;
use arbor_app::view::session::LaunchRequest;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[path = "../src-tauri/crates/cli/tests/support/pi.rs"]
mod pi;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("src-tauri/crates/session-engine/tests/fixtures/conformance").join(name)
}

mod support;
use support::{env, Env};

/// A copy of a conformance fixture in the env's folder.
fn copy_fixture(e: &Env, name: &str) -> PathBuf {
    let p = e.dir.join(format!("2025-03-01T09-00-00-000Z_{name}"));
    std::fs::copy(fixture(name), &p).unwrap();
    p
}

fn last_line(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap();
    serde_json::from_str(text.trim_end().lines().last().unwrap()).unwrap()
}

// ---- the command line ------------------------------------------------------------------------

#[test]
fn the_file_argument_is_the_first_non_option_resolved_against_the_cwd() {
    let cwd = Path::new("/home/u/work");
    let f = |argv: &[&str]| file_arg(argv.iter(), cwd);
    assert_eq!(f(&["arbor"]), None, "no argument: the picker as before");
    assert_eq!(f(&["arbor", "s.jsonl"]), Some(PathBuf::from("/home/u/work/s.jsonl")), "relative to the launching cwd");
    assert_eq!(f(&["arbor", "../x/s.jsonl"]), Some(PathBuf::from("/home/u/work/../x/s.jsonl")));
    assert_eq!(f(&["arbor", "/abs/s.jsonl"]), Some(PathBuf::from("/abs/s.jsonl")));
    assert_eq!(
        f(&["/usr/bin/arbor", "--automation", "-v", "a.jsonl", "b.jsonl"]),
        Some(PathBuf::from("/home/u/work/a.jsonl")),
        "options skipped, the first file wins"
    );
    assert_eq!(
        f(&["arbor", "--", "-odd name.jsonl"]),
        Some(PathBuf::from("/home/u/work/-odd name.jsonl")),
        "after -- a dash is a name"
    );
    assert_eq!(f(&["arbor", "-"]), Some(PathBuf::from("/home/u/work/-")), "a lone dash is a name, not an option");
    // What a desktop environment passes for %U: a file URI, percent-encoded.
    assert_eq!(
        f(&["arbor", "file:///tmp/My%20Sessions/s%C3%A9.jsonl"]),
        Some(PathBuf::from("/tmp/My Sessions/sé.jsonl"))
    );
    assert_eq!(
        f(&["arbor", "file://localhost/tmp/a%2.jsonl"]),
        Some(PathBuf::from("/tmp/a%2.jsonl")),
        "a broken escape is kept as written"
    );
}

#[test]
fn the_startup_file_is_given_once_and_later_launches_reach_the_subscribed_ui() {
    let st = LaunchState::new(Some(PathBuf::from("/s/first.jsonl")));
    let got: Arc<Mutex<Vec<LaunchRequest>>> = Arc::default();
    let sink = {
        let got = got.clone();
        Arc::new(move |r: LaunchRequest| {
            got.lock().unwrap().push(r);
            true
        })
    };
    assert_eq!(
        st.subscribe(sink.clone()).as_deref(),
        Some("/s/first.jsonl"),
        "the command line's file, to open at start"
    );
    assert_eq!(st.subscribe(sink), None, "a reload of the window does not reopen it");
    st.request(PathBuf::from("/s/second.jsonl"));
    assert_eq!(
        *got.lock().unwrap(),
        vec![LaunchRequest { path: "/s/second.jsonl".into() }],
        "a second launch reaches the window at once"
    );

    // The window's channel is gone (the webview reloads): the request waits for the next
    // subscription instead of being lost; the newest launch wins.
    st.subscribe(Arc::new(|_: LaunchRequest| false));
    st.request(PathBuf::from("/s/third.jsonl"));
    st.request(PathBuf::from("/s/fourth.jsonl"));
    assert_eq!(st.subscribe(Arc::new(|_: LaunchRequest| true)).as_deref(), Some("/s/fourth.jsonl"));

    // Before the UI subscribed at all, a second launch replaces the command line's file.
    let st = LaunchState::new(Some(PathBuf::from("/s/a.jsonl")));
    st.request(PathBuf::from("/s/b.jsonl"));
    assert_eq!(st.subscribe(Arc::new(|_: LaunchRequest| true)).as_deref(), Some("/s/b.jsonl"));
}

#[test]
fn a_startup_file_that_is_not_a_session_gives_the_usual_error_and_changes_nothing() {
    let e = env();
    let demo = sessions::open_demo(&e.state).unwrap();
    // Missing file.
    let missing = e.dir.join("missing.jsonl");
    let err: IpcError = sessions::open(&e.state, &missing, false).unwrap_err().into();
    assert_eq!(err.kind, ErrorKind::Io, "{err:?}");
    assert!(err.message.contains("missing.jsonl"), "the error names the file: {}", err.message);
    // A JSON-lines file that is not a Pi session.
    let other = e.dir.join("other.jsonl");
    std::fs::write(&other, "{\"a\":1}\n{\"b\":2}\n").unwrap();
    let err: IpcError = sessions::open(&e.state, &other, false).unwrap_err().into();
    assert_eq!(err.kind, ErrorKind::Invalid, "{err:?}");
    assert!(err.message.contains("not a Pi session"), "{}", err.message);
    assert_eq!(std::fs::read(&other).unwrap(), b"{\"a\":1}\n{\"b\":2}\n", "the file is only read");
    // The session that was open stays open.
    assert_eq!(sessions::describe(&e.state).unwrap().path, demo.path);
}

#[test]
fn a_run_with_its_own_data_dir_has_its_own_single_instance_name() {
    use arbor_app::commands::launch::{instance_dbus_id, APP_IDENTIFIER};
    let conf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("tauri.conf.json")).unwrap()).unwrap();
    assert_eq!(conf["identifier"], APP_IDENTIFIER);
    let a = instance_dbus_id("/tmp/arbor-e2e-a/data".as_ref());
    assert_eq!(a, instance_dbus_id("/tmp/arbor-e2e-a/data".as_ref()), "both launches of one run agree");
    assert_ne!(a, instance_dbus_id("/tmp/arbor-e2e-b/data".as_ref()), "two runs never meet");
    assert!(a.starts_with("dev.arbor.app.d") && a.len() == "dev.arbor.app.d".len() + 16, "{a}");
    // A D-Bus name element: letters, digits, _ or -, not starting with a digit.
    for el in a.split('.') {
        assert!(!el.is_empty() && !el.starts_with(|c: char| c.is_ascii_digit()), "{a}");
        assert!(el.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{a}");
    }
}

// ---- the .deb: "Open with Arbor" for .jsonl files --------------------------------------------

#[test]
fn the_deb_associates_jsonl_files_and_its_desktop_entry_takes_files() {
    let conf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("tauri.conf.json")).unwrap()).unwrap();
    let bundle = &conf["bundle"];
    assert!(bundle["targets"].as_array().unwrap().iter().any(|t| t == "deb"), "the .deb is built");
    let assoc = bundle["fileAssociations"].as_array().expect("bundle.fileAssociations");
    let jsonl = assoc
        .iter()
        .find(|a| a["ext"].as_array().is_some_and(|x| x.iter().any(|e| e == "jsonl")))
        .expect("an association for .jsonl");
    assert_eq!(jsonl["role"], "Viewer");
    let mime = jsonl["mimeType"].as_str().expect("a MIME type (the .desktop file's MimeType=)");
    assert_eq!(mime, "application/x-ndjson");

    // Tauri's own desktop template has `Exec=arbor` with no field code, so a file manager would
    // start Arbor without the file: the deb uses ours, which is Tauri's plus %F.
    let deb = &bundle["linux"]["deb"];
    let template = root().join(deb["desktopTemplate"].as_str().expect("bundle.linux.deb.desktopTemplate"));
    let t = std::fs::read_to_string(&template).unwrap();
    let exec: Vec<&str> = t.lines().filter(|l| l.starts_with("Exec=")).collect();
    assert_eq!(exec, ["Exec={{exec}} %F"], "the file paths are passed");
    assert!(
        t.contains("{{#if mime_type}}\nMimeType={{mime_type}};\n{{/if}}"),
        "MimeType= from the associations, a list ending in ;"
    );
    for key in ["Name={{name}}", "Icon={{icon}}", "Type=Application", "Categories={{categories}}"] {
        assert!(t.lines().any(|l| l == key), "{key} kept from Tauri's template");
    }

    // shared-mime-info maps no type to *.jsonl, so the .deb installs one (dpkg's trigger runs
    // update-mime-database); its type is the association's.
    let files = deb["files"].as_object().expect("bundle.linux.deb.files");
    let (dest, src) =
        files.iter().find(|(d, _)| d.starts_with("/usr/share/mime/packages/")).expect("a MIME package installed");
    assert!(dest.ends_with(".xml"));
    let xml = std::fs::read_to_string(root().join(src.as_str().unwrap())).unwrap();
    assert!(xml.contains(&format!("<mime-type type=\"{mime}\">")), "{xml}");
    assert!(xml.contains("<glob pattern=\"*.jsonl\"/>"), "{xml}");
}

// ---- rename ----------------------------------------------------------------------------------

#[test]
fn rename_appends_pis_session_info_on_the_leaf_and_pi_shows_the_name() {
    let case = "rename_appends_pis_session_info_on_the_leaf_and_pi_shows_the_name";
    let e = env();
    let file = copy_fixture(&e, "basic-labels-and-names.jsonl");
    let opened = sessions::open(&e.state, &file, false).unwrap();
    let old_leaf = opened.leaf_id.clone().unwrap();
    let before = std::fs::read(&file).unwrap();

    let s = rename::rename(&e.state, "  Retry loop rework ✓ <b>  ", 1_740_000_000_000, Some("7e4a0001")).unwrap();
    assert_eq!(s.name.as_deref(), Some("Retry loop rework ✓ <b>"), "the title shows the trimmed name");
    assert_eq!(s.leaf_id.as_deref(), Some("7e4a0001"), "the entry is the new leaf");
    assert!(!s.leaf_moved, "Arbor's leaf is Pi's");
    assert_eq!(s.entry_count, opened.entry_count + 1, "only the appended bytes were read");
    let after = std::fs::read(&file).unwrap();
    assert_eq!(&after[..before.len()], &before[..], "append-only: the old bytes are untouched");
    let line = std::str::from_utf8(&after[before.len()..]).unwrap();
    assert_eq!(
        line,
        format!("{{\"type\":\"session_info\",\"id\":\"7e4a0001\",\"parentId\":\"{old_leaf}\",\"timestamp\":\"2025-02-19T21:20:00.000Z\",\"name\":\"Retry loop rework ✓ <b>\"}}\n"),
        "one line in Pi's key order"
    );
    assert_eq!(sessions::describe(&e.state).unwrap().name, s.name, "the open session has the name");

    // Renaming from a position the user moved to: the entry hangs below Arbor's leaf (as in Pi,
    // where the next append goes below the leaf navigated to) and makes it durable.
    let moved = navigate::continue_from(&e.state, &old_leaf).unwrap();
    assert_eq!(moved.session.leaf_id.as_deref(), Some(old_leaf.as_str()));
    let s = rename::rename(&e.state, "second name", 1_740_000_001_000, Some("7e4a0002")).unwrap();
    assert_eq!(last_line(&file)["parentId"], old_leaf.as_str());
    assert_eq!((s.name.as_deref(), s.leaf_id.as_deref(), s.leaf_moved), (Some("second name"), Some("7e4a0002"), false));

    // Pi itself loads the result: no skipped line, its session name is the new one, its leaf the
    // entry, and Arbor agrees with it on everything it computes.
    if pi::pi_or_skip(case) {
        let v = pi::assert_pi_agrees(&file, None);
        assert_eq!(v.name.as_deref(), Some("second name"), "Pi shows the new name");
        assert_eq!(v.leaf_id.as_deref(), Some("7e4a0002"));
        // And Pi can go on appending to the file Arbor renamed.
        pi::assert_arbor_reads_pi_append(&file);
    }
}

#[test]
fn an_empty_name_is_refused_and_nothing_is_written() {
    let e = env();
    let file = copy_fixture(&e, "basic-labels-and-names.jsonl");
    sessions::open(&e.state, &file, false).unwrap();
    let before = std::fs::read(&file).unwrap();
    for name in ["", "   ", "\t\n"] {
        let err: IpcError = rename::rename(&e.state, name, 0, None).unwrap_err().into();
        assert_eq!(err.kind, ErrorKind::Invalid, "{err:?}");
        assert!(err.message.contains("the name is empty"), "{}", err.message);
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_legacy_session_refuses_rename_with_the_banners_hint() {
    let e = env();
    let file = copy_fixture(&e, "load-v1-legacy.jsonl");
    let opened = sessions::open(&e.state, &file, false).unwrap();
    let why = opened.read_only.clone().expect("a v1 file opens read-only");
    let before = std::fs::read(&file).unwrap();
    let err: IpcError = rename::rename(&e.state, "new name", 0, None).unwrap_err().into();
    assert_eq!(err.kind, ErrorKind::Refused, "{err:?}");
    assert_eq!(err.message, why, "the same sentence as the read-only banner");
    assert!(err.message.contains("Save as v3 copy"), "it says what to do: {}", err.message);
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing was written");
}

/// A name means the same whatever the leaf: when another program appended since Arbor read the
/// file, the rename is planned again on the grown file instead of refused.
#[test]
fn rename_replans_when_another_program_appended_unseen() {
    let e = env();
    let file = copy_fixture(&e, "basic-labels-and-names.jsonl");
    let opened = sessions::open(&e.state, &file, false).unwrap();
    let leaf = opened.leaf_id.unwrap();
    // Pi appends a line the open session has not read (no watcher runs here).
    let pi_line = format!(
        "{{\"type\":\"session_info\",\"id\":\"0p1a0001\",\"parentId\":\"{leaf}\",\"timestamp\":\"2025-03-02T00:00:00.000Z\",\"name\":\"pi's name\"}}\n"
    );
    std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(pi_line.as_bytes()).unwrap();
    let before = std::fs::read(&file).unwrap();
    let after = rename::rename(&e.state, "replanned", 0, None).unwrap();
    let text = std::fs::read(&file).unwrap();
    assert!(text.starts_with(&before), "Pi's line stays, nothing is rewritten");
    let last: serde_json::Value =
        serde_json::from_str(std::str::from_utf8(&text[before.len()..]).unwrap().trim_end()).unwrap();
    assert_eq!((last["name"].as_str(), last["parentId"].as_str()), (Some("replanned"), Some("0p1a0001")));
    assert_eq!(after.name.as_deref(), Some("replanned"));
}
