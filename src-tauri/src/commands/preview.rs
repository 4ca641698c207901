//! A big session's first paint: the graph of its newest entries, drawn while the full open reads
//! the whole file (seconds at a million entries, 2.6 GB).
//!
//! The engine reads the header line and the file's last [`TAIL_BYTES`]
//! ([`session_engine::tail`]); here they become a provisional graph laid out as the full one is
//! (same layout, folds and marks), with the last entry, Pi's leaf, as the leaf. The parents the
//! tail does not hold become one row, "earlier entries", above it: a link to that row says only
//! that the parent's line is before the tail (or in no line). So the preview draws no entry and
//! no parent link that the full graph lacks. It holds the tail only while it lays it out.
//!
//! Files under [`PREVIEW_MIN_BYTES`] get no preview: they open in one step, as before.

use crate::error::{AppError, IpcResult};
use crate::view::graph::{entry_title, graph_row, marks_of, nodes_in, GraphRow, GraphRowKind};
use serde::Serialize;
use session_engine::tail::{read_tail, Tail};
use session_graph::{layout, LayoutOptions, Node, NodeKind, RowKind};
use specta::Type;
use std::path::Path;

/// Files from this size on are drawn from their tail first: s1m (2.6 GB) takes 4.5 s to open
/// under load, while s100k (252 MiB) opens in well under a second, and keeps the single open it
/// had. `ARBOR_PREVIEW_MIN_BYTES` sets another size (the end-to-end test previews a small file).
pub const PREVIEW_MIN_BYTES: u64 = 512 << 20;
/// How much of the file's end the preview reads: about 3,000 entries of a generated session,
/// more rows than a window shows once long runs are folded, read and laid out in tens of ms.
pub const TAIL_BYTES: u64 = 8 << 20;

/// The title of the row that stands for every entry before the tail.
pub const EARLIER_TITLE: &str = "Earlier entries: still being read";

/// A big session's provisional graph: every row of it (a few hundred), at once.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SessionPreview {
    pub path: String,
    /// The name a `session_info` entry in the tail gives (a name set earlier is not seen yet).
    pub name: Option<String>,
    /// The file's size, and how much of its end was read (KiB: a u32 in bytes stops at 4 GiB).
    pub file_kib: u32,
    pub tail_kib: u32,
    /// The entries read.
    pub entry_count: u32,
    pub rows: Vec<GraphRow>,
    pub lanes: u32,
    /// Pi's leaf: the file's last entry.
    pub leaf_id: Option<String>,
    pub leaf_row: Option<u32>,
}

/// The provisional graph's input: node 0 stands for the entries before the tail when there are
/// any, and node `i + first` is the tail's entry `i`.
pub struct PreviewNodes {
    pub nodes: Vec<Node>,
    /// 1 when node 0 is the "earlier entries" row, else 0.
    pub first: usize,
}

/// The layout nodes of a tail: as the full graph builds them ([`nodes_in`]), with a parent
/// outside the tail replaced by the "earlier entries" node and no compaction span (the count
/// needs entries the tail does not hold; the full graph's rows bring it).
pub fn preview_nodes(tail: &Tail) -> PreviewNodes {
    let s = &tail.session;
    let first = usize::from(tail.has_earlier());
    let mut nodes = Vec::with_capacity(s.len() + first);
    if first == 1 {
        nodes.push(Node { parent: None, timestamp: i64::MIN, kind: NodeKind::Other, flags: 0 });
    }
    for (i, mut n) in nodes_in(s, 0..s.len()).into_iter().enumerate() {
        n.parent = match n.parent {
            Some(p) => Some(p + first as u32),
            None if first == 1 && tail.parent_outside(i) => Some(0),
            None => None,
        };
        if let NodeKind::Compaction { first_kept, .. } = n.kind {
            n.kind = NodeKind::Compaction { first_kept: first_kept.map(|k| k + first as u32), span: 0 };
        }
        nodes.push(n);
    }
    PreviewNodes { nodes, first }
}

/// The preview of `path`, or `None` when it is under `min_bytes` or its tail cannot stand for it
/// (see [`read_tail`]): then the caller opens it whole.
pub fn preview(path: &Path, min_bytes: u64, tail_bytes: u64) -> Result<Option<SessionPreview>, AppError> {
    let len = std::fs::metadata(path).map_err(|e| AppError::BadInput(format!("{}: {e}", path.display())))?.len();
    if len < min_bytes {
        return Ok(None);
    }
    let Some(tail) = read_tail(path, tail_bytes).map_err(|e| AppError::BadInput(format!("{}: {e}", path.display())))?
    else {
        return Ok(None);
    };
    let s = &tail.session;
    let PreviewNodes { nodes, first } = preview_nodes(&tail);
    let leaf = s.file_leaf().map(|l| (l + first) as u32);
    let l = layout(&nodes, leaf, &LayoutOptions::new());
    let entry = |node: u32| (node as usize).checked_sub(first);
    let rows = l
        .rows()
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut marks = marks_of(r.marks);
            let (entry_id, kind, title, label, fold_count) = match r.kind {
                RowKind::Node { node } => match entry(node) {
                    Some(i) => {
                        let (kind, title) = entry_title(s, i);
                        (s.id(i).to_string(), kind, title, s.label_of(s.id(i)).map(str::to_string), 0)
                    }
                    None => (String::new(), GraphRowKind::Other, EARLIER_TITLE.to_string(), None, 0),
                },
                RowKind::Fold { first: f, count, .. } => {
                    marks.push(crate::view::graph::Mark::Fold);
                    let id = entry(f).map(|i| s.id(i).to_string()).unwrap_or_default();
                    (id, GraphRowKind::Fold, format!("{count} entries"), None, count)
                }
            };
            graph_row(k as u32, r, marks, (entry_id, kind, title, label, fold_count))
        })
        .collect();
    Ok(Some(SessionPreview {
        path: path.display().to_string(),
        name: s.name().map(str::to_string),
        file_kib: (len >> 10).min(u32::MAX as u64) as u32,
        tail_kib: ((tail.file_len - tail.start) >> 10) as u32,
        entry_count: s.len() as u32,
        rows,
        lanes: l.lanes() as u32,
        leaf_id: s.file_leaf().map(|i| s.id(i).to_string()),
        leaf_row: leaf.and_then(|n| l.row_of(n)),
    }))
}

/// The provisional graph of a big session, read off the main thread (which draws the window);
/// `None` for a file the full open reads as quickly.
#[tauri::command]
#[specta::specta]
pub async fn preview_session(path: String) -> IpcResult<Option<SessionPreview>> {
    let min = std::env::var("ARBOR_PREVIEW_MIN_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(PREVIEW_MIN_BYTES);
    tauri::async_runtime::spawn_blocking(move || preview(Path::new(&path), min, TAIL_BYTES))
        .await
        .map_err(|e| AppError::Refused(format!("reading the session's newest entries stopped unexpectedly ({e})")))?
        .map_err(Into::into)
}
