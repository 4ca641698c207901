//! The socket server: a private Unix socket, one thread per connection, the peer's user id
//! checked, each request validated, each review given to the [`Reviewer`] under a time limit.
use crate::cut::{check_cut_in_file, CheckError};
use crate::paths::{prepare_folder, FolderError};
use crate::protocol::*;
use crate::reviewer::{Decision, Review, Reviewer, Verdict};
use serde::Serialize;
use std::io::{BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub socket: PathBuf,
    pub policy: Policy,
    /// The review time limit: past it, Pi's draft is accepted (with a note saying so).
    pub timeout: Duration,
    /// Announced in the greeting, e.g. `arbor-cli 0.1.0`.
    pub server_name: String,
    /// How long a connection may stay silent before its request (Pi drafts meanwhile).
    pub request_timeout: Duration,
}

impl ServerConfig {
    pub fn new(socket: PathBuf) -> Self {
        ServerConfig {
            socket,
            policy: Policy::Review,
            timeout: Duration::from_secs(300),
            server_name: "arbor".to_string(),
            request_timeout: Duration::from_secs(30 * 60),
        }
    }
}

/// Entry counts of a request, for the log.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EntryCounts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<u64>,
    pub to_summarize: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_prefix: Option<u64>,
}

/// One line of the server's log (`arbor-cli pi serve` prints each as JSON on stdout).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LogRecord {
    /// `review` (a round was answered), `gone` (the client left before the answer), `refused`
    /// (an error answer was sent).
    pub event: &'static str,
    pub time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<EntryCounts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_kept_entry_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<DecisionTag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_first_kept_entry_id: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_uid: Option<u32>,
    /// From the request line's arrival to the answer written, in milliseconds.
    pub ms: f64,
}

/// Receives every log record, with the request when there is one (the app shows it).
pub type Logger = Arc<dyn Fn(&LogRecord, Option<&ReviewRequest>) + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error("another Arbor reviewer is already listening on {0}; stop it first (or set ARBOR_REVIEW_SOCKET to another path)")]
    AlreadyRunning(PathBuf),
    #[error("{0} exists and is not a socket; remove it and start again")]
    NotASocket(PathBuf),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// A running server; dropping it (or [`Server::shutdown`]) stops it and removes its socket.
pub struct Server {
    socket: PathBuf,
    identity: Option<(u64, u64)>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    notes: Vec<String>,
}

fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Server {
    /// Creates the private folder, replaces a socket file left by a server that is gone (one
    /// that still answers is refused), binds with mode 0600 and starts accepting.
    pub fn bind(config: ServerConfig, reviewer: Arc<dyn Reviewer>, log: Logger) -> Result<Server, ServeError> {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let path = config.socket.clone();
        let io = |source| ServeError::Io { path: path.clone(), source };
        let mut notes = Vec::new();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            notes.extend(prepare_folder(dir)?);
        }
        match std::fs::symlink_metadata(&path) {
            Ok(m) if !m.file_type().is_socket() => return Err(ServeError::NotASocket(path)),
            Ok(_) => match UnixStream::connect(&path) {
                Ok(_) => return Err(ServeError::AlreadyRunning(path)),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    std::fs::remove_file(&path).map_err(io)?;
                    notes.push(format!("replaced {}, left by a reviewer that is no longer running", path.display()));
                }
                Err(e) => return Err(io(e)),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let listener = UnixListener::bind(&path).map_err(io)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared { config, reviewer, log, stop: stop.clone() });
        let thread = std::thread::Builder::new()
            .name("arbor-review-accept".into())
            .spawn(move || accept_loop(listener, shared))
            .map_err(io)?;
        Ok(Server { identity: identity(&path), socket: path, stop, thread: Some(thread), notes })
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// What `bind` changed on the way (a folder made private again, a stale socket replaced).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Stops accepting and removes the socket (only if it is still the one this server made).
    /// Connections in progress end when the process does.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
            if self.identity.is_some() && identity(&self.socket) == self.identity {
                let _ = std::fs::remove_file(&self.socket);
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_now();
    }
}

struct Shared {
    config: ServerConfig,
    reviewer: Arc<dyn Reviewer>,
    log: Logger,
    stop: Arc<AtomicBool>,
}

fn accept_loop(listener: UnixListener, shared: Arc<Shared>) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let tick = Timespec { tv_sec: 0, tv_nsec: 100_000_000 };
    while !shared.stop.load(Ordering::SeqCst) {
        let mut fds = [PollFd::new(&listener, PollFlags::IN)];
        if poll(&mut fds, Some(&tick)).unwrap_or(0) == 0 {
            continue;
        }
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    let s = shared.clone();
                    let _ =
                        std::thread::Builder::new().name("arbor-review-conn".into()).spawn(move || handle(stream, &s));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    // Out of descriptors and the like: let the next tick try again.
                    std::thread::sleep(Duration::from_millis(20));
                    break;
                }
            }
        }
    }
}

/// The user id of the process at the other end (`SO_PEERCRED`).
#[cfg(target_os = "linux")]
pub fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    Ok(rustix::net::sockopt::socket_peercred(stream)?.uid.as_raw())
}

/// Without `SO_PEERCRED`, the 0700 folder is what keeps other users out.
#[cfg(not(target_os = "linux"))]
pub fn peer_uid(_stream: &UnixStream) -> std::io::Result<u32> {
    Ok(crate::paths::uid())
}

fn refuse(
    stream: &mut UnixStream,
    shared: &Shared,
    r: &Refusal,
    req: Option<&ReviewRequest>,
    peer: Option<u32>,
    started: Instant,
) {
    let _ = write_message(stream, &r.to_message());
    // Closing with unread input would reset the connection and could lose the error line on the
    // way: end the writing side, then drop what the client still sends (briefly, boundedly).
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = std::io::copy(&mut std::io::Read::take(&mut *stream, 2 * MAX_LINE_BYTES as u64), &mut std::io::sink());
    let mut rec = record_for("refused", req);
    rec.code = Some(r.code);
    rec.note = Some(r.message.clone());
    rec.peer_uid = peer;
    rec.ms = ms(started);
    (shared.log)(&rec, req);
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0
}

fn record_for(event: &'static str, req: Option<&ReviewRequest>) -> LogRecord {
    let mut rec = LogRecord { event, time: session_engine::time::now_iso(), ..Default::default() };
    if let Some(r) = req {
        rec.request_id = Some(r.request_id.clone());
        rec.round = Some(r.round);
        rec.kind = Some(r.kind.as_str());
        rec.session = r.session.file.clone();
        rec.session_id = r.session.id.clone();
        if let Some(c) = &r.compaction {
            rec.entries = Some(EntryCounts {
                branch: Some(c.branch_entries),
                to_summarize: c.messages_to_summarize,
                turn_prefix: Some(c.turn_prefix_messages),
            });
            rec.tokens_before = c.tokens_before;
            rec.first_kept_entry_id = Some(c.first_kept_entry_id.clone());
        }
        if let Some(b) = &r.branch {
            rec.entries = Some(EntryCounts { branch: None, to_summarize: b.entries_to_summarize, turn_prefix: None });
        }
    }
    rec
}

fn handle(mut stream: UnixStream, shared: &Shared) {
    let _ = stream.set_nonblocking(false);
    let accepted = Instant::now();
    let me = crate::paths::uid();
    match peer_uid(&stream) {
        Ok(uid) if uid == me => {}
        Ok(uid) => {
            let r = Refusal::new(
                ErrorCode::PeerRefused,
                format!("this Arbor reviewer accepts only its own user (uid {me}); the client runs as uid {uid}"),
            );
            return refuse(&mut stream, shared, &r, None, Some(uid), accepted);
        }
        Err(e) => {
            let r = Refusal::new(ErrorCode::PeerRefused, format!("cannot tell which user the client runs as ({e})"));
            return refuse(&mut stream, shared, &r, None, None, accepted);
        }
    }
    let hello = ServerMessage::Hello(Hello {
        arbor: "review".into(),
        protocol: PROTOCOL_VERSION,
        server: shared.config.server_name.clone(),
        policy: shared.config.policy,
        timeout_ms: shared.config.timeout.as_millis() as u64,
        max_line_bytes: MAX_LINE_BYTES,
    });
    if write_message(&mut stream, &hello).is_err() {
        return;
    }
    let Ok(read_half) = stream.try_clone() else { return };
    let mut reader = BufReader::new(read_half);
    let _ = stream.set_read_timeout(Some(shared.config.request_timeout));
    let mut first: Option<ReviewRequest> = None;
    for expected_round in 1..=MAX_ROUNDS {
        let line = match read_line_limited(&mut reader) {
            Ok(Some(line)) => line,
            // A status probe, or Pi went away while drafting.
            Ok(None) => return,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                let r = Refusal::new(ErrorCode::TooLarge, format!("the request is longer than {MAX_LINE_BYTES} bytes"));
                return refuse(&mut stream, shared, &r, None, None, accepted);
            }
            Err(_) => return,
        };
        let started = Instant::now();
        let req = match parse_request(&line) {
            Ok(r) => r,
            Err(r) => return refuse(&mut stream, shared, &r, None, None, started),
        };
        let consistent = match &first {
            None => req.round == 1,
            Some(f) => req.round == expected_round && req.request_id == f.request_id && req.kind == f.kind,
        };
        if !consistent {
            let r = Refusal::new(
                ErrorCode::BadRequest,
                format!(
                    "expected round {expected_round} of this request, got round {} of {}",
                    req.round, req.request_id
                ),
            );
            return refuse(&mut stream, shared, &r, Some(&req), None, started);
        }
        let (verdict, timed_out) = decide(&mut stream, shared, &req);
        let Some(verdict) = verdict else {
            let mut rec = record_for("gone", Some(&req));
            rec.note =
                Some("the client closed the connection before the answer (Pi aborted or stopped waiting)".into());
            rec.ms = ms(started);
            (shared.log)(&rec, Some(&req));
            return;
        };
        let verdict = settle(verdict, &req);
        let answer = Answer {
            protocol: PROTOCOL_VERSION,
            request_id: req.request_id.clone(),
            round: req.round,
            decision: verdict.decision.tag(),
            summary: match &verdict.decision {
                Decision::Edit(s) => Some(s.clone()),
                _ => None,
            },
            first_kept_entry_id: match &verdict.decision {
                Decision::MoveCut(id) => Some(id.clone()),
                _ => None,
            },
            note: verdict.note.clone(),
        };
        let written = write_message(&mut stream, &ServerMessage::Answer(answer));
        let mut rec = record_for("review", Some(&req));
        rec.action = Some(verdict.decision.tag());
        rec.timed_out = timed_out;
        rec.note = verdict.note.clone();
        if let Decision::MoveCut(id) = &verdict.decision {
            rec.new_first_kept_entry_id = Some(id.clone());
        }
        if let Err(e) = &written {
            rec.event = "gone";
            rec.note = Some(format!("the answer could not be sent ({e})"));
        }
        rec.ms = ms(started);
        (shared.log)(&rec, Some(&req));
        if written.is_err() || !matches!(verdict.decision, Decision::MoveCut(_)) {
            return;
        }
        first.get_or_insert(req);
    }
}

/// Asks the reviewer, under the time limit, while watching for the client to leave. `None` when
/// the client left; the flag says whether the time limit decided.
fn decide(stream: &mut UnixStream, shared: &Shared, req: &ReviewRequest) -> (Option<Verdict>, bool) {
    if shared.config.policy == Policy::Watch {
        return (Some(Decision::Accept.into()), false);
    }
    let deadline = Instant::now() + shared.config.timeout;
    let cancelled = Arc::new(AtomicBool::new(false));
    let review = Arc::new(Review::new(req.clone(), deadline, cancelled.clone()));
    let (tx, rx) = mpsc::channel();
    let reviewer = shared.reviewer.clone();
    let r = review.clone();
    let spawned = std::thread::Builder::new().name("arbor-reviewer".into()).spawn(move || {
        let v = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reviewer.review(&r)))
            .unwrap_or_else(|_| Verdict::with_note(Decision::Accept, "the reviewer failed; Pi's draft is used"));
        let _ = tx.send(v);
    });
    if spawned.is_err() {
        return (Some(Verdict::with_note(Decision::Accept, "no thread for the reviewer; Pi's draft is used")), false);
    }
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            cancelled.store(true, Ordering::SeqCst);
            let secs = shared.config.timeout.as_secs_f64();
            return (
                Some(Verdict::with_note(Decision::Accept, format!("no decision within {secs} s; Pi's draft is used"))),
                true,
            );
        }
        match rx.recv_timeout(left.min(Duration::from_millis(50))) {
            Ok(v) => return (Some(v), false),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return (
                    Some(Verdict::with_note(Decision::Accept, "the reviewer gave no decision; Pi's draft is used")),
                    false,
                )
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if client_gone(stream) {
                    cancelled.store(true, Ordering::SeqCst);
                    return (None, false);
                }
            }
        }
    }
}

/// Whether the client closed its end (it sends nothing while it waits for an answer).
fn client_gone(stream: &UnixStream) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let zero = Timespec { tv_sec: 0, tv_nsec: 0 };
    let mut fds = [PollFd::new(stream, PollFlags::IN)];
    if poll(&mut fds, Some(&zero)).unwrap_or(0) == 0 {
        return false;
    }
    let rev = fds[0].revents();
    if rev.intersects(PollFlags::HUP | PollFlags::ERR) {
        return true;
    }
    let mut b = [0u8; 1];
    let flags = rustix::net::RecvFlags::PEEK | rustix::net::RecvFlags::DONTWAIT;
    matches!(rustix::net::recv(stream, &mut b[..], flags), Ok((_, 0)))
}

/// Turns what the server cannot send into Pi's draft with a note: a moved cut that is not valid
/// (checked on the session file), that a branch summary cannot have, or past the last round; an
/// edit that is empty or too large.
fn settle(v: Verdict, req: &ReviewRequest) -> Verdict {
    let keep = |why: String| Verdict::with_note(Decision::Accept, format!("{why}; Pi's draft is used"));
    match &v.decision {
        Decision::MoveCut(_) if req.kind != ReviewKind::Compaction => {
            keep("a branch summary has no cut to move".into())
        }
        Decision::MoveCut(_) if req.round >= MAX_ROUNDS => {
            keep(format!("the cut was moved {} times already", MAX_ROUNDS - 1))
        }
        Decision::MoveCut(id) if req.compaction.as_ref().is_some_and(|c| &c.first_kept_entry_id == id) => {
            Verdict { decision: Decision::Accept, note: v.note }
        }
        Decision::MoveCut(id) => {
            let Some(file) = req.session.file.as_deref() else {
                return keep("the session has no file to check the new cut against".into());
            };
            match check_cut_in_file(Path::new(file), req.session.leaf_id.as_deref(), id) {
                Ok(_) => v,
                Err(CheckError::Invalid(e)) => keep(e.to_string()),
                Err(e) => keep(format!("cannot check the cut at {id}: {e}")),
            }
        }
        Decision::Edit(s) if s.trim().is_empty() => keep("the edited summary is empty".into()),
        Decision::Edit(s) if s.len() + 4096 > MAX_LINE_BYTES => {
            keep(format!("the edited summary is larger than {} bytes", MAX_LINE_BYTES - 4096))
        }
        Decision::Edit(s) if *s == req.draft.summary => Verdict { decision: Decision::Accept, note: v.note },
        _ => v,
    }
}

/// A client for the protocol: connects, reads the greeting. Used by `status`, by tests and by
/// anything that wants to ask a running reviewer.
pub struct Client {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    pub hello: ServerMessage,
}

impl Client {
    pub fn connect(socket: &Path, timeout: Duration) -> std::io::Result<Client> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(timeout))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let line = read_line_limited(&mut reader)?
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before greeting"))?;
        let hello =
            serde_json::from_slice(&line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        Ok(Client { stream, reader, hello })
    }

    pub fn set_timeout(&self, timeout: Duration) -> std::io::Result<()> {
        self.stream.set_read_timeout(Some(timeout))
    }

    /// Sends one raw line (tests send malformed ones).
    pub fn send_raw(&mut self, line: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(line)?;
        self.stream.write_all(b"\n")?;
        self.stream.flush()
    }

    pub fn send(&mut self, req: &ReviewRequest) -> std::io::Result<()> {
        write_message(&mut self.stream, &ClientMessage::Review(req.clone()))
    }

    /// The next message, or `None` at the end of the stream.
    pub fn receive(&mut self) -> std::io::Result<Option<ServerMessage>> {
        match read_line_limited(&mut self.reader)? {
            None => Ok(None),
            Some(line) => serde_json::from_slice(&line)
                .map(Some)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        }
    }

    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }
}
