//! Tree navigation and branch summaries (§13).

use crate::compaction::{serialize_agent_messages, FileOps};
use crate::context::{self, estimate_tokens};
use crate::json::Value;
use crate::session::{Kind, Session};

pub const BRANCH_SUMMARY_PREAMBLE: &str = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";
pub const NO_CONTENT: &str = "No content to summarize";

#[derive(Clone, Debug, PartialEq)]
pub struct BranchCollection {
    pub common_ancestor: Option<usize>,
    /// Entries between the old leaf and the common ancestor, oldest first.
    pub entries: Vec<usize>,
}

/// `collectEntriesForBranchSummary(oldLeaf, target)` (§13.1). Linear in the two paths.
pub fn collect_branch_entries(s: &Session, old_leaf: Option<usize>, target: usize) -> BranchCollection {
    let Some(old) = old_leaf else {
        return BranchCollection { common_ancestor: None, entries: Vec::new() };
    };
    let ca = s.common_ancestor(old, target);
    let mut entries = Vec::new();
    let mut cur = Some(old);
    while let Some(c) = cur {
        if Some(c) == ca || entries.len() > s.len() {
            break;
        }
        entries.push(c);
        cur = s.parent_of(c);
    }
    entries.reverse();
    BranchCollection { common_ancestor: ca, entries }
}

/// The branch mapping of one entry: tool results skipped, compactions as summaries.
pub fn branch_message(s: &Session, idx: usize) -> Option<Value> {
    match s.kind(idx) {
        Kind::Message => {
            // Tool results are skipped: learn the role without parsing their (often large) body.
            if s.role(idx) == Some("toolResult") {
                return None;
            }
            let m = s.value(idx).get("message")?;
            if m.str_field("role") == Some("toolResult") {
                None
            } else {
                Some(m.clone())
            }
        }
        Kind::CustomMessage => Some(context::custom_message(s, idx)),
        Kind::BranchSummary => Some(context::branch_summary_message(s, idx)),
        Kind::Compaction => Some(context::compaction_summary_message(s, idx)),
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BranchPreparation {
    /// Selected messages, oldest first, with their entries.
    pub messages: Vec<(usize, Value)>,
    pub total_tokens: f64,
    pub file_ops: FileOps,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

impl BranchPreparation {
    pub fn agent_messages(&self) -> Vec<Value> {
        self.messages.iter().map(|(_, m)| m.clone()).collect()
    }
    pub fn serialized(&self) -> String {
        serialize_agent_messages(&self.agent_messages())
    }
    pub fn appendix(&self) -> String {
        crate::compaction::file_ops_appendix(&self.read_files, &self.modified_files)
    }
}

/// `prepareBranchEntries(entries, budget)` (§13.2); budget 0 = unlimited.
pub fn prepare_branch_entries(s: &Session, entries: &[usize], budget: f64) -> BranchPreparation {
    let mut ops = FileOps::default();
    for &e in entries {
        if s.kind(e) == Kind::BranchSummary {
            let v = s.value(e);
            if !v.get("fromHook").is_some_and(Value::truthy) {
                if let Some(d) = v.get("details").filter(|d| d.truthy()) {
                    ops.add_details(d);
                }
            }
        }
    }
    let mut picked: Vec<(usize, Value)> = Vec::new();
    let mut total = 0.0;
    for &e in entries.iter().rev() {
        let Some(m) = branch_message(s, e) else { continue };
        ops.add_tool_calls(&m);
        let t = estimate_tokens(&m);
        if budget > 0.0 && total + t > budget {
            if matches!(s.kind(e), Kind::Compaction | Kind::BranchSummary) && total < budget * 0.9 {
                picked.push((e, m));
                total += t;
            }
            break;
        }
        picked.push((e, m));
        total += t;
    }
    picked.reverse();
    let (read_files, modified_files) = ops.file_lists();
    BranchPreparation { messages: picked, total_tokens: total, file_ops: ops, read_files, modified_files }
}

/// `(contextWindow || 128000) - branchSummary.reserveTokens`.
pub fn branch_budget(context_window: f64, reserve: f64) -> f64 {
    let w = if context_window == 0.0 || context_window.is_nan() { 128000.0 } else { context_window };
    w - reserve
}

/// The summary text Pi writes for a branch: preamble, the model's text, the file appendix.
pub fn branch_summary_text(prep: &BranchPreparation, llm_text: &str) -> String {
    format!("{BRANCH_SUMMARY_PREAMBLE}{llm_text}{}", prep.appendix())
}

/// Where the leaf goes when navigating to `target` (§13.5 step 3).
#[derive(Clone, Debug, PartialEq)]
pub struct NavigationTarget {
    /// The new leaf (None = before the first entry).
    pub new_leaf: Option<usize>,
    /// The new leaf's id as Pi records it (the target's `parentId`, possibly dangling).
    pub new_leaf_id: Option<String>,
    /// Text for the composer when the target is a user message or custom message.
    pub editor_text: Option<String>,
}

pub fn navigation_target(s: &Session, target: usize) -> NavigationTarget {
    let v = s.value(target);
    let to_parent = match s.kind(target) {
        Kind::Message => s.role(target) == Some("user"),
        Kind::CustomMessage => true,
        _ => false,
    };
    if to_parent {
        let text = match s.kind(target) {
            Kind::Message => context::user_text(v.get("message").and_then(|m| m.get("content")).unwrap_or(&Value::Null)),
            _ => context::user_text(v.get("content").unwrap_or(&Value::Null)),
        };
        let pid = s.entry(target).parent_id.as_deref().map(str::to_string);
        NavigationTarget { new_leaf: s.parent_of(target), new_leaf_id: pid.filter(|p| !p.is_empty()), editor_text: Some(text) }
    } else {
        NavigationTarget { new_leaf: Some(target), new_leaf_id: Some(s.id(target).to_string()), editor_text: None }
    }
}
