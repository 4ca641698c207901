//! Secrets in text: API keys, tokens, private keys and `KEY=value` lines, found by a maintained
//! rule set and replaced by a placeholder that names their kind.
//!
//! Sessions hold what tools printed, so a session's text can hold the user's keys. Whatever
//! Arbor shows or writes outside the session (an export, a search snippet, and later a message
//! brought back into a context) passes through [`redact`]; the session file itself is never
//! changed.
//!
//! ```
//! let (text, found) = secrets::redact("export GITHUB_TOKEN=ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5");
//! assert_eq!(text, "export GITHUB_TOKEN=[redacted: github-token]");
//! assert_eq!(found[0].kind, "github-token");
//! assert_eq!((found[0].start, found[0].end), (20, 60));
//! ```
//!
//! The rules are data, `rules.toml` beside this crate (compiled in with `include_str!`): most
//! follow gitleaks' default configuration (MIT, named at the top of the file), the others are
//! key formats of the providers Pi talks to. What stays: hashes (git, sha256, lockfile
//! integrity), UUIDs, base64 data, ordinary hex and `KEY=value` lines whose value is a word, a
//! number, a path or has low entropy (`DEBUG=true`, `PORT=8080`).
//!
//! Speed: one Aho-Corasick pass over the text finds the rules' keywords (the gitleaks prefilter);
//! only the rules whose keywords occur run their regex, so a text without any keyword costs one
//! pass over its bytes. [`might_contain`] is that pass alone, for a caller that can skip work (a
//! JSON line need not be parsed when it holds no keyword).
//!
//! Positions are byte offsets into the text given, on `char` boundaries.

#[doc(hidden)]
pub mod corpus;
mod rules;

use rules::engine;

/// One secret in a text: the rule that found it and where it is (`text[start..end]`, bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Finding {
    /// The rule's id, e.g. `aws-access-key`, `jwt`, `private-key`, `secret-assignment`.
    pub kind: &'static str,
    pub start: usize,
    pub end: usize,
}

/// Every secret in `text`, in order, none overlapping (overlapping matches of several rules are
/// merged and named after the rule listed first in `rules.toml`).
pub fn find(text: &str) -> Vec<Finding> {
    engine().find(text)
}

/// `text` with every secret replaced by [`placeholder`], and the findings (positions in `text`).
pub fn redact(text: &str) -> (String, Vec<Finding>) {
    let found = find(text);
    (apply(text, &found), found)
}

/// One pass over a text that leaves the machine: the findings, and the text redacted, or as it
/// was when the person chose to keep its secrets (they still see the list).
pub fn redact_unless(text: &str, keep: bool) -> (String, Vec<Finding>) {
    let found = find(text);
    let out = if keep { text.to_string() } else { apply(text, &found) };
    (out, found)
}

/// `text` with the given findings (from [`find`] on this very text) replaced by placeholders.
pub fn apply(text: &str, found: &[Finding]) -> String {
    if found.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for f in found {
        out.push_str(&text[last..f.start]);
        out.push_str(&placeholder(f.kind));
        last = f.end;
    }
    out.push_str(&text[last..]);
    out
}

/// What stands for a secret of this kind: `[redacted: aws-access-key]`.
pub fn placeholder(kind: &str) -> String {
    format!("[redacted: {kind}]")
}

/// False when `bytes` holds none of the rules' keywords, so [`find`] on any text made of them
/// would find nothing. Bytes of a JSON line qualify only when no `\u` escape could hide a
/// keyword; see [`might_contain_json`].
pub fn might_contain(bytes: &[u8]) -> bool {
    engine().any_keyword(bytes)
}

/// [`might_contain`] for a JSON text (a session line): true also when the line has a `\u` escape,
/// since a keyword written with one is not in the raw bytes. The other escapes cannot hide one
/// (no keyword holds `"`, `\`, `/` or a control character).
pub fn might_contain_json(line: &[u8]) -> bool {
    might_contain(line) || memchr::memmem::find(line, b"\\u").is_some()
}

/// Milliseconds each rule takes over `texts` without the prefilter, for `examples/rules_bench.rs`.
#[doc(hidden)]
pub fn time_rules(texts: &[&[u8]]) -> Vec<(String, f64)> {
    engine().time_rules(texts)
}

/// A rule of the set, for documentation and reports.
#[derive(Clone, Copy, Debug)]
pub struct RuleInfo {
    pub id: &'static str,
    pub description: &'static str,
    /// `gitleaks` (adapted from its default configuration) or `arbor`.
    pub source: &'static str,
}

/// The rules, in priority order (a kind may have several).
pub fn rules() -> Vec<RuleInfo> {
    engine().infos()
}
