//! The bundled demo session (`src-tauri/demo/demo-session.jsonl`, written by
//! `scripts/gen-demo.mjs`, embedded as `DEMO_SESSION`): it is what the generator writes, Pi 0.73.1
//! loads it as Arbor does, and it has what the demo is there to show: two abandoned branches with
//! their branch summaries, exactly three compactions whose `firstKeptEntryId`, `tokensBefore` and
//! file lists are what Pi computes at those points, a last compaction whose drop alarm and diff
//! have something to show, and a tail the composer can chat on without compacting first.

#[path = "../src-tauri/crates/cli/tests/support/pi.rs"]
mod pi;

use arbor_app::commands::sessions::DEMO_SESSION;
use pi_json::Value;
use session_engine::compaction::{plan_compaction, SPLIT_TURN_SEPARATOR};
use session_engine::context::CurrentModel;
use session_engine::{branch, report, CompactionSettings, Kind, Session};
use std::path::PathBuf;
use std::process::Command;

/// `KEEP_RECENT` of scripts/gen-demo.mjs: the story's project setting `compaction.keepRecentTokens`.
const KEEP_RECENT: f64 = 600.0;

fn demo() -> Session {
    Session::from_bytes(DEMO_SESSION.to_vec())
}

fn demo_file() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("2025-03-01T09-00-00-000Z_demo.jsonl");
    std::fs::write(&p, DEMO_SESSION).unwrap();
    (t, p)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The user message that starts the branch abandoned at branch summary `bs` (its sibling), and
/// the last entry of that branch.
fn abandoned_branch(session: &Session, bs: usize) -> (usize, usize) {
    let parent = session.parent_of(bs).expect("a branch summary has a parent here");
    let starts: Vec<usize> = session.children(parent).iter().map(|&c| c as usize).filter(|&c| c != bs).collect();
    assert_eq!(starts.len(), 1, "one abandoned branch beside {}", session.id(bs));
    let mut end = starts[0];
    while let [only] = session.children(end) {
        end = *only as usize;
    }
    assert!(session.children(end).is_empty(), "the abandoned branch from {} does not fork", session.id(starts[0]));
    (starts[0], end)
}

#[test]
fn the_committed_demo_is_what_the_generator_writes() {
    let root = pi::repo_root();
    let on_disk = std::fs::read(root.join("src-tauri/demo/demo-session.jsonl")).unwrap();
    assert!(on_disk == DEMO_SESSION, "the binary embeds another demo than the one on disk; rebuild");
    // The generator runs on Node, which the Pi-backed checks need too (and skip together).
    if pi::pi_or_skip("the_committed_demo_is_what_the_generator_writes") {
        let o = Command::new("node")
            .arg(root.join("scripts/gen-demo.mjs"))
            .arg("--check")
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn pi_loads_the_demo_as_arbor_does_at_every_leaf() {
    let (_t, f) = demo_file();
    let s = demo();
    // Pi's view, which agrees with Arbor's; when Pi cannot run here (a loud skip), Arbor's own
    // view is held to the same facts.
    let pi_runs = pi::pi_or_skip("pi_loads_the_demo_as_arbor_does_at_every_leaf");
    let view = |leaf: Option<&str>| if pi_runs { pi::assert_pi_agrees(&f, leaf) } else { pi::arbor_view(&f, leaf) };
    let v = view(None);
    assert_eq!(v.entries, s.len());
    assert_eq!(v.name.as_deref(), Some("throttle: per-client rate limits (Arbor demo)"));
    assert_eq!(v.labels.len(), 2, "{:?}", v.labels);
    assert_eq!(v.messages[0].role, "compactionSummary", "the leaf's context starts with the last compaction");
    // The ends of the abandoned branches, and each compaction as the leaf.
    let mut leaves: Vec<String> = (0..s.len())
        .filter(|&i| s.kind(i) == Kind::BranchSummary)
        .map(|b| s.id(abandoned_branch(&s, b).1).to_string())
        .collect();
    leaves.extend(s.compactions().map(|c| s.id(c).to_string()));
    for leaf in &leaves {
        let at = view(Some(leaf));
        assert_eq!(at.leaf_id.as_deref(), Some(leaf.as_str()));
    }
}

#[test]
fn the_demo_has_two_abandoned_branches_with_pis_branch_summaries() {
    let s = demo();
    assert!(s.diagnostics().is_empty(), "{:?}", s.diagnostics());
    assert!(s.read_only().is_none());
    let summaries: Vec<usize> = (0..s.len()).filter(|&i| s.kind(i) == Kind::BranchSummary).collect();
    assert_eq!(summaries.len(), 2);
    let forks = (0..s.len()).filter(|&i| s.children(i).len() >= 2).count();
    assert_eq!(forks, 2, "two places where the user went back");
    let ends = (0..s.len()).filter(|&i| s.children(i).is_empty()).count();
    assert_eq!(ends, 3, "the active branch and two abandoned ones");
    for &b in &summaries {
        let (start, end) = abandoned_branch(&s, b);
        assert_eq!(s.role(start), Some("user"), "the user went back to their own message");
        // Pi's navigation from the abandoned branch's end to that message, with a summary.
        let job = branch::plan_navigation(&s, Some(end), start, true, 0.0);
        let prep = job.prep.as_ref().expect("the branch left has entries");
        let v = s.value(b);
        let parent = s.id(s.parent_of(b).unwrap());
        assert_eq!(job.new_leaf_id.as_deref(), Some(parent), "the summary hangs where Pi moves the leaf");
        assert_eq!(v.str_field("fromId"), Some(parent), "Pi's fromId is the position returned to");
        let text = v.str_field("summary").unwrap();
        assert!(
            text.starts_with("The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n"),
            "{text}"
        );
        assert!(text.ends_with(&prep.appendix()), "{} ends with Pi's file lists", s.id(b));
        let details = v.get("details").unwrap();
        assert_eq!(
            (strings(details.get("readFiles")), strings(details.get("modifiedFiles"))),
            (prep.read_files.clone(), prep.modified_files.clone())
        );
        assert_eq!(v.get("fromHook").and_then(Value::as_bool), Some(false));
        // The user's second try hangs under the summary.
        let next: Vec<usize> = s.children(b).iter().map(|&c| c as usize).collect();
        assert!(
            next.len() == 1 && s.role(next[0]) == Some("user"),
            "{} is followed by the user's new message",
            s.id(b)
        );
    }
}

#[test]
fn the_three_compactions_are_what_pi_computes_at_their_points() {
    let s = demo();
    let comps: Vec<usize> = s.compactions().collect();
    assert_eq!(comps.len(), 3);
    let settings = CompactionSettings { enabled: true, reserve_tokens: 16384.0, keep_recent_tokens: KEEP_RECENT };
    let leaf_path = s.path(s.file_leaf());
    for (n, &c) in comps.iter().enumerate() {
        assert!(leaf_path.contains(&c), "compaction {} is on the active path", s.id(c));
        let v = s.value(c);
        let job = plan_compaction(&s, s.parent_of(c), &settings).unwrap();
        let p = &job.prep;
        let id = s.id(c);
        assert_eq!(v.str_field("firstKeptEntryId"), Some(p.first_kept_entry_id.as_str()), "{id}: Pi's cut point");
        assert_eq!(
            v.get("tokensBefore").and_then(Value::as_f64),
            Some(p.tokens_before),
            "{id}: Pi's estimate at that point"
        );
        assert!(p.tokens_before > 8000.0, "{id}: {} tokens before", p.tokens_before);
        let d = v.get("details").unwrap();
        assert_eq!(
            (strings(d.get("readFiles")), strings(d.get("modifiedFiles"))),
            (p.read_files.clone(), p.modified_files.clone()),
            "{id}"
        );
        let text = v.str_field("summary").unwrap();
        assert!(text.starts_with("## Goal\n") && text.ends_with(&p.appendix()), "{id}: Pi's template and file lists");
        assert_eq!(text.contains(SPLIT_TURN_SEPARATOR), p.is_split_turn, "{id}: a split turn has its turn context");
        assert_eq!(
            p.is_split_turn,
            n == 0,
            "{id}: the first compaction splits a turn, the others cut at a user message"
        );
        assert!(!p.messages_to_summarize.is_empty(), "{id} summarizes something");
        assert_eq!(v.get("fromHook").and_then(Value::as_bool), Some(false));
        if n == 2 {
            // Written by Arbor with a model: its extras, with Arbor's tokensAfter.
            assert_eq!(d.get("tokensAfter").and_then(Value::as_f64), Some(job.tokens_after(text, p.tokens_before)));
            let a = summary_analysis::author(&s, c);
            assert_eq!((a.provider.as_deref(), a.model.as_deref()), (Some("anthropic"), Some("claude-haiku-4-5")));
        } else {
            assert!(d.get("tokensAfter").is_none(), "{id} is Pi's: only Pi's two keys");
        }
    }
}

#[test]
fn the_last_compaction_drops_a_decision_and_moves_an_item_to_done() {
    let s = demo();
    let comps: Vec<usize> = s.compactions().collect();
    let (c2, c3) = (comps[1], comps[2]);
    let check = summary_analysis::check(&s, c3);
    assert_eq!(check.previous_entry_id.as_deref(), Some(s.id(c2)));
    assert_eq!(check.dropped.len(), 1, "{:?}", check.dropped);
    assert_eq!(check.dropped[0].section, "Key Decisions");
    assert!(check.dropped[0].text.contains("**Entry API in `allow_at`**"), "{:?}", check.dropped);
    assert_eq!(check.moved.len(), 1, "{:?}", check.moved);
    let m = &check.moved[0];
    assert!(
        m.text.starts_with("Bound the memory of `KeyedLimiter`")
            && m.from.contains("In Progress")
            && m.to.contains("Done"),
        "{m:?}"
    );
    // The one before it carried everything of its predecessor.
    assert!(summary_analysis::check(&s, c2).dropped.is_empty());
    // The diff shows the same two changes.
    let d = summary_analysis::diff(
        &summary_analysis::parse(summary_analysis::summary_text(&s, c2)),
        &summary_analysis::parse(summary_analysis::summary_text(&s, c3)),
    );
    let dec = d.sections.iter().find(|x| x.title == "Key Decisions").unwrap();
    assert!(dec.removed.iter().any(|r| r.contains("Entry API")), "{dec:?}");
    assert!(d.moved.iter().any(|m| m.text.starts_with("Bound the memory")), "{:?}", d.moved);
}

#[test]
fn the_composer_chats_first_at_the_demos_leaf() {
    let s = demo();
    let leaf = s.file_leaf().unwrap();
    assert_eq!(s.role(leaf), Some("assistant"));
    for window in [24000.0, 32000.0, 200000.0] {
        let model = CurrentModel { provider: "openai".into(), id: "fake-small".into(), context_window: window };
        assert_eq!(
            report::pre_prompt_check(&s, Some(leaf), Some(&model), &CompactionSettings::default()),
            None,
            "window {window}: no compaction before the chat"
        );
    }
}
