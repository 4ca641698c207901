//! The one error type that crosses IPC: a tagged `{kind, message, hint}`. The UI branches on
//! `kind` and shows `message` and `hint`; it never parses text.

use serde::Serialize;
use specta::Type;

#[derive(Debug, Clone, Copy, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// No session is open, or the id/row asked for does not exist.
    NotFound,
    /// A file could not be read or written.
    Io,
    /// The input (a file, a value from the UI) is not usable.
    Invalid,
    /// The operation is refused on purpose (read-only file, already compacted, ...).
    Refused,
    /// The user cancelled a summary or message; nothing was written.
    Cancelled,
    /// The context overflowed and compaction.enabled is false: offer "Compact now".
    CompactionDisabled,
    /// The model provider failed (HTTP, overflow, timeout, empty answer, ...); nothing was written.
    Provider,
    /// The API key is missing or rejected, or the OS keyring does not work.
    Key,
    /// A before-compact / before-navigate hook cancelled or failed.
    Hook,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct IpcError {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: String,
}

/// Everything that can go wrong inside the app crate. The single exhaustive `From` below decides
/// the IPC kinds, so a new variant does not compile until it has a kind and a hint.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("no session is open")]
    NoSession,
    #[error("entry {0} is not in this session")]
    UnknownEntry(String),
    #[error(transparent)]
    Open(#[from] session_engine::OpenError),
    #[error(transparent)]
    Store(#[from] session_engine::store::StoreError),
    #[error(transparent)]
    Settings(#[from] session_engine::settings::SettingsError),
    #[error("{0}")]
    ReadOnly(String),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Summarizer(#[from] summarizer::Error),
    #[error(transparent)]
    Library(#[from] ::library::LibError),
    /// A compaction kept from an entry that is not a valid cut point ("Compact up to here").
    #[error(transparent)]
    Cut(#[from] pi_review::cut::KeepFromError),
    /// Writing a new file (an export) failed; `path` is the file asked for.
    #[error("{}", new_file_message(path, error))]
    NewFile { path: std::path::PathBuf, error: session_engine::store::NewFileError },
}

impl From<AppError> for IpcError {
    fn from(e: AppError) -> IpcError {
        let message = e.to_string();
        let (kind, hint) = match &e {
            AppError::NoSession => (ErrorKind::NotFound, "Open a session from the picker first.".to_string()),
            AppError::UnknownEntry(_) => {
                (ErrorKind::NotFound, "The session may have changed on disk; reopen it.".to_string())
            }
            AppError::Open(session_engine::OpenError::NotAFile { .. }) => {
                (ErrorKind::Invalid, "Choose a .jsonl session file.".to_string())
            }
            AppError::Open(session_engine::OpenError::NotFound { .. } | session_engine::OpenError::Io { .. })
            | AppError::Io { .. } => {
                (ErrorKind::Io, "Check that the file exists and that you may read and write it.".to_string())
            }
            AppError::Store(e) => store_kind_and_hint(e),
            AppError::Settings(session_engine::settings::SettingsError::Locked { .. }) => {
                (ErrorKind::Refused, "Nothing was written; try again in a moment.".to_string())
            }
            AppError::Settings(session_engine::settings::SettingsError::Io { .. }) => {
                (ErrorKind::Io, "Check free disk space and the file's permissions.".to_string())
            }
            AppError::Settings(session_engine::settings::SettingsError::Invalid { .. }) => (
                ErrorKind::Invalid,
                "Fix the JSON syntax of that settings file (Arbor will not overwrite a file it cannot parse)."
                    .to_string(),
            ),
            AppError::ReadOnly(_) => {
                (ErrorKind::Refused, "This file opens read-only in Arbor; nothing was written to it.".to_string())
            }
            AppError::BadInput(_) => (ErrorKind::Invalid, "Check the value and try again.".to_string()),
            AppError::Refused(_) => (ErrorKind::Refused, "Nothing was changed.".to_string()),
            AppError::Summarizer(e) => summarizer_kind_and_hint(e),
            AppError::Library(e) => library_kind_and_hint(e),
            AppError::Cut(pi_review::cut::KeepFromError::Invalid(_)) => {
                (ErrorKind::Refused, "Nothing was written; choose one of the valid cut points it names.".to_string())
            }
            AppError::Cut(pi_review::cut::KeepFromError::Refused(_)) => {
                (ErrorKind::Refused, "Nothing was written; continue the conversation first.".to_string())
            }
            AppError::NewFile { error, .. } => new_file_kind_and_hint(error),
        };
        IpcError { kind, message, hint }
    }
}

pub type IpcResult<T> = Result<T, IpcError>;

/// Every summarizer error, by name (the message is the error's own text, which never contains a
/// key): a new variant does not compile until it has a kind and a hint.
fn summarizer_kind_and_hint(e: &summarizer::Error) -> (ErrorKind, String) {
    use summarizer::Error as E;
    let (kind, hint) = match e {
        E::Cancelled => (ErrorKind::Cancelled, "Nothing was written."),
        E::OverflowCompactionDisabled { .. } => (
            ErrorKind::CompactionDisabled,
            "Use \"Compact now\", then send again (or turn compaction.enabled on in Budgets).",
        ),
        E::Unauthorized { .. } | E::Keyring(_) => (
            ErrorKind::Key,
            "Store a valid key for this provider in the Model panel, or choose the offline summarizer.",
        ),
        E::Config(_) => (
            ErrorKind::Invalid,
            "Check the provider, model and base URL in the Model panel (the offline summarizer needs no key).",
        ),
        E::Hook { .. } | E::HookCancelled => {
            (ErrorKind::Hook, "Nothing was written. Check the hook command in Settings.")
        }
        E::Session(_) => (ErrorKind::Refused, "Nothing was written; reopen the session and try again."),
        E::Overflow { .. }
        | E::Quota { .. }
        | E::RetryTooLong { .. }
        | E::Forbidden { .. }
        | E::TooLarge { .. }
        | E::Http { .. }
        | E::HtmlPage { .. }
        | E::Timeout { .. }
        | E::Incomplete { .. }
        | E::StreamError { .. }
        | E::Invalid { .. }
        | E::MaxTokens { .. }
        | E::Empty
        | E::Refused { .. }
        | E::ResponseTooLarge { .. }
        | E::Network(_) => (ErrorKind::Provider, "Nothing was written to the session."),
    };
    (kind, hint.to_string())
}

/// Every store error, by name: a new variant does not compile until it has a kind and a hint.
fn store_kind_and_hint(e: &session_engine::store::StoreError) -> (ErrorKind, String) {
    use session_engine::store::StoreError as S;
    let (kind, hint) = match e {
        S::Busy { .. } | S::Rewritten { .. } => (ErrorKind::Refused, "Nothing was written; try again in a moment."),
        S::Changed { .. } => (
            ErrorKind::Refused,
            "Another program appended to the session; nothing was written. Arbor follows the file; try again.",
        ),
        S::Overtaken { .. } => (
            ErrorKind::Refused,
            "Your entry was saved beside another program's newest entry; check the graph before continuing from it.",
        ),
        S::NotAFile { .. } => (ErrorKind::Invalid, "Open a regular .jsonl session file."),
        S::Full { .. } | S::Partial { .. } => (ErrorKind::Io, "Free some disk space and try again."),
        S::ReadOnly { .. } => (ErrorKind::Io, "Make the session file writable and try again."),
        S::Lock { .. } => (ErrorKind::Io, "Make the session's folder writable and try again."),
        S::Sync { .. } => (ErrorKind::Io, "The entry was written; check the disk before relying on it."),
        S::Write { .. } | S::Io { .. } => (ErrorKind::Io, "Check free disk space and the file's permissions."),
    };
    (kind, hint.to_string())
}

/// The library crate's errors, every variant by name.
fn library_kind_and_hint(e: &::library::LibError) -> (ErrorKind, String) {
    use ::library::LibError as L;
    let (kind, hint) = match e {
        L::Io { .. } | L::Read { .. } | L::IndexFolder { .. } | L::MoveAside { .. } | L::DiskFull(_) => {
            (ErrorKind::Io, "Check that the file exists and that you may read it.")
        }
        L::Invalid(_) | L::Search(_) | L::Watch(_) | L::WatchThread(_) => {
            (ErrorKind::Invalid, "Check the value and try again.")
        }
        L::Busy(_) => (ErrorKind::Refused, "Nothing was changed; try again in a moment."),
        L::Corrupt(_) | L::SqliteCorrupt(_) | L::Sqlite(_) | L::Inconsistent(_) => {
            (ErrorKind::Refused, "Nothing was changed; the index is rebuilt from the session files on the next pass.")
        }
    };
    (kind, hint.to_string())
}

/// A new file's errors (exports), every variant by name.
fn new_file_kind_and_hint(e: &session_engine::store::NewFileError) -> (ErrorKind, String) {
    use session_engine::store::NewFileError as N;
    let (kind, hint) = match e {
        N::Exists => (ErrorKind::Refused, "Nothing was written; confirm to replace it, or choose another name."),
        N::IsDir => (ErrorKind::Invalid, "Give the export a file name."),
        N::Io(_) => (ErrorKind::Io, "Check free disk space and the folder's permissions."),
    };
    (kind, hint.to_string())
}

fn new_file_message(path: &std::path::Path, e: &session_engine::store::NewFileError) -> String {
    use session_engine::store::NewFileError as N;
    match e {
        N::Exists => format!("{} already exists; nothing was written", path.display()),
        N::IsDir => format!("{} is a folder", path.display()),
        N::Io(e) => format!("writing {}: {e}", path.display()),
    }
}
