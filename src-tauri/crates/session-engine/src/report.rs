//! The inspection report: what Pi computes for a session file, in the key names of the
//! conformance corpus (`arbor-cli inspect`), and the simulations of what Pi appends when it
//! compacts or navigates, driven by any summarizer (a closure).

use crate::branch;
use crate::compaction;
use crate::context::{
    self, build_context_on_path, estimate_context, to_llm, AutoCompaction, CompactionSettings, CurrentModel,
};
use crate::session::{Kind, Session};
use pi_json::{obj, Map, Value};
use sha2::{Digest, Sha256};

/// The oracle's options.
#[derive(Clone, Debug)]
pub struct InspectOptions {
    /// `None` = the file's leaf; `Some(None)` = before the first entry (`--leaf null`).
    pub leaf: Option<Option<String>>,
    pub context_window: f64,
    pub compaction: CompactionSettings,
    pub branch_reserve_tokens: f64,
    pub branch_budget: Option<f64>,
    pub target: Option<String>,
    pub custom_instructions: Option<String>,
    pub label: Option<String>,
    /// `provider/modelId` of the model in simulations (default: the context's model).
    pub model: Option<(String, String)>,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions {
            leaf: None,
            context_window: 200000.0,
            compaction: CompactionSettings::default(),
            branch_reserve_tokens: 16384.0,
            branch_budget: None,
            target: None,
            custom_instructions: None,
            label: None,
            model: None,
        }
    }
}

impl InspectOptions {
    /// Reads the oracle's `options` object (as in a corpus case's expected file).
    pub fn from_oracle_json(o: &Value) -> InspectOptions {
        let mut opts = InspectOptions::default();
        if let Some(l) = o.get("leaf") {
            opts.leaf = Some(l.as_str().filter(|s| *s != "null").map(str::to_string));
        }
        if let Some(n) = o.num_field("contextWindow") {
            opts.context_window = n;
        }
        if let Some(n) = o.num_field("reserveTokens") {
            opts.compaction.reserve_tokens = n;
        }
        if let Some(n) = o.num_field("keepRecentTokens") {
            opts.compaction.keep_recent_tokens = n;
        }
        if let Some(b) = o.get("compactionEnabled").and_then(Value::as_bool) {
            opts.compaction.enabled = b;
        }
        if let Some(n) = o.num_field("branchReserveTokens") {
            opts.branch_reserve_tokens = n;
        }
        opts.branch_budget = o.num_field("branchBudget");
        opts.target = o.str_field("target").map(str::to_string);
        opts.custom_instructions = o.str_field("customInstructions").map(str::to_string);
        opts.label = o.str_field("label").map(str::to_string);
        if let Some(m) = o.str_field("model") {
            if let Some((p, id)) = m.split_once('/') {
                opts.model = Some((p.to_string(), id.to_string()));
            }
        }
        opts
    }

    pub fn branch_budget_value(&self) -> f64 {
        self.branch_budget.unwrap_or_else(|| branch::branch_budget(self.context_window, self.branch_reserve_tokens))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no entry with id {0} in this session; run `arbor-cli tree FILE` to see the ids")]
    UnknownId(String),
}

pub fn sha256_hex(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn num(n: f64) -> Value {
    Value::Num(n)
}

fn opt_id(session: &Session, i: Option<usize>) -> Value {
    i.map(|i| Value::from(session.id(i))).unwrap_or(Value::Null)
}

fn strs(v: &[String]) -> Value {
    Value::Arr(v.iter().map(|s| Value::from(s.as_str())).collect())
}

/// The leaf chosen by the options.
pub fn resolve_leaf(session: &Session, leaf: &Option<Option<String>>) -> Result<Option<usize>, ReportError> {
    match leaf {
        None => Ok(session.file_leaf()),
        Some(None) => Ok(None),
        Some(Some(id)) => session.index_of(id).map(Some).ok_or_else(|| ReportError::UnknownId(id.clone())),
    }
}

fn entry_type_of(session: &Session, i: usize) -> String {
    session.entry(i).type_name.to_string()
}

fn message_refs(session: &Session, msgs: &[(usize, &Value)]) -> Value {
    Value::Arr(
        msgs.iter()
            .map(|(e, m)| {
                obj([
                    ("entryId", session.id(*e).into()),
                    ("entryType", entry_type_of(session, *e).into()),
                    ("role", m.get("role").cloned().unwrap_or(Value::Null)),
                ])
            })
            .collect(),
    )
}

fn file_ops_value(ops: &compaction::FileOps) -> Value {
    obj([("read", strs(&ops.read)), ("written", strs(&ops.written)), ("edited", strs(&ops.edited))])
}

/// The context section for a path.
pub fn context_section(session: &Session, path: &[usize]) -> (Value, Vec<Value>) {
    let ctx = build_context_on_path(session, path);
    let agent = ctx.agent_messages();
    let llm = to_llm(&agent);
    let messages: Vec<Value> = ctx
        .messages
        .iter()
        .map(|m| {
            let mut o = Map::new();
            o.insert("role", m.message.get("role").cloned().unwrap_or(Value::Null));
            o.insert("entryId", session.id(m.entry).into());
            o.insert("entryType", entry_type_of(session, m.entry).into());
            o.insert("sha256", sha256_hex(&pi_json::to_string(&m.message)).into());
            o.insert("estimatedTokens", num(context::estimate_tokens(&m.message)));
            Value::Obj(o)
        })
        .collect();
    let model = match &ctx.model {
        Some(m) => obj([("provider", m.provider.clone()), ("modelId", m.model_id.clone())]),
        None => Value::Null,
    };
    let section = obj([
        ("thinkingLevel", ctx.thinking_level.clone()),
        ("model", model),
        ("messageCount", num(agent.len() as f64)),
        ("messages", Value::Arr(messages)),
        ("llmDigest", sha256_hex(&pi_json::to_string(&Value::Arr(llm))).into()),
    ]);
    (section, agent)
}

pub fn estimate_value(e: &context::Estimate) -> Value {
    obj([
        ("tokens", num(e.tokens)),
        ("usageTokens", num(e.usage_tokens)),
        ("trailingTokens", num(e.trailing_tokens)),
        ("lastUsageIndex", e.last_usage_index.map(|i| num(i as f64)).unwrap_or(Value::Null)),
    ])
}

pub fn compaction_section(session: &Session, path: &[usize], settings: &CompactionSettings) -> Value {
    match compaction::prepare_compaction(session, path, settings) {
        Err(r) => obj([("prepared", false.into()), ("reason", r.reason().into())]),
        Ok(p) => {
            let hist: Vec<(usize, &Value)> = p.messages_to_summarize.iter().map(|m| (m.entry, &m.message)).collect();
            let pre: Vec<(usize, &Value)> = p.turn_prefix_messages.iter().map(|m| (m.entry, &m.message)).collect();
            obj([
                ("prepared", true.into()),
                ("firstKeptEntryId", p.first_kept_entry_id.clone().into()),
                ("isSplitTurn", p.is_split_turn.into()),
                ("tokensBefore", num(p.tokens_before)),
                ("previousSummary", p.previous_summary.clone().unwrap_or(Value::Null)),
                ("messagesToSummarize", message_refs(session, &hist)),
                ("turnPrefixMessages", message_refs(session, &pre)),
                ("fileOps", file_ops_value(&p.file_ops)),
                ("readFiles", strs(&p.read_files)),
                ("modifiedFiles", strs(&p.modified_files)),
                ("fileOpsAppendix", p.appendix().into()),
                ("serializedMessagesToSummarize", p.serialized_history().into()),
                ("serializedTurnPrefix", p.serialized_turn_prefix().into()),
            ])
        }
    }
}

pub fn branch_section(session: &Session, leaf: Option<usize>, target: usize, budget: f64) -> Value {
    let col = branch::collect_branch_entries(session, leaf, target);
    let prep = branch::prepare_branch_entries(session, &col.entries, budget);
    let sel: Vec<(usize, &Value)> = prep.messages.iter().map(|(e, m)| (*e, m)).collect();
    let target_type = if session.kind(target) == Kind::Message {
        format!("message:{}", session.role(target).unwrap_or(""))
    } else {
        entry_type_of(session, target)
    };
    obj([
        ("oldLeafId", opt_id(session, leaf)),
        ("targetId", session.id(target).into()),
        ("targetType", target_type.into()),
        ("commonAncestorId", opt_id(session, col.common_ancestor)),
        ("entriesToSummarize", Value::Arr(col.entries.iter().map(|&e| session.id(e).into()).collect())),
        ("tokenBudget", num(budget)),
        ("selectedMessages", message_refs(session, &sel)),
        ("totalTokens", num(prep.total_tokens)),
        ("fileOps", file_ops_value(&prep.file_ops)),
        ("readFiles", strs(&prep.read_files)),
        ("modifiedFiles", strs(&prep.modified_files)),
        ("fileOpsAppendix", prep.appendix().into()),
        ("serializedSelected", prep.serialized().into()),
    ])
}

/// Labels as a JS object built in entry order: integer-like keys (an all-digit id) come first
/// in ascending order, as JavaScript orders object keys.
fn labels_object(session: &Session) -> Value {
    let mut m = Map::new();
    for e in session.entries() {
        if let Some(l) = session.label_of(&e.id) {
            m.insert(e.id.to_string(), Value::from(l));
        }
    }
    let is_index = |k: &str| {
        !k.is_empty()
            && k.len() <= 10
            && k.bytes().all(|b| b.is_ascii_digit())
            && (k == "0" || !k.starts_with('0'))
            && k.parse::<u64>().is_ok_and(|n| n < 4294967295)
    };
    let (mut ints, rest): (Vec<_>, Vec<_>) = m.0.into_iter().partition(|(k, _)| is_index(k));
    ints.sort_by_key(|(k, _)| k.parse::<u64>().unwrap_or(0));
    ints.extend(rest);
    Value::Obj(Map(ints))
}

/// The roots as Pi's `getTree` lists them: one per entry line, so an id that appears twice (Pi's
/// duplicate-flush bug) is listed once per occurrence, each time as its later copy, placed by
/// the occurrence's own `parentId`. The report follows Pi; [`Session::roots`] (the graph) lists
/// each id once (FORMAT.md §10).
pub fn pi_roots(session: &Session) -> Vec<usize> {
    let mut out = Vec::new();
    for e in session.entries() {
        let Some(node) = session.index_of(&e.id) else { continue };
        let root = match e.parent_id.as_deref() {
            None => true,
            Some(p) => p == &*e.id || session.index_of(p).is_none(),
        };
        if root {
            out.push(node);
        }
    }
    out
}

/// The whole report (without the simulations).
pub fn inspect(session: &Session, o: &InspectOptions) -> Result<Value, ReportError> {
    let leaf = resolve_leaf(session, &o.leaf)?;
    let path = session.path(leaf);
    let mut root = Map::new();
    let labels = labels_object(session);
    root.insert(
        "load",
        obj([
            ("nonEmptyLines", num(session.non_empty_lines() as f64)),
            ("malformedLines", Value::Arr(session.malformed_lines().iter().map(|&l| num(l as f64)).collect())),
            ("headerAccepted", session.header_accepted().into()),
            ("versionInFile", session.version_in_file().map(num).unwrap_or(Value::Null)),
            ("migrated", session.migrated().into()),
            ("entryCount", num(session.len() as f64)),
            ("fileLeafId", opt_id(session, session.file_leaf())),
            ("sessionName", session.name().map(Value::from).unwrap_or(Value::Null)),
            ("labels", labels),
            ("roots", Value::Arr(pi_roots(session).into_iter().map(|r| session.id(r).into()).collect())),
            (
                "diagnostics",
                Value::Arr(
                    session
                        .diagnostics()
                        .iter()
                        .map(|d| {
                            obj([
                                ("line", num(d.line as f64)),
                                ("offset", num(d.offset as f64)),
                                ("kind", format!("{:?}", d.kind).into()),
                                ("message", d.message.clone().into()),
                            ])
                        })
                        .collect(),
                ),
            ),
        ]),
    );
    root.insert("leafId", opt_id(session, leaf));
    root.insert("activePath", Value::Arr(path.iter().map(|&i| session.id(i).into()).collect()));
    let (ctx, agent) = context_section(session, &path);
    root.insert("context", ctx);
    let est = estimate_context(&agent);
    let threshold = o.context_window - o.compaction.reserve_tokens;
    root.insert(
        "tokens",
        obj([
            ("estimate", estimate_value(&est)),
            ("threshold", num(threshold)),
            ("shouldCompact", context::should_compact(est.tokens, o.context_window, &o.compaction).into()),
        ]),
    );
    root.insert("compaction", compaction_section(session, &path, &o.compaction));
    if let Some(t) = &o.target {
        let ti = session.index_of(t).ok_or_else(|| ReportError::UnknownId(t.clone()))?;
        root.insert("branch", branch_section(session, leaf, ti, o.branch_budget_value()));
    }
    Ok(Value::Obj(root))
}

// ------------------------------------------------------------------------------------------
// Appending: compaction and navigation entries, given summary texts
// ------------------------------------------------------------------------------------------

/// Which summary a summarizer is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryKind {
    History,
    TurnPrefix,
    Branch,
}

/// Runs a manual compaction at `leaf` with `summarize` answering each call; returns the entry.
/// The same plan and entry as the summarizer's, with Pi's error texts.
pub fn simulate_compaction(
    session: &Session,
    leaf: Option<usize>,
    settings: &CompactionSettings,
    summarize: &mut dyn FnMut(SummaryKind) -> String,
    id: &str,
    timestamp: &str,
) -> Result<Value, &'static str> {
    let job = compaction::plan_compaction(session, leaf, settings).map_err(|r| match r {
        compaction::Refusal::LastEntryIsCompaction => "Already compacted",
        compaction::Refusal::NoFirstKeptEntry => "Nothing to compact (session too small)",
    })?;
    // History first, then the prefix, as Pi numbers its calls.
    let history = job.prep.needs_history_call().then(|| summarize(SummaryKind::History));
    let prefix = job.prep.needs_prefix_call().then(|| summarize(SummaryKind::TurnPrefix));
    Ok(compaction::compaction_entry(&job, &job.summarized(history.as_deref(), prefix.as_deref()), id, timestamp))
}

/// The outcome of a navigation: entries to append and where the leaf ends up.
#[derive(Clone, Debug, PartialEq)]
pub struct Navigation {
    pub appended: Vec<Value>,
    /// The leaf id after the navigation (Pi's in-memory leaf).
    pub leaf_id: Option<String>,
    pub editor_text: Option<String>,
}

/// Pi's `navigateTree` (§13.5). `ids` draws entry ids in order. The same plan and entries as
/// the summarizer's.
#[allow(clippy::too_many_arguments)]
pub fn navigate(
    session: &Session,
    old_leaf: Option<usize>,
    target: usize,
    summarize_branch: bool,
    budget: f64,
    label: Option<&str>,
    summarize: &mut dyn FnMut(SummaryKind) -> String,
    ids: &mut dyn FnMut() -> String,
    timestamp: &str,
) -> Navigation {
    let job = branch::plan_navigation(session, old_leaf, target, summarize_branch, budget);
    if job.no_op {
        return Navigation { appended: Vec::new(), leaf_id: job.leaf_after(&[]), editor_text: None };
    }
    let summary = job.prep.as_ref().map(|p| {
        let text = p.needs_call().then(|| summarize(SummaryKind::Branch));
        p.summary(text.as_deref())
    });
    let appended = branch::navigation_entries(&job, summary.as_ref(), label, timestamp, ids);
    Navigation { leaf_id: job.leaf_after(&appended), editor_text: job.editor_text.clone(), appended }
}

/// The check Pi runs before sending the next prompt, at `leaf`.
pub fn pre_prompt_check(
    session: &Session,
    leaf: Option<usize>,
    model: Option<&CurrentModel>,
    settings: &CompactionSettings,
) -> Option<AutoCompaction> {
    let path = session.path(leaf);
    let ctx = build_context_on_path(session, &path);
    let agent = ctx.agent_messages();
    let last = context::last_assistant(&agent)?;
    context::auto_compaction_check(session, &path, &agent, last, model, settings, false)
}
