//! `arbor-cli navigate`: move the leaf to `--target`, optionally appending a `branch_summary` of
//! the branch being left (and a `label`). As in Pi, a move without summary or label writes
//! nothing: the new leaf is printed. If summarizing fails, nothing is written.
use super::CmdResult;
use session_engine::context::CompactionSettings;
use session_engine::settings::PiSettings;
use session_engine::Session;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use summarizer::catalog::Catalog;
use summarizer::hooks::{ArborSettings, HookCommand};
use summarizer::run::{Backend, RunOptions};
use summarizer::session_ops::navigate_file;
use summarizer::{CancellationToken, Progress, ProgressFn};

pub fn run(args: crate::NavigateArgs) -> CmdResult {
    let session = Session::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let pi = pi_settings(&session);
    // Pi budgets a branch summary with the window of the model it runs, the session's: from
    // Pi's models.json or table at the leaf being left, unless --context-window says otherwise.
    let leaf = super::leaf_arg(&session, args.leaf.as_deref())?;
    let window = args.budget.context_window.unwrap_or_else(|| super::session_window(&session, leaf).tokens);
    drop(session);
    let ctx = Ctx::new(&args.provider, &args.budget)?;
    let budget = match args.budget.branch_budget {
        Some(b) => b as f64,
        None => {
            let reserve =
                args.budget.branch_reserve_tokens.map(|r| r as f64).unwrap_or_else(|| pi.branch_reserve_tokens());
            session_engine::branch::branch_budget(window as f64, reserve)
        }
    };
    let mut opts = ctx.options(args.instructions.clone(), false, ctx.arbor.hooks.before_navigate.clone());
    opts.artifact_ledger = args.ledger.resolve(ctx.arbor.artifact_ledger);
    let backend = &ctx.backend;
    let a = &args;
    let done = ctx.block_on(|cancel, progress| async move {
        navigate_file(
            &a.file,
            a.leaf.as_deref(),
            &a.target,
            a.summarize,
            budget,
            a.label.as_deref(),
            backend,
            &opts,
            &cancel,
            Some(&progress),
        )
        .await
    })?;
    if done.no_op {
        eprintln!("the target is already the leaf; nothing to do");
    } else if done.written.is_empty() {
        eprintln!("nothing written: as in Pi, a move without summary or label stays in memory");
    }
    if let Some(t) = &done.editor_text {
        eprintln!("editor text (the target's message, to edit and resend):\n{t}");
    }
    println!("{}", done.new_leaf_id.as_deref().unwrap_or("null"));
    Ok(())
}

/// Pi's settings files (global + the session's project), then the budget flags.
pub fn pi_settings(session: &Session) -> PiSettings {
    let cwd = session.header().and_then(|h| h.cwd.clone());
    PiSettings::load(&session_engine::store::agent_dir(), cwd.as_deref().map(Path::new))
}

pub fn compaction_settings(session: &Session, b: &crate::BudgetArgs) -> CompactionSettings {
    let mut c = pi_settings(session).compaction();
    if let Some(r) = b.reserve_tokens {
        c.reserve_tokens = r as f64;
    }
    if let Some(k) = b.keep_recent_tokens {
        c.keep_recent_tokens = k as f64;
    }
    if let Some(e) = b.compaction_enabled {
        c.enabled = e;
    }
    c
}

/// The provider, Arbor's settings and the runtime, shared by `compact` and `navigate`.
pub struct Ctx {
    pub backend: Backend,
    pub arbor: ArborSettings,
    model_max_output: Option<u64>,
}

impl Ctx {
    pub fn new(p: &crate::ProviderArgs, b: &crate::BudgetArgs) -> Result<Ctx, String> {
        let arbor = match ArborSettings::default_path() {
            Some(path) => ArborSettings::load(&path).map_err(|e| e.to_string())?,
            None => ArborSettings::default(),
        };
        let catalog = catalog()?;
        let prepared =
            summarizer::setup::prepare_backend(&p.provider, p.model.as_deref(), p.base_url.as_deref(), &catalog)
                .map_err(|e| e.to_string())?;
        for n in &prepared.notices {
            eprintln!("note: {n}");
        }
        let mut backend = prepared.backend;
        if let (Backend::Model(c), Some(w)) = (&mut backend, b.context_window) {
            // Rebuild with the explicit window for the silent-overflow check.
            let mut cfg = c.config().clone();
            cfg.context_window = w;
            *c = summarizer::Client::new(cfg).map_err(|e| e.to_string())?;
        }
        Ok(Ctx { backend, arbor, model_max_output: prepared.model.map(|m| m.max_output) })
    }

    pub fn options(&self, instructions: Option<String>, replace: bool, hook: Option<HookCommand>) -> RunOptions {
        let env_extras = std::env::var("ARBOR_DETAILS_EXTRAS").map(|v| v != "0" && v != "off").ok();
        // The CLI's default is Pi's exact line for model summaries (the conformance contract:
        // the same lines as Pi's for the same answers). Offline summaries never equal Pi's text,
        // so they keep their `offline` marker and the extras. ARBOR_DETAILS_EXTRAS=1 or
        // Arbor's `recordDetailsExtras: true` records usage and tokensAfter for model runs too.
        let default_extras = matches!(self.backend, Backend::Offline);
        RunOptions {
            custom_instructions: instructions,
            replace_instructions: replace,
            branch_max_tokens: self
                .arbor
                .branch_summary_max_tokens
                .unwrap_or(summarizer::prompts::DEFAULT_BRANCH_MAX_TOKENS),
            model_max_output: self.model_max_output,
            record_extras: env_extras.or(self.arbor.record_details_extras).unwrap_or(default_extras),
            hook,
            artifact_ledger: self.arbor.artifact_ledger.unwrap_or(false),
        }
    }

    /// Runs `f` on a runtime with Ctrl-C wired to cancellation and progress on stderr.
    pub fn block_on<T, F, Fut>(&self, f: F) -> Result<T, String>
    where
        F: FnOnce(CancellationToken, ProgressFn) -> Fut,
        Fut: Future<Output = summarizer::Result<T>>,
    {
        block_on(f)
    }
}

/// The model catalog: Arbor's `models.json` beside its settings, else the built-in one.
pub fn catalog() -> Result<Catalog, String> {
    let catalog_path = ArborSettings::default_path().and_then(|p| p.parent().map(|d| d.join("models.json")));
    match catalog_path {
        Some(path) => Catalog::load(&path).map_err(|e| e.to_string()),
        None => Ok(Catalog::builtin()),
    }
}

/// Runs `f` on a runtime with Ctrl-C wired to cancellation and retries reported on stderr.
pub fn block_on<T, F, Fut>(f: F) -> Result<T, String>
where
    F: FnOnce(CancellationToken, ProgressFn) -> Fut,
    Fut: Future<Output = summarizer::Result<T>>,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let cancel = CancellationToken::new();
    let progress: ProgressFn = Arc::new(|p| {
        if let Progress::Retrying { attempt, delay, reason } = p {
            eprintln!("attempt {attempt} failed ({reason}); retrying in {:.1} s", delay.as_secs_f64());
        }
    });
    rt.block_on(async {
        let c2 = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("cancelling…");
                c2.cancel();
            }
        });
        f(cancel, progress).await.map_err(|e| e.to_string())
    })
}
