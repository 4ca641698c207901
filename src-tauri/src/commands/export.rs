//! Export from the app, to keep or share a session outside Pi: the open session, the branch to a
//! node, or the context at a node, as Markdown or one self-contained HTML file (`session_export`,
//! the same code as `arbor-cli export`). The export reads the session file again on a worker
//! thread, so the open session stays usable while a big file exports; progress streams through a
//! channel and `cancel_export` stops it (`state::export` holds the running export). The file is
//! written by `store::write_new_file`: whole or not at all, and an existing file is replaced only
//! when the user confirmed it.
//!
//! Secrets (API keys, tokens, private keys) are redacted unless the user ticks "keep";
//! `export_secrets` lists them before the export (from the open session, off the session lock).
use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::state::export::ExportState;
use crate::view::export::{
    ExportDone, ExportFormat, ExportProgress, ExportScope, ExportSecrets, SecretItem, SECRETS_LISTED,
};
use session_engine::store::{same_file, write_new_file, NewFileError};
use session_engine::Session;
use session_export::{export_with, find_secrets, Format, Options, Scope};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tauri::ipc::Channel;
use tauri::State;

/// What an export needs from the open session, taken under the lock and then released.
pub struct ExportJob {
    pub file: PathBuf,
    pub title: String,
    /// The node the scope is about (Arbor's leaf when none was given).
    pub node: Option<String>,
    pub scope: ExportScope,
    pub format: ExportFormat,
    /// Write secrets as they are (false unless the user asked).
    pub keep_secrets: bool,
}

impl ExportJob {
    pub fn from_open(
        state: &AppState,
        scope: ExportScope,
        entry_id: Option<&str>,
        format: ExportFormat,
    ) -> Result<ExportJob, AppError> {
        state.with_open(|o| {
            let node = match entry_id {
                Some(id) => Some(
                    o.session
                        .index_of(id)
                        .map(|_| id.to_string())
                        .ok_or_else(|| AppError::UnknownEntry(id.to_string()))?,
                ),
                None => o.leaf.map(|i| o.session.id(i).to_string()),
            };
            let file_name = o.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let title = match o.session.name() {
                Some(n) => format!("{n} ({file_name})"),
                None => file_name,
            };
            Ok(ExportJob { file: o.path.clone(), title, node, scope, format, keep_secrets: false })
        })
    }

    /// Where the export goes unless the user picks another place: the documents folder (else
    /// the home folder, else beside the session), named after the session and the scope.
    pub fn default_path(&self, documents: Option<PathBuf>) -> PathBuf {
        let stem = self.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "session".into());
        let short =
            |id: &Option<String>| id.as_deref().map(|i| i.chars().take(8).collect::<String>()).unwrap_or_default();
        let name = match self.scope {
            ExportScope::Session => stem,
            ExportScope::Branch => format!("{stem}-branch-{}", short(&self.node)),
            ExportScope::Context => format!("{stem}-context-{}", short(&self.node)),
        };
        let ext = match self.format {
            ExportFormat::Markdown => "md",
            ExportFormat::Html => "html",
        };
        let dir = documents.or_else(|| self.file.parent().map(Path::to_path_buf)).unwrap_or_else(|| PathBuf::from("."));
        dir.join(format!("{name}.{ext}"))
    }

    /// Reads the session file, exports it to `out` and reports progress (bytes of the export's
    /// input done, total). `cancel` stops it between writes; nothing is left at `out` then.
    pub fn run(
        &self,
        out: &Path,
        replace: bool,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ExportDone, AppError> {
        let started = Instant::now();
        if out.as_os_str().is_empty() {
            return Err(AppError::BadInput("choose where to save the export".into()));
        }
        if same_file(out, &self.file) {
            return Err(AppError::Refused(format!(
                "{} is the session file itself; choose another name",
                out.display()
            )));
        }
        let session = Session::open(&self.file)?;
        let scope = self.scope_in(&session)?;
        let format = match self.format {
            ExportFormat::Markdown => Format::Markdown,
            ExportFormat::Html => Format::Html,
        };
        let mut bytes = 0u64;
        let opts = Options { keep_secrets: self.keep_secrets };
        let res = write_new_file(out, replace, |w| {
            let mut w = Cancellable { inner: w, cancel, written: &mut bytes };
            export_with(&session, scope, format, opts, &self.title, &mut w, progress)
        });
        let stats = res.map_err(|e| match e {
            NewFileError::Io(_) if cancel.load(Ordering::Relaxed) => {
                AppError::Refused("export cancelled; nothing was written".into())
            }
            error => AppError::NewFile { path: out.to_path_buf(), error },
        })?;
        Ok(ExportDone {
            path: out.display().to_string(),
            entries: stats.entries as u32,
            branches: stats.branches as u32,
            bytes: bytes as f64,
            ms: started.elapsed().as_secs_f64() * 1e3,
            redacted: stats.secrets.len() as u32,
        })
    }

    fn scope_in(&self, session: &Session) -> Result<Scope, AppError> {
        let leaf = match &self.node {
            Some(id) => Some(session.index_of(id).ok_or_else(|| AppError::UnknownEntry(id.clone()))?),
            None => session.file_leaf(),
        };
        Ok(match self.scope {
            ExportScope::Session => Scope::Session { leaf },
            ExportScope::Branch => Scope::Branch { leaf },
            ExportScope::Context => Scope::Context { leaf },
        })
    }

    /// The secrets this export would redact, from the open session as it is now; the search
    /// runs on a snapshot, without the session lock.
    pub fn secrets(&self, state: &AppState) -> Result<ExportSecrets, AppError> {
        let session = state.with_open(|o| Ok(o.session.snapshot()))?;
        self.secrets_in(&session)
    }

    fn secrets_in(&self, session: &Session) -> Result<ExportSecrets, AppError> {
        let found = find_secrets(session, self.scope_in(session)?);
        let items = found
            .iter()
            .take(SECRETS_LISTED)
            .map(|f| SecretItem {
                entry_id: f.entry_id.clone(),
                entry_kind: session.role(f.entry).unwrap_or(session.entry(f.entry).type_name.as_ref()).to_string(),
                field: f.field.clone(),
                kind: f.kind.to_string(),
                start: f.start as u32,
                end: f.end as u32,
            })
            .collect();
        Ok(ExportSecrets { items, total: found.len() as u32 })
    }
}

/// A writer that fails once the cancel flag is set, and counts bytes.
struct Cancellable<'a> {
    inner: &'a mut dyn Write,
    cancel: &'a AtomicBool,
    written: &'a mut u64,
}

impl Write for Cancellable<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.cancel.load(Ordering::Relaxed) {
            // Not `Interrupted`: `write_all` retries that kind forever.
            return Err(std::io::Error::other("export cancelled"));
        }
        let n = self.inner.write(buf)?;
        *self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The path the export dialog proposes for this scope and format.
#[tauri::command]
#[specta::specta]
pub fn export_default_path(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    scope: ExportScope,
    entry_id: Option<String>,
    format: ExportFormat,
) -> IpcResult<String> {
    use tauri::Manager;
    let job = ExportJob::from_open(&state, scope, entry_id.as_deref(), format)?;
    let docs = app.path().document_dir().ok().filter(|d| d.is_dir()).or_else(|| app.path().home_dir().ok());
    Ok(job.default_path(docs).display().to_string())
}

/// The native save dialog ("Browse…" in the export dialog); None when the user cancelled it.
#[tauri::command]
#[specta::specta]
pub async fn pick_export_path(app: tauri::AppHandle, suggested: String) -> IpcResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let p = PathBuf::from(&suggested);
    let mut d = app.dialog().file().add_filter("Markdown", &["md"]).add_filter("HTML", &["html"]);
    if let Some(dir) = p.parent().filter(|d| d.is_dir()) {
        d = d.set_directory(dir);
    }
    if let Some(name) = p.file_name() {
        d = d.set_file_name(name.to_string_lossy());
    }
    Ok(d.blocking_save_file().and_then(|p| p.into_path().ok()).map(|p| p.display().to_string()))
}

/// The secrets an export of this scope would redact (the dialog lists them before exporting).
#[tauri::command]
#[specta::specta]
pub async fn export_secrets(
    state: State<'_, AppState>,
    scope: ExportScope,
    entry_id: Option<String>,
) -> IpcResult<ExportSecrets> {
    let job = ExportJob::from_open(&state, scope, entry_id.as_deref(), ExportFormat::Html)?;
    let session = state.with_open(|o| Ok(o.session.snapshot()))?;
    match tauri::async_runtime::spawn_blocking(move || job.secrets_in(&session)).await {
        Ok(r) => Ok(r?),
        Err(e) => Err(AppError::Refused(format!("the search for secrets stopped unexpectedly ({e})")).into()),
    }
}

/// Exports on a worker thread; progress goes to `on_progress` (at most about every 1%). Secrets
/// are redacted unless `keep_secrets`.
#[tauri::command]
#[specta::specta]
#[allow(clippy::too_many_arguments)]
pub async fn export_session(
    state: State<'_, AppState>,
    exports: State<'_, ExportState>,
    scope: ExportScope,
    entry_id: Option<String>,
    format: ExportFormat,
    path: String,
    replace: bool,
    keep_secrets: bool,
    on_progress: Channel<ExportProgress>,
) -> IpcResult<ExportDone> {
    let mut job = ExportJob::from_open(&state, scope, entry_id.as_deref(), format)?;
    job.keep_secrets = keep_secrets;
    let cancel = exports.start()?;
    let out = store_path(&path);
    let flag = cancel.clone();
    let res = tauri::async_runtime::spawn_blocking(move || {
        let mut last = u64::MAX;
        let mut progress = |done: u64, total: u64| {
            let pct = done.saturating_mul(100).checked_div(total).unwrap_or(100);
            if pct != last {
                last = pct;
                let _ = on_progress.send(ExportProgress { done: done as f64, total: total as f64 });
            }
        };
        job.run(&out, replace, &flag, &mut progress)
    })
    .await;
    exports.finish();
    match res {
        Ok(r) => Ok(r?),
        Err(e) => Err(AppError::Refused(format!("the export stopped unexpectedly ({e}); nothing was written")).into()),
    }
}

/// `~/x` as the user typed it in the path field.
fn store_path(p: &str) -> PathBuf {
    session_engine::store::expand_tilde(p.trim())
}

/// Stops the running export; false when none runs.
#[tauri::command]
#[specta::specta]
pub fn cancel_export(exports: State<'_, ExportState>) -> bool {
    exports.cancel()
}
