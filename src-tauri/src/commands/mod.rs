//! Commands. Each file pairs plain functions over `&AppState` (the command bodies, tested
//! without a window in tests/app.rs) with `#[tauri::command]` one-liners that map the error.
pub mod budgets;
pub mod clipboard;
pub mod compare;
pub mod export;
pub mod forks;
pub mod graph;
pub mod keys;
pub mod launch;
pub mod library;
pub mod model_window;
pub mod navigate;
pub mod notices;
pub mod preview;
pub mod quality;
pub mod recall;
pub mod rename;
pub mod review;
pub mod sessions;
pub mod summarize;
pub mod summary;
pub mod timeline;
