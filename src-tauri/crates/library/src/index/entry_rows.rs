//! Phase 2's rows of one file as they travel from the thread that reads to the one that writes:
//! the entry rows, their full-text bodies and the paths their tool calls touched, in a few shared
//! buffers (a few allocations per file or window, not several per entry: the writer frees them).
use super::update::{NewEntry, MAX_EVENT_ENTRIES};
use crate::analyze::{self, EntryFacts, Outcome};
use crate::error::LibError;
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
/// statuses need the whole tree. Their strings share one buffer (a few allocations for the
/// whole file, not six per entry: the writer frees them).
#[derive(Default)]
pub(crate) struct EntryRows {
    /// The strings of every row, back to back.
    text: String,
    /// Per entry: where its id, parentId, type, firstKeptEntryId, timestamp and role end in
    /// `text`, and which of them are present (bit k for part k).
    ends: Vec<([usize; 6], u8)>,
    /// (in the context, token estimate, usage)
    pub light: Vec<(bool, i64, Option<i64>)>,
}

/// One entry row of [`EntryRows`]: id, parentId, type, firstKeptEntryId, timestamp, role.
pub(crate) type EntryRowRef<'a> = (&'a str, Option<&'a str>, &'a str, Option<&'a str>, &'a str, Option<&'a str>);

impl EntryRows {
    pub(crate) fn push(&mut self, id: &str, parent: Option<&str>, ty: &str, ts: &str, f: &EntryFacts) {
        let (mut ends, mut present) = ([0usize; 6], 0u8);
        let parts = [Some(id), parent, Some(ty), f.first_kept.as_deref(), Some(ts), f.role.as_deref()];
        for (k, part) in parts.into_iter().enumerate() {
            if let Some(p) = part {
                self.text.push_str(p);
                present |= 1 << k;
            }
            ends[k] = self.text.len();
        }
        self.ends.push((ends, present));
        self.light.push((f.ctx, f.tok, f.usage));
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn row(&self, i: usize) -> EntryRowRef<'_> {
        let (e, present) = &self.ends[i];
        let start = if i == 0 { 0 } else { self.ends[i - 1].0[5] };
        let part = |k: usize| &self.text[if k == 0 { start } else { e[k - 1] }..e[k]];
        let opt = |k: usize| Some(part(k)).filter(|_| present & (1 << k) != 0);
        (part(0), opt(1), part(2), opt(3), part(4), opt(5))
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

    /// Statuses, estimate and branches, from the skeleton session the engine loads.
    pub(crate) fn outcome(&self, file_id: i64) -> Result<Outcome, LibError> {
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
        Ok(analyze::outcome(&session, &self.light))
    }
}
