//! Streamed indexing of big files: windows through the engine's chunk scanner (the loader's
//! line rules on a byte range), with memory bounded by the window, not the file. Phase 1 reads a
//! big file in two halves at once; a full read (both phases) has one thread read, scan and parse
//! while the calling thread writes.
use super::catalog::{fresh_file_row, CatalogOut};
use super::entry_rows::{EntryInsert, EntryRows, TextBatch, Touched};
use super::facts::{session_facts, write_forget_open, write_session_facts, SessionFacts};
use super::options::IndexOptions;
use super::row::{self, hashes, read_full, stat, Row, Stat};
use super::update::{Change, FileUpdate};
use crate::analyze::{self, Outcome};
use crate::db::{classify_err, now};
use crate::error::LibError;
use pi_json::Value;
use rusqlite::{params, Connection};
use session_engine::chunk::{CatalogEntry, ChunkEntry, Role, Scan};
use session_engine::session::Kind;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// What a streamed read of a file found besides its entries.
struct StreamRead {
    /// The session facts gathered by the sink, `bad_lines` and `offset`.
    r: Row,
    header: Option<session_engine::session::Header>,
    valid: i64,
    unterminated: bool,
}

/// Takes each window's entries: (the facts gathered so far, the window, the window's offset in
/// the file, its entries).
type WindowSink<'a, E = ChunkEntry> = dyn FnMut(&mut Row, &[u8], u64, &[E]) -> Result<(), LibError> + 'a;

/// The entries a streamed read hands its sink: the full-text pass's ([`ChunkEntry`], every field
/// decoded) or the catalog's ([`CatalogEntry`], nothing copied out of the line).
trait WindowEntry: Sized {
    fn scan(chunk: &[u8], at_eof: bool, walk: bool) -> Scan<Self>;
    fn start(&self) -> usize;
}

impl WindowEntry for ChunkEntry {
    fn scan(chunk: &[u8], at_eof: bool, _walk: bool) -> Scan<Self> {
        session_engine::chunk::scan(chunk, at_eof)
    }
    fn start(&self) -> usize {
        self.start
    }
}

impl WindowEntry for CatalogEntry {
    fn scan(chunk: &[u8], at_eof: bool, walk: bool) -> Scan<Self> {
        session_engine::chunk::scan_catalog(chunk, at_eof, walk)
    }
    fn start(&self) -> usize {
        self.start
    }
}

/// Read a file in windows through the engine's chunk scanner (the loader's rules: the first JSON
/// line decides, skipped lines are counted, a torn tail is pending) and hand each window's
/// entries to `sink`. `Ok(None)`: the file needs the whole-file loader (a legacy version,
/// JavaScript whitespace such as a BOM before the header, or one line longer than
/// [`MAX_PENDING_LINE`]).
fn stream_windows(
    path: &Path,
    f: &mut File,
    id: i64,
    window: usize,
    sink: &mut WindowSink<'_>,
) -> Result<Option<StreamRead>, LibError> {
    stream_range(path, f, id, (0, u64::MAX), false, false, window, sink)
}

/// [`stream_windows`] over the bytes `from..to` of the file (`from` at a line start, `to` after a
/// `\n` or `u64::MAX` for the end of the file). `after_header`: the range follows the header
/// line (its entries count, `header` stays `None`). `walk`: lines after the first valid JSON line
/// are walked, not validated ([`session_engine::chunk::scan_catalog`]: for a catalog that phase 2's
/// full load corrects; catalog entries only).
#[allow(clippy::too_many_arguments)]
fn stream_range<E: WindowEntry>(
    path: &Path,
    f: &mut File,
    id: i64,
    (from, to): (u64, u64),
    after_header: bool,
    walk: bool,
    window: usize,
    sink: &mut WindowSink<'_, E>,
) -> Result<Option<StreamRead>, LibError> {
    use session_engine::DiagnosticKind as D;
    let mut r = Row { id, ..Default::default() };
    let mut header: Option<session_engine::session::Header> = None;
    let mut valid = if after_header { 1i64 } else { 0 };
    // `buf[..filled]` holds the bytes read and not yet consumed. The buffer keeps its length
    // once grown, and grows without zeroing (`read_to_end` reads into its spare capacity):
    // zeroing each window cost 4 % of a cold listing's CPU.
    let mut buf: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    let mut base = from; // file offset of buf[0]
    let mut read_to = from;
    let mut eof = false;
    let mut unterminated = false;
    f.seek(SeekFrom::Start(from)).map_err(|e| LibError::read(path, e))?;
    // The first read is a 32nd of the window (128 KB of the default 4 MB) and each next one
    // doubles up to the window: phase 2's writer, waiting on this reader, gets its first entries
    // sooner (on the 264 MB bench session it waited 100-140 ms for the reader, 60-80 ms since).
    // A range that fits in one window is read at once (one read and one scan: most files of a
    // cold listing), one byte more than its size so that the end of the file shows.
    let rest = f.metadata().map(|m| m.len().saturating_sub(from).min(to - from)).unwrap_or(u64::MAX);
    let mut step = if rest < window as u64 { rest as usize + 1 } else { (window / 32).max(1) };
    while !eof {
        let want = step.min(to.saturating_sub(read_to).try_into().unwrap_or(usize::MAX));
        step = (step * 2).min(window);
        let n = if buf.len() >= filled + want {
            read_full(f, &mut buf[filled..filled + want])
        } else {
            buf.truncate(filled);
            buf.reserve(want);
            (&mut *f).take(want as u64).read_to_end(&mut buf)
        }
        .map_err(|e| LibError::read(path, e))?;
        filled += n;
        read_to += n as u64;
        eof = n < want || read_to >= to;
        let scan = E::scan(&buf[..filled], eof, walk);
        let mut entries: &[E] = &scan.entries;
        if valid == 0 {
            if base == 0 && buf[..filled].first().is_some_and(|&b| b >= 0x80) {
                return Ok(None);
            }
            // the first line that is JSON decides (the loader's rule)
            let first_entry = scan.entries.first().map(E::start);
            let first_skip =
                scan.skipped.iter().filter(|(_, k)| matches!(k, D::InvalidEntry | D::ExtraHeader)).map(|x| x.0).next();
            let first = match (first_entry, first_skip) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if first.is_none() {
                r.bad_lines += scan.skipped.len() as i64; // no JSON line yet: all malformed
            }
            if let Some(at) = first {
                let end = memchr::memchr(b'\n', &buf[at..filled]).map(|o| at + o).unwrap_or(filled);
                let v = pi_json::parse_bytes(&String::from_utf8_lossy(&buf[at..end]).into_owned().into_bytes())
                    .unwrap_or(Value::Null);
                if v.str_field("type") == Some("session") && v.str_field("id").is_some() {
                    let version = v.num_field("version");
                    if version.unwrap_or(1.0) < session_engine::session::CURRENT_VERSION as f64 {
                        return Ok(None);
                    }
                    header = Some(session_engine::session::Header {
                        id: v.str_field("id").unwrap_or_default().to_string(),
                        version,
                        timestamp: v.str_field("timestamp").map(str::to_string),
                        cwd: v.str_field("cwd").map(str::to_string),
                        parent_session: v.str_field("parentSession").map(str::to_string),
                    });
                    valid = 1;
                    entries = &scan.entries[scan.entries.iter().take_while(|e| e.start() < at).count()..];
                } else {
                    // rejected, as the loader counts it: the lines skipped before it, and it
                    valid = 2;
                    r.bad_lines =
                        scan.skipped.iter().filter(|(o, k)| *o < at && matches!(k, D::Malformed | D::NulBytes)).count()
                            as i64
                            + 1;
                }
            }
        }
        if valid == 1 {
            r.bad_lines += scan.skipped.iter().filter(|(_, k)| !matches!(k, D::ExtraHeader)).count() as i64;
            if !entries.is_empty() {
                sink(&mut r, &buf[..filled], base, entries)?;
            }
        }
        unterminated = scan.unterminated;
        let consumed = if valid == 2 { filled } else { scan.consumed };
        base += consumed as u64;
        buf.copy_within(consumed..filled, 0);
        filled -= consumed;
        if !eof && filled > MAX_PENDING_LINE {
            return Ok(None); // one line longer than the window budget: load the file whole
        }
    }
    r.offset = base as i64;
    Ok(Some(StreamRead { r, header, valid, unterminated }))
}

/// The writer's side of a streamed full read. Full-text rows are inserted as the windows come
/// (bodies are not kept), with the rowids their entry rows will have; the entry rows come from
/// the reading thread at the end, with their statuses: no status updates, no reading rows back.
struct StreamRows<'c> {
    conn: &'c Connection,
    file_id: i64,
    first_rowid: i64,
    n: i64,
}

impl<'c> StreamRows<'c> {
    fn new(conn: &'c Connection, file_id: i64) -> Result<Self, LibError> {
        // inside the write transaction: nobody else inserts meanwhile
        let first_rowid: i64 = conn
            .query_row(
                "SELECT max(COALESCE((SELECT max(rowid) FROM entries), 0), COALESCE((SELECT rowid FROM fts ORDER BY rowid DESC LIMIT 1), 0)) + 1",
                [],
                |r| r.get(0),
            )
            .map_err(classify_err)?;
        Ok(StreamRows { conn, file_id, first_rowid, n: 0 })
    }

    fn add(&mut self, batch: &TextBatch) -> Result<(), LibError> {
        let mut ins_f =
            self.conn.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").map_err(classify_err)?;
        let mut ins_t = self
            .conn
            .prepare_cached("INSERT OR IGNORE INTO touched(file_id, op, path) VALUES (?1, ?2, ?3)")
            .map_err(classify_err)?;
        let mut touched = batch.touched.iter().peekable();
        for i in 0..batch.len() {
            let body = batch.body(i);
            if !body.is_empty() {
                ins_f.execute(params![self.first_rowid + self.n, body]).map_err(classify_err)?;
            }
            while let Some((_, op, p)) = touched.next_if(|t| t.0 == i) {
                ins_t.execute(params![self.file_id, op, p]).map_err(classify_err)?;
            }
            self.n += 1;
        }
        Ok(())
    }

    /// The entry rows, with the rowids their full-text rows got.
    fn finish(self, rows: EntryRows, o: &Outcome) -> Result<(), LibError> {
        let mut ins_e = EntryInsert::new(self.conn)?;
        for (seq, &status) in o.status.iter().enumerate() {
            ins_e.insert(Some(self.first_rowid + seq as i64), self.file_id, &rows.stored(seq, status))?;
        }
        Ok(())
    }
}

/// Both phases of a big file, read in windows through the engine's chunk scanner: a thread
/// reads, scans and parses (the entries' facts and full-text bodies) while this one writes. `Ok(None)`: the file needs the whole-file loader;
/// the caller loads it whole (and rolls back what was written).
pub(crate) fn stream_full(
    conn: &Connection,
    path: &Path,
    root: Option<&Path>,
    old: Option<&Row>,
    reason: Option<&'static str>,
    opts: &IndexOptions,
) -> Result<Option<FileUpdate>, LibError> {
    let mut f = row::open(path)?;
    let st = stat(&f.metadata().map_err(|e| LibError::read(path, e))?);
    let root_s = root.map(|r| r.to_string_lossy().to_string());
    let id = fresh_file_row(conn, path, root_s.as_deref(), old)?;
    let mut events = Vec::new();
    let read = {
        let mut rows = StreamRows::new(conn, id)?;
        // A hand-over, not a queue: the reader fills the next batch while the writer writes this
        // one. The writer is the slower side, so batches queued for it only held more memory
        // (each a window's bodies): with two queued, the pass held four, and the app's peak with
        // the 264 MB session open beside its indexing was 7 MB higher (362 against 354 MB).
        let (tx, rx) = std::sync::mpsc::sync_channel::<TextBatch>(0);
        // written batches go back to the reader, which refills them: no buffer is freed or
        // grown again per window
        let (back_tx, back_rx) = std::sync::mpsc::channel::<TextBatch>();
        let fr = &mut f;
        let (read, werr) = std::thread::scope(|sc| {
            let reader = sc.spawn(move || {
                let mut sf = SessionFacts::default();
                let mut entries = EntryRows::default();
                let mut touched = Touched::default();
                let read = stream_windows(path, fr, id, opts.window(), &mut |r, buf, base, es| {
                    let mut batch = back_rx.try_recv().unwrap_or_default();
                    batch.clear();
                    for e in es {
                        let v = e.value(buf);
                        session_facts(r, &mut sf, e, &v);
                        let mut f = analyze::entry_facts(e.kind, &v);
                        touched.keep_new(&mut f);
                        // before the batch takes the body: the row keeps its hash
                        let line = (base + e.start as u64, base + e.end as u64);
                        entries.push(&e.id, e.parent_id.as_deref(), &e.type_name, &e.timestamp, line, &f);
                        batch.push(&mut f);
                    }
                    r.leaf_id = es.last().map(|e| e.id.clone());
                    tx.send(batch).map_err(|_| LibError::Invalid("the index writer stopped".into()))
                });
                drop(tx); // the writer's loop ends while the statuses are computed here
                let read = read.and_then(|read| match read {
                    Some(rd) if rd.valid == 1 => {
                        let o = entries.outcome(id)?;
                        Ok(Some((rd, Some((entries, o)))))
                    }
                    other => Ok(other.map(|rd| (rd, None))),
                });
                (read, sf)
            });
            let mut werr = None;
            for batch in rx.iter() {
                if let Err(e) = rows.add(&batch) {
                    werr = Some(e);
                    break;
                }
                let _ = back_tx.send(batch);
            }
            drop(rx); // a reader blocked on a full channel gets an error and stops
            let read = reader.join().unwrap_or_else(|_| {
                (Err(LibError::Invalid("the file reader panicked".into())), SessionFacts::default())
            });
            (read, werr)
        });
        if let Some(e) = werr {
            return Err(e);
        }
        let (read, sf) = read;
        let Some((mut read, entries)) = read? else { return Ok(None) };
        if let Some((entries, (o, forget))) = entries {
            // from memory: reading them back sorted the file's every row by rowid
            events = entries.events(&o.status);
            rows.finish(entries, &o)?;
            read.r.ctx_usage = o.ctx_usage;
            read.r.ctx_trailing = o.ctx_trailing;
            read.r.branch_count = o.branches;
            read.r.forget_cost = Some(forget.cost);
            read.r.forget_compactions = Some(forget.compactions);
            write_session_facts(conn, &read.r, &sf)?;
            write_forget_open(conn, id, &forget.open)?;
        }
        read
    };
    let StreamRead { r, header, valid, unterminated } = read;
    let base = r.offset as u64;
    let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| LibError::read(path, e))?;
    let hd = header.as_ref();
    let created = hd.and_then(|h| h.timestamp.clone());
    let created_ms = created.as_deref().and_then(session_engine::time::parse_iso_ms);
    conn.prepare_cached(
        "UPDATE files SET root = COALESCE(?2, root), dev=?3, ino=?4, size=?5, mtime_ns=?6, offset=?7, head_hash=?8, tail_hash=?9,
           valid=?10, header_id=?11, cwd=?12, created=?13, created_ms=?14, parent_session=?15, version=?16,
           modified_ms=COALESCE(modified_ms, ?14), bad_lines=?17, ctx_usage=?18, ctx_trailing=?19, branch_count=?20,
           indexed_ms=?21, fts_done=1, open_tail=?22, migrated=0
         WHERE id = ?1",
    )
    .and_then(|mut s| {
        s.execute(params![
            id,
            root_s,
            st.dev,
            st.ino,
            st.size.max(r.offset),
            st.mtime_ns,
            r.offset,
            h,
            t,
            valid,
            hd.map(|h| h.id.clone()),
            hd.and_then(|h| h.cwd.clone()),
            created,
            created_ms,
            hd.and_then(|h| h.parent_session.clone()),
            hd.and_then(|h| h.version),
            r.bad_lines,
            r.ctx_usage,
            r.ctx_trailing,
            r.branch_count,
            now(),
            unterminated,
        ])
    })
    .map_err(classify_err)?;
    Ok(Some(FileUpdate {
        change: if old.is_none() { Change::New } else { Change::Reindexed },
        session_id: hd.map(|h| h.id.clone()),
        new_entries: events,
        bytes_read: base,
        reason,
    }))
}

/// Phase-1 facts of a streamed file, window by window (the same facts as [`analyze::catalog`]
/// on the whole file): counts, `modified`, the first user message, the name and the last model.
/// Message lines are walked structurally ([`pi_json::message_head`]); a DOM is built only for
/// the first user message, `session_info` lines, and the last model-bearing entry of a window.
#[derive(Default)]
struct StreamCatalog {
    /// The last `session_info`'s name, when one was seen (`Some(None)`: cleared).
    name: Option<Option<String>>,
    model: Option<String>,
}

impl StreamCatalog {
    fn add(&mut self, r: &mut Row, buf: &[u8], entries: &[CatalogEntry]) {
        for e in entries {
            r.entry_count += 1;
            match e.kind {
                Kind::Message => {
                    r.message_count += 1;
                    // taken by the chunk scanner's walk, or walked here
                    let head = e
                        .message
                        .or_else(|| {
                            pi_json::message_head(&e.text(buf))
                                .map(|(role, c, t)| (role.as_deref().map(Role::of), c, t))
                        })
                        .or_else(|| {
                            let v = e.value(buf);
                            v.get("message").map(|m| {
                                (
                                    m.str_field("role").map(Role::of),
                                    m.get("content").is_some(),
                                    m.num_field("timestamp"),
                                )
                            })
                        });
                    let Some((role, has_content, ts)) = head else { continue };
                    if !has_content || !matches!(role, Some(Role::User | Role::Assistant)) {
                        continue;
                    }
                    let t = ts.or_else(|| session_engine::time::parse_iso_ms(&e.timestamp(buf)).map(|x| x as f64));
                    if let Some(t) = t.filter(|t| *t > 0.0) {
                        r.modified_ms = Some(r.modified_ms.map_or(t as i64, |x| x.max(t as i64)));
                    }
                    if r.first_message.is_none() && role == Some(Role::User) {
                        let v = e.value(buf);
                        let t = v
                            .get("message")
                            .and_then(|m| m.get("content"))
                            .map(analyze::text_content)
                            .unwrap_or_default();
                        if !t.is_empty() {
                            r.first_message = Some(analyze::cut(&t, analyze::MAX_FIRST_MESSAGE).to_string());
                        }
                    }
                }
                Kind::Compaction => r.compaction_count += 1,
                Kind::SessionInfo => {
                    let v = e.value(buf);
                    self.name =
                        Some(v.str_field("name").map(|s| analyze::js_trim(s).to_string()).filter(|s| !s.is_empty()));
                }
                _ => {}
            }
        }
        // the last model in file order: walk this window back to its last model-bearing entry
        for e in entries.iter().rev() {
            let is_candidate = match e.kind {
                Kind::ModelChange => true,
                Kind::Message => match &e.message {
                    Some((role, _, _)) => *role == Some(Role::Assistant),
                    None => match pi_json::message_head(&e.text(buf)) {
                        Some((role, _, _)) => role.as_deref() == Some("assistant"),
                        None => true,
                    },
                },
                _ => false,
            };
            if !is_candidate {
                continue;
            }
            let v = e.value(buf);
            let found = match e.kind {
                Kind::ModelChange => v.str_field("provider").zip(v.str_field("modelId")),
                _ => v
                    .get("message")
                    .filter(|m| m.str_field("role") == Some("assistant"))
                    .and_then(|m| m.str_field("provider").zip(m.str_field("model"))),
            };
            if let Some((p, m)) = found {
                self.model = Some(format!("{p}/{m}"));
                break;
            }
        }
        r.leaf_id = entries.last().map(|e| e.id(buf)).or(r.leaf_id.take());
    }
}

/// The offset of the first line start at or after `at` (`None`: no `\n` within 1 MB of it).
fn line_start_near(f: &mut File, at: u64) -> std::io::Result<Option<u64>> {
    if at == 0 {
        return Ok(None);
    }
    // from the byte before `at`: `at` itself may be a line start
    f.seek(SeekFrom::Start(at - 1))?;
    let mut buf = vec![0u8; 1 << 20];
    let n = read_full(f, &mut buf)?;
    Ok(memchr::memchr(b'\n', &buf[..n]).map(|i| at + i as u64))
}

/// The facts of a file read in two halves, in file order: counts add up, the later half's name,
/// model, leaf, offset and tail win, the earlier half's first message and header.
fn join_halves(
    (a, ca): (StreamRead, StreamCatalog),
    (b, cb): (StreamRead, StreamCatalog),
) -> (StreamRead, StreamCatalog) {
    let (mut r, rb) = (a.r, b.r);
    r.entry_count += rb.entry_count;
    r.message_count += rb.message_count;
    r.compaction_count += rb.compaction_count;
    r.bad_lines += rb.bad_lines;
    r.modified_ms = match (r.modified_ms, rb.modified_ms) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    r.first_message = r.first_message.or(rb.first_message);
    r.leaf_id = rb.leaf_id.or(r.leaf_id);
    r.offset = rb.offset;
    let cat = StreamCatalog { name: cb.name.or(ca.name), model: cb.model.or(ca.model) };
    (StreamRead { r, header: a.header, valid: 1, unterminated: b.unterminated }, cat)
}

/// Phase 1 of a file (without the database, on a worker thread): Pi's picker facts and the
/// tracking info from a streamed read, with memory bounded by the window (a file within one
/// window: one read, one scan). `Ok(None)`: the file needs the whole-file loader.
pub(crate) fn catalog_stream(path: &Path, opts: &IndexOptions) -> Result<Option<CatalogOut>, LibError> {
    let window = opts.window();
    let mut f = row::open(path)?;
    let st = stat(&f.metadata().map_err(|e| LibError::read(path, e))?);
    // Two threads: the second half (from a line start near the middle) is read as lines after
    // the header, while this thread reads the first half; the halves' facts are then joined in
    // file order. A first half without an accepted header is read again whole, in one pass.
    // A file phase 2 loads whole has its lines walked here, not validated: that load finds a
    // malformed line the walk took for an entry and corrects the row (`fulltext_file`). A big
    // file is streamed again by phase 2, which rewrites its facts, but keeps the name and model
    // it does not see again: its lines are validated here.
    let walk = (st.size as u64) < opts.stream_from;
    let mid = if st.size as u64 >= 2 * window as u64 {
        line_start_near(&mut f, st.size as u64 / 2).map_err(|e| LibError::read(path, e))?
    } else {
        None
    };
    let halves = match mid {
        Some(mid) if st.size as u64 >= 2 * window as u64 => {
            let mut f2 = row::open(path)?;
            let (mut c1, mut c2) = (StreamCatalog::default(), StreamCatalog::default());
            let (first, second) = std::thread::scope(|sc| {
                let second = sc.spawn(|| {
                    stream_range(path, &mut f2, 0, (mid, u64::MAX), true, walk, window, &mut |r, buf, _, es| {
                        c2.add(r, buf, es);
                        Ok(())
                    })
                });
                let first = stream_range(path, &mut f, 0, (0, mid), false, walk, window, &mut |r, buf, _, es| {
                    c1.add(r, buf, es);
                    Ok(())
                });
                (first, second.join().unwrap_or_else(|_| Err(LibError::Invalid("the file reader panicked".into()))))
            });
            match (first?, second?) {
                (Some(a), Some(b)) if a.valid == 1 => Some(join_halves((a, c1), (b, c2))),
                (None, _) | (_, None) => return Ok(None),
                _ => None,
            }
        }
        _ => None,
    };
    let (read, cat) = match halves {
        Some(x) => x,
        None => {
            let mut cat = StreamCatalog::default();
            let Some(read) =
                stream_range(path, &mut f, 0, (0, u64::MAX), false, walk, window, &mut |r, buf, _, es| {
                    cat.add(r, buf, es);
                    Ok(())
                })?
            else {
                return Ok(None);
            };
            (read, cat)
        }
    };
    let StreamRead { r, header, valid, unterminated } = read;
    let (head_hash, tail_hash) = hashes(&mut f, r.offset as u64).map_err(|e| LibError::read(path, e))?;
    let bytes = st.size.max(r.offset) as u64;
    let c = if valid == 1 {
        analyze::Catalog {
            name: cat.name.flatten(),
            model: cat.model,
            first_message: r.first_message,
            modified_ms: r.modified_ms,
            entry_count: r.entry_count,
            message_count: r.message_count,
            compaction_count: r.compaction_count,
            leaf_id: r.leaf_id,
        }
    } else {
        analyze::Catalog::default()
    };
    Ok(Some(CatalogOut {
        st: Stat { size: bytes as i64, ..st },
        bytes,
        offset: r.offset as u64,
        head_hash,
        tail_hash,
        loaded_valid: valid,
        unterminated,
        migrated: false,
        bad_lines: r.bad_lines,
        header,
        cat: c,
        loaded: None,
    }))
}

/// Longest unfinished line a streamed read holds before it falls back to the whole-file loader.
pub(crate) const MAX_PENDING_LINE: usize = 256 << 20;
