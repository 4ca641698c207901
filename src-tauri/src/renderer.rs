//! How the window is drawn on Linux: without WebKitGTK's OpenGL compositing when the machine has
//! no GPU to run it.
//!
//! WebKitGTK composites each frame of the page with OpenGL. With no GPU (a virtual machine, a
//! remote desktop, Xvfb) that OpenGL is Mesa's software rasterizer, and a frame that redraws the
//! graph, the detail and the preview took 20–45 ms to come out on two cores: the frames after a
//! Continue or a click were late by that much. Painted by WebKit itself, without compositing, the
//! same frames take a few milliseconds (the window's measures are in docs/PERFORMANCE.md). A
//! machine with a GPU keeps WebKit's default, and so does a user who set the variable.

use std::ffi::OsStr;
use std::path::Path;

/// WebKitGTK's own switch (any value but "0" turns compositing off).
pub const COMPOSITING_VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Whether Arbor should turn compositing off: only when the user left the variable unset and the
/// machine has no DRM render node (`/dev/dri/renderD*`), through which any GPU, whatever its
/// driver, is offered to OpenGL.
pub fn compositing_off(user_setting: Option<&OsStr>, has_render_node: bool) -> bool {
    user_setting.is_none() && !has_render_node
}

/// Whether `dri` (normally `/dev/dri`) holds a render node.
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri)
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD")))
        .unwrap_or(false)
}

/// Sets the switch for this process and the web processes it starts; before the window exists,
/// while no other thread runs.
pub fn choose() {
    if cfg!(target_os = "linux")
        && compositing_off(std::env::var_os(COMPOSITING_VAR).as_deref(), has_render_node(Path::new("/dev/dri")))
    {
        std::env::set_var(COMPOSITING_VAR, "1");
    }
}
