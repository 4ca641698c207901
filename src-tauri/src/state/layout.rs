//! The graph's layout state of the open session: how the user folded it ([`Folding`]) and the
//! layout's input kept between layouts ([`NodeCache`]), and laying the graph out with them.

use crate::view::graph::{nodes, nodes_in};
use session_engine::{Kind, Session};
use session_graph::{flags, layout, Layout, LayoutOptions, Node};
use std::collections::HashSet;

/// How the user folded the graph: runs they expanded, or everything unfolded.
#[derive(Debug, Clone, Default)]
pub struct Folding {
    pub expanded: HashSet<u32>,
    pub unfold_all: bool,
}

/// The layout's input for the session as it is, kept between layouts: a leaf move, a fold or a
/// budget change lays the graph out again without building every node again (most of a layout's
/// time on a big session). After an append only the new entries' nodes are built (the engine
/// reads appended lines only when they change no earlier entry's parent), and a new label entry
/// sets its target's flag; anything else (a re-read) builds them all again.
#[derive(Debug, Default)]
pub struct NodeCache {
    /// (entry count, file length) the nodes were built for.
    key: (usize, u64),
    /// The id of the last entry they were built for (an append keeps it at its index).
    last_id: Option<Box<str>>,
    nodes: Vec<Node>,
}

impl NodeCache {
    pub fn nodes(&mut self, session: &Session) -> &[Node] {
        let key = (session.len(), session.file_len());
        if key != self.key || self.nodes.len() != session.len() {
            let old = self.nodes.len();
            let appended = old > 0
                && old < session.len()
                && key.1 > self.key.1
                && self.last_id.as_deref() == Some(session.id(old - 1));
            if appended {
                self.nodes.extend(nodes_in(session, old..session.len()));
                for i in old..session.len() {
                    if session.kind(i) != Kind::Label {
                        continue;
                    }
                    let v = session.value(i);
                    let Some(target) = v.str_field("targetId") else { continue };
                    if let Some(t) = session.index_of(target) {
                        self.nodes[t].flags = if session.label_of(target).is_some() { flags::LABELED } else { 0 };
                    }
                }
            } else {
                self.nodes = nodes(session);
            }
            self.key = key;
            self.last_id = session.len().checked_sub(1).map(|l| session.id(l).into());
        }
        &self.nodes
    }
    /// Forget the nodes (the session was replaced).
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.key = (0, 0);
        self.last_id = None;
    }
}

pub fn relayout(session: &Session, leaf: Option<usize>, folding: &Folding, cache: &mut NodeCache) -> Layout {
    layout(cache.nodes(session), leaf.map(|l| l as u32), &options(folding, None))
}

/// [`relayout`] with entry `reveal` given a row of its own: the fold that would hide it is laid
/// out expanded and stays so (its first node joins `folding.expanded`, as an unfold by hand
/// would), in the same single layout.
pub fn relayout_revealing(
    session: &Session,
    leaf: Option<usize>,
    folding: &mut Folding,
    cache: &mut NodeCache,
    reveal: Option<usize>,
) -> Layout {
    let l = layout(cache.nodes(session), leaf.map(|l| l as u32), &options(folding, reveal.map(|r| r as u32)));
    if let Some(first) = l.revealed() {
        folding.expanded.insert(first);
    }
    l
}

fn options(folding: &Folding, reveal: Option<u32>) -> LayoutOptions {
    let mut o = LayoutOptions::new();
    o.expanded = folding.expanded.clone();
    if folding.unfold_all {
        o.fold_min = 0;
    }
    o.reveal = reveal;
    o
}
