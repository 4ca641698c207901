//! `arbor-cli compact`: plan with the engine, summarize with the summarizer (a model or the
//! offline summarizer), append one `compaction` line (synced). Nothing is appended unless the
//! summary is complete; Ctrl-C cancels cleanly.
use super::CmdResult;
use session_engine::Session;
use summarizer::session_ops::compact_file;

pub fn run(args: crate::CompactArgs) -> CmdResult {
    let s = Session::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let settings = super::navigate::compaction_settings(&s, &args.budget);
    drop(s);
    let ctx = super::navigate::Ctx::new(&args.provider, &args.budget)?;
    let opts = ctx.options(args.instructions.clone(), false, ctx.arbor.hooks.before_compact.clone());
    let backend = &ctx.backend;
    let (file, leaf) = (&args.file, args.leaf.as_deref());
    let done = ctx.block_on(|cancel, progress| async move { compact_file(file, leaf, &settings, backend, &opts, &cancel, Some(&progress)).await })?;
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
