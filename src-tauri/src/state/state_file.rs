//! Arbor's own small state file (`<data dir>/state.json`): the leaf remembered per session, the
//! recent sessions, the context windows the user set, the dismissed keyring notice, whether
//! summaries written by others are notified.

use crate::error::AppError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArborStateFile {
    /// session path -> leaf id chosen in Arbor (absent: Pi's file leaf).
    #[serde(default)]
    pub leaves: BTreeMap<String, String>,
    /// Most recent first.
    #[serde(default)]
    pub recent: Vec<String>,
    /// Context windows the user set, per model (`summarizer::pi_models::override_key`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context_windows: BTreeMap<String, u64>,
    /// The user dismissed the "keyring unavailable" notice; it is not shown again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keyring_notice_dismissed: bool,
    /// How Arbor reviews Pi's compactions (absent: review, 5 minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<crate::view::review::ReviewPrefs>,
    /// The user turned off the OS notifications of summaries written by others (on by default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summary_notices_off: bool,
}

impl ArborStateFile {
    /// A missing or unreadable state file is an empty state: it is only a convenience.
    pub fn load(path: &Path) -> ArborStateFile {
        std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<(), AppError> {
        let io = |source| AppError::Io { what: format!("writing {}", path.display()), source };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("json.tmp");
        let body = serde_json::to_vec_pretty(self).map_err(|e| AppError::BadInput(e.to_string()))?;
        std::fs::write(&tmp, body).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    pub fn touch_recent(&mut self, session_path: &str) {
        self.recent.retain(|p| p != session_path);
        self.recent.insert(0, session_path.to_string());
        self.recent.truncate(12);
    }
}
