//! Loading a session file into an indexed, lazily parsed tree.
//!
//! Loading follows Pi's `loadEntriesFromFile` + `_buildIndex` exactly (see
//! `pi-session-format.md` §6), with three differences that never change what Pi would compute
//! for a file Pi itself can load:
//! * every skipped line is reported as a [`Diagnostic`] with its line number and byte offset;
//! * `parentId` cycles are detected and cut (Pi loops forever on them);
//! * values are not parsed at load: each line is validated by [`json::scan_line`] and only its
//!   `type`, `id`, `parentId` and `timestamp` are kept. The full JSON of an entry is parsed on
//!   first use ([`Session::value`]) and cached.
//!
//! The original bytes of every line are kept (`Session::raw`), so nothing Arbor does changes key
//! order, unknown fields or number forms.

use crate::json::{self, Field, Value};
use rustc_hash::FxHashMap;
use std::path::Path;
use std::sync::OnceLock;

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
    pub type_name: Box<str>,
    pub id: Box<str>,
    /// `None` for `null` or a missing key; `Some("")` is kept (Pi treats it like null when
    /// walking, but as an orphan in the tree).
    pub parent_id: Option<Box<str>>,
    pub timestamp: Box<str>,
}

/// A loaded session.
pub struct Session {
    buf: Vec<u8>,
    header: Option<Header>,
    entries: Vec<Entry>,
    values: Vec<OnceLock<Value>>,
    /// `message.role` of message entries, read without building the DOM (see [`Session::role`]).
    roles: Vec<OnceLock<Option<Box<str>>>>,
    /// The common roles as the loader's scan read them ([`ROLE_NAMES`] index + 1; 0 = not read).
    role_codes: Vec<u8>,
    by_id: FxHashMap<Box<str>, u32>,
    /// Parent of each entry through the id index (Pi's `byId.get(parentId)`), or NONE.
    parent: Vec<u32>,
    diagnostics: Vec<Diagnostic>,
    labels: Vec<(String, String, String)>,
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

struct Children {
    start: Vec<u32>,
    list: Vec<u32>,
    roots: Vec<u32>,
}

/// Source of fresh ids for the v1 migration (random in the app; a counter in tests, like the
/// oracle's `a0000001`, `a0000002`, ...).
pub trait IdSource {
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String;
}

/// Pi's generator: the first 8 hex characters of a random UUID v4, retried on collision.
pub struct RandomIds;
impl IdSource for RandomIds {
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String {
        for _ in 0..100 {
            let id = crate::ids::random_short_id();
            if !taken(&id) {
                return id;
            }
        }
        crate::ids::random_uuid_v4()
    }
}

/// Counter ids with a one-letter prefix: `a0000001`, `a0000002`, ...
pub struct CounterIds {
    pub prefix: char,
    pub next: u32,
}
impl IdSource for CounterIds {
    fn next_id(&mut self, _taken: &dyn Fn(&str) -> bool) -> String {
        self.next += 1;
        format!("{}{:07x}", self.prefix, self.next)
    }
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

/// Files at least this big are validated on two threads.
pub const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// Files up to this size have every entry parsed at open. Big files parse lazily (an open of a
/// 250 MB session must not build every entry's DOM), but most sessions users open are small, and
/// there the first query (a click, the context) should not pay for the parse: Pi parses at load,
/// so a lazy parse made Arbor's context build at 1k entries slower than Pi's (2.5 ms vs 0.5 ms).
pub const EAGER_PARSE_MAX_BYTES: usize = 8 << 20;
/// Roles the loader keeps as a code (others are read when asked, see [`Session::role`]).
const ROLE_NAMES: [&str; 6] = ["user", "assistant", "toolResult", "bashExecution", "custom", "compactionSummary"];
/// The scan saw no `message.role` string (a message entry without one reads as no role).
const ROLE_ABSENT: u8 = u8::MAX;

/// [`Session::parse_ahead`] uses a second thread from this many bytes of unparsed lines on
/// (below it a thread costs about what it saves).
const PARSE_AHEAD_MIN_BYTES: u64 = 256 << 10;

/// Validates the non-blank lines of `buf[from..to]` in order, as the loader's walk would.
fn scan_lines(buf: &[u8], from: usize, to: usize, all_utf8: bool) -> Vec<Result<json::ScannedLine, json::JsonError>> {
    let mut out = Vec::with_capacity((to - from) / 2048 + 16);
    let mut pos = from;
    while pos <= to {
        let nl = memchr::memchr(b'\n', &buf[pos..to]).map(|o| pos + o).unwrap_or(to);
        let line = &buf[pos..nl];
        pos = nl + 1;
        if !js_is_blank(line) {
            if all_utf8 || std::str::from_utf8(line).is_ok() {
                out.push(json::scan_line_fast(line));
            } else {
                out.push(json::scan_line_fast(String::from_utf8_lossy(line).as_bytes()));
            }
        }
        if nl >= to {
            break;
        }
    }
    out
}

/// Per-line trimming rules of JavaScript's `String.prototype.trim`.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// Empty after JavaScript's `trim()` (Pi skips such lines silently).
pub(crate) fn js_is_blank(line: &[u8]) -> bool {
    // Only the first byte that is not ASCII whitespace matters: ASCII means not blank, and a
    // non-ASCII start is decoded only as far as it stays whitespace.
    match line.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\r' | 0x0B | 0x0C)) {
        None => true,
        Some(i) if line[i] < 0x80 => false,
        Some(i) => js_trim_start(&line[i..]) == line.len() - i,
    }
}

/// JavaScript's `String.prototype.trim` (Pi trims session names with it).
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// Byte length of the JS-whitespace prefix of `buf`.
fn js_trim_start(buf: &[u8]) -> usize {
    let mut i = 0;
    while i < buf.len() {
        let b = buf[i];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C) {
            i += 1;
            continue;
        }
        if b < 0x80 {
            break;
        }
        let rest = &buf[i..buf.len().min(i + 4)];
        let c = match std::str::from_utf8(rest) {
            Ok(s) => s.chars().next(),
            Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).ok().and_then(|s| s.chars().next()),
        };
        match c {
            Some(c) if is_js_space(c) => i += c.len_utf8(),
            _ => break,
        }
    }
    i
}

fn js_trim_end(buf: &[u8], start: usize) -> usize {
    let mut end = buf.len();
    while end > start {
        let b = buf[end - 1];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C) {
            end -= 1;
            continue;
        }
        if b < 0x80 {
            break;
        }
        // Find the start of the last UTF-8 sequence.
        let mut s = end - 1;
        while s > start && (buf[s] & 0xC0) == 0x80 && end - s < 4 {
            s -= 1;
        }
        match std::str::from_utf8(&buf[s..end]).ok().and_then(|t| t.chars().next()) {
            Some(c) if is_js_space(c) => end = s,
            _ => break,
        }
    }
    end
}

/// The entry fields of a validated current-version line.
pub(crate) struct EntryFields {
    pub type_name: String,
    pub id: String,
    pub parent_id: Option<String>,
    pub timestamp: String,
}

/// Why a valid JSON line is not an entry.
pub(crate) enum NotAnEntry {
    NotObject,
    /// A repeated `session` header (ignored, as Pi does).
    Header,
    /// An object without a string id.
    NoId,
}

impl NotAnEntry {
    pub(crate) fn kind(&self) -> DiagnosticKind {
        match self {
            NotAnEntry::Header => DiagnosticKind::ExtraHeader,
            NotAnEntry::NotObject | NotAnEntry::NoId => DiagnosticKind::InvalidEntry,
        }
    }
}

/// Decodes the fields the loader and the chunk scanner keep (absent or non-string `type` and
/// `timestamp` read as "", a non-string `parentId` as none), or says why the line is no entry.
pub(crate) fn entry_fields(text: &[u8], scanned: &json::ScannedLine) -> Result<EntryFields, NotAnEntry> {
    if !scanned.is_object {
        return Err(NotAnEntry::NotObject);
    }
    let str_or_empty = |f: Field| match f {
        Field::Str(r) => json::raw_str(text, r),
        _ => String::new(),
    };
    let type_name = str_or_empty(scanned.type_);
    if type_name == "session" {
        return Err(NotAnEntry::Header);
    }
    let Field::Str(id) = scanned.id else { return Err(NotAnEntry::NoId) };
    let parent_id = match scanned.parent_id {
        Field::Str(r) => Some(json::raw_str(text, r)),
        _ => None,
    };
    Ok(EntryFields { type_name, id: json::raw_str(text, id), parent_id, timestamp: str_or_empty(scanned.timestamp) })
}

/// How a malformed whole line (ended by `\n`) is reported, as the loader reports it.
fn whole_line_diag(text: &[u8], e: &json::JsonError) -> (DiagnosticKind, String) {
    if text.iter().all(|&b| b == 0 || b == b'\r') {
        (DiagnosticKind::NulBytes, format!("{} NUL bytes (a tail left by a power cut?); skipped, file untouched", text.len()))
    } else {
        (DiagnosticKind::Malformed, format!("not valid JSON ({e}); skipped, as Pi does"))
    }
}

impl Session {
    /// Opens a session file, read-only. Rejects what is not a regular file before reading it.
    pub fn open(path: &Path) -> Result<Session, OpenError> {
        let p = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => OpenError::NotFound { path: p.clone() },
            _ => OpenError::Io { path: p.clone(), source: e },
        })?;
        let ft = meta.file_type();
        if ft.is_dir() {
            return Err(OpenError::NotAFile { path: p, what: "a directory" });
        }
        if !ft.is_file() {
            return Err(OpenError::NotAFile { path: p, what: "a FIFO, socket or device" });
        }
        let buf = std::fs::read(path).map_err(|e| OpenError::Io { path: p, source: e })?;
        Ok(Session::from_bytes(buf))
    }

    /// Loads from bytes. The ids a v1 migration needs are deterministic (`m0000001`, ...), so
    /// the same legacy file gives the same ids every time it is opened or indexed (search hits
    /// and remembered leaves stay valid); Arbor never writes them back into that file.
    pub fn from_bytes(buf: Vec<u8>) -> Session {
        Session::from_bytes_with_ids(buf, &mut CounterIds { prefix: 'm', next: 0 })
    }

    /// Loads from bytes, drawing any ids a v1 migration needs from `ids`.
    pub fn from_bytes_with_ids(buf: Vec<u8>, ids: &mut dyn IdSource) -> Session {
        Session::from_bytes_with(buf, ids, PARALLEL_MIN_BYTES)
    }

    /// Like [`Session::from_bytes_with_ids`]; files of `parallel_min` bytes or more have their
    /// second half validated on another thread (the result is the same; tests force it with 0).
    pub fn from_bytes_with(buf: Vec<u8>, ids: &mut dyn IdSource, parallel_min: usize) -> Session {
        let mut s = Session {
            buf,
            header: None,
            entries: Vec::new(),
            values: Vec::new(),
            roles: Vec::new(),
            role_codes: Vec::new(),
            by_id: FxHashMap::default(),
            parent: Vec::new(),
            diagnostics: Vec::new(),
            labels: Vec::new(),
            name: None,
            read_only: None,
            migrated: false,
            version_in_file: None,
            non_empty_lines: 0,
            lines_seen: 0,
            text_end: 0,
            missing_parents: Default::default(),
            stale: false,
            malformed_lines: Vec::new(),
            ends_with_newline: false,
            children: OnceLock::new(),
        };
        s.load(ids, parallel_min);
        if s.buf.len() <= EAGER_PARSE_MAX_BYTES {
            for i in 0..s.entries.len() {
                s.value(i);
            }
        }
        s
    }

    fn load(&mut self, ids: &mut dyn IdSource, parallel_min: usize) {
        let buf = std::mem::take(&mut self.buf);
        self.ends_with_newline = buf.last() == Some(&b'\n');
        let all_utf8 = simdutf8::basic::from_utf8(&buf).is_ok();
        let t0 = js_trim_start(&buf);
        let t1 = js_trim_end(&buf, t0);
        // Lines of the trimmed text, split on '\n' only.
        let mut line_no = 0usize;
        let mut pos = t0;
        let mut header_seen = false;
        let mut rejected = false;
        let mut legacy_values: Vec<(usize, u64, u64, Value)> = Vec::new();
        let mut legacy = false;
        self.entries.reserve(buf.len() / 2048 + 16);
        // Big files: the second half's lines are validated on a second thread while this one
        // walks the first half; the walk then takes those results in order.
        let split = if t1 > t0 && t1 - t0 >= parallel_min {
            let mid = t0 + (t1 - t0) / 2;
            memchr::memchr(b'\n', &buf[mid..t1]).map(|o| mid + o)
        } else {
            None
        };
        let bufr: &[u8] = &buf;
        std::thread::scope(|scope| {
            let mut worker = split.map(|sp| scope.spawn(move || scan_lines(bufr, sp + 1, t1, all_utf8)));
            let mut pre: Option<std::vec::IntoIter<Result<json::ScannedLine, json::JsonError>>> = None;
            while pos <= t1 && t0 < t1 {
                let nl = memchr::memchr(b'\n', &buf[pos..t1]).map(|o| pos + o).unwrap_or(t1);
                line_no += 1;
                let line = &buf[pos..nl];
                let line_start = pos;
                pos = nl + 1;
                let is_last = nl >= t1;
                if js_is_blank(line) {
                    if nl >= t1 {
                        break;
                    }
                    continue;
                }
                self.non_empty_lines += 1;
                let lossy;
                let text: &[u8] = if all_utf8 || std::str::from_utf8(line).is_ok() {
                    line
                } else {
                    self.diag(
                        line_no,
                        line_start,
                        DiagnosticKind::InvalidUtf8,
                        "invalid UTF-8 in this line; decoded with U+FFFD replacement characters, as Pi does".into(),
                    );
                    lossy = String::from_utf8_lossy(line).into_owned().into_bytes();
                    &lossy
                };
                let result = match split {
                    Some(sp) if line_start > sp => {
                        if pre.is_none() {
                            // A panicked worker leaves nothing: every line is then scanned here.
                            let done = worker.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
                            pre = Some(done.into_iter());
                        }
                        pre.as_mut().and_then(Iterator::next).unwrap_or_else(|| json::scan_line_fast(text))
                    }
                    _ => json::scan_line_fast(text),
                };
                let scanned = match result {
                    Ok(sc) => sc,
                    Err(e) => {
                        self.malformed_lines.push(line_no);
                        let (kind, msg) = if line.iter().all(|&b| b == 0 || b == b'\r') {
                            (DiagnosticKind::NulBytes, format!("{} NUL bytes (a tail left by a power cut?); skipped, file untouched", line.len()))
                        } else if is_last && !self.ends_with_newline_at(t1, &buf) {
                            (
                                DiagnosticKind::TornTail,
                                format!(
                                    "incomplete last line ({} bytes at offset {line_start}): an append in progress or torn by a crash; skipped, file untouched",
                                    line.len()
                                ),
                            )
                        } else {
                            (DiagnosticKind::Malformed, format!("not valid JSON ({e}); skipped, as Pi does"))
                        };
                        self.diag(line_no, line_start, kind, msg);
                        if nl >= t1 {
                            break;
                        }
                        continue;
                    }
                };
                if rejected {
                    // A rejected file is still read to its end, so that its report counts
                    // every non-empty and every malformed line as Pi's load does.
                    if nl >= t1 {
                        break;
                    }
                    continue;
                }
                if !header_seen {
                    header_seen = true;
                    // The first parsed value must be a session header with a string id.
                    let v = json::parse_bytes(text).unwrap_or(Value::Null);
                    let ok = v.str_field("type") == Some("session") && v.str_field("id").is_some();
                    if !ok {
                        rejected = true;
                        if v.str_field("type") == Some("session") {
                            // Pi reports the version of a header it rejects (no string id).
                            self.version_in_file = v.num_field("version");
                        }
                        self.diag(
                            line_no,
                            line_start,
                            DiagnosticKind::InvalidEntry,
                            "the first JSON line is not a session header with a string id; the file is not a valid Pi session".into(),
                        );
                        if nl >= t1 {
                            break;
                        }
                        continue;
                    }
                    let version = v.num_field("version");
                    self.version_in_file = version;
                    self.header = Some(Header {
                        id: v.str_field("id").unwrap_or_default().to_string(),
                        version,
                        timestamp: v.str_field("timestamp").map(str::to_string),
                        cwd: v.str_field("cwd").map(str::to_string),
                        parent_session: v.str_field("parentSession").map(str::to_string),
                    });
                    let ver = version.unwrap_or(1.0);
                    if ver < CURRENT_VERSION as f64 {
                        legacy = true;
                        self.read_only = Some(ReadOnly::Legacy { version: if ver < 2.0 { 1 } else { 2 } });
                        legacy_values.push((line_no, line_start as u64, nl as u64, v));
                    } else if ver > CURRENT_VERSION as f64 {
                        self.read_only = Some(ReadOnly::Newer { version: json::number_to_string(ver) });
                    }
                    if nl >= t1 {
                        break;
                    }
                    continue;
                }
                if legacy {
                    let v = json::parse_bytes(text).unwrap_or(Value::Null);
                    legacy_values.push((line_no, line_start as u64, nl as u64, v));
                    if nl >= t1 {
                        break;
                    }
                    continue;
                }
                let unterminated = is_last && !self.ends_with_newline_at(t1, &buf);
                self.add_entry_line(text, &scanned, line_start, nl, line_no, unterminated);
                if nl >= t1 {
                    break;
                }
            }
        });
        self.lines_seen = line_no;
        self.text_end = t1;
        self.buf = buf;
        if rejected {
            self.header = None;
            self.read_only = Some(ReadOnly::Rejected);
            return;
        }
        if self.header.is_none() {
            self.read_only = Some(ReadOnly::Rejected);
            return;
        }
        if legacy {
            self.migrate(legacy_values, ids);
        }
        self.finish_index();
    }

    /// Adds one validated line of a current-version file as an entry, or reports why it is
    /// not one (not an object, a repeated header, no string id). Shared by the loader and
    /// [`Session::extend_from_file`].
    fn add_entry_line(&mut self, text: &[u8], scanned: &json::ScannedLine, line_start: usize, nl: usize, line_no: usize, unterminated: bool) {
        let EntryFields { type_name, id, parent_id, timestamp } = match entry_fields(text, scanned) {
            Ok(f) => f,
            Err(NotAnEntry::NotObject) => {
                self.diag(line_no, line_start, DiagnosticKind::InvalidEntry, "valid JSON but not an object; skipped".into());
                return;
            }
            Err(NotAnEntry::Header) => {
                self.diag(line_no, line_start, DiagnosticKind::ExtraHeader, "a repeated session header; ignored, as Pi does".into());
                return;
            }
            Err(NotAnEntry::NoId) => {
                self.diag(line_no, line_start, DiagnosticKind::InvalidEntry, "an object without a string id; skipped".into());
                return;
            }
        };
        if unterminated {
            self.diag(line_no, line_start, DiagnosticKind::Unterminated, "the last line has no trailing newline; Arbor's next append starts with one".into());
        }
        self.push_entry(line_start as u64, nl as u64, line_no, &type_name, id, parent_id, timestamp, None);
        if let (Some(role), Some(code)) = (scanned.role, self.role_codes.last_mut()) {
            *code = match role {
                json::Field::Absent => ROLE_ABSENT,
                json::Field::Str(r) if !r.escaped => {
                    let name = &text[r.start as usize..r.end as usize];
                    ROLE_NAMES.iter().position(|n| n.as_bytes() == name).map_or(0, |k| k as u8 + 1)
                }
                _ => 0,
            };
        }
    }

    fn ends_with_newline_at(&self, t1: usize, buf: &[u8]) -> bool {
        // The trimmed text ends at t1; the last line is terminated if a '\n' follows it.
        buf[t1..].contains(&b'\n')
    }

    #[allow(clippy::too_many_arguments)]
    fn push_entry(
        &mut self,
        start: u64,
        end: u64,
        line: usize,
        type_name: &str,
        id: String,
        parent_id: Option<String>,
        timestamp: String,
        value: Option<Value>,
    ) {
        let idx = self.entries.len() as u32;
        self.entries.push(Entry {
            start,
            end,
            line: line as u32,
            kind: Kind::from_type(type_name),
            type_name: type_name.into(),
            id: id.into(),
            parent_id: parent_id.map(Into::into),
            timestamp: timestamp.into(),
        });
        let cell = OnceLock::new();
        if let Some(v) = value {
            let _ = cell.set(v);
        }
        self.values.push(cell);
        self.roles.push(OnceLock::new());
        self.role_codes.push(0);
        let _ = idx;
    }

    /// v1 → v2 → v3 in memory, exactly as Pi's `migrateToCurrentVersion` (§6.3).
    fn migrate(&mut self, mut vals: Vec<(usize, u64, u64, Value)>, ids: &mut dyn IdSource) {
        self.migrated = true;
        let version = self.version_in_file.unwrap_or(1.0);
        if version < 2.0 {
            let mut taken: rustc_hash::FxHashSet<String> = Default::default();
            let mut prev: Option<String> = None;
            let n = vals.len();
            for i in 0..n {
                let is_session = vals[i].3.str_field("type") == Some("session");
                if is_session {
                    if let Value::Obj(m) = &mut vals[i].3 {
                        m.insert("version", Value::Num(2.0));
                    }
                    continue;
                }
                let id = ids.next_id(&|c| taken.contains(c));
                taken.insert(id.clone());
                let first_kept_target = if vals[i].3.str_field("type") == Some("compaction") {
                    match vals[i].3.get("firstKeptEntryIndex") {
                        Some(Value::Num(k)) => {
                            let k = *k;
                            let mut target = None;
                            if k >= 0.0 && k.fract() == 0.0 && (k as usize) < n {
                                let t = &vals[k as usize].3;
                                if t.str_field("type") != Some("session") {
                                    // Earlier objects already carry their new id; a forward index
                                    // sees the old one (usually absent, i.e. `undefined`).
                                    target = if (k as usize) == i { Some(Value::Str(id.clone())) } else { t.get("id").cloned() };
                                }
                            }
                            Some(target)
                        }
                        _ => None,
                    }
                } else {
                    None
                };
                if let Value::Obj(m) = &mut vals[i].3 {
                    m.insert("id", Value::Str(id.clone()));
                    m.insert("parentId", prev.clone().map(Value::Str).unwrap_or(Value::Null));
                    if let Some(target) = first_kept_target {
                        if let Some(t) = target {
                            m.insert("firstKeptEntryId", t);
                        }
                        m.remove("firstKeptEntryIndex");
                    }
                }
                prev = Some(id);
            }
        }
        for (_, _, _, v) in vals.iter_mut() {
            let is_session = v.str_field("type") == Some("session");
            if let Value::Obj(m) = v {
                if is_session {
                    m.insert("version", Value::Num(3.0));
                    continue;
                }
                if m.get("type").and_then(Value::as_str) == Some("message") {
                    if let Some(Value::Obj(msg)) = m.0.iter_mut().find(|(k, _)| k == "message").map(|(_, v)| v) {
                        if msg.get("role").and_then(Value::as_str) == Some("hookMessage") {
                            msg.insert("role", Value::Str("custom".into()));
                        }
                    }
                }
            }
        }
        let mut header_done = false;
        for (line, start, end, v) in vals {
            if v.str_field("type") == Some("session") {
                if header_done {
                    self.diag(line, start as usize, DiagnosticKind::ExtraHeader, "a repeated session header; ignored, as Pi does".into());
                }
                header_done = true;
                continue;
            }
            let Some(id) = v.str_field("id").map(str::to_string) else {
                self.diag(line, start as usize, DiagnosticKind::InvalidEntry, "an object without a string id; skipped".into());
                continue;
            };
            if !matches!(v, Value::Obj(_)) {
                continue;
            }
            let t = v.str_field("type").unwrap_or("").to_string();
            let parent = v.str_field("parentId").map(str::to_string);
            let ts = v.str_field("timestamp").unwrap_or("").to_string();
            self.push_entry(start, end, line, &t, id, parent, ts, Some(v));
        }
    }

    fn diag(&mut self, line: usize, offset: usize, kind: DiagnosticKind, message: String) {
        self.diagnostics.push(Diagnostic { line, offset: offset as u64, kind, message });
    }

    /// Builds the id index, parents, labels and name; detects duplicates, orphans and cycles.
    fn finish_index(&mut self) {
        let n = self.entries.len();
        self.by_id.reserve(n);
        let mut dups = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if let Some(prev) = self.by_id.insert(e.id.clone(), i as u32) {
                dups.push((i, prev));
            }
        }
        for (i, prev) in dups {
            let e = &self.entries[i];
            let msg = format!("id {} repeats line {}; the later entry wins, as in Pi", e.id, self.entries[prev as usize].line);
            let (line, start) = (e.line as usize, e.start as usize);
            self.diag(line, start, DiagnosticKind::DuplicateId, msg);
        }
        self.parent = self
            .entries
            .iter()
            .map(|e| match e.parent_id.as_deref() {
                Some(p) if !p.is_empty() => self.by_id.get(p).copied().unwrap_or(NONE),
                _ => NONE,
            })
            .collect();
        // Orphans: a non-empty parentId that is not in the file.
        let mut orphan_diags = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if let Some(p) = e.parent_id.as_deref() {
                if !p.is_empty() && self.parent[i] == NONE {
                    self.missing_parents.insert(p.into());
                    orphan_diags.push((
                        e.line as usize,
                        e.start as usize,
                        format!("entry {} has parent {} which is not in the file; shown as an extra root", e.id, p),
                    ));
                }
            }
        }
        for (l, o, m) in orphan_diags {
            self.diag(l, o, DiagnosticKind::Orphan, m);
        }
        // Cycles: colour each chain (0 unknown, 1 on the stack, 2 reaches a root).
        let mut state = vec![0u8; n];
        let mut stack = Vec::new();
        let mut cyclic = Vec::new();
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            let mut cur = start as u32;
            loop {
                let c = cur as usize;
                if state[c] == 2 {
                    break;
                }
                if state[c] == 1 {
                    cyclic.push(c);
                    break;
                }
                state[c] = 1;
                stack.push(c);
                let p = self.parent[c];
                if p == NONE {
                    break;
                }
                cur = p;
            }
            for c in stack.drain(..) {
                state[c] = 2;
            }
        }
        if !cyclic.is_empty() {
            for c in cyclic {
                let e = &self.entries[c];
                let msg = format!("the parentId chain through {} loops; Arbor stops the walk here (Pi would hang)", e.id);
                let (l, o) = (e.line as usize, e.start as usize);
                self.diag(l, o, DiagnosticKind::Cycle, msg);
            }
            if self.read_only.is_none() {
                self.read_only = Some(ReadOnly::Cycle);
            }
        }
        // Labels (last wins in file order) and the session name (last session_info).
        for i in 0..n {
            self.apply_label_or_name(i);
        }
    }

    /// Applies a `label` or `session_info` entry in file order: labels keep the order in which
    /// they were first set (a cleared and re-set label moves to the end).
    fn apply_label_or_name(&mut self, i: usize) {
        match self.entries[i].kind {
            Kind::Label => {
                let v = self.value(i);
                let target = v.str_field("targetId").unwrap_or("").to_string();
                let text = match v.get("label") {
                    Some(Value::Str(s)) if !s.is_empty() => Some(s.clone()),
                    Some(l) if l.truthy() => Some(json::to_string(l)),
                    _ => None,
                };
                let ts = self.entries[i].timestamp.to_string();
                match (text, self.labels.iter().position(|(t, _, _)| *t == target)) {
                    (Some(l), Some(k)) => self.labels[k] = (target, l, ts),
                    (Some(l), None) => self.labels.push((target, l, ts)),
                    (None, Some(k)) => {
                        self.labels.remove(k);
                    }
                    (None, None) => {}
                }
            }
            Kind::SessionInfo => {
                let v = self.value(i);
                self.name = v.str_field("name").map(|s| js_trim(s).to_string()).filter(|s| !s.is_empty());
            }
            _ => {}
        }
    }

    /// Reads what Pi appended since this session was loaded and adds it, in time proportional
    /// to the new bytes. Only complete lines are taken; a partial last line waits for the next
    /// call. Returns the number of new entries.
    ///
    /// When the file no longer extends what was loaded (truncated, rewritten or replaced), or
    /// the new lines change earlier resolution (a repeated id, a cycle), or the session is not a
    /// plain current-version file, it returns [`Extend::Reload`]: the caller opens the file
    /// again; this `Session` may then hold part of the new lines and should be dropped.
    pub fn extend_from_file(&mut self, path: &Path) -> Result<Extend, OpenError> {
        use std::io::{Read, Seek, SeekFrom};
        let p = path.display().to_string();
        if self.stale || self.read_only.is_some() || !self.ends_with_newline() || self.buf.is_empty() {
            return Ok(Extend::Reload);
        }
        let io = |e: std::io::Error| OpenError::Io { path: p.clone(), source: e };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let old = self.buf.len() as u64;
        if len < old {
            return Ok(Extend::Reload);
        }
        // The bytes we hold must still be there: compare the last 4 KiB.
        let probe = old.min(4096);
        let mut tail = vec![0u8; probe as usize];
        f.seek(SeekFrom::Start(old - probe)).map_err(io)?;
        f.read_exact(&mut tail).map_err(io)?;
        if tail[..] != self.buf[(old - probe) as usize..] {
            return Ok(Extend::Reload);
        }
        let mut new = Vec::with_capacity((len - old) as usize);
        f.read_to_end(&mut new).map_err(io)?;
        let Some(last_nl) = memchr::memrchr(b'\n', &new) else { return Ok(Extend::Added(0)) };
        new.truncate(last_nl + 1);
        let all_utf8 = simdutf8::basic::from_utf8(&new).is_ok();
        let old_len = self.buf.len();
        self.buf.extend_from_slice(&new);
        // Pi trims the whole file: what the loader (and each extend) read ends at `text_end`,
        // and the text now ends at `end`. Only whitespace appended: nothing changes.
        let end = js_trim_end(&self.buf, self.text_end);
        if end <= self.text_end {
            return Ok(Extend::Added(0));
        }
        // The old tail (after `text_end`) now belongs to the last line read, up to its `\n`,
        // and to blank lines, as in a fresh load of the longer file.
        let tail = &self.buf[self.text_end..old_len];
        let first_nl = memchr::memchr(b'\n', tail).unwrap_or(tail.len());
        if tail[..first_nl].iter().any(|b| !matches!(b, b' ' | b'\t' | b'\r')) {
            // Whitespace JSON does not allow (U+00A0, U+2028, a BOM, ...): trimmed, the last line
            // parsed; whole, it may not. Only a fresh load knows.
            self.stale = true;
            return Ok(Extend::Reload);
        }
        let last_line = self.lines_seen;
        let last_end = (self.text_end + first_nl) as u64;
        if let Some(e) = self.entries.last_mut().filter(|e| e.line as usize == last_line) {
            e.end = last_end;
        }
        if self.malformed_lines.last() == Some(&last_line) {
            // Its diagnostic speaks of the trimmed line; say it again of the whole line.
            if let Some(d) =
                self.diagnostics.iter_mut().rev().find(|d| d.line == last_line && matches!(d.kind, DiagnosticKind::Malformed | DiagnosticKind::NulBytes))
            {
                let whole = String::from_utf8_lossy(&self.buf[d.offset as usize..last_end as usize]).into_owned();
                if let Err(e) = json::scan_line_fast(whole.as_bytes()) {
                    (d.kind, d.message) = whole_line_diag(whole.as_bytes(), &e);
                }
            }
        }
        self.lines_seen += memchr::memchr_iter(b'\n', &tail[first_nl.min(tail.len())..]).count().saturating_sub(1);
        let first_new = self.entries.len();
        let mut pos = old_len;
        while pos < end {
            let nl = memchr::memchr(b'\n', &self.buf[pos..end]).map(|o| pos + o).unwrap_or(end);
            let line_start = pos;
            pos = nl + 1;
            let line = self.buf[line_start..nl].to_vec();
            self.lines_seen += 1;
            let line_no = self.lines_seen;
            if js_is_blank(&line) {
                continue;
            }
            self.non_empty_lines += 1;
            let text: Vec<u8> = if all_utf8 || std::str::from_utf8(&line).is_ok() {
                line
            } else {
                self.diag(
                    line_no,
                    line_start,
                    DiagnosticKind::InvalidUtf8,
                    "invalid UTF-8 in this line; decoded with U+FFFD replacement characters, as Pi does".into(),
                );
                String::from_utf8_lossy(&line).into_owned().into_bytes()
            };
            match json::scan_line_fast(&text) {
                Ok(scanned) => self.add_entry_line(&text, &scanned, line_start, nl, line_no, false),
                Err(e) => {
                    self.malformed_lines.push(line_no);
                    let (kind, msg) = whole_line_diag(&text, &e);
                    self.diag(line_no, line_start, kind, msg);
                }
            }
        }
        // Index the new entries; anything that would change how earlier entries resolve means
        // a full load.
        let n = self.entries.len();
        for i in first_new..n {
            // A repeated id, or the parent an earlier orphan was waiting for.
            if self.missing_parents.contains(&self.entries[i].id) || self.by_id.insert(self.entries[i].id.clone(), i as u32).is_some() {
                self.stale = true;
                return Ok(Extend::Reload);
            }
        }
        for i in first_new..n {
            let par = match self.entries[i].parent_id.as_deref() {
                Some(p) if !p.is_empty() => self.by_id.get(p).copied().unwrap_or(NONE),
                _ => NONE,
            };
            self.parent.push(par);
            if par == NONE && self.entries[i].parent_id.as_deref().is_some_and(|p| !p.is_empty()) {
                let e = &self.entries[i];
                self.missing_parents.insert(e.parent_id.clone().unwrap_or_default());
                let msg = format!("entry {} has parent {} which is not in the file; shown as an extra root", e.id, e.parent_id.as_deref().unwrap_or(""));
                let (l, o) = (e.line as usize, e.start as usize);
                self.diag(l, o, DiagnosticKind::Orphan, msg);
            }
        }
        for i in first_new..n {
            // New entries can only loop among themselves (old ones already resolve to a root).
            let mut cur = i;
            let mut steps = 0;
            while cur >= first_new {
                match self.parent_of(cur) {
                    Some(p) => cur = p,
                    None => break,
                }
                steps += 1;
                if steps > n - first_new {
                    self.stale = true;
                    return Ok(Extend::Reload);
                }
            }
        }
        for i in first_new..n {
            self.apply_label_or_name(i);
        }
        self.children = OnceLock::new();
        self.text_end = end;
        Ok(Extend::Added(n - first_new))
    }
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
        self.entries[idx].kind
    }
    /// The original bytes of the entry's line (without `\n`; a CRLF file keeps its `\r`).
    pub fn raw(&self, idx: usize) -> &[u8] {
        let e = &self.entries[idx];
        &self.buf[e.start as usize..e.end as usize]
    }
    /// The entry's full JSON, parsed on first use. A line nested deeper than
    /// [`json::MAX_DEPTH`] (which Pi loads, V8 having no limit) reads as `null` here: its
    /// entry stays in the tree but contributes nothing.
    pub fn value(&self, idx: usize) -> &Value {
        self.values[idx].get_or_init(|| json::parse_bytes(self.raw(idx)).unwrap_or(Value::Null))
    }
    /// Parses the entries of `idxs` that [`Session::value`] has not parsed yet, on two threads
    /// when they are many bytes: what `value` then returns is the same, only the parse of a long
    /// context (hundreds of entries of a big file, which is parsed lazily) takes half the time.
    /// Few bytes are left to the callers' own `value` calls.
    pub fn parse_ahead(&self, idxs: &[usize]) {
        let todo: Vec<usize> = idxs.iter().copied().filter(|&i| self.values[i].get().is_none()).collect();
        let bytes = |i: usize| self.entries[i].end - self.entries[i].start + 1;
        let total: u64 = todo.iter().map(|&i| bytes(i)).sum();
        if total < PARSE_AHEAD_MIN_BYTES {
            return;
        }
        // Two runs of about equal bytes; each thread parses one.
        let mut acc = 0;
        let split = todo.iter().position(|&i| {
            acc += bytes(i);
            acc * 2 >= total
        });
        let (first, second) = todo.split_at(split.map_or(todo.len(), |k| k + 1));
        std::thread::scope(|sc| {
            sc.spawn(|| {
                second.iter().for_each(|&i| {
                    self.value(i);
                })
            });
            first.iter().for_each(|&i| {
                self.value(i);
            });
        });
    }
    /// The entry's full JSON without keeping it: the cached parse when [`Session::value`] already
    /// made one, else a parse the caller drops. For passes over a whole path (the timeline) that
    /// would otherwise keep every entry's DOM alive with the session.
    pub fn value_transient(&self, idx: usize) -> std::borrow::Cow<'_, Value> {
        match self.values[idx].get() {
            Some(v) => std::borrow::Cow::Borrowed(v),
            None => std::borrow::Cow::Owned(json::parse_bytes(self.raw(idx)).unwrap_or(Value::Null)),
        }
    }
    /// `entry.message` of a `message` entry.
    pub fn message(&self, idx: usize) -> Option<&Value> {
        if self.entries[idx].kind != Kind::Message {
            return None;
        }
        self.value(idx).get("message")
    }
    /// `entry.message.role` of a `message` entry. Read by a borrowed serde pass that skips
    /// the rest of the line (several times faster than the DOM), unless the DOM is already
    /// there; cached either way.
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
            .get_or_init(|| {
                if let Some(v) = self.values[idx].get() {
                    return v.get("message").and_then(|m| m.str_field("role")).map(Into::into);
                }
                #[derive(serde::Deserialize)]
                struct Msg<'a> {
                    #[serde(borrow, default)]
                    role: Option<&'a str>,
                }
                #[derive(serde::Deserialize)]
                struct Line<'a> {
                    #[serde(borrow, default)]
                    message: Option<Msg<'a>>,
                }
                match serde_json::from_slice::<Line>(self.raw(idx)) {
                    Ok(l) => l.message.and_then(|m| m.role).map(Into::into),
                    // Escapes, duplicate keys, odd shapes: ask the exact parser.
                    Err(_) => self.value(idx).get("message").and_then(|m| m.str_field("role")).map(Into::into),
                }
            })
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
        self.labels.iter().find(|(t, _, _)| t == id).map(|(_, l, _)| l.as_str())
    }
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The path from the root to `leaf` (entry indices, root first). Linear; stops at a cycle.
    pub fn path(&self, leaf: Option<usize>) -> Vec<usize> {
        let Some(mut cur) = leaf else { return Vec::new() };
        let mut out = Vec::new();
        loop {
            out.push(cur);
            if out.len() > self.entries.len() {
                // A cycle: the loader reported it; stop.
                break;
            }
            match self.parent_of(cur) {
                Some(p) => cur = p,
                None => break,
            }
        }
        out.reverse();
        out
    }

    /// The ids on `path(leaf)`.
    pub fn path_ids(&self, leaf: Option<usize>) -> Vec<&str> {
        self.path(leaf).into_iter().map(|i| self.id(i)).collect()
    }

    /// The deepest entry on both paths (Pi's common-ancestor rule: walk the target's path
    /// from the target towards the root; the first id on the old path).
    pub fn common_ancestor(&self, a: usize, b: usize) -> Option<usize> {
        // Mark a's ancestors, then walk up from b to the first marked one: one bit per entry,
        // each walk bounded by the entry count (cycles).
        let n = self.entries.len();
        let mut on_a = vec![false; n];
        let mut cur = Some(a);
        let mut steps = 0;
        while let Some(c) = cur {
            if on_a[c] || steps > n {
                break;
            }
            on_a[c] = true;
            steps += 1;
            cur = self.parent_of(c);
        }
        let mut cur = Some(b);
        let mut steps = 0;
        while let Some(c) = cur {
            if on_a[c] {
                return Some(c);
            }
            steps += 1;
            if steps > n {
                break;
            }
            cur = self.parent_of(c);
        }
        None
    }

    fn tree(&self) -> &Children {
        self.children.get_or_init(|| {
            let n = self.entries.len();
            // Pi's getTree: nodes by id (a later duplicate replaces the earlier one);
            // roots: parentId null or own id, or a parent that is not present.
            let mut roots = Vec::new();
            let mut counts = vec![0u32; n + 1];
            let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n);
            for (i, e) in self.entries.iter().enumerate() {
                let node = self.by_id[&e.id];
                if node as usize != i {
                    // An earlier duplicate: Pi attaches the later node for it again; skip.
                    continue;
                }
                match e.parent_id.as_deref() {
                    None => roots.push(node),
                    Some(p) if p == &*e.id => roots.push(node),
                    Some(p) => match self.by_id.get(p) {
                        Some(&par) => {
                            edges.push((par, node));
                            counts[par as usize] += 1;
                        }
                        None => roots.push(node),
                    },
                }
            }
            let mut start = vec![0u32; n + 1];
            for i in 0..n {
                start[i + 1] = start[i] + counts[i];
            }
            let mut fill = start.clone();
            let mut list = vec![0u32; edges.len()];
            for (p, c) in edges {
                list[fill[p as usize] as usize] = c;
                fill[p as usize] += 1;
            }
            for i in 0..n {
                let slice = &mut list[start[i] as usize..start[i + 1] as usize];
                if slice.len() > 1 {
                    slice.sort_by_key(|&c| crate::time::parse_iso_ms(&self.entries[c as usize].timestamp).unwrap_or(i64::MIN));
                }
            }
            Children { start, list, roots }
        })
    }

    /// Children of an entry, oldest first (by timestamp, as Pi's `getTree`).
    pub fn children(&self, idx: usize) -> &[u32] {
        let t = self.tree();
        &t.list[t.start[idx] as usize..t.start[idx + 1] as usize]
    }

    /// Roots of the tree in file order: real roots and orphans.
    pub fn roots(&self) -> &[u32] {
        &self.tree().roots
    }

    /// Entry indices in file order whose `type` is `compaction`.
    pub fn compactions(&self) -> impl Iterator<Item = usize> + '_ {
        self.entries.iter().enumerate().filter(|(_, e)| e.kind == Kind::Compaction).map(|(i, _)| i)
    }

    /// The migrated file (header + entries) as Pi would write it back: one JSON line each.
    /// Only for legacy files; used by "save as v3 copy".
    pub fn migrated_lines(&self) -> Option<Vec<String>> {
        if !self.migrated {
            return None;
        }
        let h = self.header.as_ref()?;
        // Re-read the header object to keep its key order, then set version 3 as Pi does.
        let first = self.first_header_value()?;
        let mut header = first;
        if let Value::Obj(m) = &mut header {
            m.insert("version", Value::Num(3.0));
        }
        let _ = h;
        let mut out = vec![json::to_string(&header)];
        for i in 0..self.entries.len() {
            out.push(json::to_string(self.value(i)));
        }
        Some(out)
    }

    fn first_header_value(&self) -> Option<Value> {
        let t0 = js_trim_start(&self.buf);
        for line in self.buf[t0..].split(|&b| b == b'\n') {
            if js_is_blank(line) {
                continue;
            }
            if let Ok(v) = json::parse_bytes(line) {
                return Some(v);
            }
        }
        None
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
        let s = load(&text);
        assert_eq!(s.len(), n);
        let asked: Vec<usize> = (0..n).filter(|i| i % 3 != 0).take(300).collect();
        s.parse_ahead(&asked);
        for i in 0..n.min(450) {
            let parsed = s.values[i].get();
            assert_eq!(parsed.is_some(), asked.contains(&i), "entry {i}");
            if let Some(v) = parsed {
                assert_eq!(v, &json::parse_bytes(s.raw(i)).unwrap(), "entry {i}");
            }
        }
    }

    /// The role the loader's scan keeps is the role of the parsed line, for plain roles and for
    /// every shape the scan hands over (escapes, duplicate keys, no message object, a role that
    /// is not a string, a role it does not keep), in small (eagerly parsed) and big files alike.
    #[test]
    fn roles_read_at_load_equal_the_parsed_roles() {
        let lines = [
            r#""message":{"role":"user","content":"hi"}"#,
            r#""message":{"content":"x","role":"assistant"}"#,
            r#""message":{"role":"toolResult","toolCallId":"t","content":[]}"#,
            r#""message":{"role":"bashExecution","command":"ls"}"#,
            r#""message":{"role":"custom"}"#,
            r#""message":{"role":"somethingNew"}"#,
            r#""message":{"role":"us\u0065r"}"#,
            r#""message":{"role":"user","role":"assistant"}"#,
            r#""message":{"role":7}"#,
            r#""message":{"content":"no role"}"#,
            r#""message":"a string""#,
            r#""message":null"#,
            r#""message":{"role":"user"},"message":{"role":"toolResult"}"#,
            r#""details":{"message":{"role":"user"}},"message":{"role":"assistant"}"#,
            r#""other":1"#,
        ];
        let mut text = format!("{H}\n");
        for (k, l) in lines.iter().enumerate() {
            text.push_str(&format!(r#"{{"type":"message","id":"m{k}","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",{l}}}"#));
            text.push('\n');
        }
        let want = |s: &Session, i: usize| json::parse_bytes(s.raw(i)).unwrap().get("message").and_then(|m| m.str_field("role")).map(str::to_string);
        // Small: parsed at load; big (padding lines past the eager limit): parsed when asked.
        let pad =
            format!(r#"{{"type":"custom","id":"pad","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","data":"{}"}}"#, "x".repeat(EAGER_PARSE_MAX_BYTES));
        for t in [text.clone(), format!("{text}{pad}\n")] {
            let s = load(&t);
            assert_eq!(s.len(), lines.len() + usize::from(t.len() > EAGER_PARSE_MAX_BYTES));
            let mut read = 0;
            for (i, line) in lines.iter().enumerate() {
                assert_eq!(s.role(i).map(str::to_string), want(&s, i), "{line}");
                read += usize::from(s.role_codes[i] != 0);
            }
            if t.len() > EAGER_PARSE_MAX_BYTES {
                // The plain ones (the first five, the unknown role's absence stays unread).
                assert!(read >= 5, "{read} roles came from the scan");
            }
        }
    }

    #[test]
    fn leaf_is_the_last_line_and_path_walks_parents() {
        let s = load(&format!(
            "{H}\n{}\n{}\n{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"label","id":"c","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","targetId":"a","label":"start"}"#,
        ));
        assert_eq!(s.len(), 3);
        assert_eq!(s.file_leaf().map(|i| s.id(i)), Some("c"));
        assert_eq!(s.path_ids(s.file_leaf()), vec!["a", "c"]);
        assert_eq!(s.label_of("a"), Some("start"));
        assert_eq!(s.children(0).len(), 2);
        assert_eq!(s.common_ancestor(1, 2), Some(0));
    }

    #[test]
    fn cycles_are_cut_and_reported() {
        let s = load(&format!(
            "{H}\n{}\n{}\n",
            r#"{"type":"custom","id":"a","parentId":"b","timestamp":"t"}"#, r#"{"type":"custom","id":"b","parentId":"a","timestamp":"t"}"#,
        ));
        assert_eq!(s.path(Some(1)).len(), 3); // bounded
        assert!(s.diagnostics().iter().any(|d| d.kind == DiagnosticKind::Cycle));
        assert_eq!(s.read_only(), Some(&ReadOnly::Cycle));
    }

    #[test]
    fn torn_tail_is_reported_not_fatal() {
        let s = load(&format!("{H}\n{}\n{{\"type\":\"mess", r#"{"type":"custom","id":"a","parentId":null,"timestamp":"t"}"#));
        assert_eq!(s.len(), 1);
        assert!(s.diagnostics().iter().any(|d| d.kind == DiagnosticKind::TornTail));
        assert!(!s.ends_with_newline());
    }
}
