//! Putting the extension where Pi finds it, taking it away, and saying where it is.
//!
//! Pi loads every `*.ts` in `$PI_CODING_AGENT_DIR/extensions/` (default `~/.pi/agent/extensions/`)
//! and in a project's `.pi/extensions/`. Arbor's file is `arbor.ts`, written byte for byte from
//! the source embedded here (`pi-extension/arbor.ts` of this repository).
//!
//! A load error in any extension stops Pi from starting, so a front end installs with
//! [`install_checked`]: it writes the file as [`install`] does, then starts the user's Pi once
//! with it ([`crate::pi_check::check`]: `$ARBOR_PI`, else `pi` on PATH; about 3 s). When Pi cannot
//! load it, the file this run wrote is taken away again (a file it replaced is put back) and the
//! answer is [`InstallError::DoesNotLoad`], whose message says what happened and what to do; the
//! [`InstallReport`] inside tells a window the same in parts. No Pi to ask: installed, and the
//! report's check says it was not checked and why. A Pi of another release line than the one the
//! extension is tested against: installed, with a warning. `arbor-cli pi install-extension` and
//! the app's Install button both go through it.
use crate::pi_check::{CheckStatus, PiCheck};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The extension, exactly as install writes it.
pub const EXTENSION_SOURCE: &str = include_str!("../../../../pi-extension/arbor.ts");
/// Its file name in an extensions folder.
pub const EXTENSION_FILE_NAME: &str = "arbor.ts";
const VERSION_MARK: &str = "export const ARBOR_EXTENSION_VERSION = \"";

/// The version an Arbor extension file declares (`ARBOR_EXTENSION_VERSION`), `None` for a file
/// that is not Arbor's.
pub fn version_in(source: &str) -> Option<&str> {
    let rest = &source[source.find(VERSION_MARK)? + VERSION_MARK.len()..];
    Some(&rest[..rest.find('"')?])
}

/// The version of the embedded extension.
pub fn extension_version() -> &'static str {
    version_in(EXTENSION_SOURCE).unwrap_or("unknown")
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every Pi session of this user.
    Global,
    /// Pi sessions started in one project folder.
    Project,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub scope: Scope,
    /// The extension file (`…/extensions/arbor.ts`).
    pub path: PathBuf,
}

/// `$PI_CODING_AGENT_DIR/extensions/arbor.ts`, else `~/.pi/agent/extensions/arbor.ts`.
pub fn global_location() -> Location {
    Location {
        scope: Scope::Global,
        path: session_engine::store::agent_dir().join("extensions").join(EXTENSION_FILE_NAME),
    }
}

/// `<project>/.pi/extensions/arbor.ts`.
pub fn project_location(project: &Path) -> Location {
    Location { scope: Scope::Project, path: project.join(".pi").join("extensions").join(EXTENSION_FILE_NAME) }
}

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{0} is not a folder; give the project's folder")]
    NoProject(PathBuf),
    #[error("{path} exists and is not Arbor's extension; it was left as it is (move it away, then install again)")]
    Foreign { path: PathBuf },
    #[error("{path} holds Arbor's extension {found}, not this Arbor's {ours}; it was left as it is (run again with --force to replace it)")]
    OtherVersion { path: PathBuf, found: String, ours: String },
    #[error(
        "{path} holds a changed copy of Arbor's extension; it was left as it is (run again with --force to replace it)"
    )]
    Changed { path: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}", does_not_load_message(.0))]
    DoesNotLoad(Box<InstallReport>),
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InstallOutcome {
    Installed,
    Replaced,
    AlreadyInstalled,
}

/// Writes the extension at `loc`. An identical file is left alone; a different file of the same
/// name is never overwritten, except an Arbor extension with `force`. The file appears whole or
/// not at all (written beside it, then linked or renamed into place).
pub fn install(loc: &Location, force: bool) -> Result<InstallOutcome, InstallError> {
    install_keeping(loc, force).map(|(outcome, _)| outcome)
}

/// [`install`], and the bytes of the file it replaced.
fn install_keeping(loc: &Location, force: bool) -> Result<(InstallOutcome, Option<Vec<u8>>), InstallError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| InstallError::Io { path, source }
    };
    if loc.scope == Scope::Project {
        let project = loc.path.parent().and_then(Path::parent).and_then(Path::parent).unwrap_or(Path::new("."));
        if !project.is_dir() {
            return Err(InstallError::NoProject(project.to_path_buf()));
        }
    }
    let existing = match std::fs::read(&loc.path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&loc.path)(e)),
    };
    if let Some(bytes) = &existing {
        if bytes == EXTENSION_SOURCE.as_bytes() {
            return Ok((InstallOutcome::AlreadyInstalled, None));
        }
        let text = String::from_utf8_lossy(bytes);
        match version_in(&text) {
            None => return Err(InstallError::Foreign { path: loc.path.clone() }),
            Some(_) if force => {}
            Some(v) if v == extension_version() => return Err(InstallError::Changed { path: loc.path.clone() }),
            Some(v) => {
                return Err(InstallError::OtherVersion {
                    path: loc.path.clone(),
                    found: v.to_string(),
                    ours: extension_version().to_string(),
                })
            }
        }
    }
    let dir = loc.path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    // Not `*.ts`: Pi never picks the temporary file up.
    let tmp = dir.join(format!(".{EXTENSION_FILE_NAME}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(EXTENSION_SOURCE.as_bytes())?;
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&tmp)(e));
    }
    let placed = if existing.is_some() {
        std::fs::rename(&tmp, &loc.path)
    } else {
        // A link fails if a file appeared meanwhile: still never an overwrite.
        std::fs::hard_link(&tmp, &loc.path).and_then(|()| std::fs::remove_file(&tmp))
    };
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&tmp);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(InstallError::Foreign { path: loc.path.clone() });
        }
        return Err(io(&loc.path)(e));
    }
    Ok(match existing {
        Some(before) => (InstallOutcome::Replaced, Some(before)),
        None => (InstallOutcome::Installed, None),
    })
}

/// What became of a file Pi cannot load.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Undo {
    /// This run wrote it where there was none: removed again.
    Removed,
    /// This run replaced another file (with force): that file is back.
    Restored,
    /// It was there, identical, before this run: left as it is.
    LeftAsItWas,
    /// It changed after this run wrote it: left as it is.
    ChangedMeanwhile,
    /// Taking it away failed (`InstallReport::undo_problem` says why).
    Failed,
}

/// What [`install_checked`] did and found.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InstallReport {
    pub outcome: InstallOutcome,
    pub scope: Scope,
    pub path: String,
    pub extension_version: String,
    pub check: PiCheck,
    /// Set when the check failed.
    pub undo: Option<Undo>,
    pub undo_problem: Option<String>,
}

/// [`install`], then (with `check`) [`crate::pi_check::check`] of the file: see the module's
/// notes. `Err(InstallError::DoesNotLoad)` when Pi cannot load it; every other check result,
/// a version warning or no Pi to ask included, is `Ok` with the report.
pub fn install_checked(loc: &Location, force: bool, check: bool) -> Result<InstallReport, InstallError> {
    let (outcome, before) = install_keeping(loc, force)?;
    let mut report = InstallReport {
        outcome,
        scope: loc.scope,
        path: loc.path.display().to_string(),
        extension_version: extension_version().to_string(),
        check: if check { crate::pi_check::check(&loc.path) } else { PiCheck::not_checked("the check was turned off") },
        undo: None,
        undo_problem: None,
    };
    if report.check.status != CheckStatus::Failed {
        return Ok(report);
    }
    let still_ours = std::fs::read(&loc.path).is_ok_and(|b| b == EXTENSION_SOURCE.as_bytes());
    let undone = match (outcome, before) {
        (InstallOutcome::AlreadyInstalled, _) => Ok(Undo::LeftAsItWas),
        _ if !still_ours => Ok(Undo::ChangedMeanwhile),
        (_, Some(before)) => put_back(&loc.path, &before).map(|()| Undo::Restored),
        (_, None) => std::fs::remove_file(&loc.path).map(|()| Undo::Removed),
    };
    match undone {
        Ok(u) => report.undo = Some(u),
        Err(e) => {
            report.undo = Some(Undo::Failed);
            report.undo_problem = Some(format!("{}: {e}", loc.path.display()));
        }
    }
    Err(InstallError::DoesNotLoad(Box::new(report)))
}

/// Writes `bytes` back at `path` whole (beside it, then renamed over it).
fn put_back(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_file_name(format!(".{EXTENSION_FILE_NAME}.{}.restore.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn does_not_load_message(r: &InstallReport) -> String {
    let c = &r.check;
    let pi = match (&c.pi_version, &c.pi) {
        (Some(v), Some(how)) => format!("Pi {v} ({how})"),
        _ => "Pi".to_string(),
    };
    let mut m = format!(
        "{pi} cannot load Arbor's extension at {}, and would not start with it there:\n  {}\n",
        r.path,
        c.problem.as_deref().unwrap_or("no reason given").replace('\n', "\n  ")
    );
    m.push_str(match r.undo {
        Some(Undo::Removed) => "The file was removed again, so Pi starts as before.",
        Some(Undo::Restored) => "The file it replaced was put back, so Pi starts as before.",
        Some(Undo::LeftAsItWas) => {
            "The file was already there before this install and was left as it is: Pi will not start \
             while it is there (uninstalling the extension removes it)."
        }
        Some(Undo::ChangedMeanwhile) => {
            "The file changed after it was written and was left as it is: Pi will not start while it \
             is there (uninstalling the extension removes it)."
        }
        Some(Undo::Failed) | None => "Removing it failed: remove it by hand, or Pi will not start.",
    });
    if let Some(p) = &r.undo_problem {
        m.push_str(&format!(" ({p})"));
    }
    m.push('\n');
    match (c.tested, &c.warning) {
        (Some(false), Some(w)) => m.push_str(&format!(
            "{w}: likely the cause. Use a Pi of that line, or an Arbor whose extension is made for this Pi."
        )),
        _ => m.push_str(
            "This Pi is of the line the extension is tested with: Pi's error above says what failed; \
             report it to Arbor with that error.",
        ),
    }
    m
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UninstallOutcome {
    Removed,
    NotInstalled,
}

/// Removes Arbor's extension at `loc` (any version); a file that is not Arbor's is left.
pub fn uninstall(loc: &Location) -> Result<UninstallOutcome, InstallError> {
    let bytes = match std::fs::read(&loc.path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(UninstallOutcome::NotInstalled),
        Err(e) => return Err(InstallError::Io { path: loc.path.clone(), source: e }),
    };
    if version_in(&String::from_utf8_lossy(&bytes)).is_none() {
        return Err(InstallError::Foreign { path: loc.path.clone() });
    }
    std::fs::remove_file(&loc.path).map_err(|source| InstallError::Io { path: loc.path.clone(), source })?;
    Ok(UninstallOutcome::Removed)
}

/// One place Pi looks, and what is there.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LocationStatus {
    pub scope: Scope,
    pub path: String,
    /// A file named `arbor.ts` is there.
    pub present: bool,
    /// It is an Arbor extension; `version` says which.
    pub arbor: bool,
    pub version: Option<String>,
    /// It is byte for byte this Arbor's extension.
    pub current: bool,
}

pub fn location_status(loc: &Location) -> LocationStatus {
    let bytes = std::fs::read(&loc.path).ok();
    let version = bytes.as_deref().and_then(|b| version_in(&String::from_utf8_lossy(b)).map(str::to_string));
    LocationStatus {
        scope: loc.scope,
        path: loc.path.display().to_string(),
        present: bytes.is_some(),
        arbor: version.is_some(),
        version,
        current: bytes.as_deref() == Some(EXTENSION_SOURCE.as_bytes()),
    }
}

/// Whether a reviewer answers on the socket, and what it announces.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewerStatus {
    pub socket: String,
    pub listening: bool,
    pub server: Option<String>,
    pub policy: Option<String>,
    pub protocol: Option<u32>,
    pub timeout_ms: Option<u64>,
    /// Why it is not listening, or why its answer was not understood.
    pub problem: Option<String>,
}

#[cfg(unix)]
pub fn reviewer_status(socket: &Path) -> ReviewerStatus {
    use crate::protocol::ServerMessage;
    let mut st = ReviewerStatus {
        socket: socket.display().to_string(),
        listening: false,
        server: None,
        policy: None,
        protocol: None,
        timeout_ms: None,
        problem: None,
    };
    match crate::server::Client::connect(socket, std::time::Duration::from_secs(2)) {
        Ok(c) => match c.hello {
            ServerMessage::Hello(h) => {
                st.listening = true;
                st.server = Some(h.server);
                st.policy = Some(h.policy.as_str().to_string());
                st.protocol = Some(h.protocol);
                st.timeout_ms = Some(h.timeout_ms);
            }
            ServerMessage::Error(e) => st.problem = Some(format!("the reviewer refused: {}", e.message)),
            ServerMessage::Answer(_) => {
                st.problem = Some("the program on the socket does not greet as Arbor does".into())
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            st.problem = Some("no socket: no reviewer is running".into())
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            st.problem = Some("a socket file is left, but no reviewer is running".into())
        }
        Err(e) => st.problem = Some(e.to_string()),
    }
    st
}

#[cfg(not(unix))]
pub fn reviewer_status(socket: &Path) -> ReviewerStatus {
    ReviewerStatus {
        socket: socket.display().to_string(),
        listening: false,
        server: None,
        policy: None,
        protocol: None,
        timeout_ms: None,
        problem: Some("review sockets need a Unix system".into()),
    }
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// The version this Arbor installs.
    pub extension_version: String,
    pub protocol: u32,
    pub locations: Vec<LocationStatus>,
    pub reviewer: ReviewerStatus,
    /// Which Pi there is and its version (`--version` only, no load check;
    /// [`crate::pi_check::pi_status`]); `None` unless asked for with [`status_with_pi`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pi: Option<PiCheck>,
}

/// Where the extension is (global, and the project when given) and whether a reviewer listens.
pub fn status(project: Option<&Path>) -> Status {
    let mut locations = vec![location_status(&global_location())];
    if let Some(p) = project {
        locations.push(location_status(&project_location(p)));
    }
    Status {
        extension_version: extension_version().to_string(),
        protocol: crate::protocol::PROTOCOL_VERSION,
        locations,
        reviewer: reviewer_status(&crate::paths::socket_path()),
        pi: None,
    }
}

/// [`status`], and which Pi there is (runs `<pi> --version`, about 2 s).
pub fn status_with_pi(project: Option<&Path>) -> Status {
    Status { pi: Some(crate::pi_check::pi_status()), ..status(project) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_extension_declares_its_version_and_protocol() {
        let v = extension_version();
        assert!(v.split('.').count() == 3 && v.split('.').all(|p| p.parse::<u32>().is_ok()), "{v}");
        assert!(EXTENSION_SOURCE
            .contains(&format!("export const PROTOCOL_VERSION = {};", crate::protocol::PROTOCOL_VERSION)));
        assert!(EXTENSION_SOURCE.contains(&format!(
            "export const MAX_LINE_BYTES = {} * 1024 * 1024;",
            crate::protocol::MAX_LINE_BYTES / (1024 * 1024)
        )));
    }

    #[test]
    fn the_extension_imports_only_what_pi_ships() {
        for line in EXTENSION_SOURCE.lines().filter(|l| l.starts_with("import ")) {
            let from = line.rsplit("from ").next().unwrap().trim().trim_end_matches(';').trim_matches('"');
            assert!(
                matches!(from, "@mariozechner/pi-coding-agent" | "node:fs" | "node:net" | "node:os" | "node:path"),
                "{line}"
            );
        }
        assert!(!EXTENSION_SOURCE.contains("require("), "no CommonJS requires");
        assert!(!EXTENSION_SOURCE.contains("import("), "no dynamic imports");
    }

    #[test]
    fn install_refuses_other_files_and_uninstall_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let loc = project_location(dir.path());
        assert_eq!(install(&loc, false).unwrap(), InstallOutcome::Installed);
        assert_eq!(std::fs::read_to_string(&loc.path).unwrap(), EXTENSION_SOURCE);
        assert_eq!(install(&loc, false).unwrap(), InstallOutcome::AlreadyInstalled);
        let st = location_status(&loc);
        assert!(st.present && st.arbor && st.current && st.version.as_deref() == Some(extension_version()));

        std::fs::write(&loc.path, "export default function () {}\n").unwrap();
        assert!(matches!(install(&loc, true), Err(InstallError::Foreign { .. })));
        assert!(matches!(uninstall(&loc), Err(InstallError::Foreign { .. })));
        assert_eq!(std::fs::read_to_string(&loc.path).unwrap(), "export default function () {}\n");

        std::fs::write(
            &loc.path,
            EXTENSION_SOURCE
                .replace(&format!("{VERSION_MARK}{}", extension_version()), &format!("{VERSION_MARK}0.0.1")),
        )
        .unwrap();
        assert!(matches!(install(&loc, false), Err(InstallError::OtherVersion { .. })));
        assert_eq!(location_status(&loc).version.as_deref(), Some("0.0.1"));
        assert_eq!(install(&loc, true).unwrap(), InstallOutcome::Replaced);
        assert_eq!(uninstall(&loc).unwrap(), UninstallOutcome::Removed);
        assert_eq!(uninstall(&loc).unwrap(), UninstallOutcome::NotInstalled);
        let leftovers: Vec<_> = std::fs::read_dir(loc.path.parent().unwrap()).unwrap().collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        assert!(matches!(
            install(&project_location(&dir.path().join("missing")), false),
            Err(InstallError::NoProject(_))
        ));
    }
}
