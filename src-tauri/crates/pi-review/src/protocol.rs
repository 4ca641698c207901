//! The review protocol, version 1 (docs/PI-REVIEW-PROTOCOL.md): newline-delimited JSON over a
//! Unix socket. The server greets (`hello`), the extension sends one `review` per round, the
//! server answers each with an `answer` (or an `error`, after which it closes).
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// The protocol this crate speaks; a request with another version is refused.
pub const PROTOCOL_VERSION: u32 = 1;
/// The longest line either side may send, newline excluded.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// A first review plus at most two moved cuts.
pub const MAX_ROUNDS: u32 = 3;

/// What the server sends first on every connection it accepts.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// Always `"review"`: tells a client it reached Arbor.
    pub arbor: String,
    pub protocol: u32,
    /// Who answers, e.g. `arbor-cli 0.1.0`.
    pub server: String,
    pub policy: Policy,
    /// The server's review time limit; the extension waits this plus a grace period.
    pub timeout_ms: u64,
    pub max_line_bytes: usize,
}

/// *review*: wait for a decision up to the time limit; *watch*: accept at once and only record.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Review,
    Watch,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Review => "review",
            Policy::Watch => "watch",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReviewKind {
    Compaction,
    BranchSummary,
}

impl ReviewKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewKind::Compaction => "compaction",
            ReviewKind::BranchSummary => "branch_summary",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Versioned {
    #[serde(default)]
    pub version: Option<String>,
}

/// The session Pi is working in; any field is `null` for a session without a file.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// Pi's leaf: the last entry of the branch being compacted.
    #[serde(default)]
    pub leaf_id: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ModelRef {
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
}

/// What Pi's preparation says, without the messages (Arbor reads them from the session file).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CompactionFacts {
    pub first_kept_entry_id: String,
    /// The cut of the previous round when this round's cut was moved by the reviewer.
    #[serde(default)]
    pub moved_from: Option<String>,
    #[serde(default)]
    pub tokens_before: Option<f64>,
    #[serde(default)]
    pub is_split_turn: bool,
    #[serde(default)]
    pub messages_to_summarize: u64,
    #[serde(default)]
    pub turn_prefix_messages: u64,
    #[serde(default)]
    pub branch_entries: u64,
    #[serde(default)]
    pub has_previous_summary: bool,
    #[serde(default)]
    pub custom_instructions: Option<String>,
    #[serde(default)]
    pub settings: Option<serde_json::Value>,
}

/// What Pi's tree preparation says.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BranchFacts {
    pub target_id: String,
    #[serde(default)]
    pub old_leaf_id: Option<String>,
    #[serde(default)]
    pub common_ancestor_id: Option<String>,
    #[serde(default)]
    pub entries_to_summarize: u64,
    #[serde(default)]
    pub custom_instructions: Option<String>,
    #[serde(default)]
    pub replace_instructions: bool,
    #[serde(default)]
    pub label: Option<String>,
}

/// Pi's draft, made with Pi's `compact()` or `generateBranchSummary()`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Draft {
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_entry_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// One review request: a line `{"type":"review", …}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewRequest {
    pub protocol: u32,
    pub request_id: String,
    pub round: u32,
    pub kind: ReviewKind,
    #[serde(default)]
    pub extension: Versioned,
    #[serde(default)]
    pub pi: Versioned,
    #[serde(default)]
    pub session: SessionRef,
    #[serde(default)]
    pub model: ModelRef,
    /// How long the extension waits for this answer.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionFacts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<BranchFacts>,
    pub draft: Draft,
}

/// The decision on the wire.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DecisionTag {
    Accept,
    Edit,
    MoveCut,
    Cancel,
    PiDecides,
}

/// The server's answer to one round.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub protocol: u32,
    pub request_id: String,
    pub round: u32,
    pub decision: DecisionTag,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_entry_id: Option<String>,
    /// One line for the person (shown by Pi): why Pi's draft was kept, and the like.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Why a connection or a request was refused.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The client runs as another user id than the server.
    PeerRefused,
    /// The request speaks another protocol version.
    ProtocolVersion,
    /// A line longer than [`MAX_LINE_BYTES`].
    TooLarge,
    /// Not JSON, not an object, or fields missing or of the wrong type.
    BadRequest,
    /// The server is stopping.
    ShuttingDown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ErrorAnswer {
    pub protocol: u32,
    pub code: ErrorCode,
    pub message: String,
}

/// Every line the server sends.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Hello(Hello),
    Answer(Answer),
    Error(ErrorAnswer),
}

/// Every line a client sends.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    Review(ReviewRequest),
}

/// A line that could not be read as a request, with the error to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub code: ErrorCode,
    pub message: String,
}

impl Refusal {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Refusal { code, message: message.into() }
    }
    pub fn to_message(&self) -> ServerMessage {
        ServerMessage::Error(ErrorAnswer { protocol: PROTOCOL_VERSION, code: self.code, message: self.message.clone() })
    }
}

/// Reads a request line: the protocol version first (so another version gets a clear answer,
/// whatever else changed), then the fields, then their consistency.
pub fn parse_request(line: &[u8]) -> Result<ReviewRequest, Refusal> {
    let v: serde_json::Value = serde_json::from_slice(line)
        .map_err(|e| Refusal::new(ErrorCode::BadRequest, format!("the request is not JSON ({e})")))?;
    let obj = v.as_object().ok_or_else(|| Refusal::new(ErrorCode::BadRequest, "the request is not a JSON object"))?;
    match obj.get("protocol") {
        Some(p) if p.as_u64() == Some(PROTOCOL_VERSION as u64) => {}
        Some(p) => {
            return Err(Refusal::new(
                ErrorCode::ProtocolVersion,
                format!("this Arbor speaks review protocol {PROTOCOL_VERSION} and the client speaks {p}; install the extension of this Arbor with `arbor-cli pi install-extension`"),
            ))
        }
        None => return Err(Refusal::new(ErrorCode::BadRequest, "the request has no protocol version")),
    }
    if obj.get("type").and_then(|t| t.as_str()) != Some("review") {
        return Err(Refusal::new(ErrorCode::BadRequest, "the request's type is not \"review\""));
    }
    let ClientMessage::Review(req) = serde_json::from_value::<ClientMessage>(v)
        .map_err(|e| Refusal::new(ErrorCode::BadRequest, format!("the request is malformed ({e})")))?;
    check_request(&req)?;
    Ok(req)
}

/// The consistency a well-formed request must have.
pub fn check_request(req: &ReviewRequest) -> Result<(), Refusal> {
    let bad = |m: &str| Err(Refusal::new(ErrorCode::BadRequest, m.to_string()));
    if req.request_id.is_empty() || req.request_id.len() > 200 {
        return bad("requestId must be 1 to 200 characters");
    }
    if req.round == 0 || req.round > MAX_ROUNDS {
        return bad("round must be 1 to 3");
    }
    match req.kind {
        ReviewKind::Compaction => {
            let Some(c) = &req.compaction else { return bad("a compaction request needs its `compaction` facts") };
            if c.first_kept_entry_id.is_empty() {
                return bad("compaction.firstKeptEntryId is empty");
            }
            if req.draft.first_kept_entry_id.as_deref().is_some_and(|d| d != c.first_kept_entry_id) {
                return bad("the draft's firstKeptEntryId differs from the preparation's");
            }
            if req.branch.is_some() {
                return bad("a compaction request carries no `branch` facts");
            }
        }
        ReviewKind::BranchSummary => {
            if req.branch.is_none() {
                return bad("a branch-summary request needs its `branch` facts");
            }
            if req.compaction.is_some() {
                return bad("a branch-summary request carries no `compaction` facts");
            }
            if req.round != 1 {
                return bad("a branch summary has one round");
            }
        }
    }
    Ok(())
}

/// One line of at most [`MAX_LINE_BYTES`] (newline excluded), or `Ok(None)` at the end of the
/// stream. A longer line is an error of kind `InvalidData`; a line cut by the end of the stream
/// is returned as it is.
pub fn read_line_limited(r: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if buf.is_empty() { None } else { Some(buf) });
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if buf.len() + i > MAX_LINE_BYTES {
                    return Err(too_long());
                }
                buf.extend_from_slice(&available[..i]);
                r.consume(i + 1);
                return Ok(Some(buf));
            }
            None => {
                let n = available.len();
                if buf.len() + n > MAX_LINE_BYTES {
                    return Err(too_long());
                }
                buf.extend_from_slice(available);
                r.consume(n);
            }
        }
    }
}

fn too_long() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a line longer than {MAX_LINE_BYTES} bytes"))
}

/// Writes one message as one line; refuses (without writing) a line over the limit.
pub fn write_message<T: Serialize>(w: &mut impl Write, message: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    if line.len() > MAX_LINE_BYTES {
        return Err(too_long());
    }
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req_json(extra: &str) -> String {
        format!(
            r#"{{"type":"review","protocol":1,"requestId":"r1","round":1,"kind":"compaction","session":{{"file":"/x.jsonl","leafId":"a"}},"compaction":{{"firstKeptEntryId":"k1","tokensBefore":120}},"draft":{{"summary":"S","firstKeptEntryId":"k1","tokensBefore":120,"details":{{"readFiles":[]}}}}{extra}}}"#
        )
    }

    #[test]
    fn parses_a_request_and_ignores_unknown_fields() {
        let r = parse_request(req_json(r#","future":true"#).as_bytes()).unwrap();
        assert_eq!(r.kind, ReviewKind::Compaction);
        assert_eq!(r.compaction.unwrap().first_kept_entry_id, "k1");
        assert_eq!(r.draft.summary, "S");
    }

    #[test]
    fn another_version_is_refused_by_name() {
        let e = parse_request(br#"{"type":"review","protocol":2}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::ProtocolVersion);
        assert!(e.message.contains("protocol 1") && e.message.contains("speaks 2"), "{}", e.message);
    }

    #[test]
    fn malformed_requests_are_refused() {
        for bad in [
            &b"not json"[..],
            b"[1]",
            br#"{"type":"review"}"#,
            br#"{"type":"hello","protocol":1}"#,
            br#"{"type":"review","protocol":1,"requestId":"r"}"#,
        ] {
            assert_eq!(parse_request(bad).unwrap_err().code, ErrorCode::BadRequest, "{}", String::from_utf8_lossy(bad));
        }
        let mismatch = req_json("")
            .replace(r#""summary":"S","firstKeptEntryId":"k1""#, r#""summary":"S","firstKeptEntryId":"k2""#);
        assert_eq!(parse_request(mismatch.as_bytes()).unwrap_err().code, ErrorCode::BadRequest);
    }

    #[test]
    fn server_messages_have_their_type_tag() {
        let hello = ServerMessage::Hello(Hello {
            arbor: "review".into(),
            protocol: 1,
            server: "t".into(),
            policy: Policy::Watch,
            timeout_ms: 5,
            max_line_bytes: MAX_LINE_BYTES,
        });
        let s = serde_json::to_string(&hello).unwrap();
        assert!(s.starts_with(r#"{"type":"hello","arbor":"review","protocol":1"#), "{s}");
        assert!(s.contains(r#""policy":"watch","timeoutMs":5"#), "{s}");
        let a = ServerMessage::Answer(Answer {
            protocol: 1,
            request_id: "r".into(),
            round: 1,
            decision: DecisionTag::MoveCut,
            summary: None,
            first_kept_entry_id: Some("k".into()),
            note: None,
        });
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"type":"answer","protocol":1,"requestId":"r","round":1,"decision":"move_cut","firstKeptEntryId":"k"}"#
        );
    }

    #[test]
    fn lines_are_limited() {
        let mut ok = std::io::Cursor::new(b"ab\ncd".to_vec());
        assert_eq!(read_line_limited(&mut ok).unwrap().unwrap(), b"ab");
        assert_eq!(read_line_limited(&mut ok).unwrap().unwrap(), b"cd");
        assert!(read_line_limited(&mut ok).unwrap().is_none());
        let mut big = std::io::BufReader::new(std::io::Cursor::new(vec![b'x'; MAX_LINE_BYTES + 1]));
        assert_eq!(read_line_limited(&mut big).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        let mut exact =
            std::io::BufReader::new(std::io::Cursor::new([vec![b'x'; MAX_LINE_BYTES], b"\n".to_vec()].concat()));
        assert_eq!(read_line_limited(&mut exact).unwrap().unwrap().len(), MAX_LINE_BYTES);
    }
}
