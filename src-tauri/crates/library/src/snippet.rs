//! Search snippets, made from the session files and without secrets.
//!
//! The full-text table keeps no copy of the text (`content=''`: the copy was more than half of
//! the index), nor does the entry row keep the role and timestamp a hit shows. A hit's entry row
//! says where its line is in the file (`off`, `len`) and the hash of the text indexed from it,
//! role and timestamp included (`bh`); the line is read again, they are extracted again by the
//! same rule ([`crate::analyze::line_text`]), and only a line that gives the same hash gives a
//! snippet, role and timestamp. A file changed at that place, replaced or gone gives a hit
//! without them (never a snippet cut from other text, nor another entry's time), and the search
//! has the file read again. An append does not move earlier lines: their snippets stay. The
//! snippet itself is SQLite's `snippet()` on that text in a small in-memory FTS5 table with the
//! index's tokenizer and the same query, so it is the one the full-text table gave when it kept
//! the text.
//!
//! SQLite's `snippet()` cuts a few words out of an entry's
//! indexed text and marks the matches with `«` `»`; a secret in that text (an API key a tool
//! printed) would be shown as is, or cut in half at the snippet's edge where no rule would
//! recognize it. So the secrets are found in the whole indexed text (`secrets::find`) and every
//! part of the snippet that lies inside one is replaced by `[redacted: kind]`, markers kept
//! around it. The index itself keeps the words (it is a cache of the session, on the user's
//! machine, and a search for a key must still find its entry).
use crate::analyze;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// Where a hit's text is: its file and the entry's place in it, as the index recorded them.
pub(crate) struct Place {
    pub file_id: i64,
    pub path: PathBuf,
    /// A legacy file, migrated in memory: its entries' text comes from the engine's load (the
    /// entry whose line starts at the offset).
    pub migrated: bool,
    /// (offset, length, text hash); `None` for an entry indexed without them.
    pub loc: Option<(i64, i64, i64)>,
}

/// The text, role and timestamp each place was indexed with, read again from its file; `None`
/// where the file does not give them any more (changed there, replaced, gone, unreadable). Also
/// the files that did not (file id, path), once each.
pub(crate) fn texts(places: &[Place]) -> (Vec<Option<analyze::LineText>>, Vec<(i64, PathBuf)>) {
    let mut files: HashMap<i64, Option<std::fs::File>> = HashMap::new();
    let mut loaded: HashMap<i64, Option<analyze::Loaded>> = HashMap::new();
    let mut changed: Vec<(i64, PathBuf)> = Vec::new();
    let mut out = Vec::with_capacity(places.len());
    for p in places {
        let text = p.loc.and_then(|(off, len, hash)| {
            let t = if p.migrated {
                let l = loaded.entry(p.file_id).or_insert_with(|| std::fs::read(&p.path).ok().map(analyze::load));
                let l = l.as_ref()?;
                // entries are in file order, one line each
                let i = l.s.entries().partition_point(|e| (e.start as i64) < off);
                let e = l.s.entries().get(i).filter(|e| e.start as i64 == off)?;
                let f = analyze::entry_facts(l.s.kind(i), l.s.value(i));
                analyze::LineText { body: f.body, role: f.role, timestamp: e.timestamp.to_string() }
            } else {
                let f = files.entry(p.file_id).or_insert_with(|| std::fs::File::open(&p.path).ok()).as_mut()?;
                let mut line = vec![0u8; usize::try_from(len).ok()?];
                f.seek(SeekFrom::Start(u64::try_from(off).ok()?)).ok()?;
                f.read_exact(&mut line).ok()?;
                analyze::line_text(&line)
            };
            (analyze::text_hash(&t.body, t.role.as_deref(), &t.timestamp) == hash).then_some(t)
        });
        if text.is_none() && !changed.iter().any(|c| c.0 == p.file_id) {
            changed.push((p.file_id, p.path.clone()));
        }
        out.push(text);
    }
    (out, changed)
}

/// The snippet with every part of a secret of `body` replaced. `snippet` is SQLite's
/// `snippet(fts, 0, '«', '»', '…', n)` of `body`.
pub(crate) fn redact_snippet(snippet: &str, body: &str) -> String {
    let found = secrets::find(body);
    if found.is_empty() {
        // Nothing in the text; the snippet is a part of it, so nothing in it either, unless its
        // own cut makes a new match (redacting that costs nothing).
        return secrets::redact(snippet).0;
    }
    // The snippet's text without its markers, and where the markers were.
    let mut plain = String::with_capacity(snippet.len());
    let mut markers: Vec<(usize, char)> = Vec::new();
    for c in snippet.chars() {
        if c == '«' || c == '»' {
            markers.push((plain.len(), c));
        } else {
            plain.push(c);
        }
    }
    // SQLite puts `…` where it cut the text: try without them first.
    let lead = plain.starts_with('…') && !body.starts_with('…');
    let trail = plain.ends_with('…') && plain.len() > '…'.len_utf8() && !body.ends_with('…');
    let from = if lead { '…'.len_utf8() } else { 0 };
    let to = if trail { plain.len() - '…'.len_utf8() } else { plain.len() };
    let core = &plain[from..to];
    let at: Vec<usize> =
        if core.is_empty() { Vec::new() } else { body.match_indices(core).map(|(i, _)| i).take(64).collect() };
    if at.is_empty() {
        // The snippet is not a plain part of the text (a marker character in the text itself):
        // say that a secret is there rather than risk showing a part of it.
        return format!("[redacted: this entry holds {}]", found[0].kind);
    }
    // The parts of `core` inside a secret, wherever `core` sits in the text (it may sit at
    // several places; each is covered).
    let mut ranges: Vec<(usize, usize, &'static str)> = Vec::new();
    for &o in &at {
        for f in &found {
            let (s, e) = (f.start.max(o), f.end.min(o + core.len()));
            if s < e {
                ranges.push((s - o, e - o, f.kind));
            }
        }
    }
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize, &'static str)> = Vec::new();
    for r in ranges {
        match merged.last_mut() {
            Some(last) if r.0 <= last.1 => last.1 = last.1.max(r.1),
            _ => merged.push(r),
        }
    }
    // Rebuild: the markers at their places, those inside a secret moved to its edges.
    let markers: Vec<(usize, char)> =
        markers.into_iter().filter(|&(p, _)| p >= from).map(|(p, c)| (p - from, c)).collect();
    let mut out = String::with_capacity(snippet.len());
    if lead {
        out.push('…');
    }
    let (mut i, mut mi, mut ri) = (0, 0, 0);
    loop {
        while mi < markers.len() && markers[mi].0 <= i {
            out.push(markers[mi].1);
            mi += 1;
        }
        if ri < merged.len() && merged[ri].0 == i {
            let (_, end, kind) = merged[ri];
            let mut closes = 0;
            while mi < markers.len() && markers[mi].0 < end {
                if markers[mi].1 == '«' {
                    out.push('«');
                } else {
                    closes += 1;
                }
                mi += 1;
            }
            out.push_str(&secrets::placeholder(kind));
            out.extend(std::iter::repeat_n('»', closes));
            i = end;
            ri += 1;
            continue;
        }
        let Some(c) = core[i..].chars().next() else { break };
        out.push(c);
        i += c.len_utf8();
    }
    while mi < markers.len() {
        out.push(markers[mi].1);
        mi += 1;
    }
    if trail {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact_snippet;

    const KEY: &str = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";

    #[test]
    fn a_snippet_without_secrets_is_unchanged() {
        assert_eq!(redact_snippet("…we «decided» to…", "so we decided to ship"), "…we «decided» to…");
    }

    #[test]
    fn a_whole_key_in_the_snippet_is_replaced_and_the_match_stays_marked() {
        let body = format!("the «token» GITHUB_TOKEN={KEY} was printed");
        let snippet = format!("…GITHUB_TOKEN={KEY} was «printed»");
        let out = redact_snippet(&snippet, &body.replace(['«', '»'], ""));
        assert_eq!(out, "…GITHUB_TOKEN=[redacted: github-token] was «printed»");
        // The search matched the key itself: the marker wraps the placeholder.
        let out = redact_snippet(&format!("export «{KEY}» now"), &format!("export {KEY} now"));
        assert_eq!(out, "export «[redacted: github-token]» now");
    }

    #[test]
    fn a_key_cut_by_the_snippet_is_still_replaced() {
        let body = "run with JWT eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c please";
        // SQLite cut the snippet inside the token (its tokenizer splits at `.`).
        let snippet = "…«JWT» eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0…";
        let out = redact_snippet(snippet, body);
        assert_eq!(out, "…«JWT» [redacted: jwt]…");
    }

    #[test]
    fn a_snippet_that_is_not_part_of_the_text_names_the_secret_only() {
        let out = redact_snippet("«odd» text", &format!("other {KEY}"));
        assert_eq!(out, "[redacted: this entry holds github-token]");
    }
}
