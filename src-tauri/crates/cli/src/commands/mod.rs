//! One module per subcommand. Each `run` returns `Err(message)` with a sentence that says what
//! to do; `main` prints it and exits with 2.
pub mod compact;
pub mod context;
pub mod index;
pub mod inspect;
pub mod navigate;
pub mod search;
pub mod tree;

pub type CmdResult = Result<(), String>;
