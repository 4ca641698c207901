//! summarizer crate (in progress).
