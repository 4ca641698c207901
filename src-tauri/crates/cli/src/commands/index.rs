use super::CmdResult;

pub fn run(_args: crate::IndexArgs) -> CmdResult {
    Err("`index` is not implemented yet".into())
}
