//! View models: engine data turned into the DTOs the UI draws. No Tauri here, so every function
//! is testable without a window (tests/app.rs).

/// A wire copy of another crate's enum (the engine, the library and the summarizer have no
/// specta): same variants, same camelCase names, and a `From` that names every variant, so a
/// change there does not compile until the UI's type follows.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident from $engine:path { $($v:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ::serde::Serialize, ::specta::Type)]
        #[serde(rename_all = "camelCase")]
        pub enum $name {
            $($v),+
        }
        impl From<$engine> for $name {
            fn from(e: $engine) -> $name {
                use $engine as E;
                match e {
                    $(E::$v => $name::$v),+
                }
            }
        }
    };
}

pub mod budgets;
pub mod compare;
pub mod context;
pub mod detail;
pub mod export;
pub mod forks;
pub mod graph;
pub mod keys;
pub mod library;
pub mod notices;
pub mod quality;
pub mod recall;
pub mod review;
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

/// One of the engine's token estimates (an `f64`, whole) as the UI's number: a float would reach
/// the UI as `number | null` (JSON has no NaN).
pub fn token_count(n: f64) -> u32 {
    n.round().clamp(0.0, u32::MAX as f64) as u32
}
