//! `arbor-cli secrets FILE [--leaf ID] [--context] [--json]`: the secrets (API keys, tokens,
//! private keys, `KEY=value` secrets) that `arbor-cli export` with the same scope would redact,
//! found by `session_export::find_secrets` over the `secrets` crate's rules. The session is only
//! read; nothing is written.
//!
//! `--json` prints `{"findings": [{entryId, field, kind, start, end}]}`: `field` is the path of
//! the string in the entry's JSON (`message.content[0].text`, `message.content[1].arguments.command`,
//! `message.output`, `summary`, …) and `start..end` are UTF-16 code units (JavaScript string
//! indices) into that string, which the export shows verbatim (a tool-call argument as
//! `name: value`).
use super::CmdResult;
use session_export::{find_secrets, Scope, SecretFinding};
use std::path::PathBuf;

/// `arbor-cli secrets` arguments.
#[derive(clap::Args, Debug)]
pub struct SecretsArgs {
    /// Session file (.jsonl); it is only read
    pub file: PathBuf,
    /// Only the branch from the root to this entry (with --context: the context at it)
    #[arg(long)]
    pub leaf: Option<String>,
    /// Only what the model sees at the leaf (or --leaf)
    #[arg(long)]
    pub context: bool,
    /// Print `{"findings": [...]}`
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SecretsArgs) -> CmdResult {
    let session = super::open_session(&args.file)?;
    let leaf = super::leaf_arg(&session, args.leaf.as_deref())?;
    let scope = match (args.context, &args.leaf) {
        (true, _) => Scope::Context { leaf },
        (false, Some(_)) => Scope::Branch { leaf },
        (false, None) => Scope::Session { leaf },
    };
    let found = find_secrets(&session, scope);
    if args.json {
        let v = serde_json::json!({ "findings": findings_json(&found) });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(());
    }
    if found.is_empty() {
        println!("no secrets found");
        return Ok(());
    }
    for f in &found {
        println!("{}  {}  {}  {}..{}", f.entry_id, f.kind, f.field, f.start, f.end);
    }
    println!("{} secret(s); `arbor-cli export` redacts them unless --keep-secrets", found.len());
    Ok(())
}

/// The findings as the JSON reports give them.
pub fn findings_json(found: &[SecretFinding]) -> Vec<serde_json::Value> {
    found
        .iter()
        .map(|f| {
            serde_json::json!({
                "entryId": f.entry_id,
                "field": f.field,
                "kind": f.kind,
                "start": f.start,
                "end": f.end,
            })
        })
        .collect()
}
