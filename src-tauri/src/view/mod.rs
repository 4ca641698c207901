//! View models: engine data turned into the DTOs the UI draws. No Tauri here, so every function
//! is testable without a window (tests/app.rs).
pub mod budgets;
pub mod context;
pub mod detail;
pub mod export;
pub mod graph;
pub mod keys;
pub mod library;
pub mod session;
pub mod summarize;
pub mod summary;
pub mod timeline;
pub mod window;

/// First `max` UTF-16-ish characters of `s` on one line, for row titles and previews.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
