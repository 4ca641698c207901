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
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;

/// Files of this size or more go to anonymous memory; smaller ones stay in a `Vec` (small files
/// are most of what users open, and their few faults cost little).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const MAPPED_MIN_BYTES: usize = 8 << 20;
/// Room left after a mapped file's bytes for what is appended while it is open (a full buffer
/// moves to a bigger one: one copy).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const ROOM: usize = 2 << 20;

/// A session file's bytes: a `Vec`, or for big files on Linux anonymous memory with room to grow.
pub(crate) struct FileBytes(Inner);

enum Inner {
    Heap(Vec<u8>),
    #[cfg(target_os = "linux")]
    Mapped {
        map: memmap2::MmapMut,
        len: usize,
    },
}

impl FileBytes {
    /// Reads the whole file (to its end as read, even if it grows meanwhile).
    pub(crate) fn read(path: &Path) -> io::Result<FileBytes> {
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len() as usize;
        #[cfg(target_os = "linux")]
        if len >= MAPPED_MIN_BYTES {
            if let Some(mut b) = FileBytes::mapped(len + 1) {
                if b.read_halves(&f, len).is_ok() {
                    // Whatever was appended since the size was read.
                    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(len as u64))?;
                    b.read_to_end(&mut f)?;
                    return Ok(b);
                }
                // Shorter than its size said (cut meanwhile) or a read error: read it again
                // from the start, one way, which reports the error if there is one.
            }
        }
        // As `std::fs::read`: one more byte than the size, so the end is found without growing.
        let mut v = Vec::with_capacity(len + 1);
        f.read_to_end(&mut v)?;
        Ok(FileBytes(Inner::Heap(v)))
    }

    /// Empty anonymous memory for at least `min` bytes, or `None` if the system refuses it.
    #[cfg(target_os = "linux")]
    fn mapped(min: usize) -> Option<FileBytes> {
        let map = memmap2::MmapOptions::new().len(min + ROOM).map_anon().ok()?;
        Some(FileBytes(Inner::Mapped { map, len: 0 }))
    }

    /// Reads the file's first `n` bytes into this empty mapped buffer, each half on its own
    /// thread (both fault their half's pages in at the same time).
    #[cfg(target_os = "linux")]
    fn read_halves(&mut self, f: &std::fs::File, n: usize) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let Inner::Mapped { map, len } = &mut self.0 else { unreachable!("read_halves on a Vec") };
        let h = n / 2;
        let (first, second) = map[..n].split_at_mut(h);
        std::thread::scope(|s| {
            let other = s.spawn(|| f.read_exact_at(second, h as u64));
            let mine = f.read_exact_at(first, 0);
            let other = other.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            mine.and(other)
        })?;
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
            };
            match f.read(&mut map[*len..]) {
                Ok(0) => return Ok(()),
                Ok(n) => *len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Room for `extra` more bytes: a full mapped buffer moves to a bigger one (one copy).
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    fn reserve(&mut self, extra: usize) {
        #[cfg(target_os = "linux")]
        if let Inner::Mapped { map, len } = &self.0 {
            if map.len() - len < extra {
                let whole = len + extra;
                let mut bigger = FileBytes::mapped(whole + whole / 8)
                    .unwrap_or_else(|| FileBytes(Inner::Heap(Vec::with_capacity(whole))));
                bigger.extend_from_slice(self);
                *self = bigger;
            }
        }
    }

    pub(crate) fn extend_from_slice(&mut self, more: &[u8]) {
        self.reserve(more.len());
        match &mut self.0 {
            Inner::Heap(v) => v.extend_from_slice(more),
            #[cfg(target_os = "linux")]
            Inner::Mapped { map, len } => {
                map[*len..*len + more.len()].copy_from_slice(more);
                *len += more.len();
            }
        }
    }

    /// A copy of `bytes`, in anonymous memory when they are many.
    fn copy_of(bytes: &[u8]) -> FileBytes {
        #[cfg(target_os = "linux")]
        if bytes.len() >= MAPPED_MIN_BYTES {
            if let Some(mut b) = FileBytes::mapped(bytes.len()) {
                b.extend_from_slice(bytes);
                return b;
            }
        }
        FileBytes(Inner::Heap(bytes.to_vec()))
    }
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Inner::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Inner::Mapped { map, len } => &map[..*len],
        }
    }
}

impl Clone for FileBytes {
    fn clone(&self) -> FileBytes {
        FileBytes::copy_of(self)
    }
}

impl Default for FileBytes {
    fn default() -> FileBytes {
        FileBytes(Inner::Heap(Vec::new()))
    }
}

impl From<Vec<u8>> for FileBytes {
    fn from(v: Vec<u8>) -> FileBytes {
        FileBytes(Inner::Heap(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_file_reads_whole_and_grows_past_its_room() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.jsonl");
        // Not a multiple of anything: the last partial page must come through.
        let body: Vec<u8> = (0..MAPPED_MIN_BYTES + 12_345).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &body).unwrap();
        let mut b = FileBytes::read(&p).unwrap();
        #[cfg(target_os = "linux")]
        assert!(matches!(b.0, Inner::Mapped { .. }), "a big file goes to anonymous memory on Linux");
        assert_eq!(&b[..], &body[..]);
        // Appends beyond the room left move the bytes to a bigger buffer, in order.
        let mut want = body.clone();
        for i in 0..5 {
            let more = vec![b'a' + i as u8; ROOM / 2 + 7];
            b.extend_from_slice(&more);
            want.extend_from_slice(&more);
            assert_eq!(b.len(), want.len());
        }
        assert_eq!(&b[..], &want[..]);
        let c = b.clone();
        assert_eq!(&c[..], &want[..]);
    }

    /// A file cut after its size was read: the halves' read fails (and `read` starts over).
    #[cfg(target_os = "linux")]
    #[test]
    fn reading_halves_past_the_end_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cut.jsonl");
        std::fs::write(&p, vec![b'x'; 1000]).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let mut b = FileBytes::mapped(2001).unwrap();
        assert_eq!(b.read_halves(&f, 2000).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let mut b = FileBytes::mapped(1001).unwrap();
        b.read_halves(&f, 1000).unwrap();
        assert_eq!(&b[..], &[b'x'; 1000][..]);
    }

    #[test]
    fn a_small_file_stays_in_a_vec() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("small.jsonl");
        std::fs::write(&p, b"{\"type\":\"session\"}\n").unwrap();
        let mut b = FileBytes::read(&p).unwrap();
        assert!(matches!(b.0, Inner::Heap(_)));
        b.extend_from_slice(b"x");
        assert_eq!(&b[..], b"{\"type\":\"session\"}\nx");
        assert_eq!(
            &FileBytes::read(&dir.path().join("empty")).map(|_| ()).unwrap_err().kind(),
            &io::ErrorKind::NotFound
        );
    }
}
