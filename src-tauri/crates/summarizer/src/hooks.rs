//! Hooks: Pi's `session_before_compact` and `session_before_tree` as external commands.
//!
//! The command gets the preparation as JSON on stdin. Its stdout may be empty (go on as
//! usual), `{"cancel": true}`, or a replacement: `{"summary": ..., "firstKeptEntryId"?,
//! "tokensBefore"?, "details"?}` for a compaction, `{"summary": ..., "details"?}` for a branch
//! summary. A replacement is written with `fromHook: true`. A timeout, a non-zero exit or
//! unreadable output aborts the operation and shows the hook's stderr.
use crate::error::{Error, Result};
use pi_json::Value;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// A hook command: a program and its arguments (no shell), with a timeout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookCommand {
    pub command: Vec<String>,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    30_000
}

/// Arbor's own settings that concern the summarizer (in Arbor's app-data folder, not Pi's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSettings {
    #[serde(default)]
    pub before_compact: Option<HookCommand>,
    #[serde(default)]
    pub before_navigate: Option<HookCommand>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArborSettings {
    #[serde(default)]
    pub hooks: HookSettings,
    /// Branch-summary output limit (Pi's fixed 2048 truncates long branches).
    #[serde(default)]
    pub branch_summary_max_tokens: Option<u64>,
    /// Write usage, tokensAfter and the summarizer's name into `details` (default true).
    #[serde(default)]
    pub record_details_extras: Option<bool>,
    /// Add the artifact ledger to the summaries Arbor writes (default false: the model's text
    /// alone, as Pi writes it).
    #[serde(default)]
    pub artifact_ledger: Option<bool>,
}

impl ArborSettings {
    /// `$ARBOR_SETTINGS`, else `$XDG_CONFIG_HOME/arbor/settings.json`, else
    /// `~/.config/arbor/settings.json`.
    pub fn default_path() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("ARBOR_SETTINGS") {
            return Some(PathBuf::from(p));
        }
        if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
            return Some(PathBuf::from(x).join("arbor").join("settings.json"));
        }
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config").join("arbor").join("settings.json"))
    }

    /// Writes the settings atomically (temp file + rename), creating the folder.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Config(e.to_string()))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Config(format!("cannot create {}: {e}", dir.display())))?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(|e| Error::Config(format!("cannot write {}: {e}", tmp.display())))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::Config(format!("cannot replace {}: {e}", path.display())))
    }

    /// A missing file gives the defaults; a broken one is an error that names the file.
    pub fn load(path: &Path) -> Result<ArborSettings> {
        match std::fs::read(path) {
            Ok(b) => serde_json::from_slice(&b).map_err(|e| {
                Error::Config(format!("{} is not valid Arbor settings JSON ({e}); fix or delete it", path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ArborSettings::default()),
            Err(e) => Err(Error::Config(format!("cannot read {}: {e}", path.display()))),
        }
    }
}

/// What a hook answered.
#[derive(Debug, Clone, PartialEq)]
pub enum HookAnswer {
    /// Empty output: go on as usual.
    Continue,
    Cancel,
    Replace {
        summary: String,
        first_kept_entry_id: Option<String>,
        tokens_before: Option<f64>,
        details: Option<Value>,
    },
}

const STDERR_LIMIT: usize = 4096;

/// Runs the hook with `input` on stdin.
pub async fn run_hook(hook: &HookCommand, input: &Value, cancel: &CancellationToken) -> Result<HookAnswer> {
    let shown = hook.command.join(" ");
    let Some((program, args)) = hook.command.split_first() else {
        return Err(Error::Config("a hook needs a command (a program and its arguments)".into()));
    };
    let fail = |message: String| Error::Hook { command: shown.clone(), message };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(format!("could not start it ({e}); check the command in Arbor's settings")))?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let payload = pi_json::to_string(input).into_bytes();
    let io = async {
        // Feed stdin while reading stdout/stderr, so a hook that writes before reading cannot
        // deadlock on a full pipe. A hook that ignores stdin (broken pipe) is fine.
        let write = async {
            if let Some(mut w) = stdin.take() {
                let _ = w.write_all(&payload).await;
                let _ = w.shutdown().await;
            }
        };
        let read_out = async {
            let mut buf = Vec::new();
            if let Some(r) = stdout.as_mut() {
                let _ = r.take(16 * 1024 * 1024).read_to_end(&mut buf).await;
            }
            buf
        };
        let read_err = async {
            let mut buf = Vec::new();
            if let Some(r) = stderr.as_mut() {
                let _ = r.take(1024 * 1024).read_to_end(&mut buf).await;
            }
            buf
        };
        let ((), out, err) = tokio::join!(write, read_out, read_err);
        let status = child.wait().await;
        (out, err, status)
    };
    let timeout = Duration::from_millis(hook.timeout_ms);
    let (out, err, status) = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(Error::Cancelled),
        r = tokio::time::timeout(timeout, io) => match r {
            Ok(v) => v,
            Err(_) => return Err(fail(format!("timed out after {} ms; the operation was aborted", hook.timeout_ms))),
        },
    };
    let stderr_text = tail(&String::from_utf8_lossy(&err));
    let status = status.map_err(|e| fail(format!("could not wait for it: {e}")))?;
    if !status.success() {
        let code = status.code().map(|c| c.to_string()).unwrap_or_else(|| "a signal".into());
        return Err(fail(format!(
            "exited with {code}; the operation was aborted. stderr: {}",
            if stderr_text.is_empty() { "(empty)" } else { &stderr_text }
        )));
    }
    let text = String::from_utf8_lossy(&out);
    if text.trim().is_empty() {
        return Ok(HookAnswer::Continue);
    }
    let v = pi_json::parse(text.trim())
        .map_err(|e| fail(format!("printed something that is not JSON ({e:?}); stderr: {stderr_text}")))?;
    if v.get("cancel").is_some_and(Value::truthy) {
        return Ok(HookAnswer::Cancel);
    }
    match v.get("summary") {
        Some(Value::Str(s)) => Ok(HookAnswer::Replace {
            summary: s.to_string(),
            first_kept_entry_id: v.str_field("firstKeptEntryId").map(str::to_string),
            tokens_before: v.num_field("tokensBefore"),
            details: v.get("details").cloned(),
        }),
        Some(_) => Err(fail("answered a `summary` that is not a string".into())),
        None => Ok(HookAnswer::Continue),
    }
}

fn tail(s: &str) -> String {
    let s = s.trim();
    if s.len() <= STDERR_LIMIT {
        return s.to_string();
    }
    let mut start = s.len() - STDERR_LIMIT;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}
