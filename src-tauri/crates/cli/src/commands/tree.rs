use super::CmdResult;

pub fn run(_args: crate::TreeArgs) -> CmdResult {
    Err("`tree` is not implemented yet".into())
}
