//! A loopback OpenAI-compatible provider for the summarizer and composer tests (and the send
//! benchmark): it streams the answers a test gives it and records every request.

use super::Env;
use arbor_app::commands::keys;
use arbor_app::view::budgets::{BudgetArgs, Budgets};
use arbor_app::view::keys::{CatalogModel, ModelChoice};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Pi's budgets with a keep-recent budget of 2000 tokens, against a `window`-token context.
pub fn budgets(window: u32) -> BudgetArgs {
    BudgetArgs {
        budgets: Budgets {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 2000,
            branch_reserve_tokens: 16384,
        },
        context_window: window,
    }
}

/// Runs an async command body to its end.
pub fn block<F: std::future::Future>(f: F) -> F::Output {
    tauri::async_runtime::block_on(f)
}

/// A tiny OpenAI-compatible server: streams `answer(n, body)` as SSE (n = request number), or
/// stalls forever when the answer is None. Records each request's body and auth header.
pub struct Fake {
    pub base: String,
    pub reqs: Arc<Mutex<Vec<(String, String)>>>,
    /// The provider's time of each request: from its body being read to the answer written.
    pub served: Arc<Mutex<Vec<Duration>>>,
}

pub enum Reply {
    /// Streamed text with this prompt-token usage.
    Sse(String, u64),
    /// One chunk, then silence.
    Stall,
    /// A whole raw HTTP response.
    Raw(String),
}

pub type Answer = dyn Fn(usize, &str) -> Reply + Send + Sync;

pub fn fake(answer: impl Fn(usize, &str) -> Reply + Send + Sync + 'static) -> Fake {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", l.local_addr().unwrap());
    let reqs = Arc::new(Mutex::new(Vec::new()));
    let served = Arc::new(Mutex::new(Vec::new()));
    let (r2, s2) = (reqs.clone(), served.clone());
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for sock in l.incoming().flatten() {
            let (reqs, served) = (r2.clone(), s2.clone());
            let answer = answer.clone();
            std::thread::spawn(move || serve(sock, &reqs, &served, &*answer));
        }
    });
    Fake { base, reqs, served }
}

fn serve(sock: TcpStream, reqs: &Mutex<Vec<(String, String)>>, served: &Mutex<Vec<Duration>>, answer: &Answer) {
    let mut r = BufReader::new(sock.try_clone().unwrap());
    let (mut len, mut auth) = (0usize, String::new());
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("authorization:") {
            auth = h["authorization:".len()..].trim().to_string();
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    let body = String::from_utf8_lossy(&body).to_string();
    let t0 = Instant::now();
    let n = {
        let mut g = reqs.lock().unwrap();
        g.push((body.clone(), auth));
        g.len()
    };
    let mut w = sock;
    match answer(n, &body) {
        Reply::Raw(r) => {
            let _ = w.write_all(r.as_bytes());
        }
        Reply::Stall => {
            let _ = w.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n");
            let _ = w.write_all(
                format!(
                    "data: {}\n\n",
                    serde_json::json!({"choices":[{"index":0,"delta":{"content":"thinking slowly"}}]})
                )
                .as_bytes(),
            );
            std::thread::sleep(Duration::from_secs(20));
        }
        Reply::Sse(text, prompt_tokens) => {
            let mut out =
                String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
            for d in [
                serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant","content":text},"finish_reason":null}]}),
                serde_json::json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
                serde_json::json!({"choices":[],"usage":{"prompt_tokens":prompt_tokens,"completion_tokens":9}}),
            ] {
                out.push_str(&format!("data: {d}\n\n"));
            }
            out.push_str("data: [DONE]\n\n");
            let _ = w.write_all(out.as_bytes());
        }
    }
    served.lock().unwrap().push(t0.elapsed());
}

/// Makes `fake-small` of the fake provider at `base` (with a `window`-token context) the model
/// of `e`'s summarizer.
pub fn use_fake(e: &Env, base: &str, window: u32) {
    keys::add_model(
        &e.st,
        &CatalogModel {
            provider: "openai".into(),
            id: "fake-small".into(),
            context_window: window,
            max_output: 2000,
            user_added: true,
        },
    )
    .unwrap();
    let c = keys::save_choice(
        &e.st,
        &ModelChoice { provider: "openai".into(), model: Some("fake-small".into()), base_url: Some(base.into()) },
    )
    .unwrap();
    assert_eq!(c.context_window, Some(window), "the catalog's window is reported for the threshold");
}
