//! One module per subcommand. Each `run` returns `Err(message)` with a sentence that says what
//! to do; `main` prints it and exits with 2.
pub mod append;
pub mod compact;
pub mod compare;
pub mod context;
pub mod export;
pub mod index;
pub mod inspect;
pub mod label;
pub mod migrate;
pub mod navigate;
pub mod pi;
pub mod quality;
pub mod recall;
pub mod rename;
pub mod search;
pub mod secrets;
pub mod summary;
pub mod timeline;
pub mod tree;

pub type CmdResult = Result<(), String>;

use session_engine::Session;
use std::path::Path;

/// Opens a session for reading, turning every failure into a sentence that says what to do.
pub fn open_session(path: &Path) -> Result<Session, String> {
    let session = Session::open(path).map_err(|e| e.to_string())?;
    if !session.header_accepted() {
        return Err(format!(
            "{}: not a Pi session (no valid session header on its first JSON line). Check that you picked a .jsonl file written by Pi.",
            path.display()
        ));
    }
    Ok(session)
}

/// Resolves `--leaf ID|null` against a session.
pub fn leaf_arg(session: &Session, leaf: Option<&str>) -> Result<Option<usize>, String> {
    match leaf {
        None => Ok(session.file_leaf()),
        Some("null") => Ok(None),
        Some(id) => session
            .index_of(id)
            .map(Some)
            .ok_or_else(|| format!("no entry with id {id} in this session; run `arbor-cli tree FILE` to see the ids")),
    }
}

/// The context window of the session's model at `leaf`, as Pi resolves it: Pi's `models.json`
/// in its agent folder, then Pi's model table, then 200k (a `--context-window` flag overrides it
/// in the caller). A `models.json` Pi ignores is reported on stderr.
pub fn session_window(session: &Session, leaf: Option<usize>) -> summarizer::pi_models::Resolved {
    let ctx = session_engine::context::build_context(session, leaf);
    let name = |v: &pi_json::Value| v.as_str().map(str::to_string);
    let (provider, model) = match &ctx.model {
        Some(m) => (name(&m.provider), name(&m.model_id)),
        None => (None, None),
    };
    let pi = summarizer::pi_models::load_models_json(&session_engine::store::agent_dir());
    if let Some(e) = &pi.error {
        eprintln!("note: {e}");
    }
    summarizer::pi_models::resolve(provider.as_deref(), model.as_deref(), &Default::default(), &pi)
}

/// A one-line preview of a text: whitespace folded, cut at `max` characters.
pub fn preview(text: &str, max: usize) -> String {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = folded.chars().take(max).collect();
    if folded.chars().count() > max {
        out.push('…');
    }
    // Control characters (ANSI escapes, bidi overrides) are shown escaped, never interpreted.
    out.chars()
        .map(|c| {
            if c.is_control() || ('\u{202A}'..='\u{202E}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c) {
                '�'
            } else {
                c
            }
        })
        .collect()
}
