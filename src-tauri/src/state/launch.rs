//! The file `arbor FILE.jsonl` names, held until the UI subscribes, and the UI's channel for the
//! files of later launches (`commands/launch.rs` reads command lines and subscribes).

use super::lock;
use crate::view::session::LaunchRequest;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Where requests go once the UI has subscribed; `false` means the receiver is gone.
pub type LaunchSink = Arc<dyn Fn(LaunchRequest) -> bool + Send + Sync>;

#[derive(Default)]
struct Inner {
    /// The file to open when the UI subscribes (the command line's, or a later launch's before
    /// the UI was ready: the newest wins).
    pending: Option<PathBuf>,
    sink: Option<LaunchSink>,
}

/// Managed by the app: the file of the command line until the UI takes it, then the UI's channel.
#[derive(Default)]
pub struct LaunchState {
    inner: Mutex<Inner>,
}

impl LaunchState {
    pub fn new(startup: Option<PathBuf>) -> LaunchState {
        LaunchState { inner: Mutex::new(Inner { pending: startup, sink: None }) }
    }

    /// The UI subscribes (at start, and again after a reload): returns the file it should open
    /// now, once, and sends later launches' files to `sink`.
    pub fn subscribe(&self, sink: LaunchSink) -> Option<String> {
        let mut g = lock(&self.inner);
        g.sink = Some(sink);
        g.pending.take().map(|p| p.display().to_string())
    }

    /// A second launch named `path`: the subscribed UI gets it now; before the UI subscribed (or
    /// when its channel is gone) it waits for the next subscription.
    pub fn request(&self, path: PathBuf) {
        let mut g = lock(&self.inner);
        let req = LaunchRequest { path: path.display().to_string() };
        let delivered = g.sink.as_ref().is_some_and(|s| s(req));
        if !delivered {
            g.sink = None;
            g.pending = Some(path);
        }
    }
}
