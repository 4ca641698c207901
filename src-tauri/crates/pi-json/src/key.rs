//! An object's key: one of the keys Pi writes, held as its number in [`KNOWN`] (no allocation),
//! or any other text, held as its own.
//!
//! A session of 1000 entries has about 22,000 keys of some 60 names. As `String`s each was an
//! allocation of its own (32 bytes with the allocator's header) and a member was 56 bytes: the
//! keys were a sixth of the parsed values' memory, and a fresh process's parse is bound by the
//! page faults of that memory. A [`Key`] is 16 bytes and allocates only for a name Pi does not
//! write.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// The keys of Pi's session format (docs/FORMAT.md and Pi's own types): entries, messages,
/// content blocks, usage, tool arguments and details. At most 255 (a key's number is a `u8`).
pub const KNOWN: &[&str] = &[
    "type",
    "id",
    "parentId",
    "timestamp",
    "version",
    "cwd",
    "parentSession",
    "message",
    "role",
    "content",
    "text",
    "textSignature",
    "thinking",
    "thinkingSignature",
    "thoughtSignature",
    "redacted",
    "signature",
    "data",
    "mimeType",
    "name",
    "arguments",
    "toolCallId",
    "toolName",
    "isError",
    "details",
    "api",
    "provider",
    "model",
    "modelId",
    "responseId",
    "responseModel",
    "usage",
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "totalTokens",
    "cost",
    "total",
    "stopReason",
    "errorMessage",
    "diagnostics",
    "command",
    "exitCode",
    "cancelled",
    "truncated",
    "fullOutputPath",
    "excludeFromContext",
    "customType",
    "display",
    "summary",
    "fromId",
    "fromHook",
    "firstKeptEntryId",
    "tokensBefore",
    "readFiles",
    "modifiedFiles",
    "thinkingLevel",
    "targetId",
    "label",
    "path",
    "offset",
    "limit",
    "oldText",
    "newText",
    "edits",
    "diff",
    "firstChangedLine",
    "timeout",
    "truncation",
    "truncatedBy",
    "totalLines",
    "totalBytes",
    "outputLines",
    "outputBytes",
    "lastLinePartial",
    "firstLineExceedsLimit",
    "maxLines",
    "maxBytes",
    "items",
];

/// Slots of the lookup table (a power of two, at least twice [`KNOWN`]'s length).
const SLOTS: usize = 256;

/// Where a key's search in [`TABLE`] starts: its length and three of its bytes, mixed.
#[inline]
const fn slot_of(b: &[u8]) -> usize {
    let n = b.len();
    if n == 0 {
        return 0;
    }
    let h = (n as u32).wrapping_mul(0x9E37_79B9)
        ^ (b[0] as u32).wrapping_mul(0x85EB_CA6B)
        ^ (b[n - 1] as u32).wrapping_mul(0xC2B2_AE35)
        ^ (b[n / 2] as u32).wrapping_mul(0x27D4_EB2F);
    (h ^ (h >> 15)) as usize % SLOTS
}

/// Open addressing over [`KNOWN`]: a slot holds a known key's number plus one, 0 when empty; a
/// search goes on to the next slot until it finds its key or an empty slot.
static TABLE: [u8; SLOTS] = {
    let mut t = [0u8; SLOTS];
    let mut k = 0;
    while k < KNOWN.len() {
        let mut s = slot_of(KNOWN[k].as_bytes());
        while t[s] != 0 {
            s = (s + 1) % SLOTS;
        }
        t[s] = k as u8 + 1;
        k += 1;
    }
    t
};

const _: () = assert!(KNOWN.len() <= 255 && KNOWN.len() * 2 <= SLOTS);

/// The number of a known key.
#[inline]
fn known(s: &str) -> Option<u8> {
    let mut at = slot_of(s.as_bytes());
    loop {
        match TABLE[at] {
            0 => return None,
            k if KNOWN[k as usize - 1] == s => return Some(k - 1),
            _ => at = (at + 1) % SLOTS,
        }
    }
}

/// An object's key (see the module's note): compares, hashes and reads as its text.
#[derive(Clone)]
pub struct Key(Repr);

#[derive(Clone)]
enum Repr {
    Known(u8),
    Own(Box<str>),
}

impl Key {
    /// The key for `s`, allocating only when it is not one of Pi's.
    #[inline]
    pub fn new(s: &str) -> Key {
        match known(s) {
            Some(k) => Key(Repr::Known(k)),
            None => Key(Repr::Own(s.into())),
        }
    }
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Known(k) => KNOWN[*k as usize],
            Repr::Own(s) => s,
        }
    }
}

impl Deref for Key {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        match (&self.0, &other.0) {
            (Repr::Known(a), Repr::Known(b)) => a == b,
            _ => self.as_str() == other.as_str(),
        }
    }
}
impl Eq for Key {}

impl PartialEq<str> for Key {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}
impl PartialEq<&str> for Key {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
impl PartialEq<String> for Key {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key::new(s)
    }
}
impl From<&String> for Key {
    fn from(s: &String) -> Key {
        Key::new(s)
    }
}
impl From<String> for Key {
    /// Keeps the string's allocation for a key Pi does not write.
    fn from(s: String) -> Key {
        match known(&s) {
            Some(k) => Key(Repr::Known(k)),
            None => Key(Repr::Own(s.into_boxed_str())),
        }
    }
}
impl From<&Key> for Key {
    fn from(k: &Key) -> Key {
        k.clone()
    }
}
impl From<Key> for String {
    fn from(k: Key) -> String {
        match k.0 {
            Repr::Known(k) => KNOWN[k as usize].to_string(),
            Repr::Own(s) => s.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every known key is found as itself, and is held without an allocation; other names,
    /// near misses of known ones included, are held as their own text.
    #[test]
    fn known_keys_are_found_and_others_kept() {
        for (i, k) in KNOWN.iter().enumerate() {
            assert_eq!(known(k), Some(i as u8), "{k}");
            let key = Key::new(k);
            assert!(matches!(key.0, Repr::Known(_)), "{k}");
            assert_eq!(&*key, *k);
        }
        let mut names: Vec<String> = KNOWN.iter().map(|k| format!("{k}x")).collect();
        names.extend(KNOWN.iter().map(|k| k.to_uppercase()));
        names.extend(KNOWN.iter().map(|k| k[..k.len() - 1].to_string()));
        names.extend(["", "é", "\u{10F800}", "ty\"pe"].map(String::from));
        for n in &names {
            if KNOWN.contains(&n.as_str()) {
                continue;
            }
            assert_eq!(known(n), None, "{n:?}");
            let key = Key::from(n.clone());
            assert!(matches!(key.0, Repr::Own(_)));
            assert_eq!(key, *n);
            assert_eq!(String::from(key), *n);
        }
        assert_eq!(std::mem::size_of::<Key>(), 16);
    }

    /// Keys compare as their text, whichever way each is held.
    #[test]
    fn keys_compare_as_text() {
        let own = Key(Repr::Own("type".into()));
        assert_eq!(own, Key::new("type"));
        assert_ne!(Key::new("type"), Key::new("id"));
        assert_ne!(Key::new("other"), Key::new("type"));
        assert_eq!(Key::new("other"), Key::from("other".to_string()));
    }
}
