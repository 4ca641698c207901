//! Git-graph style layout of a session tree, as pure data.
//!
//! The seam: this crate knows nothing about JSONL, the engine, Tauri or drawing. Its input is a
//! flat list of [`Node`]s (parent index, sort timestamp, kind, flags) plus the leaf; its output is
//! a [`Layout`]: rows in depth-first order, each with a lane, the vertical lines passing through,
//! the forks leaving it, and the markers the UI paints (active path, leaf, labels, branch
//! summaries, compaction span / first kept / horizon, preview cut point). Long linear runs are
//! folded into one row unless the caller expands them.
//!
//! The UI asks for a window of rows ([`Layout::window`]), so a 100k-entry session never crosses
//! IPC whole. Everything is iterative (no recursion), so a 100k-deep chain is fine.
//!
//! Left out on purpose: pixel geometry. Lanes and rows are grid units; the renderer decides sizes.

use std::collections::HashSet;

/// What a node is, as far as the graph cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    User,
    Assistant,
    ToolResult,
    BashExecution,
    CustomMessage,
    /// A compaction entry; `first_kept` is the node index of its `firstKeptEntryId`, if found;
    /// `span` is how many entries it summarized, as the caller counts them (Arbor passes
    /// `summary_analysis::span`, so the graph and the workbench show one number). The layout
    /// only carries it to the compaction's row ([`Row::span`]).
    Compaction {
        first_kept: Option<u32>,
        span: u32,
    },
    BranchSummary,
    Label,
    ModelChange,
    ThinkingLevelChange,
    SessionInfo,
    Custom,
    Other,
}

pub mod flags {
    /// The node carries a label (resolved from `label` entries).
    pub const LABELED: u8 = 1;
}

#[derive(Clone, Debug)]
pub struct Node {
    /// Index of the parent node; `None` for a root (or an orphan, which the caller made a root).
    pub parent: Option<u32>,
    /// Sort key for siblings (milliseconds); ties keep file order.
    pub timestamp: i64,
    pub kind: NodeKind,
    pub flags: u8,
}

#[derive(Clone, Debug, Default)]
pub struct LayoutOptions {
    /// Linear runs with more than this many foldable nodes are folded. 0 disables folding.
    pub fold_min: usize,
    /// Folds (identified by their first node) that the user expanded.
    pub expanded: HashSet<u32>,
    /// Preview cut point (the would-be `firstKeptEntryId` of the next compaction).
    pub cut: Option<u32>,
    /// A node that must have a row of its own: the folded run that would hide it is shown
    /// expanded, as if its first node were in `expanded` ([`Layout::revealed`] says which).
    pub reveal: Option<u32>,
}

impl LayoutOptions {
    pub fn new() -> Self {
        LayoutOptions { fold_min: 8, ..Default::default() }
    }
}

/// Markers on a row, as bits so a row stays small.
pub mod marks {
    /// On the path root..leaf.
    pub const ACTIVE: u16 = 1;
    /// The leaf itself.
    pub const LEAF: u16 = 1 << 1;
    pub const LABELED: u16 = 1 << 2;
    pub const BRANCH_SUMMARY: u16 = 1 << 3;
    pub const COMPACTION: u16 = 1 << 4;
    /// This node is the `firstKeptEntryId` of some compaction.
    pub const FIRST_KEPT: u16 = 1 << 5;
    /// Summarized by a compaction on the active path (inside its span).
    pub const SUMMARIZED: u16 = 1 << 6;
    /// On the active path but before the horizon: no longer sent to the model (draw greyed).
    pub const BEYOND_HORIZON: u16 = 1 << 7;
    /// The preview cut point.
    pub const CUT: u16 = 1 << 8;
    /// A fold row that contains active-path nodes.
    pub const FOLD_ACTIVE: u16 = 1 << 9;
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowKind {
    Node {
        node: u32,
    },
    /// `count` linear nodes starting at `first` (the fold id), hidden.
    Fold {
        first: u32,
        last: u32,
        count: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub kind: RowKind,
    pub lane: u16,
    /// A line enters this row's lane from above (the node has a parent).
    pub from_above: bool,
    /// A line leaves this row's lane downwards (the next row is its first child).
    pub to_below: bool,
    /// Lanes with a vertical line passing through this row (other branches waiting).
    pub through: Vec<u16>,
    /// Lanes this node forks into (a curve from this node down to that lane).
    pub forks: Vec<u16>,
    pub marks: u16,
    /// For a compaction row: how many entries it summarized (the node's `span`, see
    /// [`NodeKind::Compaction`]); 0 for other rows.
    pub span: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Layout {
    rows: Vec<Row>,
    /// node index -> row index (a folded node maps to its fold row).
    row_of: Vec<u32>,
    lanes: u16,
    /// Active path, root first.
    path: Vec<u32>,
    /// The fold (its first node) expanded because it held [`LayoutOptions::reveal`].
    revealed: Option<u32>,
}

impl Layout {
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// The fold (its first node) shown expanded because it held [`LayoutOptions::reveal`]; a
    /// caller that keeps the user's expanded folds adds it to them, so the next layout keeps it.
    pub fn revealed(&self) -> Option<u32> {
        self.revealed
    }
    /// Widest lane count in the whole layout (so the UI can size the gutter once).
    pub fn lanes(&self) -> u16 {
        self.lanes
    }
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }
    /// Rows `start..end`, clamped to the layout.
    pub fn window(&self, start: usize, end: usize) -> &[Row] {
        let end = end.min(self.rows.len());
        let start = start.min(end);
        &self.rows[start..end]
    }
    pub fn row_of(&self, node: u32) -> Option<u32> {
        self.row_of.get(node as usize).copied().filter(|r| *r != u32::MAX)
    }
    pub fn active_path(&self) -> &[u32] {
        &self.path
    }
}

/// Path root..leaf, guarded against cycles (a corrupt file can make one).
pub fn path_to(nodes: &[Node], leaf: u32) -> Vec<u32> {
    let mut path = Vec::new();
    let mut seen = vec![false; nodes.len()];
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        let Some(node) = nodes.get(i as usize) else { break };
        if seen[i as usize] {
            break;
        }
        seen[i as usize] = true;
        path.push(i);
        cur = node.parent;
    }
    path.reverse();
    path
}

/// Compute the layout. Invalid parent indices (out of range, or a cycle) make a node a root.
pub fn layout(nodes: &[Node], leaf: Option<u32>, options: &LayoutOptions) -> Layout {
    let n = nodes.len();
    // Children lists, with a parent check that also breaks cycles: a node whose parent chain
    // does not reach a root is treated as a root.
    let parent_of = sanitized_parents(nodes);
    let mut child_start = vec![0u32; n + 1];
    for p in parent_of.iter().flatten() {
        child_start[*p as usize + 1] += 1;
    }
    for i in 0..n {
        child_start[i + 1] += child_start[i];
    }
    let mut fill = child_start.clone();
    let mut children = vec![0u32; n];
    for (i, p) in parent_of.iter().enumerate() {
        if let Some(p) = p {
            children[fill[*p as usize] as usize] = i as u32;
            fill[*p as usize] += 1;
        }
    }
    // Sort siblings by timestamp (stable: file order on ties).
    for i in 0..n {
        let (a, b) = (child_start[i] as usize, child_start[i + 1] as usize);
        if b - a > 1 {
            children[a..b].sort_by_key(|c| (nodes[*c as usize].timestamp, *c));
        }
    }
    let kids = |i: u32| -> &[u32] { &children[child_start[i as usize] as usize..child_start[i as usize + 1] as usize] };
    let mut roots: Vec<u32> = (0..n as u32).filter(|i| parent_of[*i as usize].is_none()).collect();
    roots.sort_by_key(|c| (nodes[*c as usize].timestamp, *c));

    // Markers from the active path and compactions.
    let path = match leaf {
        Some(l) if (l as usize) < n => path_to_sanitized(&parent_of, l),
        _ => Vec::new(),
    };
    let mut node_marks = vec![0u16; n];
    let mut span_of = vec![0u32; n];
    for (i, node) in nodes.iter().enumerate() {
        if node.flags & flags::LABELED != 0 {
            node_marks[i] |= marks::LABELED;
        }
        match node.kind {
            NodeKind::BranchSummary => node_marks[i] |= marks::BRANCH_SUMMARY,
            NodeKind::Compaction { first_kept, span } => {
                node_marks[i] |= marks::COMPACTION;
                span_of[i] = span;
                if let Some(k) = first_kept.filter(|k| (*k as usize) < n) {
                    node_marks[k as usize] |= marks::FIRST_KEPT;
                }
            }
            _ => {}
        }
    }
    for &p in &path {
        node_marks[p as usize] |= marks::ACTIVE;
    }
    if let Some(l) = leaf.filter(|l| (*l as usize) < n) {
        node_marks[l as usize] |= marks::LEAF;
    }
    if let Some(c) = options.cut.filter(|c| (*c as usize) < n) {
        node_marks[c as usize] |= marks::CUT;
    }
    mark_compactions(nodes, &path, &mut node_marks);

    // Depth-first walk with lane allocation. A node's first child inherits its lane; later
    // children get the lowest free lane, reserved from the fork row until their own row.
    let mut rows: Vec<Row> = Vec::with_capacity(n);
    let mut row_of = vec![u32::MAX; n];
    let mut lane_busy: Vec<bool> = Vec::new();
    let mut max_lane = 0u16;
    let mut lane_of = vec![0u16; n];
    // Stack of nodes to visit (pushed in reverse so the first child pops first).
    let mut stack: Vec<u32> = Vec::new();
    for &r in roots.iter().rev() {
        stack.push(r);
    }
    let alloc = |busy: &mut Vec<bool>| -> u16 {
        if let Some(i) = busy.iter().position(|b| !b) {
            busy[i] = true;
            i as u16
        } else {
            busy.push(true);
            (busy.len() - 1) as u16
        }
    };
    // Roots: each gets its lane when it is emitted (reserved only while its tree runs).
    let mut root_lane_pending = vec![false; n];
    for &r in &roots {
        root_lane_pending[r as usize] = true;
    }
    let foldable = |i: u32, marks_i: u16| -> bool {
        kids(i).len() == 1
            && parent_of[i as usize].is_some()
            && marks_i & !(marks::ACTIVE | marks::SUMMARIZED | marks::BEYOND_HORIZON) == 0
    };

    // While an expanded run is being emitted, no fold starts inside it.
    let mut suppress_until: Option<u32> = None;
    let mut revealed = None;
    while let Some(i) = stack.pop() {
        if suppress_until == Some(i) {
            suppress_until = None;
        }
        if root_lane_pending[i as usize] {
            lane_of[i as usize] = alloc(&mut lane_busy);
        }
        let lane = lane_of[i as usize];
        max_lane = max_lane.max(lane);

        // Fold a long linear run starting at i: i, then its only child, ... while foldable.
        let mut run_end = i;
        let mut run_len = 0usize;
        if options.fold_min > 0 && suppress_until.is_none() && foldable(i, node_marks[i as usize]) {
            // The run's first node stays visible; folding starts at its child.
            let mut j = kids(i)[0];
            let start = j;
            let mut last = None;
            let mut holds_reveal = false;
            while foldable(j, node_marks[j as usize]) {
                last = Some(j);
                run_len += 1;
                holds_reveal |= options.reveal == Some(j);
                j = kids(j)[0];
            }
            if run_len > options.fold_min && (options.expanded.contains(&start) || holds_reveal) {
                // Expanded by the user (or revealing a node): the whole run shows row by row.
                if !options.expanded.contains(&start) {
                    revealed = Some(start);
                }
                suppress_until = last;
            } else if run_len > options.fold_min {
                // Emit i, then a fold row for start..=last, then continue at last's child.
                let through = busy_except(&lane_busy, lane);
                rows.push(Row {
                    kind: RowKind::Node { node: i },
                    lane,
                    from_above: parent_of[i as usize].is_some(),
                    to_below: true,
                    through: through.clone(),
                    forks: Vec::new(),
                    marks: node_marks[i as usize],
                    span: span_of[i as usize],
                });
                row_of[i as usize] = (rows.len() - 1) as u32;
                let last = last.expect("run_len > 0 implies a last node");
                let mut fold_marks = 0u16;
                let mut k = start;
                loop {
                    row_of[k as usize] = rows.len() as u32;
                    fold_marks |= node_marks[k as usize];
                    if k == last {
                        break;
                    }
                    k = kids(k)[0];
                }
                let mut m = 0;
                if fold_marks & marks::ACTIVE != 0 {
                    m |= marks::FOLD_ACTIVE | marks::ACTIVE;
                }
                m |= fold_marks & (marks::SUMMARIZED | marks::BEYOND_HORIZON);
                rows.push(Row {
                    kind: RowKind::Fold { first: start, last, count: run_len as u32 },
                    lane,
                    from_above: true,
                    to_below: true,
                    through,
                    forks: Vec::new(),
                    marks: m,
                    span: 0,
                });
                run_end = last;
            }
        }
        let emit = if run_end != i { kids(run_end)[0] } else { i };
        // `emit` is the node whose own row we emit now (i itself, or the node after a fold).
        if emit != i {
            lane_of[emit as usize] = lane;
        }
        let node = emit;
        let ks = kids(node);
        let mut forks = Vec::new();
        for (ci, &c) in ks.iter().enumerate() {
            if ci == 0 {
                lane_of[c as usize] = lane;
            } else {
                let l = alloc(&mut lane_busy);
                lane_of[c as usize] = l;
                forks.push(l);
                max_lane = max_lane.max(l);
            }
        }
        // A later child's lane is busy from now on; the through-lines of this row are the lanes
        // that were busy before the forks.
        let mut through = busy_except(&lane_busy, lane);
        through.retain(|l| !forks.contains(l));
        rows.push(Row {
            kind: RowKind::Node { node },
            lane,
            from_above: parent_of[node as usize].is_some(),
            to_below: !ks.is_empty(),
            through,
            forks,
            marks: node_marks[node as usize],
            span: span_of[node as usize],
        });
        row_of[node as usize] = (rows.len() - 1) as u32;
        if ks.is_empty() {
            lane_busy[lane as usize] = false;
        }
        for &c in ks.iter().rev() {
            stack.push(c);
        }
    }
    Layout { rows, row_of, lanes: if n == 0 { 0 } else { max_lane + 1 }, path, revealed }
}

fn busy_except(busy: &[bool], lane: u16) -> Vec<u16> {
    busy.iter().enumerate().filter(|(i, b)| **b && *i as u16 != lane).map(|(i, _)| i as u16).collect()
}

/// Parents with out-of-range indices and cycles removed (a node on a cycle becomes a root).
fn sanitized_parents(nodes: &[Node]) -> Vec<Option<u32>> {
    let n = nodes.len();
    let mut parent: Vec<Option<u32>> = nodes.iter().map(|x| x.parent.filter(|p| (*p as usize) < n)).collect();
    // 0 = unknown, 1 = on current walk, 2 = reaches a root.
    let mut state = vec![0u8; n];
    let mut walk = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        walk.clear();
        let mut cur = start;
        loop {
            if state[cur] == 2 {
                break;
            }
            if state[cur] == 1 {
                // Cycle: cut it at `cur`.
                parent[cur] = None;
                break;
            }
            state[cur] = 1;
            walk.push(cur);
            match parent[cur] {
                Some(p) => cur = p as usize,
                None => break,
            }
        }
        for &w in &walk {
            state[w] = 2;
        }
    }
    parent
}

fn path_to_sanitized(parent: &[Option<u32>], leaf: u32) -> Vec<u32> {
    let mut path = Vec::new();
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        path.push(i);
        cur = parent[i as usize];
    }
    path.reverse();
    path
}

/// Compaction markers along the active path, following Pi's context rule: the newest compaction
/// on the path wins; entries before its `firstKeptEntryId` are no longer sent. Each compaction on
/// the path summarized the path entries from the previous compaction's first kept entry up to its
/// own first kept entry.
fn mark_compactions(nodes: &[Node], path: &[u32], node_marks: &mut [u16]) {
    let pos_in_path = |x: u32| path.iter().position(|p| *p == x);
    let mut prev_kept_pos = 0usize;
    let mut horizon = None;
    for (ci, &c) in path.iter().enumerate() {
        if let NodeKind::Compaction { first_kept, .. } = nodes[c as usize].kind {
            // A first kept entry off the path (or missing) keeps nothing before the compaction.
            let kept_pos = first_kept.and_then(pos_in_path).filter(|k| *k <= ci).unwrap_or(ci);
            let from = prev_kept_pos.min(kept_pos);
            for &p in &path[from..kept_pos] {
                node_marks[p as usize] |= marks::SUMMARIZED;
            }
            prev_kept_pos = kept_pos;
            horizon = Some((kept_pos, ci));
        }
    }
    if let Some((kept_pos, ci)) = horizon {
        // Before the newest compaction: everything except the kept tail is out of context.
        for (pi, &p) in path[..ci].iter().enumerate() {
            if pi < kept_pos {
                node_marks[p as usize] |= marks::BEYOND_HORIZON;
            }
        }
    }
}

/// ASCII render for snapshots and the CLI: one line per row.
/// `@` leaf, `*` active, `o` other node, `C` compaction, `B` branch summary, `~` fold,
/// `|` a waiting branch, `\` a fork into that lane. Markers follow the graph.
pub fn render_ascii(layout: &Layout, nodes_label: impl Fn(u32) -> String) -> String {
    let width = layout.lanes() as usize;
    let mut out = String::new();
    for row in layout.rows() {
        let mut cells = vec![' '; width * 2];
        for &t in &row.through {
            cells[t as usize * 2] = '|';
        }
        for &f in &row.forks {
            cells[f as usize * 2] = '\\';
        }
        let glyph = match &row.kind {
            RowKind::Fold { .. } => '~',
            RowKind::Node { .. } if row.marks & marks::LEAF != 0 => '@',
            RowKind::Node { .. } if row.marks & marks::COMPACTION != 0 => 'C',
            RowKind::Node { .. } if row.marks & marks::BRANCH_SUMMARY != 0 => 'B',
            RowKind::Node { .. } if row.marks & marks::ACTIVE != 0 => '*',
            RowKind::Node { .. } => 'o',
        };
        cells[row.lane as usize * 2] = glyph;
        let graph: String = cells.into_iter().collect();
        let mut line = graph.trim_end().to_string();
        while line.chars().count() < width * 2 {
            line.push(' ');
        }
        match &row.kind {
            RowKind::Node { node } => {
                line.push_str(&nodes_label(*node));
            }
            RowKind::Fold { first, last, count } => {
                line.push_str(&format!("({count} folded: {}..{})", nodes_label(*first), nodes_label(*last)));
            }
        }
        let tags: [(u16, &str); 7] = [
            (marks::FIRST_KEPT, "first-kept"),
            (marks::BEYOND_HORIZON, "grey"),
            (marks::SUMMARIZED, "summarized"),
            (marks::LABELED, "label"),
            (marks::CUT, "cut"),
            (marks::BRANCH_SUMMARY, "branch-summary"),
            (marks::COMPACTION, "compaction"),
        ];
        let mut t: Vec<String> = tags.iter().filter(|(m, _)| row.marks & m != 0).map(|(_, s)| s.to_string()).collect();
        if row.marks & marks::COMPACTION != 0 {
            t.push(format!("span={}", row.span));
        }
        if !t.is_empty() {
            line.push_str("  [");
            line.push_str(&t.join(" "));
            line.push(']');
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
