//! Graph layout (in progress).
