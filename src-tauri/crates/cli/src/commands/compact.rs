//! `arbor-cli compact`: plan with the engine, summarize with the summarizer (a model or the
//! offline summarizer), append one `compaction` line (synced). Nothing is appended unless the
//! summary is complete; Ctrl-C cancels cleanly.
use super::CmdResult;
use session_engine::Session;
use summarizer::run::{compaction_entry, plan_compaction, summarize_compaction};

pub fn run(args: crate::CompactArgs) -> CmdResult {
    let s = Session::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let settings = super::navigate::compaction_settings(&s, &args.budget);
    let job = plan_compaction(&s, args.leaf.as_deref(), &settings).map_err(|e| e.to_string())?;
    let ctx = super::navigate::Ctx::new(&args.provider, &args.budget)?;
    let opts = ctx.options(args.instructions.clone(), false, ctx.arbor.hooks.before_compact.clone());
    let _lock = session_engine::store::SessionLock::try_acquire(&args.file).map_err(|e| e.to_string())?;
    let backend = &ctx.backend;
    let out = ctx.block_on(|cancel, progress| async move { summarize_compaction(&job, backend, &opts, &cancel, Some(&progress)).await.map(|o| (job, o)) })?;
    let (job, out) = out;
    super::navigate::unchanged_since_open(&s, &args.file)?;
    let id = session_engine::ids::new_entry_id(|id| s.index_of(id).is_some());
    let entry = compaction_entry(&job, &out, &id, &session_engine::time::now_iso());
    session_engine::store::append_entry(&args.file, &entry, true).map_err(|e| e.to_string())?;
    eprintln!(
        "compacted: {} call(s), tokens before {} -> after about {}, first kept entry {}{}",
        out.calls,
        out.tokens_before,
        out.tokens_after,
        out.first_kept_entry_id,
        if out.from_hook { " (summary from the before-compact hook)" } else { "" }
    );
    println!("{id}");
    Ok(())
}
