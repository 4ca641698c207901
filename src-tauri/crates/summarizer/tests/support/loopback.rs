//! A real HTTP/1.1 server on 127.0.0.1 for tests, written on plain tokio sockets.
//! Each connection gets a scripted answer from a handler: bytes, pauses, an abrupt close, or
//! silence. Also used by arbor-cli's tests (included by path).
#![allow(dead_code)]
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

#[derive(Debug, Clone)]
pub enum Step {
    Write(Vec<u8>),
    Sleep(Duration),
    /// Keep the connection open and send nothing more.
    Hang,
    /// Write `chunk` again and again (an endless body).
    Forever(Vec<u8>),
}

#[derive(Debug, Clone, Default)]
pub struct Script(pub Vec<Step>);

impl Script {
    /// A complete response with a body and content-length.
    pub fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Script {
        let mut head =
            format!("HTTP/1.1 {status} {}\r\ncontent-length: {}\r\nconnection: close\r\n", reason(status), body.len());
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        Script(vec![Step::Write(bytes)])
    }
    pub fn json(status: u16, body: &serde_json::Value) -> Script {
        Script::response(status, &[("content-type", "application/json")], &body.to_string())
    }
    /// The head of a close-delimited event stream; add events with `event`/`raw`.
    pub fn sse_head(status: u16) -> Script {
        let head = format!(
            "HTTP/1.1 {status} {}\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            reason(status)
        );
        Script(vec![Step::Write(head.into_bytes())])
    }
    pub fn data(mut self, data: &str) -> Script {
        self.0.push(Step::Write(format!("data: {data}\n\n").into_bytes()));
        self
    }
    pub fn event(mut self, name: &str, data: &str) -> Script {
        self.0.push(Step::Write(format!("event: {name}\ndata: {data}\n\n").into_bytes()));
        self
    }
    pub fn raw(mut self, bytes: &[u8]) -> Script {
        self.0.push(Step::Write(bytes.to_vec()));
        self
    }
    pub fn then(mut self, step: Step) -> Script {
        self.0.push(step);
        self
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

pub type Handler = Arc<dyn Fn(&Recorded, usize) -> Script + Send + Sync>;

pub struct Server {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Starts a server; `handler(request, n)` scripts the answer to the n-th request (0-based).
    pub async fn start(handler: impl Fn(&Recorded, usize) -> Script + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let handler: Handler = Arc::new(handler);
        let reqs = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else { return };
                let handler = handler.clone();
                let reqs = reqs.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, handler, reqs).await;
                });
            }
        });
        Server { addr, requests, task }
    }

    /// Base URL for a wire format's convention (OpenAI-compatible ends in /v1).
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub fn base_v1(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut sock: TcpStream, handler: Handler, reqs: Arc<Mutex<Vec<Recorded>>>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = find(&buf, b"\r\n\r\n") {
            break p;
        }
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())))
        .collect();
    let len: usize = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let rec = Recorded { method, target, headers, body: String::from_utf8_lossy(&body).into_owned() };
    let n = {
        let mut r = reqs.lock().unwrap();
        r.push(rec.clone());
        r.len() - 1
    };
    let script = handler(&rec, n);
    for step in script.0 {
        match step {
            Step::Write(b) => {
                sock.write_all(&b).await?;
                sock.flush().await?;
            }
            Step::Sleep(d) => tokio::time::sleep(d).await,
            Step::Hang => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Step::Forever(chunk) => loop {
                sock.write_all(&chunk).await?;
            },
        }
    }
    sock.shutdown().await?;
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

// ---- Wire-format answers -------------------------------------------------------------------

/// Which wire format a test server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    OpenAi,
    Anthropic,
    Gemini,
}

pub const ALL_FMTS: [Fmt; 3] = [Fmt::OpenAi, Fmt::Anthropic, Fmt::Gemini];

impl Fmt {
    pub fn provider(self) -> &'static str {
        match self {
            Fmt::OpenAi => "openai",
            Fmt::Anthropic => "anthropic",
            Fmt::Gemini => "gemini",
        }
    }
}

/// A successful answer in the format; streaming when the request asked for it.
pub fn ok_answer(fmt: Fmt, rec: &Recorded, text: &str) -> Script {
    let streaming = rec.json()["stream"].as_bool() == Some(true) || rec.target.contains("streamGenerateContent");
    ok_answer_as(fmt, streaming, text, "stop")
}

/// An answer with a given stop reason (in the format's own words: "stop"/"length",
/// "end_turn"/"max_tokens", "STOP"/"MAX_TOKENS"/"SAFETY").
pub fn ok_answer_as(fmt: Fmt, streaming: bool, text: &str, stop: &str) -> Script {
    use serde_json::json;
    let (a, b) = split_half(text);
    match (fmt, streaming) {
        (Fmt::OpenAi, true) => Script::sse_head(200)
            .data(&json!({"choices":[{"index":0,"delta":{"role":"assistant","content":a},"finish_reason":null}]}).to_string())
            .data(&json!({"choices":[{"index":0,"delta":{"content":b},"finish_reason":null}]}).to_string())
            .data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":stop}]}).to_string())
            .data(&json!({"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":7}}).to_string())
            .data("[DONE]"),
        (Fmt::OpenAi, false) => Script::json(
            200,
            &json!({"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":text},"finish_reason":stop}],"usage":{"prompt_tokens":120,"completion_tokens":7}}),
        ),
        (Fmt::Anthropic, true) => Script::sse_head(200)
            .event("message_start", &json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":120,"output_tokens":1}}}).to_string())
            .event("content_block_start", &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}).to_string())
            .event("ping", &json!({"type":"ping"}).to_string())
            .event("content_block_delta", &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":a}}).to_string())
            .event("content_block_delta", &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":b}}).to_string())
            .event("content_block_stop", &json!({"type":"content_block_stop","index":0}).to_string())
            .event("message_delta", &json!({"type":"message_delta","delta":{"stop_reason":anthropic_stop(stop)},"usage":{"output_tokens":7}}).to_string())
            .event("message_stop", &json!({"type":"message_stop"}).to_string()),
        (Fmt::Anthropic, false) => Script::json(
            200,
            &json!({"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":text}],"stop_reason":anthropic_stop(stop),"usage":{"input_tokens":120,"output_tokens":7}}),
        ),
        (Fmt::Gemini, true) => Script::sse_head(200)
            .data(&json!({"candidates":[{"content":{"role":"model","parts":[{"text":a}]}}]}).to_string())
            .data(&json!({"candidates":[{"content":{"role":"model","parts":[{"text":b}]},"finishReason":gemini_stop(stop)}],"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":7}}).to_string()),
        (Fmt::Gemini, false) => Script::json(
            200,
            &json!({"candidates":[{"content":{"role":"model","parts":[{"text":text}]},"finishReason":gemini_stop(stop)}],"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":7}}),
        ),
    }
}

fn anthropic_stop(stop: &str) -> &str {
    match stop {
        "stop" => "end_turn",
        "length" => "max_tokens",
        other => other,
    }
}

fn gemini_stop(stop: &str) -> String {
    match stop {
        "stop" => "STOP".into(),
        "length" => "MAX_TOKENS".into(),
        other => other.to_ascii_uppercase(),
    }
}

fn split_half(text: &str) -> (String, String) {
    let mid = text.char_indices().nth(text.chars().count() / 2).map(|(i, _)| i).unwrap_or(text.len());
    (text[..mid].to_string(), text[mid..].to_string())
}

/// The prompt text a request carries, whatever the format.
pub fn prompt_of(fmt: Fmt, rec: &Recorded) -> String {
    let v = rec.json();
    match fmt {
        Fmt::OpenAi => v["messages"][1]["content"].as_str().unwrap_or("").to_string(),
        Fmt::Anthropic => v["messages"][0]["content"][0]["text"].as_str().unwrap_or("").to_string(),
        Fmt::Gemini => v["contents"][0]["parts"][0]["text"].as_str().unwrap_or("").to_string(),
    }
}

/// The output limit a request asked for.
pub fn max_tokens_of(fmt: Fmt, rec: &Recorded) -> u64 {
    let v = rec.json();
    match fmt {
        Fmt::OpenAi | Fmt::Anthropic => v["max_tokens"].as_u64().unwrap_or(0),
        Fmt::Gemini => v["generationConfig"]["maxOutputTokens"].as_u64().unwrap_or(0),
    }
}
