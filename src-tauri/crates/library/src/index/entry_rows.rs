//! Phase 2's rows of one file as they travel from the thread that reads to the one that writes:
//! the entry rows, their full-text bodies and the paths their tool calls touched, in a few shared
//! buffers (a few allocations per file or window, not several per entry: the writer frees them).
use super::update::{NewEntry, MAX_EVENT_ENTRIES};
use crate::analyze::{self, EntryFacts, Outcome};
use crate::error::LibError;
use crate::forget;
use crate::status::EntryStatus;

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
/// few allocations for the whole file, not seven per entry: the writer frees them).
#[derive(Default)]
pub(crate) struct EntryRows {
    /// The strings of every row, back to back.
    text: String,
    /// Per entry: where its id, parentId, type, firstKeptEntryId, timestamp, role and edit
    /// origin end in `text`, and which of them are present (bit k for part k).
    ends: Vec<([usize; 7], u8)>,
    /// (in the context, token estimate, usage)
    pub light: Vec<(bool, i64, Option<i64>)>,
    /// Every row's act keys as stored ([`analyze::acts_blob`]), back to back.
    acts: Vec<u8>,
    /// Per entry, where its acts end in `acts`.
    act_ends: Vec<usize>,
    /// Per entry with a full-text body: where its line is in the file and the hash of the body
    /// ([`EntryRows::loc`]); `None` for an entry without text.
    locs: Vec<Option<Loc>>,
}

/// Where an entry's line is in its file (offset, length) and the hash of the full-text body it
/// gave ([`analyze::body_hash`]): what a search reads again to make a snippet.
pub(crate) type Loc = (i64, i64, i64);

/// The [`Loc`] of an entry whose line is the bytes `start..end` of its file and whose body is
/// `body` (`None` when it has no text: it has no full-text row either).
pub(crate) fn loc_of(start: u64, end: u64, body: &str) -> Option<Loc> {
    (!body.is_empty()).then(|| (start as i64, (end - start) as i64, analyze::body_hash(body)))
}

/// One entry row of [`EntryRows`]: id, parentId, type, firstKeptEntryId, timestamp, role.
pub(crate) type EntryRowRef<'a> = (&'a str, Option<&'a str>, &'a str, Option<&'a str>, &'a str, Option<&'a str>);

impl EntryRows {
    /// `line`: the entry line's byte range in the file.
    pub(crate) fn push(
        &mut self,
        id: &str,
        parent: Option<&str>,
        ty: &str,
        ts: &str,
        line: (u64, u64),
        f: &EntryFacts,
    ) {
        self.locs.push(loc_of(line.0, line.1, &f.body));
        let (mut ends, mut present) = ([0usize; 7], 0u8);
        let parts = [
            Some(id),
            parent,
            Some(ty),
            f.first_kept.as_deref(),
            Some(ts),
            f.role.as_deref(),
            f.edit_origin.as_deref(),
        ];
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
        (part(0).unwrap_or(""), part(1), part(2).unwrap_or(""), part(3), part(4).unwrap_or(""), part(5))
    }

    /// Part `k` of entry `i` (see `ends`), if present.
    fn part(&self, i: usize, k: usize) -> Option<&str> {
        let (e, present) = &self.ends[i];
        let start = if k > 0 {
            e[k - 1]
        } else if i == 0 {
            0
        } else {
            self.ends[i - 1].0[6]
        };
        Some(&self.text[start..e[k]]).filter(|_| present & (1 << k) != 0)
    }

    /// Entry `i`'s line and body hash ([`Loc`]).
    pub(crate) fn loc(&self, i: usize) -> Option<Loc> {
        self.locs[i]
    }

    /// Entry `i`'s edit origin (a compaction that edits or reverts another).
    pub(crate) fn edit_origin(&self, i: usize) -> Option<&str> {
        self.part(i, 6)
    }

    /// Entry `i`'s act keys as stored (empty: none).
    pub(crate) fn acts(&self, i: usize) -> &[u8] {
        &self.acts[if i == 0 { 0 } else { self.act_ends[i - 1] }..self.act_ends[i]]
    }

    /// The first [`MAX_EVENT_ENTRIES`] entries as events, with their statuses.
    pub(crate) fn events(&self, status: &[EntryStatus]) -> Vec<NewEntry> {
        (0..self.len().min(MAX_EVENT_ENTRIES))
            .map(|i| {
                let (id, parent, ty, _, _, _) = self.row(i);
                NewEntry::new(id, parent, ty, status[i])
            })
            .collect()
    }

    /// Statuses, estimate, branches and the cost of forgetting, from the skeleton session the
    /// engine loads.
    pub(crate) fn outcome(&self, file_id: i64) -> Result<(Outcome, forget::Sum), LibError> {
        let session = analyze::skeleton((0..self.len()).map(|i| {
            let (id, parent, ty, fk, _, _) = self.row(i);
            (id, parent, ty, fk)
        }));
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
