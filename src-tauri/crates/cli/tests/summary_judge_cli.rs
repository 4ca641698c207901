//! `arbor-cli summary score --judge PROVIDER/MODEL` through the real binary, against a loopback
//! server of each wire format, on a session the real `pi` wrote. The server plays a judge with
//! fixed habits: it says "not in the summary" to questions about files, answers everything else
//! from the summary it was sent (its first line), and grades answers to continuation questions
//! PARTIAL, "not in the summary" WRONG and the rest CORRECT. The expected counts are worked out
//! here from the offline probes and the file's lines (the most recent 8 of each kind), so the
//! JSON is checked number by number; the offline part must stay exactly as without `--judge`.
#[path = "../../summarizer/tests/support/loopback.rs"]
mod loopback;

use loopback::{ok_answer, prompt_of, Fmt, Recorded, Server, ALL_FMTS};
use serde_json::Value as J;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PER_KIND: usize = 8;
const KINDS: [&str; 4] = ["recall", "artifact", "decision", "continuation"];

fn recording() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-engine/tests/fixtures/real-pi/print-autocompact.jsonl")
}

fn lines() -> Vec<J> {
    std::fs::read_to_string(recording()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("summary_judge_cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn bin(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor-cli"));
    c.env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .env("ARBOR_SETTINGS", dir.join("arbor-settings.json"))
        .env("ARBOR_KEYRING", "off")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("GEMINI_API_KEY");
    c
}

async fn output(mut c: Command) -> Output {
    tokio::task::spawn_blocking(move || c.output().unwrap()).await.unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The text between `<tag>` and `</tag>` lines of a prompt.
fn tagged(prompt: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>\n");
    let close = format!("\n</{tag}>");
    let a = prompt.find(&open)? + open.len();
    let b = a + prompt[a..].find(&close)?;
    Some(prompt[a..b].to_string())
}

fn is_file_question(q: &str) -> bool {
    q.starts_with("Which file was")
}

fn is_continuation_question(q: &str) -> bool {
    q == "What was the user's last request before the cut?" || q == "What was the agent doing at the cut?"
}

fn judge_text(fmt: Fmt, r: &Recorded) -> String {
    let p = prompt_of(fmt, r);
    let q = tagged(&p, "question").unwrap_or_default();
    if let Some(summary) = tagged(&p, "summary") {
        if is_file_question(&q) {
            return "not in the summary".into();
        }
        return format!("From the summary: {}", summary.lines().next().unwrap_or(""));
    }
    let answer = tagged(&p, "answer").unwrap_or_default();
    match tagged(&p, "expected-answer") {
        None => "neither an answer nor a grade request".into(),
        Some(_) if answer == "not in the summary" => "WRONG\nthe summary did not say".into(),
        Some(_) if is_continuation_question(&q) => "PARTIAL\nonly the gist".into(),
        Some(_) => "CORRECT\nit matches".into(),
    }
}

#[tokio::test]
async fn score_with_a_judge_prints_its_score_apart_from_the_offline_one() {
    let all = lines();
    let compaction = all.iter().find(|e| e["type"] == "compaction").unwrap();
    let id = compaction["id"].as_str().unwrap();
    let summary = compaction["summary"].as_str().unwrap();
    let file = recording();
    let dir = scratch("json");

    let mut c = bin(&dir);
    c.args(["summary", "score"]).arg(&file).args(["--entry", id, "--json"]);
    let offline: J = serde_json::from_str(&ok(&output(c).await)).unwrap();
    assert!(offline.get("judge").is_none(), "no judge without --judge");

    // The probes the judge must get: the offline ones in the file's order (stable), the last 8
    // of each kind.
    let pos = |id: &str| all.iter().position(|e| e["id"] == id).unwrap();
    let mut ordered: Vec<J> = offline["probes"].as_array().unwrap().clone();
    ordered.sort_by_key(|p| pos(p["sourceEntryId"].as_str().unwrap()));
    let mut want: Vec<J> = Vec::new();
    for p in &ordered {
        let kind = p["kind"].as_str().unwrap();
        let later = ordered.iter().skip_while(|x| !std::ptr::eq(*x, p)).skip(1).filter(|x| x["kind"] == kind).count();
        if later < PER_KIND {
            want.push(p.clone());
        }
    }
    let q = |p: &J| p["question"].as_str().unwrap().to_string();
    assert!(want.iter().any(|p| is_file_question(&q(p))), "some judged probe gets a WRONG");
    assert!(want.iter().any(|p| is_continuation_question(&q(p))), "some judged probe gets a PARTIAL");
    assert!(
        offline["byKind"]["artifact"]["probes"].as_u64().unwrap() > PER_KIND as u64,
        "the recording must have more probes of a kind than the judge asks, to test the bound"
    );

    for fmt in ALL_FMTS {
        let server = Server::start(move |r, _| ok_answer(fmt, r, &judge_text(fmt, r))).await;
        let base = if fmt == Fmt::OpenAi { server.base_v1() } else { server.base() };
        let spec = format!("{}/judge-model", fmt.provider());
        let mut c = bin(&dir);
        let key_var = match fmt {
            Fmt::OpenAi => "OPENAI_API_KEY",
            Fmt::Anthropic => "ANTHROPIC_API_KEY",
            Fmt::Gemini => "GEMINI_API_KEY",
        };
        c.env(key_var, "sk-judge-test");
        c.args(["summary", "score"]).arg(&file).args(["--entry", id, "--json", "--judge", &spec, "--base-url", &base]);
        let got: J = serde_json::from_str(&ok(&output(c).await)).unwrap();

        // The offline part is what it was without the judge.
        let mut without = got.clone();
        without.as_object_mut().unwrap().remove("judge");
        assert_eq!(without, offline, "{fmt:?}");

        let j = &got["judge"];
        assert_eq!(j["provider"], fmt.provider());
        assert_eq!(j["model"], "judge-model");
        let probes = j["probes"].as_array().unwrap();
        assert_eq!(probes.len(), want.len(), "{fmt:?}");
        for (p, w) in probes.iter().zip(&want) {
            for key in ["kind", "question", "expected", "sourceEntryId"] {
                assert_eq!(p[key], w[key], "{fmt:?} {key}");
            }
            let q = p["question"].as_str().unwrap();
            let (verdict, answer) = if is_file_question(q) {
                ("wrong", "not in the summary".to_string())
            } else if is_continuation_question(q) {
                ("partial", format!("From the summary: {}", summary.lines().next().unwrap()))
            } else {
                ("correct", format!("From the summary: {}", summary.lines().next().unwrap()))
            };
            assert_eq!(p["verdict"], verdict, "{fmt:?} {q}");
            assert_eq!(p["answer"], answer.as_str(), "{fmt:?} {q}");
            assert!(!p["reason"].as_str().unwrap().is_empty());
        }

        // byKind and score, counted here: CORRECT answers, PARTIAL half in the score only.
        let mut shares = Vec::new();
        for kind in KINDS {
            let of: Vec<&J> = want.iter().filter(|p| p["kind"] == kind).collect();
            let q = |p: &&&J| p["question"].as_str().unwrap().to_string();
            let correct = of.iter().filter(|p| !is_file_question(&q(p)) && !is_continuation_question(&q(p))).count();
            let partial = of.iter().filter(|p| is_continuation_question(&q(p))).count();
            assert_eq!(j["byKind"][kind]["probes"], of.len(), "{fmt:?} {kind}");
            assert_eq!(j["byKind"][kind]["answered"], correct, "{fmt:?} {kind}");
            assert!(of.len() <= PER_KIND);
            if !of.is_empty() {
                shares.push((correct as f64 + partial as f64 / 2.0) / of.len() as f64);
            }
        }
        let score = (shares.iter().sum::<f64>() / shares.len() as f64 * 1000.0).round() / 1000.0;
        assert_eq!(j["score"].as_f64(), Some(score), "{fmt:?}");

        // Two calls per judged probe: the answer call carries the summary and the question, the
        // grade call the expected answer.
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2 * want.len(), "{fmt:?}");
        let prompts: Vec<String> = reqs.iter().map(|r| prompt_of(fmt, r)).collect();
        for w in &want {
            let (q, e) = (w["question"].as_str().unwrap(), w["expected"].as_str().unwrap());
            let asked = prompts.iter().filter(|p| {
                tagged(p, "summary").as_deref() == Some(summary) && tagged(p, "question").as_deref() == Some(q)
            });
            let graded = prompts.iter().filter(|p| {
                tagged(p, "expected-answer").as_deref() == Some(e) && tagged(p, "question").as_deref() == Some(q)
            });
            // Questions repeat across probes ("Which command was run here…"), so count per pair.
            let same = want.iter().filter(|x| x["question"] == q).count();
            let same_pair = want.iter().filter(|x| x["question"] == q && x["expected"] == e).count();
            assert_eq!(asked.count(), same, "{fmt:?}: answer calls for {q}");
            assert_eq!(graded.count(), same_pair, "{fmt:?}: grade calls for {q} / {e}");
        }
    }
}

#[tokio::test]
async fn text_output_has_a_separate_judge_block() {
    let all = lines();
    let id = all.iter().find(|e| e["type"] == "compaction").unwrap()["id"].as_str().unwrap().to_string();
    let dir = scratch("text");
    let fmt = Fmt::Anthropic;
    let server = Server::start(move |r, _| ok_answer(fmt, r, &judge_text(fmt, r))).await;
    let mut c = bin(&dir);
    c.args(["summary", "score"]).arg(recording()).args([
        "--entry",
        &id,
        "--judge",
        "anthropic/judge-model",
        "--base-url",
        &server.base(),
        "--judge-max-per-kind",
        "2",
    ]);
    let out = ok(&output(c).await);
    let offline_at = out.find(&format!("summary {id}: score")).expect(&out);
    let judge_at = out.find("judge anthropic/judge-model: score").expect(&out);
    assert!(offline_at < judge_at, "{out}");
    let block = &out[judge_at..];
    assert!(block.contains("continuation 0/2 correct, 2 partial (half each)"), "{block}");
    assert!(block.contains("½ continuation What was the agent doing at the cut?"), "{block}");
    assert!(block.contains("reason:   only the gist"), "{block}");
    // --judge-max-per-kind 2: at most 2 of each kind, two calls each.
    assert!(server.count() <= 2 * 2 * 4, "{}", server.count());
}

#[tokio::test]
async fn a_judge_without_a_key_is_a_clear_error() {
    let all = lines();
    let id = all.iter().find(|e| e["type"] == "compaction").unwrap()["id"].as_str().unwrap().to_string();
    let dir = scratch("no-key");
    let mut c = bin(&dir);
    c.args(["summary", "score"]).arg(recording()).args(["--entry", &id, "--judge", "anthropic/claude-sonnet-4-5"]);
    let o = output(c).await;
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no API key for anthropic") && e.contains("ANTHROPIC_API_KEY") && e.contains("keyring"), "{e}");
    assert!(o.stdout.is_empty(), "nothing printed on failure");

    let mut c = bin(&dir);
    c.args(["summary", "score"]).arg(recording()).args(["--entry", &id, "--judge", "claude-sonnet-4-5"]);
    let o = output(c).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("PROVIDER/MODEL"));
}
