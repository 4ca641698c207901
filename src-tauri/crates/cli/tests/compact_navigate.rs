//! The contract of compaction and navigation: for every conformance case with a compaction or a navigation,
//! `arbor-cli compact` / `arbor-cli navigate` (the real binary) against a loopback server of
//! each wire format write the same lines as Pi's simulation, once `id` and `timestamp` are
//! normalized (and `parentId`/`targetId` references to new ids follow the same mapping).
//!
//! The server answers `[oracle summary N]`, N numbered by call kind in Pi's order (history
//! before prefix), and checks each request: kind, output limit, and that the conversation part
//! has exactly the length of Pi's (prompt length minus instructions length, UTF-16 units).
//!
//! Details: Arbor adds `usage`, `tokensAfter` and `summarizer` to `details` after Pi's keys.
//! The byte-exact comparison runs with the CLI's default (no extras for model summaries); a second run per case (one
//! wire) keeps the extras on and compares with those keys removed.
#[path = "../../summarizer/tests/support/loopback.rs"]
mod loopback;

use loopback::{max_tokens_of, ok_answer, prompt_of, Fmt, Recorded, Script, Server, ALL_FMTS};
use pi_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use summarizer::prompts;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/conformance")
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("compact_navigate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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

struct Case {
    name: String,
    expected: Value,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".expected.json"))
        .collect();
    names.sort();
    for p in names {
        let text = std::fs::read_to_string(&p).unwrap();
        let expected = pi_json::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
        let name = p.file_name().unwrap().to_string_lossy().trim_end_matches(".expected.json").to_string();
        out.push(Case { name, expected });
    }
    out
}

fn opt_str(c: &Case, k: &str) -> Option<String> {
    c.expected.get("options").and_then(|o| o.get(k)).and_then(|v| match v {
        Value::Str(s) => Some(s.to_string()),
        Value::Num(n) => Some(pi_json::number_to_string(*n)),
        _ => None,
    })
}

fn sim<'a>(c: &'a Case, k: &str) -> Option<&'a Value> {
    c.expected.get("simulation").and_then(|s| s.get(k)).filter(|v| !matches!(v, Value::Null))
}

fn kind_of(prompt: &str) -> &'static str {
    if prompt.ends_with(prompts::TURN_PREFIX) {
        "compaction-turn-prefix"
    } else if prompt.contains(prompts::BRANCH) {
        "branch-summary"
    } else {
        "compaction-history"
    }
}

fn instructions_len(kind: &str, prompt: &str) -> usize {
    let text = match kind {
        "compaction-turn-prefix" => prompts::TURN_PREFIX,
        "branch-summary" => prompts::BRANCH,
        _ if prompt.contains("<previous-summary>\n") => prompts::UPDATE,
        _ => prompts::HISTORY,
    };
    text.encode_utf16().count()
}

/// A server for one simulation: answers by kind in Pi's order, records requests.
async fn server_for(fmt: Fmt, expected_kinds: Vec<String>) -> (Server, Arc<Mutex<Vec<String>>>) {
    let problems: Arc<Mutex<Vec<String>>> = Arc::default();
    let kinds = expected_kinds.clone();
    let server = Server::start(move |r: &Recorded, _| {
        let prompt = prompt_of(fmt, r);
        let k = kind_of(&prompt);
        match kinds.iter().position(|x| x == k) {
            Some(i) => ok_answer(fmt, r, &format!("[oracle summary {}]", i + 1)),
            None => Script::response(
                400,
                &[("x-should-retry", "false")],
                &format!("{{\"error\":{{\"message\":\"unexpected {k} call\"}}}}"),
            ),
        }
    })
    .await;
    (server, problems)
}

/// Checks the recorded requests against Pi's: same kinds, output limits and conversation size.
fn check_requests(label: &str, fmt: Fmt, server: &Server, expected: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let want: Vec<&Value> =
        expected.get("requests").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default();
    let got = server.requests();
    if got.len() != want.len() {
        errs.push(format!("{label}: {} request(s), Pi made {}", got.len(), want.len()));
        return errs;
    }
    for w in &want {
        let kind = w.str_field("kind").unwrap_or("");
        let Some(r) = got.iter().find(|r| kind_of(&prompt_of(fmt, r)) == kind) else {
            errs.push(format!("{label}: no {kind} request"));
            continue;
        };
        let prompt = prompt_of(fmt, r);
        let max = max_tokens_of(fmt, r);
        if Some(max as f64) != w.num_field("maxTokens") {
            errs.push(format!("{label}: {kind} maxTokens {max}, Pi {:?}", w.num_field("maxTokens")));
        }
        let ours = prompt.encode_utf16().count() - instructions_len(kind, &prompt);
        let pis = w.num_field("promptChars").unwrap_or(0.0) as usize
            - w.num_field("instructionsChars").unwrap_or(0.0) as usize;
        if ours != pis {
            errs.push(format!("{label}: {kind} conversation+envelope is {ours} UTF-16 units, Pi's is {pis}"));
        }
    }
    errs
}

const EXTRA_KEYS: [&str; 4] = ["usage", "tokensAfter", "summarizer", "offline"];

/// Normalizes our appended lines to Pi's ids and timestamps, optionally dropping Arbor's
/// extra `details` keys, and returns them as JSON text.
fn normalize(ours: &[String], pis: &[String], strip_extras: bool) -> Vec<String> {
    let pi_vals: Vec<Value> = pis.iter().map(|l| pi_json::parse(l).unwrap()).collect();
    let our_vals: Vec<Value> = ours.iter().map(|l| pi_json::parse(l).unwrap()).collect();
    let mut map: Vec<(String, String)> = Vec::new();
    for (o, p) in our_vals.iter().zip(pi_vals.iter()) {
        if let (Some(a), Some(b)) = (o.str_field("id"), p.str_field("id")) {
            map.push((a.to_string(), b.to_string()));
        }
    }
    let pi_ts = pi_vals.first().and_then(|p| p.str_field("timestamp")).unwrap_or("").to_string();
    our_vals
        .into_iter()
        .map(|v| {
            let Value::Obj(mut m) = v else { return String::new() };
            for (k, val) in m.0.iter_mut() {
                match k.as_str() {
                    "id" | "parentId" | "targetId" | "fromId" => {
                        if let Value::Str(s) = val {
                            if let Some((_, to)) = map.iter().find(|(from, _)| from == s) {
                                *s = to.as_str().into();
                            }
                        }
                    }
                    "timestamp" => *val = Value::from(pi_ts.as_str()),
                    "details" if strip_extras => {
                        if let Value::Obj(d) = val {
                            d.0.retain(|(dk, _)| !EXTRA_KEYS.contains(&dk.as_str()));
                        }
                    }
                    _ => {}
                }
            }
            pi_json::to_string(&Value::Obj(m))
        })
        .collect()
}

fn appended(file: &Path, before: usize) -> Vec<String> {
    let bytes = std::fs::read(file).unwrap();
    assert!(bytes.len() >= before, "the file shrank");
    String::from_utf8_lossy(&bytes[before..]).lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect()
}

fn lines_of(v: &Value) -> Vec<String> {
    v.get("appendedEntryLines")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|l| l.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn kinds_of(v: &Value) -> Vec<String> {
    v.get("requests")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|r| r.str_field("kind").map(str::to_string)).collect())
        .unwrap_or_default()
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

enum Sim {
    Compact,
    Navigate { summarize: bool },
}

/// Runs one simulation of one case on a fresh copy; returns the appended lines and output.
async fn simulate(
    case: &Case,
    sim_kind: &Sim,
    fmt: Option<Fmt>,
    extras: bool,
    dir: &Path,
    expected: &Value,
) -> (Vec<String>, Output, Option<Server>) {
    let file = dir.join(format!("{}.jsonl", case.name));
    std::fs::copy(fixtures().join(format!("{}.jsonl", case.name)), &file).unwrap();
    let _ = std::fs::remove_file(dir.join(format!("{}.jsonl.arbor-lock", case.name)));
    let before = std::fs::metadata(&file).unwrap().len() as usize;
    let mut cmd = bin(dir);
    match sim_kind {
        Sim::Compact => {
            cmd.arg("compact").arg(&file);
            for (flag, key) in [
                ("--context-window", "contextWindow"),
                ("--reserve-tokens", "reserveTokens"),
                ("--keep-recent-tokens", "keepRecentTokens"),
            ] {
                if let Some(v) = opt_str(case, key) {
                    cmd.args([flag, &v]);
                }
            }
        }
        Sim::Navigate { summarize } => {
            cmd.arg("navigate").arg(&file).args(["--target", &opt_str(case, "target").unwrap()]);
            if *summarize {
                cmd.arg("--summarize");
            }
            for (flag, key) in [
                ("--context-window", "contextWindow"),
                ("--branch-reserve-tokens", "branchReserveTokens"),
                ("--branch-budget", "branchBudget"),
                ("--label", "label"),
            ] {
                if let Some(v) = opt_str(case, key) {
                    cmd.args([flag, &v]);
                }
            }
        }
    }
    if let Some(l) = opt_str(case, "leaf") {
        cmd.args(["--leaf", &l]);
    }
    if let Some(ci) = opt_str(case, "customInstructions") {
        cmd.args(["--instructions", &ci]);
    }
    // Model runs write Pi's exact line by default; the extras run asks for them explicitly.
    if extras {
        cmd.env("ARBOR_DETAILS_EXTRAS", "1");
    }
    let server = match fmt {
        Some(f) => {
            let (server, _) = server_for(f, kinds_of(expected)).await;
            let base = if f == Fmt::OpenAi { server.base_v1() } else { server.base() };
            cmd.args(["--provider", f.provider(), "--model", "test-model", "--base-url", &base]);
            Some(server)
        }
        None => None,
    };
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    (appended(&file, before), out, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conformance_case_writes_pis_lines_through_each_wire_format() {
    let dir = scratch("all");
    let mut failures: Vec<String> = Vec::new();
    let mut checked = 0usize;
    let mut read_only = Vec::new();
    for case in cases() {
        for (sim_name, sim_kind) in [
            ("compact", Sim::Compact),
            ("navigateWithSummary", Sim::Navigate { summarize: true }),
            ("navigateWithoutSummary", Sim::Navigate { summarize: false }),
        ] {
            let Some(expected) = sim(&case, sim_name) else { continue };
            let pi_lines = lines_of(expected);
            let pi_ok = expected.get("ok").and_then(Value::as_bool) == Some(true);
            let uses_model = !kinds_of(expected).is_empty();
            let fmts: Vec<Option<Fmt>> =
                if matches!(sim_kind, Sim::Navigate { summarize: false }) || !uses_model && pi_lines.is_empty() {
                    vec![None]
                } else {
                    ALL_FMTS.iter().map(|f| Some(*f)).collect()
                };
            for fmt in fmts {
                let label = format!("{} {sim_name} {:?}", case.name, fmt);
                let (ours, out, server) = simulate(&case, &sim_kind, fmt, false, &dir, expected).await;
                checked += 1;
                let stderr = String::from_utf8_lossy(&out.stderr).to_string();
                if !pi_ok {
                    if out.status.success() || !ours.is_empty() {
                        failures.push(format!(
                            "{label}: Pi refused ({:?}) but Arbor wrote {ours:?}\n{}",
                            expected.str_field("error"),
                            show(&out)
                        ));
                    }
                    continue;
                }
                if !out.status.success() && stderr.contains("read-only") && !pi_lines.is_empty() {
                    // Pi migrates legacy files by rewriting them; Arbor never rewrites a session.
                    if !ours.is_empty() {
                        failures.push(format!("{label}: refused as read-only but wrote lines"));
                    }
                    read_only.push(label);
                    continue;
                }
                if !out.status.success() {
                    failures.push(format!("{label}: failed\n{}", show(&out)));
                    continue;
                }
                let norm = normalize(&ours, &pi_lines, false);
                if norm != pi_lines {
                    failures.push(format!("{label}: lines differ\n ours: {norm:?}\n pi:   {pi_lines:?}"));
                }
                if let Some(s) = &server {
                    failures.extend(check_requests(&label, fmt.unwrap(), s, expected));
                }
            }
            // Extras on (the default): same lines once Arbor's extra details keys are removed.
            if pi_ok && !pi_lines.is_empty() && !matches!(sim_kind, Sim::Navigate { summarize: false }) {
                let fmt = if uses_model { Some(Fmt::Anthropic) } else { None };
                let (ours, out, _) = simulate(&case, &sim_kind, fmt, true, &dir, expected).await;
                if out.status.success() {
                    let norm = normalize(&ours, &pi_lines, true);
                    if norm != pi_lines {
                        failures.push(format!("{} {sim_name} extras: lines differ once extras are removed\n ours: {norm:?}\n pi:   {pi_lines:?}", case.name));
                    }
                    if uses_model {
                        let first = pi_json::parse(&ours[0]).unwrap();
                        let d = first.get("details").cloned().unwrap_or_default();
                        if d.get("usage").is_none() || (sim_name == "compact" && d.get("tokensAfter").is_none()) {
                            failures
                                .push(format!("{} {sim_name}: extras missing from details: {}", case.name, ours[0]));
                        }
                    }
                }
            }
        }
    }
    eprintln!("checked {checked} simulation runs; read-only refusals (legacy files Pi would rewrite): {read_only:?}");
    assert!(checked > 100, "only {checked} runs");
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n\n"));
    // Its scratch copies stay only when it failed: CI keeps the target dir between runs, and
    // these had grown its tmp folder to 3.9 GB.
    std::fs::remove_dir_all(&dir).unwrap();
}
