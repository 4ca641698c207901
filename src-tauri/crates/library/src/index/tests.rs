//! The two phase-2 writers (whole file, streamed) against each other.
use super::options::IndexOptions;
use super::{streamed, whole};
use crate::analyze;
use crate::db::write_tx;
use crate::snippet::{texts, Place};
use crate::status::EntryStatus;
use rusqlite::Connection;

/// Every column of an entry row with the timestamp and role read again from its line, and its
/// full-text body (the three only for an entry with a full-text row: no hit shows another).
type EntryRow = (
    String,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
    i64,
    Option<i64>,
    i64,
    Option<String>,
);

/// Every entry row with its full-text body, and the file's `touched` rows.
type Rows = (Vec<EntryRow>, Vec<(i64, String)>);

fn rows(conn: &Connection) -> Rows {
    // the index keeps no copy of the text: each body is read again from the file at the entry's
    // place, as a search reads it (and only an entry with a full-text row has one)
    let mut q = conn
        .prepare(
            "SELECT e.entry_id, e.parent_id, e.type, e.first_kept, e.ctx, e.tok, e.usage, e.status,
                    EXISTS (SELECT 1 FROM fts t WHERE t.rowid = e.rowid), f.id, f.path, e.off, e.len, e.bh
             FROM entries e JOIN files f ON f.id = e.file_id ORDER BY e.rowid",
        )
        .unwrap();
    type Read = (EntryRow, bool, Place);
    let read: Vec<Read> = q
        .query_map([], |r| {
            let loc = match (r.get(11)?, r.get(12)?, r.get(13)?) {
                (Some(o), Some(l), Some(h)) => Some((o, l, h)),
                _ => None,
            };
            Ok((
                (
                    r.get(0)?,
                    r.get(1)?,
                    crate::db::type_of_sql(r.get_ref(2)?)?,
                    r.get(3)?,
                    None,
                    None,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    None,
                ),
                r.get(8)?,
                Place {
                    file_id: r.get(9)?,
                    path: std::path::PathBuf::from(r.get::<_, String>(10)?),
                    migrated: false,
                    loc,
                },
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let (rows, places): (Vec<(EntryRow, bool)>, Vec<Place>) = read.into_iter().map(|(e, f, p)| ((e, f), p)).unzip();
    let (lines, changed) = texts(&places);
    assert!(changed.iter().all(|c| places.iter().any(|p| p.file_id == c.0 && p.loc.is_none())));
    let entries = rows
        .into_iter()
        .zip(lines)
        .map(|((mut e, has_fts), line)| {
            assert_eq!(has_fts, line.is_some(), "a full-text row exactly for an entry with a text: {}", e.0);
            if let Some(l) = line {
                (e.4, e.5, e.10) = (Some(l.timestamp), l.role, Some(l.body));
            }
            e
        })
        .collect();
    let mut q = conn.prepare("SELECT op, path FROM touched ORDER BY id").unwrap();
    let touched = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    (entries, touched)
}

/// Both phase-2 writers (the whole-file one and the streamed one, over many windows whose
/// batches are reused) store each entry's strings from the shared buffers exactly: an empty
/// parentId or firstKeptEntryId stays empty (not NULL), a missing one stays NULL, multi-byte text
/// keeps its bounds, bodies and file lists stay with their entries; and the role and timestamp
/// read again from an entry's line with its text are the engine's (an empty role stays empty).
#[test]
fn entry_rows_keep_every_string_on_both_write_paths() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let ts = "2026-01-01T00:00:00.000Z";
    let msg = |id: &str, parent: &str, role: &str, content: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"{role}","content":{content},"timestamp":1767225600000}}}}"#
        )
    };
    let mut lines = vec![format!(r#"{{"type":"session","version":3,"id":"s-1","timestamp":"{ts}","cwd":"/p"}}"#)];
    lines.push(msg("a1", "null", "user", r#""héllo wörld, ünïcode ✓""#));
    lines.push(msg(
        "a2",
        r#""a1""#,
        "assistant",
        r#"[{"type":"text","text":"reading"},{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"src/é.rs"}},{"type":"toolCall","id":"t2","name":"edit","arguments":{"path":"src/b.rs"}}]"#,
    ));
    lines.push(msg("a3", r#""a2""#, "", r#""a message whose role is empty""#));
    lines.push(
        r#"{"type":"label","id":"l1","parentId":"","timestamp":"","targetId":"a1","label":"orphan label"}"#.to_string(),
    );
    lines.push(format!(
        r#"{{"type":"compaction","id":"c1","parentId":"a3","timestamp":"{ts}","summary":"summary ✓","firstKeptEntryId":"a2","tokensBefore":10}}"#
    ));
    lines.push(format!(r#"{{"type":"compaction","id":"c2","parentId":"c1","timestamp":"{ts}","summary":"second","firstKeptEntryId":"","tokensBefore":10}}"#));
    lines.push(format!(
        r#"{{"type":"model_change","id":"m1","parentId":"c2","timestamp":"{ts}","provider":"p","modelId":"m"}}"#
    ));
    // a type this build does not know: stored by its name, not a number
    lines.push(format!(r#"{{"type":"future_kind","id":"f1","parentId":"m1","timestamp":"{ts}"}}"#));
    for i in 0..40 {
        let parent = if i == 0 { r#""m1""#.to_string() } else { format!(r#""u{}""#, i - 1) };
        lines.push(msg(&format!("u{i}"), &parent, "user", &format!(r#""question {i} ✓ {}""#, "x".repeat(i * 7))));
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    // what the rows must hold: the engine's entries and their facts
    let session = session_engine::session::Session::open(&path).unwrap();
    assert_eq!(session.len(), lines.len() - 1);
    let mut want = Vec::new();
    for i in 0..session.len() {
        let e = session.entry(i);
        let f = analyze::entry_facts(session.kind(i), session.value(i));
        let body = Some(f.body.clone()).filter(|b| !b.is_empty());
        let shown = body.is_some(); // a hit shows role and timestamp, and only an entry with text is hit
        want.push((
            e.id.to_string(),
            e.parent_id.as_deref().map(str::to_string),
            e.type_name.to_string(),
            f.first_kept,
            shown.then(|| e.timestamp.to_string()),
            f.role.filter(|_| shown),
            f.ctx,
            f.tok,
            f.usage,
            body,
        ));
    }
    assert_eq!(want[2].5.as_deref(), Some(""), "the empty role is kept");
    assert_eq!(want[3].1.as_deref(), Some(""), "the empty parentId is kept");
    assert_eq!(want[0].1, None);
    assert_eq!(want[5].3.as_deref(), Some(""), "the empty firstKeptEntryId is kept");
    assert_eq!(want[3].4.as_deref(), Some(""), "the empty timestamp of an entry with text is kept");
    assert_eq!(want[7].2, "future_kind");

    let mut got = Vec::new();
    for streamed in [false, true] {
        let conn = crate::db::open(
            &dir.path().join(format!("i{streamed}.sqlite3")),
            &crate::db::OpenOptions::default(),
            &mut vec![],
        )
        .unwrap();
        let u = if streamed {
            let opts = IndexOptions { window: 300, ..Default::default() }; // many windows, some lines longer than one
            let u = write_tx(&conn, || streamed::stream_full(&conn, &path, None, None, None, &opts)).unwrap();
            u.expect("read in windows")
        } else {
            whole::full(&conn, &path, None, None, None).unwrap()
        };
        let (entries, touched) = rows(&conn);
        let stripped: Vec<_> = entries
            .iter()
            .map(|r| {
                (
                    r.0.clone(),
                    r.1.clone(),
                    r.2.clone(),
                    r.3.clone(),
                    r.4.clone(),
                    r.5.clone(),
                    r.6,
                    r.7,
                    r.8,
                    r.10.clone(),
                )
            })
            .collect();
        assert_eq!(stripped, want, "streamed: {streamed}");
        assert_eq!(touched, vec![(0, "src/é.rs".to_string()), (1, "src/b.rs".to_string())], "streamed: {streamed}");
        // the events are the first entries with their statuses, as stored
        let stored: Vec<_> =
            entries.iter().map(|r| (r.0.clone(), r.1.clone(), r.2.clone(), EntryStatus::from_code(r.9))).collect();
        let events: Vec<_> = u
            .new_entries
            .iter()
            .map(|e| (e.entry_id.clone(), e.parent_id.clone(), e.entry_type.clone(), e.status))
            .collect();
        assert_eq!(events, stored, "streamed: {streamed}");
        got.push(entries);
    }
    assert_eq!(got[0], got[1], "the same statuses both ways");
    assert!(
        got[0].iter().any(|r| r.9 != EntryStatus::InContext.code()),
        "the compactions leave some entries out of the context"
    );
}
