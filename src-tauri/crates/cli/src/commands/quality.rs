//! `arbor-cli summary score|cite`: is a summary good enough to keep working from. Both only
//! read; the rules are summary_analysis::quality's. `score --judge PROVIDER/MODEL` also asks a
//! model (summarizer::judge) and prints its score apart from the offline one, under the model's
//! name: the two are different measures and are never merged.
use super::summary::{print_json, summary_entry, ShowArgs};
use super::{open_session, preview, CmdResult};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use session_engine::Session;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use summarizer::judge::{JudgeOptions, JudgeProgress, JudgeProgressFn, Judged, Verdict};
use summary_analysis::quality::{self, Probe, ProbeKind};

#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The compaction or branch_summary entry
    #[arg(long)]
    pub entry: String,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
    /// Also let a model judge the summary: it answers each probe from the summary alone, then
    /// grades the answer against the expected one (two calls per probe). The key comes from
    /// Arbor's settings (OS keyring) or the provider's environment variable, as for `compact`
    #[arg(long, value_name = "PROVIDER/MODEL")]
    pub judge: Option<String>,
    /// The judge's base URL: OpenAI-compatible ends in /v1; Anthropic and Gemini take the host
    #[arg(long, requires = "judge")]
    pub base_url: Option<String>,
    /// The judge asks at most this many probes of each kind, the most recent
    #[arg(long, requires = "judge", default_value_t = JudgeOptions::default().max_per_kind)]
    pub judge_max_per_kind: usize,
}

pub fn score(a: ScoreArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = summary_entry(&session, &a.entry)?;
    let q = summary_analysis::quality(&session, i);
    let judged = match &a.judge {
        Some(spec) => Some(run_judge(&session, i, &q.probes, spec, &a)?),
        None => None,
    };
    if a.json {
        let f = q.forgetting.as_ref();
        let mut v = json!({
            "entryId": q.entry_id,
            "score": q.score,
            "byKind": q.by_kind,
            "probes": q.probes,
            "unsupported": q.unsupported,
            "growth": q.growth,
            "forgetting": f.map(|f| json!({
                "rereadFiles": f.reread_files,
                "rerunCommands": f.rerun_commands,
                "callsBeforeFirstEdit": f.calls_before_first_edit,
                "edited": f.edited,
                "baselineCallsBeforeFirstEdit": f.baseline_calls_before_first_edit,
                "windowEntries": f.window_entries,
            })),
        });
        if let Some(j) = &judged {
            v["judge"] = serde_json::to_value(j).expect("JSON");
        }
        print_json(&v);
        return Ok(());
    }
    let mut out = String::new();
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    let _ = writeln!(out, "summary {}: score {}", q.entry_id, q.score.map_or("— (no probe)".into(), pct));
    for k in ProbeKind::ALL {
        let s = q.by_kind.get(k);
        if s.probes > 0 {
            let _ = writeln!(out, "  {:<13}{}/{} answered", k.as_str(), s.answered, s.probes);
        }
    }
    let g = &q.growth;
    let _ = writeln!(
        out,
        "growth: {} tokens for {} replaced{}{}",
        g.summary_tokens,
        g.replaced_tokens,
        g.previous_summary_tokens.map(|p| format!(", previous summary {p}")).unwrap_or_default(),
        match g.flag {
            Some(quality::GrowthFlag::NotSmaller) => " — not smaller than what it replaced",
            Some(quality::GrowthFlag::Grew) => " — grew more than 1.5× over the previous summary",
            None => "",
        }
    );
    if let Some(f) = &q.forgetting {
        let _ = writeln!(
            out,
            "after it: {} files re-read, {} commands re-run, {} tool calls before the first edit{} (session start: {})",
            f.reread_files.len(),
            f.rerun_commands.len(),
            f.calls_before_first_edit,
            if f.edited { "" } else { " (no edit yet)" },
            f.baseline_calls_before_first_edit.map_or("no edit".into(), |b| b.to_string())
        );
    }
    if !q.unsupported.is_empty() {
        let _ = writeln!(out, "\nunsupported ({}): nothing in the span says these", q.unsupported.len());
        for u in &q.unsupported {
            let _ = writeln!(out, "  [{}] {}", u.section, preview(&u.text, 160));
        }
    }
    let _ = writeln!(out, "\nprobes:");
    for p in &q.probes {
        let _ = writeln!(
            out,
            "  {} {:<13}{}  ({})",
            if p.answered { "✓" } else { "✗" },
            p.kind.as_str(),
            preview(&p.expected, 140),
            p.source_entry_id
        );
    }
    if let Some(j) = &judged {
        judge_text(&mut out, j);
    }
    print!("{out}");
    Ok(())
}

/// Asks the judge about the probes of the summary at `idx`.
fn run_judge(session: &Session, idx: usize, probes: &[Probe], spec: &str, a: &ScoreArgs) -> Result<Judged, String> {
    let catalog = super::navigate::catalog()?;
    let prepared =
        summarizer::setup::prepare_judge(spec, a.base_url.as_deref(), &catalog).map_err(|e| e.to_string())?;
    for n in &prepared.notices {
        eprintln!("note: {n}");
    }
    // The judge keeps the last probes of each kind; in span order those are the most recent
    // (the offline list puts a kind's user rules before its other decisions).
    let mut probes = probes.to_vec();
    probes.sort_by_key(|p| session.index_of(&p.source_entry_id).unwrap_or(0));
    let text = summary_analysis::summary_text(session, idx).to_string();
    let opts = JudgeOptions { max_per_kind: a.judge_max_per_kind, ..Default::default() };
    let client = prepared.client;
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} judge [{bar:30}] {pos}/{len} probes {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let b = bar.clone();
    let judged = super::navigate::block_on(|cancel, retries| async move {
        let progress: JudgeProgressFn = Arc::new(move |p| match p {
            JudgeProgress::Probes { done, total } => {
                b.set_length(total as u64);
                b.set_position(done as u64);
            }
            JudgeProgress::Provider(p) => b.suspend(|| retries(p)),
        });
        summarizer::judge::judge(&client, &text, &probes, &opts, &cancel, Some(&progress)).await
    });
    bar.finish_and_clear();
    judged.map_err(|e| format!("the judge {spec}: {e}"))
}

/// The judge's block of the text output, apart from the offline score above it.
fn judge_text(out: &mut String, j: &Judged) {
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    let _ = writeln!(
        out,
        "\njudge {}/{}: score {} (the model answered from the summary alone and graded its answers; \
         not the offline score)",
        j.provider,
        j.model,
        j.score.map_or("— (no probe)".into(), pct)
    );
    for k in ProbeKind::ALL {
        let s = j.by_kind.get(k);
        if s.probes > 0 {
            let partial = j.partial(k);
            let _ = writeln!(
                out,
                "  {:<13}{}/{} correct{}",
                k.as_str(),
                s.answered,
                s.probes,
                if partial > 0 { format!(", {partial} partial (half each)") } else { String::new() }
            );
        }
    }
    for p in &j.probes {
        let mark = match p.verdict {
            Verdict::Correct => "✓",
            Verdict::Partial => "½",
            Verdict::Wrong => "✗",
            Verdict::Unparseable => "?",
        };
        let _ = writeln!(out, "  {mark} {:<13}{}  ({})", p.kind.as_str(), preview(&p.question, 120), p.source_entry_id);
        let _ = writeln!(out, "      expected: {}", preview(&p.expected, 140));
        let _ = writeln!(out, "      answer:   {}", preview(&p.answer, 140));
        if !p.reason.is_empty() {
            let _ = writeln!(out, "      reason:   {}", preview(&p.reason, 160));
        }
    }
}

pub fn cite(a: ShowArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = summary_entry(&session, &a.entry)?;
    let c = summary_analysis::citations(&session, i, summary_analysis::summary_text(&session, i));
    if a.json {
        print_json(&serde_json::to_value(&c).expect("JSON"));
        return Ok(());
    }
    let mut out = String::new();
    for it in &c.items {
        let src: Vec<String> = it.sources.iter().map(|s| format!("{} ({:.2})", s.entry_id, s.score)).collect();
        let _ = writeln!(
            out,
            "[{}] {}\n    {}",
            it.section,
            preview(&it.text, 160),
            if it.unsupported {
                "unsupported: nothing in the span says this".to_string()
            } else if src.is_empty() {
                "(too short to cite)".to_string()
            } else {
                src.join(", ")
            }
        );
    }
    print!("{out}");
    Ok(())
}
