//! The only module that writes files. Session files are append-only: one complete line per
//! append, in one `write_all` on an `O_APPEND` handle, starting with `\n` when the file does not
//! end in one. Nothing here truncates, rewrites or deletes a session file.

use crate::json::Value;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not a regular session file; nothing was written.")]
    NotAFile { path: String },
    #[error("{path}: cannot append ({source}). Nothing was saved; check free disk space and permissions.")]
    Write { path: String, source: std::io::Error },
    #[error("{path}: the entry was written but flushing it to disk failed ({source}); it may not survive a power cut.")]
    Sync { path: String, source: std::io::Error },
    #[error("{path}: the session was rewritten by another program while Arbor appended; your entry was not saved. Reopen the session and try again.")]
    Rewritten { path: String },
    #[error("{path}: another Arbor window or process is writing this session. Close it there, or wait and try again.")]
    Busy { path: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

/// Where an appended line landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// Offset of the entry's first byte (after a separating `\n`, if one was added).
    pub offset: u64,
    /// Bytes written, including the separator and the final `\n`.
    pub written: u64,
    pub synced: bool,
}

fn last_byte(f: &mut File) -> std::io::Result<Option<u8>> {
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(None);
    }
    f.seek(SeekFrom::Start(len - 1))?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b)?;
    Ok(Some(b[0]))
}

/// Appends one JSON line (`line` without `\n`) to an existing session file.
/// `sync` asks for `sync_data` (compaction and branch-summary entries).
pub fn append_line(path: &Path, line: &str, sync: bool) -> Result<Appended, StoreError> {
    let p = path.display().to_string();
    let meta = std::fs::symlink_metadata(path).map_err(|e| StoreError::Io { path: p.clone(), source: e })?;
    let meta = if meta.file_type().is_symlink() { std::fs::metadata(path).map_err(|e| StoreError::Io { path: p.clone(), source: e })? } else { meta };
    if !meta.is_file() {
        return Err(StoreError::NotAFile { path: p });
    }
    debug_assert!(!line.contains('\n'), "an entry line never contains a raw newline");
    let mut f = OpenOptions::new().read(true).append(true).open(path).map_err(|e| StoreError::Write { path: p.clone(), source: e })?;
    let needs_sep = matches!(last_byte(&mut f).map_err(|e| StoreError::Io { path: p.clone(), source: e })?, Some(b) if b != b'\n');
    let mut buf = Vec::with_capacity(line.len() + 2);
    if needs_sep {
        buf.push(b'\n');
    }
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let before = f.metadata().map_err(|e| StoreError::Io { path: p.clone(), source: e })?.len();
    // One write_all: the line is complete or (on a crash or full disk) a lone fragment that the
    // next append's leading `\n` isolates.
    f.write_all(&buf).map_err(|e| StoreError::Write { path: p.clone(), source: e })?;
    let offset = before + needs_sep as u64;
    // Read back: a concurrent rewrite (Pi migrating or truncating the file) shows up here.
    let mut check = vec![0u8; line.len()];
    let ok = f.seek(SeekFrom::Start(offset)).is_ok() && f.read_exact(&mut check).is_ok() && check == line.as_bytes();
    if !ok {
        // The bytes may sit elsewhere if Pi appended at the same moment: look for them near the end.
        let mut all = Vec::new();
        let found = f.seek(SeekFrom::Start(before.saturating_sub(1 << 20))).is_ok()
            && f.read_to_end(&mut all).is_ok()
            && memchr::memmem::find(&all, line.as_bytes()).is_some();
        if !found {
            return Err(StoreError::Rewritten { path: p });
        }
    }
    if sync {
        f.sync_data().map_err(|e| StoreError::Sync { path: p.clone(), source: e })?;
    }
    Ok(Appended { offset, written: buf.len() as u64, synced: sync })
}

/// Appends an entry value (serialized with `JSON.stringify` semantics).
pub fn append_entry(path: &Path, entry: &Value, sync: bool) -> Result<Appended, StoreError> {
    append_line(path, &crate::entries::line(entry), sync)
}

/// A sidecar lock (`<session>.arbor-lock`) that keeps two Arbor processes from writing the same
/// session. The JSONL itself is never locked, so Pi can always append.
pub struct SessionLock {
    _file: File,
    path: PathBuf,
}

impl SessionLock {
    pub fn lock_path(session: &Path) -> PathBuf {
        let mut s = session.as_os_str().to_owned();
        s.push(".arbor-lock");
        PathBuf::from(s)
    }

    pub fn try_acquire(session: &Path) -> Result<SessionLock, StoreError> {
        let path = Self::lock_path(session);
        let p = session.display().to_string();
        let f =
            OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path).map_err(|e| StoreError::Io { path: p.clone(), source: e })?;
        match fs4::fs_std::FileExt::try_lock_exclusive(&f) {
            Ok(true) => Ok(SessionLock { _file: f, path }),
            Ok(false) => Err(StoreError::Busy { path: p }),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Err(StoreError::Busy { path: p }),
            Err(e) => Err(StoreError::Io { path: p, source: e }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

// ------------------------------------------------------------------------------------------
// Where sessions live (§1)
// ------------------------------------------------------------------------------------------

fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"))
}

/// `~` and `~/…` expansion as Pi does it.
pub fn expand_tilde(s: &str) -> PathBuf {
    if s == "~" {
        home()
    } else if let Some(rest) = s.strip_prefix("~/") {
        home().join(rest)
    } else {
        PathBuf::from(s)
    }
}

/// `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(v) if !v.is_empty() => expand_tilde(&v),
        _ => home().join(".pi").join("agent"),
    }
}

/// `<agentDir>/sessions`.
pub fn sessions_root() -> PathBuf {
    agent_dir().join("sessions")
}

/// `--` + cwd without one leading `/` or `\`, with `/`, `\` and `:` as `-`, + `--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix('/').or_else(|| cwd.strip_prefix('\\')).unwrap_or(cwd);
    let body: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{body}--")
}

/// The folder Pi stores a project's sessions in: an explicit `sessionDir` (env
/// `PI_CODING_AGENT_SESSION_DIR` first, then the setting) or `<sessions root>/<encoded cwd>`.
pub fn session_dir_for(cwd: &str, session_dir_setting: Option<&str>) -> PathBuf {
    if let Ok(v) = std::env::var("PI_CODING_AGENT_SESSION_DIR") {
        if !v.is_empty() {
            return expand_tilde(&v);
        }
    }
    if let Some(s) = session_dir_setting {
        return expand_tilde(s);
    }
    sessions_root().join(encode_cwd(cwd))
}

/// `<ts>_<sessionId>.jsonl` with `:` and `.` of the ISO timestamp replaced by `-`.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    format!("{}_{}.jsonl", timestamp.replace([':', '.'], "-"), session_id)
}

/// Writes a new session file (header plus `lines`) atomically: temp file, sync, rename, so the
/// file never exists without a complete header. Refuses to replace an existing file.
pub fn create_session_file(path: &Path, lines: &[String]) -> Result<(), StoreError> {
    let p = path.display().to_string();
    if path.exists() {
        return Err(StoreError::Io {
            path: p,
            source: std::io::Error::new(std::io::ErrorKind::AlreadyExists, "a file with this name already exists; nothing was overwritten"),
        });
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Io { path: p.clone(), source: e })?;
    }
    let tmp = path.with_extension("jsonl.arbor-tmp");
    let mut body = String::new();
    for l in lines {
        body.push_str(l);
        body.push('\n');
    }
    let res = (|| -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(body.as_bytes())?;
        f.sync_all()?;
        // Hard-link then unlink: never replaces a file that appeared in the meantime.
        std::fs::hard_link(&tmp, path)?;
        std::fs::remove_file(&tmp)?;
        if let Some(dir) = path.parent() {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res.map_err(|e| StoreError::Io { path: p, source: e })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_cwd_like_pi() {
        assert_eq!(encode_cwd("/home/u/my.proj:x"), "--home-u-my.proj-x--");
        assert_eq!(encode_cwd("C:\\Users\\dev\\proj"), "--C--Users-dev-proj--");
        assert_eq!(encode_cwd("/"), "----");
        assert_eq!(session_file_name("2025-03-01T09:00:00.000Z", "abc"), "2025-03-01T09-00-00-000Z_abc.jsonl");
    }

    #[test]
    fn session_paths_follow_pi_agent_dir_and_cwd_encoding() {
        // The only test in this crate that touches these variables.
        std::env::set_var("PI_CODING_AGENT_DIR", "/tmp/pi-agent-test");
        std::env::remove_var("PI_CODING_AGENT_SESSION_DIR");
        assert_eq!(sessions_root(), PathBuf::from("/tmp/pi-agent-test/sessions"));
        assert_eq!(session_dir_for("/home/u/proj", None), PathBuf::from("/tmp/pi-agent-test/sessions/--home-u-proj--"));
        assert_eq!(session_dir_for("/home/u/proj", Some("/elsewhere")), PathBuf::from("/elsewhere"));
        std::env::set_var("PI_CODING_AGENT_DIR", "~/agent");
        assert_eq!(agent_dir(), home().join("agent"));
        std::env::remove_var("PI_CODING_AGENT_DIR");
        assert_eq!(agent_dir(), home().join(".pi/agent"));
        let dir = tempfile::tempdir().unwrap();
        let name = session_file_name("2025-03-01T09:00:00.000Z", "019550ef-1280-7e3a-9c34-90cb73af3be4");
        let p = dir.path().join("--p--").join(&name);
        let header = crate::entries::line(&crate::entries::header("019550ef-1280-7e3a-9c34-90cb73af3be4", "2025-03-01T09:00:00.000Z", "/p", None));
        create_session_file(&p, std::slice::from_ref(&header)).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{header}\n"));
        assert_eq!(header, r#"{"type":"session","version":3,"id":"019550ef-1280-7e3a-9c34-90cb73af3be4","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/p"}"#);
    }

    #[test]
    fn append_adds_a_separator_after_a_torn_tail_and_keeps_earlier_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.jsonl");
        std::fs::write(&f, b"{\"a\":1}\n{\"torn\":").unwrap();
        let before = std::fs::read(&f).unwrap();
        let a = append_line(&f, "{\"b\":2}", true).unwrap();
        let after = std::fs::read(&f).unwrap();
        assert_eq!(&after[..before.len()], &before[..]);
        assert_eq!(&after[before.len()..], b"\n{\"b\":2}\n");
        assert_eq!(a.offset, before.len() as u64 + 1);
    }

    #[test]
    fn second_lock_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.jsonl");
        std::fs::write(&f, b"").unwrap();
        let _a = SessionLock::try_acquire(&f).unwrap();
        assert!(matches!(SessionLock::try_acquire(&f), Err(StoreError::Busy { .. })));
    }
}
