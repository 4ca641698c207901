//! Disk and permission faults (the full disk and read-only faults of docs/RELIABILITY.md), through
//! the real binary on real files.
//!
//! * A file-size limit (`prlimit --fsize`, with SIGXFSZ ignored so a write past it would return
//!   EFBIG instead of killing the process), and a tiny tmpfs filled to the last page (ignored
//!   tests: mounting needs root; `scripts/test.sh` runs them with `--ignored` when run as root).
//! * A read-only session file: `chattr +i` (root ignores permission bits), and mode 0444 for a
//!   process running as `nobody` (`setpriv`), and a read-only folder for the sidecar lock.
//!
//! Each time: exit 2 with one sentence that says what to do, not one byte added to the session
//! file, Pi loads it with no skipped line and computes what Arbor computes (`assert_pi_agrees`),
//! and the next append after the fault clears works. The index on a full disk: a clear error,
//! and the next run on free space answers correctly with no manual repair.
#[path = "support/pi.rs"]
mod pi;
#[path = "../../library/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_arbor-cli");

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("disk_faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fixture(dir: &Path) -> PathBuf {
    let f = dir.join("session.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../session-engine/tests/fixtures/conformance/basic-tool-chain.jsonl"),
        &f,
    )
    .unwrap();
    f
}

/// `arbor-cli ARGS`, optionally under a file-size limit of `fsize` bytes with SIGXFSZ ignored
/// (`ignore_xfsz`), optionally as the user `nobody`.
fn cli(dir: &Path, args: &[&str], fsize: Option<u64>, ignore_xfsz: bool, as_nobody: bool) -> Output {
    let mut script = String::new();
    if ignore_xfsz {
        script.push_str("trap '' XFSZ; ");
    }
    script.push_str("exec");
    if as_nobody {
        script.push_str(" setpriv --reuid=65534 --regid=65534 --clear-groups");
    }
    if let Some(n) = fsize {
        if Command::new("prlimit").arg("--version").output().map(|o| o.status.success()).unwrap_or(false) {
            script.push_str(&format!(" prlimit --fsize={n}:{n}"));
        } else {
            // POSIX sh counts `ulimit -f` in 512-byte blocks: the limit lands at or below n.
            script = format!("ulimit -f {}; {script}", n / 512);
        }
    }
    script.push_str(" \"$@\"");
    let mut c = Command::new("sh");
    c.arg("-c").arg(script).arg("sh").arg(BIN).args(args);
    c.env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .env("ARBOR_SETTINGS", dir.join("arbor-settings.json"))
        .env("ARBOR_KEYRING", "off");
    c.env_remove("ARBOR_INDEX_DB").stdin(Stdio::null());
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2, one line on stderr that contains each of `says`.
fn assert_refused(o: &Output, what: &str, says: &[&str]) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: expected exit 2, got {:?}: {e}", o.status);
    assert_eq!(e.trim().lines().count(), 1, "{what}: the error is one line: {e}");
    for s in says {
        assert!(e.contains(s), "{what}: the error does not say {s:?}: {e}");
    }
    assert!(o.stdout.is_empty(), "{what}: printed an id although it failed: {}", String::from_utf8_lossy(&o.stdout));
    e
}

fn label_args<'a>(file: &'a str, target: &'a str, text: &'a str) -> Vec<&'a str> {
    vec!["label", file, "--entry", target, "--text", text, "--json"]
}

fn first_id(file: &Path) -> String {
    session_engine::Session::open(file).unwrap().id(0).to_string()
}

fn entry_id(o: &Output) -> String {
    assert!(o.status.success(), "the append failed: {}", stderr(o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["entryId"].as_str().unwrap().to_string()
}

fn have_pi(test: &str) -> bool {
    pi::pi_or_skip(test)
}

#[test]
fn file_size_limit_refuses_whole_appends_and_leaves_no_fragment() {
    let pi_ok = have_pi("file_size_limit_refuses_whole_appends_and_leaves_no_fragment");
    let dir = scratch("fsize");
    let file = fixture(&dir);
    let fs = file.to_str().unwrap();
    let target = first_id(&file);
    let before = std::fs::read(&file).unwrap();
    let limit = before.len() as u64 + 40; // room for 40 bytes: less than any entry line
    let says = ["disk is full or the file size limit is reached", "nothing was written", "Free some disk space"];

    // label and compact, SIGXFSZ ignored (a write past the limit would fail with EFBIG)
    let o = cli(&dir, &label_args(fs, &target, "under the limit"), Some(limit), true, false);
    let e = assert_refused(&o, "label at the file-size limit", &says);
    assert!(e.contains("File too large"), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "the refused label changed the file");
    let o =
        cli(&dir, &["compact", fs, "--provider", "offline", "--keep-recent-tokens", "400"], Some(limit), true, false);
    assert_refused(&o, "compact at the file-size limit", &says);
    assert_eq!(std::fs::read(&file).unwrap(), before, "the refused compaction changed the file");
    // SIGXFSZ not ignored: Arbor checks the limit before writing, so the signal never comes and
    // the user still gets the sentence rather than a process killed mid-line.
    let o = cli(&dir, &label_args(fs, &target, "under the limit"), Some(limit), false, false);
    assert_refused(&o, "label at the file-size limit, SIGXFSZ at its default", &says);
    assert_eq!(std::fs::read(&file).unwrap(), before);
    if pi_ok {
        pi::assert_pi_agrees(&file, None);
    }

    // The fault clears (a higher limit): the next append works, whole.
    let o = cli(&dir, &label_args(fs, &target, "after the limit"), Some(limit + 4096), true, false);
    let id = entry_id(&o);
    let after = std::fs::read(&file).unwrap();
    assert_eq!(&after[..before.len()], &before[..], "earlier bytes changed");
    let tail = std::str::from_utf8(&after[before.len()..]).unwrap();
    assert!(
        tail.starts_with(&format!("{{\"type\":\"label\",\"id\":\"{id}\""))
            && tail.ends_with('\n')
            && tail.matches('\n').count() == 1,
        "{tail}"
    );
    let o = cli(&dir, &["compact", fs, "--provider", "offline", "--keep-recent-tokens", "400"], None, false, false);
    assert!(o.status.success(), "compact after the limit: {}", stderr(&o));
    if pi_ok {
        let v = pi::assert_pi_agrees(&file, None);
        assert!(v.labels.iter().any(|(t, l)| t == &target && l == "after the limit"), "{:?}", v.labels);
        pi::assert_arbor_reads_pi_append(&file);
    }
}

/// A tmpfs mounted for one test, unmounted on drop (also when the test panics).
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounting needs privileges (root, or CAP_SYS_ADMIN in a container), which is why the tests
    /// that call this are ignored unless asked for; asked for without them, it says so and fails.
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0777"), "tmpfs"])
            .arg(at)
            .output()
            .unwrap_or_else(|e| panic!("cannot run `mount` ({e}): it comes with util-linux (mount)"));
        assert!(
            o.status.success(),
            "`mount -t tmpfs` failed ({}): the tmpfs tests need root, or CAP_SYS_ADMIN in a container",
            stderr(&o).trim()
        );
        Tmpfs(at.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system holding `path` until a write fails; returns the bytes written.
fn fill(path: &Path) -> u64 {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![b'x'; 4096];
    let mut n = 0u64;
    loop {
        match f.write(&chunk) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k as u64,
        }
    }
    let _ = f.sync_all();
    n
}

#[test]
#[ignore = "mounts a tmpfs: needs root (or CAP_SYS_ADMIN); scripts/test.sh runs it when run as root"]
fn full_tmpfs_refuses_whole_appends_and_leaves_no_fragment() {
    let pi_ok = have_pi("full_tmpfs_refuses_whole_appends_and_leaves_no_fragment");
    let dir = scratch("tmpfs");
    let mnt = Tmpfs::mount(&dir.join("mnt"), "256k");
    let file = fixture(&mnt.0);
    let fs = file.to_str().unwrap();
    let target = first_id(&file);
    let filler = mnt.0.join("filler");
    let filled = fill(&filler);
    assert!(filled > 0, "the tmpfs took no filler");
    let before = std::fs::read(&file).unwrap();
    // More than the slack left in the file's last page: the line needs a page the disk does not
    // have. A plain write would put part of it in the slack and fail on the rest.
    let slack = 4096 - before.len() % 4096;
    let long = "🌳".repeat(slack / 4 + 600);
    let says = ["disk is full or the file size limit is reached", "nothing was written", "Free some disk space"];
    let o = cli(&dir, &label_args(fs, &target, &long), None, false, false);
    let e = assert_refused(&o, "label on a full tmpfs", &says);
    assert!(e.contains("No space left on device"), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "the refused label left bytes behind");
    if pi_ok {
        pi::assert_pi_agrees(&file, None);
    }
    // A line that fits in the last page's slack needs no new space: it is written (a full disk
    // is not an excuse to refuse what fits).
    let small = cli(&dir, &label_args(fs, &target, "fits"), None, false, false);
    let fits = slack > 200;
    if fits {
        entry_id(&small);
    } else {
        assert_refused(&small, "a short label on a full tmpfs with a nearly full last page", &says);
    }
    // The space comes back: the long label is written, whole.
    std::fs::remove_file(&filler).unwrap();
    let o = cli(&dir, &label_args(fs, &target, &long), None, false, false);
    entry_id(&o);
    if pi_ok {
        let v = pi::assert_pi_agrees(&file, None);
        assert!(v.labels.iter().any(|(t, l)| t == &target && l == &long), "{:?}", v.labels);
    }
    eprintln!("tmpfs: {filled} filler bytes; slack {slack}; short label on the full disk written: {fits}");
}

#[test]
fn read_only_session_file_and_folder_are_refused_with_a_sentence() {
    let pi_ok = have_pi("read_only_session_file_and_folder_are_refused_with_a_sentence");
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let dir = scratch("readonly");
    let file = fixture(&dir);
    let fs = file.to_str().unwrap();
    let target = first_id(&file);
    let before = std::fs::read(&file).unwrap();
    let mut variants = 0;

    // 1. chattr +i: even root may not write.
    let immutable = Command::new("chattr").arg("+i").arg(&file).status().map(|s| s.success()).unwrap_or(false);
    if immutable {
        variants += 1;
        let o = cli(&dir, &label_args(fs, &target, "immutable"), None, false, false);
        let _ = Command::new("chattr").arg("-i").arg(&file).status();
        assert_refused(
            &o,
            "label on an immutable file",
            &["may not write to this file", "nothing was written", "Make it writable"],
        );
        assert_eq!(std::fs::read(&file).unwrap(), before);
    } else {
        eprintln!("NOTE: chattr +i is not available on this file system; the immutable-file variant was skipped.");
    }

    // 2. Mode 0444, written by a process that is not root (root ignores permission bits).
    use std::os::unix::fs::PermissionsExt;
    let as_nobody =
        root && Command::new("setpriv").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    if as_nobody {
        // nobody must reach the file and create the sidecar lock: a world-writable folder of its own
        let d = dir.join("shared");
        std::fs::create_dir_all(&d).unwrap();
        let mut a = Path::new(env!("CARGO_TARGET_TMPDIR")).to_path_buf();
        let reachable = loop {
            if std::fs::metadata(&a).map(|m| m.permissions().mode() & 0o001 == 0).unwrap_or(true) {
                break false;
            }
            if !a.pop() {
                break true;
            }
        };
        if reachable {
            variants += 1;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
            let f2 = d.join("session.jsonl");
            std::fs::copy(&file, &f2).unwrap();
            std::fs::set_permissions(&f2, std::fs::Permissions::from_mode(0o444)).unwrap();
            let f2s = f2.to_str().unwrap();
            let o = cli(&dir, &label_args(f2s, &target, "0444"), None, false, true);
            assert_refused(
                &o,
                "label on a 0444 file as nobody",
                &["may not write to this file", "Permission denied", "nothing was written", "Make it writable"],
            );
            assert_eq!(std::fs::read(&f2).unwrap(), before);
            // 3. The folder read-only: the sidecar lock cannot be created.
            std::fs::set_permissions(&f2, std::fs::Permissions::from_mode(0o666)).unwrap();
            let _ = std::fs::remove_file(session_engine::store::SessionLock::lock_path(&f2));
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
            let o = cli(&dir, &label_args(f2s, &target, "folder"), None, false, true);
            assert_refused(&o, "label in a read-only folder as nobody", &["lock", "nothing was written", "folder"]);
            assert_eq!(std::fs::read(&f2).unwrap(), before);
            // Writable again: the next append works.
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
            entry_id(&cli(&dir, &label_args(f2s, &target, "writable again"), None, false, true));
            if pi_ok {
                pi::assert_pi_agrees(&f2, None);
            }
        } else {
            eprintln!("NOTE: the test folder is not reachable by nobody; the 0444-as-nobody variant was skipped.");
        }
    } else if !root {
        variants += 1;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        let o = cli(&dir, &label_args(fs, &target, "0444"), None, false, false);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_refused(&o, "label on a 0444 file", &["may not write to this file", "nothing was written"]);
        assert_eq!(std::fs::read(&file).unwrap(), before);
    } else {
        eprintln!(
            "NOTE: running as root without setpriv: the 0444 variant was skipped (root ignores permission bits)."
        );
    }
    assert!(variants > 0, "no read-only variant could run here");
    if pi_ok {
        pi::assert_pi_agrees(&file, None);
    }
    // The file writable again: the next append works.
    let id = entry_id(&cli(&dir, &label_args(fs, &target, "writable"), None, false, false));
    assert!(std::fs::read_to_string(&file).unwrap().contains(&id));
    if pi_ok {
        pi::assert_pi_agrees(&file, None);
    }
}

/// 40 sessions of a few hundred KB in all, with one phrase in the last one.
fn sessions(root: &Path) -> usize {
    for i in 0..40 {
        let mut g = support::Gen::new(&format!("disk-{i:03}"), &format!("/proj/{}", i % 4));
        let mut leaf = g.chain(
            None,
            12,
            &format!("s{i} lorem ipsum dolor sit amet consectetur {}", "adipiscing elit ".repeat(20)),
            "m",
        );
        if i == 39 {
            leaf = Some(g.user(leaf.as_deref(), "the quetzal phrase lives here"));
        }
        let _ = leaf;
        g.write(&root.join(format!("--proj-{}--/s{i:03}.jsonl", i % 4)));
    }
    40
}

fn index_ok(dir: &Path, root: &Path, db: &Path, n: usize) {
    let (rs, dbs) = (root.to_str().unwrap(), db.to_str().unwrap());
    let o = cli(dir, &["index", "--root", rs, "--db", dbs], None, false, false);
    assert!(o.status.success(), "index on free space: {}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("indexed {n} session files")), "{out}");
    let o = cli(dir, &["search", "quetzal phrase", "--root", rs, "--db", dbs, "--json"], None, false, false);
    assert!(o.status.success(), "search: {}", stderr(&o));
    let hits: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{hits}");
    assert_eq!(hits[0]["sessionId"], "disk-039");
    let lib = library::Library::open(db).unwrap();
    let listed = lib.sessions(&library::SessionFilter::default()).unwrap();
    assert_eq!(listed.len(), n, "the library lists {} of {n} sessions", listed.len());
}

/// The index's error on a full disk: one line, exit 2, what to do.
fn assert_index_full(o: &Output, what: &str) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: expected exit 2, got {:?}: {e}", o.status);
    let last = e.trim().lines().last().unwrap_or("").to_string();
    assert!(
        last.contains("full") && last.contains("free"),
        "{what}: the error does not say the disk is full and what to do: {e}"
    );
    last
}

#[test]
fn index_on_a_full_disk_fails_clearly_and_the_next_run_answers() {
    let dir = scratch("index");
    let root = dir.join("sessions");
    let n = sessions(&root);
    let (rs, db) = (root.to_str().unwrap().to_string(), dir.join("idx/index.sqlite3"));
    let dbs = db.to_str().unwrap();

    // A file-size limit that the index outgrows on its first pass.
    let o = cli(&dir, &["index", "--root", &rs, "--db", dbs], Some(48 * 1024), true, false);
    let e = assert_index_full(&o, "index at the file-size limit");
    eprintln!("index at the file-size limit: {e}");
    index_ok(&dir, &root, &db, n);
    let aside: Vec<_> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .filter_map(|d| d.ok())
        .filter(|d| d.file_name().to_string_lossy().contains("corrupt"))
        .collect();
    assert!(aside.is_empty(), "a full disk made the index move aside as damaged: {aside:?}");
}

/// A tiny tmpfs that fills up mid-pass; then the space comes back.
#[test]
#[ignore = "mounts a tmpfs: needs root (or CAP_SYS_ADMIN); scripts/test.sh runs it when run as root"]
fn index_on_a_full_tmpfs_fails_clearly_and_the_next_run_answers() {
    let dir = scratch("index-tmpfs");
    let root = dir.join("sessions");
    let n = sessions(&root);
    let rs = root.to_str().unwrap().to_string();
    // The index this pass writes, measured outside the tmpfs: the tmpfs keeps half of it free, so
    // the pass fills the disk midway whatever size the index's layout gives it.
    let probe = dir.join("probe/index.sqlite3");
    index_ok(&dir, &root, &probe, n);
    let need: u64 =
        std::fs::read_dir(probe.parent().unwrap()).unwrap().map(|d| d.unwrap().metadata().unwrap().len()).sum();
    let size: u64 = 4 * 1024 * 1024;
    assert!(need / 2 < size, "the probe index ({need} bytes) outgrew the 4 MiB tmpfs");
    let mnt = Tmpfs::mount(&dir.join("mnt"), "4m");
    let db2 = mnt.0.join("index.sqlite3");
    let filler = mnt.0.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let free = (need / 2).next_multiple_of(4096);
        f.write_all(&vec![b'x'; (size - free) as usize]).unwrap();
    }
    let o = cli(&dir, &["index", "--root", &rs, "--db", db2.to_str().unwrap()], None, false, false);
    let e = assert_index_full(&o, "index on a full tmpfs");
    eprintln!("index on a full tmpfs: {e}");
    std::fs::remove_file(&filler).unwrap();
    index_ok(&dir, &root, &db2, n);
    // An update of a complete index, on a disk filled to the last byte: more sessions appear,
    // and one of them gets appended to.
    for i in 0..10 {
        let mut g = support::Gen::new(&format!("late-{i:03}"), "/proj/late");
        g.chain(None, 10, &format!("late {i} {}", "more words to index ".repeat(30)), "m");
        g.write(&root.join(format!("--proj-late--/l{i:03}.jsonl")));
    }
    let filled = fill(&filler);
    let o = cli(&dir, &["index", "--root", &rs, "--db", db2.to_str().unwrap()], None, false, false);
    let e = assert_index_full(&o, "an index update on a full tmpfs");
    eprintln!("index update on a full tmpfs ({filled} filler bytes): {e}");
    std::fs::remove_file(&filler).unwrap();
    index_ok(&dir, &root, &db2, n + 10);
    let aside: Vec<_> = std::fs::read_dir(&mnt.0)
        .unwrap()
        .filter_map(|d| d.ok())
        .filter(|d| d.file_name().to_string_lossy().contains("corrupt"))
        .collect();
    assert!(aside.is_empty(), "a full disk made the index move aside as damaged: {aside:?}");
}
