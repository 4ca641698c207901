//! Two nodes side by side as the Compare panel draws them: `branch_compare`'s comparison, with
//! every item carrying the entry it links to (a click reveals it on the graph). The crate knows
//! nothing of specta, so these are its wire copies; the tokens by category use the context
//! view's categories, so the panel and the Context tab name them alike.

use super::context::{CategoryTokens, TokenCategory};
use super::graph::{entry_title, GraphRowKind};
use branch_compare::{Comparison, Side};
use serde::Serialize;
use session_engine::Session;
use specta::Type;

/// An entry as a link: its id and what its graph row says.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct EntryLink {
    pub entry_id: String,
    pub kind: GraphRowKind,
    pub title: String,
}

fn link(session: &Session, id: &str) -> Option<EntryLink> {
    let i = session.index_of(id)?;
    let (kind, title) = entry_title(session, i);
    Some(EntryLink { entry_id: id.to_string(), kind, title })
}

#[derive(Debug, Clone, Copy, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum CommandOutcome {
    Ok,
    Error,
    /// No result of its last run on the side.
    Unknown,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CommandView {
    pub command: String,
    pub last_outcome: CommandOutcome,
    pub runs: u32,
    /// The entry of the last run.
    pub entry_id: String,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryLink {
    pub entry_id: String,
    /// `compaction` or `branch_summary`.
    pub kind: String,
    /// The offline retention score (0–1), when the summary's span has facts to score.
    pub score: Option<f64>,
}

/// A line of text on a side (an error seen, the last request) and its entry.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct TextLink {
    pub text: String,
    pub entry_id: String,
}

/// A file, with the entry where side A and side B last touched it (`None` where that side did not).
#[derive(Debug, Clone, Serialize, Type, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FileLink {
    pub path: String,
    pub a_entry_id: Option<String>,
    pub b_entry_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SideView {
    pub tip: EntryLink,
    /// The side's first entry after the common ancestor (None when the node is the ancestor).
    pub first_entry_id: Option<String>,
    pub entries: u32,
    pub turns: u32,
    /// Pi's estimate of what the model sees at the tip, and the messages' estimate by category.
    pub context_tokens: u32,
    pub tokens: Vec<CategoryTokens>,
    pub summaries: Vec<SummaryLink>,
    pub read_files: Vec<FileLink>,
    pub modified_files: Vec<FileLink>,
    pub commands: Vec<CommandView>,
    pub errors: Vec<TextLink>,
    pub last_user_request: Option<TextLink>,
    pub model: Option<String>,
    /// `usage.cost.total` summed over the side's assistant messages (None if not a number).
    pub cost: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FilesView {
    pub read_files: Vec<FileLink>,
    pub modified_files: Vec<FileLink>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct BothFilesView {
    pub read_files: Vec<FileLink>,
    pub modified_files: Vec<FileLink>,
    /// Modified on both sides, the last edit differing.
    pub modified_differently: Vec<FileLink>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonView {
    /// None when the two nodes share no ancestor (different roots).
    pub ancestor: Option<EntryLink>,
    pub a: SideView,
    pub b: SideView,
    pub only_a: FilesView,
    pub only_b: FilesView,
    pub both: BothFilesView,
}

/// Longest error line or request text sent to the panel (the entry holds the rest).
const TEXT_MAX: usize = 400;

fn side_view(session: &Session, s: &Side, a: bool) -> SideView {
    let files =
        |v: &[String]| -> Vec<FileLink> { v.iter().map(|p| file_link(p, a.then_some(s), (!a).then_some(s))).collect() };
    let t = &s.tokens;
    let tokens = [
        (TokenCategory::Summary, t.summary),
        (TokenCategory::User, t.user),
        (TokenCategory::AssistantText, t.assistant_text),
        (TokenCategory::Thinking, t.thinking),
        (TokenCategory::ToolCalls, t.tool_calls),
        (TokenCategory::ToolResults, t.tool_results),
        (TokenCategory::Other, t.other),
    ]
    .into_iter()
    .filter(|&(_, n)| n > 0.0)
    .map(|(category, n)| CategoryTokens { category, tokens: super::token_count(n) })
    .collect();
    let text = |t: &str, id: &str| TextLink { text: super::one_line(t, TEXT_MAX), entry_id: id.to_string() };
    SideView {
        tip: link(session, &s.tip_id).unwrap_or_else(|| EntryLink {
            entry_id: s.tip_id.clone(),
            kind: GraphRowKind::Other,
            title: String::new(),
        }),
        first_entry_id: s.entry_ids.first().cloned(),
        entries: s.entries as u32,
        turns: s.turns as u32,
        context_tokens: super::token_count(s.context_tokens),
        tokens,
        summaries: s
            .summaries
            .iter()
            .map(|m| SummaryLink { entry_id: m.entry_id.clone(), kind: m.kind.clone(), score: m.score })
            .collect(),
        read_files: files(&s.read_files),
        modified_files: files(&s.modified_files),
        commands: s
            .commands
            .iter()
            .map(|c| CommandView {
                command: super::one_line(&c.command, TEXT_MAX),
                last_outcome: match c.last_outcome.as_str() {
                    "ok" => CommandOutcome::Ok,
                    "error" => CommandOutcome::Error,
                    _ => CommandOutcome::Unknown,
                },
                runs: c.runs as u32,
                entry_id: c.entry_id.clone(),
            })
            .collect(),
        errors: s.errors.iter().map(|e| text(&e.text, &e.entry_id)).collect(),
        last_user_request: s.last_user_request.as_ref().map(|r| text(&r.text, &r.entry_id)),
        model: s.model.clone(),
        cost: s.cost.is_finite().then_some(s.cost),
    }
}

fn file_link(path: &str, a: Option<&Side>, b: Option<&Side>) -> FileLink {
    let at = |s: Option<&Side>| s.and_then(|s| s.file_entries.get(path).cloned());
    FileLink { path: path.to_string(), a_entry_id: at(a), b_entry_id: at(b) }
}

impl ComparisonView {
    pub fn of(session: &Session, c: &Comparison) -> ComparisonView {
        let [sa, sb] = &c.sides;
        let only = |v: &[String], a: bool| -> Vec<FileLink> {
            v.iter().map(|p| if a { file_link(p, Some(sa), None) } else { file_link(p, None, Some(sb)) }).collect()
        };
        let both = |v: &[String]| -> Vec<FileLink> { v.iter().map(|p| file_link(p, Some(sa), Some(sb))).collect() };
        ComparisonView {
            ancestor: c.ancestor_id.as_deref().and_then(|id| link(session, id)),
            a: side_view(session, sa, true),
            b: side_view(session, sb, false),
            only_a: FilesView {
                read_files: only(&c.only_a.read_files, true),
                modified_files: only(&c.only_a.modified_files, true),
            },
            only_b: FilesView {
                read_files: only(&c.only_b.read_files, false),
                modified_files: only(&c.only_b.modified_files, false),
            },
            both: BothFilesView {
                read_files: both(&c.both.read_files),
                modified_files: both(&c.both.modified_files),
                modified_differently: both(&c.both.modified_differently),
            },
        }
    }
}
