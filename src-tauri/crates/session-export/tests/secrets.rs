//! Secrets stay home: an export of a session with planted keys (user messages, tool results,
//! tool-call arguments) holds none of them, keeps every look-alike, reports each key where it is,
//! keeps them all when asked, and leaves the session file as it was.
use secrets::corpus::{look_alikes, planted_session, Placed};
use session_engine::Session;
use session_export::{export, export_with, find_secrets, Format, Options, Scope, SecretFinding};

fn session() -> (tempfile::TempDir, std::path::PathBuf, Vec<Placed>) {
    let dir = tempfile::tempdir().unwrap();
    let (jsonl, placed) = planted_session();
    let file = dir.path().join("planted.jsonl");
    std::fs::write(&file, jsonl).unwrap();
    (dir, file, placed)
}

fn html_escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn run(s: &Session, scope: Scope, format: Format, keep: bool) -> (String, Vec<SecretFinding>) {
    let mut out = Vec::new();
    let stats =
        export_with(s, scope, format, Options { keep_secrets: keep }, "planted", &mut out, &mut |_, _| {}).unwrap();
    (String::from_utf8(out).unwrap(), stats.secrets)
}

fn assert_report(found: &[SecretFinding], placed: &[Placed]) {
    assert_eq!(found.len(), placed.len(), "{:?}", found.iter().map(|f| (f.kind, &f.entry_id)).collect::<Vec<_>>());
    for p in placed {
        assert!(
            found.iter().any(|f| f.entry_id == p.entry_id
                && f.kind == p.planted.kind
                && f.field == p.field
                && (f.start, f.end) == (p.start, p.end)),
            "{} in {} {} {}..{} is not reported: {found:?}",
            p.planted.kind,
            p.entry_id,
            p.field,
            p.start,
            p.end
        );
    }
}

#[test]
fn exports_hold_no_planted_key_and_every_look_alike() {
    let (_dir, file, placed) = session();
    let before = std::fs::read(&file).unwrap();
    let s = Session::open(&file).unwrap();
    let leaf = s.file_leaf();
    for scope in [Scope::Session { leaf }, Scope::Branch { leaf }, Scope::Context { leaf }] {
        for format in [Format::Html, Format::Markdown] {
            let (text, found) = run(&s, scope, format, false);
            for p in &placed {
                assert!(!text.contains(&p.planted.secret), "{scope:?} {format:?}: {} leaked", p.planted.kind);
                assert!(
                    text.contains(&format!("[redacted: {}]", p.planted.kind)),
                    "{scope:?} {format:?}: {}",
                    p.planted.kind
                );
            }
            for l in look_alikes() {
                let shown = if format == Format::Html { html_escaped(&l) } else { l.clone() };
                assert!(text.contains(&shown), "{scope:?} {format:?}: a look-alike was changed: {l:?}");
            }
            let image = if format == Format::Html { "[image image/png]" } else { "\\[image image\\/png\\]" };
            assert!(text.contains(image), "the image is shown as before");
            assert_report(&found, &placed);
            assert_eq!(found, find_secrets(&s, scope), "the list before the export is what the export redacts");
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), before, "the session file is byte-identical");
}

#[test]
fn keep_secrets_keeps_every_key_and_reports_none() {
    let (_dir, file, placed) = session();
    let s = Session::open(&file).unwrap();
    for format in [Format::Html, Format::Markdown] {
        let (text, found) = run(&s, Scope::Session { leaf: s.file_leaf() }, format, true);
        assert!(found.is_empty());
        for p in &placed {
            let shown = if format == Format::Html { html_escaped(&p.planted.secret) } else { p.planted.secret.clone() };
            assert!(text.contains(&shown), "{format:?}: {} was not kept", p.planted.kind);
        }
        // Only the placeholders the look-alikes hold themselves (two, in three entries).
        assert_eq!(text.matches("[redacted:").count(), 6);
    }
}

#[test]
fn the_default_export_redacts_and_titles_labels_and_names_too() {
    let (_dir, file, placed) = session();
    let key = &placed[0].planted.secret;
    // A label and a session name holding a key, appended as Pi writes them.
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&format!(
        "{{\"type\":\"label\",\"id\":\"ffff0001\",\"parentId\":\"{}\",\"timestamp\":\"2025-03-01T10:00:00.000Z\",\"targetId\":\"00000001\",\"label\":\"key {key}\"}}\n",
        session_leaf_id(&text)
    ));
    text.push_str(&format!(
        "{{\"type\":\"session_info\",\"id\":\"ffff0002\",\"parentId\":\"ffff0001\",\"timestamp\":\"2025-03-01T10:00:01.000Z\",\"name\":\"deploy with {key}\"}}\n"
    ));
    std::fs::write(&file, &text).unwrap();
    let s = Session::open(&file).unwrap();
    let mut out = Vec::new();
    let stats = export(
        &s,
        Scope::Session { leaf: s.file_leaf() },
        Format::Markdown,
        &format!("deploy with {key}"),
        &mut out,
        &mut |_, _| {},
    )
    .unwrap();
    let md = String::from_utf8(out).unwrap();
    assert!(!md.contains(key.as_str()), "a key leaked through a title, a label or a name");
    assert!(stats.secrets.iter().any(|f| f.entry_id == "ffff0001" && f.field == "label"));
    assert!(stats.secrets.iter().any(|f| f.entry_id == "ffff0002" && f.field == "name"));
}

fn session_leaf_id(text: &str) -> String {
    let last = text.lines().last().unwrap();
    let at = last.find("\"id\":\"").unwrap() + 6;
    last[at..at + 8].to_string()
}
