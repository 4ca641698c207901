//! Summarizer: turns compaction and branch plans from `session-engine` into entries.
//!
//! Seams:
//! - `provider`: three wire formats over reqwest (OpenAI-compatible chat completions, Anthropic
//!   Messages, Gemini generateContent), streaming with SSE or not, with the robustness rules of
//!   RELIABILITY.md F37–F46 (`retry`, `overflow`, `sse`). A `Completion` exists only for a
//!   complete answer.
//! - `keys`: API keys in the OS keyring (F50–F53). The UI can set, delete and ask; it can never
//!   read. `ApiKey` never prints.
//! - `catalog`: models with their context window and output limit, user-extendable.
//! - `prompts`: our own instruction texts inside Pi's byte-exact envelopes.
//! - `run`: plan (sync, engine) → summarize (async: hook, calls, merge) → entry (sync).
//! - `session_ops`: the same on a file: lock, summarize, check the file did not move, append.
//! - `offline`: the deterministic extractive summarizer, the default without a key.
//! - `hooks`: before-compact / before-navigate external commands.
//! - `setup`: provider name + model + base URL + key lookup → `Backend` (or, for the judge,
//!   `PROVIDER/MODEL` → a `Client`).
//! - `judge`: the probe score of `summary_analysis::quality` asked of a model (answer from the
//!   summary alone, then grade against the expected answer), bounded, cancellable, and always
//!   reported apart from the offline score under the judge's provider and model.
//!
//! **Details and Pi compatibility (decision).** Pi writes `details: {readFiles, modifiedFiles}`.
//! Arbor keeps those two keys first and, by default, appends `usage` (model calls), `tokensAfter`
//! (compactions: the per-message estimate of the context right after the compaction, summary
//! included; Pi ignores it) and `summarizer` (`{provider, model}` or `{provider: "offline"}`,
//! plus `offline: true`). Pi reads only the first two keys, so such entries stay valid for Pi,
//! but the line is no longer byte-equal to Pi's. `RunOptions::record_extras = false` (CLI:
//! `ARBOR_DETAILS_EXTRAS=0`; Arbor settings: `recordDetailsExtras: false`) writes exactly Pi's
//! line. The conformance test (`arbor-cli/tests/compact_navigate.rs`) checks both: byte
//! equality with extras off, and equality minus the extra keys with extras on.
pub mod catalog;
pub mod chat;
pub mod error;
pub mod hooks;
pub mod judge;
pub mod keys;
pub mod offline;
pub mod overflow;
pub mod pi_models;
pub mod pi_models_json;
pub mod prompts;
pub mod provider;
pub mod resummarize;
pub mod retry;
pub mod run;
pub mod secret;
pub mod session_ops;
pub mod setup;
pub mod sse;
pub mod summary_ops;

pub use error::{Error, Result};
pub use provider::{
    Client, Completion, CompletionRequest, Progress, ProgressFn, ProviderConfig, Timeouts, Usage, Wire,
};
pub use retry::RetryPolicy;
pub use secret::ApiKey;
pub use tokio_util::sync::CancellationToken;
