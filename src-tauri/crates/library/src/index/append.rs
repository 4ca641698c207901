//! Appends: the complete lines after a file's stored offset are scanned by the engine's chunk
//! scanner and added as entry rows. A linear append at the leaf just adds `in_context` rows and
//! moves the context estimate on and the cost of forgetting by its acts; anything else (a
//! compaction, a leaf on another branch, a duplicate id) recomputes every status and that cost
//! from the stored rows, without re-reading the file.
use super::entry_rows::{loc_of, EntryInsert, EntryRow};
use super::facts::{session_facts, write_forget_open, write_session_facts, SessionFacts};
use super::row::{self, hashes, load_row, Row, Stat};
use super::update::{Change, FileUpdate, NewEntry, MAX_EVENT_ENTRIES};
use crate::analyze::{self, EntryFacts};
use crate::db::{classify_err, now};
use crate::error::LibError;
use crate::forget;
use crate::status::EntryStatus;
use rusqlite::{params, Connection};
use session_engine::session::Kind;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Index the complete lines appended after the stored offset (engine chunk rules), inside the
/// caller's write transaction.
pub(crate) fn append(conn: &Connection, path: &Path, mut r: Row, st: Stat) -> Result<FileUpdate, LibError> {
    // inside the write transaction: another writer may have indexed these bytes since the plan
    match load_row(conn, &path.to_string_lossy()).map_err(classify_err)? {
        Some(now) if now.id == r.id && now.offset == r.offset && now.size == r.size && now.fts_done == r.fts_done => {}
        _ => return Ok(FileUpdate::unchanged(r.header_id)),
    }
    let mut f = row::open(path)?;
    let start = r.offset as u64;
    f.seek(SeekFrom::Start(start)).map_err(|e| LibError::read(path, e))?;
    let mut buf = Vec::with_capacity((st.size as u64).saturating_sub(start) as usize + 1);
    f.read_to_end(&mut buf).map_err(|e| LibError::read(path, e))?;
    let read = buf.len() as u64;
    let size_now = start + read;
    let mut new_entries = Vec::new();
    if r.valid != 1 {
        // a rejected file stays rejected (Pi rejects it whole); just follow its size
        r.offset = size_now as i64;
    } else {
        let scan = session_engine::chunk::scan(&buf, true);
        r.bad_lines +=
            scan.skipped.iter().filter(|(_, k)| !matches!(k, session_engine::DiagnosticKind::ExtraHeader)).count()
                as i64;
        r.offset = (start + scan.consumed as u64) as i64;
        r.open_tail = scan.unterminated;
        if !scan.entries.is_empty() {
            new_entries = append_entries(conn, &mut r, &buf, start, &scan.entries)?;
        }
    }
    let (h, t) = hashes(&mut f, r.offset as u64).map_err(|e| LibError::read(path, e))?;
    conn.prepare_cached(
        "UPDATE files SET size=?2, mtime_ns=?3, offset=?4, head_hash=?5, tail_hash=?6, bad_lines=?7, open_tail=?8, indexed_ms=?9
         WHERE id = ?1",
    )
    .and_then(|mut s| s.execute(params![r.id, size_now as i64, st.mtime_ns, r.offset, h, t, r.bad_lines, r.open_tail, now()]))
    .map_err(classify_err)?;
    Ok(FileUpdate {
        change: if new_entries.is_empty() { Change::Unchanged } else { Change::Appended },
        session_id: r.header_id.clone(),
        new_entries,
        bytes_read: read,
        reason: None,
    })
}

/// Insert entry rows for appended chunk entries, their statuses, and update the session facts in
/// `r` and its row.
fn append_entries(
    conn: &Connection,
    r: &mut Row,
    buf: &[u8],
    base: u64,
    entries: &[session_engine::chunk::ChunkEntry],
) -> Result<Vec<NewEntry>, LibError> {
    let mut ins_e = EntryInsert::new(conn)?;
    let mut ins_f = conn.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)").map_err(classify_err)?;
    let mut ins_t = conn
        .prepare_cached("INSERT OR IGNORE INTO touched(file_id, op, path) VALUES (?1, ?2, ?3)")
        .map_err(classify_err)?;
    known_ids(conn, r.id)?;
    let mut dup =
        conn.prepare_cached("SELECT 1 FROM entry_ids WHERE file_id = ?1 AND entry_id = ?2").map_err(classify_err)?;
    let mut add_id = conn
        .prepare_cached("INSERT OR IGNORE INTO entry_ids(file_id, entry_id) VALUES (?1, ?2)")
        .map_err(classify_err)?;
    let old_leaf = r.leaf_id.clone();
    let mut linear = true;
    let mut prev = old_leaf.clone();
    let mut rows: Vec<(i64, EntryFacts)> = Vec::new();
    let mut sf = SessionFacts::default();
    let mut seen_ids = std::collections::HashSet::new();
    for e in entries {
        let v = e.value(buf);
        let f = analyze::entry_facts(e.kind, &v);
        if linear {
            let dup_here = !seen_ids.insert(e.id.clone()) || dup.exists(params![r.id, e.id]).map_err(classify_err)?;
            if e.kind == Kind::Compaction || e.parent_id != prev || dup_here {
                linear = false;
            }
        }
        prev = Some(e.id.clone());
        session_facts(r, &mut sf, e, &v);
        // in the context until the statuses are known (a linear append leaves them so)
        let acts = analyze::acts_blob(&f.acts);
        let row = EntryRow {
            id: &e.id,
            parent: e.parent_id.as_deref(),
            ty: &e.type_name,
            first_kept: f.first_kept.as_deref(),
            light: (f.ctx, f.tok, f.usage),
            status: EntryStatus::InContext,
            acts: acts.as_deref(),
            edit_origin: f.edit_origin.as_deref(),
            loc: loc_of(base + e.start as u64, base + e.end as u64, &f, &e.timestamp),
        };
        let rowid = ins_e.insert(None, r.id, &row)?;
        add_id.execute(params![r.id, e.id]).map_err(classify_err)?;
        if !f.body.is_empty() {
            ins_f.execute(params![rowid, f.body]).map_err(classify_err)?;
        }
        for (op, list) in [(0, &f.files_read), (1, &f.files_modified)] {
            for p in list {
                ins_t.execute(params![r.id, op, p]).map_err(classify_err)?;
            }
        }
        rows.push((rowid, f));
    }
    r.leaf_id = entries.last().map(|e| e.id.clone());
    let mut statuses = vec![EntryStatus::InContext; rows.len()];
    // what a linear append can add to the cost of forgetting, stored by the last full sum
    let open: Option<Vec<u8>> = if linear && r.compaction_count > 0 {
        conn.prepare_cached("SELECT forget_open FROM files WHERE id = ?1")
            .and_then(|mut q| q.query_row([r.id], |x| x.get(0)))
            .map_err(classify_err)?
    } else {
        None
    };
    if forget::must_recompute(open.as_deref()) {
        linear = false;
    }
    if linear {
        // a chain at the leaf: all in context; the estimate moves on (§9.3)
        for (_, f) in &rows {
            if f.ctx {
                match f.usage {
                    Some(u) => {
                        r.ctx_usage = Some(u);
                        r.ctx_trailing = 0;
                    }
                    None => r.ctx_trailing += f.tok,
                }
            }
        }
        let last_tip_gone = old_leaf.is_some();
        if !last_tip_gone {
            r.branch_count = 1;
        }
        if let Some(open) = open {
            extend_forgetting(conn, r, &open, rows.iter().flat_map(|(_, f)| f.acts.iter().copied()))?;
        }
    } else {
        statuses = recompute(conn, r, &rows.iter().map(|x| x.0).collect::<Vec<_>>())?;
    }
    write_session_facts(conn, r, &sf)?;
    Ok(entries
        .iter()
        .zip(statuses)
        .take(MAX_EVENT_ENTRIES)
        .map(|(e, st)| NewEntry::new(&e.id, e.parent_id.as_deref(), &e.type_name, st))
        .collect())
}

/// Make sure `entry_ids` holds the ids of every stored entry of file `file_id`, for the duplicate
/// check of its appends. The entries table is indexed by file only (an index by id cost phase 2
/// a random-order insert per entry, for the few files that are ever appended to), so a file's
/// ids are copied here at its first append, and each append adds its own. A file with ids here
/// has them all: they are dropped with its entry rows.
fn known_ids(conn: &Connection, file_id: i64) -> Result<(), LibError> {
    let have: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM entry_ids WHERE file_id = ?1)")
        .and_then(|mut q| q.query_row([file_id], |x| x.get(0)))
        .map_err(classify_err)?;
    if !have {
        // in key order: 57 ms instead of 70 ms for the 100k-entry session's ids
        conn.prepare_cached(
            "INSERT OR IGNORE INTO entry_ids(file_id, entry_id)
             SELECT file_id, entry_id FROM entries WHERE file_id = ?1 ORDER BY entry_id",
        )
        .and_then(|mut s| s.execute([file_id]))
        .map_err(classify_err)?;
    }
    Ok(())
}

/// A linear append at the leaf: its acts against the open keys of the last compaction on the
/// leaf's path (see [`crate::forget`]).
fn extend_forgetting(
    conn: &Connection,
    r: &mut Row,
    open: &[u8],
    acts: impl Iterator<Item = i64>,
) -> Result<(), LibError> {
    let (added, open) = forget::extend(open, acts);
    if added > 0 {
        r.forget_cost = Some(r.forget_cost.unwrap_or(0) + added);
        write_forget_open(conn, r.id, &forget::Open::Keys(open))?;
    }
    Ok(())
}

/// The stored rows [`recompute`] reads, for the cost of forgetting: act keys, first kept
/// entries and edit origins, in file order.
#[derive(Default)]
struct StoredRows(Vec<StoredRow>);

struct StoredRow {
    acts: Option<Vec<u8>>,
    first_kept: Option<String>,
    edit_origin: Option<String>,
}

impl forget::Rows for StoredRows {
    fn acts(&self, i: usize) -> &[u8] {
        self.0[i].acts.as_deref().unwrap_or_default()
    }
    fn first_kept(&self, i: usize) -> Option<&str> {
        self.0[i].first_kept.as_deref()
    }
    fn edit_origin(&self, i: usize) -> Option<&str> {
        self.0[i].edit_origin.as_deref()
    }
}

/// Recompute every status and the cost of forgetting of a file from its stored rows, through a
/// skeleton session loaded by the engine (no file re-read); write only the statuses that
/// changed. Returns the statuses of `new_rowids`.
fn recompute(conn: &Connection, r: &mut Row, new_rowids: &[i64]) -> Result<Vec<EntryStatus>, LibError> {
    // the acts are only read when a compaction has a window to count them in
    let with_acts = r.compaction_count > 0;
    let mut q = conn
        .prepare_cached(if with_acts {
            "SELECT rowid, entry_id, parent_id, type, first_kept, ctx, tok, usage, status, acts, edit_origin
             FROM entries WHERE file_id = ?1 ORDER BY rowid"
        } else {
            "SELECT rowid, entry_id, parent_id, type, first_kept, ctx, tok, usage, status FROM entries WHERE file_id = ?1 ORDER BY rowid"
        })
        .map_err(classify_err)?;
    let mut rowids = Vec::new();
    let mut skel = Vec::new();
    let mut light = Vec::new();
    let mut old = Vec::new();
    let mut stored = StoredRows::default();
    let rows = q
        .query_map([r.id], |x| {
            Ok((
                x.get::<_, i64>(0)?,
                (
                    x.get::<_, String>(1)?,
                    x.get::<_, Option<String>>(2)?,
                    crate::db::type_of_sql(x.get_ref(3)?)?,
                    x.get::<_, Option<String>>(4)?,
                ),
                (x.get::<_, bool>(5)?, x.get::<_, i64>(6)?, x.get::<_, Option<i64>>(7)?),
                x.get::<_, i64>(8)?,
                if with_acts { (x.get(9)?, x.get(10)?) } else { (None, None) },
            ))
        })
        .map_err(classify_err)?;
    for row in rows {
        let (a, b, c, d, (acts, origin)) = row.map_err(classify_err)?;
        if with_acts {
            stored.0.push(StoredRow { acts, first_kept: b.3.clone(), edit_origin: origin });
        }
        rowids.push(a);
        skel.push(b);
        light.push(c);
        old.push(d);
    }
    let session = analyze::skeleton(
        skel.iter().map(|(id, parent, ty, fk)| (id.as_str(), parent.as_deref(), ty.as_str(), fk.as_deref())),
    );
    if session.len() != rowids.len() {
        return Err(LibError::Inconsistent(format!(
            "the stored entries of file {} do not load back ({} of {}); delete the index to rebuild it",
            r.id,
            session.len(),
            rowids.len()
        )));
    }
    let o = analyze::outcome(&session, &light);
    let mut up = conn.prepare_cached("UPDATE entries SET status = ?2 WHERE rowid = ?1").map_err(classify_err)?;
    for i in 0..rowids.len() {
        if o.status[i].code() != old[i] {
            up.execute(params![rowids[i], o.status[i]]).map_err(classify_err)?;
        }
    }
    r.ctx_usage = o.ctx_usage;
    r.ctx_trailing = o.ctx_trailing;
    r.branch_count = o.branches;
    let sum = if with_acts { forget::sum(&session, &stored) } else { forget::Sum::default() };
    r.forget_cost = Some(sum.cost);
    r.forget_compactions = Some(sum.compactions);
    write_forget_open(conn, r.id, &sum.open)?;
    let pos: std::collections::HashMap<i64, usize> = rowids.iter().enumerate().map(|(i, &x)| (x, i)).collect();
    Ok(new_rowids.iter().map(|x| pos.get(x).map(|&i| o.status[i]).unwrap_or(EntryStatus::InContext)).collect())
}
