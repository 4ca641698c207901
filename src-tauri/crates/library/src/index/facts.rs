//! What a session row takes from entries read one by one (a streamed file's windows, appended
//! lines): counts, `modified`, the first user message, the name and the last model, by Pi's
//! picker rules on each entry's full JSON; and writing them with the cost of forgetting.
use super::row::Row;
use crate::analyze;
use crate::db::classify_err;
use crate::error::LibError;
use crate::forget;
use pi_json::Value;
use rusqlite::{params, Connection};
use session_engine::session::Kind;

/// The facts of [`session_facts`] that the row does not hold: the name and the model.
#[derive(Default)]
pub(crate) struct SessionFacts {
    /// The last `session_info`'s name, when one was seen (`Some(None)`: cleared).
    pub name: Option<Option<String>>,
    pub model: Option<String>,
}

/// Count entry `e` (whose JSON is `v`) into the facts of `r` and `sf`.
pub(crate) fn session_facts(r: &mut Row, sf: &mut SessionFacts, e: &session_engine::chunk::ChunkEntry, v: &Value) {
    r.entry_count += 1;
    match e.kind {
        Kind::Message => {
            r.message_count += 1;
            if let Some(m) = v.get("message") {
                let role = m.str_field("role");
                if m.get("content").is_some() && matches!(role, Some("user" | "assistant")) {
                    let t = m
                        .num_field("timestamp")
                        .or_else(|| session_engine::time::parse_iso_ms(&e.timestamp).map(|x| x as f64));
                    if let Some(t) = t.filter(|t| *t > 0.0) {
                        r.modified_ms = Some(r.modified_ms.map_or(t as i64, |x| x.max(t as i64)));
                    }
                    if r.first_message.is_none() && role == Some("user") {
                        let t = m.get("content").map(analyze::text_content).unwrap_or_default();
                        if !t.is_empty() {
                            r.first_message = Some(analyze::cut(&t, analyze::MAX_FIRST_MESSAGE).to_string());
                        }
                    }
                }
                if role == Some("assistant") {
                    if let (Some(p), Some(md)) = (m.str_field("provider"), m.str_field("model")) {
                        sf.model = Some(format!("{p}/{md}"));
                    }
                }
            }
        }
        Kind::Compaction => r.compaction_count += 1,
        Kind::SessionInfo => {
            sf.name = Some(v.str_field("name").map(|s| analyze::js_trim(s).to_string()).filter(|s| !s.is_empty()));
        }
        Kind::ModelChange => {
            if let (Some(p), Some(m)) = (v.str_field("provider"), v.str_field("modelId")) {
                sf.model = Some(format!("{p}/{m}"));
            }
        }
        _ => {}
    }
}

/// Write the session facts gathered from entries ([`session_facts`]) to the file's row.
pub(crate) fn write_session_facts(conn: &Connection, r: &Row, sf: &SessionFacts) -> Result<(), LibError> {
    conn.prepare_cached(
        "UPDATE files SET entry_count=?2, message_count=?3, compaction_count=?4, modified_ms=COALESCE(?5, modified_ms),
           first_message=?6, leaf_id=?7, ctx_usage=?8, ctx_trailing=?9, branch_count=?10,
           name = CASE WHEN ?11 THEN ?12 ELSE name END, model = COALESCE(?13, model),
           forget_cost=?14, forget_compactions=?15
         WHERE id = ?1",
    )
    .and_then(|mut s| {
        s.execute(params![
            r.id,
            r.entry_count,
            r.message_count,
            r.compaction_count,
            r.modified_ms,
            r.first_message,
            r.leaf_id,
            r.ctx_usage,
            r.ctx_trailing,
            r.branch_count,
            sf.name.is_some(),
            sf.name.clone().flatten(),
            sf.model,
            r.forget_cost,
            r.forget_compactions,
        ])
    })
    .map_err(classify_err)?;
    Ok(())
}

/// Write a file's open keys of the cost of forgetting ([`crate::forget`]).
pub(crate) fn write_forget_open(conn: &Connection, file_id: i64, open: &forget::Open) -> Result<(), LibError> {
    conn.prepare_cached("UPDATE files SET forget_open = ?2 WHERE id = ?1")
        .and_then(|mut s| s.execute(params![file_id, forget::open_blob(open)]))
        .map_err(classify_err)?;
    Ok(())
}
