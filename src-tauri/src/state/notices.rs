//! Notices of summaries written by others: when the open (followed) session gains a `compaction`
//! or `branch_summary` entry that this window did not write (Pi compacted, another Arbor or
//! `arbor-cli` summarized), the user is told, with the drop-alarm count and retention score the
//! workbench computes for a compaction. What to say is decided here, purely ([`notices_for`]);
//! showing it is a [`NoticeSink`]'s (the desktop's in `commands/notices.rs`, a capturing one in
//! tests).
//!
//! Which entries are new to this window: [`OpenSession::noticed`] counts the entries whose notices
//! were decided. It starts at the session's length when it is opened; reading another writer's
//! appends (live follow, or the catch-up before each step of a summary Arbor runs) decides their
//! notices and moves it; Arbor's own appends move it past what they wrote without a notice (an
//! append is refused when the file grew since it was planned, so its read-back holds only it).

use super::app::{AppState, OpenSession};
use super::lock;
use super::markers::MarkerCache;
use super::state_file::ArborStateFile;
use session_engine::{Kind, Session};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Which summary a notice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Compaction,
    BranchSummary,
}

/// One OS notification: what it says and the entry a click opens the workbench on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
    pub kind: NoticeKind,
    pub session_path: PathBuf,
    pub entry_id: String,
}

/// Shows notices (the desktop's notification service; tests capture them).
pub trait NoticeSink: Send + Sync {
    fn show(&self, notice: Notice);
}

/// Where the app's notices go: none until the app installs its sink.
#[derive(Default)]
pub struct Notices {
    sink: Mutex<Option<Arc<dyn NoticeSink>>>,
}

impl Notices {
    pub fn set_sink(&self, sink: Arc<dyn NoticeSink>) {
        *lock(&self.sink) = Some(sink);
    }

    /// Hands `notices` to the sink (called without the session lock: a sink may block briefly).
    pub fn deliver(&self, notices: Vec<Notice>) {
        if notices.is_empty() {
            return;
        }
        let sink = lock(&self.sink).clone();
        if let Some(sink) = sink {
            for n in notices {
                sink.show(n);
            }
        }
    }
}

/// The session as a notice names it: its name (Pi's `/name`), else the file's stem.
pub fn session_label(session: &Session, path: &Path) -> String {
    match session.name().map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => n.to_string(),
        None => {
            path.file_stem().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
        }
    }
}

/// The notices for the entries `from..` of `s` (the ones another writer appended): one per
/// `compaction` and `branch_summary` entry, none when turned off. A compaction's notice carries
/// its drop-alarm count and retention score, from (and into) the session's marker cache.
pub fn notices_for(session: &Session, path: &Path, from: usize, enabled: bool, markers: &MarkerCache) -> Vec<Notice> {
    if !enabled {
        return Vec::new();
    }
    let label = session_label(session, path);
    (from..session.len())
        .filter_map(|i| {
            let kind = match session.kind(i) {
                Kind::Compaction => NoticeKind::Compaction,
                Kind::BranchSummary => NoticeKind::BranchSummary,
                _ => return None,
            };
            let id = session.id(i).to_string();
            let (title, body) = match kind {
                NoticeKind::Compaction => {
                    let f = markers.facts(session, i);
                    let alarm = match f.dropped {
                        0 => "no drop alarm".to_string(),
                        1 => "1 drop alarm".to_string(),
                        n => format!("{n} drop alarms"),
                    };
                    let retention = if f.total == 0 {
                        "no facts to retain".to_string()
                    } else {
                        format!("retention {}/{} facts", f.mentioned, f.total)
                    };
                    (
                        format!("{label}: compacted"),
                        format!("Compaction {id}: {alarm}, {retention}. Click to review it."),
                    )
                }
                NoticeKind::BranchSummary => (
                    format!("{label}: branch summarized"),
                    format!("Branch summary {id} was written. Click to review it."),
                ),
            };
            Some(Notice { title, body, kind, session_path: path.to_path_buf(), entry_id: id })
        })
        .collect()
}

/// Whether the user wants these notices (Arbor's state file; on unless turned off).
pub fn enabled(state_file: &Path) -> bool {
    !ArborStateFile::load(state_file).summary_notices_off
}

/// Decides the notices of what `o` holds past [`OpenSession::noticed`] (another writer's
/// entries, just read) and marks them decided. The state file is read only when there is a
/// summary among them.
pub fn catch_up(o: &mut OpenSession, state_file: &Path) -> Vec<Notice> {
    let session = &o.session;
    let from = o.noticed.min(session.len());
    o.noticed = session.len();
    let any = (from..session.len()).any(|i| matches!(session.kind(i), Kind::Compaction | Kind::BranchSummary));
    if !any {
        return Vec::new();
    }
    notices_for(session, &o.path, from, enabled(state_file), &o.markers)
}

/// After Arbor's own append and its read-back: what it wrote needs no notice.
pub fn own_append(o: &mut OpenSession) {
    o.noticed = o.session.len();
}

impl AppState {
    /// Delivers notices decided under the session lock, once it is released.
    pub fn deliver_notices(&self, notices: Vec<Notice>) {
        self.notices.deliver(notices);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"{"type":"session","version":3,"id":"019550ef-0000-7000-8000-000000000001","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/home/dev/parser"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2025-03-01T09:00:01.000Z","message":{"role":"user","content":"Write the parser in `src/parser.rs` and keep the tests green","timestamp":1740819601000}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-03-01T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"I wrote src/parser.rs; the tests pass."}],"timestamp":1740819602000}}
{"type":"message","id":"u2","parentId":"a1","timestamp":"2025-03-01T09:00:03.000Z","message":{"role":"user","content":"Now the lexer","timestamp":1740819603000}}
"#;
    const COMPACTION: &str = r###"{"type":"compaction","id":"c1","parentId":"u2","timestamp":"2025-03-01T09:00:04.000Z","summary":"## Goal\nA parser.","firstKeptEntryId":"u2","tokensBefore":900}
"###;
    const BRANCH: &str = r#"{"type":"branch_summary","id":"b1","parentId":"a1","timestamp":"2025-03-01T09:00:05.000Z","fromId":"u2","summary":"Tried the lexer first."}
"#;

    fn session(text: &str) -> Session {
        Session::from_bytes(text.as_bytes().to_vec())
    }

    fn path() -> PathBuf {
        PathBuf::from("/tmp/sessions/2025-03-01T09-00-00-000Z_parser.jsonl")
    }

    #[test]
    fn another_writer_s_compaction_is_one_notice_with_the_workbench_facts() {
        let s = session(&format!("{HEAD}{COMPACTION}"));
        let held = 3; // u1, a1, u2 were read before; c1 is the other writer's
        assert_eq!(s.len(), 4);
        let cache = MarkerCache::default();
        let got = notices_for(&s, &path(), held, true, &cache);
        assert_eq!(got.len(), 1, "{got:?}");
        let n = &got[0];
        assert_eq!((n.kind, n.entry_id.as_str()), (NoticeKind::Compaction, "c1"));
        assert_eq!(n.title, "2025-03-01T09-00-00-000Z_parser: compacted");
        // The numbers are the workbench's (the graph marker's cache is filled on the way).
        let f = cache.cached(&s, 3).expect("the facts were computed through the marker cache");
        let c = crate::view::summary::check_of(&s, 3);
        assert_eq!(
            (f.dropped as usize, f.mentioned, f.total),
            (c.dropped.len(), c.retention.mentioned, c.retention.total)
        );
        let alarms = match f.dropped {
            0 => "no drop alarm".to_string(),
            1 => "1 drop alarm".to_string(),
            k => format!("{k} drop alarms"),
        };
        assert!(n.body.contains(&alarms), "{}", n.body);
        let retention = match f.total {
            0 => "no facts to retain".to_string(),
            t => format!("retention {}/{t} facts", f.mentioned),
        };
        assert!(n.body.contains(&retention), "{}", n.body);
    }

    #[test]
    fn entries_this_window_holds_already_say_nothing() {
        // Arbor's own append is read back when it is written: it is held before any reload.
        let s = session(&format!("{HEAD}{COMPACTION}"));
        assert!(notices_for(&s, &path(), s.len(), true, &MarkerCache::default()).is_empty());
        // Nor do the entries read at open.
        assert!(notices_for(&s, &path(), 4, true, &MarkerCache::default()).is_empty());
    }

    #[test]
    fn turned_off_says_nothing() {
        let s = session(&format!("{HEAD}{COMPACTION}{BRANCH}"));
        assert!(notices_for(&s, &path(), 3, false, &MarkerCache::default()).is_empty());
    }

    #[test]
    fn a_branch_summary_is_one_notice_named_by_the_session_s_name() {
        let named = r#"{"type":"session_info","id":"n1","parentId":"u2","timestamp":"2025-03-01T09:00:03.500Z","name":"Parser work"}
"#;
        let s = session(&format!("{HEAD}{named}{BRANCH}"));
        let got = notices_for(&s, &path(), 4, true, &MarkerCache::default());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].kind, got[0].entry_id.as_str()), (NoticeKind::BranchSummary, "b1"));
        assert_eq!(got[0].title, "Parser work: branch summarized");
        // Other appended entries (a message, a label) are not summaries.
        let more = r#"{"type":"message","id":"u3","parentId":"b1","timestamp":"2025-03-01T09:00:06.000Z","message":{"role":"user","content":"go on","timestamp":1740819606000}}
"#;
        let s = session(&format!("{HEAD}{named}{BRANCH}{more}"));
        assert!(notices_for(&s, &path(), 5, true, &MarkerCache::default()).is_empty());
    }
}
