//! The context waterfall command without a window: `commands::timeline` over real
//! sessions (the demo, conformance fixtures copied to temp dirs, and a session written with
//! absurd numbers), checked against the engine's own `estimate_context(build_context(..))`.

use arbor_app::commands::timeline::{timeline, timeline_in_steps, warm, warm_in_steps};
use arbor_app::commands::{navigate, sessions};
use arbor_app::state::app::AppState;
use arbor_app::state::timeline::TimelineCache;
use arbor_app::view::timeline::{TimelineView, BYTES_VERSION, FLAG_COST_AT_USAGE, FLAG_HEX_IDS, HEADER_BYTES};
use session_engine::context::{build_context, estimate_context};
use std::path::{Path, PathBuf};
use std::time::Duration;

const BIG: Duration = Duration::from_secs(60);

mod support;
use support::{env, Env};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/crates/session-engine/tests/fixtures/conformance").join(name)
}

fn open_copy(e: &Env, name: &str) -> PathBuf {
    let p = e.dir.join(name);
    std::fs::copy(fixture(name), &p).unwrap();
    sessions::open(&e.state, &p, false).unwrap();
    p
}

/// Pi's estimate with `id` as the leaf, from the engine's full context build.
fn pi_estimate(state: &AppState, id: &str) -> f64 {
    state
        .with_open(|o| {
            let i = o.session.index_of(id).unwrap();
            Ok(estimate_context(&build_context(&o.session, Some(i)).agent_messages()).tokens)
        })
        .unwrap()
}

fn same(a: Option<f64>, want: f64) -> bool {
    match a {
        Some(x) => x == want,
        None => !want.is_finite(),
    }
}

/// The view as the UI gets it: its bytes (`TimelineView::to_bytes`) decoded as
/// ui/src/timeline/pure.ts does.
#[derive(Debug)]
#[allow(dead_code)]
struct D {
    ids: Vec<String>,
    kinds: String,
    context_tokens: Vec<Option<f64>>,
    usage_tokens: Vec<Option<f64>>,
    cost: Vec<Option<f64>>,
    compactions: Vec<u32>,
    total_cost: Option<f64>,
    context_window: u32,
    reserve_tokens: u32,
    threshold: u32,
    scale_max: f64,
    absurd_points: u32,
    active_path: bool,
    selected_pos: Option<u32>,
    leaf_id: Option<String>,
    flags: u32,
}

/// Reads the bytes' layout: the header, the JSON head, the columns at their offsets; every
/// byte accounted for.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let out = &self.b[self.at..self.at + n];
        self.at += n;
        out
    }
    fn u32s(&mut self, n: usize) -> Vec<u32> {
        self.take(n * 4).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }
    fn f64s(&mut self, n: usize) -> Vec<f64> {
        assert!(self.at.is_multiple_of(8), "an f64 column starts at a multiple of 8 (the UI views it in place)");
        self.take(n * 8).chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
    }
}

fn opt(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// A sparse column (values at positions) as one Option per point.
fn sparse(vals: &[f64], at: &[u32], n: usize) -> Vec<Option<f64>> {
    assert_eq!(vals.len(), at.len(), "one position per value");
    let mut out = vec![None; n];
    for (&x, &p) in vals.iter().zip(at) {
        assert!((p as usize) < n, "position {p} of {n}");
        out[p as usize] = opt(x);
    }
    out
}

fn dec(v: &TimelineView) -> D {
    let bytes = v.to_bytes();
    let mut r = Reader { b: &bytes, at: 0 };
    let h = r.u32s(8);
    assert_eq!(r.at, HEADER_BYTES);
    assert_eq!((h[0], h[7]), (BYTES_VERSION, 0));
    let (head_len, n, nu, nc, ni, flags) =
        (h[1] as usize, h[2] as usize, h[3] as usize, h[4] as usize, h[5] as usize, h[6]);
    assert!(head_len.is_multiple_of(8));
    assert_eq!(flags & !(FLAG_HEX_IDS | FLAG_COST_AT_USAGE), 0);
    let head: serde_json::Value = serde_json::from_slice(r.take(head_len)).expect("the head is JSON");
    assert_eq!(head["count"].as_u64(), Some(n as u64));
    let tokens = r.f64s(n);
    let (uv, cv) = (r.f64s(nu), r.f64s(nc));
    let ua = r.u32s(nu);
    let ca = if flags & FLAG_COST_AT_USAGE != 0 { ua.clone() } else { r.u32s(nc) };
    let words = r.u32s(n);
    let kinds = String::from_utf8(r.take(n).to_vec()).unwrap();
    let ids: Vec<String> = if flags & FLAG_HEX_IDS != 0 {
        assert_eq!(ni, 0);
        words.iter().map(|w| format!("{w:08x}")).collect()
    } else {
        let id_bytes = std::str::from_utf8(r.take(ni)).unwrap();
        let mut start = 0;
        let ids = words
            .iter()
            .map(|&e| {
                let id = id_bytes[start..e as usize].to_string();
                start = e as usize;
                id
            })
            .collect();
        assert_eq!(start, ni);
        ids
    };
    assert_eq!(r.at, bytes.len(), "nothing after the ids");
    let u32_of = |k: &str| head[k].as_u64().map(|x| x as u32);
    let legend: Vec<(String, String)> = serde_json::from_value(head["kindLegend"].clone()).unwrap();
    assert!(legend.iter().any(|(c, name)| c == "c" && name == "compaction"));
    D {
        ids,
        kinds,
        context_tokens: tokens.into_iter().map(opt).collect(),
        usage_tokens: sparse(&uv, &ua, n),
        cost: sparse(&cv, &ca, n),
        compactions: serde_json::from_value(head["compactions"].clone()).unwrap(),
        total_cost: head["totalCost"].as_f64(),
        context_window: u32_of("contextWindow").unwrap(),
        reserve_tokens: u32_of("reserveTokens").unwrap(),
        threshold: u32_of("threshold").unwrap(),
        scale_max: head["scaleMax"].as_f64().unwrap(),
        absurd_points: u32_of("absurdPoints").unwrap(),
        active_path: head["activePath"].as_bool().unwrap(),
        selected_pos: u32_of("selectedPos"),
        leaf_id: head["leafId"].as_str().map(str::to_string),
        flags,
    }
}

/// Every point equals Pi's estimate at that entry; the arrays have one element per point.
fn check_against_pi(state: &AppState, v: &D) {
    let n = v.ids.len();
    assert_eq!(v.kinds.chars().count(), n);
    assert_eq!(v.context_tokens.len(), n);
    assert_eq!(v.usage_tokens.len(), n);
    assert_eq!(v.cost.len(), n);
    for (i, id) in v.ids.iter().enumerate() {
        let want = pi_estimate(state, id);
        assert!(same(v.context_tokens[i], want), "{id}: timeline {:?} vs Pi {want}", v.context_tokens[i]);
    }
}

#[test]
fn demo_active_path_matches_pi_and_marks_compactions() {
    let e = env();
    let opened = sessions::open_demo(&e.state).unwrap();
    let cache = TimelineCache::new();
    let v = dec(&timeline(&e.state, &cache, None, 24_000, 4_000, BIG).unwrap());
    assert!(v.active_path);
    assert_eq!(v.flags & FLAG_HEX_IDS, FLAG_HEX_IDS, "Pi's ids travel as one u32 each");
    assert_eq!(v.leaf_id, opened.leaf_id);
    assert_eq!(v.ids.last(), opened.leaf_id.as_ref(), "the active path ends at the leaf");
    let path_len = e.state.with_open(|o| Ok(o.session.path(o.leaf).len())).unwrap();
    assert_eq!(v.ids.len(), path_len);
    assert_eq!((v.context_window, v.reserve_tokens, v.threshold), (24_000, 4_000, 20_000));
    check_against_pi(&e.state, &v);
    // Compactions: their kind code.
    assert!(!v.compactions.is_empty(), "the demo's active path has a compaction");
    for &c in &v.compactions {
        let c = c as usize;
        assert_eq!(v.kinds.as_bytes()[c], b'c');
        // Not always a drop at the compaction itself: when a kept assistant message reports a
        // usage, Pi counts that (pre-compaction) usage until the next reply. check_against_pi
        // holds the value to Pi's.
        assert!(v.context_tokens[c].is_some());
    }
    assert_eq!(v.kinds.bytes().filter(|&k| k == b'c').count(), v.compactions.len());
    // Usage where assistant messages report one; never elsewhere.
    let usages = v.usage_tokens.iter().filter(|u| u.is_some()).count();
    assert!(usages > 5, "the demo's assistant messages report usage");
    for (i, u) in v.usage_tokens.iter().enumerate() {
        if u.is_some() {
            assert_eq!(v.kinds.as_bytes()[i], b'a');
        }
    }
    // The view's numbers are the ones the context view shows at the leaf.
    let cv = navigate::context(&e.state, None, 24_000, 4_000, true).unwrap();
    assert_eq!(v.context_tokens.last().unwrap().unwrap() as u64, u64::from(cv.context_tokens));
}

#[test]
fn a_node_off_the_active_path_gets_its_own_path_and_one_on_it_keeps_the_active_path() {
    let e = env();
    let p = open_copy(&e, "branch-simple-siblings.jsonl");
    let cache = TimelineCache::new();
    let active = dec(&timeline(&e.state, &cache, None, 200_000, 16_384, BIG).unwrap());
    let (on, off) = e
        .state
        .with_open(|o| {
            let session = &o.session;
            let path = session.path(o.leaf);
            let off = (0..session.len()).find(|i| !path.contains(i)).expect("a sibling branch");
            Ok((session.id(path[1]).to_string(), session.id(off).to_string()))
        })
        .unwrap();
    let v_on = dec(&timeline(&e.state, &cache, Some(&on), 200_000, 16_384, BIG).unwrap());
    assert!(v_on.active_path);
    assert_eq!(v_on.ids, active.ids);
    assert_eq!(v_on.selected_pos, Some(1));
    let v_off = dec(&timeline(&e.state, &cache, Some(&off), 200_000, 16_384, BIG).unwrap());
    assert!(!v_off.active_path);
    assert_eq!(v_off.ids.last(), Some(&off));
    assert_eq!(v_off.selected_pos, Some(v_off.ids.len() as u32 - 1));
    check_against_pi(&e.state, &v_off);
    let err: arbor_app::error::IpcError =
        timeline(&e.state, &cache, Some("nope"), 200_000, 16_384, BIG).unwrap_err().into();
    assert!(err.message.contains("nope"), "{}", err.message);
    assert!(timeline(&e.state, &cache, None, 0, 0, BIG).is_err(), "a zero window is refused");
    drop(p);
}

#[test]
fn corpus_sessions_match_pi_filled_in_small_slices_and_after_an_append() {
    let e = env();
    for name in [
        "compaction-repeated.jsonl",
        "branch-summaries-in-context.jsonl",
        "basic-usage-variants.jsonl",
        "basic-custom-entries.jsonl",
    ] {
        open_copy(&e, name);
        let cache = TimelineCache::new();
        // A zero budget fills the cache one step (3 entries) per slice, letting go of the
        // session between.
        let sliced = dec(&timeline_in_steps(&e.state, &cache, None, 128_000, 16_384, Duration::ZERO, 3).unwrap());
        check_against_pi(&e.state, &sliced);
        let cached = dec(&timeline(&e.state, &cache, None, 128_000, 16_384, BIG).unwrap());
        assert_eq!(format!("{cached:?}"), format!("{sliced:?}"), "{name}: the cached pass is the same");
    }
    // compaction-repeated: several drops.
    open_copy(&e, "compaction-repeated.jsonl");
    let cache = TimelineCache::new();
    let v = dec(&timeline(&e.state, &cache, None, 128_000, 16_384, BIG).unwrap());
    assert!(v.compactions.len() >= 2, "{:?}", v.compactions);
    // An append (a label entry) extends the path; the cache keeps the rest.
    let leaf = v.ids.last().unwrap().clone();
    navigate::set_label(&e.state, &leaf, Some("here"), 1_700_000_000_000, Some("lbl00001")).unwrap();
    let after = dec(&timeline(&e.state, &cache, None, 128_000, 16_384, BIG).unwrap());
    assert_eq!(after.ids.len(), v.ids.len() + 1);
    assert_eq!(after.ids.last().map(String::as_str), Some("lbl00001"));
    assert_eq!(after.kinds.chars().last(), Some('o'));
    check_against_pi(&e.state, &after);
}

#[test]
fn cost_is_reported_where_messages_carry_it() {
    let e = env();
    let p = e.dir.join("cost.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello there"}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,"cost":{"total":0.25}},"stopReason":"stop"}}"#,
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"more"}}"#,
        r#"{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":200,"output":30,"cacheRead":0,"cacheWrite":0,"totalTokens":230,"cost":{"total":0.5}},"stopReason":"stop"}}"#,
    ];
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    sessions::open(&e.state, &p, false).unwrap();
    let v = dec(&timeline(&e.state, &TimelineCache::new(), None, 200_000, 16_384, BIG).unwrap());
    assert_eq!(v.flags, FLAG_COST_AT_USAGE, "ids a..d travel as bytes; the costs sit at the usages");
    assert_eq!(v.cost, [None, Some(0.25), None, Some(0.5)]);
    assert_eq!(v.total_cost, Some(0.75));
    assert_eq!(v.usage_tokens, [None, Some(120.0), None, Some(230.0)]);
    assert_eq!(v.context_tokens, [Some(3.0), Some(120.0), Some(121.0), Some(230.0)]);
    assert_eq!(v.kinds, "uaua");
    check_against_pi(&e.state, &v);
}

#[test]
fn absurd_numbers_give_finite_sane_values() {
    let e = env();
    let p = e.dir.join("absurd.jsonl");
    // No usage at all at first, a negative usage, a usage Pi turns into NaN, a 10M-token message
    // (40M characters), a usage of 1e300 tokens, and a sane usage at the end.
    let ten_m = "x".repeat(40_000_000);
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#.to_string(),
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":{"input":-500,"output":-1,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"total":-3}},"stopReason":"stop"}}"#.to_string(),
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"usage":{"totalTokens":"lots"},"stopReason":"stop"}}"#.to_string(),
        format!(r#"{{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","message":{{"role":"user","content":"{ten_m}"}}}}"#),
        r#"{"type":"message","id":"e","parentId":"d","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"assistant","content":[],"usage":{"input":1e300,"output":1e300,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}"#.to_string(),
        r#"{"type":"message","id":"f","parentId":"e","timestamp":"2025-01-01T00:00:06.000Z","message":{"role":"user","content":"ten million"}}"#.to_string(),
        r#"{"type":"message","id":"g","parentId":"f","timestamp":"2025-01-01T00:00:07.000Z","message":{"role":"assistant","content":[],"usage":{"input":5000,"output":100,"cacheRead":0,"cacheWrite":0,"totalTokens":5100},"stopReason":"stop"}}"#.to_string(),
    ];
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    sessions::open(&e.state, &p, false).unwrap();
    let raw = timeline(&e.state, &TimelineCache::new(), None, 200_000, 16_384, BIG).unwrap();
    let v = dec(&raw);
    assert_eq!(v.ids, ["a", "b", "c", "d", "e", "f", "g"]);
    assert_eq!(v.flags, 0, "a cost without a usage: the cost positions are sent");
    // Every number that reaches the UI is finite or null; Pi's numbers are not clamped.
    for x in v.context_tokens.iter().chain(&v.usage_tokens).chain(&v.cost).flatten() {
        assert!(x.is_finite(), "{x}");
    }
    assert_eq!(v.context_tokens[0], Some(1.0), "no usage yet: the estimate");
    assert_eq!(v.context_tokens[1], Some(-501.0), "a negative usage is Pi's number");
    assert_eq!(v.cost[1], Some(-3.0));
    assert_eq!(v.context_tokens[2], None, "Pi's NaN crosses IPC as NaN in the f64 array (None here)");
    assert_eq!(v.context_tokens[3], None, "NaN plus the 10M-token message stays NaN, as in Pi");
    assert_eq!(v.context_tokens[4], Some(2e300));
    assert_eq!(v.context_tokens[6], Some(5100.0), "a sane usage brings the chart back");
    // The drawing scale ignores the absurd points: the window, not 2e300.
    assert!(v.scale_max.is_finite() && v.scale_max >= 200_000.0 && v.scale_max <= 800_000.0, "{}", v.scale_max);
    assert!(v.absurd_points >= 4, "{}", v.absurd_points);
    // The JSON head holds no NaN or Infinity tokens (the numbers travel as raw f64s).
    let json = serde_json::to_string(&raw.head).unwrap();
    assert!(!json.contains("NaN") && !json.contains("inf"), "{json}");
    check_against_pi(&e.state, &v);
}

#[test]
fn a_ten_million_token_message_alone_keeps_the_scale_sane() {
    let e = env();
    let p = e.dir.join("ten-m.jsonl");
    let ten_m = "y".repeat(40_000_000);
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#.to_string(),
        format!(
            r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"t","toolName":"read","content":[{{"type":"text","text":"{ten_m}"}}]}}}}"#
        ),
    ];
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    sessions::open(&e.state, &p, false).unwrap();
    let v = dec(&timeline(&e.state, &TimelineCache::new(), None, 200_000, 16_384, BIG).unwrap());
    assert_eq!(v.context_tokens, [Some(1.0), Some(10_000_001.0)], "Pi's estimate, exact");
    assert_eq!(v.scale_max, 200_000.0, "the 10M point is drawn clipped, the scale stays the window");
    assert_eq!(v.absurd_points, 1);
    assert_eq!(v.kinds, "ut");
}

#[test]
fn warming_fills_the_active_path_and_a_big_session_matches_pi_at_its_leaf() {
    let e = env();
    open_copy(&e, "large-2k-small-window.jsonl");
    let cache = TimelineCache::new();
    let path_len = e.state.with_open(|o| Ok(o.session.path(o.leaf).len())).unwrap();
    assert!(path_len > 500, "{path_len}");
    assert_eq!(warm(&e.state, &cache, Duration::ZERO).unwrap(), path_len, "every entry of the active path is kept");
    let v = dec(&timeline(&e.state, &cache, None, 16_000, 2_000, BIG).unwrap());
    let fresh =
        dec(&timeline_in_steps(&e.state, &TimelineCache::new(), None, 16_000, 2_000, Duration::ZERO, 97).unwrap());
    assert_eq!(format!("{v:?}"), format!("{fresh:?}"));
    let leaf = v.ids.last().unwrap();
    assert!(same(*v.context_tokens.last().unwrap(), pi_estimate(&e.state, leaf)));
    assert!(!v.compactions.is_empty());
}

/// The warm-up reads each slice on a snapshot of its own and stops once its session was let go
/// (another open): at a million entries it lasts longer than a reopen, and one snapshot held
/// through it kept the previous 2.6 GB session beside the new one.
#[test]
fn warming_stops_after_its_slice_once_its_session_was_let_go() {
    let e = env();
    open_copy(&e, "large-2k-small-window.jsonl");
    let path_len = e.state.with_open(|o| Ok(o.session.path(o.leaf).len())).unwrap();
    // Slice by slice (one entry each) on fresh snapshots, the whole path is kept.
    let cache = TimelineCache::new();
    assert_eq!(warm_in_steps(&e.state, &cache, Duration::ZERO, 7).unwrap(), path_len);
    // Its session let go: one slice, then it stops, holding nothing.
    e.state
        .with_open(|o| {
            o.quality.retire();
            Ok(())
        })
        .unwrap();
    let cache = TimelineCache::new();
    let err = warm_in_steps(&e.state, &cache, Duration::ZERO, 7).unwrap_err();
    assert!(matches!(err, arbor_app::error::AppError::Refused(_)), "{err:?}");
    let kept = e.state.with_open(|o| Ok(cache.of(&o.path).1.kept(&o.session, &o.session.path(o.leaf)))).unwrap();
    assert_eq!(kept, 7, "it read more than one slice after its session was let go");
}
