use super::CmdResult;

pub fn run(_args: crate::NavigateArgs) -> CmdResult {
    Err("`navigate` is not implemented yet".into())
}
