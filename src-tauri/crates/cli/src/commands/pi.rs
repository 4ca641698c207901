//! `arbor-cli pi …`: Arbor's Pi extension (install, uninstall, status) and the headless
//! reviewer that answers it (`serve`), over `pi-review`.
use super::CmdResult;
use clap::{Args, Subcommand, ValueEnum};
use pi_review::install::{self, InstallError, InstallOutcome, InstallReport, Location, UninstallOutcome};
use pi_review::pi_check::{CheckStatus, PiCheck};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PiArgs {
    #[command(subcommand)]
    pub command: PiCommand,
}

#[derive(Subcommand, Debug)]
pub enum PiCommand {
    /// Put Arbor's extension where Pi finds it (never over a file that is not the same), then
    /// check that Pi starts with it
    ///
    /// A load error in any extension stops Pi from starting. So after writing the file this starts
    /// your Pi once with only this file loaded (RPC mode, no model, no session, an empty scratch
    /// agent folder; about 3 s) and asks it for its state. Pi is $ARBOR_PI (a command line, e.g.
    /// `node /path/to/pi/dist/cli.js`), else `pi` on PATH. If Pi cannot load the file, the file
    /// this run wrote is removed again (a file it replaced is put back) and the exit status is 2.
    /// No Pi found: installed, not checked. A Pi of another release line than the one the
    /// extension is tested with (0.73.x): installed, with a warning.
    InstallExtension(InstallArgs),
    /// Remove Arbor's extension (a file of the same name that is not Arbor's is left alone)
    UninstallExtension(WhereArgs),
    /// Where the extension is installed, which version, which Pi (its --version), and whether a
    /// reviewer is listening
    Status(StatusArgs),
    /// Answer Pi's compaction and branch-summary reviews without a window, until Ctrl-C or SIGTERM
    Serve(ServeArgs),
}

#[derive(Args, Debug)]
pub struct WhereArgs {
    /// A project folder: use <DIR>/.pi/extensions/ instead of Pi's agent folder
    /// ($PI_CODING_AGENT_DIR/extensions/, else ~/.pi/agent/extensions/)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct InstallArgs {
    #[command(flatten)]
    pub place: WhereArgs,
    /// Replace an Arbor extension of another version, or a changed copy
    #[arg(long)]
    pub force: bool,
    /// Do not start Pi to check that it loads the extension
    #[arg(long)]
    pub no_check: bool,
    /// Print what was done and the check's result as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Also report this project's .pi/extensions/
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyArg {
    /// Decide each request (with --edit-command or --decide-command; else accept Pi's draft)
    Review,
    /// Never change anything: accept Pi's draft at once and log it
    Watch,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[arg(long, value_enum, default_value = "review")]
    pub policy: PolicyArg,
    /// Shell command that edits Pi's draft: the draft on stdin, the new summary on stdout (empty
    /// output or a non-zero exit: Pi's draft). Env: ARBOR_KIND, ARBOR_SESSION_FILE,
    /// ARBOR_FIRST_KEPT_ENTRY_ID, ARBOR_TOKENS_BEFORE, ARBOR_ROUND, ARBOR_LEAF_ID
    #[arg(long, value_name = "CMD", conflicts_with = "decide_command")]
    pub edit_command: Option<String>,
    /// Shell command that decides: the request as one JSON line on stdin, a decision as JSON on
    /// stdout ({"decision":"accept|edit|move_cut|cancel|pi_decides", "summary"?, "firstKeptEntryId"?, "note"?})
    #[arg(long, value_name = "CMD")]
    pub decide_command: Option<String>,
    /// Review time limit in seconds: past it, Pi's draft is used
    #[arg(long, value_name = "S", default_value_t = 300.0)]
    pub timeout: f64,
    /// Socket path [default: $ARBOR_REVIEW_SOCKET, else $XDG_RUNTIME_DIR/arbor/review.sock, else /tmp/arbor-<uid>/review.sock]
    #[arg(long)]
    pub socket: Option<PathBuf>,
}

pub fn run(args: PiArgs) -> CmdResult {
    match args.command {
        PiCommand::InstallExtension(a) => install_extension(a),
        PiCommand::UninstallExtension(a) => uninstall_extension(a),
        PiCommand::Status(a) => status(a),
        PiCommand::Serve(a) => serve(a),
    }
}

fn location(w: &WhereArgs) -> Location {
    match &w.project {
        Some(dir) => install::project_location(dir),
        None => install::global_location(),
    }
}

fn install_extension(a: InstallArgs) -> CmdResult {
    let loc = location(&a.place);
    let report = match install::install_checked(&loc, a.force, !a.no_check) {
        Ok(r) => r,
        Err(InstallError::DoesNotLoad(r)) => {
            if a.json {
                print_json(&r)?;
            }
            return Err(format!(
                "{}\nTo install without this check anyway: --no-check (only if you know Pi starts with it).",
                InstallError::DoesNotLoad(r)
            ));
        }
        Err(e) => return Err(e.to_string()),
    };
    if a.json {
        print_json(&report)?;
    } else {
        print_install(&report);
    }
    Ok(())
}

fn print_json(r: &InstallReport) -> CmdResult {
    println!("{}", serde_json::to_string_pretty(r).map_err(|e| e.to_string())?);
    Ok(())
}

fn print_install(r: &InstallReport) {
    let v = &r.extension_version;
    match r.outcome {
        InstallOutcome::Installed => println!("installed Arbor's Pi extension {v} at {}", r.path),
        InstallOutcome::Replaced => println!("replaced the extension at {} with Arbor's Pi extension {v}", r.path),
        InstallOutcome::AlreadyInstalled => println!("Arbor's Pi extension {v} is already installed at {}", r.path),
    }
    let c = &r.check;
    match c.status {
        CheckStatus::Passed => println!(
            "checked: Pi {} starts with it ({} ms; {})",
            c.pi_version.as_deref().unwrap_or("?"),
            c.elapsed_ms.unwrap_or(0),
            c.pi.as_deref().unwrap_or("?")
        ),
        CheckStatus::NotChecked => println!(
            "note: {}; the extension was installed but not checked",
            c.problem.as_deref().unwrap_or("not checked")
        ),
        // install_checked answers a failed check with an error.
        CheckStatus::Failed => {}
    }
    if let Some(w) = &c.warning {
        println!("warning: {w}; it was installed, and Pi starts with it, but reviews may not work as tested");
    }
    if r.outcome != InstallOutcome::AlreadyInstalled {
        eprintln!("Pi loads it when it starts; a Pi that is running now needs /reload or a restart.");
    }
}

fn uninstall_extension(a: WhereArgs) -> CmdResult {
    let loc = location(&a);
    match install::uninstall(&loc).map_err(|e| e.to_string())? {
        UninstallOutcome::Removed => println!("removed Arbor's Pi extension from {}", loc.path.display()),
        UninstallOutcome::NotInstalled => println!("Arbor's Pi extension is not installed at {}", loc.path.display()),
    }
    Ok(())
}

fn status(a: StatusArgs) -> CmdResult {
    let st = install::status_with_pi(a.project.as_deref());
    if a.json {
        println!("{}", serde_json::to_string_pretty(&st).map_err(|e| e.to_string())?);
        return Ok(());
    }
    println!("Arbor's Pi extension {} (review protocol {})", st.extension_version, st.protocol);
    for l in &st.locations {
        let what = match (l.present, l.arbor, l.current) {
            (false, _, _) => "not installed".to_string(),
            (true, false, _) => "another file named arbor.ts (not Arbor's)".to_string(),
            (true, true, true) => format!("installed, version {}", l.version.as_deref().unwrap_or("?")),
            (true, true, false) => {
                format!(
                    "installed, version {} (differs from this Arbor's; install-extension --force replaces it)",
                    l.version.as_deref().unwrap_or("?")
                )
            }
        };
        let scope = match l.scope {
            install::Scope::Global => "global",
            install::Scope::Project => "project",
        };
        println!("  {scope:<8}{}: {what}", l.path);
    }
    let r = &st.reviewer;
    if r.listening {
        println!(
            "reviewer: listening on {} ({}, policy {}, time limit {} s)",
            r.socket,
            r.server.as_deref().unwrap_or("?"),
            r.policy.as_deref().unwrap_or("?"),
            r.timeout_ms.unwrap_or(0) as f64 / 1000.0
        );
    } else {
        println!("reviewer: not listening on {} ({})", r.socket, r.problem.as_deref().unwrap_or("unknown"));
    }
    if let Some(pi) = &st.pi {
        print_pi(pi);
    }
    Ok(())
}

fn print_pi(pi: &PiCheck) {
    match (&pi.pi_version, &pi.pi) {
        (Some(v), Some(how)) => {
            let tested = match pi.tested {
                Some(true) => format!("tested line of {}", pi.tested_pi_version),
                _ => format!("not the tested Pi {}", pi.tested_pi_version),
            };
            println!("pi: {v} ({how}; {tested})");
        }
        _ => println!("pi: {}", pi.problem.as_deref().unwrap_or("unknown")),
    }
}

#[cfg(not(unix))]
fn serve(_a: ServeArgs) -> CmdResult {
    Err("the review socket needs a Unix system".to_string())
}

#[cfg(unix)]
fn serve(a: ServeArgs) -> CmdResult {
    use pi_review::reviewer::{AcceptAll, DecideCommand, EditCommand};
    use pi_review::server::{LogRecord, Server, ServerConfig};
    use pi_review::{Policy, Reviewer};
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    if !(a.timeout.is_finite() && a.timeout > 0.0 && a.timeout <= 86_400.0) {
        return Err("--timeout takes seconds, more than 0 and at most 86400".to_string());
    }
    let policy = match a.policy {
        PolicyArg::Review => Policy::Review,
        PolicyArg::Watch => Policy::Watch,
    };
    if policy == Policy::Watch && (a.edit_command.is_some() || a.decide_command.is_some()) {
        return Err(
            "--policy watch never changes anything: drop --edit-command / --decide-command, or use --policy review"
                .to_string(),
        );
    }
    let reviewer: Arc<dyn Reviewer> = match (&a.edit_command, &a.decide_command) {
        (Some(c), _) => Arc::new(EditCommand { command: c.clone() }),
        (_, Some(c)) => Arc::new(DecideCommand { command: c.clone() }),
        _ => Arc::new(AcceptAll),
    };
    let socket = a.socket.clone().unwrap_or_else(pi_review::paths::socket_path);
    let mut config = ServerConfig::new(socket.clone());
    config.policy = policy;
    config.timeout = Duration::from_secs_f64(a.timeout);
    config.server_name = format!("arbor-cli {}", env!("CARGO_PKG_VERSION"));
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let log_out = out.clone();
    let print = move |v: &serde_json::Value| {
        if let Ok(mut o) = log_out.lock() {
            let _ = writeln!(o, "{v}");
            let _ = o.flush();
        }
    };
    let print_log = print.clone();
    let logger = Arc::new(move |rec: &LogRecord, _req: Option<&pi_review::ReviewRequest>| {
        if let Ok(v) = serde_json::to_value(rec) {
            print_log(&v);
        }
        if let Some(note) = rec.note.as_deref().filter(|_| rec.event != "review" || rec.timed_out) {
            eprintln!("arbor-cli: {} {}: {note}", rec.event, rec.request_id.as_deref().unwrap_or("-"));
        }
    });
    let server = Server::bind(config, reviewer, logger).map_err(|e| e.to_string())?;
    for n in server.notes() {
        eprintln!("note: {n}");
    }
    let what = match (&a.edit_command, &a.decide_command, policy) {
        (_, _, Policy::Watch) => "watching (Pi's drafts accepted at once)".to_string(),
        (Some(c), _, _) => format!("editing drafts with `{c}`"),
        (_, Some(c), _) => format!("deciding with `{c}`"),
        _ => "accepting Pi's drafts".to_string(),
    };
    print(&serde_json::json!({
        "event": "listening",
        "socket": socket.display().to_string(),
        "policy": policy.as_str(),
        "timeoutMs": (a.timeout * 1000.0).round() as u64,
        "pid": std::process::id(),
        // Also in the event, because stderr and stdout are separate pipes: a reader that waits
        // for this line may see it before the notes printed above.
        "notes": server.notes(),
    }));
    eprintln!("arbor-cli: {what} on {}; time limit {} s. Ctrl-C stops.", socket.display(), a.timeout);
    let stopped = wait_for_stop();
    server.shutdown();
    print(&serde_json::json!({ "event": "stopped", "signal": stopped }));
    Ok(())
}

/// Blocks until SIGINT, SIGTERM or SIGHUP; returns which.
#[cfg(unix)]
fn wait_for_stop() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(_) => return "none",
    };
    rt.block_on(async {
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) =
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
        else {
            return "none";
        };
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
            _ = hup.recv() => "SIGHUP",
        }
    })
}
