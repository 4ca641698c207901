//! The Copy buttons (entry text, summary markdown): the text goes to the system clipboard through
//! tauri-plugin-clipboard-manager from Rust, so the webview is granted no clipboard permission
//! (it can neither read the clipboard nor call the plugin itself).

use crate::error::{AppError, IpcResult};
use tauri_plugin_clipboard_manager::ClipboardExt;

/// Put `text` on the clipboard; returns its length in characters.
#[tauri::command]
#[specta::specta]
pub fn copy_text(app: tauri::AppHandle, text: String) -> IpcResult<u32> {
    let n = text.chars().count() as u32;
    app.clipboard().write_text(text).map_err(|e| {
        AppError::Refused(format!("the clipboard could not be written ({e}); select the text and press Ctrl+C instead"))
    })?;
    Ok(n)
}
