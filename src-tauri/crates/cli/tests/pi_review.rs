//! `arbor-cli pi …`, the real binary: the reviewer's socket (modes, another user refused, a
//! killed server's socket, signals), the headless reviewer over the socket, and the
//! extension's install, uninstall and status, and install's check that the real Pi (0.73.1 in
//! tests/pi, from scripts/setup.sh) starts with the extension. The real `pi` against this binary
//! is in `pi-extension/test/pi.test.mjs` (`node --test pi-extension/test/`).
#![cfg(unix)]
#[path = "support/pi.rs"]
mod pi;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_arbor-cli");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn cli(env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// `arbor-cli pi serve --socket S ARGS`, with its stdout lines on a channel.
struct Serve {
    child: Child,
    lines: mpsc::Receiver<serde_json::Value>,
    seen: Vec<serde_json::Value>,
}

impl Serve {
    fn start(socket: &Path, args: &[&str]) -> Serve {
        let mut child = Command::new(BIN)
            .args(["pi", "serve", "--socket"])
            .arg(socket)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        let mut s = Serve { child, lines, seen: Vec::new() };
        let first = s.next();
        assert_eq!(first["event"], "listening", "{first}");
        s
    }
    fn next(&mut self) -> serde_json::Value {
        let v = self.lines.recv_timeout(Duration::from_secs(20)).expect("a log line from pi serve");
        self.seen.push(v.clone());
        v
    }
    fn signal(&self, sig: &str) {
        assert!(Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap()
            .success());
    }
    fn wait(mut self) -> (std::process::ExitStatus, Vec<serde_json::Value>, String) {
        let status = self.child.wait().unwrap();
        while let Ok(v) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(v);
        }
        let mut err = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut err).unwrap();
        (status, std::mem::take(&mut self.seen), err)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn status(socket: &Path) -> serde_json::Value {
    let o = cli(
        &[("ARBOR_REVIEW_SOCKET", socket), ("PI_CODING_AGENT_DIR", &socket.with_file_name("agent"))],
        &["pi", "status", "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn the_socket_is_private_status_sees_it_and_signals_stop_it() {
    for sig in ["TERM", "INT"] {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("arbor").join("review.sock");
        let serve = Serve::start(&socket, &["--timeout", "12.5"]);
        assert_eq!(mode(socket.parent().unwrap()), 0o700);
        assert_eq!(mode(&socket), 0o600);
        let st = status(&socket);
        assert_eq!(st["reviewer"]["listening"], true);
        assert_eq!(st["reviewer"]["policy"], "review");
        assert_eq!(st["reviewer"]["timeoutMs"], 12500);
        assert_eq!(st["protocol"], 1);
        serve.signal(sig);
        let (code, lines, _) = serve.wait();
        assert!(code.success());
        assert_eq!(lines.last().unwrap()["event"], "stopped");
        assert_eq!(lines.last().unwrap()["signal"], format!("SIG{sig}"));
        assert!(!socket.exists(), "SIG{sig}: the socket is removed");
        let st = status(&socket);
        assert_eq!(st["reviewer"]["listening"], false);
        assert_eq!(st["reviewer"]["problem"], "no socket: no reviewer is running");
    }
}

/// Connecting as another user (nobody) takes root, `setpriv` and python3, which an ordinary run
/// lacks; `scripts/test.sh` runs it (`-- --ignored`) when it runs as root.
#[test]
#[ignore = "needs root, setpriv and python3 to connect as nobody; scripts/test.sh runs it when run as root"]
fn a_client_of_another_user_is_refused() {
    // A folder nobody can reach (/tmp is), holding the socket's private folder.
    let dir = tempfile::Builder::new().prefix("arbor-peer-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let socket = dir.path().join("arbor").join("review.sock");
    let mut serve = Serve::start(&socket, &[]);
    let mode = std::fs::metadata(socket.parent().unwrap()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the socket's folder is the owner's alone");
    // Running a client as another user (nobody) needs root, setpriv and python3.
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let setpriv = Command::new("setpriv").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    let python = Path::new("/usr/bin/python3");
    assert!(
        root && setpriv && python.exists(),
        "the client as nobody needs root (root: {root}), setpriv ({setpriv}) and {} ({}): run this test as root",
        python.display(),
        python.exists()
    );
    let client = |sock: &Path| {
        let code = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1])\nexcept PermissionError:\n print('EACCES'); sys.exit(0)\nprint(s.makefile().readline().strip())\n";
        let o = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(python)
            .arg("-c")
            .arg(code)
            .arg(sock)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    // The 0700 folder keeps nobody out before the socket is even reached.
    assert_eq!(client(&socket), "EACCES");
    // Opened by mistake, the server still refuses another user id (SO_PEERCRED).
    std::fs::set_permissions(socket.parent().unwrap(), std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let line: serde_json::Value = serde_json::from_str(&client(&socket)).unwrap();
    assert_eq!(line["type"], "error");
    assert_eq!(line["code"], "peer_refused");
    assert_eq!(line["message"], "this Arbor reviewer accepts only its own user (uid 0); the client runs as uid 65534");
    let logged = serve.next();
    assert_eq!(
        (logged["event"].as_str(), logged["code"].as_str(), logged["peerUid"].as_u64()),
        (Some("refused"), Some("peer_refused"), Some(65534))
    );
}

#[test]
fn a_live_server_is_not_replaced_and_a_killed_ones_socket_is() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("arbor").join("review.sock");
    let first = Serve::start(&socket, &[]);
    let second = Command::new(BIN).args(["pi", "serve", "--socket"]).arg(&socket).output().unwrap();
    assert_eq!(second.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("another Arbor reviewer is already listening on"),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    first.signal("KILL");
    let _ = first.wait();
    assert!(socket.exists(), "SIGKILL leaves the socket file");
    assert_eq!(status(&socket)["reviewer"]["problem"], "a socket file is left, but no reviewer is running");
    let third = Serve::start(&socket, &[]);
    let notes = third.seen[0]["notes"].to_string();
    assert!(notes.contains("left by a reviewer that is no longer running"), "{notes}");
    assert_eq!(status(&socket)["reviewer"]["listening"], true);
    third.signal("TERM");
    let (_, _, err) = third.wait();
    assert!(err.contains("left by a reviewer that is no longer running"), "{err}");
}

fn request(file: &Path, first_kept: &str) -> String {
    serde_json::json!({
        "type": "review", "protocol": 1, "requestId": "cli-1", "round": 1, "kind": "compaction",
        "session": {"file": file, "id": "s", "leafId": "8d25023b"},
        "compaction": {"firstKeptEntryId": first_kept, "tokensBefore": 5000, "messagesToSummarize": 9, "turnPrefixMessages": 0, "branchEntries": 57},
        "draft": {"summary": "## Goal\nPi's draft", "firstKeptEntryId": first_kept, "tokensBefore": 5000}
    })
    .to_string()
}

fn ask(socket: &Path, line: &str) -> serde_json::Value {
    let s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut hello = String::new();
    r.read_line(&mut hello).unwrap();
    assert!(hello.starts_with(r#"{"type":"hello","arbor":"review","protocol":1,"server":"arbor-cli "#), "{hello}");
    (&s).write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut a = String::new();
    r.read_line(&mut a).unwrap();
    serde_json::from_str(&a).unwrap()
}

#[test]
fn the_headless_reviewer_edits_decides_and_logs_one_line_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::copy(repo().join("src-tauri/crates/session-engine/tests/fixtures/real-pi/rpc-manual.jsonl"), &file)
        .unwrap();
    let socket = dir.path().join("arbor").join("review.sock");

    let mut serve = Serve::start(&socket, &["--edit-command", "sed 's/^## Goal$/## Goal (reviewed)/'"]);
    let a = ask(&socket, &request(&file, "5ea325e4"));
    assert_eq!((a["decision"].as_str(), a["summary"].as_str()), (Some("edit"), Some("## Goal (reviewed)\nPi's draft")));
    let log = serve.next();
    assert_eq!(log["event"], "review");
    assert_eq!(log["action"], "edit");
    assert_eq!(log["session"], file.display().to_string());
    assert_eq!(log["entries"], serde_json::json!({"branch": 57, "toSummarize": 9, "turnPrefix": 0}));
    assert_eq!(log["firstKeptEntryId"], "5ea325e4");
    assert!(log["ms"].as_f64().unwrap() >= 0.0 && log["time"].as_str().unwrap().ends_with('Z'));
    drop(serve);

    let mut serve =
        Serve::start(&socket, &["--decide-command", r#"echo '{"decision":"move_cut","firstKeptEntryId":"86dfb0db"}'"#]);
    let a = ask(&socket, &request(&file, "5ea325e4"));
    assert_eq!(a["decision"], "accept");
    assert_eq!(
        a["note"],
        "cannot keep from 86dfb0db: it is a tool result (it must stay with its tool call); nearest valid cut points: 90847218, 190461d2; Pi's draft is used"
    );
    assert_eq!(serve.next()["action"], "accept");
    drop(serve);

    let watch = Command::new(BIN)
        .args(["pi", "serve", "--policy", "watch", "--edit-command", "cat", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert_eq!(watch.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&watch.stderr).contains("--policy watch never changes anything"));
}

#[test]
fn install_uninstall_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let sock = dir.path().join("none.sock");
    let env = [("PI_CODING_AGENT_DIR", agent.as_path()), ("ARBOR_REVIEW_SOCKET", sock.as_path())];
    let source = std::fs::read_to_string(repo().join("pi-extension/arbor.ts")).unwrap();
    let global = agent.join("extensions/arbor.ts");

    // Starting Pi is the next test's business: here, whatever `pi` the machine has stays out.
    let o = cli(&env, &["pi", "install-extension", "--no-check"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("not checked"));
    assert_eq!(std::fs::read_to_string(&global).unwrap(), source, "install writes the extension byte for byte");
    let again = cli(&env, &["pi", "install-extension", "--no-check"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("is already installed at"));

    let project = dir.path().join("proj");
    std::fs::create_dir_all(project.join(".pi/extensions")).unwrap();
    std::fs::write(project.join(".pi/extensions/arbor.ts"), "export default function () {}\n").unwrap();
    let p = project.to_str().unwrap();
    let refused = cli(&env, &["pi", "install-extension", "--project", p, "--force", "--no-check"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("exists and is not Arbor's extension; it was left as it is")
    );
    assert!(cli(&env, &["pi", "uninstall-extension", "--project", p]).status.code() == Some(2));
    assert_eq!(
        std::fs::read_to_string(project.join(".pi/extensions/arbor.ts")).unwrap(),
        "export default function () {}\n"
    );

    let o = cli(&env, &["pi", "status", "--json", "--project", p]);
    let st: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let version = source.split("ARBOR_EXTENSION_VERSION = \"").nth(1).unwrap().split('"').next().unwrap();
    assert_eq!(st["extensionVersion"], version);
    assert_eq!(
        st["locations"][0],
        serde_json::json!({"scope": "global", "path": global.display().to_string(), "present": true, "arbor": true, "version": version, "current": true})
    );
    assert_eq!(st["locations"][1]["present"], true);
    assert_eq!(st["locations"][1]["arbor"], false);
    assert_eq!(st["reviewer"]["listening"], false);
    let text = cli(&env, &["pi", "status", "--project", p]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("installed, version {version}"))
            && text.contains("another file named arbor.ts (not Arbor's)"),
        "{text}"
    );

    assert!(cli(&env, &["pi", "uninstall-extension"]).status.success());
    assert!(!global.exists());
    let o = cli(&env, &["pi", "uninstall-extension"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("is not installed at"));
}

/// The repository's Pi as `ARBOR_PI` takes it (a command line for `sh -c`), with `extra`
/// arguments before the ones the check adds.
fn repo_pi(extra: &str) -> String {
    let cli = pi::repo_root().join("tests/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
    format!("node '{}' {extra}", cli.display())
}

/// `arbor-cli ARGS` with `env` set and `ARBOR_PI` unset unless `env` sets it.
fn cli_with(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).stdin(Stdio::null()).env_remove("ARBOR_PI");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn tmp_leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn install_starts_pi_with_the_extension_and_takes_back_a_file_pi_cannot_load() {
    let test = "install_starts_pi_with_the_extension_and_takes_back_a_file_pi_cannot_load";
    if !pi::pi_or_skip(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let (agent_s, sock) = (agent.display().to_string(), dir.path().join("none.sock").display().to_string());
    let good_pi = repo_pi("");
    let env = [("PI_CODING_AGENT_DIR", agent_s.as_str()), ("ARBOR_REVIEW_SOCKET", sock.as_str())];
    fn with<'a>(env: &[(&'a str, &'a str)], pi: &'a str) -> Vec<(&'a str, &'a str)> {
        let mut e = env.to_vec();
        e.push(("ARBOR_PI", pi));
        e
    }
    let global = agent.join("extensions/arbor.ts");

    // Pi 0.73.1 starts with the extension: installed and checked.
    let o = cli_with(&with(&env, &good_pi), &["pi", "install-extension", "--json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["outcome"], "installed");
    let c = &r["check"];
    assert_eq!(c["status"], "passed", "{r}");
    assert_eq!(c["piVersion"], "0.73.1");
    assert_eq!(c["testedPiVersion"], "0.73.1");
    assert_eq!(c["tested"], true);
    assert_eq!(c["warning"], serde_json::Value::Null);
    let ms = c["elapsedMs"].as_u64().unwrap();
    assert!(ms > 0 && ms < 30_000, "{ms}");
    // Past libtest's capture: the figure shows on every run.
    let _ = writeln!(std::io::stderr(), "install's load check took {ms} ms (Pi 0.73.1 started with the extension)");
    assert!(global.is_file());
    assert!(!agent.join("sessions").exists(), "the check writes no session of the user's");
    assert_eq!(
        std::fs::read_dir(&agent).unwrap().count(),
        1,
        "the check leaves nothing in the agent folder but the extension"
    );
    let (out, _) = text(&cli_with(&with(&env, &good_pi), &["pi", "install-extension"]));
    assert!(out.contains("is already installed at") && out.contains("checked: Pi 0.73.1 starts with it ("), "{out}");

    // status reports Pi's version (--version only).
    let o = cli_with(&with(&env, &good_pi), &["pi", "status", "--json"]);
    let st: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(st["pi"]["piVersion"], "0.73.1", "{st}");
    assert_eq!(st["pi"]["tested"], true);
    let (out, _) = text(&cli_with(&with(&env, &good_pi), &["pi", "status"]));
    assert!(out.contains("pi: 0.73.1 ("), "{out}");

    // A copy of the extension with a syntax error: Pi exits, and says why.
    let broken = dir.path().join("broken.ts");
    let source = std::fs::read_to_string(repo().join("pi-extension/arbor.ts")).unwrap();
    let bad = source.replacen("export const PROTOCOL_VERSION = 1;", "export const PROTOCOL_VERSION = = 1;", 1);
    assert_ne!(bad, source);
    std::fs::write(&broken, &bad).unwrap();
    let pi = pi_review::pi_check::Pi::Command(good_pi.clone());
    let f = pi_review::pi_check::check_loads(&pi, &broken, Duration::from_secs(30)).unwrap_err();
    assert!(f.message.starts_with("Pi exited (exit status: 1) before answering"), "{}", f.message);
    assert!(f.message.contains("Failed to load extension") && f.message.contains("broken.ts"), "{}", f.message);
    assert!(pi_review::pi_check::check_loads(&pi, &global, Duration::from_secs(30)).is_ok());

    // An extension that never finishes loading keeps Pi from starting too: a time-out, and the
    // check stops Pi's whole process group.
    let hangs = dir.path().join("hangs.ts");
    std::fs::write(&hangs, "export default async function () { await new Promise((r) => setTimeout(r, 600000)); }\n")
        .unwrap();
    let t = std::time::Instant::now();
    let f = pi_review::pi_check::check_loads(&pi, &hangs, Duration::from_secs(8)).unwrap_err();
    assert!(f.message.starts_with("Pi did not answer within 8 s"), "{}", f.message);
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let ps = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&ps.stdout).contains(hangs.to_str().unwrap()), "Pi was left running");

    // install, when this Pi cannot start with the extension. The embedded extension loads, so
    // the Pi given is the real one with a broken extension on its command line as well: Pi
    // exits at start-up exactly as it would for a broken arbor.ts.
    let failing_pi = repo_pi(&format!("-e '{}'", broken.display()));
    let project = dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let p = project.to_str().unwrap();
    let placed = project.join(".pi/extensions/arbor.ts");
    let o = cli_with(&with(&env, &failing_pi), &["pi", "install-extension", "--project", p, "--json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(!placed.exists(), "the file this run wrote is removed again");
    assert!(tmp_leftovers(placed.parent().unwrap()).is_empty());
    assert!(err.contains("Pi 0.73.1 (ARBOR_PI=") && err.contains("cannot load Arbor's extension at"), "{err}");
    assert!(err.contains("Failed to load extension") && err.contains("broken.ts"), "Pi's own error: {err}");
    assert!(err.contains("The file was removed again, so Pi starts as before."), "{err}");
    assert!(err.contains("--no-check"), "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["check"]["status"], "failed");
    assert_eq!(r["undo"], "removed");

    // It was there, identical, before this run: it stays, and the failure is still reported.
    assert!(cli_with(&env, &["pi", "install-extension", "--project", p, "--no-check"]).status.success());
    let o = cli_with(&with(&env, &failing_pi), &["pi", "install-extension", "--project", p]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(placed.is_file());
    assert!(err.contains("was already there before this install and was left as it is"), "{err}");

    // A file it replaced (--force over another version) is put back.
    let older = source.replacen("ARBOR_EXTENSION_VERSION = \"", "ARBOR_EXTENSION_VERSION = \"0.0.1-", 1);
    std::fs::write(&placed, &older).unwrap();
    let o = cli_with(&with(&env, &failing_pi), &["pi", "install-extension", "--project", p, "--force"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&placed).unwrap(), older);
    assert!(err.contains("The file it replaced was put back"), "{err}");
    assert!(tmp_leftovers(placed.parent().unwrap()).is_empty());

    // No Pi to ask: installed, not checked, and said so.
    std::fs::remove_file(&placed).unwrap();
    let o = cli_with(&with(&env, "/nonexistent"), &["pi", "install-extension", "--project", p]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(placed.is_file());
    assert!(
        out.contains("note: ARBOR_PI=/nonexistent could not be run as Pi")
            && out.contains("the extension was installed but not checked"),
        "{out}"
    );
    std::fs::remove_file(&placed).unwrap();
    let empty_path = dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    let mut no_pi = env.to_vec();
    no_pi.push(("PATH", empty_path.to_str().unwrap()));
    let o = cli_with(&no_pi, &["pi", "install-extension", "--project", p]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains(
            "note: Pi was not found on PATH (set ARBOR_PI to its command); the extension was installed but not checked"
        ),
        "{out}"
    );
}
