//! Arbor desktop app (placeholder until the app crate lands).
pub fn placeholder() {}
