//! Arbor reviews Pi's compactions and branch summaries before Pi writes them.
//!
//! Pi loads Arbor's extension (`pi-extension/arbor.ts`, embedded here as
//! [`install::EXTENSION_SOURCE`]). Before Pi writes a compaction or a branch summary, the
//! extension makes Pi's own draft and asks Arbor over a private Unix socket
//! ([`paths::socket_path`]); the [`server`] hands each request to a [`reviewer::Reviewer`] (the
//! app's dialog, or `arbor-cli pi serve`'s headless reviewers) and answers: accept, edit, move
//! the cut ([`cut`] checks it on the session file), cancel, or let Pi decide. The wire format is
//! [`protocol`], written down in docs/PI-REVIEW-PROTOCOL.md.
//!
//! A load error in any extension stops Pi from starting, so install ([`install::install_checked`])
//! starts the user's Pi once with the new file ([`pi_check`]) and takes the file away again
//! when Pi cannot load it.
//!
//! Depends on `session-engine` only for reading sessions and Pi's cut rules.
pub mod cut;
pub mod install;
pub mod paths;
pub mod pi_check;
pub mod protocol;
pub mod reviewer;
#[cfg(unix)]
pub mod server;

pub use protocol::{Policy, ReviewKind, ReviewRequest, MAX_LINE_BYTES, PROTOCOL_VERSION};
pub use reviewer::{Decision, Review, Reviewer, Verdict};
