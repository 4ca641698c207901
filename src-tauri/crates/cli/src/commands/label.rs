//! `arbor-cli label FILE --entry ID (--text T | --clear) [--json]`: appends Pi's `label` entry
//! (parent: the file's leaf, as Pi's `appendLabelChange`). The new id is printed only after the
//! line is written and `sync_data`'d, so exit 0 means the label is durably in the file.
use super::append::{append_on_leaf, print_entry_id};
use super::CmdResult;
use session_engine::entries;

pub fn run(args: crate::LabelArgs) -> CmdResult {
    let label = match (&args.text, args.clear) {
        (Some(t), false) if t.is_empty() => {
            return Err("the label text is empty; pass --clear to remove a label".into())
        }
        (Some(t), false) => Some(t.as_str()),
        (None, true) => None,
        _ => return Err("pass exactly one of --text T and --clear".into()),
    };
    let id = append_on_leaf(&args.file, "the label", |n| {
        if n.session.index_of(&args.entry).is_none() {
            return Err(format!(
                "no entry with id {} in this session; run `arbor-cli tree FILE` to see the ids",
                args.entry
            ));
        }
        Ok(entries::label(n.id, n.parent, n.timestamp, &args.entry, label))
    })?;
    print_entry_id(&id, args.json);
    Ok(())
}
