//! The conformance corpus (Pi 0.73.1's own outputs) and generated cases, checked field by field.
//! Data: tests/fixtures/conformance (the shared corpus, copied) and tests/fixtures/random
//! (oracle runs on random sessions). Nothing outside this crate is read.

use pi_json::Value;
use session_engine::context::{AutoCompaction, CurrentModel};
use session_engine::report::{self, InspectOptions, SummaryKind};
use session_engine::session::{CounterIds, Session};
use std::path::{Path, PathBuf};

const SIM_CLOCK: &str = "2030-01-01T00:00:00.000Z";

/// Every `<case>.expected.json` (and `<case>.<variant>.expected.json`, another oracle run on
/// the same session with other options) with its session file `<case>.jsonl`.
fn fixtures(dir: &str) -> Vec<(PathBuf, PathBuf)> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir);
    let mut v: Vec<(PathBuf, PathBuf)> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.strip_suffix(".expected.json")?.to_string();
            let case = name.split('.').next()?.to_string();
            Some((d.join(format!("{case}.jsonl")), p))
        })
        .collect();
    v.sort();
    v
}

fn get<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for k in path.split('.') {
        cur = cur.get(k)?;
    }
    Some(cur)
}

/// Projects an array of objects onto the given keys.
fn project(v: Option<&Value>, keys: &[&str]) -> Option<Value> {
    let arr = v?.as_array()?;
    Some(Value::Arr(
        arr.iter()
            .map(|o| {
                Value::Obj(pi_json::Map(
                    keys.iter().filter_map(|k| o.get(k).map(|x| (pi_json::Key::new(k), x.clone()))).collect(),
                ))
            })
            .collect(),
    ))
}

fn cmp(errors: &mut Vec<String>, case: &str, field: &str, want: Option<Value>, got: Option<Value>) {
    if want != got {
        let w = want.map(|v| pi_json::to_string(&v)).unwrap_or_else(|| "<absent>".into());
        let g = got.map(|v| pi_json::to_string(&v)).unwrap_or_else(|| "<absent>".into());
        let cut = |s: &str| {
            if s.len() > 600 {
                format!("{}…", &s[..s.char_indices().nth(600).map(|x| x.0).unwrap_or(s.len())])
            } else {
                s.to_string()
            }
        };
        errors.push(format!("{case}: {field}\n   want {}\n   got  {}", cut(&w), cut(&g)));
    }
}

/// Replaces the simulation's ids and timestamps by placeholders, so lines compare by content.
fn normalize_lines(lines: &[String]) -> Vec<String> {
    lines.to_vec()
}

/// How much of Pi's appending a run compared: cases with a simulation section and the lines
/// Pi appended in them. A run that compared none of them passed without testing anything.
#[derive(Default)]
struct Tally {
    simulated_cases: usize,
    appended_lines: usize,
}

fn check_case(jsonl: &Path, exp_path: &Path, errors: &mut Vec<String>, tally: &mut Tally) {
    let name = exp_path.file_name().unwrap().to_string_lossy().trim_end_matches(".expected.json").to_string();
    let expected = pi_json::parse_bytes(&std::fs::read(exp_path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", exp_path.display()));
    let bytes = std::fs::read(jsonl).unwrap();
    let session = Session::from_bytes_with_ids(bytes.clone(), &mut CounterIds { prefix: 'a', next: 0 });
    let opts = InspectOptions::from_oracle_json(expected.get("options").unwrap());
    let got = match report::inspect(&session, &opts) {
        Ok(v) => v,
        Err(e) => {
            errors.push(format!("{name}: inspect failed: {e}"));
            return;
        }
    };
    let plain = [
        "load.headerAccepted",
        "load.entryCount",
        "load.fileLeafId",
        "load.sessionName",
        "load.labels",
        "load.roots",
        "load.malformedLines",
        "leafId",
        "activePath",
        "context.thinkingLevel",
        "context.model",
        "context.llmDigest",
        "tokens.estimate",
        "tokens.threshold",
        "tokens.shouldCompact",
        "compaction.prepared",
        "compaction.reason",
        "compaction.firstKeptEntryId",
        "compaction.isSplitTurn",
        "compaction.tokensBefore",
        "compaction.previousSummary",
        "compaction.readFiles",
        "compaction.modifiedFiles",
        "compaction.fileOpsAppendix",
        "compaction.serializedMessagesToSummarize",
        "compaction.serializedTurnPrefix",
        "compaction.fileOps",
        "branch.commonAncestorId",
        "branch.entriesToSummarize",
        "branch.tokenBudget",
        "branch.totalTokens",
        "branch.readFiles",
        "branch.modifiedFiles",
        "branch.serializedSelected",
        "branch.fileOpsAppendix",
    ];
    for f in plain {
        cmp(errors, &name, f, get(&expected, f).cloned(), get(&got, f).cloned());
    }
    cmp(
        errors,
        &name,
        "context.messages",
        project(get(&expected, "context.messages"), &["role", "entryId", "entryType", "estimatedTokens", "sha256"]),
        project(get(&got, "context.messages"), &["role", "entryId", "entryType", "estimatedTokens", "sha256"]),
    );
    for f in ["compaction.messagesToSummarize", "compaction.turnPrefixMessages", "branch.selectedMessages"] {
        cmp(
            errors,
            &name,
            f,
            project(get(&expected, f), &["entryId", "entryType", "role"]),
            project(get(&got, f), &["entryId", "entryType", "role"]),
        );
    }
    // Legacy files: the exact lines Pi would write back after migrating.
    if let Some(Value::Arr(lines)) = get(&expected, "load.migratedFileLines") {
        let want: Vec<Value> = lines.clone();
        let got_lines: Vec<Value> = session.migrated_lines().unwrap_or_default().into_iter().map(Value::from).collect();
        cmp(errors, &name, "load.migratedFileLines", Some(Value::Arr(want)), Some(Value::Arr(got_lines)));
    }
    // Round trip: every line of a current-version file is kept byte for byte.
    if session.read_only().is_none() {
        for i in 0..session.len() {
            let e = session.entry(i);
            if bytes[e.start as usize..e.end as usize] != *session.raw(i) {
                errors.push(format!("{name}: entry {} raw bytes differ from the file", session.id(i)));
            }
            // The line re-serialized with JSON.stringify semantics is the line itself when Pi wrote it.
            let line = session.raw(i);
            let raw = line.strip_suffix(b"\r").unwrap_or(&line);
            if pi_json::to_string(session.value(i)).as_bytes() != raw && !name.starts_with("load-") {
                errors.push(format!("{name}: entry {} does not re-serialize to its own bytes", session.id(i)));
            }
        }
    }
    check_simulations(&session, &name, &expected, &opts, errors, tally);
}

fn check_simulations(
    session: &Session,
    name: &str,
    expected: &Value,
    opts: &InspectOptions,
    errors: &mut Vec<String>,
    tally: &mut Tally,
) {
    let Some(sim) = expected.get("simulation") else { return };
    tally.simulated_cases += 1;
    let leaf = report::resolve_leaf(session, &opts.leaf).unwrap();
    let lines_of = |v: Option<&Value>| -> Vec<String> {
        v.and_then(|x| x.get("appendedEntryLines"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|l| l.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let counter = |prefix: char| {
        let mut n = 0;
        move || {
            n += 1;
            format!("{prefix}{n:07}")
        }
    };
    let summarizer = || {
        let mut n = 0;
        move |_k: SummaryKind| {
            n += 1;
            format!("[oracle summary {n}]")
        }
    };
    // Manual compaction.
    if let Some(c) = sim.get("compact") {
        let want = lines_of(Some(c));
        tally.appended_lines += want.len();
        let mut summ = summarizer();
        let got = match report::simulate_compaction(session, leaf, &opts.compaction, &mut summ, "c0000001", SIM_CLOCK) {
            Ok(e) => vec![pi_json::to_string(&e)],
            Err(msg) => {
                let want_err = c.str_field("error").unwrap_or("");
                if want_err != msg {
                    errors.push(format!("{name}: compact error: want {want_err:?} got {msg:?}"));
                }
                vec![]
            }
        };
        cmp(
            errors,
            name,
            "simulation.compact.appendedEntryLines",
            Some(strings(&normalize_lines(&want))),
            Some(strings(&got)),
        );
    }
    let model = sim.get("fakeModel").map(|m| CurrentModel {
        provider: m.str_field("provider").unwrap_or("").to_string(),
        id: m.str_field("modelId").unwrap_or("").to_string(),
        context_window: m.num_field("contextWindow").unwrap_or(opts.context_window),
    });
    let budget = opts.branch_budget_value();
    for (key, summarize, prefix) in [("navigateWithSummary", true, 'b'), ("navigateWithoutSummary", false, 'd')] {
        let Some(n) = sim.get(key) else { continue };
        let target = session.index_of(opts.target.as_deref().unwrap()).unwrap();
        let mut summ = summarizer();
        let mut ids = counter(prefix);
        let nav = report::navigate(
            session,
            leaf,
            target,
            summarize,
            budget,
            opts.label.as_deref(),
            &mut summ,
            &mut ids,
            SIM_CLOCK,
        );
        let got: Vec<String> = nav.appended.iter().map(pi_json::to_string).collect();
        tally.appended_lines += lines_of(Some(n)).len();
        cmp(
            errors,
            name,
            &format!("simulation.{key}.appendedEntryLines"),
            Some(strings(&lines_of(Some(n)))),
            Some(strings(&got)),
        );
        let want_editor = n.get("result").and_then(|r| r.get("editorText")).cloned().unwrap_or(Value::Null);
        cmp(
            errors,
            name,
            &format!("simulation.{key}.editorText"),
            Some(want_editor),
            Some(nav.editor_text.map(Value::from).unwrap_or(Value::Null)),
        );
        let want_leaf = n.get("after").and_then(|a| a.get("leafId")).cloned();
        if want_leaf.is_some() {
            cmp(
                errors,
                name,
                &format!("simulation.{key}.after.leafId"),
                want_leaf,
                Some(nav.leaf_id.map(Value::from).unwrap_or(Value::Null)),
            );
        }
    }
    if let Some(p) = sim.get("prePromptAutoCompaction") {
        let decision = report::pre_prompt_check(session, leaf, model.as_ref(), &opts.compaction);
        let want = p.get("triggered").cloned().unwrap_or(Value::Null);
        cmp(
            errors,
            name,
            "simulation.prePromptAutoCompaction.triggered",
            Some(want),
            Some(decision.map(|d| Value::Str(d.as_str().into())).unwrap_or(Value::Null)),
        );
        let mut got = Vec::new();
        if matches!(decision, Some(AutoCompaction::Threshold | AutoCompaction::Overflow)) {
            let mut summ = summarizer();
            if let Ok(e) =
                report::simulate_compaction(session, leaf, &opts.compaction, &mut summ, "f0000001", SIM_CLOCK)
            {
                got.push(pi_json::to_string(&e));
            }
        }
        tally.appended_lines += lines_of(Some(p)).len();
        cmp(
            errors,
            name,
            "simulation.prePromptAutoCompaction.appendedEntryLines",
            Some(strings(&lines_of(Some(p)))),
            Some(strings(&got)),
        );
    }
}

fn strings(v: &[String]) -> Value {
    Value::Arr(v.iter().map(|s| Value::from(s.as_str())).collect())
}

fn run_dir(dir: &str, min_cases: usize, min_simulated: usize, min_lines: usize) {
    let files = fixtures(dir);
    assert!(files.len() >= min_cases, "expected at least {min_cases} cases in {dir}, found {}", files.len());
    let mut errors = Vec::new();
    let mut tally = Tally::default();
    for (jsonl, expected) in &files {
        check_case(jsonl, expected, &mut errors, &mut tally);
    }
    if !errors.is_empty() {
        panic!("{} mismatches in {} cases of {dir}:\n{}", errors.len(), files.len(), errors.join("\n"));
    }
    eprintln!(
        "{dir}: {} cases agree with Pi ({} with simulations, {} appended lines compared)",
        files.len(),
        tally.simulated_cases,
        tally.appended_lines
    );
    assert!(
        tally.simulated_cases >= min_simulated,
        "{dir}: only {} cases had a simulation section (expected {min_simulated})",
        tally.simulated_cases
    );
    assert!(
        tally.appended_lines >= min_lines,
        "{dir}: only {} appended lines compared (expected {min_lines})",
        tally.appended_lines
    );
}

#[test]
fn conformance_corpus_matches_pi() {
    run_dir("conformance", 46, 45, 50);
}

/// Sessions the `pi` program itself wrote (print and RPC mode, tool calls run by Pi, automatic
/// compactions at the threshold of a 13k custom model, split turns, a manual compaction with
/// instructions, a branch summary), recorded by `tests/pi/record/record.mjs`.
#[test]
fn sessions_the_real_pi_agent_wrote_match_pi() {
    run_dir("real-pi", 3, 3, 3);
}

#[test]
fn random_oracle_cases_match_pi() {
    run_dir("random", 30, 30, 70);
}

/// The cut alone (`first_kept_position`, what a leaf move computes for the graph) is the cut of
/// the full preparation, for entries of every corpus and random session taken as the leaf (every one of a small
/// session),
/// at budgets from nothing kept to more than the session holds.
#[test]
fn the_cut_alone_is_the_preparations_cut_at_every_leaf() {
    use session_engine::compaction::{first_kept_position, prepare_compaction};
    use session_engine::context::CompactionSettings;
    let (mut compared, mut cuts, mut refusals) = (0, 0, 0);
    for (jsonl, _) in fixtures("conformance").into_iter().chain(fixtures("random")).chain(fixtures("real-pi")) {
        let session =
            Session::from_bytes_with_ids(std::fs::read(&jsonl).unwrap(), &mut CounterIds { prefix: 'a', next: 0 });
        // Every leaf of a small session, about 60 spread over a big one (the test runs unoptimized).
        for leaf in (0..session.len()).step_by(session.len().div_ceil(60).max(1)) {
            let path = session.path(Some(leaf));
            for keep in [0.0, 150.0, 2000.0, 20000.0, 1e9] {
                let settings = CompactionSettings { keep_recent_tokens: keep, ..CompactionSettings::default() };
                let full = prepare_compaction(&session, &path, &settings).ok().map(|p| p.first_kept_position);
                assert_eq!(
                    first_kept_position(&session, &path, keep),
                    full,
                    "{} leaf {leaf} keep {keep}",
                    jsonl.display()
                );
                compared += 1;
                if full.is_some() {
                    cuts += 1;
                } else {
                    refusals += 1;
                }
            }
        }
    }
    eprintln!("{compared} cuts compared ({cuts} cuts, {refusals} refusals)");
    assert!(cuts > 1000 && refusals > 10, "too few of each kind: {cuts} cuts, {refusals} refusals");
}
