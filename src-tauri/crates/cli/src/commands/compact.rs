use super::CmdResult;

pub fn run(_args: crate::CompactArgs) -> CmdResult {
    Err("`compact` is not implemented yet".into())
}
