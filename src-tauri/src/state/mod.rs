//! What the app holds between commands, managed by Tauri: the open session with its graph layout
//! ([`app::AppState`]), Arbor's own small state file ([`state_file`]), the summarizer's setup,
//! the library, the running export, the waterfall's numbers and the command line's file. Files
//! of the app's own (Arbor's state, the model choice, Pi's budget settings) are read and written
//! here too. Commands call into this layer; it builds the view DTOs of `view/`.
//!
//! Every file below imports from this one (the lock helper) and this one from none of them.

pub mod app;
pub mod background;
pub mod budgets;
pub mod export;
pub mod launch;
pub mod layout;
pub mod library;
pub mod markers;
pub mod notices;
pub mod quality;
pub mod review;
pub mod state_file;
pub mod summarizer;
pub mod timeline;

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, recovering from poisoning. A lock is only poisoned when a command panicked while it
/// held it; the data is still consistent then (the app mutates shared state only after every
/// fallible step), so the next command goes on with it instead of failing forever.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
