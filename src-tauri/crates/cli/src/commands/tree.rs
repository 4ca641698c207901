use super::{leaf_arg, open_session, preview, CmdResult};
use session_engine::context::build_context;
use session_engine::{Kind, Session};
use std::collections::HashSet;
use std::fmt::Write as _;

/// One line describing an entry.
pub fn describe(session: &Session, i: usize) -> String {
    let v = session.value(i);
    match session.kind(i) {
        Kind::Message => {
            let m = v.get("message").cloned().unwrap_or_default();
            let role = m.str_field("role").unwrap_or("?").to_string();
            format!("{role}: {}", preview(&super::context::message_text(&m), 60))
        }
        Kind::Compaction => format!(
            "[COMPACTION] keeps from {} (tokensBefore {})",
            v.str_field("firstKeptEntryId").unwrap_or("?"),
            v.num_field("tokensBefore").map(|n| n.to_string()).unwrap_or_else(|| "?".into())
        ),
        Kind::BranchSummary => format!("[BRANCH SUMMARY] {}", preview(v.str_field("summary").unwrap_or(""), 50)),
        Kind::ModelChange => {
            format!("model → {}/{}", v.str_field("provider").unwrap_or("?"), v.str_field("modelId").unwrap_or("?"))
        }
        Kind::ThinkingLevelChange => format!("thinking → {}", v.str_field("thinkingLevel").unwrap_or("?")),
        Kind::Label => format!(
            "label {} = {}",
            v.str_field("targetId").unwrap_or("?"),
            v.str_field("label").unwrap_or("(cleared)")
        ),
        Kind::SessionInfo => format!("name = {}", v.str_field("name").unwrap_or("")),
        Kind::CustomMessage => format!("custom message ({})", v.str_field("customType").unwrap_or("?")),
        Kind::Custom => format!("custom ({})", v.str_field("customType").unwrap_or("?")),
        Kind::Other => format!("unknown type {}", session.entry(i).type_name),
    }
}

/// ASCII render: `*` active path, `o` elsewhere, `@` the leaf, `~` on the path but compacted
/// away (no longer sent to the model). A fork prints its other branches as indented blocks
/// and continues with the branch that holds the leaf (or the newest one).
pub fn render(session: &Session, leaf: Option<usize>) -> String {
    let path = session.path(leaf);
    let on_path: HashSet<usize> = path.iter().copied().collect();
    let ctx = build_context(session, leaf);
    let horizon: HashSet<usize> = match ctx.compaction {
        Some(c) => {
            let kept_from = ctx.messages.get(1).map(|m| m.entry);
            let mut set = HashSet::new();
            for &i in &path {
                if Some(i) == kept_from || i == c {
                    break;
                }
                set.insert(i);
            }
            set
        }
        None => HashSet::new(),
    };
    let mut out = String::new();
    let mut seen = vec![false; session.len()];
    for &r in session.roots() {
        render_chain(session, r as usize, 0, leaf, &on_path, &horizon, &mut seen, &mut out);
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn render_chain(
    session: &Session,
    start: usize,
    depth: usize,
    leaf: Option<usize>,
    on_path: &HashSet<usize>,
    horizon: &HashSet<usize>,
    seen: &mut [bool],
    out: &mut String,
) {
    // Iterative over the chain; nested forks recurse (depth is bounded by the number of forks).
    let mut node = start;
    loop {
        if seen[node] {
            return;
        }
        seen[node] = true;
        let mark = if Some(node) == leaf {
            '@'
        } else if horizon.contains(&node) {
            '~'
        } else if on_path.contains(&node) {
            '*'
        } else {
            'o'
        };
        let mut flags = String::new();
        if let Some(l) = session.label_of(session.id(node)) {
            let _ = write!(flags, "  [label: {l}]");
        }
        let _ =
            writeln!(out, "{}{} {} {}{}", "│ ".repeat(depth), mark, session.id(node), describe(session, node), flags);
        let kids = session.children(node);
        if kids.is_empty() {
            return;
        }
        let main = kids
            .iter()
            .rev()
            .find(|&&k| on_path.contains(&(k as usize)))
            .copied()
            .unwrap_or(*kids.last().unwrap_or(&kids[0]));
        for &o in kids.iter().filter(|&&k| k != main) {
            let _ = writeln!(out, "{}├─ branch:", "│ ".repeat(depth));
            render_chain(session, o as usize, depth + 1, leaf, on_path, horizon, seen, out);
        }
        node = main as usize;
    }
}

pub fn run(a: crate::TreeArgs) -> CmdResult {
    let session = open_session(&a.file)?;
    let leaf = leaf_arg(&session, a.leaf.as_deref())?;
    let header = session.header().map(|h| h.id.clone()).unwrap_or_default();
    println!(
        "Session {header}{}  ({} entries)",
        session.name().map(|n| format!(" \"{n}\"")).unwrap_or_default(),
        session.len()
    );
    println!("Legend: * active path  @ leaf  ~ compacted away (no longer sent)  o other branch");
    for d in session.diagnostics() {
        println!("! line {}: {}", d.line, d.message);
    }
    if let Some(r) = session.read_only_reason() {
        println!("! read-only: {r}");
    }
    print!("{}", render(&session, leaf));
    Ok(())
}
