//! The only module that writes files. Session files are append-only: one complete line per
//! append, in one `write_all` on an `O_APPEND` handle, starting with `\n` when the file does not
//! end in one. Nothing here truncates, rewrites or deletes a session file.

use pi_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not a regular session file; nothing was written.")]
    NotAFile { path: String },
    #[error("{path}: cannot append ({source}). Nothing was saved; check free disk space and permissions.")]
    Write { path: String, source: std::io::Error },
    #[error("{path}: the disk is full or the file size limit is reached ({source}); nothing was written. Free some disk space and try again.")]
    Full { path: String, source: std::io::Error },
    #[error("{path}: Arbor may not write to this file ({source}); nothing was written. Make it writable (for example `chmod u+w`) and try again.")]
    ReadOnly { path: String, source: std::io::Error },
    #[error(
        "{path}: the disk filled up while the entry was being written ({source}); a partial line was left, which Pi and Arbor skip, and the entry was not saved. Free some disk space and try again."
    )]
    Partial { path: String, source: std::io::Error },
    #[error("{path} changed while Arbor was writing to it (another program appended to it); nothing was written. Run it again.")]
    Changed { path: String },
    #[error(
        "{path}: another program appended at the same instant, so Arbor's entry was saved beside that program's newest entry instead of after it; check the session's tree (`arbor-cli tree FILE`) before continuing from it."
    )]
    Overtaken { path: String },
    #[error(
        "{path}: the entry was written but flushing it to disk failed ({source}); it may not survive a power cut."
    )]
    Sync { path: String, source: std::io::Error },
    #[error("{path}: the session was rewritten by another program while Arbor appended; your entry was not saved. Reopen the session and try again.")]
    Rewritten { path: String },
    #[error("{path}: another Arbor window or process is writing this session. Close it there, or wait and try again.")]
    Busy { path: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: cannot create the lock file {lock} ({source}); nothing was written. Make the session's folder writable and try again.")]
    Lock { path: String, lock: String, source: std::io::Error },
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

fn is_full(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), StorageFull | QuotaExceeded | FileTooLarge)
}

/// The error for a failed write that left `done` bytes of the line in the file.
fn write_error(p: String, done: usize, e: std::io::Error) -> StoreError {
    if done > 0 {
        StoreError::Partial { path: p, source: e }
    } else if is_full(&e) {
        StoreError::Full { path: p, source: e }
    } else if matches!(e.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem) {
        // EACCES, EPERM (an immutable file), EROFS
        StoreError::ReadOnly { path: p, source: e }
    } else {
        StoreError::Write { path: p, source: e }
    }
}

/// Refuses, before writing, a line that cannot fit: past the process's file-size limit
/// (RLIMIT_FSIZE; the kernel would write part of it and fail the rest), or (Linux) more than the
/// free space, by reserving the bytes first with `fallocate(KEEP_SIZE)` (the file's size does not
/// change). A refused line leaves no byte behind.
#[cfg(unix)]
fn ensure_room(f: &File, at: u64, n: u64) -> std::io::Result<()> {
    let lim = rustix::process::getrlimit(rustix::process::Resource::Fsize);
    if lim.current.is_some_and(|max| at.saturating_add(n) > max) {
        return Err(std::io::Error::from(rustix::io::Errno::FBIG));
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = rustix::fs::fallocate(f, rustix::fs::FallocateFlags::KEEP_SIZE, at, n) {
        let e = std::io::Error::from(e);
        if is_full(&e) {
            return Err(e);
        }
        // EOPNOTSUPP and the like: this file system cannot reserve; the write decides.
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = f;
    Ok(())
}

#[cfg(not(unix))]
fn ensure_room(_f: &File, _at: u64, _n: u64) -> std::io::Result<()> {
    Ok(())
}

/// Appends one JSON line (`line` without `\n`) to an existing session file.
/// `sync` asks for `sync_data` (compaction and branch-summary entries).
pub fn append_line(path: &Path, line: &str, sync: bool) -> Result<Appended, StoreError> {
    append_line_planned(path, line, sync, None)
}

/// [`append_line`] for an entry planned on the file as it was `planned_len` bytes long (its
/// parent is the leaf at that length): refuses with [`StoreError::Changed`] when the file has
/// another length just before the write, and reports [`StoreError::Overtaken`] when another
/// program's append landed between that check and the write (the window is one system call;
/// the entry is then in the file, after the other program's line).
///
/// Never a partial line on a full disk or at the file-size limit: the room is checked (and on
/// Linux reserved) first, and a refused line writes nothing. If a write still fails halfway
/// ([`StoreError::Partial`]), the fragment stays (nothing is ever truncated) and the next
/// append starts with `\n`, so the fragment is a separate malformed line that Pi skips.
pub fn append_line_planned(
    path: &Path,
    line: &str,
    sync: bool,
    planned_len: Option<u64>,
) -> Result<Appended, StoreError> {
    let p = path.display().to_string();
    let meta = std::fs::symlink_metadata(path).map_err(|e| StoreError::Io { path: p.clone(), source: e })?;
    let meta = if meta.file_type().is_symlink() {
        std::fs::metadata(path).map_err(|e| StoreError::Io { path: p.clone(), source: e })?
    } else {
        meta
    };
    if !meta.is_file() {
        return Err(StoreError::NotAFile { path: p });
    }
    debug_assert!(!line.contains('\n'), "an entry line never contains a raw newline");
    let mut f = OpenOptions::new().read(true).append(true).open(path).map_err(|e| write_error(p.clone(), 0, e))?;
    let needs_sep =
        matches!(last_byte(&mut f).map_err(|e| StoreError::Io { path: p.clone(), source: e })?, Some(b) if b != b'\n');
    let mut buf = Vec::with_capacity(line.len() + 2);
    if needs_sep {
        buf.push(b'\n');
    }
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let before = f.metadata().map_err(|e| StoreError::Io { path: p.clone(), source: e })?.len();
    ensure_room(&f, before, buf.len() as u64).map_err(|e| write_error(p.clone(), 0, e))?;
    // The last look before the write, on the descriptor that writes: the window left is the
    // time between two system calls.
    let before = f.metadata().map_err(|e| StoreError::Io { path: p.clone(), source: e })?.len();
    if planned_len.is_some_and(|l| l != before) {
        return Err(StoreError::Changed { path: p });
    }
    // One write (retried only for what a short write left): the line is complete, or nothing,
    // or (a crash, a failure past the room check) a lone fragment that the next append's
    // leading `\n` isolates.
    let mut done = 0;
    while done < buf.len() {
        match f.write(&buf[done..]) {
            Ok(0) => return Err(write_error(p, done, std::io::ErrorKind::WriteZero.into())),
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(write_error(p, done, e)),
        }
    }
    // Where the line landed: an O_APPEND write leaves the position at its end.
    let end = f.stream_position().unwrap_or(before + buf.len() as u64);
    let landed = end.saturating_sub(buf.len() as u64);
    let offset = landed + needs_sep as u64;
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
    if planned_len.is_some() && landed != before {
        return Err(StoreError::Overtaken { path: p });
    }
    Ok(Appended { offset, written: buf.len() as u64, synced: sync })
}

/// Appends an entry value (serialized with `JSON.stringify` semantics).
pub fn append_entry(path: &Path, entry: &Value, sync: bool) -> Result<Appended, StoreError> {
    append_line(path, &crate::entries::line(entry), sync)
}

/// [`append_line_planned`] for an entry value.
pub fn append_entry_planned(path: &Path, entry: &Value, sync: bool, planned_len: u64) -> Result<Appended, StoreError> {
    append_line_planned(path, &crate::entries::line(entry), sync, Some(planned_len))
}

/// How often an entry whose meaning does not depend on the leaf (a label, a session name) is
/// planned again when another program appended between reading and writing: at most this many
/// attempts, within [`REPLAN_WITHIN`]. A compaction or a navigation is never retried this way:
/// its meaning depends on the leaf it was planned on.
pub const REPLAN_ATTEMPTS: u32 = 20;
pub const REPLAN_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `attempt` (plan on what was read, then a planned append) until it does not fail with
/// [`StoreError::Changed`]; between two attempts `refresh` reads what the other program
/// appended, so the next plan hangs the entry on the grown file's leaf. Returns the result and
/// the number of attempts; after [`REPLAN_ATTEMPTS`] or [`REPLAN_WITHIN`], the last `Changed`.
pub fn replanned<T>(
    mut attempt: impl FnMut() -> Result<T, StoreError>,
    mut refresh: impl FnMut() -> Result<(), StoreError>,
) -> Result<(T, u32), StoreError> {
    let start = std::time::Instant::now();
    let mut n = 0;
    loop {
        n += 1;
        match attempt() {
            Err(StoreError::Changed { path }) => {
                if n >= REPLAN_ATTEMPTS || start.elapsed() >= REPLAN_WITHIN {
                    return Err(StoreError::Changed { path });
                }
                // A short, growing pause: a writer in the middle of a burst gets past it.
                std::thread::sleep(std::time::Duration::from_micros(200 * u64::from(n)));
                refresh()?;
            }
            r => return r.map(|t| (t, n)),
        }
    }
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
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::Lock { path: p.clone(), lock: path.display().to_string(), source: e })?;
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
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a file with this name already exists; nothing was overwritten",
            ),
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

/// Whether two paths name the same file (same device and inode; canonical paths elsewhere).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Why `write_new_file` wrote nothing at `out`.
#[derive(Debug)]
pub enum NewFileError {
    /// `out` exists (or appeared while writing) and `replace` was not asked for.
    Exists,
    /// `out` is a folder.
    IsDir,
    /// Writing failed (or `body` failed, e.g. cancelled); the partial file was removed.
    Io(std::io::Error),
}

/// Writes a new file (an export, not a session file) through a buffered writer into a hidden
/// temporary file beside `out`, synced, which then takes `out`'s name: linked when `replace` is
/// false (so a file that appeared meanwhile is never replaced), renamed over it otherwise. On any
/// error, including one `body` returns, the temporary file is removed and `out` is untouched.
pub fn write_new_file<T>(
    out: &Path,
    replace: bool,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<T>,
) -> Result<T, NewFileError> {
    if out.is_dir() {
        return Err(NewFileError::IsDir);
    }
    if out.exists() && !replace {
        return Err(NewFileError::Exists);
    }
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "export".into());
    let tmp = dir.join(format!(".{base}.arbor-tmp-{}", std::process::id()));
    let res = (|| -> Result<T, NewFileError> {
        let f = OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(NewFileError::Io)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        let v = body(&mut w).map_err(NewFileError::Io)?;
        let f = w.into_inner().map_err(|e| NewFileError::Io(e.into_error()))?;
        f.sync_all().map_err(NewFileError::Io)?;
        if replace {
            std::fs::rename(&tmp, out).map_err(NewFileError::Io)?;
        } else {
            std::fs::hard_link(&tmp, out).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    NewFileError::Exists
                } else {
                    NewFileError::Io(e)
                }
            })?;
            let _ = std::fs::remove_file(&tmp);
        }
        Ok(v)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
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
        let header = crate::entries::line(&crate::entries::header(
            "019550ef-1280-7e3a-9c34-90cb73af3be4",
            "2025-03-01T09:00:00.000Z",
            "/p",
            None,
        ));
        create_session_file(&p, std::slice::from_ref(&header)).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{header}\n"));
        assert_eq!(
            header,
            r#"{"type":"session","version":3,"id":"019550ef-1280-7e3a-9c34-90cb73af3be4","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/p"}"#
        );
    }

    #[test]
    fn a_new_file_is_whole_or_absent_and_never_replaces_unasked() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("e.html");
        let n = write_new_file(&out, false, |w| w.write_all(b"one").map(|_| 3)).unwrap();
        assert_eq!((n, std::fs::read(&out).unwrap()), (3, b"one".to_vec()));
        assert!(matches!(write_new_file(&out, false, |w| w.write_all(b"two")), Err(NewFileError::Exists)));
        assert!(matches!(write_new_file(dir.path(), true, |w| w.write_all(b"x")), Err(NewFileError::IsDir)));
        // A body that fails (a cancelled export) leaves neither the file nor a temporary.
        let cancelled = dir.path().join("c.html");
        let r = write_new_file(&cancelled, false, |w| {
            w.write_all(b"partial")?;
            Err::<(), _>(std::io::Error::new(std::io::ErrorKind::Interrupted, "cancelled"))
        });
        assert!(matches!(r, Err(NewFileError::Io(e)) if e.kind() == std::io::ErrorKind::Interrupted));
        assert!(!cancelled.exists());
        write_new_file(&out, true, |w| w.write_all(b"two")).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"two");
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names, vec!["e.html".to_string()], "no temporary file is left behind");
        assert!(same_file(&out, &dir.path().join(".").join("e.html")) && !same_file(&out, &cancelled));
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
    fn planned_append_refuses_a_file_that_moved_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.jsonl");
        std::fs::write(&f, b"{\"a\":1}\n").unwrap();
        let planned = 8;
        std::fs::OpenOptions::new().append(true).open(&f).unwrap().write_all(b"{\"pi\":2}\n").unwrap();
        let before = std::fs::read(&f).unwrap();
        assert!(matches!(append_line_planned(&f, "{\"b\":3}", false, Some(planned)), Err(StoreError::Changed { .. })));
        assert_eq!(std::fs::read(&f).unwrap(), before);
        let a = append_line_planned(&f, "{\"b\":3}", false, Some(before.len() as u64)).unwrap();
        assert_eq!(a.offset, before.len() as u64);
        assert_eq!(std::fs::read(&f).unwrap(), [&before[..], b"{\"b\":3}\n"].concat());
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
