//! The session library (every session in Pi's folders, indexed) as the UI sees it: picker rows,
//! search hits with their status badge, and the events of the live follow. Plain conversions from
//! the `library` crate's types; no Tauri here.

use ::library::{Project, SearchHit, SessionInfo, SessionSort};
use serde::{Deserialize, Serialize};
use session_engine::time::format_iso_ms;
use specta::Type;

/// One session in the picker (from the index: no session file is read to list it).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SessionRow {
    pub path: String,
    pub id: Option<String>,
    pub cwd: String,
    pub name: Option<String>,
    pub first_message: String,
    pub message_count: u32,
    pub entry_count: u32,
    /// Tips of the tree (1 = linear).
    pub branch_count: u32,
    /// Indexed sessions whose header names this file as their parent (filled by the listing).
    pub fork_count: u32,
    /// The parent this session was forked from, when its header names one other than itself.
    pub forked_from: Option<super::forks::ForkedFrom>,
    pub compaction_count: u32,
    /// Last model used ("provider/model").
    pub model: Option<String>,
    /// Pi's context estimate at the leaf.
    pub tokens_at_leaf: f64,
    /// ISO time of Pi's "modified" (newest user/assistant message, else the header).
    pub modified: Option<String>,
    pub modified_ms: Option<f64>,
    pub created: Option<String>,
    pub size: f64,
    /// A copy or sync conflict: another indexed file has the same session id.
    pub duplicate_id: bool,
    pub bad_lines: u32,
    /// The cost of forgetting: files re-read plus commands re-run after its compactions that had
    /// been read or run before the compaction's cut (the summary did not carry them), summed over
    /// `forgettingCompactions` compactions. Null until the session's full text is indexed.
    pub forgetting: Option<u32>,
    pub forgetting_compactions: Option<u32>,
}

impl From<&SessionInfo> for SessionRow {
    fn from(s: &SessionInfo) -> SessionRow {
        SessionRow {
            path: s.path.display().to_string(),
            id: s.session_id.clone(),
            cwd: s.cwd.clone().unwrap_or_default(),
            name: s.name.clone(),
            first_message: super::one_line(s.first_message.as_deref().unwrap_or("(no messages)"), 160),
            message_count: clamp_u32(s.message_count),
            entry_count: clamp_u32(s.entry_count),
            branch_count: clamp_u32(s.branch_count),
            fork_count: 0,
            forked_from: s.parent_session.as_deref().and_then(|raw| {
                let parent = session_engine::fork::parent_path(&s.path, raw);
                (parent != s.path).then(|| super::forks::ForkedFrom {
                    path: parent.display().to_string(),
                    name: None,
                    exists: false,
                })
            }),
            compaction_count: clamp_u32(s.compaction_count),
            model: s.model.clone(),
            tokens_at_leaf: s.tokens_at_leaf as f64,
            modified: s.modified_ms.map(format_iso_ms),
            modified_ms: s.modified_ms.map(|m| m as f64),
            created: s.created.clone(),
            size: s.size as f64,
            duplicate_id: s.duplicate_id,
            bad_lines: clamp_u32(s.bad_lines),
            forgetting: s.forgetting_cost.map(clamp_u32),
            forgetting_compactions: s.forgetting_compactions.map(clamp_u32),
        }
    }
}

fn clamp_u32(v: i64) -> u32 {
    v.clamp(0, u32::MAX as i64) as u32
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRow {
    /// The sessions' cwd ("" when the header has none).
    pub cwd: String,
    pub session_count: u32,
    pub last_modified: Option<String>,
}

impl From<&Project> for ProjectRow {
    fn from(p: &Project) -> ProjectRow {
        ProjectRow {
            cwd: p.cwd.clone(),
            session_count: clamp_u32(p.session_count),
            last_modified: p.last_modified_ms.map(format_iso_ms),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum SortKey {
    #[default]
    Modified,
    Created,
    Name,
    Size,
    Messages,
    Tokens,
    /// Most re-done after compactions first (`SessionRow::forgetting`).
    Forgetting,
}

impl From<SortKey> for SessionSort {
    fn from(k: SortKey) -> SessionSort {
        match k {
            SortKey::Modified => SessionSort::Modified,
            SortKey::Created => SessionSort::Created,
            SortKey::Name => SessionSort::Name,
            SortKey::Size => SessionSort::Size,
            SortKey::Messages => SessionSort::Messages,
            SortKey::Tokens => SessionSort::Tokens,
            SortKey::Forgetting => SessionSort::Forgetting,
        }
    }
}

/// What the picker asks for: filters by project, model and date, and the sort.
#[derive(Debug, Clone, Default, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ListingQuery {
    pub project: Option<String>,
    /// Substring of "provider/model".
    pub model: Option<String>,
    /// Only sessions modified at or after this time (ms since the epoch).
    pub modified_since_ms: Option<f64>,
    pub sort: SortKey,
    /// Oldest / smallest first instead of newest / largest first.
    pub ascending: bool,
    /// At most this many sessions (default 500).
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RootRow {
    pub path: String,
    /// Added by the user (removable); otherwise one of Pi's roots.
    pub user: bool,
    pub exists: bool,
}

/// Where the index stands: the first pass's progress, notices for the user, errors.
#[derive(Debug, Clone, Default, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatus {
    pub db_path: String,
    /// The first full pass over the roots has finished.
    pub synced: bool,
    pub done: u32,
    pub total: u32,
    /// `done`/`total` count phase 2 (full text) of a running pass, not the catalog.
    pub full_text: bool,
    /// Sentences to show (e.g. the index was damaged, moved aside and is being rebuilt).
    pub notices: Vec<String>,
    /// Files or folders that could not be indexed (the rest goes on).
    pub errors: Vec<String>,
    /// Duration of the last full pass (ms).
    pub last_pass_ms: Option<f64>,
    pub files: u32,
    /// The user cancelled the full pass: what it indexed stays, the rest waits for "Resume
    /// indexing" or the next start (`synced` is then true: nothing is running).
    pub cancelled: bool,
    /// After a cancel: sessions listed whose full text is not indexed yet (search misses them).
    pub full_text_left: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct LibraryListing {
    pub status: IndexStatus,
    pub roots: Vec<RootRow>,
    pub projects: Vec<ProjectRow>,
    /// Distinct models of the indexed sessions (for the model filter).
    pub models: Vec<String>,
    pub sessions: Vec<SessionRow>,
    /// Recently opened sessions that the index knows.
    pub recent: Vec<SessionRow>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum HitStatus {
    /// Still sent to the model from the session's leaf.
    InContext,
    /// On the leaf's path but before the last compaction's first kept entry: summarized away.
    Compacted,
    /// Off the leaf's path: on a branch the session left.
    Abandoned,
}

impl From<library::EntryStatus> for HitStatus {
    fn from(s: library::EntryStatus) -> HitStatus {
        match s {
            library::EntryStatus::InContext => HitStatus::InContext,
            library::EntryStatus::Compacted => HitStatus::Compacted,
            library::EntryStatus::Abandoned => HitStatus::Abandoned,
        }
    }
}

impl HitStatus {
    pub fn name(self) -> &'static str {
        match self {
            HitStatus::InContext => "in_context",
            HitStatus::Compacted => "compacted",
            HitStatus::Abandoned => "abandoned",
        }
    }
    /// The badge text.
    pub fn label(self) -> &'static str {
        match self {
            HitStatus::InContext => "in context",
            HitStatus::Compacted => "compacted",
            HitStatus::Abandoned => "abandoned branch",
        }
    }
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct LibraryHit {
    pub session_path: String,
    pub session_id: Option<String>,
    pub session_name: Option<String>,
    pub cwd: Option<String>,
    pub entry_id: String,
    pub entry_type: String,
    pub role: Option<String>,
    pub timestamp: Option<String>,
    pub status: HitStatus,
    /// "in context", "compacted" or "abandoned branch".
    pub badge: String,
    /// Text around the match; matched words are between « and ».
    pub snippet: String,
}

/// What the search panel shows for a hit without a snippet (no `«»` marks: shown as plain text).
pub const NO_SNIPPET: &str = "(no excerpt: the session file changed since it was indexed)";

impl From<&SearchHit> for LibraryHit {
    fn from(h: &SearchHit) -> LibraryHit {
        let status = HitStatus::from(h.status);
        LibraryHit {
            session_path: h.session_path.display().to_string(),
            session_id: h.session_id.clone(),
            session_name: h.session_name.clone(),
            cwd: h.cwd.clone(),
            entry_id: h.entry_id.clone(),
            entry_type: h.entry_type.clone(),
            role: h.role.clone(),
            timestamp: h.timestamp.clone(),
            status,
            badge: status.label().to_string(),
            // No snippet: the session file changed at that entry since it was indexed (the
            // library has it re-read); the hit still opens the session.
            snippet: h.snippet.clone().unwrap_or_else(|| NO_SNIPPET.to_string()),
        }
    }
}

/// A full-text search over the library, as the search panel sends it.
#[derive(Debug, Clone, Default, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    /// Words (all required) and "quoted phrases".
    pub text: String,
    /// Search within this session file only.
    pub session_path: Option<String>,
    pub project: Option<String>,
    /// Keep only these statuses; empty = all.
    pub statuses: Vec<HitStatus>,
    /// At most this many hits (default 100).
    pub limit: Option<u32>,
}

wire_enum!(
    /// What happened to a session file in a library pass (the library's `Change`).
    SessionChange from ::library::Change { Unchanged, New, Appended, Reindexed, Removed }
);

/// Pushed to the UI over a channel while the app runs.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum LibraryUiEvent {
    /// The first full pass is running: the session catalog, then (`fullText`) the entries,
    /// statuses and full text of the files it read. Search misses what phase 2 has not reached.
    #[serde(rename_all = "camelCase")]
    Indexing {
        done: u32,
        total: u32,
        full_text: bool,
    },
    /// The first full pass (or a pass after the roots changed) finished.
    Synced {
        files: u32,
        ms: f64,
    },
    /// The user cancelled the pass: `indexed` of `files` session files are in the index
    /// (catalog), `fullTextLeft` of them still wait for their full text.
    #[serde(rename_all = "camelCase")]
    Cancelled {
        files: u32,
        indexed: u32,
        full_text_left: u32,
    },
    /// A session gained entries, appeared or was re-read. `open` is the refreshed open session
    /// when it is the one the window shows (its graph and context must be redrawn).
    #[serde(rename_all = "camelCase")]
    SessionChanged {
        path: String,
        change: SessionChange,
        new_entries: u32,
        open: Option<crate::view::session::OpenedSession>,
    },
    #[serde(rename_all = "camelCase")]
    SessionRemoved {
        path: String,
    },
    /// Something the user should be told (e.g. the index was replaced).
    Notice {
        message: String,
    },
    Error {
        path: Option<String>,
        message: String,
    },
}
