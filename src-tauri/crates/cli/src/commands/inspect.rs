use super::CmdResult;

pub fn run(_args: crate::InspectArgs) -> CmdResult {
    Err("`inspect` is not implemented yet".into())
}
