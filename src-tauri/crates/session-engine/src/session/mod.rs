//! Loading a session file into an indexed, lazily parsed tree.
//!
//! Loading follows Pi's `loadEntriesFromFile` + `_buildIndex` exactly (see
//! `docs/FORMAT.md` §4), with three differences that never change what Pi would compute
//! for a file Pi itself can load:
//! * every skipped line is reported as a [`Diagnostic`] with its line number and byte offset;
//! * `parentId` cycles are detected and cut (Pi loops forever on them);
//! * files up to 8 MiB are parsed whole at open, one pass per line (the parse validates the line
//!   and gives its fields; the second half on another thread from 1 MiB); bigger files are only
//!   validated at open (`pi_json::scan_line_fast`, which keeps `type`, `id`, `parentId`,
//!   `timestamp` and `message.role`), and an entry's full JSON is parsed on first use
//!   ([`Session::value`]) and cached. A line the parser refuses goes to the scan, which decides.
//!
//! The original bytes of every line stay readable (`Session::raw`), so nothing Arbor does changes
//! key order, unknown fields or number forms. A file of [`LEFT_IN_FILE_MIN_BYTES`] or more is
//! indexed a window at a time and never held whole, and its lines are read again from the file,
//! in blocks, when asked for; a line that is no longer where
//! the open indexed it (the file cut or rewritten in place) marks the session changed
//! ([`Session::changed_on_disk`]), and the live follow then opens the file again.
//!
//! The parts: the types and simple queries here; the file's bytes as held (`bytes`: big files
//! read into anonymous memory in two halves at once for the open, the biggest left in the file);
//! opening and indexing (`load`), the biggest files' open in windows (`windows`), the in-memory
//! v1/v2 → v3 migration (`migrate`), reading appended lines (`extend`), the tree queries
//! (`tree`), the migration's id sources (`id_source`) and JavaScript's whitespace rules
//! (`whitespace`).
//!
//! Parsing on demand: [`Session::value`] parses and caches, [`Session::value_transient`] parses
//! for one call without keeping it (the timeline, branch preparation), [`Session::parse_ahead`]
//! parses a context's entries on two threads first, and [`Session::role`] answers from the
//! scan's role codes without a parse for the common roles. Entry kinds sit in a one-byte array.
//! Version 1 and 2 files are migrated in memory with ids from an [`IdSource`] (tests use Pi's
//! oracle counters) and open read-only; `migrated_lines()` feeds "save as v3 copy".

mod bytes;
mod extend;
mod id_source;
pub(crate) mod load;
mod migrate;
mod tree;
mod whitespace;
#[cfg(unix)]
mod windows;

use pi_json::{Field, Value};
use rustc_hash::FxHashMap;
use std::path::Path;
use std::sync::OnceLock;

pub use id_source::{CounterIds, IdSource, RandomIds};
pub(crate) use whitespace::js_is_blank;
pub use whitespace::{is_js_space, js_trim};

/// Files at least this big are validated on two threads.
pub const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// Files up to this size have every entry parsed at open. Big files parse lazily (an open of a
/// 250 MB session must not build every entry's DOM), but most sessions users open are small, and
/// there the first query (a click, the context) should not pay for the parse: Pi parses at load,
/// so a lazy parse made Arbor's context build at 1k entries slower than Pi's (2.5 ms vs 0.5 ms).
pub const EAGER_PARSE_MAX_BYTES: usize = 8 << 20;

/// Files at least this big are opened in windows (see `windows`) and their lines are read from
/// the file again when asked for (see `bytes`): a session of hundreds of megabytes would
/// otherwise be held twice over by the app (the engine's copy and the page cache's). Smaller ones
/// keep them: reading lines back from the page cache made a navigation at 10,000 entries (26 MB)
/// 1.6–1.7× slower, and the 26 MB held are little next to the window's own memory.
pub const LEFT_IN_FILE_MIN_BYTES: usize = 64 << 20;

/// The tree's links (built by `tree.rs` on first use): each entry's children, and the roots.
#[derive(Clone)]
struct Children {
    start: Vec<u32>,
    list: Vec<u32>,
    roots: Vec<u32>,
}

/// The session format version this engine writes.
pub const CURRENT_VERSION: u32 = 3;

pub const NONE: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub id: String,
    pub version: Option<f64>,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub parent_session: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// Not valid JSON (Pi skips it silently).
    Malformed,
    /// The last line has no trailing newline and is not valid JSON: probably an append in
    /// progress or torn by a crash.
    TornTail,
    /// Valid JSON, but not an object with a string `id` (Pi would misbehave on it).
    InvalidEntry,
    /// A repeated `session` header line (Pi ignores it).
    ExtraHeader,
    /// An id seen before; the later entry wins in the index, as in Pi.
    DuplicateId,
    /// Invalid UTF-8 in the line; decoded with U+FFFD as Pi does.
    InvalidUtf8,
    /// The entry's `parentId` chain loops; the walk stops here.
    Cycle,
    /// The entry's parent is not in the file; it is shown as an extra root.
    Orphan,
    /// A compaction whose `firstKeptEntryId` is not on its own path (Pi silently keeps nothing).
    MissingFirstKept,
    /// Nothing but NUL bytes (a tail grown by a power cut before the data landed).
    NulBytes,
    /// The last line is valid JSON but has no trailing newline.
    Unterminated,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line number, counted after trimming leading whitespace of the file (Pi's
    /// numbering; equal to the editor's line number for files that start with their header).
    pub line: usize,
    /// Byte offset of the line's first byte in the file.
    pub offset: u64,
    pub kind: DiagnosticKind,
    pub message: String,
}

/// Why a session opens read-only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadOnly {
    /// A v1 or v2 file: migrated in memory; "save as v3 copy" writes a new file.
    Legacy { version: u32 },
    /// A header version above what this engine writes.
    Newer { version: String },
    /// The file has no valid header (Pi would overwrite it with a fresh header on open).
    Rejected,
    /// The `parentId` chain of some entry loops; appending onto it would hang Pi.
    Cycle,
}

impl ReadOnly {
    pub fn explain(&self) -> String {
        match self {
            ReadOnly::Legacy { version } => format!(
                "This is a version {version} session file. Arbor shows it migrated to version 3 but never rewrites it; use \"Save as v3 copy\" to continue it."
            ),
            ReadOnly::Newer { version } => format!(
                "This session was written by a newer Pi (format version {version}). Arbor opens it read-only; update Arbor to write to it."
            ),
            ReadOnly::Rejected => "This file has no valid session header, so it is not a Pi session. Arbor will not write to it. Note: opening it in Pi replaces its content with a new empty session.".into(),
            ReadOnly::Cycle => "Some entries' parentId links form a cycle (Pi would hang on this file). Arbor opens it read-only.".into(),
        }
    }
}

/// What [`Session::extend_from_file`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extend {
    /// This many new entries were added (0: nothing complete yet).
    Added(usize),
    /// Open the file again.
    Reload,
}

/// The `type` of an entry, with the known ones as variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Message,
    ThinkingLevelChange,
    ModelChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    Other,
}

impl Kind {
    pub fn from_type(t: &str) -> Kind {
        match t {
            "message" => Kind::Message,
            "thinking_level_change" => Kind::ThinkingLevelChange,
            "model_change" => Kind::ModelChange,
            "compaction" => Kind::Compaction,
            "branch_summary" => Kind::BranchSummary,
            "custom" => Kind::Custom,
            "custom_message" => Kind::CustomMessage,
            "label" => Kind::Label,
            "session_info" => Kind::SessionInfo,
            _ => Kind::Other,
        }
    }
}

/// One entry line, indexed but not parsed.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Byte range of the line in the file (without the `\n`).
    pub start: u64,
    pub end: u64,
    pub line: u32,
    pub kind: Kind,
    // The four texts are `pi_json::Str`, held inline up to 24 bytes: Pi's types, ids and
    // timestamps all fit, so an entry's fields need no allocation (as `Box<str>`s they were four
    // per entry, and the id index's key a fifth).
    pub type_name: pi_json::Str,
    pub id: pi_json::Str,
    /// `None` for `null` or a missing key; `Some("")` is kept (Pi treats it like null when
    /// walking, but as an orphan in the tree).
    pub parent_id: Option<pi_json::Str>,
    pub timestamp: pi_json::Str,
}

/// A loaded session. A clone shares the bytes read at open (it copies the index, and the bytes
/// appended since): the app shares one behind an `Arc` and clones only when it writes while a
/// reader still holds it.
#[derive(Clone)]
pub struct Session {
    buf: bytes::FileBytes,
    header: Option<Header>,
    entries: Vec<Entry>,
    /// Each entry's kind, one byte apiece: walks over tens of thousands of entries (a branch's
    /// summary picking) test kinds without pulling every `Entry` into the cache.
    kinds: Vec<Kind>,
    values: Vec<OnceLock<Value>>,
    /// `message.role` of entries whose role is not a common one, as the loader read it (or, for
    /// a migrated entry, its DOM on first use; see [`Session::role`]).
    roles: Vec<OnceLock<Option<Box<str>>>>,
    /// The common roles as the loader read them ([`ROLE_NAMES`] index + 1; [`ROLE_ABSENT`]: no
    /// string role; 0: another role, in `roles`).
    role_codes: Vec<u8>,
    by_id: FxHashMap<pi_json::Str, u32>,
    /// Parent of each entry through the id index (Pi's `byId.get(parentId)`), or NONE.
    parent: Vec<u32>,
    diagnostics: Vec<Diagnostic>,
    labels: Vec<(String, String, String)>,
    /// Where each labelled entry's label sits in `labels`: the graph asks for the label of every
    /// entry of the session, and a search of the list made that quadratic (a million entries and
    /// 808 labels: 0.8 billion string comparisons per layout input).
    label_at: FxHashMap<Box<str>, usize>,
    name: Option<String>,
    read_only: Option<ReadOnly>,
    /// Entry values after an in-memory migration (legacy files), in file order.
    migrated: bool,
    version_in_file: Option<f64>,
    non_empty_lines: usize,
    /// Pi's number of the last line read (for diagnostics of appended lines).
    lines_seen: usize,
    /// Parent ids that entries name but the file does not hold (orphans' parents): an append
    /// that adds one changes how earlier entries resolve.
    missing_parents: rustc_hash::FxHashSet<Box<str>>,
    /// Where the text the loader read ends: Pi trims the file, so trailing whitespace (a `\r`
    /// before the last `\n`, blank lines) is not part of the last line until more follows.
    text_end: usize,
    /// Set when [`Session::extend_from_file`] gave up half way: only a fresh load is right.
    stale: bool,
    malformed_lines: Vec<usize>,
    ends_with_newline: bool,
    children: OnceLock<Children>,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{path}: no such file. Check the path, or pick a session from the list.")]
    NotFound { path: String },
    #[error("{path}: not a regular file ({what}). Choose a .jsonl session file.")]
    NotAFile { path: String, what: &'static str },
    #[error("{path}: cannot read the file: {source}. Check its permissions.")]
    Io { path: String, source: std::io::Error },
}

/// Roles the loader keeps as a code (others are kept as text, see [`Session::role`]).
const ROLE_NAMES: [&str; 6] = ["user", "assistant", "toolResult", "bashExecution", "custom", "compactionSummary"];
/// The open saw no `message.role` string (a message entry without one reads as no role).
const ROLE_ABSENT: u8 = u8::MAX;

/// [`Session::parse_ahead`] uses a second thread from this many bytes of unparsed lines on
/// (below it a thread costs about what it saves).
const PARSE_AHEAD_MIN_BYTES: u64 = 256 << 10;

impl Session {
    // --------------------------------------------------------------------------------------
    // Accessors
    // --------------------------------------------------------------------------------------

    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }
    /// Pi accepts the file (its first parsed line is a session header with a string id).
    pub fn header_accepted(&self) -> bool {
        self.header.is_some()
    }
    pub fn read_only(&self) -> Option<&ReadOnly> {
        self.read_only.as_ref()
    }
    pub fn read_only_reason(&self) -> Option<String> {
        self.read_only.as_ref().map(ReadOnly::explain)
    }
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
    /// Some entry's `parentId` chain loops (the loader reported it and cut the walks there).
    pub fn has_cycle(&self) -> bool {
        self.diagnostics.iter().any(|d| d.kind == DiagnosticKind::Cycle)
    }
    pub fn version_in_file(&self) -> Option<f64> {
        self.version_in_file
    }
    pub fn migrated(&self) -> bool {
        self.migrated
    }
    pub fn non_empty_lines(&self) -> usize {
        self.non_empty_lines
    }
    /// Pi's 1-based numbers of lines that are not JSON.
    pub fn malformed_lines(&self) -> &[usize] {
        &self.malformed_lines
    }
    /// True when the file's last byte is `\n` (or the file is empty).
    pub fn ends_with_newline(&self) -> bool {
        self.ends_with_newline || self.buf.is_empty()
    }
    /// The file's length as read (at open and by each [`Session::extend_from_file`]).
    pub fn file_len(&self) -> u64 {
        self.buf.len() as u64
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
    pub fn entry(&self, idx: usize) -> &Entry {
        &self.entries[idx]
    }
    pub fn id(&self, idx: usize) -> &str {
        &self.entries[idx].id
    }
    pub fn kind(&self, idx: usize) -> Kind {
        self.kinds[idx]
    }
    /// The original bytes of the entry's line (without `\n`; a CRLF file keeps its `\r`).
    ///
    /// A file of [`LEFT_IN_FILE_MIN_BYTES`] or more has its lines read again from the file (the open gave its bytes back, see
    /// `bytes`): the read must find the line where the open indexed it, between two line ends
    /// (or the file's end and its trailing whitespace). When it does not (the file was cut or
    /// rewritten in place since), the line reads as empty and [`Session::changed_on_disk`] says
    /// so: the session must be opened again.
    pub fn raw(&self, idx: usize) -> std::borrow::Cow<'_, [u8]> {
        let e = &self.entries[idx];
        let (start, end) = (e.start as usize, e.end as usize);
        if !self.buf.in_file() {
            return self.buf.slice(start, end).unwrap_or_default();
        }
        match self.read_framed(start, end) {
            Some(b) => b,
            None => {
                self.buf.mark_changed();
                std::borrow::Cow::Borrowed(&[])
            }
        }
    }
    /// The line `start..end` read with the byte before and after it, checked to be the line the
    /// open indexed there: a `\n` before it, and after it a `\n` or (the last line, which Pi
    /// trims) whitespace or nothing.
    fn read_framed(&self, start: usize, end: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let from = start.saturating_sub(1);
        let to = (end + 1).min(self.buf.len());
        let mut b = self.buf.copy_range(from, to).ok()?;
        if start > 0 && b.first() != Some(&b'\n') {
            return None;
        }
        if to > end {
            match b.last() {
                Some(b'\n') => {}
                Some(&c) if end >= self.text_end && (c.is_ascii_whitespace() || c == 0x0b || c >= 0x80) => {}
                _ => return None,
            }
            b.pop();
        }
        if start > 0 {
            b.remove(0);
        }
        Some(std::borrow::Cow::Owned(b))
    }
    /// The length of the entry's line ([`Session::raw`]'s, without reading it).
    pub fn raw_len(&self, idx: usize) -> usize {
        let e = &self.entries[idx];
        (e.end - e.start) as usize
    }
    /// Whether the lines of what the open read are read again from the file (a file of
    /// [`LEFT_IN_FILE_MIN_BYTES`] or more; see
    /// [`Session::raw`]) rather than held.
    #[doc(hidden)]
    pub fn reads_lines_from_file(&self) -> bool {
        self.buf.in_file()
    }
    /// How many reads of the file [`Session::raw`] made since the open (lines read back in
    /// blocks; 0 for a session that holds its bytes).
    #[doc(hidden)]
    pub fn file_reads(&self) -> usize {
        self.buf.file_reads()
    }
    /// A line read again from the file was not the one the open indexed (the file was cut or
    /// rewritten in place): what this session answers about it is no longer the file's, and
    /// [`Session::extend_from_file`] asks for a fresh open.
    pub fn changed_on_disk(&self) -> bool {
        self.buf.changed()
    }
    /// The entry's line parsed. A line read again from the file must hold the id the open
    /// indexed, else the file changed: `null`, and the session is marked changed. (A line the
    /// parser refuses, too deep for it, reads as `null` as it did from memory.)
    fn parse_entry(&self, idx: usize) -> Value {
        let v = pi_json::parse_bytes(&self.raw(idx)).unwrap_or(Value::Null);
        if self.buf.in_file() && matches!(v, Value::Obj(_)) && v.str_field("id") != Some(&*self.entries[idx].id) {
            self.buf.mark_changed();
            return Value::Null;
        }
        v
    }
    /// The entry's full JSON, parsed on first use. A line nested deeper than
    /// [`pi_json::MAX_DEPTH`] (which Pi loads, V8 having no limit) reads as `null` here: its
    /// entry stays in the tree but contributes nothing.
    pub fn value(&self, idx: usize) -> &Value {
        self.values[idx].get_or_init(|| self.parse_entry(idx))
    }
    /// Parses the entries of `idxs` that [`Session::value`] has not parsed yet, on two threads
    /// when they are many bytes: what `value` then returns is the same, only the parse of a long
    /// context (hundreds of entries of a big file, which is parsed lazily) takes half the time.
    /// Few bytes are left to the callers' own `value` calls.
    pub fn parse_ahead(&self, idxs: &[usize]) {
        let todo: Vec<usize> = idxs.iter().copied().filter(|&i| self.values[i].get().is_none()).collect();
        let total: u64 = todo.iter().map(|&i| self.entries[i].end - self.entries[i].start + 1).sum();
        if total < PARSE_AHEAD_MIN_BYTES {
            return;
        }
        // Both threads take the next entry not taken yet, so they finish together: the helper
        // starts late (a thread's start and its first allocations), and a fixed split by bytes
        // left this thread waiting for it.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&i) = todo.get(k) else { break };
            self.value(i);
        };
        std::thread::scope(|sc| {
            sc.spawn(work);
            work();
        });
    }
    /// The entry's full JSON without keeping it: the cached parse when [`Session::value`] already
    /// made one, else a parse the caller drops. For passes over a whole path (the timeline) that
    /// would otherwise keep every entry's DOM alive with the session.
    pub fn value_transient(&self, idx: usize) -> std::borrow::Cow<'_, Value> {
        match self.values[idx].get() {
            Some(v) => std::borrow::Cow::Borrowed(v),
            None => std::borrow::Cow::Owned(self.parse_entry(idx)),
        }
    }
    /// `entry.message` of a `message` entry.
    pub fn message(&self, idx: usize) -> Option<&Value> {
        if self.entries[idx].kind != Kind::Message {
            return None;
        }
        self.value(idx).get("message")
    }
    /// `entry.message.role` of a `message` entry, as the open read it: the loader's scan or
    /// parse records every entry's role (a common one as a code, another one as its text). An
    /// entry the open did not read that way (a legacy file's migrated entries) reads its DOM.
    pub fn role(&self, idx: usize) -> Option<&str> {
        if self.entries[idx].kind != Kind::Message {
            return None;
        }
        match self.role_codes[idx] {
            0 => {}
            ROLE_ABSENT => return None,
            c => return Some(ROLE_NAMES[c as usize - 1]),
        }
        self.roles[idx]
            .get_or_init(|| self.value_transient(idx).get("message").and_then(|m| m.str_field("role")).map(Into::into))
            .as_deref()
    }
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).map(|&i| i as usize)
    }
    /// The parent through the id index (Pi's `byId.get(parentId)`).
    pub fn parent_of(&self, idx: usize) -> Option<usize> {
        match self.parent[idx] {
            NONE => None,
            p => Some(p as usize),
        }
    }
    /// Pi's leaf after loading: the last entry line of the file.
    pub fn file_leaf(&self) -> Option<usize> {
        if self.entries.is_empty() {
            None
        } else {
            // Pi sets leafId = entry.id for each entry; the index maps it to the later duplicate.
            self.index_of(&self.entries[self.entries.len() - 1].id)
        }
    }
    /// Labels in effect: (target id, label, timestamp), in order of first setting.
    pub fn labels(&self) -> &[(String, String, String)] {
        &self.labels
    }
    pub fn label_of(&self, id: &str) -> Option<&str> {
        self.label_at.get(id).map(|&k| self.labels[k].1.as_str())
    }
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Entry indices in file order whose `type` is `compaction`.
    pub fn compactions(&self) -> impl Iterator<Item = usize> + '_ {
        self.entries.iter().enumerate().filter(|(_, e)| e.kind == Kind::Compaction).map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Session {
        Session::from_bytes(text.as_bytes().to_vec())
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    /// Parsed ahead on two threads, every value is the line's parse, and the values not asked
    /// for stay unparsed (a big file parses lazily).
    #[test]
    fn parse_ahead_gives_the_values_value_gives() {
        let mut text = format!("{H}\n");
        let body = "y".repeat(4000);
        let n = EAGER_PARSE_MAX_BYTES / 4000 + 200;
        for k in 0..n {
            text.push_str(&format!(
                r#"{{"type":"message","id":"m{k}","parentId":{},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{k} {body} é😀\n"}}}}"#,
                if k == 0 { "null".to_string() } else { format!("\"m{}\"", k - 1) }
            ));
            text.push('\n');
        }
        let session = load(&text);
        assert_eq!(session.len(), n);
        let asked: Vec<usize> = (0..n).filter(|i| i % 3 != 0).take(300).collect();
        session.parse_ahead(&asked);
        for i in 0..n.min(450) {
            let parsed = session.values[i].get();
            assert_eq!(parsed.is_some(), asked.contains(&i), "entry {i}");
            if let Some(v) = parsed {
                assert_eq!(v, &pi_json::parse_bytes(&session.raw(i)).unwrap(), "entry {i}");
            }
        }
    }

    /// The lines whose `message.role` is easy to read wrong: escapes (in the role, its key, the
    /// message key), repeated `message` and `role` keys (the last wins), roles that are not
    /// strings, messages that are not objects, objects before and inside the message that
    /// hold `message` or `role` keys of their own.
    const TRICKY_ROLES: [&str; 31] = [
        r#""message":{"role":"user","content":"hi"}"#,
        r#""message":{"content":"x","role":"assistant"}"#,
        r#""message":{"role":"toolResult","toolCallId":"t","content":[]}"#,
        r#""message":{"role":"bashExecution","command":"ls"}"#,
        r#""message":{"role":"custom"}"#,
        r#""message":{"role":"compactionSummary"}"#,
        r#""message":{"role":"branchSummary"}"#,
        r#""message":{"role":"somethingNew"}"#,
        r#""message":{"role":"us\u0065r"}"#,
        r#""message":{"role":"n\u00e9w\n"}"#,
        r#""message":{"r\u006fle":"assistant"}"#,
        r#""m\u0065ssage":{"role":"toolResult"}"#,
        r#""message":{"role":"user","role":"assistant"}"#,
        r#""message":{"role":"user","role":7}"#,
        r#""message":{"role":7,"role":"custom"}"#,
        r#""message":{"role":7}"#,
        r#""message":{"role":null}"#,
        r#""message":{"role":{"role":"user"}}"#,
        r#""message":{"role":["user"]}"#,
        r#""message":{"content":"no role"}"#,
        r#""message":{}"#,
        r#""message":"a string""#,
        r#""message":["role","user"]"#,
        r#""message":null"#,
        r#""message":{"role":"user"},"message":{"role":"toolResult"}"#,
        r#""message":{"role":"user"},"message":{"content":"x"}"#,
        r#""message":{"role":"user"},"message":3"#,
        r#""details":{"message":{"role":"user"}},"message":{"role":"assistant"}"#,
        r#""message":{"usage":{"role":"user"},"content":[{"role":"x"}],"role":"assistant","x":{"y":{}}}"#,
        r#""message":{"details":{"a":[{"b":{}}]},"role":"custom","more":{"role":"user"}}"#,
        r#""other":1"#,
    ];

    fn tricky_session_text() -> String {
        let mut text = format!("{H}\n");
        for (k, l) in TRICKY_ROLES.iter().enumerate() {
            text.push_str(&format!(
                r#"{{"type":"message","id":"m{k}","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",{l}}}"#
            ));
            text.push('\n');
        }
        text
    }

    fn parsed_role(session: &Session, i: usize) -> Option<String> {
        pi_json::parse_bytes(&session.raw(i))
            .unwrap()
            .get("message")
            .and_then(|m| m.str_field("role"))
            .map(str::to_string)
    }

    /// Every message entry's role is read at open, by the scan (big files, both scanners) or
    /// the parse (small files), and it is the role of the parsed line: `role` reads no JSON of
    /// its own, and in a big file it leaves the lines unparsed.
    #[test]
    fn roles_read_at_load_equal_the_parsed_roles() {
        let text = tricky_session_text();
        // Small: parsed at load; big (padding lines past the eager limit): scanned.
        let pad = format!(
            r#"{{"type":"custom","id":"pad","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","data":"{}"}}"#,
            "x".repeat(EAGER_PARSE_MAX_BYTES)
        );
        for t in [text.clone(), format!("{text}{pad}\n")] {
            let big = t.len() > EAGER_PARSE_MAX_BYTES;
            // One thread and two (the second half of a big file validated on another one).
            for parallel_min in [usize::MAX, 0] {
                let session = Session::from_bytes_with(
                    t.clone().into_bytes(),
                    &mut CounterIds { prefix: 'm', next: 0 },
                    parallel_min,
                );
                assert_eq!(session.len(), TRICKY_ROLES.len() + usize::from(big));
                for (i, line) in TRICKY_ROLES.iter().enumerate() {
                    assert!(session.role_codes[i] != 0 || session.roles[i].get().is_some(), "not read at open: {line}");
                    assert_eq!(session.role(i).map(str::to_string), parsed_role(&session, i), "{line}");
                    assert_eq!(session.values[i].get().is_some(), !big, "{line}");
                }
            }
        }
    }

    /// The exact scanner (which the fast one hands the odd lines to) reads `message.role` as the
    /// parse does, on every tricky line and with whitespace between every token.
    #[test]
    fn the_exact_scanner_reads_the_parsed_role() {
        for (k, l) in TRICKY_ROLES.iter().enumerate() {
            let line = format!(r#"{{"type":"message","id":"m{k}",{l}}}"#);
            let spaced = line.replace(':', " :\t").replace(',', "\r\n, ").replace('{', "{ ").replace('}', " }");
            for line in [line, spaced] {
                let want =
                    pi_json::parse(&line).unwrap().get("message").and_then(|m| m.str_field("role")).map(str::to_string);
                let sc = pi_json::scan_line(line.as_bytes()).unwrap();
                let got = match sc.role {
                    Some(Field::Str(r)) => Some(pi_json::raw_str(line.as_bytes(), r)),
                    Some(_) => None,
                    None => panic!("no role read: {line}"),
                };
                assert_eq!(got, want, "{line}");
            }
        }
        // Not an object: no role read.
        assert_eq!(pi_json::scan_line(b"[1]").unwrap().role, None);
    }

    #[test]
    fn leaf_is_the_last_line_and_path_walks_parents() {
        let session = load(&format!(
            "{H}\n{}\n{}\n{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"label","id":"c","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","targetId":"a","label":"start"}"#,
        ));
        assert_eq!(session.len(), 3);
        assert_eq!(session.file_leaf().map(|i| session.id(i)), Some("c"));
        assert_eq!(session.path_ids(session.file_leaf()), vec!["a", "c"]);
        assert_eq!(session.label_of("a"), Some("start"));
        assert_eq!(session.children(0).len(), 2);
        assert_eq!(session.common_ancestor(1, 2), Some(0));
    }

    /// Labels set, changed, cleared and set again: the list keeps the order of first setting, and
    /// `label_of` (indexed) answers as a search of that list would, for every entry.
    #[test]
    fn label_of_follows_sets_changes_and_clears() {
        let msg = |id: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"x"}}}}"#
            )
        };
        let label = |id: &str, target: &str, text: Option<&str>| {
            let l = text.map_or("null".to_string(), |t| format!("\"{t}\""));
            format!(
                r#"{{"type":"label","id":"{id}","parentId":null,"timestamp":"2025-01-01T00:00:02.000Z","targetId":"{target}","label":{l}}}"#
            )
        };
        let lines = [
            msg("a"),
            msg("b"),
            msg("c"),
            msg("d"),
            label("l1", "a", Some("one")),
            label("l2", "b", Some("two")),
            label("l3", "c", Some("three")),
            label("l4", "a", None),
            label("l5", "c", Some("three again")),
            label("l6", "a", Some("one again")),
            label("l7", "b", None),
            label("l8", "d", None),
        ];
        let session = load(&format!("{H}\n{}\n", lines.join("\n")));
        let order: Vec<(&str, &str)> = session.labels().iter().map(|(t, l, _)| (t.as_str(), l.as_str())).collect();
        assert_eq!(order, [("c", "three again"), ("a", "one again")]);
        for i in 0..session.len() {
            let id = session.id(i);
            let searched = session.labels().iter().find(|(t, _, _)| t == id).map(|(_, l, _)| l.as_str());
            assert_eq!(session.label_of(id), searched, "{id}");
        }
        assert_eq!(session.label_of("a"), Some("one again"));
        assert_eq!(session.label_of("b"), None);
    }

    #[test]
    fn cycles_are_cut_and_reported() {
        let session = load(&format!(
            "{H}\n{}\n{}\n",
            r#"{"type":"custom","id":"a","parentId":"b","timestamp":"t"}"#,
            r#"{"type":"custom","id":"b","parentId":"a","timestamp":"t"}"#,
        ));
        assert_eq!(session.path(Some(1)).len(), 3); // bounded
        assert!(session.diagnostics().iter().any(|d| d.kind == DiagnosticKind::Cycle));
        assert_eq!(session.read_only(), Some(&ReadOnly::Cycle));
    }

    #[test]
    fn torn_tail_is_reported_not_fatal() {
        let session = load(&format!(
            "{H}\n{}\n{{\"type\":\"mess",
            r#"{"type":"custom","id":"a","parentId":null,"timestamp":"t"}"#
        ));
        assert_eq!(session.len(), 1);
        assert!(session.diagnostics().iter().any(|d| d.kind == DiagnosticKind::TornTail));
        assert!(!session.ends_with_newline());
    }
}
