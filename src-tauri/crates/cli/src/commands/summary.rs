//! `arbor-cli summary show|check|diff|edit|revert`: the summary workbench over
//! `summary_analysis`, headless. `show`, `check` and `diff` only read; `edit` and
//! `revert` append one `compaction` entry through `summarizer::summary_ops` (lock, length check,
//! synced append) and print its id only after the write. Errors are one sentence, exit code 2,
//! and nothing is written.
use super::{leaf_arg, open_session, preview, CmdResult};
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value as J};
use session_engine::{ids, time, Kind, Session};
use std::fmt::Write as _;
use std::path::PathBuf;
use summary_analysis::Section;

#[derive(Args, Debug)]
pub struct SummaryArgs {
    #[command(subcommand)]
    pub command: SummaryCommand,
}

#[derive(Subcommand, Debug)]
pub enum SummaryCommand {
    /// A summary entry's sections, items, file lists, tokensBefore, span and author
    Show(ShowArgs),
    /// Drop alarm (what the previous compaction carried that this one lost; an edit is judged as its original) and retention probe
    Check(ShowArgs),
    /// Section-aware diff of two summaries (default --from: an edit's original, else the summary before it on its path)
    Diff(DiffArgs),
    /// Append an edited copy of the governing compaction (the original stays in the file)
    Edit(EditArgs),
    /// Append a compaction that restores an edited summary's original text
    Revert(RevertArgs),
    /// Probe score by kind (recall, artifact, decision, continuation), unsupported items, growth and the cost of forgetting
    Score(super::quality::ScoreArgs),
    /// Each summary item with the span entries that support it (unsupported items marked)
    Cite(ShowArgs),
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The compaction or branch_summary entry
    #[arg(long)]
    pub entry: String,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The older summary [default: for an edit or revert, its original; for a compaction, the
    /// compaction before it on its path; for a branch summary, the summary before it on its path]
    #[arg(long)]
    pub from: Option<String>,
    /// The newer summary
    #[arg(long)]
    pub to: String,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct EditArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The compaction to edit (the newest one on the path to the leaf)
    #[arg(long)]
    pub entry: String,
    /// File with the new summary text (UTF-8)
    #[arg(long)]
    pub text_file: PathBuf,
    /// Append below this entry instead of the file's leaf
    #[arg(long)]
    pub leaf: Option<String>,
    /// Print `{"entryId", "editedFrom"}`
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RevertArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The edited compaction to revert to its original text
    #[arg(long)]
    pub entry: String,
    /// Append below this entry instead of the file's leaf
    #[arg(long)]
    pub leaf: Option<String>,
    /// Print `{"entryId", "revertedTo"}`
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: SummaryArgs) -> CmdResult {
    match a.command {
        SummaryCommand::Show(a) => show(a),
        SummaryCommand::Check(a) => check(a),
        SummaryCommand::Diff(a) => diff(a),
        SummaryCommand::Edit(a) => edit(a),
        SummaryCommand::Revert(a) => revert(a),
        SummaryCommand::Score(a) => super::quality::score(a),
        SummaryCommand::Cite(a) => super::quality::cite(a),
    }
}

fn kind_name(session: &Session, idx: usize) -> &'static str {
    match session.kind(idx) {
        Kind::Compaction => "compaction",
        _ => "branch_summary",
    }
}

/// Resolves `--entry ID` to a summary entry (compaction or branch summary).
pub(super) fn summary_entry(session: &Session, id: &str) -> Result<usize, String> {
    let i = session
        .index_of(id)
        .ok_or_else(|| format!("no entry with id {id} in this session; run `arbor-cli tree FILE` to see the ids"))?;
    if !summary_analysis::is_summary(session, i) {
        return Err(format!(
            "entry {id} is a {} entry, not a summary; pick a compaction or branch_summary entry (`arbor-cli tree FILE` marks them)",
            session.entry(i).type_name
        ));
    }
    Ok(i)
}

pub(super) fn print_json(v: &J) {
    println!("{}", serde_json::to_string_pretty(v).expect("JSON"));
}

fn section_json(sec: &Section) -> J {
    json!({
        "title": sec.title,
        "level": sec.level,
        "items": sec.items.iter().map(|i| i.text.clone()).collect::<Vec<_>>(),
        "text": sec.text,
        "name": sec.name,
        "role": sec.role,
        "turnPrefix": sec.turn_prefix,
        "itemDetails": sec.items,
    })
}

fn show(a: ShowArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = summary_entry(&session, &a.entry)?;
    let v = session.value(i);
    let text = summary_analysis::summary_text(&session, i);
    let parsed = summary_analysis::parse(text);
    let (read, modified) = summary_analysis::file_lists(&session, i);
    let sp = summary_analysis::span(&session, i);
    let author = summary_analysis::author(&session, i);
    let history = if session.kind(i) == Kind::Compaction { summary_analysis::history(&session, i) } else { Vec::new() };
    let tokens_before = v.get("tokensBefore").and_then(|t| t.as_f64());
    let first_kept = v.str_field("firstKeptEntryId");
    if a.json {
        print_json(&json!({
            "entryId": session.id(i),
            "kind": kind_name(&session, i),
            "sections": parsed.sections.iter().map(section_json).collect::<Vec<_>>(),
            "readFiles": read,
            "modifiedFiles": modified,
            "tokensBefore": tokens_before,
            "firstKeptEntryId": first_kept,
            "turnPrefix": parsed.turn_prefix,
            "fromHook": v.get("fromHook").and_then(|h| h.as_bool()).unwrap_or(false),
            "author": author,
            "span": {"count": sp.entry_ids.len(), "firstId": sp.first_id, "lastId": sp.last_id, "exact": sp.exact, "note": sp.note, "entryIds": sp.entry_ids},
            "history": history,
        }));
        return Ok(());
    }
    let mut out = String::new();
    let who = match author.kind {
        summary_analysis::AuthorKind::Hook => "a hook".to_string(),
        summary_analysis::AuthorKind::User => "the user (edit)".to_string(),
        summary_analysis::AuthorKind::Offline => "Arbor's offline summarizer".to_string(),
        summary_analysis::AuthorKind::Model => {
            format!("{} {}", author.provider.as_deref().unwrap_or("?"), author.model.as_deref().unwrap_or(""))
                .trim()
                .to_string()
        }
        summary_analysis::AuthorKind::Unknown => "unknown (Pi or another tool)".to_string(),
    };
    let _ = writeln!(out, "{} {} — written by {who}", kind_name(&session, i), session.id(i));
    if let Some(t) = tokens_before {
        let _ = writeln!(out, "tokensBefore {t}, firstKeptEntryId {}", first_kept.unwrap_or("(missing)"));
    }
    let _ = writeln!(
        out,
        "span: {} entries{}{}",
        sp.entry_ids.len(),
        match (&sp.first_id, &sp.last_id) {
            (Some(f), Some(l)) => format!(", {f} … {l}"),
            _ => String::new(),
        },
        sp.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default()
    );
    if history.len() > 1 {
        let chain: Vec<String> =
            history.iter().map(|v| format!("{} ({:?})", v.entry_id, v.kind).to_lowercase()).collect();
        let _ = writeln!(out, "versions: {}", chain.join(" → "));
    }
    for sec in &parsed.sections {
        let title =
            if sec.level == 0 { sec.name.clone() } else { format!("{} {}", "#".repeat(sec.level as usize), sec.name) };
        let _ = writeln!(out, "\n{title}  ({} item{})", sec.items.len(), if sec.items.len() == 1 { "" } else { "s" });
        for line in sec.text.lines() {
            let _ = writeln!(out, "  {}", preview(line, 200));
        }
        for it in &sec.items {
            let mark = match it.checked {
                Some(true) => "[x] ",
                Some(false) => "[ ] ",
                None => "",
            };
            let _ = writeln!(out, "  {}- {mark}{}", "  ".repeat(it.depth as usize), preview(&it.text, 200));
        }
    }
    if !read.is_empty() {
        let _ = writeln!(out, "\nread files ({}):", read.len());
        for f in &read {
            let _ = writeln!(out, "  {}", preview(f, 300));
        }
    }
    if !modified.is_empty() {
        let _ = writeln!(out, "\nmodified files ({}):", modified.len());
        for f in &modified {
            let _ = writeln!(out, "  {}", preview(f, 300));
        }
    }
    print!("{out}");
    Ok(())
}

fn check(a: ShowArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = summary_entry(&session, &a.entry)?;
    let c = summary_analysis::check(&session, i);
    if a.json {
        print_json(&serde_json::to_value(&c).expect("JSON"));
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} — previous compaction on the path: {}",
        kind_name(&session, i),
        c.entry_id,
        c.previous_entry_id.as_deref().unwrap_or("none")
    );
    let _ = writeln!(out, "\ndropped ({}):", c.dropped.len());
    for d in &c.dropped {
        let _ = writeln!(out, "  [{}] {}", d.section, preview(&d.text, 200));
    }
    let _ = writeln!(out, "\nmoved ({}):", c.moved.len());
    for m in &c.moved {
        let _ = writeln!(out, "  {} → {}: {}", m.from, m.to, preview(&m.text, 200));
    }
    let r = &c.retention;
    let _ = writeln!(out, "\nretention: {}/{} facts mentioned", r.mentioned, r.total);
    for f in &r.facts {
        let kind = serde_json::to_value(f.kind).ok().and_then(|k| k.as_str().map(str::to_string)).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} {:<10} {}  ({})",
            if f.mentioned { "✓" } else { "✗" },
            kind,
            preview(&f.text, 160),
            f.source_entry_id
        );
    }
    print!("{out}");
    Ok(())
}

fn diff(a: DiffArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let to = summary_entry(&session, &a.to)?;
    let from = match &a.from {
        Some(f) => summary_entry(&session, f)?,
        None => summary_analysis::diff_base(&session, to).ok_or_else(|| {
            let what = if session.kind(to) == Kind::Compaction { "compaction" } else { "summary" };
            format!(
                "entry {} has no earlier {what} on its path; pass --from ID to pick the summary to compare with",
                a.to
            )
        })?,
    };
    let d = summary_analysis::diff(
        &summary_analysis::parse(summary_analysis::summary_text(&session, from)),
        &summary_analysis::parse(summary_analysis::summary_text(&session, to)),
    );
    if a.json {
        let mut m = Map::new();
        m.insert("from".into(), J::from(session.id(from)));
        m.insert("to".into(), J::from(session.id(to)));
        if let J::Object(rest) = serde_json::to_value(&d).expect("JSON") {
            m.extend(rest);
        }
        print_json(&J::Object(m));
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(out, "diff {} → {}", session.id(from), session.id(to));
    for sec in &d.sections {
        if sec.added.is_empty() && sec.removed.is_empty() && sec.reworded.is_empty() && !sec.text_changed {
            let _ = writeln!(
                out,
                "\n  {} (unchanged, {} item{})",
                sec.title,
                sec.unchanged.len(),
                if sec.unchanged.len() == 1 { "" } else { "s" }
            );
            continue;
        }
        let _ = writeln!(out, "\n  {}{}", sec.title, if sec.text_changed { " (text changed)" } else { "" });
        for r in &sec.removed {
            let _ = writeln!(out, "    - {}", preview(r, 200));
        }
        for r in &sec.added {
            let _ = writeln!(out, "    + {}", preview(r, 200));
        }
        for r in &sec.reworded {
            let _ = writeln!(out, "    ~ {}\n      → {}", preview(&r.from, 200), preview(&r.to, 200));
        }
    }
    if !d.moved.is_empty() {
        let _ = writeln!(out, "\n  moved:");
        for m in &d.moved {
            let _ = writeln!(out, "    {} → {}: {}", m.from, m.to, preview(&m.text, 200));
        }
    }
    for f in &d.files_added {
        let _ = writeln!(out, "  + file {}", preview(f, 300));
    }
    for f in &d.files_removed {
        let _ = writeln!(out, "  - file {}", preview(f, 300));
    }
    print!("{out}");
    Ok(())
}

fn compaction_entry(session: &Session, id: &str) -> Result<usize, String> {
    let i = session
        .index_of(id)
        .ok_or_else(|| format!("no entry with id {id} in this session; run `arbor-cli tree FILE` to see the ids"))?;
    Ok(i)
}

fn append(a_file: &std::path::Path, session: &Session, entry: &pi_json::Value) -> Result<String, String> {
    match summarizer::summary_ops::append_summary_entry(a_file, session, entry) {
        Ok(done) => Ok(done.entry_id),
        Err(summarizer::Error::Session(msg)) => Err(msg),
        Err(e) => Err(e.to_string()),
    }
}

fn edit(a: EditArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = compaction_entry(&session, &a.entry)?;
    let leaf = leaf_arg(&session, a.leaf.as_deref())?;
    if let Some(r) = summary_analysis::edit_refusal(&session, i, leaf) {
        return Err(r);
    }
    let bytes = std::fs::read(&a.text_file)
        .map_err(|e| format!("cannot read {} ({e}); check the --text-file path", a.text_file.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("{} is not UTF-8 text; save it as UTF-8 and try again", a.text_file.display()))?;
    let id = ids::new_entry_id(|id| session.index_of(id).is_some());
    let entry = summary_analysis::edit_entry(&session, i, leaf, &text, &id, &time::now_iso())?;
    let written = append(&a.file, &session, &entry)?;
    if a.json {
        println!("{}", json!({"entryId": written, "editedFrom": session.id(i)}));
    } else {
        println!("{written}");
    }
    Ok(())
}

fn revert(a: RevertArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let i = compaction_entry(&session, &a.entry)?;
    let leaf = leaf_arg(&session, a.leaf.as_deref())?;
    let id = ids::new_entry_id(|id| session.index_of(id).is_some());
    let entry = summary_analysis::revert_entry(&session, i, leaf, &id, &time::now_iso())?;
    let reverted_to = entry.get("details").and_then(|d| d.str_field("revertedTo")).unwrap_or("").to_string();
    let written = append(&a.file, &session, &entry)?;
    if a.json {
        println!("{}", json!({"entryId": written, "revertedTo": reverted_to}));
    } else {
        println!("{written}");
    }
    Ok(())
}
