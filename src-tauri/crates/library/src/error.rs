//! What can go wrong, and what the user is told: every message is a sentence that says what to
//! do. An error that comes from the file system, SQLite or the file watcher keeps that error as
//! its [`std::error::Error::source`].
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LibError {
    /// Another instance holds the index's write lock longer than `busy_timeout`. The sentence
    /// replaces SQLite's ("database is locked"), which says nothing the user can act on.
    #[error("{0}")]
    Busy(String),
    /// The index is damaged, said in words (`quick_check`'s report, an index that could not be
    /// rebuilt); call [`crate::Library::recover`] (sync does it by itself).
    #[error("the index is damaged ({0}); it will be rebuilt from the session files")]
    Corrupt(String),
    /// SQLite reports the index damaged (corrupt, or not a database); as [`LibError::Corrupt`].
    #[error("the index is damaged ({0}); it will be rebuilt from the session files")]
    SqliteCorrupt(#[source] rusqlite::Error),
    /// A file or folder problem said in words: `message` says what failed and what to do
    /// (`path` is empty when there is no one file to name).
    #[error("{}", at(path, message))]
    Io { path: PathBuf, message: String },
    /// A session file could not be read.
    #[error("{}", at(path, &read_message(source)))]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The folder of the index file could not be made.
    #[error("{}", at(path, &folder_message(source)))]
    IndexFolder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A damaged index file could not be renamed out of the way.
    #[error("{}", at(path, &move_aside_message(source)))]
    MoveAside {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Writing the index failed for want of space (a full disk, a file-size limit). The index is
    /// not damaged (the transaction rolls back): it needs space, not a rebuild.
    #[error("{}", disk_full_message(.0))]
    DiskFull(#[source] rusqlite::Error),
    /// Any other SQLite error.
    #[error("index error: {0}; if it persists, delete the index file (it is rebuilt)")]
    Sqlite(#[source] rusqlite::Error),
    /// The index's rows do not agree with each other (a file's stored entries do not load back
    /// as a session).
    #[error("index error: {0}; if it persists, delete the index file (it is rebuilt)")]
    Inconsistent(String),
    /// FTS5 refused the search text (raw FTS5 syntax that does not parse).
    #[error("cannot search for that ({0}); try plain words")]
    Search(#[source] rusqlite::Error),
    /// The OS file watcher could not start.
    #[error("cannot start the file watcher ({0}); live follow is off, use manual refresh")]
    Watch(#[source] notify::Error),
    /// The watcher's thread could not start.
    #[error("cannot start the watcher thread ({0})")]
    WatchThread(#[source] std::io::Error),
    /// Bad input from the caller (e.g. an empty query).
    #[error("{0}")]
    Invalid(String),
}

/// `path: message`, or `message` alone when there is no path.
fn at(path: &Path, message: &str) -> String {
    if path.as_os_str().is_empty() {
        message.to_string()
    } else {
        format!("{}: {message}", path.display())
    }
}

fn read_message(e: &std::io::Error) -> String {
    format!("cannot read this session file ({e}); check its permissions")
}

fn folder_message(e: &std::io::Error) -> String {
    format!("cannot create the index folder ({e}); pass another --db path")
}

fn move_aside_message(e: &std::io::Error) -> String {
    format!("could not move the damaged index aside ({e}); delete it by hand, Arbor rebuilds it")
}

fn disk_full_message(e: &rusqlite::Error) -> String {
    format!(
        "the session index could not be written ({e}): the disk is full or the file size limit is reached; free some disk space and run it again (the index needs no repair)"
    )
}

impl LibError {
    /// Why the index is damaged, when this says it is ([`LibError::Corrupt`] or
    /// [`LibError::SqliteCorrupt`]): the reason a rebuild's notice gives.
    pub fn damage(&self) -> Option<String> {
        match self {
            LibError::Corrupt(m) => Some(m.clone()),
            LibError::SqliteCorrupt(e) => Some(e.to_string()),
            _ => None,
        }
    }

    /// For a file-system problem (a file or folder that cannot be read or written, or a full
    /// disk): the path (empty when none) and what went wrong, without the path. A pass over many
    /// files records these per file and goes on.
    pub fn file_problem(&self) -> Option<(PathBuf, String)> {
        match self {
            LibError::Io { path, message } => Some((path.clone(), message.clone())),
            LibError::Read { path, source } => Some((path.clone(), read_message(source))),
            LibError::IndexFolder { path, source } => Some((path.clone(), folder_message(source))),
            LibError::MoveAside { path, source } => Some((path.clone(), move_aside_message(source))),
            LibError::DiskFull(e) => Some((PathBuf::new(), disk_full_message(e))),
            _ => None,
        }
    }

    /// A session file could not be read.
    pub(crate) fn read(path: &Path, source: std::io::Error) -> LibError {
        LibError::Read { path: path.to_path_buf(), source }
    }
}

/// Something the user should be told (the index was replaced, …).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Notice {
    /// The index could not be used and was moved aside; a fresh one is being built.
    #[serde(rename_all = "camelCase")]
    IndexReplaced { reason: String, moved_to: PathBuf },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Notice::IndexReplaced { reason, moved_to } => write!(
                f,
                "The session index could not be used ({reason}). It was moved to {} and is being rebuilt from the session files; no session data was lost.",
                moved_to.display()
            ),
        }
    }
}
