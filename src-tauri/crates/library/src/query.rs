//! Reading the index: projects, sessions (sorted, filtered), full-text search with status.
use crate::db::classify_err;
use crate::error::LibError;
use crate::library::Library;
use crate::snippet::Place;
use crate::status::EntryStatus;
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// The sessions' `cwd` ("" when the header has none).
    pub cwd: String,
    pub session_count: i64,
    pub last_modified_ms: Option<i64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub path: PathBuf,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub name: Option<String>,
    /// Header timestamp (ISO).
    pub created: Option<String>,
    pub created_ms: Option<i64>,
    /// Pi's "modified" (§6.6): newest user/assistant message time, else the header's.
    pub modified_ms: Option<i64>,
    pub entry_count: i64,
    pub message_count: i64,
    /// Tips of the tree (1 = linear).
    pub branch_count: i64,
    pub compaction_count: i64,
    /// Last model used ("provider/model").
    pub model: Option<String>,
    pub first_message: Option<String>,
    /// Pi's context estimate at the leaf (§9.3).
    pub tokens_at_leaf: i64,
    /// Paths read by `read` tool calls and not modified (Pi's `readFiles` rule), in first-seen
    /// order. Filled by [`Library::session`]; [`Library::sessions`] leaves both lists empty.
    pub files_read: Vec<String>,
    /// Paths written or edited (`write`/`edit` tool calls), in first-seen order. Same note.
    pub files_modified: Vec<String>,
    pub leaf_id: Option<String>,
    pub parent_session: Option<String>,
    pub size: i64,
    /// Bytes after the last complete line (being written, or torn).
    pub pending_bytes: i64,
    pub bad_lines: i64,
    /// false: the first JSON object is not a session header (Pi would reject and wipe it).
    pub valid: bool,
    /// Another indexed file has the same session id (a copy, or a sync service's conflict copy),
    /// so the id alone does not say which file is meant.
    pub duplicate_id: bool,
    /// The cost of forgetting: after each compaction, the files the agent read again and the
    /// commands it ran again that it had read or run before the compaction's cut (so the summary
    /// did not carry them), summed over the session's compactions. `None` until the session's
    /// full text is indexed (phase 2), and for a file that is not a session.
    pub forgetting_cost: Option<i64>,
    /// The compactions [`SessionInfo::forgetting_cost`] is summed over.
    pub forgetting_compactions: Option<i64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionSort {
    #[default]
    Modified,
    Created,
    Name,
    Size,
    Messages,
    Tokens,
    /// The cost of forgetting ([`SessionInfo::forgetting_cost`]).
    Forgetting,
}

#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    pub project: Option<String>,
    /// Substring of "provider/model".
    pub model: Option<String>,
    pub modified_since_ms: Option<i64>,
    pub modified_until_ms: Option<i64>,
    /// Only files under these roots (prefix match on the path).
    pub roots: Vec<PathBuf>,
    pub sort: SessionSort,
    /// Ascending instead of the default newest / largest first.
    pub ascending: bool,
    pub include_invalid: bool,
    pub limit: Option<u32>,
    pub offset: u32,
}

#[derive(Debug, Clone)]
pub struct SearchQuery {
    /// Words (all must occur) and "quoted phrases". Set `raw` to pass FTS5 syntax through.
    pub text: String,
    pub raw: bool,
    pub project: Option<String>,
    /// Search within one session file.
    pub session_path: Option<PathBuf>,
    /// Only files under these roots.
    pub roots: Vec<PathBuf>,
    /// Keep only these statuses; empty = all.
    pub statuses: Vec<EntryStatus>,
    pub limit: u32,
    pub order: SearchOrder,
    /// Run phase 2 for files still waiting for it before answering (default). The app turns it
    /// off: its watcher is doing that work, and a search must not wait for it (nor take the
    /// write lock from it); the app says the results may be incomplete meanwhile.
    pub complete_pending: bool,
}

/// Hit order. Ranking (bm25) must score every match, which is slow for a word found in a large
/// share of a big index, so `Auto` ranks when there are at most 1,000 matches and otherwise
/// lists the newest indexed entries first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchOrder {
    #[default]
    Auto,
    Relevance,
    Newest,
}

impl SearchQuery {
    pub fn new(text: &str) -> SearchQuery {
        SearchQuery {
            text: text.into(),
            raw: false,
            project: None,
            session_path: None,
            roots: vec![],
            statuses: vec![],
            limit: 50,
            order: SearchOrder::Auto,
            complete_pending: true,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub session_path: PathBuf,
    pub session_id: Option<String>,
    pub session_name: Option<String>,
    pub cwd: Option<String>,
    pub entry_id: String,
    pub entry_type: String,
    /// The message's role and the entry's timestamp, read again from the entry's line with its
    /// text: `None` (both) when the file no longer holds that text there, as for the snippet.
    pub role: Option<String>,
    pub timestamp: Option<String>,
    /// The entry's status against the file's leaf as indexed.
    pub status: EntryStatus,
    /// Excerpt with the matches between `«` and `»`, secrets replaced by `[redacted: kind]`.
    /// `None` when the session file no longer holds the indexed text at the entry's place
    /// (rewritten or replaced since it was indexed, or gone): the hit is what the index knew,
    /// and the search has the file read again (see [`Library::search`]).
    pub snippet: Option<String>,
}

/// Turn user text into an FTS5 query: each word and each "quoted phrase" becomes a quoted
/// FTS5 string (so `-`, `:`, `*`, `OR` are plain text), all of them required.
pub fn fts_query(text: &str) -> Result<String, LibError> {
    let mut parts = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let (tok, next) = if let Some(r) = rest.strip_prefix('"') {
            match r.find('"') {
                Some(i) => (&r[..i], &r[i + 1..]),
                None => (r, ""),
            }
        } else {
            let i = rest.find(char::is_whitespace).unwrap_or(rest.len());
            (&rest[..i], &rest[i..])
        };
        if tok.chars().any(char::is_alphanumeric) {
            parts.push(format!("\"{}\"", tok.replace('"', "\"\"")));
        }
        rest = next;
    }
    if parts.is_empty() {
        return Err(LibError::Invalid("the search text has no words; type at least one word".into()));
    }
    Ok(parts.join(" "))
}

fn under_roots(sql: &mut String, args: &mut Vec<SqlValue>, col: &str, roots: &[PathBuf]) {
    if roots.is_empty() {
        return;
    }
    let mut ors = Vec::new();
    for r in roots {
        let mut s = r.to_string_lossy().to_string();
        if !s.ends_with(std::path::MAIN_SEPARATOR) {
            s.push(std::path::MAIN_SEPARATOR);
        }
        args.push(SqlValue::Text(s));
        ors.push(format!("substr({col}, 1, length(?{n})) = ?{n}", n = args.len()));
    }
    sql.push_str(&format!(" AND ({})", ors.join(" OR ")));
}

const SESSION_COLS: &str =
    "f.path, f.header_id, f.cwd, f.name, f.created, f.created_ms, f.modified_ms, f.entry_count, f.message_count,
  f.branch_count, f.compaction_count, f.model, f.first_message, COALESCE(f.ctx_usage, 0) + f.ctx_trailing, f.id,
  f.id, f.leaf_id, f.parent_session, f.size, f.size - f.offset, f.bad_lines, f.valid = 1,
  (f.header_id IS NOT NULL AND EXISTS (SELECT 1 FROM files g WHERE g.header_id = f.header_id AND g.id != f.id)),
  f.forget_cost, f.forget_compactions";

fn session_row(r: &rusqlite::Row) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        path: PathBuf::from(r.get::<_, String>(0)?),
        session_id: r.get(1)?,
        cwd: r.get(2)?,
        name: r.get(3)?,
        created: r.get(4)?,
        created_ms: r.get(5)?,
        modified_ms: r.get(6)?,
        entry_count: r.get(7)?,
        message_count: r.get(8)?,
        branch_count: r.get(9)?,
        compaction_count: r.get(10)?,
        model: r.get(11)?,
        first_message: r.get(12)?,
        tokens_at_leaf: r.get(13)?,
        files_read: Vec::new(),
        files_modified: Vec::new(),
        leaf_id: r.get(16)?,
        parent_session: r.get(17)?,
        size: r.get(18)?,
        pending_bytes: r.get(19)?,
        bad_lines: r.get(20)?,
        valid: r.get(21)?,
        duplicate_id: r.get(22)?,
        forgetting_cost: r.get(23)?,
        forgetting_compactions: r.get(24)?,
    })
}

impl Library {
    /// Projects (cwd) with their session counts, most recently active first.
    pub fn projects(&self) -> Result<Vec<Project>, LibError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT COALESCE(cwd, ''), count(*), max(modified_ms) FROM files WHERE valid = 1
                 GROUP BY COALESCE(cwd, '') ORDER BY max(modified_ms) DESC",
            )
            .map_err(classify_err)?;
        let rows = q
            .query_map([], |r| Ok(Project { cwd: r.get(0)?, session_count: r.get(1)?, last_modified_ms: r.get(2)? }))
            .map_err(classify_err)?;
        rows.collect::<Result<_, _>>().map_err(classify_err)
    }

    pub fn sessions(&self, f: &SessionFilter) -> Result<Vec<SessionInfo>, LibError> {
        let mut sql = format!("SELECT {SESSION_COLS} FROM files f WHERE 1=1");
        let mut args: Vec<SqlValue> = Vec::new();
        if !f.include_invalid {
            sql.push_str(" AND f.valid = 1");
        }
        if let Some(p) = &f.project {
            args.push(SqlValue::Text(p.clone()));
            sql.push_str(&format!(" AND f.cwd = ?{}", args.len()));
        }
        if let Some(m) = &f.model {
            args.push(SqlValue::Text(m.clone()));
            sql.push_str(&format!(" AND instr(f.model, ?{}) > 0", args.len()));
        }
        if let Some(s) = f.modified_since_ms {
            args.push(SqlValue::Integer(s));
            sql.push_str(&format!(" AND f.modified_ms >= ?{}", args.len()));
        }
        if let Some(u) = f.modified_until_ms {
            args.push(SqlValue::Integer(u));
            sql.push_str(&format!(" AND f.modified_ms < ?{}", args.len()));
        }
        under_roots(&mut sql, &mut args, "f.path", &f.roots);
        let col = match f.sort {
            SessionSort::Modified => "f.modified_ms",
            SessionSort::Created => "f.created_ms",
            SessionSort::Name => "COALESCE(f.name, f.first_message)",
            SessionSort::Size => "f.size",
            SessionSort::Messages => "f.message_count",
            SessionSort::Tokens => "COALESCE(f.ctx_usage, 0) + f.ctx_trailing",
            SessionSort::Forgetting => "f.forget_cost",
        };
        let dir = if f.ascending { "ASC" } else { "DESC" };
        sql.push_str(&format!(" ORDER BY {col} {dir}, f.path"));
        sql.push_str(&format!(" LIMIT {} OFFSET {}", f.limit.map(|l| l as i64).unwrap_or(-1), f.offset));
        let mut q = self.conn.prepare(&sql).map_err(classify_err)?;
        let rows = q.query_map(rusqlite::params_from_iter(args), session_row).map_err(classify_err)?;
        rows.collect::<Result<_, _>>().map_err(classify_err)
    }

    /// One session by path, if indexed (with its file lists).
    pub fn session(&self, path: &Path) -> Result<Option<SessionInfo>, LibError> {
        use rusqlite::OptionalExtension;
        let found = self
            .conn
            .query_row(
                &format!("SELECT {SESSION_COLS}, f.id FROM files f WHERE f.path = ?1"),
                [path.to_string_lossy()],
                |r| Ok((session_row(r)?, r.get::<_, i64>(25)?)),
            )
            .optional()
            .map_err(classify_err)?;
        let Some((mut info, id)) = found else { return Ok(None) };
        let list = |sql: &str| -> Result<Vec<String>, LibError> {
            let mut q = self.conn.prepare_cached(sql).map_err(classify_err)?;
            let rows = q.query_map([id], |r| r.get::<_, String>(0)).map_err(classify_err)?;
            rows.collect::<Result<_, _>>().map_err(classify_err)
        };
        info.files_modified = list("SELECT path FROM touched WHERE file_id = ?1 AND op = 1 ORDER BY id")?;
        info.files_read = list(
            "SELECT path FROM touched t WHERE file_id = ?1 AND op = 0
               AND NOT EXISTS (SELECT 1 FROM touched m WHERE m.file_id = t.file_id AND m.op = 1 AND m.path = t.path) ORDER BY id",
        )?;
        Ok(Some(info))
    }

    /// Every full-text row's text, read again from the session files as a search reads it
    /// (rowid, text; `None` where the file no longer gives the text indexed), in rowid order.
    /// The index keeps no copy of the text: this is for benchmarks (the same text into a bare
    /// FTS5 table) and checks.
    pub fn indexed_texts(&self) -> Result<Vec<(i64, Option<String>)>, LibError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT e.rowid, f.id, f.path, f.migrated, e.off, e.len, e.bh FROM entries e
                 JOIN files f ON f.id = e.file_id WHERE e.bh IS NOT NULL ORDER BY e.file_id, e.rowid",
            )
            .map_err(classify_err)?;
        let rows = q
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    Place {
                        file_id: r.get(1)?,
                        path: PathBuf::from(r.get::<_, String>(2)?),
                        migrated: r.get(3)?,
                        loc: Some((r.get(4)?, r.get(5)?, r.get(6)?)),
                    },
                ))
            })
            .map_err(classify_err)?;
        let rows: Vec<(i64, Place)> = rows.collect::<Result<_, _>>().map_err(classify_err)?;
        let mut out = Vec::with_capacity(rows.len());
        // one file at a time: each is opened once, and never all at once
        for file in rows.chunk_by(|a, b| a.1.file_id == b.1.file_id) {
            let (ids, places): (Vec<i64>, Vec<Place>) =
                file.iter().map(|(id, p)| (*id, Place { path: p.path.clone(), ..*p })).unzip();
            out.extend(ids.into_iter().zip(crate::snippet::texts(&places).0.into_iter().map(|t| Some(t?.body))));
        }
        out.sort_unstable_by_key(|x| x.0);
        Ok(out)
    }

    /// Status of every entry of one session, in file order: (entry id, status). For graph badges.
    pub fn entry_statuses(&self, path: &Path) -> Result<Vec<(String, EntryStatus)>, LibError> {
        let mut q = self
            .conn
            .prepare("SELECT e.entry_id, e.status FROM entries e JOIN files f ON f.id = e.file_id WHERE f.path = ?1 ORDER BY e.rowid")
            .map_err(classify_err)?;
        let rows = q
            .query_map([path.to_string_lossy()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, EntryStatus>(1)?)))
            .map_err(classify_err)?;
        rows.collect::<Result<_, _>>().map_err(classify_err)
    }

    /// Full-text search, best matches first (bm25), each hit with its status and a snippet
    /// (with the secrets of the entry's text redacted), made from the entry's line in its file.
    /// A hit whose file no longer holds the indexed text there (rewritten, replaced or deleted
    /// since indexing) comes without a snippet, and the file is marked to be read again in full
    /// by the next pass; with `complete_pending` it is read again before this call returns (a
    /// deleted file's rows are then dropped; the hits of this answer stay as they were).
    /// Files whose full text is still pending (phase 2, see [`Library::sync_roots_with`]) are
    /// indexed first.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>, LibError> {
        let m = if q.raw { q.text.clone() } else { fts_query(&q.text)? };
        let pending: bool = q.complete_pending
            && self
                .conn
                .query_row("SELECT EXISTS (SELECT 1 FROM files WHERE fts_done = 0)", [], |r| r.get(0))
                .map_err(classify_err)?;
        if pending {
            match self.complete_fulltext() {
                // another instance is writing (probably this very work): answer from what is there
                Ok(_) | Err(LibError::Busy(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let by_rank = match q.order {
            SearchOrder::Relevance => true,
            SearchOrder::Newest => false,
            SearchOrder::Auto => {
                let n: i64 = self
                    .conn
                    .query_row("SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ?1 LIMIT 1001)", [&m], |r| {
                        r.get(0)
                    })
                    .map_err(search_err)?;
                n <= 1000
            }
        };
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(m.clone())];
        let mut sql = String::from(
            "SELECT f.path, f.header_id, f.name, f.cwd, e.entry_id, e.type, e.status,
                    fts.rowid, f.id, f.migrated, e.off, e.len, e.bh
             FROM fts JOIN entries e ON e.rowid = fts.rowid JOIN files f ON f.id = e.file_id
             WHERE fts MATCH ?1",
        );
        if let Some(p) = &q.project {
            args.push(SqlValue::Text(p.clone()));
            sql.push_str(&format!(" AND f.cwd = ?{}", args.len()));
        }
        if let Some(p) = &q.session_path {
            args.push(SqlValue::Text(p.to_string_lossy().to_string()));
            sql.push_str(&format!(" AND f.path = ?{}", args.len()));
        }
        under_roots(&mut sql, &mut args, "f.path", &q.roots);
        if !q.statuses.is_empty() {
            let codes: Vec<String> = q.statuses.iter().map(|s| s.code().to_string()).collect();
            sql.push_str(&format!(" AND e.status IN ({})", codes.join(",")));
        }
        let order = if by_rank { "rank" } else { "fts.rowid DESC" };
        sql.push_str(&format!(" ORDER BY {order} LIMIT {}", q.limit.max(1)));
        let mut st = self.conn.prepare(&sql).map_err(search_err)?;
        let rows = st
            .query_map(rusqlite::params_from_iter(args), |r| {
                let path = PathBuf::from(r.get::<_, String>(0)?);
                let loc =
                    match (r.get::<_, Option<i64>>(10)?, r.get::<_, Option<i64>>(11)?, r.get::<_, Option<i64>>(12)?) {
                        (Some(o), Some(l), Some(h)) => Some((o, l, h)),
                        _ => None,
                    };
                let place = Place { file_id: r.get(8)?, path: path.clone(), migrated: r.get(9)?, loc };
                let hit = SearchHit {
                    session_path: path,
                    session_id: r.get(1)?,
                    session_name: r.get(2)?,
                    cwd: r.get(3)?,
                    entry_id: r.get(4)?,
                    entry_type: crate::db::type_of_sql(r.get_ref(5)?)?,
                    role: None,
                    timestamp: None,
                    status: r.get::<_, EntryStatus>(6)?,
                    snippet: None,
                };
                Ok((hit, r.get::<_, i64>(7)?, place))
            })
            .map_err(classify_err)?;
        let found: Vec<(SearchHit, i64, Place)> = rows.collect::<Result<_, _>>().map_err(search_err)?;
        drop(st);
        let (found, places): (Vec<(SearchHit, i64)>, Vec<Place>) =
            found.into_iter().map(|(h, rowid, p)| ((h, rowid), p)).unzip();
        let (lines, changed) = crate::snippet::texts(&places);
        let texts: Vec<(i64, &str)> =
            found.iter().zip(&lines).filter_map(|((_, rowid), t)| Some((*rowid, t.as_ref()?.body.as_str()))).collect();
        let mut snippets = snippets_of(&self.conn, &m, &texts).map_err(search_err)?;
        let hits = found
            .into_iter()
            .zip(lines)
            .map(|((mut hit, rowid), line)| {
                if let Some(line) = line {
                    if let Some(s) = snippets.remove(&rowid) {
                        hit.snippet = Some(crate::snippet::redact_snippet(&s, &line.body));
                    }
                    hit.role = line.role;
                    hit.timestamp = Some(line.timestamp);
                }
                hit
            })
            .collect();
        self.reindex_changed(&changed, q.complete_pending)?;
        Ok(hits)
    }
}

/// SQLite's `snippet(fts, 0, '«', '»', '…', 16)` of each text (rowid, text) for the FTS5 query
/// `m`, from a temporary FTS5 table with the index's tokenizer: the snippet the full-text table
/// gave when it kept its texts (`snippet()` reads only the row's text and the query's matches in
/// it, never the other rows).
fn snippets_of(conn: &Connection, m: &str, texts: &[(i64, &str)]) -> rusqlite::Result<HashMap<i64, String>> {
    let mut out = HashMap::new();
    if texts.is_empty() {
        return Ok(out);
    }
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.snip USING fts5(body, tokenize = {}); DELETE FROM temp.snip;",
        crate::db::FTS_TOKENIZE
    ))?;
    {
        let mut ins = conn.prepare_cached("INSERT INTO temp.snip(rowid, body) VALUES (?1, ?2)")?;
        for (rowid, text) in texts {
            ins.execute(rusqlite::params![rowid, text])?;
        }
        let mut q = conn
            .prepare_cached("SELECT rowid, snippet(snip, 0, '«', '»', '…', 16) FROM temp.snip WHERE snip MATCH ?1")?;
        let rows = q.query_map([m], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (rowid, s) = row?;
            out.insert(rowid, s);
        }
    }
    conn.execute_batch("DELETE FROM temp.snip")?;
    Ok(out)
}

/// An error of the search statement: one that is neither damage nor a busy or full index is
/// taken as search text FTS5 refused.
fn search_err(e: rusqlite::Error) -> LibError {
    match classify_err(e) {
        LibError::Sqlite(e) => LibError::Search(e),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::fts_query;

    #[test]
    fn user_text_becomes_safe_fts() {
        assert_eq!(fts_query("we decided").unwrap(), r#""we" "decided""#);
        assert_eq!(fts_query(r#"foo "exact phrase" -x"#).unwrap(), r#""foo" "exact phrase" "-x""#);
        assert_eq!(fts_query(r#"a"b"#).unwrap(), r#""a""b""#);
        assert!(fts_query("  -- ").is_err());
    }
}
