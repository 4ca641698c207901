use super::CmdResult;

pub fn run(_args: crate::SearchArgs) -> CmdResult {
    Err("`search` is not implemented yet".into())
}
