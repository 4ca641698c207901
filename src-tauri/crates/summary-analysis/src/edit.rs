//! Edits and reverts of a compaction summary, as new entries (never a rewrite).
//!
//! **How an edit marks itself (format decision).** An edit is an ordinary `compaction` entry,
//! appended as a child of the current leaf, in Pi's key order: `summary` is the edited text,
//! `firstKeptEntryId` is the edited entry's (so the same messages follow it verbatim),
//! `tokensBefore` is Pi's context estimate at the leaf before the append (§11.3), and
//! `fromHook: false`. Arbor's provenance sits in `details`, after Pi's own `readFiles` and
//! `modifiedFiles` (copied from the edited entry's details, else parsed from its appendix):
//!
//! * `editedFrom`: the id of the entry whose text was edited (or reverted);
//! * `editOrigin`: the id of the original summary the chain started from;
//! * `editKind`: `"edit"` or `"revert"`;
//! * `revertedTo`: for reverts, the id whose text was restored (the origin).
//!
//! Pi reads only `details.readFiles` / `details.modifiedFiles` (and only to carry file lists
//! forward) and ignores other keys, so Pi loads such an entry as a normal compaction: its
//! context is the edited summary followed by the messages from `firstKeptEntryId` on.
//!
//! Only the compaction that governs the context (the latest one on the path root → leaf) can
//! be edited or reverted; an older one would be shadowed by the newer one at once.

use crate::chain::{details_str, file_lists, summary_text};
use pi_json::{Map, Value};
use serde::Serialize;
use session_engine::context::{build_context, estimate_context};
use session_engine::entries;
use session_engine::session::{Kind, Session};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EditKind {
    Original,
    Edit,
    Revert,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Version {
    pub entry_id: String,
    pub kind: EditKind,
    pub edited_from: Option<String>,
    pub timestamp: String,
}

/// Who wrote a summary, as far as the entry says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AuthorKind {
    /// `fromHook: true`: an extension or hook.
    Hook,
    /// `details.editKind`: the user (edit or revert).
    User,
    /// `details.offline: true`: Arbor's offline summarizer.
    Offline,
    /// `details.summarizer`: Arbor with that model.
    Model,
    /// Pi or another tool: the entry does not say.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Author {
    pub kind: AuthorKind,
    pub provider: Option<String>,
    pub model: Option<String>,
}

/// Who wrote the summary at `idx` (see [`AuthorKind`]).
pub fn author(session: &Session, idx: usize) -> Author {
    let none = Author { kind: AuthorKind::Unknown, provider: None, model: None };
    if idx >= session.len() {
        return none;
    }
    let v = session.value(idx);
    if v.get("fromHook").is_some_and(Value::truthy) {
        return Author { kind: AuthorKind::Hook, ..none };
    }
    let d = v.get("details");
    if d.and_then(|d| d.str_field("editKind")).is_some() {
        return Author { kind: AuthorKind::User, ..none };
    }
    let sm = d.and_then(|d| d.get("summarizer"));
    let provider = sm.and_then(|x| x.str_field("provider")).map(str::to_string);
    let model = sm.and_then(|x| x.str_field("model")).map(str::to_string);
    if d.and_then(|d| d.get("offline")).is_some_and(|o| o.as_bool() == Some(true))
        || provider.as_deref() == Some("offline")
    {
        return Author { kind: AuthorKind::Offline, provider, model };
    }
    if sm.is_some() {
        return Author { kind: AuthorKind::Model, provider, model };
    }
    none
}

/// The latest compaction on the path root → leaf (the one that governs the context), if any.
pub fn governing_compaction(session: &Session, leaf: Option<usize>) -> Option<usize> {
    let leaf = leaf.filter(|&l| l < session.len())?;
    session.path(Some(leaf)).into_iter().rev().find(|&i| session.kind(i) == Kind::Compaction)
}

/// Why `idx` cannot be edited at `leaf`, as one sentence that says what to do; None when it can.
pub fn edit_refusal(session: &Session, idx: usize, leaf: Option<usize>) -> Option<String> {
    if idx >= session.len() {
        return Some(format!("There is no entry number {idx} in this session; pick one of its compaction entries."));
    }
    let id = session.id(idx);
    if let Some(ro) = session.read_only() {
        return Some(format!("Summaries of this session cannot be edited because it is read-only: {}", ro.explain()));
    }
    if session.kind(idx) != Kind::Compaction {
        return Some(format!(
            "Entry {id} is a {} entry, not a compaction; only compaction summaries can be edited — select a compaction entry.",
            session.entry(idx).type_name
        ));
    }
    let Some(leaf) = leaf.filter(|&l| l < session.len()) else {
        return Some(format!(
            "The session has no leaf to append the edit to; select a leaf at or after entry {id} first."
        ));
    };
    let path = session.path(Some(leaf));
    let on_path = path.contains(&idx);
    match governing_compaction(session, Some(leaf)) {
        Some(g) if g == idx => {}
        Some(g) if on_path => {
            let gid = session.id(g);
            return Some(format!(
                "Entry {id} is not the newest compaction on the path to the leaf ({gid} is); only {gid} can be edited — select it, or move the leaf back first."
            ));
        }
        _ => {
            return Some(format!(
                "Entry {id} is not on the path to the leaf {}; move the leaf to an entry at or after {id} first (only the newest compaction on the path to the leaf can be edited).",
                session.id(leaf)
            ));
        }
    }
    if session.value(idx).str_field("firstKeptEntryId").is_none() {
        return Some(format!("Compaction {id} has no firstKeptEntryId, so an edit could not keep the same messages after it; compact again instead."));
    }
    None
}

fn files_of(session: &Session, idx: usize) -> (Vec<String>, Vec<String>) {
    file_lists(session, idx)
}

fn origin_of(session: &Session, idx: usize) -> String {
    details_str(session.value(idx), "editOrigin").map(str::to_string).unwrap_or_else(|| session.id(idx).to_string())
}

#[allow(clippy::too_many_arguments)]
fn build(
    session: &Session,
    idx: usize,
    leaf: usize,
    text: &str,
    id: &str,
    timestamp: &str,
    files_from: usize,
    kind: &str,
    reverted_to: Option<&str>,
) -> Value {
    let (read, modified) = files_of(session, files_from);
    let mut d = Map::new();
    d.insert("readFiles", Value::Arr(read.into_iter().map(Value::from).collect()));
    d.insert("modifiedFiles", Value::Arr(modified.into_iter().map(Value::from).collect()));
    d.insert("editedFrom", session.id(idx).into());
    d.insert("editOrigin", origin_of(session, idx).as_str().into());
    d.insert("editKind", kind.into());
    if let Some(r) = reverted_to {
        d.insert("revertedTo", r.into());
    }
    let first_kept = session.value(idx).str_field("firstKeptEntryId").unwrap_or("");
    let tokens_before = estimate_context(&build_context(session, Some(leaf)).agent_messages()).tokens;
    entries::compaction(
        id,
        Some(session.id(leaf)),
        timestamp,
        text,
        first_kept,
        tokens_before,
        Some(Value::Obj(d)),
        false,
    )
}

/// The new `compaction` entry for an edit of `idx` at `leaf` (see the module docs).
/// Err = the refusal sentence.
pub fn edit_entry(
    session: &Session,
    idx: usize,
    leaf: Option<usize>,
    text: &str,
    id: &str,
    timestamp: &str,
) -> Result<Value, String> {
    if let Some(r) = edit_refusal(session, idx, leaf) {
        return Err(r);
    }
    let leaf = leaf.expect("checked by edit_refusal");
    if text.trim().is_empty() {
        return Err("The new summary is empty; write a summary, or cancel the edit.".into());
    }
    if text == summary_text(session, idx) {
        return Err(format!("The text is the same as entry {}'s; change something before saving.", session.id(idx)));
    }
    Ok(build(session, idx, leaf, text, id, timestamp, idx, "edit", None))
}

/// The new `compaction` entry that reverts the edit `idx` to its original's text.
pub fn revert_entry(
    session: &Session,
    idx: usize,
    leaf: Option<usize>,
    id: &str,
    timestamp: &str,
) -> Result<Value, String> {
    if let Some(r) = edit_refusal(session, idx, leaf) {
        return Err(r);
    }
    let leaf = leaf.expect("checked by edit_refusal");
    let eid = session.id(idx);
    if details_str(session.value(idx), "editKind").is_none() {
        return Err(format!(
            "Entry {eid} is an original summary, not an edit, so there is nothing to revert; edit it instead."
        ));
    }
    let origin = origin_of(session, idx);
    let Some(o) = session.index_of(&origin).filter(|&o| session.kind(o) == Kind::Compaction) else {
        return Err(format!(
            "The original summary {origin} that entry {eid} was edited from is not in this file, so it cannot be restored; edit the text by hand instead."
        ));
    };
    let text = summary_text(session, o);
    if text == summary_text(session, idx) {
        return Err(format!("Entry {eid} already has the text of its original {origin}; there is nothing to revert."));
    }
    Ok(build(session, idx, leaf, text, id, timestamp, o, "revert", Some(&origin)))
}

/// The chain that contains `idx`: the original first, then every edit/revert of it in file order.
pub fn history(session: &Session, idx: usize) -> Vec<Version> {
    if idx >= session.len() || session.kind(idx) != Kind::Compaction {
        return Vec::new();
    }
    let origin = origin_of(session, idx);
    let mut out = Vec::new();
    if let Some(o) = session.index_of(&origin) {
        out.push(Version {
            entry_id: origin.clone(),
            kind: EditKind::Original,
            edited_from: None,
            timestamp: session.entry(o).timestamp.to_string(),
        });
    }
    for j in session.compactions() {
        let v = session.value(j);
        if details_str(v, "editOrigin") != Some(origin.as_str()) {
            continue;
        }
        let kind = match details_str(v, "editKind") {
            Some("revert") => EditKind::Revert,
            Some(_) => EditKind::Edit,
            None => continue,
        };
        out.push(Version {
            entry_id: session.id(j).to_string(),
            kind,
            edited_from: details_str(v, "editedFrom").map(str::to_string),
            timestamp: session.entry(j).timestamp.to_string(),
        });
    }
    out
}
