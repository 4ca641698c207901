//! Compare, Bring back into context and forks across files, as the app's commands run them on
//! real session files (copies of the conformance corpus) and a real SQLite index, without a
//! window. Included by tests/app.rs.

use crate::support::{env, Env};
use arbor_app::commands::library as lib_cmd;
use arbor_app::commands::{compare, forks, navigate, recall, sessions};
use arbor_app::state::library::{self as lib_state, LibraryState};
use arbor_app::view::budgets::{BudgetArgs, Budgets};
use arbor_app::view::compare::CommandOutcome;
use arbor_app::view::forks::ParentStatus;
use arbor_app::view::library::ListingQuery;
use std::path::{Path, PathBuf};

fn conformance(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/session-engine/tests/fixtures/conformance").join(name)
}

/// branch-simple-siblings.jsonl: two branches leave 3a3a8877; one ends at 55732918 (it edits
/// tests/session.test.ts, which the other only reads), the other at the file's leaf c2dfa6ab (it
/// writes Makefile and edits src/🚀launch.ts); both edit /home/dev/project/.env.example.
const FORK_AT: &str = "3a3a8877";
const TIP_A: &str = "55732918";
const TIP_B: &str = "c2dfa6ab";
/// The first user message of the branch that was left (the model does not see it at the leaf).
const LEFT_USER: &str = "2a75225b";

fn open_copy(e: &Env, fixture: &str, name: &str) -> PathBuf {
    let p = e.dir.join(name);
    std::fs::copy(conformance(fixture), &p).unwrap();
    sessions::open(&e.state, &p, false).unwrap();
    p
}

fn budgets(window: u32) -> BudgetArgs {
    BudgetArgs { budgets: Budgets::default(), context_window: window }
}

fn lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn compare_two_tips_of_a_branched_session() {
    let e = env();
    open_copy(&e, "branch-simple-siblings.jsonl", "siblings.jsonl");
    let c = compare::compare(&e.state, TIP_A, TIP_B).unwrap();
    assert_eq!(c.ancestor.as_ref().map(|a| a.entry_id.as_str()), Some(FORK_AT));
    assert_eq!(c.a.tip.entry_id, TIP_A);
    assert_eq!(c.b.tip.entry_id, TIP_B);
    assert_eq!(c.a.first_entry_id.as_deref(), Some(LEFT_USER), "side A starts after the ancestor");
    assert!(c.a.entries > 0 && c.a.turns > 0 && c.b.entries > 0);
    assert!(c.a.context_tokens > 0 && !c.a.tokens.is_empty());
    assert_eq!(c.a.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
    // Files apart, each leading to the entry of its last tool call on its side.
    let paths = |v: &[arbor_app::view::compare::FileLink]| v.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&c.only_a.modified_files), ["tests/session.test.ts"]);
    assert_eq!(c.only_a.modified_files[0].a_entry_id.as_deref(), Some("7bc718d1"));
    assert_eq!(c.only_a.modified_files[0].b_entry_id, None);
    assert!(paths(&c.only_b.modified_files).contains(&"Makefile".to_string()), "{:?}", c.only_b);
    let make = c.only_b.modified_files.iter().find(|f| f.path == "Makefile").unwrap();
    assert_eq!((make.a_entry_id.as_deref(), make.b_entry_id.as_deref()), (None, Some("86b00dbe")));
    let env_file = c.both.modified_files.iter().find(|f| f.path == "/home/dev/project/.env.example").unwrap();
    assert_eq!((env_file.a_entry_id.as_deref(), env_file.b_entry_id.as_deref()), (Some("1c4d53e6"), Some("c09cef2f")));
    // Commands keep how they last ended.
    assert!(c.b.commands.iter().any(|x| x.command.starts_with("make") && x.last_outcome != CommandOutcome::Unknown));
    // The same node twice, or an unknown one, is refused with a sentence.
    assert!(compare::compare(&e.state, TIP_A, TIP_A).unwrap_err().to_string().contains("pick a second"));
    assert!(compare::compare(&e.state, TIP_A, "nope0000").is_err());
}

#[test]
fn bring_back_previews_then_appends_one_custom_message_at_the_leaf() {
    let e = env();
    let file = open_copy(&e, "branch-simple-siblings.jsonl", "siblings.jsonl");
    let before = std::fs::read(&file).unwrap();
    let ids = vec![LEFT_USER.to_string()];
    // The preview: the text, its cost and the context before and after; nothing written.
    let p = recall::preview(&e.state, &ids, None, false, &budgets(200_000)).unwrap();
    assert_eq!(p.refusal, None);
    assert_eq!(p.max_chars, session_engine::recall::DEFAULT_MAX_CHARS as u32);
    assert_eq!(p.leaf_id.as_deref(), Some(TIP_B));
    assert!(p.text.contains(&format!("user message {LEFT_USER}")) && p.text.contains("on a branch that was left"));
    assert!(p.tokens > 0 && p.context_tokens_after > p.context_tokens);
    assert!(!p.crosses_threshold);
    assert_eq!(p.sources[0].place, "on a branch that was left");
    // A small window puts it past the threshold; a short cut says which entry was cut.
    let tight = recall::preview(&e.state, &ids, Some(20), false, &budgets(p.context_tokens_after + 16_000)).unwrap();
    assert!(tight.cut.contains(&LEFT_USER.to_string()) && tight.text.contains("more characters not brought back"));
    let small = BudgetArgs {
        budgets: Budgets { reserve_tokens: 1, ..Budgets::default() },
        context_window: p.context_tokens + 2,
    };
    assert!(recall::preview(&e.state, &ids, None, false, &small).unwrap().crosses_threshold);
    // An entry the model sees: the engine's sentence, as a refusal of the preview.
    let seen = recall::preview(&e.state, &[TIP_B.to_string()], None, false, &budgets(200_000)).unwrap();
    assert!(seen.refusal.as_deref().is_some_and(|r| r.contains("already sees")), "{:?}", seen.refusal);
    assert_eq!(std::fs::read(&file).unwrap(), before, "previews write nothing");

    // Bring back: one custom_message under the old leaf, which it becomes.
    let done = recall::bring_back(&e.state, &ids, None, false, &budgets(200_000), 1_740_900_000_000, Some("feedbac1"))
        .unwrap();
    assert_eq!(done.entry_id, "feedbac1");
    assert_eq!(done.session.leaf_id.as_deref(), Some("feedbac1"));
    let l = lines(&file);
    assert_eq!(l.len(), 64, "one line appended");
    let last = &l[63];
    assert_eq!(last["type"], "custom_message");
    assert_eq!(last["customType"], "arbor-recall");
    assert_eq!(last["parentId"], TIP_B);
    assert_eq!(last["display"], true);
    assert_eq!(last["details"]["sources"][0]["entryId"], LEFT_USER);
    assert_eq!(last["content"].as_str(), Some(p.text.as_str()), "what was previewed is what was written");
    // The context at the leaf now holds it, where Pi puts it: the last message.
    let ctx = navigate::context(&e.state, None, 200_000, 16_384, true).unwrap();
    let m = ctx.messages.last().unwrap();
    assert_eq!((m.entry_id.as_deref(), m.role.as_str()), (Some("feedbac1"), "custom"));
    // Again: the model sees it now, so the engine refuses and nothing is written.
    let again =
        recall::bring_back(&e.state, &ids, None, false, &budgets(200_000), 1_740_900_000_001, None).unwrap_err();
    assert!(again.to_string().contains("already sees") && again.to_string().contains("nothing was written"), "{again}");
    assert_eq!(lines(&file).len(), 64);
}

#[test]
fn bring_back_writes_nothing_when_pi_appended_meanwhile() {
    let e = env();
    let file = open_copy(&e, "compaction-repeated.jsonl", "compacted.jsonl");
    let ids = vec!["a6771de3".to_string()];
    let p = recall::preview(&e.state, &ids, None, false, &budgets(200_000)).unwrap();
    assert_eq!(p.sources[0].place, "compacted away", "{:?}", p.refusal);
    // Pi appends a line after Arbor read the file.
    let pi_line = "{\"type\":\"label\",\"id\":\"0f0f0f0f\",\"parentId\":\"c9d4d100\",\"timestamp\":\"2025-03-02T10:00:00.000Z\",\"targetId\":\"c9d4d100\",\"label\":\"pi\"}\n";
    let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    std::io::Write::write_all(&mut f, pi_line.as_bytes()).unwrap();
    let n = lines(&file).len();
    let err = recall::bring_back(&e.state, &ids, None, false, &budgets(200_000), 1_740_900_000_000, None).unwrap_err();
    assert_eq!(lines(&file).len(), n, "a recall planned on the old leaf is not written: {err}");
    // A cut of 0 characters is no cut.
    assert!(recall::preview(&e.state, &ids, Some(0), false, &budgets(200_000)).is_err());
}

/// The secrets corpus's session with every planted secret on a branch that was left, opened.
fn open_planted(e: &Env, name: &str) -> (PathBuf, Vec<secrets::corpus::Placed>) {
    let (text, placed) = secrets::corpus::planted_session_left_behind();
    let p = e.dir.join(name);
    std::fs::write(&p, text).unwrap();
    sessions::open(&e.state, &p, false).unwrap();
    (p, placed)
}

#[test]
fn bring_back_lists_secrets_before_writing_and_keeps_them_only_when_chosen() {
    let e = env();
    let (file, placed) = open_planted(&e, "planted.jsonl");
    let target = placed.iter().find(|p| p.entry_id != "00000001" && p.field == "message.content[0].text").unwrap();
    let ids = vec![target.entry_id.clone()];
    let p = recall::preview(&e.state, &ids, None, false, &budgets(200_000)).unwrap();
    assert_eq!(p.refusal, None);
    assert!(!p.secrets_kept);
    assert_eq!(p.secrets.len(), 1, "{:?}", p.secrets);
    assert_eq!(
        (p.secrets[0].entry_id.as_str(), p.secrets[0].kind.as_str()),
        (target.entry_id.as_str(), target.planted.kind)
    );
    assert!(
        !p.text.contains(&target.planted.secret) && p.text.contains(&format!("[redacted: {}]", target.planted.kind))
    );
    // Asked to keep them: the same list, the text as it was.
    let kept = recall::preview(&e.state, &ids, None, true, &budgets(200_000)).unwrap();
    assert!(kept.secrets_kept && kept.text.contains(&target.planted.secret));
    assert_eq!(kept.secrets.len(), 1);

    let done = recall::bring_back(&e.state, &ids, None, false, &budgets(200_000), 1_740_900_000_000, None).unwrap();
    let last = lines(&file).pop().unwrap();
    assert_eq!(last["id"], done.entry_id.as_str());
    assert!(!last["content"].as_str().unwrap().contains(&target.planted.secret), "redacted by default");
    assert!(std::fs::read_to_string(&file).unwrap().contains(&target.planted.secret), "the source keeps it");

    let e = env();
    let (file, _) = open_planted(&e, "kept.jsonl");
    recall::bring_back(&e.state, &ids, None, true, &budgets(200_000), 1_740_900_000_000, None).unwrap();
    let last = lines(&file).pop().unwrap();
    assert!(last["content"].as_str().unwrap().contains(&target.planted.secret), "kept when chosen");
}

/// A fork as Pi's `/fork` writes it: the parent's path up to `at` copied with its ids, then a new
/// user message; `parent_session` in the header.
fn write_fork(dir: &Path, name: &str, parent_session: &str, parent: &Path, at: &str) -> PathBuf {
    let src = lines(parent);
    let by_id = |id: &str| src.iter().find(|v| v["id"] == id).unwrap().clone();
    let mut chain = Vec::new();
    let mut cur = Some(at.to_string());
    while let Some(id) = cur {
        let v = by_id(&id);
        cur = v["parentId"].as_str().map(str::to_string);
        chain.push(v);
    }
    chain.reverse();
    let header = serde_json::json!({"type":"session","version":3,"id":"0195f0f0-0000-7000-8000-00000000f0f0",
        "timestamp":"2025-03-01T10:00:00.000Z","cwd":"/home/dev/project","parentSession":parent_session});
    let user = serde_json::json!({"type":"message","id":"f0f0f0f0","parentId":at,"timestamp":"2025-03-01T10:00:01.000Z",
        "message":{"role":"user","content":"a fork: try it the other way","timestamp":1740823201000u64}});
    let mut text = String::new();
    for v in std::iter::once(&header).chain(&chain).chain(std::iter::once(&user)) {
        text.push_str(&serde_json::to_string(v).unwrap());
        text.push('\n');
    }
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_fork_shows_its_parents_path_up_to_the_fork_point() {
    let e = env();
    let parent = e.dir.join("siblings.jsonl");
    std::fs::copy(conformance("branch-simple-siblings.jsonl"), &parent).unwrap();
    let fork = write_fork(&e.dir, "fork.jsonl", &parent.display().to_string(), &parent, FORK_AT);
    sessions::open(&e.state, &parent, false).unwrap();
    assert!(forks::fork_parent_of_open(&e.state).unwrap().is_none(), "the parent is no fork");
    sessions::open(&e.state, &fork, false).unwrap();
    let v = forks::fork_parent_of_open(&e.state).unwrap().expect("a fork");
    assert_eq!(v.status, ParentStatus::Resolves);
    assert_eq!(v.parent_path, parent.display().to_string());
    assert_eq!(v.fork_point_id.as_deref(), Some(FORK_AT));
    assert!(v.sentence.starts_with("forked from siblings.jsonl"), "{}", v.sentence);
    let rows: Vec<&str> = v.rows.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!((rows.first().copied(), rows.last().copied()), (Some("e079475b"), Some(FORK_AT)), "root → fork point");
    assert_eq!(v.earlier, 0);
    assert!(v.rows.iter().all(|r| r.in_fork), "/fork copied the path with its ids");
    assert!(v.ancestry.is_empty());

    // The parent moved away: named, not an error; the fork opens as it is.
    let orphan = write_fork(&e.dir, "orphan.jsonl", "/nowhere/gone.jsonl", &parent, FORK_AT);
    sessions::open(&e.state, &orphan, false).unwrap();
    let v = forks::fork_parent_of_open(&e.state).unwrap().unwrap();
    assert_eq!(v.status, ParentStatus::Missing);
    assert_eq!(v.sentence, "forked from gone.jsonl, which is no longer there (moved or deleted)");
    assert!(v.rows.is_empty() && v.fork_point_id.is_none());
}

#[test]
fn the_picker_names_a_forks_parent_and_counts_a_sessions_forks() {
    let e = env();
    let root = e.agent.join("sessions");
    let proj = root.join("--home-dev-project--");
    std::fs::create_dir_all(&proj).unwrap();
    let parent = proj.join("2025-03-01T09-00-00-000Z_siblings.jsonl");
    std::fs::copy(conformance("branch-simple-siblings.jsonl"), &parent).unwrap();
    write_fork(&proj, "2025-03-01T10-00-00-000Z_fork.jsonl", &parent.display().to_string(), &parent, FORK_AT);
    write_fork(
        &proj,
        "2025-03-01T10-00-00-000Z_fork2.jsonl",
        "2025-03-01T09-00-00-000Z_siblings.jsonl",
        &parent,
        TIP_A,
    );
    write_fork(&proj, "2025-03-01T10-00-00-000Z_orphan.jsonl", "/nowhere/gone.jsonl", &parent, FORK_AT);
    let lib = LibraryState::open(lib_state::db_path_for(&e.data), vec![root.clone()]);
    lib.with_lib(|l| l.sync_roots(std::slice::from_ref(&root), &mut |_| {}).map(|_| ())).unwrap();
    let listing = lib_cmd::listing(&lib, &e.state, &ListingQuery::default()).unwrap();
    let row = |name: &str| listing.sessions.iter().find(|s| s.path.ends_with(name)).unwrap();
    let p = row("_siblings.jsonl");
    assert_eq!((p.fork_count, p.forked_from.is_none()), (2, true));
    let f = row("_fork.jsonl");
    assert_eq!(f.fork_count, 0);
    let from = f.forked_from.as_ref().unwrap();
    assert_eq!(from.path, parent.display().to_string());
    assert!(from.exists);
    assert!(from.name.as_deref().is_some_and(|n| n.starts_with("Metric window glob")), "{from:?}");
    let o = row("_orphan.jsonl").forked_from.as_ref().unwrap();
    assert_eq!((o.path.as_str(), o.exists, o.name.is_none()), ("/nowhere/gone.jsonl", false, true));
}
