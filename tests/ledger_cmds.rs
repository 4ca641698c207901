//! The artifact ledger in the app's commands: the workbench's "Add artifact ledger" on an edit
//! (and so on an accepted re-summary, which is saved as an edit), its preview, and the ledger
//! setting of the compaction settings, which the app's compactions follow.
use arbor_app::commands::{keys, summarize, summary};
use session_engine::Session;

/// The bundled demo's governing compaction (scripts/gen-demo.mjs).
const C3: &str = "57a13fd6";

fn summary_of(session: &Session, id: &str) -> String {
    session.value(session.index_of(id).unwrap()).str_field("summary").unwrap().to_string()
}

#[test]
fn an_edit_saved_with_the_ledger_carries_what_the_preview_showed() {
    let e = crate::support::Env::with_demo();
    // An edit that keeps only the goal: most of the span's artifacts are no longer mentioned.
    let text = "## Goal\nMake the rate limiter keyed per client.\n";
    let p = summary::ledger_preview(&e.state, C3, text).unwrap();
    assert!(p.lines.len() >= 3, "{p:?}");
    assert!(p.text.starts_with(text.trim_end()) && p.text.contains("\n## Artifacts\n"), "{}", p.text);
    assert!(p.with.artifact.answered > p.without.artifact.answered);
    assert!(p.tokens_added > 0.0);
    let w = summary::save_edit_ledger(&e.state, C3, text, true, 1_740_822_000_000, Some("ed1e0001")).unwrap();
    let s = Session::open(&e.file).unwrap();
    assert_eq!(summary_of(&s, &w.entry_id), p.text, "the entry holds the previewed text");
    // The edit is judged as its chain's origin, like the preview: a ledger of its text lists
    // none of the lines it has (only what the budget left out the first time).
    let again = summary::ledger_preview(&e.state, &w.entry_id, &p.text).unwrap();
    assert!(again.lines.iter().all(|l| !p.lines.contains(l)), "{:?}", again.lines);
    // Without the box, the text as typed.
    let w2 =
        summary::save_edit_ledger(&e.state, &w.entry_id, text, false, 1_740_822_000_001, Some("ed1e0002")).unwrap();
    assert_eq!(summary_of(&Session::open(&e.file).unwrap(), &w2.entry_id), text);
}

#[test]
fn the_ledger_setting_is_saved_with_the_other_summarizer_settings_and_compactions_follow_it() {
    let e = crate::support::Env::with_demo();
    let mut h = keys::hooks(&e.st).unwrap();
    assert!(!h.artifact_ledger, "off by default");
    h.artifact_ledger = true;
    assert!(keys::save_hooks(&e.st, &h).unwrap().artifact_ledger);
    let saved = std::fs::read_to_string(e.tmp.path().join("arbor-settings.json")).unwrap();
    assert!(saved.contains("\"artifactLedger\": true"), "{saved}");
    // The app's compaction writes the ledger of what the model's terse summary left out.
    let f = crate::support::provider::fake(|_, _| crate::support::provider::Reply::Sse("## Goal\nTerse.".into(), 100));
    crate::support::provider::use_fake(&e, &f.base, 32000);
    let mut budgets = crate::support::provider::budgets(24000);
    // A short kept tail, so that the span holds the last turns' commands.
    budgets.budgets.keep_recent_tokens = 100;
    let r = crate::support::provider::block(summarize::compact(&e.state, &e.st, &budgets, None, None)).unwrap();
    let s = Session::open(&e.file).unwrap();
    let idx = s.index_of(&r.entry_id).unwrap();
    let written = summary_of(&s, &r.entry_id);
    assert_eq!(written, r.summary);
    assert_eq!(summary_analysis::with_ledger(&s, idx, &written), written, "nothing left to list");
    // A split turn: the ledger follows the merged text (history, then the turn's beginning).
    let ledger = written.find("\n\n## Artifacts\n").expect("the ledger");
    assert!(written[..ledger].ends_with("## Goal\nTerse."), "{written}");
    assert!(written[ledger..].contains("\n- ran `"), "{written}");
}
