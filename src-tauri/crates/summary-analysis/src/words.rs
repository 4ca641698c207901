//! Word normalization shared by the diff, the drop alarm and the retention probe: lowercase,
//! markdown and punctuation stripped, stopwords out, a light English stemmer, and each CJK
//! character as a word of its own (those scripts have no spaces).

use rustc_hash::FxHashSet;

const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as", "is", "are",
    "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "into", "onto", "then", "than", "so",
    "we", "i", "you", "he", "she", "they", "our", "your", "my", "me", "us", "will", "has", "have", "had", "do", "does",
    "did", "not", "no", "yes", "can", "could", "should", "would", "all", "any", "some", "each", "also", "now", "there",
    "here", "which", "who", "what", "when", "where", "how", "via", "per", "etc", "none", "der", "die", "das", "und",
    "oder", "ein", "eine", "mit", "für", "von", "zu", "im", "ist", "den", "dem",
];

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF | 0xFF66..=0xFF9F)
}

fn stem(w: &str) -> &str {
    let n = w.len();
    if !w.is_ascii() || n < 4 {
        return w;
    }
    if n > 6 && w.ends_with("ing") {
        return &w[..n - 3];
    }
    if n > 5 && w.ends_with("ed") && !w.ends_with("eed") {
        return &w[..n - 2];
    }
    if w.ends_with("ies") && n > 4 {
        return &w[..n - 2]; // "entries" → "entri", "entry" stays: both rare enough
    }
    if w.ends_with("sses") || w.ends_with("xes") || w.ends_with("ches") || w.ends_with("shes") {
        return &w[..n - 2];
    }
    if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        return &w[..n - 1];
    }
    w
}

/// Calls `f` with each normalized word of `text` (stopwords included; see [`is_stopword`]).
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut cur = String::new();
    let flush = |cur: &mut String, f: &mut dyn FnMut(&str)| {
        if !cur.is_empty() {
            f(stem(cur));
            cur.clear();
        }
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut cur, &mut f);
            let mut b = [0u8; 4];
            f(c.encode_utf8(&mut b));
        } else if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                cur.push(l);
            }
        } else if c == '\'' || c == '\u{2019}' {
            // "don't" → "dont"
        } else {
            flush(&mut cur, &mut f);
        }
    }
    flush(&mut cur, &mut f);
}

pub(crate) fn is_stopword(w: &str) -> bool {
    STOPWORDS.contains(&w)
}

/// The set of content words (stopwords and one-letter ASCII words out).
pub(crate) fn word_set(text: &str) -> FxHashSet<String> {
    let mut set = FxHashSet::default();
    for_each_word(text, |w| {
        if !is_stopword(w) && (w.len() != 1 || !w.is_ascii()) {
            set.insert(w.to_string());
        }
    });
    set
}

/// Every normalized word, stopwords included (for "does the summary contain this word").
pub(crate) fn all_words(text: &str) -> FxHashSet<String> {
    let mut set = FxHashSet::default();
    for_each_word(text, |w| {
        set.insert(w.to_string());
    });
    set
}

/// The item text as a comparison key: normalized words joined by one space.
pub(crate) fn key(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for_each_word(text, |w| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    });
    out
}

/// Dice similarity of two word sets (1.0 for two empty sets).
pub(crate) fn dice(a: &FxHashSet<String>, b: &FxHashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let common = small.iter().filter(|w| large.contains(*w)).count();
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// Placeholders that are not content ("(none)", "none", "n/a", "-").
pub(crate) fn is_placeholder(t: &str) -> bool {
    let k = key(t);
    k.is_empty() || matches!(k.as_str(), "none" | "n a" | "na" | "nothing" | "nothing yet" | "tbd" | "keine" | "なし")
}

/// The fuzzy-match threshold for "same item".
pub(crate) const SIMILAR: f64 = 0.6;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_case_markdown_and_plurals() {
        assert_eq!(key("**Use** `PostgreSQL` tables!"), "use postgresql table");
        assert_eq!(key("Don't"), "dont");
        assert!(word_set("日本語").contains("語"));
    }
}
