use super::CmdResult;

pub fn run(_args: crate::ContextArgs) -> CmdResult {
    Err("`context` is not implemented yet".into())
}
