//! A lossless parser for summary texts: sections (ATX headings, `#` inside fenced code blocks
//! ignored), their items (bullets, numbered items, checkboxes with their state, nested by
//! indent, with continuation lines) and free text, the `<read-files>` / `<modified-files>`
//! appendix (Pi §12.5) and the split-turn part (§12.3).
//!
//! Every section keeps its exact bytes in `raw`, so [`print`] gives back the input byte for
//! byte. The parser is one pass over the lines (linear in the text), with no regular
//! expressions and no recursion, so a 1 MB summary or a deeply nested list is no problem.
//!
//! Layout rules:
//! * Text before the first heading is the untitled lead section (`title` "", `name`
//!   "(untitled)", `level` 0). When that text is only whitespace it is kept in the first
//!   section's `raw` instead. A summary without headings is one untitled section; an empty
//!   summary has no sections.
//! * A section runs from its heading line to the next heading of any level, so a `##` that has
//!   `###` subsections holds only its own lines. Names join the titles of the enclosing
//!   headings with " › " ("Progress › Done"); a repeated name gets " (2)", " (3)", ...
//! * The appendix is the run of `<read-files>` / `<modified-files>` blocks at the very end (the
//!   blank lines before it and any whitespace after it included).
//! * A split-turn summary (`"\n\n---\n\n**Turn Context (split turn):**\n\n"`): the part after
//!   the marker starts with a section titled "Turn Context (split turn)" (name "Turn Context",
//!   level 0) whose `raw` begins with the marker; the part's own sections follow, named
//!   "Turn Context › …".

use rustc_hash::FxHashMap;
use serde::Serialize;

/// The separator Pi puts between the history summary and the split turn's prefix summary.
pub const TURN_CONTEXT_MARKER: &str = "\n\n---\n\n**Turn Context (split turn):**\n\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Marker {
    Bullet,
    Numbered,
    Checkbox,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// The item's text without its marker; continuation lines joined with "\n".
    pub text: String,
    pub marker: Marker,
    /// `Some(_)` only for checkboxes.
    pub checked: Option<bool>,
    /// 0 = top level, 1 = nested once, ...
    pub depth: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SectionRole {
    Goal,
    Constraints,
    Done,
    InProgress,
    Blocked,
    Decisions,
    NextSteps,
    CriticalContext,
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Section {
    /// Heading text without the `#`s, trimmed; "" for text before the first heading.
    pub title: String,
    /// Unique, human name ("Progress › Done"; "(untitled)" for the lead section).
    pub name: String,
    /// 0 for the untitled lead section (and the split-turn marker section), else 1..=6.
    pub level: u8,
    pub items: Vec<Item>,
    /// The free text (non-item, non-blank lines, trimmed) joined with "\n".
    pub text: String,
    /// The exact bytes of the section, heading line included.
    pub raw: String,
    /// [`role_of`] this section.
    pub role: SectionRole,
    /// The section belongs to the split turn's prefix summary.
    pub turn_prefix: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub sections: Vec<Section>,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    /// The exact appendix text (may be ""), so [`print`] round-trips.
    pub appendix_raw: String,
    /// The text after the split-turn marker (before the appendix), for split-turn summaries.
    pub turn_prefix: Option<String>,
}

impl Summary {
    /// Sections of the history part (not the split turn's prefix).
    pub fn history_sections(&self) -> impl Iterator<Item = &Section> {
        self.sections.iter().filter(|s| !s.turn_prefix)
    }
    /// The section with this role, if any (the first one).
    pub fn section_by_role(&self, role: SectionRole) -> Option<&Section> {
        self.sections.iter().find(|s| s.role == role)
    }
}

/// Parses a summary text. Never fails; linear in the text's length.
pub fn parse(text: &str) -> Summary {
    let (body_end, read_files, modified_files) = find_appendix(text);
    let body = &text[..body_end];
    let mut p = Parts { sections: Vec::new(), names: FxHashMap::default(), read: Vec::new(), modified: Vec::new() };
    let turn_prefix = match memchr::memmem::find(body.as_bytes(), TURN_CONTEXT_MARKER.as_bytes()) {
        Some(at) => {
            p.part(&body[..at], None);
            let rest = &body[at + TURN_CONTEXT_MARKER.len()..];
            p.part(rest, Some(TURN_CONTEXT_MARKER));
            Some(rest.to_string())
        }
        None => {
            p.part(body, None);
            None
        }
    };
    let (mut r, mut m) = (p.read, p.modified);
    r.extend(read_files);
    m.extend(modified_files);
    Summary {
        sections: p.sections,
        read_files: r,
        modified_files: m,
        appendix_raw: text[body_end..].to_string(),
        turn_prefix,
    }
}

/// The text again: every section's `raw`, then the appendix.
pub fn print(s: &Summary) -> String {
    let mut out = String::with_capacity(s.sections.iter().map(|x| x.raw.len()).sum::<usize>() + s.appendix_raw.len());
    for sec in &s.sections {
        out.push_str(&sec.raw);
    }
    out.push_str(&s.appendix_raw);
    out
}

/// Replaces one section's body (everything after its heading line) and returns the whole new
/// summary text. The section keeps its heading and the blank lines that separated it from
/// the next one. An index out of range returns the text unchanged.
pub fn replace_section(text: &str, section_index: usize, new_body: &str) -> String {
    let p = parse(text);
    let Some(sec) = p.sections.get(section_index) else { return text.to_string() };
    let raw = sec.raw.as_str();
    let body_start = heading_end(sec);
    let body = &raw[body_start..];
    let kept_len = body.trim_end_matches(['\n', '\r', ' ', '\t']).len();
    let trailing = &body[kept_len..];
    let mut new_raw = String::with_capacity(raw.len() + new_body.len());
    new_raw.push_str(&raw[..body_start]);
    let new_body = new_body.trim_end_matches(['\n', '\r', ' ', '\t']);
    if body_start > 0 && !raw[..body_start].ends_with('\n') && !new_body.is_empty() {
        new_raw.push('\n');
    }
    new_raw.push_str(new_body);
    // Keep the separation from what follows; a section followed by a heading must end its line.
    let followed = section_index + 1 < p.sections.len();
    if trailing.is_empty() && followed && !new_raw.ends_with('\n') {
        new_raw.push('\n');
    } else {
        new_raw.push_str(trailing);
    }
    let mut out = String::with_capacity(text.len() + new_body.len());
    for (i, s) in p.sections.iter().enumerate() {
        out.push_str(if i == section_index { &new_raw } else { &s.raw });
    }
    out.push_str(&p.appendix_raw);
    out
}

/// Where the body of a section starts in its `raw`: after the heading line (leading blank
/// lines included), after the split-turn marker, or 0 for the untitled lead section.
fn heading_end(sec: &Section) -> usize {
    let raw = sec.raw.as_str();
    if let Some(rest) = raw.strip_prefix(TURN_CONTEXT_MARKER) {
        let _ = rest;
        return TURN_CONTEXT_MARKER.len();
    }
    if sec.level == 0 {
        return 0;
    }
    let mut pos = 0;
    while pos < raw.len() {
        let end = raw[pos..].find('\n').map(|e| pos + e + 1).unwrap_or(raw.len());
        let line = raw[pos..end].trim_end_matches(['\n', '\r']);
        if heading(line).is_some() {
            return end;
        }
        pos = end;
    }
    raw.len()
}

/// The role of a section, from its title (Pi's template headings, case-insensitive, plus the
/// aliases other writers and other languages use). "Progress" itself is `Other`; its
/// subsections "Done", "In Progress" and "Blocked" have their roles under any parent.
pub fn role_of(section: &Section) -> SectionRole {
    if section.level == 0 {
        return SectionRole::Other;
    }
    role_of_title(&section.title)
}

fn normalize_title(title: &str) -> String {
    let mut t: String =
        title.chars().filter(|c| !matches!(c, '*' | '_' | '`' | '#')).collect::<String>().to_lowercase();
    // Leading numbering ("1. Goal", "2) Done") and trailing punctuation.
    let trimmed = t.trim_start();
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && matches!(trimmed.as_bytes().get(digits), Some(b'.' | b')')) {
        t = trimmed[digits + 1..].to_string();
    }
    let t = t.trim().trim_end_matches([':', '：', '.', '。']).trim();
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn role_of_title(title: &str) -> SectionRole {
    use SectionRole::*;
    let t = normalize_title(title);
    let t = t.as_str();
    const GOAL: &[&str] = &[
        "goal",
        "goals",
        "objective",
        "objectives",
        "task",
        "the goal",
        "user goal",
        "primary request",
        "primary request and intent",
        "original request",
        "ziel",
        "ziele",
        "目標",
        "目的",
        "ゴール",
        "objectif",
        "objetivo",
        "目标",
    ];
    const CONSTRAINTS: &[&str] = &[
        "constraints & preferences",
        "constraints and preferences",
        "constraints",
        "preferences",
        "requirements",
        "rules",
        "user preferences",
        "constraints & requirements",
        "einschränkungen",
        "randbedingungen",
        "vorgaben",
        "einschränkungen & präferenzen",
        "einschränkungen und präferenzen",
        "制約",
        "制約と好み",
        "制約と設定",
        "制約事項",
        "contraintes",
        "restricciones",
        "约束",
    ];
    const DONE: &[&str] = &[
        "done",
        "completed",
        "completed work",
        "completed tasks",
        "completed steps",
        "finished",
        "accomplished",
        "what was done",
        "work completed",
        "early progress",
        "erledigt",
        "abgeschlossen",
        "fertig",
        "完了",
        "完了した作業",
        "完了済み",
        "terminé",
        "hecho",
        "已完成",
    ];
    const IN_PROGRESS: &[&str] = &[
        "in progress",
        "in-progress",
        "current work",
        "current status",
        "current state",
        "ongoing",
        "work in progress",
        "in arbeit",
        "進行中",
        "作業中",
        "en cours",
        "进行中",
    ];
    const BLOCKED: &[&str] = &[
        "blocked",
        "blockers",
        "blocking issues",
        "open issues",
        "blockiert",
        "ブロック",
        "ブロック中",
        "bloqué",
        "阻塞",
    ];
    const DECISIONS: &[&str] = &[
        "key decisions",
        "decisions",
        "decisions made",
        "technical decisions",
        "design decisions",
        "important decisions",
        "entscheidungen",
        "wichtige entscheidungen",
        "決定事項",
        "主な決定",
        "重要な決定",
        "décisions",
        "关键决策",
    ];
    const NEXT: &[&str] = &[
        "next steps",
        "next step",
        "next",
        "todo",
        "to do",
        "todos",
        "remaining work",
        "remaining tasks",
        "pending tasks",
        "nächste schritte",
        "次のステップ",
        "次の手順",
        "今後の作業",
        "prochaines étapes",
        "下一步",
    ];
    const CRITICAL: &[&str] = &[
        "critical context",
        "important context",
        "key context",
        "context for suffix",
        "key facts",
        "wichtiger kontext",
        "kritischer kontext",
        "重要なコンテキスト",
        "重要な文脈",
        "contexte critique",
        "关键上下文",
    ];
    for (list, role) in [
        (GOAL, Goal),
        (CONSTRAINTS, Constraints),
        (DONE, Done),
        (IN_PROGRESS, InProgress),
        (BLOCKED, Blocked),
        (DECISIONS, Decisions),
        (NEXT, NextSteps),
        (CRITICAL, CriticalContext),
    ] {
        if list.contains(&t) {
            return role;
        }
    }
    Other
}

/// Finds the appendix at the end: returns where the body ends and the two file lists.
fn find_appendix(text: &str) -> (usize, Vec<String>, Vec<String>) {
    const WS: [char; 4] = [' ', '\t', '\n', '\r'];
    let mut cut = text.trim_end_matches(WS).len();
    let mut read: Vec<Vec<String>> = Vec::new();
    let mut modified: Vec<Vec<String>> = Vec::new();
    let mut found = false;
    loop {
        let t = &text[..cut];
        let mut matched = false;
        for (open, close, is_read) in
            [("<modified-files>", "</modified-files>", false), ("<read-files>", "</read-files>", true)]
        {
            if !t.ends_with(close) {
                continue;
            }
            let inner_end = t.len() - close.len();
            let Some(at) = t[..inner_end].rfind(open) else { continue };
            if at > 0 && !t[..at].ends_with('\n') {
                continue;
            }
            let inner = &t[at + open.len()..inner_end];
            let files: Vec<String> =
                inner.split('\n').map(|l| l.trim()).filter(|l| !l.is_empty()).map(str::to_string).collect();
            if is_read {
                read.push(files);
            } else {
                modified.push(files);
            }
            cut = t[..at].trim_end_matches(WS).len();
            matched = true;
            found = true;
            break;
        }
        if !matched {
            break;
        }
    }
    if !found {
        return (text.len(), Vec::new(), Vec::new());
    }
    // Blocks were collected from the end; restore their order.
    let join = |v: Vec<Vec<String>>| v.into_iter().rev().flatten().collect::<Vec<_>>();
    (cut, join(read), join(modified))
}

struct Parts {
    sections: Vec<Section>,
    names: FxHashMap<String, usize>,
    /// File lists of `<read-files>` / `<modified-files>` blocks inside sections.
    read: Vec<String>,
    modified: Vec<String>,
}

impl Parts {
    fn unique(&mut self, name: String) -> String {
        let n = self.names.entry(name.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            name
        } else {
            format!("{name} ({n})")
        }
    }

    /// Parses one part (the history, or the split turn's prefix when `marker` is given).
    fn part(&mut self, text: &str, marker: Option<&str>) {
        let turn = marker.is_some();
        let prefix = if turn { "Turn Context › " } else { "" };
        let first_new = self.sections.len();
        let mut cur: Option<Builder> =
            marker.map(|m| Builder::new(m.to_string(), "Turn Context (split turn)".into(), 0, SectionRole::Other));
        let mut lead_start = 0usize; // start of pending text not yet owned by a section
        let mut stack: Vec<(u8, String)> = Vec::new();
        let mut fence: Option<(u8, usize)> = None;
        let outer = outer_fence(text);
        let mut pos = 0usize;
        let bytes = text.as_bytes();
        while pos < text.len() {
            let end = memchr::memchr(b'\n', &bytes[pos..]).map(|e| pos + e + 1).unwrap_or(text.len());
            let line_full = &text[pos..end];
            let line = line_full.trim_end_matches('\n').trim_end_matches('\r');
            let mut is_heading = None;
            let is_outer = outer.is_some_and(|(a, b)| pos == a || pos == b);
            if is_outer {
                // The fence around a whole answer ("```markdown ... ```"): plain text.
            } else if let Some((ch, len)) = fence {
                if closes_fence(line, ch, len) {
                    fence = None;
                }
            } else if let Some(f) = opens_fence(line) {
                fence = Some(f);
            } else {
                is_heading = heading(line);
            }
            if let Some((level, title)) = is_heading {
                // Close the current section (or the lead text).
                match cur.take() {
                    Some(b) => self.finish(b, turn, prefix),
                    None => {
                        let lead = &text[lead_start..pos];
                        if !lead.trim().is_empty() {
                            let mut b = Builder::new(String::new(), String::new(), 0, SectionRole::Other);
                            b.feed_text(lead);
                            self.finish(b, turn, prefix);
                            lead_start = pos;
                        }
                    }
                }
                while stack.last().is_some_and(|(l, _)| *l >= level) {
                    stack.pop();
                }
                let mut name = String::from(prefix);
                for (_, t) in &stack {
                    name.push_str(t);
                    name.push_str(" › ");
                }
                name.push_str(&title);
                stack.push((level, title.clone()));
                let role = role_of_title(&title);
                // Whitespace-only lead text belongs to the first section.
                let raw_start = if lead_start < pos && self.sections.len() == first_new { lead_start } else { pos };
                let mut b = Builder::new(text[raw_start..end].to_string(), title, level, role);
                b.name = name;
                cur = Some(b);
                lead_start = end;
            } else if let Some(b) = cur.as_mut() {
                b.raw.push_str(line_full);
                b.line(line, !is_outer && (fence.is_some() || closes_or_opens(line)));
                lead_start = end;
            }
            pos = end;
        }
        match cur.take() {
            Some(b) => self.finish(b, turn, prefix),
            None => {
                let lead = &text[lead_start..];
                if !lead.is_empty() {
                    if lead.trim().is_empty() && self.sections.len() > first_new {
                        // Trailing whitespace without a section cannot happen (sections run to the end).
                        self.sections.last_mut().expect("a section").raw.push_str(lead);
                    } else {
                        let mut b = Builder::new(String::new(), String::new(), 0, SectionRole::Other);
                        b.feed_text(lead);
                        self.finish(b, turn, prefix);
                    }
                }
            }
        }
    }

    fn finish(&mut self, b: Builder, turn: bool, prefix: &str) {
        let name = if b.level == 0 {
            if b.title.is_empty() {
                if turn {
                    format!("{prefix}(untitled)")
                } else {
                    "(untitled)".to_string()
                }
            } else {
                "Turn Context".to_string()
            }
        } else {
            b.name.clone()
        };
        let name = self.unique(name);
        self.read.extend(b.read);
        self.modified.extend(b.modified);
        let items = b.items;
        self.sections.push(Section {
            title: b.title,
            name,
            level: b.level,
            items,
            text: b.text.join("\n"),
            raw: b.raw,
            role: b.role,
            turn_prefix: turn,
        });
    }
}

/// A model answer wrapped as a whole in one ```` ```markdown ```` (or ```` ``` ````/`md`) fence:
/// the start offsets of its first and last lines.
fn outer_fence(text: &str) -> Option<(usize, usize)> {
    let first_start = text.len() - text.trim_start_matches(['\n', '\r', ' ', '\t']).len();
    let first_start = text[..first_start].rfind('\n').map(|p| p + 1).unwrap_or(0);
    let first_end = text[first_start..].find('\n').map(|e| first_start + e).unwrap_or(text.len());
    let first = text[first_start..first_end].trim_end_matches('\r');
    let (ch, len) = opens_fence(first)?;
    let info = first.trim_start().trim_start_matches(ch as char).trim().to_ascii_lowercase();
    if !matches!(info.as_str(), "" | "markdown" | "md") {
        return None;
    }
    let body_end = text.trim_end_matches(['\n', '\r', ' ', '\t']).len();
    let last_start = text[..body_end].rfind('\n').map(|p| p + 1).unwrap_or(0);
    if last_start <= first_start {
        return None;
    }
    let last = text[last_start..body_end].trim_end_matches('\r');
    if !closes_fence(last, ch, len) || opens_fence(last).is_some_and(|(_, n)| n != last.trim().len()) {
        return None;
    }
    Some((first_start, last_start))
}

fn closes_or_opens(line: &str) -> bool {
    opens_fence(line).is_some()
}

/// An ATX heading: up to 3 spaces, 1-6 `#`, then a space, a tab or the end of the line.
fn heading(line: &str) -> Option<(u8, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let hashes = rest.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let after = &rest[hashes..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let mut title = after.trim();
    // A closing sequence of #s (preceded by a space, or the whole title).
    let no_close = title.trim_end_matches('#');
    if no_close.len() != title.len() && (no_close.is_empty() || no_close.ends_with(' ') || no_close.ends_with('\t')) {
        title = no_close.trim_end();
    }
    Some((hashes as u8, title.to_string()))
}

fn indent_width(line: &str) -> (usize, usize) {
    let mut cols = 0;
    let mut bytes = 0;
    for b in line.bytes() {
        match b {
            b' ' => cols += 1,
            b'\t' => cols = (cols / 4 + 1) * 4,
            _ => break,
        }
        bytes += 1;
    }
    (cols, bytes)
}

/// A fence opening: up to 3 spaces of indent (more inside list items), then ``` or ~~~.
fn opens_fence(line: &str) -> Option<(u8, usize)> {
    let t = line.trim_start_matches([' ', '\t']);
    let ch = *t.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let n = t.bytes().take_while(|&b| b == ch).count();
    if n < 3 {
        return None;
    }
    if ch == b'`' && t[n..].contains('`') {
        return None;
    }
    Some((ch, n))
}

fn closes_fence(line: &str, ch: u8, len: usize) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    let n = t.bytes().take_while(|&b| b == ch).count();
    n >= len && t[n..].trim().is_empty()
}

/// A thematic break (`---`, `***`, `___`, spaces allowed): text, not an item.
fn thematic_break(t: &str) -> bool {
    let mut ch = None;
    let mut n = 0;
    for c in t.chars() {
        match c {
            ' ' | '\t' => {}
            '-' | '*' | '_' if ch.is_none() || ch == Some(c) => {
                ch = Some(c);
                n += 1;
            }
            _ => return false,
        }
    }
    n >= 3
}

/// A list item's marker: (marker, checked, bytes of marker incl. the following spaces and
/// checkbox, content indent without the checkbox).
fn item_marker(t: &str) -> Option<(Marker, Option<bool>, usize, usize)> {
    let b = t.as_bytes();
    let after_ws = |i: usize| i >= b.len() || b[i] == b' ' || b[i] == b'\t';
    let (mut marker, mut len) = match b.first()? {
        b'-' | b'*' | b'+' if after_ws(1) => (Marker::Bullet, 1),
        c if c.is_ascii_digit() => {
            let d = b.iter().take_while(|c| c.is_ascii_digit()).count();
            if d > 9 || !matches!(b.get(d), Some(b'.' | b')')) || !after_ws(d + 1) {
                return None;
            }
            (Marker::Numbered, d + 1)
        }
        _ => return None,
    };
    // Skip the spaces after the marker.
    while len < b.len() && (b[len] == b' ' || b[len] == b'\t') {
        len += 1;
    }
    let content = len;
    let mut checked = None;
    if b.len() >= len + 3
        && b[len] == b'['
        && b[len + 2] == b']'
        && matches!(b[len + 1], b' ' | b'x' | b'X')
        && (b.len() == len + 3 || b[len + 3] == b' ' || b[len + 3] == b'\t')
    {
        checked = Some(b[len + 1] != b' ');
        marker = Marker::Checkbox;
        len += 3;
        while len < b.len() && (b[len] == b' ' || b[len] == b'\t') {
            len += 1;
        }
    }
    Some((marker, checked, len, content))
}

struct Builder {
    raw: String,
    title: String,
    name: String,
    level: u8,
    role: SectionRole,
    items: Vec<Item>,
    text: Vec<String>,
    /// Marker indents of the open list items (innermost last).
    open: Vec<usize>,
    /// Content indent of the last item, if it still takes continuation lines.
    last_content: Option<usize>,
    blank: bool,
    /// Where the lines of the current fence go: the last item, or the text.
    fence_in_item: Option<bool>,
    /// Inside a `<read-files>` (true) or `<modified-files>` (false) block.
    file_block: Option<bool>,
    read: Vec<String>,
    modified: Vec<String>,
}

impl Builder {
    fn new(raw: String, title: String, level: u8, role: SectionRole) -> Builder {
        Builder {
            raw,
            title,
            name: String::new(),
            level,
            role,
            items: Vec::new(),
            text: Vec::new(),
            open: Vec::new(),
            last_content: None,
            blank: false,
            fence_in_item: None,
            file_block: None,
            read: Vec::new(),
            modified: Vec::new(),
        }
    }

    /// Lead text (no heading): keep the raw and interpret its lines.
    fn feed_text(&mut self, text: &str) {
        self.raw.push_str(text);
        let mut fence: Option<(u8, usize)> = None;
        for line in text.split_inclusive('\n') {
            let line = line.trim_end_matches('\n').trim_end_matches('\r');
            let in_fence = match fence {
                Some((ch, len)) => {
                    if closes_fence(line, ch, len) {
                        fence = None;
                    }
                    true
                }
                None => {
                    fence = opens_fence(line);
                    fence.is_some()
                }
            };
            self.line(line, in_fence);
        }
    }

    fn push_text(&mut self, t: &str) {
        self.text.push(t.to_string());
    }

    fn continue_item(&mut self, t: &str) {
        if let Some(it) = self.items.last_mut() {
            if !it.text.is_empty() {
                it.text.push('\n');
            }
            it.text.push_str(t);
        }
    }

    /// One line of the section body (`code`: part of a fenced block, fence lines included).
    fn line(&mut self, line: &str, code: bool) {
        let (cols, ib) = indent_width(line);
        let t = line[ib..].trim_end();
        if code {
            // The whole fence goes where its opening line went.
            let fits = self.last_content.is_some_and(|c| !self.blank || cols >= c.min(4));
            let target = *self.fence_in_item.get_or_insert(fits);
            if t.is_empty() {
                return;
            }
            if target {
                self.continue_item(line.trim());
            } else {
                self.last_content = None;
                self.open.clear();
                self.push_text(line.trim());
            }
            return;
        }
        self.fence_in_item = None;
        // A file-list block that is not at the very end (text after it): its lines are files.
        if let Some(is_read) = self.file_block {
            if t == if is_read { "</read-files>" } else { "</modified-files>" } {
                self.file_block = None;
            } else if !t.is_empty() {
                if is_read { &mut self.read } else { &mut self.modified }.push(t.to_string());
            }
            return;
        }
        if cols < 4 && (t == "<read-files>" || t == "<modified-files>") {
            self.file_block = Some(t == "<read-files>");
            self.last_content = None;
            self.open.clear();
            return;
        }
        if t.is_empty() {
            self.blank = true;
            return;
        }
        if !thematic_break(t) {
            if let Some((marker, checked, len, content)) = item_marker(t) {
                while self.open.last().is_some_and(|&m| m >= cols) {
                    self.open.pop();
                }
                let depth = self.open.len().min(u8::MAX as usize) as u8;
                self.open.push(cols);
                self.items.push(Item { text: t[len..].trim().to_string(), marker, checked, depth });
                self.last_content = Some(cols + content.max(2));
                self.blank = false;
                return;
            }
        }
        // Continuation: an indented line right after the item, or after a blank line a line
        // indented to the item's content. An unindented line ends the list.
        let top = *self.open.first().unwrap_or(&0);
        match self.last_content {
            Some(c) if cols > top && (!self.blank || cols >= c.min(4)) => {
                self.continue_item(t.trim_start());
            }
            _ => {
                self.last_content = None;
                self.open.clear();
                self.push_text(t.trim_start());
            }
        }
        self.blank = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_template_round_trips_with_roles() {
        let t = "## Goal\nShip it.\n\n## Progress\n### Done\n- [x] a\n- [ ] b\n\n<read-files>\nx.rs\n</read-files>";
        let p = parse(t);
        assert_eq!(print(&p), t);
        let names: Vec<&str> = p.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Goal", "Progress", "Progress › Done"]);
        assert_eq!(p.sections[2].role, SectionRole::Done);
        assert_eq!(p.sections[2].items[0].checked, Some(true));
        assert_eq!(p.read_files, ["x.rs"]);
    }
}
