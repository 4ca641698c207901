//! Starting on a file: `arbor FILE.jsonl` opens that session instead of the picker, and a second
//! `arbor FILE2.jsonl` hands its file to the running window (tauri-plugin-single-instance passes
//! the second process's argv and cwd over D-Bus; that process then exits). The UI subscribes
//! with a channel (no event permission needed) and opens what it is given with the ordinary
//! `open_session`, so a missing or non-session file gives the usual error and nothing is lost.

use crate::error::IpcResult;
use crate::state::launch::LaunchState;
use crate::view::session::LaunchRequest;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::State;

/// The session file named on a command line (`argv[0]` is the program), resolved against `cwd`:
/// the first argument that is not an option (`-x`, `--flag`; everything after `--` counts), or
/// a `file://` URI as a desktop environment passes for `%U`. `None` when there is none.
pub fn file_arg<I, S>(argv: I, cwd: &Path) -> Option<PathBuf>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut options_done = false;
    for a in argv.into_iter().skip(1) {
        let a = a.as_ref();
        let s = a.to_string_lossy();
        if !options_done && s == "--" {
            options_done = true;
            continue;
        }
        if !options_done && s.starts_with('-') && s.len() > 1 {
            continue;
        }
        if s.is_empty() {
            continue;
        }
        let p = match s.strip_prefix("file://") {
            Some(rest) => PathBuf::from(percent_decode(rest.strip_prefix("localhost").unwrap_or(rest))),
            None => PathBuf::from(a),
        };
        return Some(if p.is_absolute() { p } else { cwd.join(p) });
    }
    None
}

/// `%XX` escapes of a `file://` URI path decoded as bytes (invalid escapes are kept as they are).
fn percent_decode(s: &str) -> std::ffi::OsString {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        std::ffi::OsString::from_vec(out)
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(&out).into_owned().into()
    }
}

/// The D-Bus name under which the single instance is found when `ARBOR_DATA_DIR` is set (tests, a
/// second profile): one per data dir, so such a run never hands its file to another Arbor (a
/// developer's own window) and two test runs never meet. Without it, the plugin's default (the
/// app's identifier) is used. The name is the identifier plus a hash of the dir.
pub fn instance_dbus_id(data_dir: &OsStr) -> String {
    // FNV-1a: stable across runs and Rust versions (the std hasher is neither promised).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data_dir.as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{APP_IDENTIFIER}.d{h:016x}")
}

/// tauri.conf.json's `identifier` (a test keeps them equal).
pub const APP_IDENTIFIER: &str = "dev.arbor.app";

/// The single-instance plugin: a second launch hands its argv and cwd to the running app (over
/// the session bus on Linux) and exits.
pub fn single_instance_plugin<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    let b = tauri_plugin_single_instance::Builder::new().callback(second_instance);
    match std::env::var_os("ARBOR_DATA_DIR") {
        Some(d) => b.dbus_id(instance_dbus_id(&d)).build(),
        None => b.build(),
    }
}

/// The single-instance callback: the running app gets the second process's argv and cwd. The
/// window comes to the front, and the file named (relative to the second process's cwd) opens.
pub fn second_instance<R: tauri::Runtime>(app: &tauri::AppHandle<R>, argv: Vec<String>, cwd: String) {
    use tauri::Manager;
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
    }
    if let Some(path) = file_arg(&argv, Path::new(&cwd)) {
        if let Some(st) = app.try_state::<LaunchState>() {
            st.request(path);
        }
    }
}

/// The UI's subscription: returns the file to open now (the command line's), if any; files of
/// later launches arrive on `on_open`.
#[tauri::command]
#[specta::specta]
pub fn launch_subscribe(launch: State<'_, LaunchState>, on_open: Channel<LaunchRequest>) -> IpcResult<Option<String>> {
    Ok(launch.subscribe(Arc::new(move |r| on_open.send(r).is_ok())))
}
