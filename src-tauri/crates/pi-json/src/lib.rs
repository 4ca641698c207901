//! JSON with JavaScript semantics: the subset of `JSON.parse` / `JSON.stringify` behaviour that
//! byte compatibility with Pi depends on, and the line scanner that loading reads session lines
//! with. Every reader of a session line's JSON is here (ARCHITECTURE.md, "JSON readers").
//!
//! The seam: this crate depends on nothing of Arbor's. It knows JSON and UTF-16, not sessions:
//! the scanner picks out the fields the loader asks for (`type`, `id`, `parentId`, `timestamp`,
//! `message.role`) by name, and decides nothing about what a line means.
//!
//! * Objects keep their key order; a repeated key keeps its first position and takes the last
//!   value, as `JSON.parse` does.
//! * Numbers are `f64`, parsed with correct rounding and written in ECMAScript's shortest
//!   round-trip form (`1e+21`, `1e-7`, `-0` → `0`); non-finite numbers are written as `null`.
//! * Strings are Rust `String`s. JavaScript strings can hold lone UTF-16 surrogates (Pi's
//!   2000-unit truncation makes them), which a `String` cannot. We carry each lone surrogate
//!   `0xD800 + k` as the stand-in scalar `U+10F800 + k` (the top of plane 16's private use
//!   area). Every UTF-16 helper here counts a stand-in as one code unit, and the writer emits it
//!   as `\udXXX`, so lengths, truncation, sorting and written bytes match Pi. The one known
//!   deviation: real text containing U+10F800..U+10FFFF is treated as lone surrogates.
//! * Nesting deeper than [`MAX_DEPTH`] is an error, never a stack overflow.
//!
//! The parts: [`Value`] and [`Map`] (`value`), an object's [`Key`] (`key`), the UTF-16 helpers and stand-ins (`utf16`),
//! the `JSON.stringify` writer (`write`), `JSON.stringify(v, null, 2)` (`pretty`), the
//! `JSON.parse` parser (`parse`), the line scanner of loading (`scan`) and the message-head
//! walk of the library's picker facts (`head`).
//!
//! Left out on purpose: files and sessions (nothing here opens a file), and serde's data model:
//! a [`Value`] is built by [`parse`] and written by [`to_string`]; serde_json is used only inside
//! the scanner's fast path.

mod head;
mod key;
mod parse;
mod pretty;
mod scan;
pub mod skip;
#[cfg(test)]
mod testing;
mod utf16;
mod value;
mod write;

pub use head::{message_head, MessageHead};
pub use key::{Key, KNOWN as KNOWN_KEYS};
pub use parse::{parse, parse_bytes, JsonError, MAX_DEPTH};
pub use pretty::to_pretty;
pub use scan::{raw_str, raw_str_borrowed, scan_line, scan_line_fast, Field, RawStr, ScannedLine};
pub use utf16::{cmp_utf16, from_utf16, sort_utf16, to_utf16, utf16_len, utf16_prefix};
pub use value::{obj, Map, Value};
pub use write::{number_to_string, quote, stringified_utf16_len, to_string, write_number, write_str, write_value};
