//! `arbor-cli label FILE --entry ID (--text T | --clear) [--json]`: appends Pi's `label` entry
//! (parent: the file's leaf, as Pi's `appendLabelChange`). The new id is printed only after the
//! line is written and `sync_data`'d, so exit 0 means the label is durably in the file.
use super::CmdResult;
use session_engine::store::{append_entry_planned, SessionLock};
use session_engine::{entries, ids, json, time};

pub fn run(args: crate::LabelArgs) -> CmdResult {
    let file = &args.file;
    let label = match (&args.text, args.clear) {
        (Some(t), false) if t.is_empty() => return Err("the label text is empty; pass --clear to remove a label".into()),
        (Some(t), false) => Some(t.as_str()),
        (None, true) => None,
        _ => return Err("pass exactly one of --text T and --clear".into()),
    };
    // The sidecar lock first: another Arbor writer waits its turn instead of racing on the leaf.
    let _lock = SessionLock::try_acquire(file).map_err(|e| e.to_string())?;
    let s = super::open_session(file)?;
    if let Some(why) = s.read_only_reason() {
        return Err(format!("{}: this session is read-only, so nothing was written: {why}", file.display()));
    }
    if s.index_of(&args.entry).is_none() {
        return Err(format!("no entry with id {} in this session; run `arbor-cli tree FILE` to see the ids", args.entry));
    }
    let parent = s.file_leaf().map(|i| s.id(i).to_string());
    let id = ids::new_entry_id(|id| s.index_of(id).is_some());
    let entry = entries::label(&id, parent.as_deref(), &time::now_iso(), &args.entry, label);
    // Pi may have appended since we read the leaf: then our parent would hide Pi's entry.
    let len = std::fs::metadata(file).map_err(|e| format!("{}: {e}", file.display()))?.len();
    if len != s.file_len() {
        return Err(format!(
            "{} changed while the label was being written (another program appended to it); nothing was written. Run it again.",
            file.display()
        ));
    }
    // The store checks the length again on its own descriptor right before the write, and says
    // so if another append still slipped in between.
    append_entry_planned(file, &entry, true, s.file_len()).map_err(|e| e.to_string())?;
    if args.json {
        println!("{{\"entryId\":{}}}", json::quote(&id));
    } else {
        println!("{id}");
    }
    Ok(())
}
