//! ASCII snapshots of graph layouts: reviewers see the shape, not the code.
use session_graph::{layout, marks, render_ascii, LayoutOptions, Node, NodeKind, RowKind};

/// Build nodes from a compact spec: (name, parent name, kind char). Timestamps follow order.
/// kind: u user, a assistant, t tool result, c compaction (first kept in `keep`), b branch summary.
/// `keep`: (compaction, its first kept entry, the span count the caller computed for it).
fn nodes(spec: &[(&str, &str, char)], keep: &[(&str, &str, u32)], labeled: &[&str]) -> (Vec<Node>, Vec<String>) {
    let names: Vec<String> = spec.iter().map(|s| s.0.to_string()).collect();
    let idx = |n: &str| names.iter().position(|x| x == n).map(|i| i as u32);
    let nodes = spec
        .iter()
        .enumerate()
        .map(|(i, (name, parent, k))| Node {
            parent: if parent.is_empty() { None } else { Some(idx(parent).expect("parent exists")) },
            timestamp: i as i64,
            kind: match k {
                'u' => NodeKind::User,
                'a' => NodeKind::Assistant,
                't' => NodeKind::ToolResult,
                'c' => {
                    let k = keep.iter().find(|(c, _, _)| c == name);
                    NodeKind::Compaction {
                        first_kept: k.and_then(|(_, k, _)| idx(k)),
                        span: k.map_or(0, |(_, _, n)| *n),
                    }
                }
                'b' => NodeKind::BranchSummary,
                _ => NodeKind::Other,
            },
            flags: if labeled.contains(name) { session_graph::flags::LABELED } else { 0 },
        })
        .collect();
    (nodes, names)
}

fn check(
    spec: &[(&str, &str, char)],
    keep: &[(&str, &str, u32)],
    labeled: &[&str],
    leaf: &str,
    opts: LayoutOptions,
    expect: &str,
) {
    let (ns, names) = nodes(spec, keep, labeled);
    let leaf = names.iter().position(|x| x == leaf).map(|i| i as u32);
    let l = layout(&ns, leaf, &opts);
    let got = render_ascii(&l, |i| names[i as usize].clone());
    assert_eq!(got.trim(), expect.trim(), "\n--- got ---\n{got}");
}

fn no_fold() -> LayoutOptions {
    LayoutOptions { fold_min: 0, ..Default::default() }
}

#[test]
fn linear_chain() {
    check(
        &[("u1", "", 'u'), ("a1", "u1", 'a'), ("u2", "a1", 'u'), ("a2", "u2", 'a')],
        &[],
        &[],
        "a2",
        no_fold(),
        "
* u1
* a1
* u2
@ a2",
    );
}

#[test]
fn fork_gets_a_lane_until_its_row() {
    check(
        &[
            ("u1", "", 'u'),
            ("a1", "u1", 'a'),
            ("u2", "a1", 'u'),
            ("a2", "u2", 'a'),
            ("u3", "a1", 'u'),
            ("a3", "u3", 'a'),
        ],
        &[],
        &["u3"],
        "a3",
        no_fold(),
        "
*   u1
* \\ a1
o | u2
o | a2
  * u3  [label]
  @ a3",
    );
}

#[test]
fn compaction_span_first_kept_and_horizon() {
    check(
        &[
            ("u1", "", 'u'),
            ("a1", "u1", 'a'),
            ("u2", "a1", 'u'),
            ("a2", "u2", 'a'),
            ("c1", "a2", 'c'),
            ("u3", "c1", 'u'),
            ("a3", "u3", 'a'),
        ],
        &[("c1", "u2", 2)],
        &[],
        "a3",
        no_fold(),
        "
* u1  [grey summarized]
* a1  [grey summarized]
* u2  [first-kept]
* a2
C c1  [compaction span=2]
* u3
@ a3",
    );
}

#[test]
fn repeated_compaction_moves_the_horizon() {
    check(
        &[
            ("u1", "", 'u'),
            ("a1", "u1", 'a'),
            ("c1", "a1", 'c'),
            ("u2", "c1", 'u'),
            ("a2", "u2", 'a'),
            ("c2", "a2", 'c'),
            ("u3", "c2", 'u'),
        ],
        &[("c1", "a1", 1), ("c2", "u2", 1)],
        &[],
        "u3",
        no_fold(),
        "
* u1  [grey summarized]
* a1  [first-kept grey summarized]
C c1  [grey summarized compaction span=1]
* u2  [first-kept]
* a2
C c2  [compaction span=1]
@ u3",
    );
}

#[test]
fn branch_summary_and_off_path_branch() {
    check(
        &[("u1", "", 'u'), ("a1", "u1", 'a'), ("u2", "a1", 'u'), ("b1", "a1", 'b'), ("u3", "b1", 'u')],
        &[],
        &[],
        "u3",
        no_fold(),
        "
*   u1
* \\ a1
o | u2
  B b1  [branch-summary]
  @ u3",
    );
}

#[test]
fn long_runs_fold_and_expand() {
    let mut spec: Vec<(String, String, char)> = vec![("r".into(), "".into(), 'u')];
    for i in 0..20 {
        let parent = spec.last().unwrap().0.clone();
        spec.push((format!("n{i}"), parent, if i % 2 == 0 { 'a' } else { 'u' }));
    }
    let spec_ref: Vec<(&str, &str, char)> = spec.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), *c)).collect();
    check(
        &spec_ref,
        &[],
        &[],
        "n19",
        LayoutOptions::new(),
        "
* r
* n0
~ (18 folded: n1..n18)
@ n19",
    );
    // Expanding the fold (identified by its first hidden node) shows every row.
    let (ns, _) = nodes(&spec_ref, &[], &[]);
    let l = layout(&ns, Some(20), &LayoutOptions::new());
    let RowKind::Fold { first, .. } = l.rows()[2].kind else { panic!("row 2 is the fold") };
    let mut opts = LayoutOptions::new();
    opts.expanded.insert(first);
    let l = layout(&ns, Some(20), &opts);
    assert_eq!(l.len(), 21);
}

#[test]
fn fold_row_knows_its_nodes_and_window_is_clamped() {
    let mut ns = vec![Node { parent: None, timestamp: 0, kind: NodeKind::User, flags: 0 }];
    for i in 1..100_000u32 {
        ns.push(Node { parent: Some(i - 1), timestamp: i as i64, kind: NodeKind::Assistant, flags: 0 });
    }
    // A branch in the middle keeps a visible fork.
    ns.push(Node { parent: Some(50_000), timestamp: 200_000, kind: NodeKind::User, flags: 0 });
    let l = layout(&ns, Some(99_999), &LayoutOptions::new());
    assert!(l.len() < 10, "a 100k chain folds to a handful of rows, got {}", l.len());
    let fold_row = l.row_of(10).unwrap();
    assert!(matches!(l.rows()[fold_row as usize].kind, RowKind::Fold { .. }));
    assert_eq!(l.window(5, 1_000_000).len(), l.len() - 5);
    assert!(l.window(1_000, 2_000).is_empty());
    // Unfolded, it is 100k rows and still a window query away.
    let l = layout(&ns, Some(99_999), &LayoutOptions { fold_min: 0, ..Default::default() });
    assert_eq!(l.len(), 100_001);
    assert_eq!(l.window(50_000, 50_100).len(), 100);
    assert_eq!(l.lanes(), 2);
    assert!(l.rows()[50_000].marks & marks::ACTIVE != 0);
}

#[test]
fn cycles_and_bad_parents_do_not_hang() {
    let ns = vec![
        Node { parent: Some(1), timestamp: 0, kind: NodeKind::User, flags: 0 },
        Node { parent: Some(0), timestamp: 1, kind: NodeKind::User, flags: 0 },
        Node { parent: Some(99), timestamp: 2, kind: NodeKind::User, flags: 0 },
    ];
    let l = layout(&ns, Some(1), &LayoutOptions::new());
    assert_eq!(l.len(), 3);
}

#[test]
fn cut_marker_is_shown() {
    let mut o = no_fold();
    o.cut = Some(2);
    check(
        &[("u1", "", 'u'), ("a1", "u1", 'a'), ("u2", "a1", 'u'), ("a2", "u2", 'a')],
        &[],
        &[],
        "a2",
        o,
        "
* u1
* a1
* u2  [cut]
@ a2",
    );
}

/// Revealing a node lays the graph out exactly as expanding, by hand, the fold that hides it:
/// same rows, and `revealed` names that fold (nothing when the node already has a row). Checked
/// for every node of a random forest of long runs, with and without another fold expanded.
#[test]
fn revealing_a_node_is_expanding_the_fold_that_hides_it() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    };
    let mut ns = vec![Node { parent: None, timestamp: 0, kind: NodeKind::User, flags: 0 }];
    for i in 1..600u32 {
        // Mostly a chain; now and then a fork from an earlier node, a second root or a compaction.
        let parent = match next() % 40 {
            0 => None,
            1..=3 => Some((next() % i as usize) as u32),
            _ => Some(i - 1),
        };
        let kind = match next() % 50 {
            0 => NodeKind::Compaction { first_kept: Some((next() % i as usize) as u32), span: 3 },
            1 => NodeKind::BranchSummary,
            k if k % 2 == 0 => NodeKind::User,
            _ => NodeKind::Assistant,
        };
        ns.push(Node { parent, timestamp: i as i64, kind, flags: 0 });
    }
    let leaf = Some(ns.len() as u32 - 1);
    let (mut revealed, mut visible) = (0, 0);
    for extra in [None, Some(())] {
        let mut base = LayoutOptions::new();
        if extra.is_some() {
            let l = layout(&ns, leaf, &base);
            let first = l.rows().iter().find_map(|r| match r.kind {
                RowKind::Fold { first, .. } => Some(first),
                _ => None,
            });
            base.expanded.insert(first.expect("the forest has a fold"));
        }
        let plain = layout(&ns, leaf, &base);
        assert_eq!(plain.revealed(), None);
        for node in 0..ns.len() as u32 {
            let mut opts = base.clone();
            opts.reveal = Some(node);
            let got = layout(&ns, leaf, &opts);
            let row = got.row_of(node).unwrap() as usize;
            assert_eq!(got.rows()[row].kind, RowKind::Node { node }, "node {node} has a row of its own");
            let mut by_hand = base.clone();
            match plain.rows()[plain.row_of(node).unwrap() as usize].kind {
                RowKind::Fold { first, .. } => {
                    assert_eq!(got.revealed(), Some(first), "node {node}");
                    by_hand.expanded.insert(first);
                    revealed += 1;
                }
                RowKind::Node { .. } => {
                    assert_eq!(got.revealed(), None, "node {node}");
                    visible += 1;
                }
            }
            assert_eq!(got.rows(), layout(&ns, leaf, &by_hand).rows(), "node {node}");
        }
    }
    assert!(revealed > 200 && visible > 50, "{revealed} revealed, {visible} already visible");
}
