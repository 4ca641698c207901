//! `ApiKey`: the only type that holds a key in memory.
//!
//! Architecture Invariant: an `ApiKey` never prints. It has no `Display`, its `Debug` is
//! `ApiKey(<redacted>)`, it is not `Serialize`, and its text is reachable only inside this
//! crate (`expose`), where request headers are built.
use std::fmt;

#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key. Only this crate and tests build keys from text; the UI stores keys through
    /// `keys::set_key` and never gets one back.
    pub fn new(text: impl Into<String>) -> ApiKey {
        ApiKey(text.into())
    }

    /// The key's text, for a request header. Crate-private on purpose.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Removes every occurrence of `key` from `text` (defence in depth for error bodies that echo
/// a key back, as some providers do with "Incorrect API key provided: sk-...").
pub(crate) fn scrub(text: &str, key: Option<&ApiKey>) -> String {
    let mut out = text.to_string();
    if let Some(k) = key {
        let k = k.expose();
        if k.len() >= 4 {
            out = out.replace(k, "<redacted>");
        }
    }
    // Also mask anything that looks like a common key prefix followed by a long token.
    mask_key_like(&out)
}

fn mask_key_like(text: &str) -> String {
    const PREFIXES: [&str; 4] = ["sk-", "sk_", "AIza", "xai-"];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for p in PREFIXES {
            if rest.starts_with(p) {
                let tail = &rest[p.len()..];
                let n = tail.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_').count();
                if n >= 16 {
                    out.push_str(p);
                    out.push_str("<redacted>");
                    rest = &tail[n..];
                    continue 'outer;
                }
            }
        }
        let ch = rest.chars().next().unwrap_or_default(); // rest is non-empty
        out.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn debug_is_redacted() {
        let k = ApiKey::new("sk-canary-1234567890abcdef");
        assert_eq!(format!("{k:?}"), "ApiKey(<redacted>)");
        assert!(!format!("{:?}", Some(k)).contains("canary"));
    }
    #[test]
    fn scrub_removes_key_and_key_like_tokens() {
        let k = ApiKey::new("my-private-key-value");
        let s = scrub("bad key my-private-key-value and sk-abcdefghijklmnopqrstuvwx end", Some(&k));
        assert!(!s.contains("my-private-key-value"));
        assert!(!s.contains("abcdefghijklmnop"));
        assert!(s.ends_with(" end"));
    }
}
