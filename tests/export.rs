//! Export from the app, without a window: `commands::export::ExportJob` is the
//! body of the `export_session` command (the command adds only the worker thread, the progress
//! channel and the cancel registry). Real files in temp dirs; the session file is never changed.

use arbor_app::commands::export::ExportJob;
use arbor_app::view::export::{ExportFormat, ExportScope};
use std::sync::atomic::AtomicBool;

mod support;
use support::Env;

fn not_cancelled() -> AtomicBool {
    AtomicBool::new(false)
}

/// Every id in the session, in file order.
fn ids(file: &std::path::Path) -> Vec<String> {
    let s = session_engine::Session::open(file).unwrap();
    (0..s.len()).map(|i| s.id(i).to_string()).filter(|i| !i.is_empty()).collect()
}

#[test]
fn the_whole_session_exports_to_inert_html_and_the_session_is_unchanged() {
    let e = Env::with_demo();
    let before = std::fs::read(&e.file).unwrap();
    let job = ExportJob::from_open(&e.state, ExportScope::Session, None, ExportFormat::Html).unwrap();
    let out = e.tmp.path().join("out").join("demo.html");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut calls = Vec::new();
    let done = job.run(&out, false, &not_cancelled(), &mut |d, t| calls.push((d, t))).unwrap();
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(done.bytes as usize, html.len(), "the reported size is what was written");
    assert_eq!(done.entries as usize, ids(&e.file).len(), "every entry of every branch is exported");
    assert!(done.branches >= 2, "the demo has branches: {}", done.branches);
    assert!(html.to_ascii_lowercase().starts_with("<!doctype html"), "{}", &html[..60.min(html.len())]);
    assert!(!html.to_ascii_lowercase().contains("<script"), "no script in an export");
    // Every entry is an article with its anchor (anchors are entry indices, never session data).
    let s = session_engine::Session::open(&e.file).unwrap();
    for i in (0..s.len()).filter(|&i| !s.id(i).is_empty()) {
        assert!(html.contains(&format!("id=\"e{i}\"")), "entry {} has no anchor", s.id(i));
    }
    assert_eq!(html.matches("<article ").count(), done.entries as usize);
    let last = calls.last().copied().expect("progress was reported");
    assert_eq!(last.0, last.1, "progress ends at 100%");
    assert_eq!(std::fs::read(&e.file).unwrap(), before, "the session file is byte-identical");
}

#[test]
fn branch_and_context_scopes_hold_only_their_node_s_path() {
    let e = Env::with_demo();
    let s = session_engine::Session::open(&e.file).unwrap();
    // A node on a branch that is not the active path: the first leaf that is not the file's leaf.
    let file_leaf = s.file_leaf().unwrap();
    let other = (0..s.len())
        .find(|&i| !s.id(i).is_empty() && s.children(i).is_empty() && i != file_leaf)
        .expect("the demo has a second branch");
    let path: std::collections::HashSet<usize> = s.path(Some(other)).into_iter().collect();
    let off = (0..s.len()).find(|i| !path.contains(i) && !s.id(*i).is_empty()).unwrap();
    let job = ExportJob::from_open(&e.state, ExportScope::Branch, Some(s.id(other)), ExportFormat::Markdown).unwrap();
    let out = e.tmp.path().join("branch.md");
    let done = job.run(&out, false, &not_cancelled(), &mut |_, _| {}).unwrap();
    let md = std::fs::read_to_string(&out).unwrap();
    assert_eq!(done.entries as usize, path.len(), "the branch export has the path's entries");
    assert!(md.contains(&format!("<a id=\"e{other}\">")), "the node itself is in its branch export");
    assert!(!md.contains(&format!("<a id=\"e{off}\">")), "an entry off the path is not in the branch export");
    // The context at the file's leaf: what the model sees, so fewer entries than the path when a
    // compaction governs it.
    let job =
        ExportJob::from_open(&e.state, ExportScope::Context, Some(s.id(file_leaf)), ExportFormat::Markdown).unwrap();
    let ctx = job.run(&e.tmp.path().join("ctx.md"), false, &not_cancelled(), &mut |_, _| {}).unwrap();
    assert!(
        ctx.entries < s.path(Some(file_leaf)).len() as u32,
        "the context omits compacted entries ({} of {})",
        ctx.entries,
        s.path(Some(file_leaf)).len()
    );
}

#[test]
fn an_existing_file_is_replaced_only_when_asked_and_the_session_file_never() {
    let e = Env::with_demo();
    let out = e.tmp.path().join("taken.md");
    std::fs::write(&out, b"mine").unwrap();
    let job = ExportJob::from_open(&e.state, ExportScope::Session, None, ExportFormat::Markdown).unwrap();
    let err = job.run(&out, false, &not_cancelled(), &mut |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("already exists") && err.contains("nothing was written"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"mine");
    job.run(&out, true, &not_cancelled(), &mut |_, _| {}).unwrap();
    assert!(std::fs::read_to_string(&out).unwrap().starts_with('#'), "replaced by the Markdown export");
    let before = std::fs::read(&e.file).unwrap();
    let err = job.run(&e.file, true, &not_cancelled(), &mut |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("session file itself"), "{err}");
    assert_eq!(std::fs::read(&e.file).unwrap(), before);
    let err = job.run(e.tmp.path(), false, &not_cancelled(), &mut |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("is a folder"), "{err}");
}

#[test]
fn a_cancelled_export_leaves_nothing_behind() {
    let e = Env::with_demo();
    let dir = e.tmp.path().join("cancel");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("demo.html");
    let job = ExportJob::from_open(&e.state, ExportScope::Session, None, ExportFormat::Html).unwrap();
    let err = job.run(&out, false, &AtomicBool::new(true), &mut |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("cancelled") && err.contains("nothing was written"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "neither the export nor a temporary file is left");
}

#[test]
fn unknown_nodes_are_refused_and_default_paths_name_the_scope() {
    let e = Env::with_demo();
    let err = ExportJob::from_open(&e.state, ExportScope::Branch, Some("nope1234"), ExportFormat::Html)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("nope1234"), "{err}");
    let s = session_engine::Session::open(&e.file).unwrap();
    let id = s.id(s.file_leaf().unwrap()).to_string();
    let docs = e.tmp.path().join("Documents");
    let job = ExportJob::from_open(&e.state, ExportScope::Context, Some(&id), ExportFormat::Markdown).unwrap();
    assert_eq!(
        job.default_path(Some(docs.clone())),
        docs.join(format!("2025-03-01T09-00-00-000Z_demo-context-{}.md", &id[..8]))
    );
    let job = ExportJob::from_open(&e.state, ExportScope::Session, None, ExportFormat::Html).unwrap();
    assert_eq!(
        job.default_path(None),
        e.dir.join("2025-03-01T09-00-00-000Z_demo.html"),
        "beside the session without a documents folder"
    );
}

/// The dialog's list before the export names every planted key (entry, field, position), the
/// default export holds none of them, "keep" keeps them, and the session file never changes.
#[test]
fn secrets_are_listed_before_and_redacted_unless_kept() {
    let e = support::env();
    let (jsonl, placed) = secrets::corpus::planted_session();
    let file = e.dir.join("2025-03-01T09-00-00-000Z_planted.jsonl");
    std::fs::write(&file, jsonl).unwrap();
    arbor_app::commands::sessions::open(&e.state, &file, false).unwrap();
    let before = std::fs::read(&file).unwrap();
    let job = ExportJob::from_open(&e.state, ExportScope::Session, None, ExportFormat::Html).unwrap();
    assert!(!job.keep_secrets, "secrets are redacted unless the user keeps them");
    let list = job.secrets(&e.state).unwrap();
    assert_eq!(list.total as usize, placed.len());
    for p in &placed {
        assert!(
            list.items.iter().any(|i| i.entry_id == p.entry_id
                && i.kind == p.planted.kind
                && i.field == p.field
                && (i.start as usize, i.end as usize) == (p.start, p.end)),
            "{} in {} is not listed",
            p.planted.kind,
            p.entry_id
        );
    }
    assert!(
        list.items.iter().any(|i| i.entry_kind == "user") && list.items.iter().any(|i| i.entry_kind == "toolResult")
    );
    let out = e.tmp.path().join("planted.html");
    let done = job.run(&out, false, &not_cancelled(), &mut |_, _| {}).unwrap();
    assert_eq!(done.redacted as usize, placed.len());
    let html = std::fs::read_to_string(&out).unwrap();
    for p in &placed {
        assert!(!html.contains(&p.planted.secret), "{} leaked into the export", p.planted.kind);
    }
    let mut keep = ExportJob::from_open(&e.state, ExportScope::Session, None, ExportFormat::Markdown).unwrap();
    keep.keep_secrets = true;
    let kept = e.tmp.path().join("kept.md");
    let done = keep.run(&kept, false, &not_cancelled(), &mut |_, _| {}).unwrap();
    assert_eq!(done.redacted, 0);
    let md = std::fs::read_to_string(&kept).unwrap();
    assert!(placed.iter().all(|p| md.contains(&p.planted.secret)), "kept on request");
    assert_eq!(std::fs::read(&file).unwrap(), before, "the session file is byte-identical");
}
