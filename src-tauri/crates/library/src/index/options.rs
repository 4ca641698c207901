//! How files are read: whole, or in windows from a size on.
use std::path::Path;

/// How the indexer reads files. Carried by [`crate::Library`] (see
/// [`crate::Library::set_index_options`]) and [`crate::watch::WatchOptions`]; the defaults are
/// the app's. Tests lower the sizes to run the streamed path on small files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexOptions {
    /// Files from this size on (bytes) are read in windows, both phases at once, instead of
    /// being loaded whole: memory stays bounded by the window, not the file. Default 32 MB.
    pub stream_from: u64,
    /// Read size of a streamed read (bytes; 0 counts as 1). Default 4 MB.
    pub window: usize,
}

impl IndexOptions {
    /// Files of this size and more are streamed by default.
    pub const STREAM_FROM: u64 = 32 << 20;
    /// The default window. The reader's buffer and each batch of bodies on their way to the
    /// writer are about this size, and they are held while a big session is open beside them: on
    /// the 264 MB session the app's peak was 5 MB lower with 4 MB windows than with 8 (349
    /// against 354 MB, medians of six and four runs; phase 2's writer CPU unchanged).
    pub const WINDOW: usize = 4 << 20;

    /// The window, at least 1 byte.
    pub(crate) fn window(&self) -> usize {
        self.window.max(1)
    }

    /// `path` is read in windows (its size is `stream_from` or more).
    pub(crate) fn is_big(&self, path: &Path) -> bool {
        std::fs::metadata(path).map(|m| m.len() >= self.stream_from).unwrap_or(false)
    }
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions { stream_from: IndexOptions::STREAM_FROM, window: IndexOptions::WINDOW }
    }
}
