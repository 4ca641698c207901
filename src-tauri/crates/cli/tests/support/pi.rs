//! Pi as the real client in tests: runs `node tests/pi/pi-check.mjs` (Pi 0.73.1 installed by
//! `scripts/setup.sh` into `tests/pi/node_modules`) on a session file and compares what Pi
//! computes with what Arbor's engine computes for the same file.
//!
//! Include it by path from any crate's tests that depend on `session-engine`:
//! `#[path = "../../cli/tests/support/pi.rs"] mod pi;`
//!
//! When Pi is not installed the calling test fails with a sentence saying to run
//! `scripts/setup.sh`; with `ARBOR_SKIP_PI=1` it prints a loud skip and returns instead.
#![allow(dead_code)] // each including test crate uses a different part
use pi_json::Value;
use session_engine::context::{build_context, estimate_context, Context};
use session_engine::report::sha256_hex;
use session_engine::session::Extend;
use session_engine::Session;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static PI_RUNS: AtomicUsize = AtomicUsize::new(0);

/// How many times this test process ran Pi.
pub fn pi_runs() -> usize {
    PI_RUNS.load(Ordering::Relaxed)
}

/// The repository root: the first ancestor of this crate's manifest dir with `tests/pi/pi-check.mjs`.
pub fn repo_root() -> PathBuf {
    let start = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    start
        .ancestors()
        .find(|d| d.join("tests/pi/pi-check.mjs").is_file())
        .unwrap_or_else(|| panic!("tests/pi/pi-check.mjs not found above {}", start.display()))
        .to_path_buf()
}

fn script() -> PathBuf {
    repo_root().join("tests/pi/pi-check.mjs")
}

/// True when Pi can run. When it cannot: panics with what to do, or (ARBOR_SKIP_PI=1) prints a
/// loud skip naming `test` and returns false.
pub fn pi_or_skip(test: &str) -> bool {
    let pkg = repo_root().join("tests/pi/node_modules/@mariozechner/pi-coding-agent/package.json");
    let node = Command::new("node").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    let problem = if !node {
        Some("`node --version` does not run (Node.js 20 or newer must be on PATH)".to_string())
    } else if !pkg.is_file() {
        Some(format!("Pi is not installed ({} is missing)", pkg.display()))
    } else {
        None
    };
    let Some(problem) = problem else { return true };
    if std::env::var("ARBOR_SKIP_PI").as_deref() == Ok("1") {
        skip_notice(&format!("{test}: {problem}; ARBOR_SKIP_PI=1 is set. Pi-backed checks did NOT run."));
        return false;
    }
    panic!("{test}: {problem}. Run scripts/setup.sh (it installs Pi 0.73.1 into tests/pi), or set ARBOR_SKIP_PI=1 to skip the Pi-backed tests.");
}

/// Says loudly on the process's stderr that a test skipped part of its checks: written past
/// libtest's capture, so it shows even when the test passes.
pub fn skip_notice(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED {what} !!!!!!!!\n");
}

fn run_pi(args: &[&str], file: &Path) -> Result<Value, String> {
    PI_RUNS.fetch_add(1, Ordering::Relaxed);
    let mut c = Command::new("node");
    c.arg(script()).arg(args[0]).arg(file).args(&args[1..]);
    // pi-check.mjs gives Pi a temporary agent dir of its own when this is unset: never ~/.pi.
    c.env_remove("PI_CODING_AGENT_DIR").env_remove("PI_CODING_AGENT_SESSION_DIR");
    let o = c.output().map_err(|e| format!("cannot run node: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "pi-check {} {} exited with {}: {}",
            args[0],
            file.display(),
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let text = String::from_utf8(o.stdout).map_err(|e| format!("pi-check printed invalid UTF-8: {e}"))?;
    // The engine's parser: Pi's JSON may carry lone surrogates, which serde_json rejects.
    pi_json::parse(text.trim()).map_err(|e| format!("pi-check printed invalid JSON ({e:?}): {text}"))
}

/// One context message, reduced to what both sides compare.
#[derive(Clone, Debug, PartialEq)]
pub struct Msg {
    pub role: String,
    pub text: String,
    /// sha256 of the message's `JSON.stringify`.
    pub sha256: String,
}

/// What a client computes for a file: Pi's answer (from pi-check) or Arbor's (from the engine).
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub header_accepted: bool,
    /// Entry lines (the header and skipped lines not counted).
    pub entries: usize,
    /// Non-empty lines that did not become the header or an entry.
    pub skipped_lines: usize,
    pub leaf_id: Option<String>,
    pub name: Option<String>,
    /// (target id, label), sorted.
    pub labels: Vec<(String, String)>,
    pub messages: Vec<Msg>,
    /// estimateContextTokens: tokens, usageTokens, trailingTokens, lastUsageIndex.
    pub tokens: (f64, f64, f64, Option<usize>),
    pub thinking_level: String,
    /// (provider, modelId)
    pub model: Option<(String, String)>,
}

fn s(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

fn num(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// The same text rule as pi-check.mjs's `messageText`.
pub fn message_text(m: &Value) -> String {
    match m.str_field("role") {
        Some("branchSummary") | Some("compactionSummary") => m.str_field("summary").unwrap_or("").to_string(),
        Some("bashExecution") => m.str_field("command").unwrap_or("").to_string(),
        _ => match m.get("content") {
            Some(Value::Str(t)) => t.to_string(),
            Some(Value::Arr(blocks)) => blocks
                .iter()
                .filter(|b| b.str_field("type") == Some("text"))
                .filter_map(|b| b.str_field("text"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        },
    }
}

fn msg_of(m: &Value) -> Msg {
    Msg {
        role: m.str_field("role").unwrap_or("").to_string(),
        text: message_text(m),
        sha256: sha256_hex(&pi_json::to_string(m)),
    }
}

/// Pi's answer for `file` at its own leaf (or `leaf`: an id, or "null").
pub fn pi_view(file: &Path, leaf: Option<&str>) -> View {
    let mut args = vec!["load"];
    if let Some(l) = leaf {
        args.extend(["--leaf", l]);
    }
    let v = run_pi(&args, file).unwrap_or_else(|e| panic!("{e}"));
    let ctx = v.get("context").unwrap_or(&Value::Null);
    let messages = ctx
        .get("messages")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|m| Msg {
                    role: s(m.get("role")).unwrap_or_default(),
                    text: s(m.get("text")).unwrap_or_default(),
                    sha256: s(m.get("sha256")).unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    let t = ctx.get("tokens").unwrap_or(&Value::Null);
    let mut labels: Vec<(String, String)> = match v.get("labels") {
        Some(Value::Obj(m)) => m.iter().map(|(k, l)| (k.to_string(), l.as_str().unwrap_or("").to_string())).collect(),
        _ => Vec::new(),
    };
    labels.sort();
    let model = ctx
        .get("model")
        .filter(|m| !m.is_null())
        .map(|m| (s(m.get("provider")).unwrap_or_default(), s(m.get("modelId")).unwrap_or_default()));
    View {
        header_accepted: v.get("headerAccepted").and_then(Value::as_bool).unwrap_or(false),
        entries: num(&v, "entries") as usize,
        skipped_lines: num(&v, "skippedLines") as usize,
        leaf_id: s(v.get("leafId")),
        name: s(v.get("name")),
        labels,
        messages,
        tokens: (
            num(t, "tokens"),
            num(t, "usageTokens"),
            num(t, "trailingTokens"),
            t.get("lastUsageIndex").and_then(Value::as_f64).map(|n| n as usize),
        ),
        thinking_level: ctx.get("thinkingLevel").map(pi_json::to_string).unwrap_or_default(),
        model,
    }
}

/// Arbor's answer for `file` (the engine: Session::open, file_leaf, build_context, estimate_context).
pub fn arbor_view(file: &Path, leaf: Option<&str>) -> View {
    let session = Session::open(file).unwrap_or_else(|e| panic!("Arbor cannot open {}: {e}", file.display()));
    arbor_view_of(&session, leaf)
}

pub fn arbor_view_of(session: &Session, leaf: Option<&str>) -> View {
    let leaf_idx = match leaf {
        None => session.file_leaf(),
        Some("null") => None,
        Some(id) => Some(session.index_of(id).unwrap_or_else(|| panic!("Arbor has no entry {id}"))),
    };
    let ctx: Context =
        if session.header_accepted() { build_context(session, leaf_idx) } else { build_context(session, None) };
    let msgs = ctx.agent_messages();
    let e = estimate_context(&msgs);
    let mut labels: Vec<(String, String)> = session.labels().iter().map(|(t, l, _)| (t.clone(), l.clone())).collect();
    labels.sort();
    View {
        header_accepted: session.header_accepted(),
        entries: if session.header_accepted() { session.len() } else { 0 },
        skipped_lines: if session.header_accepted() {
            session.non_empty_lines() - 1 - session.len()
        } else {
            session.non_empty_lines()
        },
        leaf_id: leaf_idx.map(|i| session.id(i).to_string()),
        name: session.name().map(str::to_string),
        labels,
        messages: msgs.iter().map(msg_of).collect(),
        tokens: (e.tokens, e.usage_tokens, e.trailing_tokens, e.last_usage_index),
        thinking_level: pi_json::to_string(&ctx.thinking_level),
        model: ctx
            .model
            .as_ref()
            .map(|m| (m.provider.as_str().unwrap_or("").to_string(), m.model_id.as_str().unwrap_or("").to_string())),
    }
}

/// Where two views first differ, as a readable sentence (None = equal).
pub fn first_difference(pi: &View, arbor: &View) -> Option<String> {
    macro_rules! cmp {
        ($f:ident) => {
            if pi.$f != arbor.$f {
                return Some(format!("{}: Pi {:?} vs Arbor {:?}", stringify!($f), pi.$f, arbor.$f));
            }
        };
    }
    cmp!(header_accepted);
    cmp!(leaf_id);
    cmp!(entries);
    cmp!(skipped_lines);
    cmp!(name);
    cmp!(labels);
    cmp!(thinking_level);
    cmp!(model);
    for (i, (p, a)) in pi.messages.iter().zip(&arbor.messages).enumerate() {
        if p != a {
            return Some(format!("context message {i}: Pi {p:?} vs Arbor {a:?}"));
        }
    }
    cmp!(messages);
    let (pt, at) = (pi.tokens, arbor.tokens);
    if pt.0 != at.0 || pt.1 != at.1 || pt.2 != at.2 || pt.3 != at.3 {
        return Some(format!("token estimate: Pi {pt:?} vs Arbor {at:?}"));
    }
    None
}

/// Pi loads `file` with no skipped line, Arbor with no diagnostic, and both compute the same
/// leaf, entries, labels, name, context (roles, texts, message bytes) and token estimate.
/// Returns Pi's view.
pub fn assert_pi_agrees(file: &Path, leaf: Option<&str>) -> View {
    let pi = pi_view(file, leaf);
    let session = Session::open(file).unwrap_or_else(|e| panic!("Arbor cannot open {}: {e}", file.display()));
    assert!(pi.header_accepted, "{}: Pi rejects the header", file.display());
    assert_eq!(pi.skipped_lines, 0, "{}: Pi skipped {} line(s)", file.display(), pi.skipped_lines);
    assert!(session.diagnostics().is_empty(), "{}: Arbor reports {:?}", file.display(), session.diagnostics());
    assert!(session.read_only().is_none(), "{}: Arbor opens it read-only: {:?}", file.display(), session.read_only());
    let arbor = arbor_view_of(&session, leaf);
    if let Some(d) = first_difference(&pi, &arbor) {
        panic!("{}: Pi and Arbor disagree on {d}", file.display());
    }
    pi
}

/// What Pi appended.
#[derive(Clone, Debug)]
pub struct PiAppend {
    pub parent_id: Option<String>,
    pub ids: Vec<String>,
    pub leaf_id: String,
}

/// Pi opens `file` with its SessionManager and appends a user message (and `reply` as the
/// assistant's answer) the way Pi does.
pub fn pi_append(file: &Path, text: &str, reply: Option<&str>) -> PiAppend {
    let mut args = vec!["append", "--text", text];
    if let Some(r) = reply {
        args.extend(["--reply", r]);
    }
    let v = run_pi(&args, file).unwrap_or_else(|e| panic!("{e}"));
    PiAppend {
        parent_id: s(v.get("parentId")),
        ids: v
            .get("ids")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| s(Some(x))).collect())
            .unwrap_or_default(),
        leaf_id: s(v.get("leafId")).expect("pi-check append prints leafId"),
    }
}

/// Pi appends a user message and a reply to `file` (which Arbor wrote); Arbor, holding the file
/// open from before, reads Pi's lines with `extend_from_file`: the new leaf is Pi's, the context
/// is the old one plus the two messages, and a fresh load agrees with Pi again.
pub fn assert_arbor_reads_pi_append(file: &Path) {
    let mut session = Session::open(file).unwrap_or_else(|e| panic!("Arbor cannot open {}: {e}", file.display()));
    let before = arbor_view_of(&session, None);
    let (text, reply) = ("Pi writes here: continue, please. ✓ 🌳", "Continuing from Arbor's entry.");
    let added = pi_append(file, text, Some(reply));
    assert_eq!(added.ids.len(), 2, "Pi appended {:?}", added.ids);
    assert_eq!(added.parent_id, before.leaf_id, "Pi appended below another leaf than Arbor's");
    match session.extend_from_file(file).unwrap_or_else(|e| panic!("extend_from_file {}: {e}", file.display())) {
        Extend::Added(2) => {}
        other => panic!("{}: Arbor read Pi's append as {other:?}, expected Added(2)", file.display()),
    }
    let after = arbor_view_of(&session, None);
    assert_eq!(after.leaf_id.as_deref(), Some(added.leaf_id.as_str()), "Arbor's leaf after Pi's append");
    assert_eq!(after.messages.len(), before.messages.len() + 2, "the context grows by Pi's two messages");
    assert_eq!(after.messages[..before.messages.len()], before.messages[..], "the earlier context is unchanged");
    let new = &after.messages[before.messages.len()..];
    assert_eq!((new[0].role.as_str(), new[0].text.as_str()), ("user", text));
    assert_eq!((new[1].role.as_str(), new[1].text.as_str()), ("assistant", reply));
    assert!(
        session.diagnostics().is_empty(),
        "{}: Arbor reports {:?} after Pi's append",
        file.display(),
        session.diagnostics()
    );
    // A fresh load on both sides agrees too.
    let pi = assert_pi_agrees(file, None);
    if let Some(d) = first_difference(&pi, &after) {
        panic!("{}: after Pi's append, Arbor's extended view and Pi disagree on {d}", file.display());
    }
}
