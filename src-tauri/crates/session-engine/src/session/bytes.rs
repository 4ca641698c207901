//! The bytes of a session file, as the session holds them.
//!
//! A big file is read into anonymous memory, each half by its own thread, instead of into a
//! fresh `Vec` by one: on the machine Arbor is measured on, the page faults of a fresh 264 MB
//! buffer, one per 4 KiB page as the read fills it, cost more than parsing it (an open took 74k
//! page faults, against 2k for the reference reader's populated mapping), and two threads fault
//! their halves in at the same time. Reading the 100k-entry session, two buffers held at once,
//! four rounds: `Vec` 248-285 ms a read, populated memory (`MAP_POPULATE`) 149-160 ms, the same
//! read in halves 85-95 ms (into a `Vec` in halves: 126-246 ms). Huge pages (`MADV_HUGEPAGE`) were
//! 72-83 ms in some rounds and 380-575 ms in others, worse than the `Vec`: not used. The memory is
//! Arbor's own copy, never a mapping of the file, so a file truncated by another program while it
//! is open cannot fault the process.
//!
//! What the open read (the base) is shared between clones of a session, and what is appended
//! later goes into the base's room while nothing else holds it, else into a tail of its own: a
//! million-entry session is 2.6 GB, and a copy of it (the app's open session written while a
//! background reader still holds the previous one, or a full room moved to a bigger buffer)
//! held the file twice. Every line lies whole in the base or in the tail: appends are whole
//! lines after a `\n`.
//!
//! A file of `LEFT_IN_FILE_MIN_BYTES` or more is not held by the session: the open reads it in
//! windows (`windows`; or, when that open leaves the file to the whole-file one, reads it whole
//! and gives the bytes back), and its lines are read again in blocks (`pread` on the descriptor the
//! open read from, the last blocks read kept) when an entry is first parsed or its line asked
//! for, and the page cache, not the process, holds them. A file cut or
//! rewritten in place meanwhile gives a short read or a line that is no longer the one indexed:
//! the caller sees an error (see [`FileBytes::slice`]) and the session is marked changed, never a
//! fault. A file replaced by another one (a new inode) is still read from the old descriptor, so
//! what the open indexed stays readable until the session is opened again.
use std::borrow::Cow;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

/// Files of this size or more go to anonymous memory, read in halves by two threads; smaller
/// ones as [`HALVES_MIN_BYTES`] and [`POPULATED_MIN_BYTES`] say, the smallest into a `Vec` (small
/// files are most of what users open).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const MAPPED_MIN_BYTES: usize = 8 << 20;
/// Files from this size up to [`HALVES_MIN_BYTES`] also go to anonymous memory, but with its
/// pages populated in one call (`MADV_POPULATE_WRITE`) and read by one thread: a `Vec` of their
/// size is a fresh mapping too (the allocator maps anything over 128 KiB), and its page faults,
/// one per 4 KiB as the read fills it, made the read of the 1000-entry session (2.25 MB) about
/// 0.3 ms slower than the populated buffer's (5.65 against 5.35 ms for its whole open).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const POPULATED_MIN_BYTES: usize = 256 << 10;
/// Files from this size up to [`MAPPED_MIN_BYTES`] are read in halves by two threads too, each
/// first faulting its half's pages in by writing a byte to each: on the 1000-entry session
/// (2.25 MB) the open took 3.90 ms against 4.14 ms with one populated read (median of 40
/// interleaved rounds; reading in halves without the writes, 4.11 ms).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const HALVES_MIN_BYTES: usize = 1 << 20;
/// Room left after a mapped file's bytes for what is appended while it is open (a full buffer
/// moves to a bigger one: one copy).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const ROOM: usize = 2 << 20;
/// A transparent huge page (x86-64's and arm64's usual size). A file of [`HALVES_MIN_BYTES`] to
/// [`MAPPED_MIN_BYTES`] goes to anonymous memory mapped in whole huge pages, which Linux places
/// on a huge page's boundary, and asks for huge pages over the whole ones its bytes fill (see
/// [`advise_huge_pages`]).
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;
/// The last bytes of a base left in the file stay in memory: the live follow compares the last
/// 4 KiB held with the file's before it reads an append, so a file rewritten in place is caught
/// there (the file's own bytes would always match themselves).
#[cfg(unix)]
pub(crate) const KEPT_END_BYTES: usize = 64 << 10;
/// A base left in the file is read back in aligned blocks of this size (or a line's span, if
/// longer), and the last [`CACHED_BLOCKS`] blocks read are kept: a context or a walk down a
/// branch asks for lines that mostly follow each other in the file, and one read per line (a
/// system call each) made navigation 2–3× slower than with the bytes in memory. Bigger blocks
/// cost more where the lines asked for are far apart (a session's compactions, each in its own
/// block): a context at the leaf of the 10,000-entry session took 1.16 ms with 16 KiB blocks,
/// 1.48 with 64 KiB and 1.82 with 128 KiB (0.64 with the bytes in memory; medians of 9 rounds).
#[cfg(unix)]
const BLOCK_BYTES: usize = 16 << 10;
#[cfg(unix)]
const CACHED_BLOCKS: usize = 32;

/// A session file's bytes: the base (a `Vec`, or from [`POPULATED_MIN_BYTES`] on Linux anonymous
/// memory with room to grow), shared by clones, and the bytes appended where the base could not take them.
pub(crate) struct FileBytes {
    base: Arc<Base>,
    tail: Vec<u8>,
    /// A read of the base from the file found other bytes than the open read (shared by clones).
    changed: Arc<std::sync::atomic::AtomicBool>,
}

/// The bytes as read: one contiguous buffer.
struct Base(Inner);

enum Inner {
    Heap(Vec<u8>),
    #[cfg(target_os = "linux")]
    Mapped {
        map: memmap2::MmapMut,
        len: usize,
    },
    /// The file's first `len` bytes, left in the file after the open; `end` keeps the last
    /// [`KEPT_END_BYTES`] of them in memory.
    #[cfg(unix)]
    File {
        file: std::fs::File,
        len: usize,
        end: Vec<u8>,
        /// The blocks read last, oldest first (see [`BLOCK_BYTES`]).
        blocks: std::sync::Mutex<std::collections::VecDeque<Block>>,
        /// Reads of the file since the open (for the tests of the blocks).
        reads: std::sync::atomic::AtomicUsize,
    },
}

/// Bytes of a base left in the file, read back from it (see [`BLOCK_BYTES`]).
#[cfg(unix)]
struct Block {
    start: usize,
    bytes: Vec<u8>,
}

impl FileBytes {
    /// Reads the whole file (to its end as read, even if it grows meanwhile).
    #[cfg(test)]
    pub(crate) fn read(path: &Path) -> io::Result<FileBytes> {
        FileBytes::read_keeping_file(path).map(|(b, _)| b)
    }

    /// [`FileBytes::read`], and the open file it read (for [`FileBytes::leave_in_file`]).
    pub(crate) fn read_keeping_file(path: &Path) -> io::Result<(FileBytes, std::fs::File)> {
        Base::read(path, |n| n / 2, |_| (), |_, _| ()).map(|(b, f, _)| (FileBytes::from_base(b), f))
    }

    /// [`FileBytes::read`], and when the file is read in halves by two threads, each thread then
    /// works on the bytes it read: `first` on the first half (`bytes[..h]`), `second` on the
    /// second (`bytes[h..]`, given with `h`). A small file's parse so starts on each core as soon
    /// as that core's read is done, with no thread started for it and no wait for the other
    /// half's read. Their answers come back only when the file held exactly the bytes read in
    /// halves (nothing was appended meanwhile); otherwise, and for files read another way, `None`.
    ///
    /// The first half is the bigger, 55 % of the file: the second's thread starts later and
    /// grows its heap before its parse, and with equal halves the first thread waited for it
    /// (the 1000-entry session's open at load 10: 5.01 ms against 5.28 ms with equal halves,
    /// median of 25 interleaved rounds; 52.5 % gave 5.07 ms, 57 % 5.13 ms, 60 % 5.40 ms).
    pub(crate) fn read_then<A, B: Send>(
        path: &Path,
        first: impl FnOnce(&[u8]) -> A,
        second: impl FnOnce(&[u8], usize) -> B + Send,
    ) -> io::Result<(FileBytes, Option<(A, B)>)> {
        Base::read(path, |n| n / 2 + n / 20, first, second).map(|(b, _, done)| (FileBytes::from_base(b), done))
    }

    fn from_base(base: Base) -> FileBytes {
        FileBytes { base: Arc::new(base), tail: Vec::new(), changed: Default::default() }
    }

    /// Gives the bytes read at open back to `file` (the one they were read from), keeping only
    /// the last [`KEPT_END_BYTES`]: later reads of them go to the file. Only a base in anonymous
    /// memory that no clone shares and with nothing appended is given back (a big file, just
    /// opened); anything else stays as it is.
    #[cfg(unix)]
    pub(crate) fn leave_in_file(&mut self, file: std::fs::File) {
        if !self.tail.is_empty() {
            return;
        }
        let Some(base) = Arc::get_mut(&mut self.base) else { return };
        #[cfg(target_os = "linux")]
        if let Inner::Mapped { map, len } = &base.0 {
            let len = *len;
            let end = map[len.saturating_sub(KEPT_END_BYTES)..len].to_vec();
            // Its pages go back to the system as it is unmapped, here: on a thread of its own the
            // unmapping (about 25 ms for a 260 MB session) held the process's memory map lock
            // while the first context after the open faulted its pages, and that context took
            // 24–29 ms instead of 1.5.
            *base = Base(Inner::File { file, len, end, blocks: Default::default(), reads: Default::default() });
            return;
        }
        let _ = (base, file);
    }

    /// The first `len` bytes of `file`, left in it from the start (an open that read the file in
    /// windows and never held it whole); `end` holds its last [`KEPT_END_BYTES`] (or all of it
    /// when shorter), as [`FileBytes::leave_in_file`] keeps them.
    #[cfg(unix)]
    pub(crate) fn left_in(file: std::fs::File, len: usize, end: Vec<u8>) -> FileBytes {
        debug_assert_eq!(end.len(), len.min(KEPT_END_BYTES));
        FileBytes::from_base(Base(Inner::File {
            file,
            len,
            end,
            blocks: Default::default(),
            reads: Default::default(),
        }))
    }

    /// Whether the base's bytes are in the file (see [`FileBytes::leave_in_file`]).
    pub(crate) fn in_file(&self) -> bool {
        #[cfg(unix)]
        if let Inner::File { .. } = self.base.0 {
            return true;
        }
        false
    }

    /// How many times the base was read back from the file (0 for bytes held in memory).
    pub(crate) fn file_reads(&self) -> usize {
        #[cfg(unix)]
        if let Inner::File { reads, .. } = &self.base.0 {
            return reads.load(std::sync::atomic::Ordering::Relaxed);
        }
        0
    }

    /// A read of the file found other bytes than the open read: the session must be opened again.
    pub(crate) fn changed(&self) -> bool {
        self.changed.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn mark_changed(&self) {
        self.changed.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Bytes the base holds (the rest, up to `len`, is in the tail).
    fn base_len(&self) -> usize {
        self.base.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.base.len() + self.tail.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes `start..end`, which lie in the base or in the tail (a line, or part of one).
    /// An error only for a base left in the file that is now shorter (or unreadable).
    pub(crate) fn slice(&self, start: usize, end: usize) -> io::Result<Cow<'_, [u8]>> {
        let b = self.base_len();
        debug_assert!(end <= b || start >= b, "bytes {start}..{end} span the base's end ({b})");
        if end <= b {
            self.base.get(start, end)
        } else {
            Ok(Cow::Borrowed(&self.tail[start - b..end - b]))
        }
    }

    /// A copy of the bytes `start..end`, across the base and the tail.
    pub(crate) fn copy_range(&self, start: usize, end: usize) -> io::Result<Vec<u8>> {
        let b = self.base_len();
        if end <= b {
            // A base left in the file already gives a copy.
            return self.base.get(start, end).map(Cow::into_owned);
        }
        let mut v = Vec::with_capacity(end - start);
        if start < b {
            v.extend_from_slice(&self.base.get(start, b)?);
        }
        if end > b {
            v.extend_from_slice(&self.tail[start.max(b) - b..end - b]);
        }
        Ok(v)
    }

    /// Whether two byte sets share one base (a clone's), not copies of it.
    #[cfg(test)]
    pub(crate) fn same_base(&self, other: &FileBytes) -> bool {
        Arc::ptr_eq(&self.base, &other.base)
    }

    /// The whole file as one slice, for the open (nothing appended yet: the base is all).
    pub(crate) fn as_read(&self) -> &[u8] {
        debug_assert!(self.tail.is_empty(), "the open reads the base alone");
        &self.base
    }

    /// Appends `more`: into the base's room while the tail is empty and no clone holds the base,
    /// else into the tail. The base never moves (a copy would hold the file twice).
    pub(crate) fn extend_from_slice(&mut self, more: &[u8]) {
        if self.tail.is_empty() {
            if let Some(base) = Arc::get_mut(&mut self.base) {
                if base.try_extend(more) {
                    return;
                }
            }
        }
        self.tail.extend_from_slice(more);
    }
}

/// What [`Base::read`] gives: the bytes, the file they were read from, and the halves' answers.
type ReadBase<A, B> = (Base, std::fs::File, Option<(A, B)>);

impl Base {
    /// The bytes `start..end` of the base (`end` at most its length).
    fn get(&self, start: usize, end: usize) -> io::Result<Cow<'_, [u8]>> {
        match &self.0 {
            #[cfg(unix)]
            Inner::File { file, len, end: kept, blocks, reads } => {
                use std::os::unix::fs::FileExt;
                let kept_at = len - kept.len();
                if start >= kept_at {
                    return Ok(Cow::Borrowed(&kept[start - kept_at..end - kept_at]));
                }
                let lock = || blocks.lock().unwrap_or_else(|e| e.into_inner());
                let mut held = lock();
                if let Some(k) = held.iter().rposition(|b| b.start <= start && end <= b.start + b.bytes.len()) {
                    let line = held[k].bytes[start - held[k].start..end - held[k].start].to_vec();
                    // Kept as the newest: a walk that comes back to it finds it again.
                    if let Some(b) = held.remove(k) {
                        held.push_back(b);
                    }
                    return Ok(Cow::Owned(line));
                }
                // The aligned block around `start`, grown to whole blocks past a long line's end,
                // and never past what the open read.
                let from = start / BLOCK_BYTES * BLOCK_BYTES;
                let to = end.max(from + BLOCK_BYTES).div_ceil(BLOCK_BYTES).saturating_mul(BLOCK_BYTES).min(*len);
                // The least recently used block's buffer is read into again: a fresh one's pages
                // would each fault on the read's copy.
                let mut bytes = if held.len() >= CACHED_BLOCKS {
                    held.pop_front().map(|b| b.bytes).unwrap_or_default()
                } else {
                    Vec::new()
                };
                // Read with the blocks unlocked: threads parsing a context together read theirs
                // side by side.
                drop(held);
                bytes.resize(to - from, 0);
                reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                file.read_exact_at(&mut bytes, from as u64)?;
                let line = bytes[start - from..end - from].to_vec();
                lock().push_back(Block { start: from, bytes });
                Ok(Cow::Owned(line))
            }
            _ => Ok(Cow::Borrowed(&self[start..end])),
        }
    }

    /// See [`FileBytes::read_then`]; a file read in halves is split at `first_len(size)`.
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    fn read<A, B: Send>(
        path: &Path,
        first_len: fn(usize) -> usize,
        first: impl FnOnce(&[u8]) -> A,
        second: impl FnOnce(&[u8], usize) -> B + Send,
    ) -> io::Result<ReadBase<A, B>> {
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len() as usize;
        #[cfg(target_os = "linux")]
        if len >= POPULATED_MIN_BYTES {
            // The mid-size band: halves whose pages are written first, in huge pages.
            let touch = (HALVES_MIN_BYTES..MAPPED_MIN_BYTES).contains(&len);
            let mapped = if touch { Base::mapped_in_huge_pages(len + 1) } else { Base::mapped(len + 1) };
            if let Some(mut b) = mapped {
                let read = if len >= HALVES_MIN_BYTES {
                    b.read_halves(&f, len, first_len(len), touch, first, second).map(Some)
                } else {
                    b.read_populated(&f, len).map(|()| None)
                };
                if let Ok(done) = read {
                    // Whatever was appended since the size was read.
                    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(len as u64))?;
                    b.read_to_end(&mut f)?;
                    let done = done.filter(|_| b.len() == len);
                    return Ok((b, f, done));
                }
                // Shorter than its size said (cut meanwhile) or a read error: read it again
                // from the start, one way, which reports the error if there is one.
            }
        }
        // As `std::fs::read`: one more byte than the size, so the end is found without growing.
        let mut v = Vec::with_capacity(len + 1);
        f.read_to_end(&mut v)?;
        Ok((Base(Inner::Heap(v)), f, None))
    }

    /// Empty anonymous memory for at least `min` bytes, or `None` if the system refuses it.
    #[cfg(target_os = "linux")]
    fn mapped(min: usize) -> Option<Base> {
        Base::mapped_exactly(min + ROOM)
    }

    /// [`Base::mapped`] in whole huge pages: recent Linux (6.7 on, here 6.18) then starts the
    /// mapping on a huge page's boundary (see [`advise_huge_pages`]), and its room is `ROOM`
    /// or more.
    #[cfg(target_os = "linux")]
    fn mapped_in_huge_pages(min: usize) -> Option<Base> {
        Base::mapped_exactly((min + ROOM).next_multiple_of(HUGE_PAGE))
    }

    /// Empty anonymous memory of `len` bytes.
    #[cfg(target_os = "linux")]
    fn mapped_exactly(len: usize) -> Option<Base> {
        let map = memmap2::MmapOptions::new().len(len).map_anon().ok()?;
        Some(Base(Inner::Mapped { map, len: 0 }))
    }

    /// Reads the file's first `n` bytes into this empty mapped buffer, the first `h` and the
    /// rest each on its own thread (both fault their half's pages in at the same time), and
    /// each thread then works on its half ([`FileBytes::read_then`]). With `touch`, each thread
    /// writes one byte of every page of its half before reading into it (see
    /// [`HALVES_MIN_BYTES`]).
    #[cfg(target_os = "linux")]
    fn read_halves<A, B: Send>(
        &mut self,
        f: &std::fs::File,
        n: usize,
        h: usize,
        touch: bool,
        work_first: impl FnOnce(&[u8]) -> A,
        work_second: impl FnOnce(&[u8], usize) -> B + Send,
    ) -> io::Result<(A, B)> {
        use std::os::unix::fs::FileExt;
        let Inner::Mapped { map, len } = &mut self.0 else { unreachable!("read_halves on a Vec") };
        if touch {
            advise_huge_pages(map, n);
        }
        let (first, second) = map[..n].split_at_mut(h);
        let fault_in = move |half: &mut [u8]| {
            if touch {
                half.iter_mut().step_by(4096).for_each(|b| *b = 0);
            }
        };
        let done = std::thread::scope(|s| {
            let other = s.spawn(|| {
                fault_in(second);
                f.read_exact_at(second, h as u64).map(|()| work_second(second, h))
            });
            fault_in(first);
            let mine = f.read_exact_at(first, 0).map(|()| work_first(first));
            let other = other.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            Ok::<_, io::Error>((mine?, other?))
        })?;
        *len = n;
        Ok(done)
    }

    /// Reads the file's first `n` bytes into this empty mapped buffer, its pages (and the one
    /// after, where the end is looked for) populated first in one call. A kernel without
    /// `MADV_POPULATE_WRITE` (before 5.14) refuses it: the read then faults them in.
    #[cfg(target_os = "linux")]
    fn read_populated(&mut self, f: &std::fs::File, n: usize) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let Inner::Mapped { map, len } = &mut self.0 else { unreachable!("read_populated on a Vec") };
        let _ = map.advise_range(memmap2::Advice::PopulateWrite, 0, n + 1);
        f.read_exact_at(&mut map[..n], 0)?;
        *len = n;
        Ok(())
    }

    #[cfg(target_os = "linux")]
    fn read_to_end(&mut self, f: &mut std::fs::File) -> io::Result<()> {
        loop {
            // A full buffer (the file grew since its size was read) moves to a bigger one.
            self.reserve(1);
            let (map, len) = match &mut self.0 {
                Inner::Heap(v) => return f.read_to_end(v).map(|_| ()),
                Inner::Mapped { map, len } => (map, len),
                #[cfg(unix)]
                Inner::File { .. } => unreachable!("the open reads into memory"),
            };
            match f.read(&mut map[*len..]) {
                Ok(0) => return Ok(()),
                Ok(n) => *len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Room for `extra` more bytes: a full mapped buffer moves to a bigger one (one copy). Only
    /// while the open reads a file that grows meanwhile; later appends go to the tail instead.
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    fn reserve(&mut self, extra: usize) {
        #[cfg(target_os = "linux")]
        if let Inner::Mapped { map, len } = &self.0 {
            if map.len() - len < extra {
                let whole = len + extra;
                let mut bigger =
                    Base::mapped(whole + whole / 8).unwrap_or_else(|| Base(Inner::Heap(Vec::with_capacity(whole))));
                bigger.push(&self[..]);
                *self = bigger;
            }
        }
    }

    /// Appends `more` after a [`Base::reserve`].
    fn push(&mut self, more: &[u8]) {
        self.reserve(more.len());
        match &mut self.0 {
            Inner::Heap(v) => v.extend_from_slice(more),
            #[cfg(target_os = "linux")]
            Inner::Mapped { map, len } => {
                map[*len..*len + more.len()].copy_from_slice(more);
                *len += more.len();
            }
            #[cfg(unix)]
            Inner::File { .. } => unreachable!("only the open grows the base"),
        }
    }

    /// Appends `more` where it fits without moving what is held: a `Vec` (a small file; its
    /// growth copies little) or mapped memory with room left. False: nothing appended.
    fn try_extend(&mut self, more: &[u8]) -> bool {
        match &mut self.0 {
            Inner::Heap(v) if v.len() < MAPPED_MIN_BYTES => {
                v.extend_from_slice(more);
                true
            }
            Inner::Heap(_) => false,
            #[cfg(target_os = "linux")]
            Inner::Mapped { map, len } => {
                if map.len() - *len < more.len() {
                    return false;
                }
                map[*len..*len + more.len()].copy_from_slice(more);
                *len += more.len();
                true
            }
            // Appends to a base left in the file go to the tail.
            #[cfg(unix)]
            Inner::File { .. } => false,
        }
    }

    fn len(&self) -> usize {
        match &self.0 {
            #[cfg(unix)]
            Inner::File { len, .. } => *len,
            _ => self[..].len(),
        }
    }
}

/// The bytes held in memory: only the open (`as_read`) and the open's growth read a base this
/// way, before it can be left in the file; everything else reads through [`Base::get`].
impl Deref for Base {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Inner::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Inner::Mapped { map, len } => &map[..*len],
            #[cfg(unix)]
            Inner::File { .. } => unreachable!("a base left in the file is read with Base::get"),
        }
    }
}

impl Clone for FileBytes {
    /// Shares the base; copies only what was appended into the tail.
    fn clone(&self) -> FileBytes {
        FileBytes { base: Arc::clone(&self.base), tail: self.tail.clone(), changed: Arc::clone(&self.changed) }
    }
}

impl Default for FileBytes {
    fn default() -> FileBytes {
        FileBytes::from(Vec::new())
    }
}

impl From<Vec<u8>> for FileBytes {
    fn from(v: Vec<u8>) -> FileBytes {
        FileBytes::from_base(Base(Inner::Heap(v)))
    }
}

/// Asks for transparent huge pages over the whole huge pages of `map` that its first `n` bytes
/// fill (none below 2 MiB). Faulting a 4 KiB page in costs about 3 µs here, and the halves'
/// 550 pages of the 1000-entry session (2.25 MB) were about a fifth of its open; one fault of a
/// huge page takes the place of 512: that open took 4.08 ms against 4.61 ms (median of 100
/// interleaved rounds, 0.885×; p99 5.75 against 6.72 ms), a 7.2 MB one 12.2 against 13.7 ms.
/// Only the file's own bytes: the room after them, where appends go, stays in small pages, so
/// nothing is held beyond the file. Where Linux has no huge pages or finds no free 2 MiB block,
/// the advice does nothing and the pages come in one by one, as before.
#[cfg(target_os = "linux")]
fn advise_huge_pages(map: &memmap2::MmapMut, n: usize) {
    let at = map.as_ptr() as usize;
    let first = at.next_multiple_of(HUGE_PAGE) - at;
    let whole = n.saturating_sub(first) / HUGE_PAGE * HUGE_PAGE;
    if whole > 0 {
        let _ = map.advise_range(memmap2::Advice::HugePage, first, whole);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything the bytes hold, across the base and the tail.
    fn all(b: &FileBytes) -> Vec<u8> {
        b.copy_range(0, b.len()).unwrap()
    }

    #[test]
    fn a_big_file_reads_whole_and_grows_past_its_room() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.jsonl");
        // Not a multiple of anything: the last partial page must come through.
        let body: Vec<u8> = (0..MAPPED_MIN_BYTES + 12_345).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &body).unwrap();
        let mut b = FileBytes::read(&p).unwrap();
        #[cfg(target_os = "linux")]
        assert!(matches!(b.base.0, Inner::Mapped { .. }), "a big file goes to anonymous memory on Linux");
        assert_eq!(b.as_read(), &body[..]);
        // Appends fill the room left, then go to the tail: the base never moves.
        let base_at = b.base.as_ptr();
        let mut want = body.clone();
        let mut starts = Vec::new();
        for i in 0..5 {
            let more = vec![b'a' + i as u8; ROOM / 2 + 7];
            starts.push((b.len(), more.len()));
            b.extend_from_slice(&more);
            want.extend_from_slice(&more);
            assert_eq!(b.len(), want.len());
        }
        assert_eq!(b.base.as_ptr(), base_at, "the base was moved (copied)");
        #[cfg(target_os = "linux")]
        assert!(!b.tail.is_empty(), "past the room, appends go to the tail");
        assert_eq!(all(&b), want);
        for (s, n) in starts {
            assert_eq!(b.slice(s, s + n).unwrap(), &want[s..s + n]);
        }
        let c = b.clone();
        assert_eq!(all(&c), want);
    }

    /// A clone shares the bytes read at open: appends to either copy go to its own tail, and
    /// neither sees the other's.
    #[test]
    fn clones_share_the_base_and_keep_their_own_appends() {
        let body: Vec<u8> = b"{\"type\":\"session\"}\n".repeat(1000);
        let mut a = FileBytes::from(body.clone());
        let mut b = a.clone();
        assert!(std::ptr::eq(a.base.as_ptr(), b.base.as_ptr()), "a clone copied the base");
        a.extend_from_slice(b"a\n");
        b.extend_from_slice(b"bb\n");
        // The base is held twice: neither append went into it.
        assert_eq!(a.base_len(), body.len());
        assert_eq!(all(&a), [&body[..], b"a\n"].concat());
        assert_eq!(all(&b), [&body[..], b"bb\n"].concat());
        assert_eq!(b.slice(body.len(), body.len() + 2).unwrap(), &b"bb"[..]);
        assert_eq!(a.copy_range(body.len() - 1, a.len()).unwrap(), b"\na\n");
        assert_eq!(a.copy_range(body.len() - 1, body.len() + 1).unwrap(), b"\na");
        assert_eq!(a.copy_range(3, 9).unwrap(), &body[3..9]);
        // Once alone again (the clone dropped), the base still keeps the order: a's next
        // append follows its tail, not the base.
        drop(b);
        a.extend_from_slice(b"c\n");
        assert_eq!(all(&a), [&body[..], b"a\nc\n"].concat());
    }

    /// A file cut after its size was read: the halves' read fails (and `read` starts over).
    /// Read whole, each half's work gets that half's bytes and where it lies.
    #[cfg(target_os = "linux")]
    #[test]
    fn reading_halves_past_the_end_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cut.jsonl");
        let body: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&p, &body).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        for touch in [false, true] {
            let mut b = Base::mapped(2001).unwrap();
            let cut = b.read_halves(&f, 2000, 1000, touch, |_| (), |_, _| ());
            assert_eq!(cut.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
            let mut b = Base::mapped(1001).unwrap();
            let (first, (second, at)) =
                b.read_halves(&f, 1000, 550, touch, |h| h.to_vec(), |h, at| (h.to_vec(), at)).unwrap();
            assert_eq!(&b[..], &body[..]);
            assert_eq!((&first[..], &second[..], at), (&body[..550], &body[550..], 550));
        }
    }

    /// A file between the two sizes goes to populated anonymous memory: read whole, then
    /// appends fill its room and go to the tail, as a big file's do.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_mid_size_file_reads_whole_into_populated_memory() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mid.jsonl");
        // Read in halves, pages written first: every byte comes through.
        let body: Vec<u8> = (0..HALVES_MIN_BYTES + 8_191).map(|i| (i % 241) as u8).collect();
        std::fs::write(&p, &body).unwrap();
        assert_eq!(FileBytes::read(&p).unwrap().as_read(), &body[..]);
        let body: Vec<u8> = (0..POPULATED_MIN_BYTES + 4_099).map(|i| (i % 249) as u8).collect();
        std::fs::write(&p, &body).unwrap();
        let mut b = FileBytes::read(&p).unwrap();
        assert!(matches!(b.base.0, Inner::Mapped { .. }), "a mid-size file goes to anonymous memory");
        assert_eq!(b.as_read(), &body[..]);
        let more = vec![b'z'; ROOM + 1];
        b.extend_from_slice(b"x\n");
        assert!(b.tail.is_empty(), "the first append goes into the room");
        b.extend_from_slice(&more);
        assert!(!b.tail.is_empty(), "past the room, appends go to the tail");
        assert_eq!(all(&b), [&body[..], b"x\n", &more[..]].concat());
        // A file cut after its size was read: the read fails (and `read` starts over).
        let f = std::fs::File::open(&p).unwrap();
        let mut short = Base::mapped(body.len() + 2).unwrap();
        assert_eq!(short.read_populated(&f, body.len() + 1).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    }

    /// The flags of the mapping of this process that holds `addr` (`/proc/self/smaps`): its
    /// range and its `VmFlags`.
    #[cfg(target_os = "linux")]
    fn mapping_at(addr: usize) -> (usize, usize, String) {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut cur: Option<(usize, usize)> = None;
        for line in smaps.lines() {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                if let Some((a, b)) = cur.filter(|&(a, b)| (a..b).contains(&addr)) {
                    return (a, b, flags.trim().to_string());
                }
            } else if let Some((range, _)) = line.split_once(' ') {
                if let Some((a, b)) = range.split_once('-') {
                    if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                        cur = Some((a, b));
                    }
                }
            }
        }
        panic!("no mapping holds {addr:#x}");
    }

    /// A file read in halves asks for huge pages over exactly the whole huge pages its bytes
    /// fill: not before them, not over the room after them (where appends go).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_read_in_halves_asks_for_huge_pages_over_its_bytes() {
        if !Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            eprintln!("no transparent huge pages in this kernel: nothing to check");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("halves.jsonl");
        let body: Vec<u8> = (0..5 * HUGE_PAGE / 2 + 1_234).map(|i| (i % 239) as u8).collect();
        std::fs::write(&p, &body).unwrap();
        let b = FileBytes::read(&p).unwrap();
        assert_eq!(b.as_read(), &body[..]);
        let at = b.base.as_ptr() as usize;
        let first = at.next_multiple_of(HUGE_PAGE);
        let end = at + body.len();
        assert!(end - first >= HUGE_PAGE, "a 5 MB file fills at least one whole huge page");
        let (a, z, flags) = mapping_at(first);
        assert!(flags.split(' ').any(|f| f == "hg"), "no huge page advice over the bytes: {flags}");
        assert_eq!((a, z), (first, first + (end - first) / HUGE_PAGE * HUGE_PAGE), "advised range");
        // Before the first whole huge page (if the mapping does not start on one), and the room.
        for outside in [at, end].into_iter().filter(|&x| x < first || x >= end) {
            let (_, _, flags) = mapping_at(outside);
            assert!(!flags.split(' ').any(|f| f == "hg"), "huge page advice at {outside:#x}: {flags}");
        }
    }

    #[test]
    fn a_small_file_stays_in_a_vec() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("small.jsonl");
        std::fs::write(&p, b"{\"type\":\"session\"}\n").unwrap();
        let mut b = FileBytes::read(&p).unwrap();
        assert!(matches!(b.base.0, Inner::Heap(_)));
        b.extend_from_slice(b"x");
        assert!(b.tail.is_empty(), "a small file's appends stay in its Vec");
        assert_eq!(all(&b), b"{\"type\":\"session\"}\nx");
        assert_eq!(
            &FileBytes::read(&dir.path().join("empty")).map(|_| ()).unwrap_err().kind(),
            &io::ErrorKind::NotFound
        );
    }
}
