//! `arbor-cli migrate FILE --out PATH`: "save as v3 copy". A version 1 or 2 session (which Arbor
//! opens read-only, and which Pi would rewrite in place on open) is migrated the way Pi does in
//! memory and written to a NEW file, atomically (temp file, sync, link); the original is never
//! opened for writing. An existing PATH is refused, whatever it is.
use super::CmdResult;
use session_engine::store::create_session_file;
use std::path::PathBuf;

/// `arbor-cli migrate` arguments.
#[derive(clap::Args, Debug)]
pub struct MigrateArgs {
    /// Version 1 or 2 session file (.jsonl); it is only read
    pub file: PathBuf,
    /// The new version 3 file (must not exist)
    #[arg(long)]
    pub out: PathBuf,
    /// Print `{"out": …, "entries": N}` instead of the path
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: MigrateArgs) -> CmdResult {
    let (file, out) = (&args.file, &args.out);
    if out.exists() {
        return Err(format!(
            "{} already exists; nothing was written. Pick a path that does not exist yet.",
            out.display()
        ));
    }
    let session = super::open_session(file)?;
    let Some(lines) = session.migrated_lines() else {
        return Err(match session.version_in_file() {
            Some(3.0) => format!(
                "{} is already a version 3 session; there is nothing to migrate and nothing was written.",
                file.display()
            ),
            Some(v) => {
                format!("{} is a version {v} session, which this Arbor cannot migrate; nothing was written. Open it with a newer Arbor.", file.display())
            }
            None => format!("{} cannot be migrated; nothing was written.", file.display()),
        });
    };
    create_session_file(out, &lines).map_err(|e| format!("{e}; nothing was written to {}", out.display()))?;
    if args.json {
        println!("{{\"out\":{},\"entries\":{}}}", pi_json::quote(&out.display().to_string()), lines.len() - 1);
    } else {
        println!("{}", out.display());
    }
    Ok(())
}
