//! Phase 2's rows of one file as they travel from the thread that reads to the one that writes:
//! the entry rows, their full-text bodies and the paths their tool calls touched, in a few shared
//! buffers (a few allocations per file or window, not several per entry: the writer frees them).
use super::update::{NewEntry, MAX_EVENT_ENTRIES};
use crate::analyze::{self, EntryFacts, Outcome};
use crate::db::classify_err;
use crate::error::LibError;
use crate::forget;
use crate::status::EntryStatus;
use rusqlite::{params, Connection};

/// The paths a file's tool calls read and modified, seen so far. A file's `touched` rows are its
/// first sighting of each (op, path) (`INSERT OR IGNORE` on a unique key): a read of a whole file
/// drops the repeats before the writer thread, which then inserts the same rows.
#[derive(Default)]
pub(crate) struct Touched(std::collections::HashSet<(bool, String)>);

impl Touched {
    pub(crate) fn keep_new(&mut self, f: &mut EntryFacts) {
        f.files_read.retain(|p| self.0.insert((false, p.clone())));
        f.files_modified.retain(|p| self.0.insert((true, p.clone())));
    }
}

/// What the writer inserts as a streamed file's window comes: per entry, in file order, its
/// full-text body and the paths its tool calls read and modified. The bodies share one buffer:
/// the writer frees nothing per entry (freeing the reading thread's allocations one by one on
/// the writer, while the reader allocates, took 0.3 s of the writer's 2 s on the 264 MB bench
/// session), and the batch goes back to the reader to be refilled.
#[derive(Default)]
pub(crate) struct TextBatch {
    text: String,
    /// Per entry, where its body ends in `text`.
    ends: Vec<usize>,
    /// (entry index in this batch, 0 read / 1 modified, path), in entry order.
    pub touched: Vec<(usize, i64, String)>,
}

impl TextBatch {
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.touched.clear();
    }

    /// How many entries the batch holds.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Entry `i`'s body.
    pub(crate) fn body(&self, i: usize) -> &str {
        &self.text[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }

    pub(crate) fn push(&mut self, f: &mut EntryFacts) {
        let i = self.ends.len();
        self.text.push_str(&std::mem::take(&mut f.body)); // freed as it is copied
        self.ends.push(self.text.len());
        for (op, list) in [(0, &mut f.files_read), (1, &mut f.files_modified)] {
            self.touched.extend(list.drain(..).map(|p| (i, op, p)));
        }
    }
}

/// The entry rows of a file (everything but the text), kept by the reading thread; their
/// statuses and the cost of forgetting need the whole tree. Their strings share one buffer (a
/// few allocations for the whole file, not five per entry: the writer frees them).
#[derive(Default)]
pub(crate) struct EntryRows {
    /// The strings of every row, back to back.
    text: String,
    /// Per entry: where its id, parentId, type, firstKeptEntryId and edit origin end in `text`,
    /// and which of them are present (bit k for part k).
    ends: Vec<([usize; 5], u8)>,
    /// (in the context, token estimate, usage)
    pub light: Vec<(bool, i64, Option<i64>)>,
    /// Every row's act keys as stored ([`analyze::acts_blob`]), back to back.
    acts: Vec<u8>,
    /// Per entry, where its acts end in `acts`.
    act_ends: Vec<usize>,
    /// Per entry with a full-text body: where its line is in the file and the hash of what a
    /// hit shows from it ([`EntryRows::loc`]); `None` for an entry without text.
    locs: Vec<Option<Loc>>,
}

/// Where an entry's line is in its file (offset, length) and the hash of what a hit shows from
/// it ([`analyze::text_hash`]: the full-text body, role and timestamp): what a search reads again.
pub(crate) type Loc = (i64, i64, i64);

/// The [`Loc`] of an entry whose line is the bytes `start..end` of its file, whose body is
/// `f.body` and role `f.role`, and whose timestamp is `ts` (`None` when it has no text: it has
/// no full-text row either, and no hit shows it).
pub(crate) fn loc_of(start: u64, end: u64, f: &EntryFacts, ts: &str) -> Option<Loc> {
    (!f.body.is_empty())
        .then(|| (start as i64, (end - start) as i64, analyze::text_hash(&f.body, f.role.as_deref(), ts)))
}

/// One entry row as the entries table stores it (see the schema in `db.rs`): what queries
/// filter by, and what a status recompute needs without reading the file.
pub(crate) struct EntryRow<'a> {
    pub id: &'a str,
    pub parent: Option<&'a str>,
    pub ty: &'a str,
    pub first_kept: Option<&'a str>,
    /// (in the context, token estimate, usage)
    pub light: (bool, i64, Option<i64>),
    pub status: EntryStatus,
    /// Act keys as stored (`None`: none).
    pub acts: Option<&'a [u8]>,
    pub edit_origin: Option<&'a str>,
    pub loc: Option<Loc>,
}

/// The one statement every writer inserts entry rows with (a whole file, a streamed file's
/// rows at its end, an append), prepared once per file.
pub(crate) struct EntryInsert<'c>(rusqlite::CachedStatement<'c>);

impl<'c> EntryInsert<'c> {
    pub(crate) fn new(conn: &'c Connection) -> Result<Self, LibError> {
        conn.prepare_cached(
            "INSERT INTO entries(rowid, file_id, entry_id, parent_id, type, first_kept, ctx, tok, usage, status,
                                 acts, edit_origin, off, len, bh)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )
        .map(EntryInsert)
        .map_err(classify_err)
    }

    /// Insert `row` of file `file_id` with `rowid` (`None`: the next free one). Returns its rowid.
    pub(crate) fn insert(&mut self, rowid: Option<i64>, file_id: i64, row: &EntryRow) -> Result<i64, LibError> {
        let (ctx, tok, usage) = row.light;
        let loc = row.loc;
        self.0
            .insert(params![
                rowid,
                file_id,
                row.id,
                row.parent,
                crate::db::type_sql(row.ty),
                row.first_kept,
                ctx,
                tok,
                usage,
                row.status,
                row.acts,
                row.edit_origin,
                loc.map(|l| l.0),
                loc.map(|l| l.1),
                loc.map(|l| l.2)
            ])
            .map_err(classify_err)
    }
}

/// One entry row of [`EntryRows`]: id, parentId, type, firstKeptEntryId.
pub(crate) type EntryRowRef<'a> = (&'a str, Option<&'a str>, &'a str, Option<&'a str>);

impl EntryRows {
    /// `line`: the entry line's byte range in the file; `ts`: its timestamp (only hashed).
    pub(crate) fn push(
        &mut self,
        id: &str,
        parent: Option<&str>,
        ty: &str,
        ts: &str,
        line: (u64, u64),
        f: &EntryFacts,
    ) {
        self.locs.push(loc_of(line.0, line.1, f, ts));
        let (mut ends, mut present) = ([0usize; 5], 0u8);
        let parts = [Some(id), parent, Some(ty), f.first_kept.as_deref(), f.edit_origin.as_deref()];
        for (k, part) in parts.into_iter().enumerate() {
            if let Some(p) = part {
                self.text.push_str(p);
                present |= 1 << k;
            }
            ends[k] = self.text.len();
        }
        self.ends.push((ends, present));
        self.light.push((f.ctx, f.tok, f.usage));
        self.acts.extend(f.acts.iter().flat_map(|k| k.to_le_bytes()));
        self.act_ends.push(self.acts.len());
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn row(&self, i: usize) -> EntryRowRef<'_> {
        let part = |k: usize| self.part(i, k);
        (part(0).unwrap_or(""), part(1), part(2).unwrap_or(""), part(3))
    }

    /// Entry `i` as stored, with its status.
    pub(crate) fn stored(&self, i: usize, status: EntryStatus) -> EntryRow<'_> {
        let (id, parent, ty, first_kept) = self.row(i);
        EntryRow {
            id,
            parent,
            ty,
            first_kept,
            light: self.light[i],
            status,
            acts: Some(self.acts(i)).filter(|a| !a.is_empty()),
            edit_origin: self.edit_origin(i),
            loc: self.locs[i],
        }
    }

    /// Part `k` of entry `i` (see `ends`), if present.
    fn part(&self, i: usize, k: usize) -> Option<&str> {
        let (e, present) = &self.ends[i];
        let start = if k > 0 {
            e[k - 1]
        } else if i == 0 {
            0
        } else {
            self.ends[i - 1].0[4]
        };
        Some(&self.text[start..e[k]]).filter(|_| present & (1 << k) != 0)
    }

    /// Entry `i`'s edit origin (a compaction that edits or reverts another).
    pub(crate) fn edit_origin(&self, i: usize) -> Option<&str> {
        self.part(i, 4)
    }

    /// Entry `i`'s act keys as stored (empty: none).
    pub(crate) fn acts(&self, i: usize) -> &[u8] {
        &self.acts[if i == 0 { 0 } else { self.act_ends[i - 1] }..self.act_ends[i]]
    }

    /// The first [`MAX_EVENT_ENTRIES`] entries as events, with their statuses.
    pub(crate) fn events(&self, status: &[EntryStatus]) -> Vec<NewEntry> {
        (0..self.len().min(MAX_EVENT_ENTRIES))
            .map(|i| {
                let (id, parent, ty, _) = self.row(i);
                NewEntry::new(id, parent, ty, status[i])
            })
            .collect()
    }

    /// Statuses, estimate, branches and the cost of forgetting, from the skeleton session the
    /// engine loads.
    pub(crate) fn outcome(&self, file_id: i64) -> Result<(Outcome, forget::Sum), LibError> {
        let session = analyze::skeleton((0..self.len()).map(|i| self.row(i)));
        if session.len() != self.len() {
            return Err(LibError::Inconsistent(format!(
                "the entries of file {file_id} do not load back ({} of {}); delete the index to rebuild it",
                session.len(),
                self.len()
            )));
        }
        Ok((analyze::outcome(&session, &self.light), forget::sum(&session, self)))
    }
}

impl forget::Rows for EntryRows {
    fn acts(&self, i: usize) -> &[u8] {
        EntryRows::acts(self, i)
    }
    fn first_kept(&self, i: usize) -> Option<&str> {
        self.part(i, 3)
    }
    fn edit_origin(&self, i: usize) -> Option<&str> {
        EntryRows::edit_origin(self, i)
    }
}
