//! `arbor-cli rename FILE --name T [--json]`: appends Pi's `session_info` entry (parent: the
//! file's leaf, as Pi's `appendSessionInfo`), which Pi shows as the session's name. Synced
//! before the id is printed.
use super::append::{append_on_leaf, print_entry_id};
use super::CmdResult;
use session_engine::entries;
use std::path::PathBuf;

/// `arbor-cli rename` arguments.
#[derive(clap::Args, Debug)]
pub struct RenameArgs {
    /// Session file (.jsonl)
    pub file: PathBuf,
    /// The new name
    #[arg(long)]
    pub name: String,
    /// Print `{"entryId": …}` instead of the bare id
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: RenameArgs) -> CmdResult {
    // Pi trims the name it stores; an empty name would not rename anything.
    let name = args.name.trim();
    if name.is_empty() {
        return Err("the name is empty; pass --name with some text".into());
    }
    let id = append_on_leaf(&args.file, "the name", |n| Ok(entries::session_info(n.id, n.parent, n.timestamp, name)))?;
    print_entry_id(&id, args.json);
    Ok(())
}
