//! The notices of summaries written by others, as the UI receives them: the setting, and a click
//! on a notification (the UI opens the summary workbench on the entry).

use serde::Serialize;
use specta::Type;

/// A notification was clicked: open the workbench on `entryId` of the session at `sessionPath`.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct NoticeClick {
    pub session_path: String,
    pub entry_id: String,
}

/// What the Notifications settings show.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct NoticeSettings {
    /// "Notify me when Pi compacts or summarizes a branch" (on by default).
    pub enabled: bool,
    /// Why the last notification could not be shown (no session bus or notification service).
    pub problem: Option<String>,
}
