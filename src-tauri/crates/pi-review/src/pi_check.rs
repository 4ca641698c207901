//! Does the user's Pi start with Arbor's extension?
//!
//! A load error in any extension stops Pi (0.73) at start-up, in every mode: a broken or
//! incompatible `arbor.ts` would keep the user's Pi from starting at all. So after install
//! writes the file, [`check`] starts that Pi once with only this file loaded and asks it for its
//! state; an answer means Pi got past loading the extension.
//!
//! Which Pi: `$ARBOR_PI`, a command line run by `sh -c` (e.g. `node /path/to/pi/dist/cli.js`),
//! else `pi` on PATH ([`find_pi`]). [`Pi::version`] runs `<pi> --version` (Pi prints `0.73.1`, on
//! stderr, and loads no extension for it). [`check_loads`] runs
//! `<pi> --mode rpc --no-session --no-extensions -e <file>` with `PI_OFFLINE=1`, in an empty
//! agent folder and working folder of its own (removed afterwards): it calls no model, reads
//! none of the user's settings, sessions or other extensions, and writes nothing of theirs.
//! `--offline` is left out on purpose: it is the same as `PI_OFFLINE=1`, and a Pi that does not
//! know a flag exits with "Unknown option", which would read as the extension failing to load.
//!
//! The extension declares the Pi it is tested against (`TESTED_PI_VERSION` in `arbor.ts`); a Pi
//! of the same line (0.73.x) is "tested", any other gets a warning, never a refusal: only a load
//! that fails refuses.
use serde::Serialize;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The variable naming the Pi to run, as a shell command line.
pub const ARBOR_PI_ENV: &str = "ARBOR_PI";
/// The longest wait for `<pi> --version`. A first start from a cold disk took 12 s here.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest wait for Pi to start with the extension and answer. Generous for the same reason:
/// running out of time counts as a failed load, and install then takes the file away.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(30);
/// The request id of the one RPC command the check sends.
pub const CHECK_ID: &str = "arbor-check";
const TESTED_MARK: &str = "export const TESTED_PI_VERSION = \"";
/// At most this many lines of Pi's stderr go into a failure.
const STDERR_LINES: usize = 12;

/// The Pi release the embedded extension is tested against (`TESTED_PI_VERSION` in `arbor.ts`).
pub fn tested_pi_version() -> &'static str {
    let src = crate::install::EXTENSION_SOURCE;
    src.find(TESTED_MARK)
        .map(|i| &src[i + TESTED_MARK.len()..])
        .and_then(|rest| rest.find('"').map(|end| &rest[..end]))
        .unwrap_or("unknown")
}

/// A Pi version as `pi --version` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PiVersion {
    pub text: String,
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl PiVersion {
    /// The first `MAJOR.MINOR.PATCH` in `output` (a leading `v` and a `-pre`/`+build` suffix allowed).
    pub fn parse(output: &str) -> Option<PiVersion> {
        output.split_whitespace().find_map(|word| {
            let word = word.trim_start_matches('v');
            let core = word.split(['-', '+']).next()?;
            let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
            let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
            if parts.next().is_some() {
                return None;
            }
            Some(PiVersion { text: word.to_string(), major, minor, patch })
        })
    }

    /// Of the release line the extension is tested against: the same minor while Pi is 0.x
    /// (where a minor release may break extensions), else the same major.
    pub fn is_tested(&self) -> bool {
        match PiVersion::parse(tested_pi_version()) {
            Some(t) if t.major == 0 => self.major == 0 && self.minor == t.minor,
            Some(t) => self.major == t.major,
            None => false,
        }
    }
}

/// The Pi program to check with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pi {
    /// `$ARBOR_PI`: a command line, run by `sh -c` with Pi's arguments after it.
    Command(String),
    /// `pi` found on PATH.
    Program(PathBuf),
}

impl Pi {
    /// For messages: `ARBOR_PI=node …/cli.js`, or the path of `pi`.
    pub fn describe(&self) -> String {
        match self {
            Pi::Command(line) => format!("{ARBOR_PI_ENV}={line}"),
            Pi::Program(p) => p.display().to_string(),
        }
    }

    fn command<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&self, args: I) -> Command {
        let mut c = match self {
            Pi::Command(line) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(format!("{line} \"$@\"")).arg("sh");
                c
            }
            Pi::Program(p) => Command::new(p),
        };
        c.args(args).env("PI_OFFLINE", "1");
        // Its own process group: a time-out kills `sh`, node and anything they started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        c
    }

    /// `<pi> --version`, bounded by [`VERSION_TIMEOUT`]. An error says why it is not a Pi that
    /// can be checked (it did not start, failed, or printed no version).
    pub fn version(&self) -> Result<PiVersion, String> {
        let mut cmd = self.command(["--version"]);
        cmd.stdin(Stdio::null());
        let mut run = Running::start(cmd).map_err(|e| format!("it did not start ({e})"))?;
        let deadline = Instant::now() + VERSION_TIMEOUT;
        let mut out = String::new();
        let ended = loop {
            match run.next(deadline) {
                Some(Event::Out(line)) => {
                    out.push_str(&line);
                    out.push('\n');
                }
                Some(Event::OutEnd) => break true,
                None => break false,
            }
        };
        let status = run.finish(Duration::from_secs(2));
        let err = run.stderr_head();
        if !ended {
            return Err(format!("`--version` did not finish within {} s", VERSION_TIMEOUT.as_secs()));
        }
        match status {
            // Pi 0.73.1 prints its version on stderr (its console.log goes there, keeping stdout
            // for RPC and JSON output), so both are read.
            Some(s) if s.success() => PiVersion::parse(&out)
                .or_else(|| PiVersion::parse(&err))
                .ok_or_else(|| format!("`--version` printed no version: {}", one_line(&format!("{out}\n{err}")))),
            Some(s) => Err(format!("`--version` failed ({s}): {}", one_line(&err))),
            None => Err("`--version` did not exit".to_string()),
        }
    }
}

/// `$ARBOR_PI` when set and not blank, else the first executable `pi` on PATH; `None` when
/// neither.
pub fn find_pi() -> Option<Pi> {
    if let Some(line) = std::env::var(ARBOR_PI_ENV).ok().filter(|l| !l.trim().is_empty()) {
        return Some(Pi::Command(line));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("pi")).find(|p| is_executable(p)).map(Pi::Program)
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// The Pi [`find_pi`] finds, and its version.
pub fn pi_version() -> Result<(Pi, PiVersion), Unavailable> {
    let pi = find_pi().ok_or(Unavailable::NotFound)?;
    match pi.version() {
        Ok(v) => Ok((pi, v)),
        Err(why) => Err(Unavailable::NotPi { pi: pi.describe(), why }),
    }
}

/// Why Pi could not be asked at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("Pi was not found on PATH (set ARBOR_PI to its command)")]
    NotFound,
    #[error("{pi} could not be run as Pi: {why}")]
    NotPi { pi: String, why: String },
}

/// Pi did not get past loading the extension.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LoadFailure {
    /// What happened, with the first lines of Pi's stderr.
    pub message: String,
    pub elapsed: Duration,
}

/// Starts Pi with only `extension` loaded (see the module's notes for the flags and the
/// environment), asks `{"id":"arbor-check","type":"get_state"}` and waits up to `timeout` for
/// the answer. `Ok` is the time it took, Pi's start-up included. Pi exiting first, or no answer
/// in time, is a [`LoadFailure`] carrying what Pi said on stderr.
pub fn check_loads(pi: &Pi, extension: &Path, timeout: Duration) -> Result<Duration, LoadFailure> {
    let started = Instant::now();
    let fail = |message: String| LoadFailure { message, elapsed: started.elapsed() };
    let extension = std::path::absolute(extension).map_err(|e| fail(format!("{}: {e}", extension.display())))?;
    let scratch = Scratch::new().map_err(|e| fail(format!("cannot make a scratch folder for Pi: {e}")))?;
    let mut cmd = pi.command([
        OsStr::new("--mode"),
        OsStr::new("rpc"),
        OsStr::new("--no-session"),
        OsStr::new("--no-extensions"),
        OsStr::new("-e"),
        extension.as_os_str(),
    ]);
    cmd.current_dir(scratch.work())
        .env("PI_CODING_AGENT_DIR", scratch.agent())
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        // The check must never reach a running Arbor, whatever the extension does at start.
        .env("ARBOR_REVIEW_DISABLE", "1")
        .stdin(Stdio::piped());
    let mut run = Running::start(cmd).map_err(|e| fail(format!("{} did not start ({e})", pi.describe())))?;
    if let Some(mut stdin) = run.child.stdin.take() {
        // A failed write means Pi is gone already; its exit is reported below.
        let _ = stdin.write_all(format!("{{\"id\":\"{CHECK_ID}\",\"type\":\"get_state\"}}\n").as_bytes());
        let _ = stdin.flush();
        run.stdin = Some(stdin);
    }
    let deadline = started + timeout;
    let answer = loop {
        match run.next(deadline) {
            Some(Event::Out(line)) => {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
                if v["type"] == "response" && v["id"] == CHECK_ID {
                    break Ok(v);
                }
            }
            Some(Event::OutEnd) => break Err(true),
            None => break Err(false),
        }
    };
    let elapsed = started.elapsed();
    // Closing stdin ends Pi's RPC mode; the group is killed if it lingers.
    run.stdin = None;
    let status = run.finish(Duration::from_secs(3));
    let stderr = run.stderr_head();
    let said = if stderr.is_empty() { "it wrote nothing on stderr".to_string() } else { stderr };
    match answer {
        Ok(v) if v["success"] == true => Ok(elapsed),
        Ok(v) => Err(LoadFailure {
            message: format!(
                "Pi started but refused `get_state`: {}",
                v["error"].as_str().unwrap_or("no reason given")
            ),
            elapsed,
        }),
        Err(true) => Err(LoadFailure {
            message: match status {
                Some(s) => format!("Pi exited ({s}) before answering: {said}"),
                None => format!("Pi closed its output before answering: {said}"),
            },
            elapsed,
        }),
        Err(false) => Err(LoadFailure {
            message: format!("Pi did not answer within {} s (it was stopped): {said}", timeout.as_secs()),
            elapsed,
        }),
    }
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Pi started with the extension and answered.
    Passed,
    /// Pi did not get past loading it: Pi would not start with this file.
    Failed,
    /// Not asked for, or no Pi to ask (`problem` says which).
    NotChecked,
}

/// What the check found.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PiCheck {
    pub status: CheckStatus,
    /// How Pi was run ([`Pi::describe`]); `None` when no Pi was found.
    pub pi: Option<String>,
    pub pi_version: Option<String>,
    /// The Pi the extension is tested against ([`tested_pi_version`]).
    pub tested_pi_version: String,
    /// Pi's version is of the tested line; `None` when unknown.
    pub tested: Option<bool>,
    /// How long Pi took to start with the extension and answer.
    pub elapsed_ms: Option<u64>,
    /// Failed: Pi's error. Not checked: why.
    pub problem: Option<String>,
    /// A Pi of another line than the tested one.
    pub warning: Option<String>,
}

impl PiCheck {
    /// Not checked, for `reason`.
    pub fn not_checked(reason: impl Into<String>) -> PiCheck {
        PiCheck {
            status: CheckStatus::NotChecked,
            pi: None,
            pi_version: None,
            tested_pi_version: tested_pi_version().to_string(),
            tested: None,
            elapsed_ms: None,
            problem: Some(reason.into()),
            warning: None,
        }
    }
}

/// Which Pi is there and whether it is of the tested line: `--version` only, no load check.
pub fn pi_status() -> PiCheck {
    match pi_version() {
        Err(e) => PiCheck::not_checked(e.to_string()),
        Ok((pi, v)) => PiCheck { problem: None, ..versioned(&pi, &v) },
    }
}

fn versioned(pi: &Pi, v: &PiVersion) -> PiCheck {
    let tested = v.is_tested();
    PiCheck {
        pi: Some(pi.describe()),
        pi_version: Some(v.text.clone()),
        tested: Some(tested),
        warning: (!tested).then(|| {
            let line = PiVersion::parse(tested_pi_version())
                .map_or_else(|| tested_pi_version().to_string(), |t| format!("{}.{}.x", t.major, t.minor));
            format!("Pi {} is not the Pi this extension is tested with (Pi {line})", v.text)
        }),
        ..PiCheck::not_checked("")
    }
}

/// The whole check of the extension file at `extension`: find Pi, read its version, start it
/// with the file ([`check_loads`], [`LOAD_TIMEOUT`]).
pub fn check(extension: &Path) -> PiCheck {
    let (pi, v) = match pi_version() {
        Ok(found) => found,
        Err(e) => return PiCheck::not_checked(e.to_string()),
    };
    let mut c = versioned(&pi, &v);
    match check_loads(&pi, extension, LOAD_TIMEOUT) {
        Ok(took) => {
            c.status = CheckStatus::Passed;
            c.elapsed_ms = Some(took.as_millis() as u64);
            c.problem = None;
        }
        Err(f) => {
            c.status = CheckStatus::Failed;
            c.elapsed_ms = Some(f.elapsed.as_millis() as u64);
            c.problem = Some(f.message);
        }
    }
    c
}

fn one_line(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.is_empty() {
        "(nothing)".into()
    } else {
        s
    }
}

enum Event {
    Out(String),
    OutEnd,
}

/// A started Pi: its stdout lines on a channel, the head of its stderr kept.
struct Running {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<Event>,
    stderr: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    stderr_done: mpsc::Receiver<()>,
}

impl Running {
    fn start(mut cmd: Command) -> std::io::Result<Running> {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        let (tx, lines) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                // Pi's RPC framing is LF only: split on b'\n', never on other separators.
                let mut r = BufReader::new(out);
                let mut buf = Vec::new();
                while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                    let line = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
                    buf.clear();
                    if tx.send(Event::Out(line)).is_err() {
                        return;
                    }
                }
                let _ = tx.send(Event::OutEnd);
            });
        }
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (done_tx, stderr_done) = mpsc::channel();
        if let Some(mut err) = child.stderr.take() {
            let keep = stderr.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = err.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut k) = keep.lock() {
                        // Only the head is reported; the rest is read and dropped so Pi never blocks.
                        let room = (64 * 1024usize).saturating_sub(k.len());
                        k.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
                let _ = done_tx.send(());
            });
        }
        Ok(Running { child, stdin: None, lines, stderr, stderr_done })
    }

    /// The next stdout event, or `None` at `deadline`.
    fn next(&self, deadline: Instant) -> Option<Event> {
        self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()
    }

    /// Waits up to `grace` for Pi to exit, then kills its process group; the exit status when
    /// it exited by itself.
    fn finish(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        self.stdin = None;
        let until = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => {
                    let _ = self.stderr_done.recv_timeout(Duration::from_secs(1));
                    return Some(s);
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                _ => break,
            }
        }
        kill_group(&mut self.child);
        let _ = self.child.wait();
        let _ = self.stderr_done.recv_timeout(Duration::from_secs(1));
        None
    }

    /// The first lines of what Pi wrote on stderr.
    fn stderr_head(&self) -> String {
        let bytes = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let mut lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
        let more = lines.len().saturating_sub(STDERR_LINES);
        lines.truncate(STDERR_LINES);
        let mut s = lines.join("\n");
        if more > 0 {
            s.push_str(&format!("\n… ({more} more lines)"));
        }
        s
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            kill_group(&mut self.child);
            let _ = self.child.wait();
        }
    }
}

#[cfg(unix)]
fn kill_group(child: &mut Child) {
    match i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw) {
        Some(p) => {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
        None => {
            let _ = child.kill();
        }
    }
}

#[cfg(not(unix))]
fn kill_group(child: &mut Child) {
    let _ = child.kill();
}

/// An empty agent folder and working folder for one check, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "arbor-pi-check-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let mut b = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(&dir)?;
        let s = Scratch(dir);
        std::fs::create_dir(s.agent())?;
        std::fs::create_dir(s.work())?;
        Ok(s)
    }
    fn agent(&self) -> PathBuf {
        self.0.join("agent")
    }
    fn work(&self) -> PathBuf {
        self.0.join("work")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_the_tested_line_is_the_minor_while_pi_is_0x() {
        let v = PiVersion::parse("0.73.1\n").unwrap();
        assert_eq!((v.major, v.minor, v.patch, v.text.as_str()), (0, 73, 1, "0.73.1"));
        assert_eq!(PiVersion::parse("pi v1.2.3-beta.1").unwrap().text, "1.2.3-beta.1");
        assert_eq!(PiVersion::parse("no version here 1.2"), None);
        assert_eq!(tested_pi_version(), "0.73.1");
        assert!(PiVersion::parse("0.73.0").unwrap().is_tested());
        assert!(PiVersion::parse("0.73.9").unwrap().is_tested());
        assert!(!PiVersion::parse("0.74.0").unwrap().is_tested());
        assert!(!PiVersion::parse("1.73.1").unwrap().is_tested());
    }
    // Finding, running and timing the real Pi: `src-tauri/crates/cli/tests/pi_review.rs`.
}
