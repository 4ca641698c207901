//! `arbor-cli compact`: plan with the engine, summarize with the summarizer (a model or the
//! offline summarizer), append one `compaction` line (synced). Nothing is appended unless the
//! summary is complete; Ctrl-C cancels cleanly.
use super::CmdResult;
use session_engine::compaction::CompactionJob;
use session_engine::CompactionSettings;
use session_engine::Session;
use summarizer::session_ops::{compact_file, compact_file_planned};

/// `--keep-from ID`: Pi's plan at the leaf (its refusals, read-only sessions), with the cut moved
/// to `id` when that is a valid cut point (`pi_review::cut`), else why not and the nearest ones.
fn keep_from_plan(
    session: &Session,
    leaf: Option<&str>,
    settings: &CompactionSettings,
    id: &str,
) -> Result<CompactionJob, String> {
    let job = summarizer::run::plan_compaction(session, leaf, settings).map_err(|e| e.to_string())?;
    let leaf = job.leaf_id.as_deref().and_then(|l| session.index_of(l));
    pi_review::cut::plan_compaction_keep_from(session, leaf, settings, id).map_err(|e| e.to_string())
}

pub fn run(args: crate::CompactArgs) -> CmdResult {
    let session = Session::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let settings = super::navigate::compaction_settings(&session, &args.budget);
    if let Some(id) = &args.keep_from {
        // Refused before any model or key is touched.
        keep_from_plan(&session, args.leaf.as_deref(), &settings, id)
            .map_err(|e| format!("{e}; nothing was written"))?;
    }
    drop(session);
    let ctx = super::navigate::Ctx::new(&args.provider, &args.budget)?;
    let mut opts = ctx.options(args.instructions.clone(), false, ctx.arbor.hooks.before_compact.clone());
    opts.artifact_ledger = args.ledger.resolve(ctx.arbor.artifact_ledger);
    let backend = &ctx.backend;
    let (file, leaf) = (&args.file, args.leaf.as_deref());
    let keep_from = args.keep_from.as_deref();
    let planner = |s: &Session, leaf: Option<&str>, settings: &CompactionSettings| {
        keep_from_plan(s, leaf, settings, keep_from.unwrap_or_default()).map_err(summarizer::Error::Session)
    };
    let done = ctx.block_on(|cancel, progress| async move {
        match keep_from {
            None => compact_file(file, leaf, &settings, backend, &opts, &cancel, Some(&progress)).await,
            Some(_) => {
                compact_file_planned(file, leaf, &settings, &planner, backend, &opts, &cancel, Some(&progress)).await
            }
        }
    })?;
    let out = &done.outcome;
    eprintln!(
        "compacted: {} call(s), tokens before {} -> after about {}, first kept entry {}{}{}",
        out.calls,
        out.tokens_before,
        out.tokens_after,
        out.first_kept_entry_id,
        if out.from_hook { " (summary from the before-compact hook)" } else { "" },
        if done.synced { "" } else { " (not synced to disk)" }
    );
    println!("{}", done.entry_id);
    Ok(())
}
