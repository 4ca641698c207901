//! `arbor-cli index [--root DIR]... [--db FILE]`: build or update the session index.
//!
//! The progress bar goes to stderr and only when stderr is a terminal (indicatif hides itself
//! otherwise), so scripts and tests see just the summary line on stdout.
use super::CmdResult;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use library::{Library, SyncReport};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Open the index (`--db` or the app-data default) and print any notice to stderr.
pub(crate) fn open_library(db: Option<&Path>) -> Result<Library, String> {
    let lib = match db {
        Some(p) => Library::open(p),
        None => Library::open_default(),
    }
    .map_err(|e| e.to_string())?;
    for n in lib.notices() {
        eprintln!("arbor-cli: {n}");
    }
    Ok(lib)
}

/// The roots to index: the given folders (made absolute), else Pi's roots plus the user's.
pub(crate) fn resolve_roots(lib: &Library, given: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    if given.is_empty() {
        let r = lib.all_roots().map_err(|e| e.to_string())?;
        if r.is_empty() {
            return Err(
                "no Pi sessions folder found (~/.pi/agent/sessions or $PI_CODING_AGENT_DIR/sessions); pass --root DIR"
                    .into(),
            );
        }
        return Ok(r);
    }
    given
        .iter()
        .map(|r| {
            if !r.is_dir() {
                return Err(format!(
                    "{} is not a folder; pass --root with a folder that holds .jsonl session files",
                    r.display()
                ));
            }
            Ok(std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()))
        })
        .collect()
}

/// Sync the roots, with a progress bar on a terminal.
pub(crate) fn sync(lib: &mut Library, roots: &[PathBuf], show_bar: bool) -> Result<SyncReport, String> {
    let bar = ProgressBar::with_draw_target(
        None,
        if show_bar { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
    );
    bar.set_style(
        ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {pos}/{len} files {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix("sessions");
    let rep = lib.sync_roots(roots, &mut |p| {
        // phase 1 lists the sessions; phase 2 indexes their full text (the longer part)
        bar.set_prefix(if p.full_text { "full text" } else { "sessions" });
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        if let Some(n) = p.path.file_name() {
            bar.set_message(n.to_string_lossy().to_string());
        }
    });
    bar.finish_and_clear();
    let rep = rep.map_err(|e| e.to_string())?;
    for (p, m) in &rep.errors {
        eprintln!("arbor-cli: skipped {}: {m}", p.display());
    }
    for n in lib.take_notices() {
        eprintln!("arbor-cli: {n}");
    }
    Ok(rep)
}

pub fn run(args: crate::IndexArgs) -> CmdResult {
    let t = Instant::now();
    let mut lib = open_library(args.db.as_deref())?;
    let roots = resolve_roots(&lib, &args.roots)?;
    let rep = sync(&mut lib, &roots, true)?;
    println!(
        "indexed {} session files under {} root(s) in {:.2} s (sessions {:.2} s, full text {:.2} s): {} new, {} appended, {} re-read, {} removed, {} unchanged ({:.1} MB read); index: {}",
        rep.files,
        roots.len(),
        t.elapsed().as_secs_f64(),
        rep.catalog_ms / 1e3,
        rep.fulltext_ms / 1e3,
        rep.new,
        rep.appended,
        rep.reindexed,
        rep.removed,
        rep.unchanged,
        rep.bytes_read as f64 / 1e6,
        lib.db_path().display()
    );
    Ok(())
}
