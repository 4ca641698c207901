//! Opening a session: the line loop, the two-thread validation and the index.

use super::bytes::FileBytes;
use super::whitespace::{js_trim_end, js_trim_start};
#[cfg(unix)]
use super::windows::WINDOW_BYTES;
use super::*;

/// Files parsed whole at open (up to [`EAGER_PARSE_MAX_BYTES`]) from this size on have their
/// second half parsed on a second thread (a 2 MB session of 1000 entries parses in about 3 ms):
/// by [`Session::open`], on the threads that read the file's halves (`FileBytes::read_then`);
/// by the loads from bytes, on a thread of its own.
pub(crate) const PARALLEL_PARSE_MIN_BYTES: usize = 1 << 20;

/// `read` over the non-blank lines of `buf[from..to]` in order, as the loader's walk would meet
/// them (a line that is not UTF-8 is read decoded with U+FFFD, as the walk decodes it): the
/// second half of a split open, parsed ([`parse_line`]) or validated (`pi_json::scan_line_fast`),
/// each given the line and where it lies in `buf`; `kib_per_line` guesses the lines' size for the
/// first allocation.
pub(super) fn read_lines<T>(
    buf: &[u8],
    from: usize,
    to: usize,
    all_utf8: bool,
    kib_per_line: usize,
    read: impl Fn(&[u8], usize, usize) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity((to - from) / (kib_per_line * 1024) + 16);
    let mut pos = from;
    while pos <= to {
        let nl = memchr::memchr(b'\n', &buf[pos..to]).map(|o| pos + o).unwrap_or(to);
        let (start, line) = (pos, &buf[pos..nl]);
        pos = nl + 1;
        if !js_is_blank(line) {
            if all_utf8 || std::str::from_utf8(line).is_ok() {
                out.push(read(line, start, nl));
            } else {
                out.push(read(String::from_utf8_lossy(line).as_bytes(), start, nl));
            }
        }
        if nl >= to {
            break;
        }
    }
    out
}

/// Parses the line `line`, which lies at `start..end` of the file: as text, without a second
/// check, when the whole file was checked as UTF-8 at open (`whole`; a line cut at `\n` bytes is
/// then valid too), else from its bytes (checked, or already decoded with U+FFFD): each line was
/// checked a second time, as many bytes as the check over the file.
///
/// The value's [`ValueHead`] is read here too, by the thread that parsed it: the main thread
/// read the second half's heads after the join, from values the other core had just written
/// (that walk, with pushing the entries, took 0.35-0.4 ms of a 3.9 ms open of 1000 entries).
fn parse_line(
    whole: Option<&str>,
    line: &[u8],
    start: usize,
    end: usize,
) -> Result<(Value, ValueHead), pi_json::JsonError> {
    let v = match whole.and_then(|w| w.get(start..end)) {
        Some(text) => pi_json::parse(text),
        None => pi_json::parse_bytes(line),
    }?;
    let head = value_head(&v);
    Ok((v, head))
}

/// What the loader keeps of a parsed line besides the value: its entry fields (or why it is no
/// entry) and its `message.role` (a common one as its [`ROLE_NAMES`] code, another as its text;
/// `None` when the line has no string role).
pub(crate) struct ValueHead {
    fields: Result<EntryFields<pi_json::Str>, NotAnEntry>,
    role: Option<Result<u8, Box<str>>>,
}

fn value_head(v: &Value) -> ValueHead {
    let role =
        v.get("message").and_then(|m| m.str_field("role")).map(|r| match ROLE_NAMES.iter().position(|n| *n == r) {
            Some(k) => Ok(k as u8 + 1),
            None => Err(Box::<str>::from(r)),
        });
    ValueHead { fields: entry_fields_of_value(v), role }
}

/// Grows this thread's allocator heap by about `bytes` at once, before a parse fills it.
///
/// A second thread allocates from an arena of its own, and glibc grows such an arena one page at
/// a time as it fills, with one `mprotect` call each (the main thread's heap grows by 128 KiB
/// steps): the worker parsing the second half of the 1000-entry session made 481 of them, and
/// was the open's longest part. Blocks just under the allocator's mapping threshold, taken and
/// given back, leave the arena grown (its pages are not touched, so nothing is faulted in or held),
/// and the parse's values then fit without a call: 54 calls, an open of 5.3 ms against 5.9 ms.
/// Elsewhere (another allocator) this is one allocation and free per block, nothing more.
fn grow_thread_heap(bytes: usize) {
    const BLOCK: usize = 96 << 10;
    let blocks: Vec<Vec<u8>> = (0..bytes.div_ceil(BLOCK)).map(|_| Vec::with_capacity(BLOCK)).collect();
    // Kept from being optimized away: the allocations are the point.
    drop(std::hint::black_box(blocks));
}

/// A part of a file's text parsed line by line by the thread that read it (see
/// [`Session::open`]): the lines at `from..to` (`to` is the end of the part's last line), in
/// order, and whether that text is UTF-8.
pub(crate) struct ParsedPart {
    from: usize,
    to: usize,
    utf8: bool,
    lines: Vec<Result<(Value, ValueHead), pi_json::JsonError>>,
}

/// Parses the lines of `text`, which lies at `from` in the file (see [`ParsedPart`]).
///
/// The list of lines is first sized for lines of 2 KiB (the 1000-entry session's are 2.2 KiB on
/// average): sized for 1 KiB, the context built right after the open took 0.083 ms against
/// 0.073 ms (median of 40 interleaved rounds), most likely because the first part's list was
/// then big enough to be a mapping of its own, given back when the open ends, instead of heap
/// memory, already faulted in, that the context's allocations reuse.
fn parse_part(text: &[u8], from: usize) -> ParsedPart {
    let whole = simdutf8::basic::from_utf8(text).ok();
    let lines = read_lines(text, 0, text.len(), whole.is_some(), 2, |l, a, b| parse_line(whole, l, a, b));
    ParsedPart { from, to: from + text.len(), utf8: whole.is_some(), lines }
}

/// The first half's part: its lines from the start of the trimmed text up to its last `\n`
/// (the line across the middle is left to the walk). `None` when the half has no such line.
fn first_part(half: &[u8]) -> Option<ParsedPart> {
    let t0 = js_trim_start(half);
    let last = memchr::memrchr(b'\n', half.get(t0..)?)? + t0;
    Some(parse_part(&half[t0..last], t0))
}

/// The second half's part (the half lies at `at` in the file): its lines from its first `\n`
/// to the end of the trimmed text. `None` when the half has none.
fn second_part(half: &[u8], at: usize) -> Option<ParsedPart> {
    let from = memchr::memchr(b'\n', half)? + 1;
    let to = js_trim_end(half, from);
    if to <= from {
        return None;
    }
    grow_thread_heap((to - from) * 2);
    Some(parse_part(&half[from..to], at + from))
}

/// The entry fields of a validated current-version line: `String`s from the scan, the parsed
/// value's own `pi_json::Str`s from a parse.
pub(crate) struct EntryFields<S = String> {
    pub type_name: S,
    pub id: S,
    pub parent_id: Option<S>,
    pub timestamp: S,
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
pub(crate) fn entry_fields(text: &[u8], scanned: &pi_json::ScannedLine) -> Result<EntryFields, NotAnEntry> {
    if !scanned.is_object {
        return Err(NotAnEntry::NotObject);
    }
    let str_or_empty = |f: Field| match f {
        Field::Str(r) => pi_json::raw_str(text, r),
        _ => String::new(),
    };
    let type_name = str_or_empty(scanned.type_);
    if type_name == "session" {
        return Err(NotAnEntry::Header);
    }
    let Field::Str(id) = scanned.id else { return Err(NotAnEntry::NoId) };
    let parent_id = match scanned.parent_id {
        Field::Str(r) => Some(pi_json::raw_str(text, r)),
        _ => None,
    };
    Ok(EntryFields { type_name, id: pi_json::raw_str(text, id), parent_id, timestamp: str_or_empty(scanned.timestamp) })
}

/// [`entry_fields`] read from the line's parsed value (the top-level keys, the last of a
/// repeated key, decoded as the scan decodes them).
/// (Copies of the value's strings: those up to 24 bytes, all of Pi's, are copied without an
/// allocation.)
pub(crate) fn entry_fields_of_value(v: &Value) -> Result<EntryFields<pi_json::Str>, NotAnEntry> {
    let Value::Obj(m) = v else { return Err(NotAnEntry::NotObject) };
    let text = |key: &str| match m.get(key) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let type_name = text("type").unwrap_or_default();
    if type_name == "session" {
        return Err(NotAnEntry::Header);
    }
    let Some(id) = text("id") else { return Err(NotAnEntry::NoId) };
    Ok(EntryFields { type_name, id, parent_id: text("parentId"), timestamp: text("timestamp").unwrap_or_default() })
}

/// How a malformed whole line (ended by `\n`) is reported, as the loader reports it.
pub(super) fn whole_line_diag(text: &[u8], e: &pi_json::JsonError) -> (DiagnosticKind, String) {
    bad_line_diag(text, None, e)
}

/// How a line that is not JSON is reported: only NUL bytes, the file's last line with no line end
/// after it (`torn_at`: its offset), or malformed.
pub(super) fn bad_line_diag(line: &[u8], torn_at: Option<usize>, e: &pi_json::JsonError) -> (DiagnosticKind, String) {
    if line.iter().all(|&b| b == 0 || b == b'\r') {
        (
            DiagnosticKind::NulBytes,
            format!("{} NUL bytes (a tail left by a power cut?); skipped, file untouched", line.len()),
        )
    } else if let Some(at) = torn_at {
        (
            DiagnosticKind::TornTail,
            format!(
                "incomplete last line ({} bytes at offset {at}): an append in progress or torn by a crash; skipped, file untouched",
                line.len()
            ),
        )
    } else {
        (DiagnosticKind::Malformed, format!("not valid JSON ({e}); skipped, as Pi does"))
    }
}

impl Header {
    /// The header line's fields (the caller has checked its type and string id).
    pub(super) fn of_value(v: &Value) -> Header {
        Header {
            id: v.str_field("id").unwrap_or_default().to_string(),
            version: v.num_field("version"),
            timestamp: v.str_field("timestamp").map(str::to_string),
            cwd: v.str_field("cwd").map(str::to_string),
            parent_session: v.str_field("parentSession").map(str::to_string),
        }
    }
}

impl Session {
    /// Opens a session file, read-only. Rejects what is not a regular file before reading it.
    pub fn open(path: &Path) -> Result<Session, OpenError> {
        Session::open_leaving_in_file(path, LEFT_IN_FILE_MIN_BYTES)
    }

    /// [`Session::open`], with files from `min_bytes` on read back from the file after the open
    /// (for tests of that reading on files smaller than [`LEFT_IN_FILE_MIN_BYTES`]; below
    /// [`EAGER_PARSE_MAX_BYTES`] a file keeps its bytes whatever `min_bytes` says).
    #[doc(hidden)]
    pub fn open_leaving_in_file(path: &Path, min_bytes: usize) -> Result<Session, OpenError> {
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
        // A file parsed whole at open on two threads is parsed by the threads that read it
        // (`FileBytes::read_then`), each half as soon as it is read.
        let len = meta.len() as usize;
        let io = |e| OpenError::Io { path: p.clone(), source: e };
        // A big file is indexed in windows and never held whole (see `windows`).
        #[cfg(unix)]
        if len >= min_bytes.max(EAGER_PARSE_MAX_BYTES + 1) {
            let file = std::fs::File::open(path).map_err(io)?;
            if let Ok(s) = Session::open_in_windows(file, len, WINDOW_BYTES, PARALLEL_MIN_BYTES) {
                return Ok(s);
            }
        }
        let (buf, file, parts) = if (PARALLEL_PARSE_MIN_BYTES..=EAGER_PARSE_MAX_BYTES).contains(&len) {
            FileBytes::read_then(path, first_part, second_part).map(|(b, parts)| (b, None, parts)).map_err(io)?
        } else {
            FileBytes::read_keeping_file(path).map(|(b, f)| (b, Some(f), None)).map_err(io)?
        };
        let parts = parts.and_then(|(a, b)| a.zip(b));
        let mut session = Session::from_file_bytes(
            buf,
            &mut CounterIds { prefix: 'm', next: 0 },
            PARALLEL_MIN_BYTES,
            PARALLEL_PARSE_MIN_BYTES,
            parts,
        );
        // A big file's bytes go back to the file once indexed: its entries are parsed on first
        // use, from the file (the page cache holds the bytes, not the app). Small files, parsed
        // whole at open, migrated ones (their values are the migration's) and files without a
        // header (their first line may follow whitespace, not a line end) keep theirs.
        #[cfg(unix)]
        if let Some(file) = file {
            let left = session.buf.len() >= min_bytes.max(EAGER_PARSE_MAX_BYTES + 1);
            if left && session.header.is_some() && !session.migrated {
                session.buf.leave_in_file(file);
            }
        }
        #[cfg(not(unix))]
        drop(file);
        Ok(session)
    }

    /// The open of a big file in windows of `window` bytes, each of `parallel_min` bytes or more
    /// scanned on two threads, on a file of any size (for the tests that compare it with the
    /// whole-file open); `None` when the whole-file open must take the file.
    #[doc(hidden)]
    #[cfg(unix)]
    pub fn open_in_windows_of(path: &Path, window: usize, parallel_min: usize) -> Option<Session> {
        let file = std::fs::File::open(path).ok()?;
        let len = file.metadata().ok()?.len() as usize;
        Session::open_in_windows(file, len, window, parallel_min).ok()
    }

    /// Loads from bytes. The ids a v1 migration needs are deterministic (`m0000001`, ...), so
    /// the same legacy file gives the same ids every time it is opened or indexed (search hits
    /// and remembered leaves stay valid); Arbor never writes them back into that file.
    pub fn from_bytes(buf: Vec<u8>) -> Session {
        Session::load_bytes(buf.into())
    }

    /// [`Session::open`]'s and [`Session::from_bytes`]'s load: the same deterministic ids (the
    /// library indexes with one, the app opens with the other) and the default splits.
    fn load_bytes(buf: FileBytes) -> Session {
        Session::from_file_bytes(
            buf,
            &mut CounterIds { prefix: 'm', next: 0 },
            PARALLEL_MIN_BYTES,
            PARALLEL_PARSE_MIN_BYTES,
            None,
        )
    }

    /// [`Session::open`]'s load of a file read in two parts, the first `h` bytes and the rest,
    /// each parsed as the thread that read it parses it (tests run it on any bytes and any
    /// split; `open` reads in parts only files of 1 to 8 MiB).
    #[doc(hidden)]
    pub fn from_bytes_in_parts(buf: Vec<u8>, h: usize) -> Session {
        let h = h.min(buf.len());
        let parts = first_part(&buf[..h]).zip(second_part(&buf[h..], h));
        Session::from_file_bytes(
            buf.into(),
            &mut CounterIds { prefix: 'm', next: 0 },
            PARALLEL_MIN_BYTES,
            PARALLEL_PARSE_MIN_BYTES,
            parts,
        )
    }

    /// Loads from bytes, drawing any ids a v1 migration needs from `ids`.
    pub fn from_bytes_with_ids(buf: Vec<u8>, ids: &mut dyn IdSource) -> Session {
        Session::from_bytes_with(buf, ids, PARALLEL_MIN_BYTES)
    }

    /// Like [`Session::from_bytes_with_ids`]; files of `parallel_min` bytes or more have their
    /// second half validated on another thread (the result is the same; tests force it with 0).
    pub fn from_bytes_with(buf: Vec<u8>, ids: &mut dyn IdSource, parallel_min: usize) -> Session {
        Session::from_bytes_with_splits(buf, ids, parallel_min, PARALLEL_PARSE_MIN_BYTES)
    }

    /// Like [`Session::from_bytes_with`]; a file parsed whole at open of `parse_parallel_min`
    /// bytes or more has its second half parsed on another thread (the result is the same; tests
    /// force it with 0).
    #[doc(hidden)]
    pub fn from_bytes_with_splits(
        buf: Vec<u8>,
        ids: &mut dyn IdSource,
        parallel_min: usize,
        parse_parallel_min: usize,
    ) -> Session {
        Session::from_file_bytes(buf.into(), ids, parallel_min, parse_parallel_min, None)
    }

    /// The load; `parts` are the file's two halves' lines as parsed by the threads that read
    /// them, if they were (see [`Session::open`]).
    fn from_file_bytes(
        buf: FileBytes,
        ids: &mut dyn IdSource,
        parallel_min: usize,
        parse_parallel_min: usize,
        parts: Option<(ParsedPart, ParsedPart)>,
    ) -> Session {
        let mut session = Session::with_bytes(buf);
        session.load(ids, parallel_min, parse_parallel_min, parts);
        if session.buf.len() <= EAGER_PARSE_MAX_BYTES {
            for i in 0..session.entries.len() {
                session.value(i);
            }
        }
        session
    }

    /// A session with `buf` and nothing loaded yet.
    pub(super) fn with_bytes(buf: FileBytes) -> Session {
        Session {
            buf,
            header: None,
            entries: Vec::new(),
            kinds: Vec::new(),
            values: Vec::new(),
            roles: Vec::new(),
            role_codes: Vec::new(),
            by_id: FxHashMap::default(),
            parent: Vec::new(),
            diagnostics: Vec::new(),
            labels: Vec::new(),
            label_at: FxHashMap::default(),
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
        }
    }

    fn load(
        &mut self,
        ids: &mut dyn IdSource,
        parallel_min: usize,
        parse_parallel_min: usize,
        parts: Option<(ParsedPart, ParsedPart)>,
    ) {
        let bytes = std::mem::take(&mut self.buf);
        let buf = bytes.as_read();
        self.ends_with_newline = buf.last() == Some(&b'\n');
        let t0 = js_trim_start(buf);
        let t1 = js_trim_end(buf, t0);
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
        // Files parsed whole at open (see EAGER_PARSE_MAX_BYTES) are read in one pass: each line's
        // parse both validates it and gives its fields, so the scan is not run first. A line the
        // parser refuses goes to the scan as before, which decides (the parser refuses nesting
        // past MAX_DEPTH, which the scan and Pi accept). Big files are scanned, not parsed.
        let eager = buf.len() <= EAGER_PARSE_MAX_BYTES && split.is_none();
        // Halves parsed by the threads that read them count when they cover the trimmed text
        // from its start to its end, with the line between them left to this walk.
        let parts = parts.filter(|(a, b)| eager && a.from == t0 && a.to <= b.from && b.from <= t1 && b.to == t1);
        // The file's text is checked as UTF-8 once: by the halves' threads and here for the
        // line between them, or here whole.
        let (whole, all_utf8) = match &parts {
            Some((a, b)) => (None, a.utf8 && b.utf8 && simdutf8::basic::from_utf8(&buf[a.to..b.from]).is_ok()),
            None => {
                let whole = simdutf8::basic::from_utf8(buf).ok();
                (whole, whole.is_some())
            }
        };
        // And from PARALLEL_PARSE_MIN_BYTES on, the second half's lines are parsed on a second
        // thread, taken in order as the scan's results are above.
        let parse_split = if eager && parts.is_none() && t1 > t0 && t1 - t0 >= parse_parallel_min {
            let mid = t0 + (t1 - t0) / 2;
            memchr::memchr(b'\n', &buf[mid..t1]).map(|o| mid + o)
        } else {
            None
        };
        let bufr: &[u8] = buf;
        std::thread::scope(|scope| {
            let mut worker = split.map(|sp| {
                scope.spawn(move || read_lines(bufr, sp + 1, t1, all_utf8, 2, |l, _, _| pi_json::scan_line_fast(l)))
            });
            let mut pre: Option<std::vec::IntoIter<Result<pi_json::ScannedLine, pi_json::JsonError>>> = None;
            let mut parse_worker = parse_split.map(|sp| {
                scope.spawn(move || {
                    grow_thread_heap((t1 - sp) * 2);
                    read_lines(bufr, sp + 1, t1, all_utf8, 1, |l, a, b| parse_line(whole, l, a, b))
                })
            });
            let mut pre_parsed: Option<std::vec::IntoIter<Result<(Value, ValueHead), pi_json::JsonError>>> = None;
            // The halves parsed by their readers: the first's lines end by `first_to`, the
            // second's start from `second_from`; the line between is parsed here.
            let (first_to, second_from) = parts.as_ref().map(|(a, b)| (a.to, b.from)).unzip();
            let (mut first_lines, mut second_lines) = match parts {
                Some((a, b)) => (a.lines.into_iter(), b.lines.into_iter()),
                None => (Vec::new().into_iter(), Vec::new().into_iter()),
            };
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
                let text = self.utf8_text(line, all_utf8, line_no, line_start);
                let text: &[u8] = &text;
                let mut parsed: Option<(Value, ValueHead)> = None;
                let result = match split {
                    Some(sp) if line_start > sp => {
                        if pre.is_none() {
                            // A panicked worker leaves nothing: every line is then scanned here.
                            let done = worker.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
                            pre = Some(done.into_iter());
                        }
                        pre.as_mut().and_then(Iterator::next).unwrap_or_else(|| pi_json::scan_line_fast(text)).map(Some)
                    }
                    _ if eager => match match parse_split {
                        Some(sp) if line_start > sp => {
                            if pre_parsed.is_none() {
                                // A panicked worker leaves nothing: every line is then parsed here.
                                let done =
                                    parse_worker.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
                                pre_parsed = Some(done.into_iter());
                            }
                            pre_parsed
                                .as_mut()
                                .and_then(Iterator::next)
                                .unwrap_or_else(|| parse_line(whole, text, line_start, nl))
                        }
                        // (An exhausted part, which does not happen, leaves its lines to this walk.)
                        _ if first_to.is_some_and(|to| nl <= to) => {
                            first_lines.next().unwrap_or_else(|| parse_line(whole, text, line_start, nl))
                        }
                        _ if second_from.is_some_and(|from| line_start >= from) => {
                            second_lines.next().unwrap_or_else(|| parse_line(whole, text, line_start, nl))
                        }
                        _ => parse_line(whole, text, line_start, nl),
                    } {
                        Ok(v) => {
                            parsed = Some(v);
                            Ok(None)
                        }
                        Err(_) => pi_json::scan_line_fast(text).map(Some),
                    },
                    _ => pi_json::scan_line_fast(text).map(Some),
                };
                let scanned = match result {
                    Ok(sc) => sc,
                    Err(e) => {
                        self.malformed_lines.push(line_no);
                        let torn = is_last && !self.ends_with_newline_at(t1, buf);
                        let (kind, msg) = bad_line_diag(line, torn.then_some(line_start), &e);
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
                    let v = parsed.take().map_or_else(|| pi_json::parse_bytes(text).unwrap_or(Value::Null), |(v, _)| v);
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
                    self.header = Some(Header::of_value(&v));
                    let ver = version.unwrap_or(1.0);
                    if ver < CURRENT_VERSION as f64 {
                        legacy = true;
                        self.read_only = Some(ReadOnly::Legacy { version: if ver < 2.0 { 1 } else { 2 } });
                        legacy_values.push((line_no, line_start as u64, nl as u64, v));
                    } else if ver > CURRENT_VERSION as f64 {
                        self.read_only = Some(ReadOnly::Newer { version: pi_json::number_to_string(ver) });
                    }
                    if nl >= t1 {
                        break;
                    }
                    continue;
                }
                if legacy {
                    let v = parsed.take().map_or_else(|| pi_json::parse_bytes(text).unwrap_or(Value::Null), |(v, _)| v);
                    legacy_values.push((line_no, line_start as u64, nl as u64, v));
                    if nl >= t1 {
                        break;
                    }
                    continue;
                }
                let unterminated = is_last && !self.ends_with_newline_at(t1, buf);
                match (parsed, scanned) {
                    (Some((v, head)), _) => self.add_entry_value(v, head, line_start, nl, line_no, unterminated),
                    (None, Some(sc)) => self.add_entry_line(text, &sc, line_start, nl, line_no, unterminated),
                    (None, None) => {}
                }
                if nl >= t1 {
                    break;
                }
            }
        });
        self.lines_seen = line_no;
        self.text_end = t1;
        self.buf = bytes;
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
    pub(super) fn add_entry_line(
        &mut self,
        text: &[u8],
        scanned: &pi_json::ScannedLine,
        line_start: usize,
        nl: usize,
        line_no: usize,
        unterminated: bool,
    ) {
        let Some(EntryFields { type_name, id, parent_id, timestamp }) =
            self.entry_or_diag(entry_fields(text, scanned), line_start, line_no, unterminated)
        else {
            return;
        };
        self.push_entry(
            line_start as u64,
            nl as u64,
            line_no,
            type_name.into(),
            id.into(),
            parent_id.map(Into::into),
            timestamp.into(),
            None,
        );
        match scanned.role {
            Some(pi_json::Field::Str(r)) => match pi_json::raw_str_borrowed(text, r) {
                Some(name) => self.set_role(name),
                None => self.set_role(&pi_json::raw_str(text, r)),
            },
            // No message object, no role in it, or a role that is not a string.
            Some(_) => self.set_role_absent(),
            None => {}
        }
    }

    /// Records the last entry's `message.role` (every message entry's is read at open, by the
    /// scan or the parse, so [`Session::role`] needs no reader of its own): a common one as its
    /// code, another one as its text.
    fn set_role(&mut self, name: &str) {
        match ROLE_NAMES.iter().position(|n| *n == name) {
            Some(k) => {
                if let Some(c) = self.role_codes.last_mut() {
                    *c = k as u8 + 1;
                }
            }
            None => {
                if let Some(cell) = self.roles.last() {
                    let _ = cell.set(Some(name.into()));
                }
            }
        }
    }

    fn set_role_absent(&mut self) {
        if let Some(c) = self.role_codes.last_mut() {
            *c = ROLE_ABSENT;
        }
    }

    /// [`Session::add_entry_line`] for a line parsed whole (the single pass of a small file's
    /// open): the same entry, diagnostics and role, with the value kept.
    fn add_entry_value(
        &mut self,
        v: Value,
        head: ValueHead,
        line_start: usize,
        nl: usize,
        line_no: usize,
        unterminated: bool,
    ) {
        let Some(EntryFields { type_name, id, parent_id, timestamp }) =
            self.entry_or_diag(head.fields, line_start, line_no, unterminated)
        else {
            return;
        };
        self.push_entry(line_start as u64, nl as u64, line_no, type_name, id, parent_id, timestamp, Some(v));
        match head.role {
            Some(Ok(code)) => {
                if let Some(c) = self.role_codes.last_mut() {
                    *c = code;
                }
            }
            Some(Err(name)) => self.set_role(&name),
            None => self.set_role_absent(),
        }
    }

    /// The entry's fields, or the diagnostic that says why the line is not an entry (and the
    /// one for an unterminated last line).
    fn entry_or_diag<S>(
        &mut self,
        fields: Result<EntryFields<S>, NotAnEntry>,
        line_start: usize,
        line_no: usize,
        unterminated: bool,
    ) -> Option<EntryFields<S>> {
        let f = match fields {
            Ok(f) => f,
            Err(NotAnEntry::NotObject) => {
                self.diag(
                    line_no,
                    line_start,
                    DiagnosticKind::InvalidEntry,
                    "valid JSON but not an object; skipped".into(),
                );
                return None;
            }
            Err(NotAnEntry::Header) => {
                self.diag(
                    line_no,
                    line_start,
                    DiagnosticKind::ExtraHeader,
                    "a repeated session header; ignored, as Pi does".into(),
                );
                return None;
            }
            Err(NotAnEntry::NoId) => {
                self.diag(
                    line_no,
                    line_start,
                    DiagnosticKind::InvalidEntry,
                    "an object without a string id; skipped".into(),
                );
                return None;
            }
        };
        if unterminated {
            self.diag(
                line_no,
                line_start,
                DiagnosticKind::Unterminated,
                "the last line has no trailing newline; Arbor's next append starts with one".into(),
            );
        }
        Some(f)
    }

    fn ends_with_newline_at(&self, t1: usize, buf: &[u8]) -> bool {
        // The trimmed text ends at t1; the last line is terminated if a '\n' follows it.
        buf[t1..].contains(&b'\n')
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_entry(
        &mut self,
        start: u64,
        end: u64,
        line: usize,
        type_name: pi_json::Str,
        id: pi_json::Str,
        parent_id: Option<pi_json::Str>,
        timestamp: pi_json::Str,
        value: Option<Value>,
    ) {
        let idx = self.entries.len() as u32;
        let kind = Kind::from_type(&type_name);
        self.kinds.push(kind);
        self.entries.push(Entry { start, end, line: line as u32, kind, type_name, id, parent_id, timestamp });
        let cell = OnceLock::new();
        if let Some(v) = value {
            let _ = cell.set(v);
        }
        self.values.push(cell);
        self.roles.push(OnceLock::new());
        self.role_codes.push(0);
        let _ = idx;
    }

    pub(super) fn diag(&mut self, line: usize, offset: usize, kind: DiagnosticKind, message: String) {
        self.diagnostics.push(Diagnostic { line, offset: offset as u64, kind, message });
    }

    /// A line as the text Pi reads: itself when it is UTF-8 (`all_utf8`: the whole buffer is),
    /// else its lossy decoding, reported as a diagnostic. Shared by the loader and
    /// [`Session::extend_from_file`].
    pub(super) fn utf8_text<'l>(
        &mut self,
        line: &'l [u8],
        all_utf8: bool,
        line_no: usize,
        line_start: usize,
    ) -> std::borrow::Cow<'l, [u8]> {
        if all_utf8 || std::str::from_utf8(line).is_ok() {
            return std::borrow::Cow::Borrowed(line);
        }
        self.diag(
            line_no,
            line_start,
            DiagnosticKind::InvalidUtf8,
            "invalid UTF-8 in this line; decoded with U+FFFD replacement characters, as Pi does".into(),
        );
        std::borrow::Cow::Owned(String::from_utf8_lossy(line).into_owned().into_bytes())
    }

    /// Builds the id index, parents, labels and name; detects duplicates, orphans and cycles.
    pub(super) fn finish_index(&mut self) {
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
            let msg = format!(
                "id {} repeats line {}; the later entry wins, as in Pi",
                e.id, self.entries[prev as usize].line
            );
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
                let msg =
                    format!("the parentId chain through {} loops; Arbor stops the walk here (Pi would hang)", e.id);
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
    pub(super) fn apply_label_or_name(&mut self, i: usize) {
        match self.entries[i].kind {
            Kind::Label => {
                let v = self.value(i);
                let target = v.str_field("targetId").unwrap_or("").to_string();
                let text = match v.get("label") {
                    Some(Value::Str(s)) if !s.is_empty() => Some(s.to_string()),
                    Some(l) if l.truthy() => Some(pi_json::to_string(l)),
                    _ => None,
                };
                let ts = self.entries[i].timestamp.to_string();
                match (text, self.label_at.get(target.as_str()).copied()) {
                    (Some(l), Some(k)) => self.labels[k] = (target, l, ts),
                    (Some(l), None) => {
                        self.label_at.insert(target.as_str().into(), self.labels.len());
                        self.labels.push((target, l, ts));
                    }
                    (None, Some(k)) => {
                        self.labels.remove(k);
                        self.label_at.remove(target.as_str());
                        // Rare (a label cleared): the labels after it moved up by one.
                        for (t, _, _) in &self.labels[k..] {
                            if let Some(at) = self.label_at.get_mut(t.as_str()) {
                                *at -= 1;
                            }
                        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts of an ordinary file cover its trimmed text with one line between them, so the
    /// open takes them (a part the load refuses is parsed again by the walk: right, but slow).
    #[test]
    fn the_parts_of_a_file_cover_its_text_around_one_line() {
        let line = r#"{"type":"message","id":"m","parentId":null,"timestamp":"t","message":{"role":"user"}}"#;
        let text = format!(" \n{}\n\n", [line; 40].join("\n"));
        let buf = text.as_bytes();
        let (t0, t1) = (js_trim_start(buf), js_trim_end(buf, js_trim_start(buf)));
        for h in [buf.len() / 2, buf.len() / 3, t0 + line.len() + 1] {
            let a = first_part(&buf[..h]).expect("the first part");
            let b = second_part(&buf[h..], h).expect("the second part");
            assert_eq!((a.from, b.to), (t0, t1), "split at {h}");
            assert_eq!(memchr::memchr_iter(b'\n', &buf[a.to..b.from]).count(), 2, "one line between, split at {h}");
            assert_eq!(a.lines.len() + 1 + b.lines.len(), 40, "split at {h}");
            assert!(a.utf8 && b.utf8 && a.lines.iter().chain(&b.lines).all(Result::is_ok));
        }
    }
}
