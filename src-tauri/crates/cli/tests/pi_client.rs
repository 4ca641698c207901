//! Pi as the real client of every kind of write `arbor-cli` makes: whatever Arbor writes, Pi must
//! load and go on appending to.
//!
//! Each case copies a conformance fixture, makes one write through the real binary, and then
//! checks the result with Pi itself (tests/pi/pi-check.mjs, Pi 0.73.1 from scripts/setup.sh):
//! Pi loads the file with no skipped line; Pi's leaf, context (roles, texts, message bytes) and
//! token estimate equal Arbor's; Pi appends a user message and a reply through its own
//! SessionManager, and Arbor, holding the file open, reads Pi's append with `extend_from_file`.
//!
//! A new kind of write gets its test here: one more `#[test]` that makes the write and calls
//! [`check_write`] with the entry types it must have appended.
#[path = "../../summarizer/tests/support/loopback.rs"]
mod loopback;
#[path = "support/pi.rs"]
mod pi;

use loopback::{ok_answer, Fmt, Server};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../session-engine/tests/fixtures/conformance/{name}.jsonl"))
}

/// A fresh folder and a copy of `fixture` in it.
fn setup(case: &str, fixture_name: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pi_client-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{fixture_name}.jsonl"));
    std::fs::copy(fixture(fixture_name), &file).unwrap();
    (dir, file)
}

fn bin(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor-cli"));
    c.env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .env("ARBOR_SETTINGS", dir.join("arbor-settings.json"))
        .env("ARBOR_KEYRING", "off")
        .env("OPENAI_API_KEY", "sk-test-openai")
        .env("ANTHROPIC_API_KEY", "sk-test-anthropic")
        .env("GEMINI_API_KEY", "test-gemini")
        .env_remove("ARBOR_DETAILS_EXTRAS");
    c
}

/// Runs the CLI and returns its stdout (trimmed); the write must succeed.
fn arbor(dir: &Path, file: &Path, args: &[&str]) -> String {
    let mut c = bin(dir);
    // The file follows the (sub)command words: `compact FILE …`, `summary edit FILE …`.
    let words = if args[0] == "summary" { 2 } else { 1 };
    c.args(&args[..words]).arg(file).args(&args[words..]);
    let o: Output = c.output().unwrap();
    assert!(o.status.success(), "arbor-cli {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

async fn arbor_async(dir: &Path, file: &Path, args: Vec<String>) -> String {
    let (dir, file) = (dir.to_path_buf(), file.to_path_buf());
    tokio::task::spawn_blocking(move || arbor(&dir, &file, &args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .unwrap()
}

/// The types of the entries appended after the first `before` bytes (complete lines only).
fn appended_types(file: &Path, before: usize) -> Vec<String> {
    let bytes = std::fs::read(file).unwrap();
    let added = std::str::from_utf8(&bytes[before..]).expect("appended bytes are UTF-8");
    assert!(added.is_empty() || added.ends_with('\n'), "the write left an unterminated line: {added:?}");
    added
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].as_str().unwrap().to_string())
        .collect()
}

/// The checks every write gets. `before` is the file's length before the write, `types` the
/// entry types the write must have appended, `leaf` the leaf Arbor reported. Returns Pi's view
/// of the file right after the write (before Pi's own append).
fn check_write(case: &str, file: &Path, before: usize, types: &[&str], leaf: &str) -> Option<pi::View> {
    assert_eq!(appended_types(file, before), types, "{case}: what the write appended");
    if !pi::pi_or_skip(case) {
        return None;
    }
    let view = pi::assert_pi_agrees(file, None);
    assert_eq!(view.leaf_id.as_deref(), Some(leaf), "{case}: Pi's leaf is not the one Arbor reported");
    pi::assert_arbor_reads_pi_append(file);
    Some(view)
}

fn len(file: &Path) -> usize {
    std::fs::metadata(file).unwrap().len() as usize
}

// ---- Compaction ----------------------------------------------------------------------------

#[test]
fn compaction_offline() {
    let (dir, file) = setup("compact-offline", "cut-over-threshold-basic");
    let before = len(&file);
    let id = arbor(
        &dir,
        &file,
        &["compact", "--context-window", "48000", "--reserve-tokens", "8000", "--keep-recent-tokens", "12000"],
    );
    let Some(v) = check_write("compaction_offline", &file, before, &["compaction"], &id) else { return };
    assert_eq!(v.messages[0].role, "compactionSummary");
    assert!(v.messages[0].text.starts_with("## Goal\n"), "{}", v.messages[0].text);
}

#[test]
fn compaction_offline_over_a_previous_compaction() {
    let (dir, file) = setup("compact-again", "compaction-repeated");
    let before = len(&file);
    let id = arbor(&dir, &file, &["compact", "--keep-recent-tokens", "2000"]);
    check_write("compaction_offline_over_a_previous_compaction", &file, before, &["compaction"], &id);
}

async fn compaction_through(fmt: Fmt) {
    let case = format!("compaction_{}", fmt.provider());
    let (dir, file) = setup(&case, "basic-tool-chain");
    let summary = format!("## Goal\nSummary written by the {} loopback model ✓", fmt.provider());
    let s2 = summary.clone();
    let server = Server::start(move |r, _| ok_answer(fmt, r, &s2)).await;
    let base = if fmt == Fmt::OpenAi { server.base_v1() } else { server.base() };
    let before = len(&file);
    let args =
        ["compact", "--keep-recent-tokens", "800", "--provider", fmt.provider(), "--model", "m", "--base-url", &base];
    let id = arbor_async(&dir, &file, args.iter().map(|s| s.to_string()).collect()).await;
    assert!(server.count() >= 1, "the model was asked");
    let Some(v) = check_write(&case, &file, before, &["compaction"], &id) else { return };
    assert_eq!(v.messages[0].role, "compactionSummary");
    assert!(v.messages[0].text.starts_with(&summary), "Pi sees the model's summary: {}", v.messages[0].text);
}

#[tokio::test]
async fn compaction_openai() {
    compaction_through(Fmt::OpenAi).await;
}

#[tokio::test]
async fn compaction_anthropic() {
    compaction_through(Fmt::Anthropic).await;
}

#[tokio::test]
async fn compaction_gemini() {
    compaction_through(Fmt::Gemini).await;
}

/// `--ledger`: the model's summary with an `## Artifacts` section; Pi shows it as summary text.
#[tokio::test]
async fn compaction_with_the_artifact_ledger() {
    let case = "compaction_with_the_artifact_ledger";
    let (dir, file) = setup("compact-ledger", "basic-tool-chain");
    let server = Server::start(|r, _| ok_answer(Fmt::OpenAi, r, "## Goal\nA terse summary")).await;
    let before = len(&file);
    let base = server.base_v1();
    let args = [
        "compact",
        "--keep-recent-tokens",
        "800",
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        &base,
        "--ledger",
    ];
    let id = arbor_async(&dir, &file, args.iter().map(|s| s.to_string()).collect()).await;
    let Some(v) = check_write(case, &file, before, &["compaction"], &id) else { return };
    assert_eq!(v.messages[0].role, "compactionSummary");
    let text = &v.messages[0].text;
    assert!(text.starts_with("## Goal\nA terse summary"), "{text}");
    assert!(text.contains("\n\n## Artifacts\n") && text.contains("\n- ran `"), "Pi sees the ledger: {text}");
}

/// `navigate --summarize --ledger`: the branch summary with the ledger of the branch left.
#[tokio::test]
async fn navigation_with_a_branch_summary_and_the_artifact_ledger() {
    let case = "navigation_with_a_branch_summary_and_the_artifact_ledger";
    let (dir, file) = setup("nav-ledger", NAV_FIXTURE);
    let server = Server::start(|r, _| ok_answer(Fmt::OpenAi, r, "## Goal\nA terse branch summary")).await;
    let before = len(&file);
    let base = server.base_v1();
    let args = ["navigate", "--target", NAV_TARGET, "--summarize", "--ledger", "--provider", "openai", "--model", "m"];
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.extend(["--base-url".to_string(), base]);
    let leaf = arbor_async(&dir, &file, args).await;
    let Some(v) = check_write(case, &file, before, &["branch_summary"], &leaf) else { return };
    let text = &v.messages.iter().find(|m| m.role == "branchSummary").expect("Pi shows the branch summary").text;
    assert!(text.contains("A terse branch summary\n\n## Artifacts\n"), "Pi sees the ledger: {text}");
}

// ---- Navigation ----------------------------------------------------------------------------

/// branch-simple-siblings: 55732918 is on a branch off the file's leaf.
const NAV_FIXTURE: &str = "branch-simple-siblings";
const NAV_TARGET: &str = "55732918";

#[test]
fn navigation_without_summary_writes_nothing_and_pi_agrees_at_the_new_leaf() {
    let case = "navigation_without_summary";
    let (dir, file) = setup("nav-plain", NAV_FIXTURE);
    let bytes = std::fs::read(&file).unwrap();
    let leaf = arbor(&dir, &file, &["navigate", "--target", NAV_TARGET]);
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "as in Pi, a move without summary or label stays in memory");
    if !pi::pi_or_skip(case) {
        return;
    }
    // The leaf Arbor moved to is one Pi computes the same context for.
    let v = pi::assert_pi_agrees(&file, Some(&leaf));
    assert_eq!(v.leaf_id.as_deref(), Some(leaf.as_str()));
}

#[test]
fn navigation_with_label() {
    let (dir, file) = setup("nav-label", NAV_FIXTURE);
    let before = len(&file);
    let leaf = arbor(&dir, &file, &["navigate", "--target", NAV_TARGET, "--label", "back here ✓"]);
    let Some(v) = check_write("navigation_with_label", &file, before, &["label"], &leaf) else { return };
    assert!(v.labels.iter().any(|(_, l)| l == "back here ✓"), "Pi sees the label: {:?}", v.labels);
}

#[test]
fn navigation_with_offline_branch_summary() {
    let (dir, file) = setup("nav-summary", NAV_FIXTURE);
    let before = len(&file);
    let leaf = arbor(&dir, &file, &["navigate", "--target", NAV_TARGET, "--summarize"]);
    let Some(v) = check_write("navigation_with_offline_branch_summary", &file, before, &["branch_summary"], &leaf)
    else {
        return;
    };
    assert_eq!(v.messages.last().unwrap().role, "branchSummary", "the summary closes Pi's context");
}

#[test]
fn navigation_with_branch_summary_and_label() {
    let (dir, file) = setup("nav-summary-label", NAV_FIXTURE);
    let before = len(&file);
    let leaf = arbor(&dir, &file, &["navigate", "--target", NAV_TARGET, "--summarize", "--label", "summarized"]);
    let Some(v) =
        check_write("navigation_with_branch_summary_and_label", &file, before, &["branch_summary", "label"], &leaf)
    else {
        return;
    };
    assert!(v.messages.iter().any(|m| m.role == "branchSummary"));
    assert!(v.labels.iter().any(|(_, l)| l == "summarized"), "{:?}", v.labels);
}

#[tokio::test]
async fn navigation_with_model_branch_summary() {
    let (dir, file) = setup("nav-summary-openai", NAV_FIXTURE);
    let server = Server::start(|r, _| ok_answer(Fmt::OpenAi, r, "The branch tried a retry loop and left it.")).await;
    let before = len(&file);
    let args = [
        "navigate",
        "--target",
        NAV_TARGET,
        "--summarize",
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        &server.base_v1(),
    ];
    let leaf = arbor_async(&dir, &file, args.iter().map(|s| s.to_string()).collect()).await;
    let Some(v) = check_write("navigation_with_model_branch_summary", &file, before, &["branch_summary"], &leaf) else {
        return;
    };
    let last = v.messages.last().unwrap();
    assert_eq!(last.role, "branchSummary");
    assert!(
        last.text.contains("\n\nThe branch tried a retry loop and left it."),
        "Pi sees the model's summary after its preamble: {}",
        last.text
    );
}

// ---- Labels (arbor-cli label) ----------------------------------------------------------------

#[test]
fn label_set_and_clear() {
    let case = "label_set_and_clear";
    let (dir, file) = setup("label", "basic-tool-chain");
    let target = {
        let session = session_engine::Session::open(&file).unwrap();
        session.id(session.file_leaf().unwrap() - 3).to_string()
    };
    let before = len(&file);
    let out = arbor(&dir, &file, &["label", "--entry", &target, "--text", "checkpoint ✓", "--json"]);
    let id = serde_json::from_str::<serde_json::Value>(&out).unwrap()["entryId"].as_str().unwrap().to_string();
    let Some(v) = check_write(case, &file, before, &["label"], &id) else { return };
    assert_eq!(v.labels, vec![(target.clone(), "checkpoint ✓".to_string())]);
    // Clearing, on top of Pi's own append.
    let before = len(&file);
    let out = arbor(&dir, &file, &["label", "--entry", &target, "--clear", "--json"]);
    let id = serde_json::from_str::<serde_json::Value>(&out).unwrap()["entryId"].as_str().unwrap().to_string();
    let v = check_write(case, &file, before, &["label"], &id).unwrap();
    assert!(v.labels.is_empty(), "Pi still sees a label: {:?}", v.labels);
}

// ---- The checks themselves can fail --------------------------------------------------------

/// A torn line, a changed message and a moved leaf are all seen: the agreement checks above are
/// not vacuous.
#[test]
fn the_checks_see_a_torn_line_a_changed_message_and_a_moved_leaf() {
    let case = "the_checks_can_fail";
    let (_dir, file) = setup("checks", "basic-tool-chain");
    // Pi's view; when Pi cannot run here (a loud skip), Arbor's, so the checks are still tried.
    let pi_runs = pi::pi_or_skip(case);
    let view = |leaf: Option<&str>| if pi_runs { pi::pi_view(&file, leaf) } else { pi::arbor_view(&file, leaf) };
    let good = view(None);
    let mut changed = pi::arbor_view(&file, None);
    assert_eq!(pi::first_difference(&good, &changed), None);
    changed.messages[2].text.push('!');
    assert!(pi::first_difference(&good, &changed).unwrap().contains("context message 2"));
    let session = session_engine::Session::open(&file).unwrap();
    let other_leaf = session.id(session.file_leaf().unwrap() - 1).to_string();
    assert!(pi::first_difference(&good, &pi::arbor_view(&file, Some(&other_leaf))).unwrap().starts_with("leaf_id"));
    // A torn last line: both sides skip exactly it.
    let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"message\",\"id\":\"torn").unwrap();
    let torn = view(None);
    assert_eq!(torn.skipped_lines, 1, "Pi skips the torn line");
    assert_eq!(pi::arbor_view(&file, None).skipped_lines, 1, "Arbor skips the torn line");
    assert_eq!(pi::first_difference(&torn, &pi::arbor_view(&file, None)), None);
}

// ---- Summary edit and revert (arbor-cli summary) -----------------------------------------------

fn entry_id_of(json_out: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json_out).unwrap()["entryId"].as_str().unwrap().to_string()
}

#[test]
fn summary_edit_and_revert() {
    let case = "summary_edit_and_revert";
    let (dir, file) = setup("summary-edit", "basic-tool-chain");
    let original = arbor(&dir, &file, &["compact", "--keep-recent-tokens", "800"]);
    if !pi::pi_or_skip(case) {
        return;
    }
    let compacted = pi::assert_pi_agrees(&file, None);
    assert_eq!(compacted.messages[0].role, "compactionSummary");

    // Edit: Pi's context opens with the edited text, then the same verbatim messages.
    let edited_text = "## Goal\nThe edited goal, written by hand ✓\n\n## Decisions\n- keep the retry mutex";
    let text_file = dir.join("edited.md");
    std::fs::write(&text_file, edited_text).unwrap();
    let before = len(&file);
    let edited = entry_id_of(&arbor(
        &dir,
        &file,
        &["summary", "edit", "--entry", &original, "--text-file", text_file.to_str().unwrap(), "--json"],
    ));
    assert_eq!(appended_types(&file, before), ["compaction"]);
    let v = pi::assert_pi_agrees(&file, None);
    assert_eq!(v.leaf_id.as_deref(), Some(edited.as_str()));
    assert_eq!(v.messages[0].role, "compactionSummary");
    assert!(
        v.messages[0].text.starts_with(edited_text),
        "Pi's context opens with the edited summary: {:?}",
        v.messages[0].text
    );
    assert_eq!(
        v.messages[1..],
        compacted.messages[1..],
        "the messages after the summary are the same as before the edit"
    );

    // Revert: the original text again, the same messages.
    let before = len(&file);
    let reverted = entry_id_of(&arbor(&dir, &file, &["summary", "revert", "--entry", &edited, "--json"]));
    assert_eq!(appended_types(&file, before), ["compaction"]);
    let v = pi::assert_pi_agrees(&file, None);
    assert_eq!(v.leaf_id.as_deref(), Some(reverted.as_str()));
    assert_eq!(v.messages[0].text, compacted.messages[0].text, "the original summary is back");
    assert_eq!(v.messages[1..], compacted.messages[1..]);
    pi::assert_arbor_reads_pi_append(&file);
}

// ---- Session name (arbor-cli rename) ---------------------------------------------------------

#[test]
fn rename_sets_the_name_pi_shows() {
    let case = "rename_sets_the_name_pi_shows";
    let (dir, file) = setup("rename", "basic-labels-and-names");
    let before = len(&file);
    let id = entry_id_of(&arbor(&dir, &file, &["rename", "--name", "Retry loop rework ✓ <b>", "--json"]));
    let Some(v) = check_write(case, &file, before, &["session_info"], &id) else { return };
    assert_eq!(v.name.as_deref(), Some("Retry loop rework ✓ <b>"), "Pi shows the new name");
    // Renaming again, on top of Pi's own append: the latest name wins, for Pi as for Arbor.
    let before = len(&file);
    let id = entry_id_of(&arbor(&dir, &file, &["rename", "--name", "  second name  ", "--json"]));
    let v = check_write(case, &file, before, &["session_info"], &id).unwrap();
    assert_eq!(v.name.as_deref(), Some("second name"), "Pi trims the name, and so does the entry");
}

// ---- Save as v3 copy (arbor-cli migrate) -------------------------------------------------------

/// Migrates a legacy fixture to a new file: the original's bytes do not change, Pi reads the
/// copy as version 3 with no skipped line, with the same context (roles, texts, message bytes)
/// and token estimate as the original, Arbor agrees with Pi on the copy and opens it writable,
/// and Pi appends to the copy without rewriting it.
fn migrate_case(case: &str, fixture_name: &str) {
    let (dir, file) = setup(case, fixture_name);
    let original = std::fs::read(&file).unwrap();
    let copy = dir.join("copy-v3.jsonl");
    let mut c = bin(&dir);
    let o = c.args(["migrate"]).arg(&file).arg("--out").arg(&copy).output().unwrap();
    assert!(o.status.success(), "migrate failed: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&file).unwrap(), original, "the original is never changed");
    let header: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&copy).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["version"], 3);
    let session = session_engine::Session::open(&copy).unwrap();
    assert!(
        session.read_only().is_none() && !session.migrated(),
        "Arbor opens the copy as a writable v3 session: {:?}",
        session.read_only()
    );
    if !pi::pi_or_skip(case) {
        return;
    }
    let pi_original = pi::pi_view(&file, None);
    let pi_copy = pi::assert_pi_agrees(&copy, None);
    assert_eq!(pi_copy.messages, pi_original.messages, "Pi's context of the copy is the original's");
    assert_eq!(pi_copy.tokens, pi_original.tokens, "Pi's estimate of the copy is the original's");
    assert_eq!(
        (pi_copy.entries, &pi_copy.name, &pi_copy.model),
        (pi_original.entries, &pi_original.name, &pi_original.model)
    );
    assert_eq!(std::fs::read(&file).unwrap(), original, "Pi's loads did not touch the original");
    pi::assert_arbor_reads_pi_append(&copy);
}

#[test]
fn migrate_v1_to_a_v3_copy() {
    migrate_case("migrate_v1_to_a_v3_copy", "load-v1-legacy");
}

#[test]
fn migrate_v2_to_a_v3_copy() {
    migrate_case("migrate_v2_to_a_v3_copy", "load-v2-hookmessage");
}
