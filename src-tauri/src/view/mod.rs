//! View models: engine data turned into the DTOs the UI draws. No Tauri here, so every function
//! is testable without a window (tests/app.rs).
pub mod budgets;
pub mod context;
pub mod detail;
pub mod export;
pub mod graph;
pub mod library;
pub mod summary;
pub mod timeline;

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

/// The role of a message entry for drawing, without parsing the line when it has Pi's shape
/// (`"message":{"role":"…"` is how Pi serializes every message). Other shapes fall back to the
/// engine's parsed value. Display-only (graph kinds, picker facts): nothing that Pi computes depends on it.
pub fn message_role(s: &session_engine::Session, i: usize) -> Option<&str> {
    const KEY: &[u8] = br#""message":{"role":""#;
    let raw = s.raw(i);
    if let Some(at) = memchr::memmem::find(raw, KEY) {
        let rest = &raw[at + KEY.len()..];
        if let Some(end) = memchr::memchr(b'"', rest) {
            if let Ok(role) = std::str::from_utf8(&rest[..end]) {
                if !role.contains('\\') {
                    return Some(role);
                }
            }
        }
    }
    s.role(i)
}
