//! Summarizer: turns compaction and branch plans into entries.
//!
//! Seams:
//! - `provider`: three wire formats over reqwest, with the robustness rules of RELIABILITY.md
//!   F37–F46 (`retry`, `overflow`, `sse`).
//! - `keys`: API keys in the OS keyring (F50–F53); the UI can set, delete and ask, never read.
//! - `catalog`: models with their context window and output limit, user-extendable.
pub mod catalog;
pub mod error;
pub mod hooks;
pub mod keys;
pub mod offline;
pub mod overflow;
pub mod prompts;
pub mod provider;
pub mod retry;
pub mod run;
pub mod secret;
pub mod session_ops;
pub mod setup;
pub mod sse;

pub use error::{Error, Result};
pub use provider::{Client, Completion, CompletionRequest, Progress, ProgressFn, ProviderConfig, Timeouts, Usage, Wire};
pub use retry::RetryPolicy;
pub use secret::ApiKey;
pub use tokio_util::sync::CancellationToken;
