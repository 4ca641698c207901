//! A big session's preview (its newest entries, drawn before the full open has read the file)
//! against the full open of the same file: the preview must never draw an entry or a parent link
//! that the full graph does not have. Included by tests/app.rs.

use crate::support::env;
use arbor_app::commands::preview::{preview, preview_nodes, EARLIER_TITLE};
use arbor_app::commands::sessions;
use arbor_app::view::graph::GraphRowKind;
use session_engine::entries;
use session_engine::tail::read_tail;
use session_engine::Session;
use std::path::Path;

fn user(text: &str) -> pi_json::Value {
    let mut m = pi_json::Map::new();
    m.insert("role", "user".into());
    m.insert("content", text.into());
    pi_json::Value::Obj(m)
}

/// 600 entries: a long linear run, then in the last 150 branches (navigations back a few entries),
/// labels on recent entries, a compaction whose first kept entry is recent, an extra root, and a
/// branch that goes back to an entry far before the end.
fn write_branching(path: &Path) {
    let mut lines = vec![entries::line(&entries::header("big", "2026-01-01T00:00:00.000Z", "/p", None))];
    let mut ids: Vec<String> = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    };
    for i in 0..600usize {
        let id = format!("b{i:05}");
        let ts = format!("2026-01-01T{:02}:{:02}:{:02}.000Z", i / 3600, (i / 60) % 60, i % 60);
        let parent = match i {
            0 | 520 => None,
            // Back to an entry far before the tail.
            540 => Some(ids[20].clone()),
            _ if i > 450 && next().is_multiple_of(5) => Some(ids[ids.len() - 1 - next() % ids.len().min(5)].clone()),
            _ => ids.last().cloned(),
        };
        let v = match i {
            _ if i > 450 && i.is_multiple_of(37) => {
                entries::label(&id, parent.as_deref(), &ts, &ids[i - 3], Some("checkpoint"))
            }
            580 => entries::compaction(
                &id,
                parent.as_deref(),
                &ts,
                "## Goal\n- keep going",
                &ids[570],
                1000.0,
                None,
                false,
            ),
            _ => entries::message(&id, parent.as_deref(), &ts, user(&format!("step {i} {}", "x".repeat(next() % 300)))),
        };
        lines.push(entries::line(&v));
        ids.push(id);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_preview_draws_only_entries_and_parent_links_the_full_open_has() {
    let e = env();
    let path = e.dir.join("big.jsonl");
    write_branching(&path);
    let full = Session::open(&path).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    for tail_bytes in [2_000, 9_000, 30_000, 60_000] {
        let p = preview(&path, 0, tail_bytes).unwrap().expect("a preview");
        let tail = read_tail(&path, tail_bytes).unwrap().unwrap();
        // The parent links the layout draws.
        let pn = preview_nodes(&tail);
        assert_eq!(pn.first, 1, "the tail of {tail_bytes} bytes is not the whole file");
        for (k, n) in pn.nodes.iter().enumerate().skip(1) {
            let id = tail.session.id(k - 1);
            let fi = full.index_of(id).unwrap_or_else(|| panic!("{id} is drawn but not in the file"));
            match n.parent {
                Some(0) => {
                    // The "earlier entries" row: the parent's line is before the tail, or missing.
                    if let Some(fp) = full.parent_of(fi) {
                        assert!(full.entry(fp).start < tail.start, "{id}'s parent is in the tail");
                    }
                }
                Some(pk) => {
                    let parent = tail.session.id(pk as usize - 1);
                    assert_eq!(full.parent_of(fi).map(|x| full.id(x)), Some(parent), "{id}'s parent");
                }
                None => assert_eq!(full.parent_of(fi), None, "{id} is a root in the preview only"),
            }
        }
        // The rows: each entry the file has, with the full graph's label; one "earlier" row.
        let mut earlier = 0;
        for r in &p.rows {
            if r.entry_id.is_empty() {
                assert_eq!(r.title, EARLIER_TITLE);
                earlier += 1;
                continue;
            }
            assert!(full.index_of(&r.entry_id).is_some(), "row {} shows {}", r.row, r.entry_id);
            if r.kind != GraphRowKind::Fold {
                assert_eq!(r.label.as_deref(), full.label_of(&r.entry_id), "{}'s label", r.entry_id);
            }
        }
        assert_eq!(earlier, 1);
        assert_eq!(p.entry_count as usize, tail.session.len());
        assert_eq!(p.file_kib as u64, len / 1024);
        assert!(p.tail_kib as u64 <= tail_bytes / 1024);
        // Pi's leaf, drawn as the leaf.
        let leaf = p.leaf_row.expect("a leaf row") as usize;
        assert_eq!(p.rows[leaf].entry_id, full.id(full.file_leaf().unwrap()));
        assert!(p.rows[leaf].marks.iter().any(|m| *m == *"leaf"));
    }
    // The full open of the same file lands on the same leaf the preview drew.
    let opened = sessions::open(&e.state, &path, false).unwrap();
    let p = preview(&path, 0, 9_000).unwrap().unwrap();
    assert_eq!(opened.leaf_id, p.leaf_id);
}

#[test]
fn small_files_are_opened_whole_without_a_preview() {
    let e = env();
    let path = e.dir.join("big.jsonl");
    write_branching(&path);
    let len = std::fs::metadata(&path).unwrap().len();
    // Under the size threshold: no preview, whatever the tail would be.
    assert!(preview(&path, len + 1, 2_000).unwrap().is_none());
    // A tail as big as the file: the full open is the preview.
    assert!(preview(&path, 0, len).unwrap().is_none());
    // The app's threshold: this file is far under it.
    assert!(preview(&path, arbor_app::commands::preview::PREVIEW_MIN_BYTES, arbor_app::commands::preview::TAIL_BYTES)
        .unwrap()
        .is_none());
}
