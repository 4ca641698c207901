//! `arbor-cli timeline`, `export`, `migrate` and `rename` at the command level.
//! The Pi-client checks of the two writes (migrate, rename) are in `pi_client.rs`; here Pi is
//! asked for its estimate at several leaves, to compare with `timeline`.
#[path = "support/pi.rs"]
mod pi;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn conformance(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../session-engine/tests/fixtures/conformance/{name}.jsonl"))
}

fn f47() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export/f47-hostile.jsonl")
}

fn scratch(case: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("timeline_export-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor-cli")).args(args).env("ARBOR_KEYRING", "off").output().unwrap()
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "arbor-cli {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn fails(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "arbor-cli {args:?} should fail: {}", String::from_utf8_lossy(&o.stdout));
    String::from_utf8(o.stderr).unwrap()
}

fn timeline(file: &Path, leaf: Option<&str>) -> serde_json::Value {
    let mut args = vec!["timeline", file.to_str().unwrap(), "--json"];
    if let Some(l) = leaf {
        args.extend(["--leaf", l]);
    }
    serde_json::from_str(&ok(&args)).expect("timeline prints JSON")
}

fn points(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["points"].as_array().unwrap()
}

// ---- timeline -----------------------------------------------------------------------------

const TIMELINE_CASES: &[&str] = &[
    "basic-tool-chain",
    "basic-usage-variants",
    "compaction-repeated",
    "compaction-first-kept-on-other-branch",
    "compaction-missing-first-kept",
    "branch-summaries-in-context",
    "cut-split-turn",
    "large-2k-small-window",
    "utf16-token-estimates",
    "basic-images",
];

/// The corpus gives Pi's estimate at each case's leaf: the timeline's last point is it.
#[test]
fn timeline_ends_on_the_corpus_estimate() {
    for case in TIMELINE_CASES {
        let file = conformance(case);
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(file.with_extension("expected.json")).unwrap()).unwrap();
        let t = timeline(&file, None);
        let pts = points(&t);
        assert_eq!(t["leafId"], expected["leafId"], "{case}");
        assert_eq!(pts.len(), expected["activePath"].as_array().unwrap().len(), "{case}: one point per path entry");
        let ids: Vec<&str> = pts.iter().map(|p| p["entryId"].as_str().unwrap()).collect();
        let want: Vec<&str> = expected["activePath"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        assert_eq!(ids, want, "{case}: the points follow the active path");
        let last = pts.last().unwrap();
        assert_eq!(
            last["contextTokens"].as_f64(),
            expected["tokens"]["estimate"]["tokens"].as_f64(),
            "{case}: Pi's estimate at the leaf"
        );
        // Compaction points are flagged, and only they.
        for p in pts {
            assert_eq!(p["compaction"].as_bool().unwrap(), p["type"] == "compaction", "{case}: {p}");
        }
    }
}

/// At several other leaves, each point equals what Pi itself estimates with that entry as the leaf.
#[test]
fn timeline_equals_pi_at_several_leaves() {
    // Pi's estimates; when Pi cannot run here (a loud skip), the engine's own.
    let pi_runs = pi::pi_or_skip("timeline_equals_pi_at_several_leaves");
    let view =
        |file: &Path, leaf: Option<&str>| if pi_runs { pi::pi_view(file, leaf) } else { pi::arbor_view(file, leaf) };
    let mut compared = 0;
    for case in [
        "compaction-repeated",
        "branch-summaries-in-context",
        "basic-usage-variants",
        "cut-split-turn",
        "compaction-first-kept-on-other-branch",
    ] {
        let file = conformance(case);
        let t = timeline(&file, None);
        let pts = points(&t);
        // The first entry, the middle, each compaction and the entry right after it, the one before the leaf.
        let mut picks = vec![0, pts.len() / 2, pts.len().saturating_sub(2)];
        for (i, p) in pts.iter().enumerate() {
            if p["compaction"] == true {
                picks.push(i);
                picks.push((i + 1).min(pts.len() - 1));
            }
        }
        picks.sort();
        picks.dedup();
        for i in picks {
            let id = pts[i]["entryId"].as_str().unwrap();
            let pi = view(&file, Some(id));
            assert_eq!(pts[i]["contextTokens"].as_f64(), Some(pi.tokens.0), "{case} at {id} (point {i})");
            // The same through --leaf: the path to it ends there with the same number.
            let sub = timeline(&file, Some(id));
            let last = points(&sub).last().unwrap();
            assert_eq!((last["entryId"].as_str(), last["contextTokens"].as_f64()), (Some(id), Some(pi.tokens.0)));
            compared += 1;
        }
    }
    assert!(compared >= 15, "only {compared} leaves compared");
}

/// Off the active path too: a leaf on an abandoned branch.
#[test]
fn timeline_on_a_branch_leaf_equals_pi() {
    // Pi's estimates; when Pi cannot run here (a loud skip), the engine's own.
    let pi_runs = pi::pi_or_skip("timeline_on_a_branch_leaf_equals_pi");
    let view =
        |file: &Path, leaf: Option<&str>| if pi_runs { pi::pi_view(file, leaf) } else { pi::arbor_view(file, leaf) };
    let file = conformance("branch-simple-siblings");
    let session = session_engine::Session::open(&file).unwrap();
    let on_path: std::collections::HashSet<usize> = session.path(session.file_leaf()).into_iter().collect();
    let off = (0..session.len()).rev().find(|i| !on_path.contains(i)).expect("the case has a branch");
    let id = session.id(off).to_string();
    let t = timeline(&file, Some(&id));
    assert_eq!(t["leafId"], id.as_str());
    for p in points(&t).iter().rev().take(4) {
        let pid = p["entryId"].as_str().unwrap();
        assert_eq!(p["contextTokens"].as_f64(), Some(view(&file, Some(pid)).tokens.0), "at {pid}");
    }
}

#[test]
fn timeline_reports_usage_and_cost_of_assistant_messages_only() {
    let t = timeline(&conformance("basic-tool-chain"), None);
    let pts = points(&t);
    let session = session_engine::Session::open(&conformance("basic-tool-chain")).unwrap();
    let mut with_usage = 0;
    for p in pts {
        let idx = session.index_of(p["entryId"].as_str().unwrap()).unwrap();
        if session.role(idx) == Some("assistant") {
            assert!(p["usageTokens"].as_f64().is_some_and(|u| u > 0.0), "{p}");
            assert!(p["cost"].as_f64().is_some(), "{p}");
            with_usage += 1;
        } else {
            assert!(p["usageTokens"].is_null() && p["cost"].is_null(), "{p}");
        }
    }
    assert!(with_usage >= 6);
    // With usage, the estimate at an assistant message is its usage.
    let a = pts.iter().find(|p| p["usageTokens"].is_number()).unwrap();
    assert_eq!(a["contextTokens"], a["usageTokens"]);
}

/// No usage, negative tokens, a string where a number goes, a 10M-token message: valid JSON,
/// no NaN, Pi's numbers where Pi has numbers.
#[test]
fn timeline_of_absurd_numbers_is_valid_json() {
    let dir = scratch("absurd");
    let file = dir.join("absurd.jsonl");
    let big = "y".repeat(40_000_000);
    let h = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
    let body = [
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}"#.to_string(),
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":{"input":-900,"output":-1,"cacheRead":0,"cacheWrite":0,"totalTokens":0},"stopReason":"stop"}}"#.into(),
        format!(r#"{{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{{"role":"user","content":"{big}"}}}}"#),
        r#"{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[],"usage":{"totalTokens":"many"},"stopReason":"stop"}}"#.into(),
        r#"{"type":"message","id":"e","parentId":"d","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"assistant","content":[],"stopReason":"stop"}}"#.into(),
    ];
    std::fs::write(&file, format!("{h}\n{}\n", body.join("\n"))).unwrap();
    let text = ok(&["timeline", file.to_str().unwrap(), "--json"]);
    assert!(!text.contains("NaN") && !text.contains("Infinity"), "{}", &text[..text.len().min(400)]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let t: Vec<Option<f64>> = points(&v).iter().map(|p| p["contextTokens"].as_f64()).collect();
    assert_eq!(
        t,
        [Some(2.0), Some(-901.0), Some(-901.0 + 10_000_000.0), None, None],
        "Pi's NaN for a string usage is null"
    );
    assert_eq!(points(&v)[1]["usageTokens"].as_f64(), Some(-901.0));
}

#[test]
fn timeline_refuses_an_unknown_leaf() {
    let e = fails(&["timeline", conformance("basic-tool-chain").to_str().unwrap(), "--leaf", "nope", "--json"]);
    assert!(e.contains("no entry with id nope"), "{e}");
}

// ---- export -------------------------------------------------------------------------------

fn export(file: &Path, extra: &[&str]) -> String {
    let mut args = vec!["export", file.to_str().unwrap()];
    args.extend(extra);
    ok(&args)
}

/// A careful scan of our own HTML: every `<` starts a tag of an allowed name, attributes are of
/// allowed names, links are in-page anchors, and nothing can run or fetch.
fn assert_inert_html(html: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "a <script> tag");
    const TAGS: &[&str] = &[
        "!doctype", "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h4", "dl", "dt", "dd",
        "nav", "b", "details", "summary", "a", "ol", "ul", "li", "span", "section", "p", "article", "header", "pre",
        "div",
    ];
    const ATTRS: &[&str] =
        &["lang", "charset", "http-equiv", "content", "name", "class", "id", "href", "open", "style"];
    let mut i = 0;
    let mut in_style = false;
    while let Some(off) = html[i..].find('<') {
        let start = i + off;
        let end = start + html[start..].find('>').expect("an unclosed tag");
        let tag = &html[start + 1..end];
        i = end + 1;
        if in_style {
            assert_eq!(tag, "/style", "a tag inside <style>");
            in_style = false;
            continue;
        }
        if tag.eq_ignore_ascii_case("!DOCTYPE html") {
            continue;
        }
        let tag = tag.strip_prefix('/').unwrap_or(tag);
        let name: String = tag.chars().take_while(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
        assert!(TAGS.contains(&name.as_str()), "unexpected tag <{name}> in {}", &html[start..end + 1]);
        if name == "style" && !html[start + 1..].starts_with('/') {
            in_style = true;
            // The stylesheet is ours: no url(), no @import.
            let css_end = start + html[start..].find("</style>").unwrap();
            let css = &html[start..css_end];
            assert!(!css.contains("url(") && !css.contains("@import"), "the stylesheet fetches");
        }
        // Attributes: name="value" pairs, values without quotes inside (escaped).
        let mut rest = tag[name.len()..].trim();
        while !rest.is_empty() {
            let an: String = rest.chars().take_while(|c| *c != '=' && !c.is_whitespace()).collect();
            assert!(
                ATTRS.contains(&an.to_ascii_lowercase().as_str()),
                "unexpected attribute {an:?} in {}",
                &html[start..end + 1]
            );
            assert!(!an.to_ascii_lowercase().starts_with("on"));
            rest = rest[an.len()..].trim_start();
            if let Some(r) = rest.strip_prefix('=') {
                let r = r.strip_prefix('"').expect("attribute values are double-quoted");
                let close = r.find('"').unwrap();
                let value = &r[..close];
                if an == "href" {
                    assert!(value.starts_with('#'), "a link out of the page: {value}");
                }
                assert!(
                    !value.to_ascii_lowercase().contains("javascript:") && !value.contains("//"),
                    "attribute value {value:?}"
                );
                rest = r[close + 1..].trim_start();
            }
        }
    }
}

#[test]
fn html_export_of_the_f47_session_is_inert() {
    for extra in [&[][..], &["--leaf", "f4700013"][..], &["--context"][..]] {
        let mut args = vec!["--format", "html"];
        args.extend(extra);
        let html = export(&f47(), &args);
        assert_inert_html(&html);
        assert!(
            html.contains("Content-Security-Policy") && html.contains("default-src 'none'"),
            "{extra:?}: the page forbids every fetch"
        );
        // The payloads are there, as text.
        assert!(html.contains("&lt;script&gt;"), "{extra:?}: the payloads are shown escaped");
        // Handlers and sources occur only as escaped text (the scan above checked every tag).
        assert!(
            html.contains("&lt;svg onload=alert(1)&gt;")
                && html.contains("&lt;img src=x onerror=\"window.hacked=1\"&gt;"),
            "{extra:?}"
        );
    }
    let html = export(&f47(), &["--format", "html"]);
    // Escaped-looking text stays literal text (double escaped), the hostile id is text too.
    assert!(html.contains("&amp;lt;script&amp;gt;"), "entities in content are not decoded");
    assert!(html.contains("\"&gt;&lt;img src=x onerror=alert(10)&gt;"), "the hostile id is text");
    assert!(html.contains("&lt;/pre&gt;&lt;/details&gt;&lt;/article&gt;"), "closing tags in content are text");
}

#[test]
fn the_scan_itself_catches_active_content() {
    let good = export(&f47(), &["--format", "html"]);
    for bad in [
        good.replacen("<main>", "<main><script>alert(1)</script>", 1),
        good.replacen("<main>", "<main><img src=x>", 1),
        good.replacen("<main>", "<main onload=\"x()\">", 1),
        good.replacen("<main>", "<main><a href=\"https://evil.example\">x</a>", 1),
        good.replacen("<main>", "<main><a href=\"javascript:x()\">x</a>", 1),
    ] {
        assert!(
            std::panic::catch_unwind(|| assert_inert_html(&bad)).is_err(),
            "the scan let through: {}",
            &bad[bad.find("<main").unwrap()..][..60]
        );
    }
}

#[test]
fn html_export_structure() {
    let file = conformance("compaction-repeated");
    let html = export(&file, &["--format", "html"]);
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    let session = session_engine::Session::open(&file).unwrap();
    let path = session.path(session.file_leaf());
    // Every path entry has its article and anchor; the outline links to them.
    assert_eq!(html.matches("<article ").count(), session.len(), "one article per entry");
    for &i in &path {
        assert!(
            html.contains(&format!("\" id=\"e{i}\"><header><a href=\"#e{i}\">")),
            "entry {i} has its anchored article"
        );
    }
    assert!(
        html.contains("<nav><b>Outline</b><details open><summary><a href=\"#b0\">Active path"),
        "the outline opens with the active path"
    );
    assert!(html.contains("<details><summary>tool call: "), "tool calls are collapsed");
    assert!(html.contains("<details><summary>tool result: "), "tool results are collapsed");
    // Summaries with their sections; the compaction marker and what the model no longer sees.
    assert!(html.contains("<h4>Goal</h4>"), "summary sections");
    assert!(html.contains("class=\"cut\""), "the compaction cut marker");
    assert!(html.contains("compacted: the model no longer sees this"));
    let all = html.matches("<article class=\"").count();
    assert!(
        html.matches(" gone\" id=\"e").count() >= 2 && html.matches(" gone\" id=\"e").count() < all,
        "some, not all, entries are marked compacted"
    );
    // A branch: only the path, no other branch.
    let off_branch = export(&conformance("branch-simple-siblings"), &["--format", "html", "--leaf", "55732918"]);
    assert!(off_branch.contains("Branch") && !off_branch.contains("not on the active path"));
    let whole = export(&conformance("branch-simple-siblings"), &["--format", "html"]);
    assert!(
        whole.contains("not on the active path") && whole.contains("branches here:"),
        "the whole session shows the other branches and where they fork"
    );
}

#[test]
fn markdown_export_structure_and_escaping() {
    let md = export(&conformance("compaction-repeated"), &["--format", "markdown"]);
    assert!(md.starts_with("# compaction\\-repeated\\.jsonl"), "the title, punctuation escaped: {}", &md[..40]);
    assert!(md.contains("## Outline") && md.contains("](#e"), "an outline of links");
    assert!(md.contains("#### Goal"), "summary sections as headings");
    assert!(md.contains("Everything above is compacted"));
    assert!(md.contains("**tool call\\: "), "tool calls, their names escaped");
    let md = export(&f47(), &["--format", "markdown"]);
    // Inline pieces are escaped: no tag, no link from content outside fences.
    let outside: String = {
        let mut out = String::new();
        let mut fence: Option<String> = None;
        for line in md.lines() {
            let ticks: String = line.chars().take_while(|c| *c == '`').collect();
            match &fence {
                Some(f) if line.trim_end() == f.as_str() => fence = None,
                Some(_) => {}
                None if ticks.len() >= 3 => fence = Some(ticks),
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    };
    let unescaped =
        |needle: &str| outside.match_indices(needle).any(|(i, _)| i == 0 || outside.as_bytes()[i - 1] != b'\\');
    assert!(!unescaped("<script") && !unescaped("<img") && !unescaped("<svg") && !unescaped("<iframe"), "{outside}");
    assert!(
        !outside.contains("](javascript") && !outside.contains("](data") && !outside.contains("https://"),
        "no link from content: {outside}"
    );
    assert!(outside.contains("\\<script\\>"), "names and ids are shown, escaped");
    // Our own anchors are the only raw HTML outside the fences.
    for l in outside.lines().filter(|l| l.contains('<') && !l.contains("\\<")) {
        assert!(l.starts_with("<a id=\"") && l.ends_with("\"></a>"), "raw HTML outside a fence: {l}");
    }
    // A body with a long backtick run gets a longer fence.
    assert!(md.contains("````"), "the mermaid payload's ``` is fenced by four");
}

#[test]
fn context_export_holds_only_what_the_model_sees() {
    let file = conformance("compaction-repeated");
    let html = export(&file, &["--format", "html", "--context"]);
    let session = session_engine::Session::open(&file).unwrap();
    let ctx = session_engine::build_context(&session, session.file_leaf());
    assert_eq!(html.matches("<article ").count(), ctx.messages.len());
    assert!(html.contains(&format!("id=\"e{}\"", ctx.compaction.unwrap())), "the compaction summary opens it");
    assert!(html.contains("which the model no longer sees"));
}

#[test]
fn export_to_a_file_refuses_to_overwrite_and_never_writes_the_session() {
    let dir = scratch("export-out");
    let file = dir.join("s.jsonl");
    std::fs::copy(conformance("basic-tool-chain"), &file).unwrap();
    let before = std::fs::read(&file).unwrap();
    let out = dir.join("s.html");
    ok(&["export", file.to_str().unwrap(), "--format", "html", "--out", out.to_str().unwrap()]);
    let first = std::fs::read_to_string(&out).unwrap();
    assert!(first.contains("</html>"));
    let e = fails(&["export", file.to_str().unwrap(), "--format", "markdown", "--out", out.to_str().unwrap()]);
    assert!(e.contains("already exists") && e.contains("--force"), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), first, "nothing was written");
    ok(&["export", file.to_str().unwrap(), "--format", "markdown", "--out", out.to_str().unwrap(), "--force"]);
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("# s\\.jsonl"));
    // The session file itself, even with --force, even through another name.
    let link = dir.join("alias.jsonl");
    std::fs::hard_link(&file, &link).unwrap();
    for target in [&file, &link] {
        let e = fails(&[
            "export",
            file.to_str().unwrap(),
            "--format",
            "html",
            "--out",
            target.to_str().unwrap(),
            "--force",
        ]);
        assert!(e.contains("the session file itself"), "{e}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), before, "the session is unchanged");
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("arbor-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let e = fails(&["export", file.to_str().unwrap(), "--format", "pdf"]);
    assert!(e.contains("--format markdown"), "{e}");
}

/// A big session reports its progress on stderr, in order, up to 100 %; the export is complete.
#[test]
fn export_of_a_big_session_reports_progress() {
    let dir = scratch("export-progress");
    let file = dir.join("big.jsonl");
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#);
    text.push('\n');
    let chunk = "<p>".repeat(300_000); // 900 kB a message
    let mut parent = "null".to_string();
    for i in 0..24 {
        let id = format!("e{i:07}");
        text.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:{:02}.000Z","message":{{"role":"user","content":"{i} {chunk}"}}}}"#,
            i % 60
        ));
        text.push('\n');
        parent = format!("\"{id}\"");
    }
    std::fs::write(&file, &text).unwrap();
    let out = dir.join("big.html");
    let o = run(&["export", file.to_str().unwrap(), "--format", "html", "--out", out.to_str().unwrap()]);
    assert!(o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    let pcts: Vec<u64> = err.lines().filter_map(|l| l.strip_suffix('%')?.rsplit(' ').next()?.parse().ok()).collect();
    assert!(pcts.len() >= 3, "progress lines: {err}");
    assert!(pcts.windows(2).all(|w| w[0] < w[1]) && pcts.last() == Some(&100), "progress goes up to 100 %: {pcts:?}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(html.matches("<article ").count(), 24);
    let n = html.matches("&lt;p&gt;").count();
    // Every byte of content, escaped (and the outline's 80-character previews).
    assert!((24 * 300_000..24 * 300_000 + 24 * 30).contains(&n), "{n}");
}

// ---- migrate and rename: refusals (Pi's checks are in pi_client.rs) -----------------------

#[test]
fn migrate_refuses_an_existing_path_and_a_v3_file() {
    let dir = scratch("migrate-refuse");
    let v1 = dir.join("v1.jsonl");
    std::fs::copy(conformance("load-v1-legacy"), &v1).unwrap();
    let before = std::fs::read(&v1).unwrap();
    let taken = dir.join("taken.jsonl");
    std::fs::write(&taken, "keep me").unwrap();
    let e = fails(&["migrate", v1.to_str().unwrap(), "--out", taken.to_str().unwrap()]);
    assert!(e.contains("already exists") && e.contains("nothing was written"), "{e}");
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "keep me");
    let e = fails(&["migrate", v1.to_str().unwrap(), "--out", v1.to_str().unwrap()]);
    assert!(e.contains("already exists"), "{e}");
    assert_eq!(std::fs::read(&v1).unwrap(), before, "the original is unchanged");
    let e = fails(&[
        "migrate",
        conformance("basic-tool-chain").to_str().unwrap(),
        "--out",
        dir.join("new.jsonl").to_str().unwrap(),
    ]);
    assert!(e.contains("already a version 3"), "{e}");
    assert!(!dir.join("new.jsonl").exists());
}

#[test]
fn rename_refuses_an_empty_name_and_a_read_only_session() {
    let dir = scratch("rename-refuse");
    let file = dir.join("s.jsonl");
    std::fs::copy(conformance("basic-tool-chain"), &file).unwrap();
    let before = std::fs::read(&file).unwrap();
    let e = fails(&["rename", file.to_str().unwrap(), "--name", "  "]);
    assert!(e.contains("the name is empty"), "{e}");
    let v1 = dir.join("v1.jsonl");
    std::fs::copy(conformance("load-v1-legacy"), &v1).unwrap();
    let v1_before = std::fs::read(&v1).unwrap();
    let e = fails(&["rename", v1.to_str().unwrap(), "--name", "x"]);
    assert!(e.contains("read-only") && e.contains("nothing was written"), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(std::fs::read(&v1).unwrap(), v1_before);
}
