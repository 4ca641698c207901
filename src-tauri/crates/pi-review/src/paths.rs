//! Where the review socket lives, and the private folder around it.
use std::path::{Path, PathBuf};

/// `$ARBOR_REVIEW_SOCKET` when set (tests, several Arbors), else
/// `$XDG_RUNTIME_DIR/arbor/review.sock`, else `/tmp/arbor-<uid>/review.sock`. The extension
/// computes the same path (`socketPath` in `pi-extension/arbor.ts`).
pub fn socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os("ARBOR_REVIEW_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(rt) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return rt.join("arbor").join("review.sock");
    }
    PathBuf::from("/tmp").join(format!("arbor-{}", uid())).join("review.sock")
}

#[cfg(unix)]
pub fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

#[cfg(not(unix))]
pub fn uid() -> u32 {
    0
}

/// Why the socket's folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0} is not a directory (a symbolic link or a file is in the way); remove it and start again")]
    NotADirectory(PathBuf),
    #[error("{path} belongs to uid {owner}, not to you (uid {me}); someone else may be posing as Arbor. Remove it, or set ARBOR_REVIEW_SOCKET to a path in a folder of yours")]
    NotOurs { path: PathBuf, owner: u32, me: u32 },
}

/// Creates the socket's folder with mode 0700, or checks an existing one: a real directory of
/// this user. One that others can enter is made 0700 again (it is ours), and the change is
/// returned as a note.
#[cfg(unix)]
pub fn prepare_folder(dir: &Path) -> Result<Option<String>, FolderError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let io = |source| FolderError::Io { path: dir.to_path_buf(), source };
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            match std::fs::DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return prepare_folder(dir),
                Err(e) => return Err(io(e)),
            }
            // The umask may have taken bits away, never added any; set it exactly anyway.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
            Ok(None)
        }
        Err(e) => Err(io(e)),
        Ok(m) if !m.file_type().is_dir() => Err(FolderError::NotADirectory(dir.to_path_buf())),
        Ok(m) if m.uid() != uid() => Err(FolderError::NotOurs { path: dir.to_path_buf(), owner: m.uid(), me: uid() }),
        Ok(m) if m.mode() & 0o077 != 0 => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
            Ok(Some(format!(
                "{} was open to other users (mode {:o}); it is 700 again",
                dir.display(),
                m.mode() & 0o777
            )))
        }
        Ok(_) => Ok(None),
    }
}

#[cfg(not(unix))]
pub fn prepare_folder(_dir: &Path) -> Result<Option<String>, FolderError> {
    Ok(None)
}
