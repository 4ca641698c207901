//! What the artifact ledger buys and costs, on every compaction of some sessions: the artifact
//! probes answered (`by_kind.artifact`, answered / probes over all compactions of a group) by
//! (a) the offline summarizer's summary of the same span and (b) the summary the file holds (the
//! model's draft Pi or Arbor wrote), each without and with the ledger, and the tokens the ledger
//! adds (`quality::text_tokens`) against the summary's own.
//!
//! `cargo run --release -p summarizer --example ledger_bench [FILE|DIR]...` (default: the
//! conformance corpus, the real-Pi recordings, /tmp/data/s1k.jsonl and /tmp/data/s10k.jsonl; a
//! folder is one group of its `*.jsonl` files). Prints one Markdown table row per group.
use session_engine::context::CompactionSettings;
use session_engine::session::{Kind, Session};
use std::path::{Path, PathBuf};
use summarizer::run::{summarize_compaction, Backend, RunOptions};
use summarizer::CancellationToken;
use summary_analysis::quality::{score_over, text_tokens, with_ledger_over};

#[derive(Default)]
struct Side {
    probes: usize,
    answered: usize,
    answered_with: usize,
    tokens: f64,
    ledger_tokens: f64,
    /// Compactions whose ledger adds more than a quarter of the summary's tokens.
    over_quarter: usize,
    /// Per compaction: the ledger's tokens over the summary's.
    ratios: Vec<f64>,
}

impl Side {
    fn add(&mut self, session: &Session, entries: &[usize], prev: Option<usize>, text: &str) {
        let with = with_ledger_over(session, entries, prev, text);
        let a = score_over(session, entries, prev, text).by_kind.artifact;
        let b = score_over(session, entries, prev, &with).by_kind.artifact;
        assert_eq!(a.probes, b.probes, "the ledger changes no probe, only answers");
        self.probes += a.probes;
        self.answered += a.answered;
        self.answered_with += b.answered;
        let (t, l) = (text_tokens(text), text_tokens(&with) - text_tokens(text));
        self.tokens += t;
        self.ledger_tokens += l;
        let r = if t > 0.0 { l / t } else { 0.0 };
        self.over_quarter += usize::from(r > 0.25);
        self.ratios.push(r);
    }

    fn cells(&mut self) -> String {
        let pct = |a: usize, n: usize| {
            if n == 0 {
                "–".to_string()
            } else {
                format!("{:.1} %", 100.0 * a as f64 / n as f64)
            }
        };
        self.ratios.sort_by(f64::total_cmp);
        let median = self.ratios.get(self.ratios.len() / 2).copied().unwrap_or(0.0);
        let max = self.ratios.last().copied().unwrap_or(0.0);
        format!(
            "{} → {} ({}/{} → {}/{}) | +{:.1} % (median +{:.1} %, max +{:.1} %, {} over 25 %)",
            pct(self.answered, self.probes),
            pct(self.answered_with, self.probes),
            self.answered,
            self.probes,
            self.answered_with,
            self.probes,
            if self.tokens > 0.0 { 100.0 * self.ledger_tokens / self.tokens } else { 0.0 },
            100.0 * median,
            100.0 * max,
            self.over_quarter
        )
    }
}

#[derive(Default)]
struct Group {
    compactions: usize,
    skipped: usize,
    offline: Side,
    file: Side,
}

fn jsonl_in(p: &Path) -> Vec<PathBuf> {
    if p.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        v.sort();
        v
    } else {
        vec![p.to_path_buf()]
    }
}

fn bench_file(path: &Path, g: &mut Group, rt: &tokio::runtime::Runtime) {
    let Ok(session) = Session::open(path) else { return };
    // Pi's own plan at the compaction's parent, with the cut moved to the file's: a tiny
    // keep-recent budget so that Pi's planner never refuses for want of a first kept entry.
    let settings = CompactionSettings { enabled: true, reserve_tokens: 16384.0, keep_recent_tokens: 1.0 };
    let opts = RunOptions { record_extras: false, ..RunOptions::default() };
    let cancel = CancellationToken::new();
    for c in (0..session.len()).filter(|&i| session.kind(i) == Kind::Compaction) {
        let v = session.value(c);
        let (Some(leaf), Some(first_kept)) = (session.parent_of(c), v.str_field("firstKeptEntryId")) else {
            g.skipped += 1;
            continue;
        };
        if v.get("details").and_then(|d| d.get("editKind")).is_some() {
            continue; // an edit stands for its origin, which is counted itself
        }
        let Ok(span) = summary_analysis::draft::compaction_span(&session, leaf, first_kept) else {
            g.skipped += 1;
            continue;
        };
        let Ok(job) = pi_review::cut::plan_compaction_keep_from(&session, Some(leaf), &settings, first_kept) else {
            g.skipped += 1;
            continue;
        };
        let offline = rt
            .block_on(summarize_compaction(&job, &Backend::Offline, &opts, &cancel, None))
            .expect("the offline summarizer always answers");
        g.compactions += 1;
        g.offline.add(&session, &span.entries, span.previous, &offline.summary);
        g.file.add(&session, &span.entries, span.previous, summary_analysis::summary_text(&session, c));
    }
}

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures = manifest.join("../session-engine/tests/fixtures");
    let args: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let groups = if args.is_empty() {
        vec![
            fixtures.join("conformance"),
            fixtures.join("real-pi"),
            PathBuf::from("/tmp/data/s1k.jsonl"),
            PathBuf::from("/tmp/data/s10k.jsonl"),
        ]
    } else {
        args
    };
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    println!(
        "ledger bounds: at most {} lines, a budget of a quarter of the summary's characters, at least {}",
        summary_analysis::quality::ledger::MAX_LINES,
        summary_analysis::quality::ledger::MIN_BUDGET
    );
    println!(
        "| sessions | compactions | offline: artifact probes answered, without → with | offline: tokens the ledger adds | file's summary: artifact probes answered | file's summary: tokens the ledger adds |"
    );
    println!("|---|---|---|---|---|---|");
    for p in groups {
        if !p.exists() {
            eprintln!("{} is missing (node scripts/gen-sessions.mjs writes it); skipped", p.display());
            continue;
        }
        let t = std::time::Instant::now();
        let mut g = Group::default();
        for f in jsonl_in(&p) {
            bench_file(&f, &mut g, &rt);
        }
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (o, f) = (g.offline.cells(), g.file.cells());
        let (o1, o2) = o.split_once(" | ").unwrap();
        let (f1, f2) = f.split_once(" | ").unwrap();
        println!(
            "| {name} | {}{} | {o1} | {o2} | {f1} | {f2} |",
            g.compactions,
            if g.skipped > 0 { format!(" ({} skipped)", g.skipped) } else { String::new() }
        );
        eprintln!("{name}: {:.1} s", t.elapsed().as_secs_f64());
    }
}
