//! library crate (in progress).
