//! The rule set, read once from `rules.toml` (compiled into the binary), and the search: keyword
//! prefilter, the regexes of the rules it selects, the checks of each match (entropy, allowlist,
//! stopwords), then the merge of overlapping findings.

use crate::{Finding, RuleInfo};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use std::sync::LazyLock;

const RULES_TOML: &str = include_str!("../rules.toml");

#[derive(Deserialize)]
struct File {
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    description: String,
    source: String,
    regex: String,
    keywords: Vec<String>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
}

struct Rule {
    id: String,
    description: String,
    source: String,
    regex: Regex,
    /// The capture group that is the secret (0: the whole match).
    group: usize,
    entropy: Option<f64>,
    allow: Vec<Regex>,
    /// Lowercase.
    stopwords: Vec<String>,
}

pub(crate) struct Engine {
    rules: Vec<Rule>,
    keywords: AhoCorasick,
    /// The rules each keyword pattern selects.
    keyword_rules: Vec<Vec<usize>>,
}

static ENGINE: LazyLock<Engine> = LazyLock::new(|| Engine::load(RULES_TOML).expect("rules.toml is valid"));

pub(crate) fn engine() -> &'static Engine {
    &ENGINE
}

/// Patterns match bytes with ASCII classes: the regex engines stay on their fast paths over
/// non-ASCII text, and every rule's characters are ASCII anyway.
fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern).unicode(false).size_limit(1 << 24).build().map_err(|e| format!("{pattern}: {e}"))
}

impl Engine {
    pub(crate) fn load(toml_text: &str) -> Result<Engine, String> {
        let file: File = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        let mut rules = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for (i, spec) in file.rules.into_iter().enumerate() {
            if spec.keywords.is_empty() {
                return Err(format!("rule {} has no keywords", spec.id));
            }
            for k in &spec.keywords {
                let k = k.to_ascii_lowercase();
                match words.iter().position(|w| *w == k) {
                    Some(p) => keyword_rules[p].push(i),
                    None => {
                        words.push(k);
                        keyword_rules.push(vec![i]);
                    }
                }
            }
            let regex = compile(&spec.regex)?;
            let group = if regex.captures_len() > 1 { 1 } else { 0 };
            rules.push(Rule {
                id: spec.id,
                description: spec.description,
                source: spec.source,
                regex,
                group,
                entropy: spec.entropy,
                allow: spec.allow.iter().map(|a| compile(a)).collect::<Result<_, _>>()?,
                stopwords: spec.stopwords.iter().map(|s| s.to_ascii_lowercase()).collect(),
            });
        }
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&words)
            .map_err(|e| e.to_string())?;
        Ok(Engine { rules, keywords, keyword_rules })
    }

    pub(crate) fn any_keyword(&self, bytes: &[u8]) -> bool {
        self.keywords.is_match(bytes)
    }

    pub(crate) fn infos(&'static self) -> Vec<RuleInfo> {
        self.rules.iter().map(|r| RuleInfo { id: &r.id, description: &r.description, source: &r.source }).collect()
    }

    pub(crate) fn find(&'static self, text: &str) -> Vec<Finding> {
        let bytes = text.as_bytes();
        // The rules whose keywords occur; overlapping matches, since one keyword may be a part
        // of another (`sk-` inside `sk-ant-`).
        let mut selected = vec![false; self.rules.len()];
        let mut left = self.rules.len();
        for m in self.keywords.find_overlapping_iter(bytes) {
            for &r in &self.keyword_rules[m.pattern().as_usize()] {
                if !selected[r] {
                    selected[r] = true;
                    left -= 1;
                }
            }
            if left == 0 {
                break;
            }
        }
        if left == self.rules.len() {
            return Vec::new();
        }
        // (start, end, rule index)
        let mut hits: Vec<(usize, usize, usize)> = Vec::new();
        for (i, rule) in self.rules.iter().enumerate().filter(|(i, _)| selected[*i]) {
            if rule.group == 0 {
                for m in rule.regex.find_iter(bytes) {
                    if rule.keeps(&bytes[m.start()..m.end()]) {
                        hits.push((m.start(), m.end(), i));
                    }
                }
            } else {
                for c in rule.regex.captures_iter(bytes) {
                    if let Some(m) = c.get(rule.group) {
                        if rule.keeps(&bytes[m.start()..m.end()]) {
                            hits.push((m.start(), m.end(), i));
                        }
                    }
                }
            }
        }
        if hits.is_empty() {
            return Vec::new();
        }
        // A match may end inside a multi-byte character (a bounded repetition of a negated
        // class): widen it to whole characters.
        for h in &mut hits {
            while !text.is_char_boundary(h.0) {
                h.0 -= 1;
            }
            while !text.is_char_boundary(h.1) {
                h.1 += 1;
            }
        }
        // Overlaps are merged: the union is the secret, named after the first rule in the file.
        hits.sort_unstable();
        let mut out: Vec<(usize, usize, usize)> = Vec::with_capacity(hits.len());
        for h in hits {
            match out.last_mut() {
                Some(last) if h.0 < last.1 => {
                    last.1 = last.1.max(h.1);
                    last.2 = last.2.min(h.2);
                }
                _ => out.push(h),
            }
        }
        out.into_iter().map(|(start, end, r)| Finding { kind: &self.rules[r].id, start, end }).collect()
    }
}

impl Engine {
    /// Milliseconds each rule's regex takes over `texts`, with no prefilter (`examples/rules_bench.rs`).
    pub(crate) fn time_rules(&self, texts: &[&[u8]]) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        let t = std::time::Instant::now();
        let n: usize = texts.iter().filter(|b| self.keywords.is_match(b)).count();
        out.push((format!("keywords ({n} texts hold one)"), t.elapsed().as_secs_f64() * 1e3));
        for r in &self.rules {
            let t = std::time::Instant::now();
            let mut n = 0;
            for b in texts {
                n += r.regex.find_iter(b).count();
            }
            out.push((format!("{} ({n} matches)", r.id), t.elapsed().as_secs_f64() * 1e3));
        }
        out
    }
}

impl Rule {
    /// Whether a match is a secret: long and random enough, and no allowlist or stopword says
    /// it is a look-alike.
    fn keeps(&self, secret: &[u8]) -> bool {
        if secret.is_empty() {
            return false;
        }
        if let Some(min) = self.entropy {
            if entropy(secret) < min {
                return false;
            }
        }
        if self.allow.iter().any(|a| a.is_match(secret)) {
            return false;
        }
        if !self.stopwords.is_empty() {
            let lower = secret.to_ascii_lowercase();
            if self.stopwords.iter().any(|w| memchr::memmem::find(&lower, w.as_bytes()).is_some()) {
                return false;
            }
        }
        true
    }
}

/// Shannon entropy in bits per byte: 0 for one repeated byte, 4 for random hex, about 6 for
/// random base64.
pub(crate) fn entropy(s: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / n).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_file_loads_and_every_rule_has_a_source() {
        let e = Engine::load(RULES_TOML).unwrap();
        assert!(e.rules.len() >= 25);
        for r in &e.rules {
            assert!(r.source == "gitleaks" || r.source == "arbor", "{}: source {}", r.id, r.source);
            assert!(!r.description.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn a_bad_rule_file_is_an_error_not_a_panic() {
        assert!(Engine::load("[[rules]]\nid = \"x\"").is_err());
        let bad = "[[rules]]\nid='x'\ndescription='d'\nsource='arbor'\nregex='''('''\nkeywords=['x']";
        assert!(Engine::load(bad).err().unwrap().contains('('));
        let no_kw = "[[rules]]\nid='x'\ndescription='d'\nsource='arbor'\nregex='''x'''\nkeywords=[]";
        assert!(Engine::load(no_kw).err().unwrap().contains("no keywords"));
    }

    #[test]
    fn entropy_of_known_strings() {
        assert_eq!(entropy(b"aaaa"), 0.0);
        assert!((entropy(b"abcd") - 2.0).abs() < 1e-9);
        assert!(entropy(b"0123456789abcdef") >= 4.0 - 1e-9);
    }
}
