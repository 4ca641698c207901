//! The running export (one at a time), so `cancel_export` can stop it.

use super::lock;
use crate::error::AppError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The running export's cancel flag (one export at a time).
#[derive(Default)]
pub struct ExportState {
    running: Mutex<Option<Arc<AtomicBool>>>,
}

impl ExportState {
    /// Registers a new export and returns its cancel flag; refused while another one runs.
    pub fn start(&self) -> Result<Arc<AtomicBool>, AppError> {
        let mut g = lock(&self.running);
        if g.is_some() {
            return Err(AppError::Refused("an export is already running; wait for it or cancel it".into()));
        }
        let cancel = Arc::new(AtomicBool::new(false));
        *g = Some(cancel.clone());
        Ok(cancel)
    }

    /// The export ended (done, failed or cancelled): another may start.
    pub fn finish(&self) {
        *lock(&self.running) = None;
    }

    /// Stops the running export; false when none runs.
    pub fn cancel(&self) -> bool {
        match lock(&self.running).as_ref() {
            Some(f) => {
                f.store(true, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }
}
