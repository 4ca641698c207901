// The app package lives at the repository root (layout A, see TAURI-RECIPE.md); its capabilities
// live under src-tauri/ so the top level stays the design card's.
fn main() {
    // cargo does not track the embedded frontend by itself.
    println!("cargo:rerun-if-changed=ui/dist");
    tauri_build::try_build(tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*"))
        .expect("tauri-build failed: is ui/dist built (npm --prefix ui run build)?");
}
