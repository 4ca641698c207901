//! A test corpus: one planted secret of each common kind, each in the line a session would show
//! it in, and look-alikes that must stay. The keys are made here from a fixed seed, so no key
//! (real or fake) is written in the repository and every test that builds a session with them
//! (export, search, the CLI, the app) plants the same ones.

/// A planted secret: the kind [`crate::find`] must report, the secret itself, and the line that
/// holds it (`line` contains `secret` exactly once).
#[derive(Clone, Debug)]
pub struct Planted {
    pub kind: &'static str,
    pub secret: String,
    pub line: String,
}

const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &[u8] = b"0123456789abcdef";
const DIGITS: &[u8] = b"0123456789";

/// xorshift64*: the same characters on every run and platform.
struct Rng(u64);

impl Rng {
    fn pick(&mut self, set: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                set[(self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % set.len()] as char
            })
            .collect()
    }
}

fn planted(kind: &'static str, secret: String, line: impl Fn(&str) -> String) -> Planted {
    let line = line(&secret);
    Planted { kind, secret, line }
}

/// One secret of each kind, in its usual setting: `.env` lines, shell exports, headers, JSON,
/// URLs, a PEM block.
pub fn planted_secrets() -> Vec<Planted> {
    let mut r = Rng(0x5EC2_E7A2_B0A1_7CE5);
    let pem_body: Vec<String> = (0..6).map(|_| r.pick(B64, 64)).collect();
    vec![
        planted("aws-access-key", format!("AKIA{}", r.pick(B32, 16)), |s| format!("aws_access_key_id = {s}")),
        planted(
            "openai-api-key",
            format!("sk-proj-{}T3BlbkFJ{}", r.pick(URLSAFE, 74), r.pick(URLSAFE, 74)),
            |s| format!("export OPENAI_API_KEY={s}"),
        ),
        planted("anthropic-api-key", format!("sk-ant-api03-{}AA", r.pick(URLSAFE, 93)), |s| {
            format!("curl https://api.anthropic.com/v1/messages -H \"x-api-key: {s}\" -d @body.json")
        }),
        planted("sk-api-key", format!("sk-{}", r.pick(HEX, 32)), |s| format!("DEEPSEEK_API_KEY=\"{s}\"")),
        planted("github-token", format!("ghp_{}", r.pick(ALNUM, 36)), |s| {
            format!("git clone https://x-access-token:{s}@github.com/acme/app.git")
        }),
        planted("github-fine-grained-token", format!("github_pat_{}_{}", r.pick(ALNUM, 22), r.pick(ALNUM, 59)), |s| {
            format!("GH_TOKEN={s} gh pr list")
        }),
        planted("gitlab-token", format!("glpat-{}", r.pick(URLSAFE, 20)), |s| format!("my token is {s}.")),
        planted(
            "slack-token",
            format!("xoxb-{}-{}-{}", r.pick(DIGITS, 12), r.pick(DIGITS, 13), r.pick(ALNUM, 24)),
            |s| format!("{{\"slack\": {{\"botToken\": \"{s}\"}}}}"),
        ),
        planted(
            "slack-webhook",
            format!("https://hooks.slack.com/services/T{}/B{}/{}", r.pick(UPPER, 8), r.pick(UPPER, 8), r.pick(ALNUM, 24)),
            |s| format!("SLACK_WEBHOOK_URL={s}"),
        ),
        planted("google-api-key", format!("AIza{}", r.pick(URLSAFE, 35)), |s| {
            format!("const gemini = new GoogleGenAI({{ apiKey: \"{s}\" }});")
        }),
        planted("stripe-key", format!("sk_live_{}", r.pick(ALNUM, 24)), |s| format!("Stripe::setApiKey('{s}');")),
        planted(
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.{}",
                r.pick(URLSAFE, 43)
            ),
            |s| format!("Set-Cookie: session={s}; HttpOnly"),
        ),
        planted(
            "private-key",
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----", pem_body.join("\n")),
            |s| format!("$ cat ~/.ssh/id_ed25519\n{s}\n"),
        ),
        planted("secret-assignment", format!("{}{}", r.pick(ALNUM, 20), r.pick(b"!#%&*+-=?^_~", 4)), |s| {
            format!("DB_PASSWORD={s}")
        }),
        planted("url-password", r.pick(ALNUM, 18), |s| format!("DATABASE_URL=postgres://app:{s}@db.internal:5432/app")),
        planted("bearer-token", r.pick(URLSAFE, 40), |s| {
            format!("curl -H 'Authorization: Bearer {s}' https://api.internal/v1/me")
        }),
        planted("groq-api-key", format!("gsk_{}", r.pick(ALNUM, 52)), |s| format!("GROQ_API_KEY={s}")),
        planted("huggingface-token", format!("hf_{}", r.pick(ALNUM, 34)), |s| format!("huggingface-cli login --token {s}")),
        planted("npm-token", format!("npm_{}", r.pick(ALNUM, 36)), |s| {
            format!("//registry.npmjs.org/:_authToken={s}")
        }),
    ]
}

/// Text that looks like secrets but is not: hashes, UUIDs, base64 data, ordinary hex, lockfile
/// integrity, low-entropy or indirect `KEY=value` lines, documentation examples, words. `find`
/// must find nothing in any of them.
pub fn look_alikes() -> Vec<String> {
    let mut r = Rng(0x10C4_A11C_E5AF_E001);
    vec![
        "commit 3f9c2e1d4b5a69788f0e1d2c3b4a59687f0e1d2c (HEAD -> main, origin/main)".into(),
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".into(),
        format!("git rev-parse HEAD\n{}", r.pick(HEX, 40)),
        "id: 550e8400-e29b-41d4-a716-446655440000".into(),
        format!(
            "requestId={}-{}-4{}-a{}-{}",
            r.pick(HEX, 8),
            r.pick(HEX, 4),
            r.pick(HEX, 3),
            r.pick(HEX, 3),
            r.pick(HEX, 12)
        ),
        format!("<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{}==\">", r.pick(B64, 3000)),
        format!("iVBORw0KGgoAAAANSUhEUgAA{}", r.pick(B64, 4000)),
        format!("\"integrity\": \"sha512-{}==\",", r.pick(B64, 86)),
        format!("checksum = \"{}\"", r.pick(HEX, 64)),
        format!("\"resolved\": \"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz#{}\"", r.pick(HEX, 40)),
        "0xdeadbeefcafebabe 0x7fffffff color: #ff8800".into(),
        "DEBUG=true\nPORT=8080\nNODE_ENV=production\nLOG_LEVEL=info\nWORKERS=4".into(),
        "API_KEY=${OPENAI_API_KEY}\nexport TOKEN=$GITHUB_TOKEN".into(),
        "const token = process.env.GITHUB_TOKEN;\nconst apiKey: string = config.openai.apiKey;".into(),
        "maxTokens: 4096\n\"totalTokens\": 123456\ncontextTokens = 200000".into(),
        "PASSWORD=changeme\npassword: hunter2\nSECRET_KEY=your-secret-key-here".into(),
        "key_file: ~/.ssh/id_ed25519\ntoken_url: https://oauth2.googleapis.com/token".into(),
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE".into(),
        "pip install scikit-learn; the task-management-for-the-risk-assessment page".into(),
        "tokenizer: cl100k_base, keyboard: qwertyuiop".into(),
        "[redacted: aws-access-key] and TOKEN=[redacted: github-token]".into(),
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----".into(),
        "https://user:pass@localhost:8080/ and postgres://postgres:postgres@localhost/db".into(),
    ]
}

/// [`planted_session`] with a branch taken from its first entry (a user message `b0000001`, now
/// the leaf): every planted secret is on a branch that was left, so it can be brought back.
pub fn planted_session_left_behind() -> (String, Vec<Placed>) {
    let (text, placed) = planted_session();
    let branch = r#"{"type":"message","id":"b0000001","parentId":"00000001","timestamp":"2025-03-01T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"let us try another way"}],"timestamp":1740823200000}}"#;
    (format!("{}\n{branch}\n", text.trim_end()), placed)
}

/// Where a planted secret sits in [`planted_session`]: its entry, the string's path in the
/// entry's JSON and the secret's span in that string in UTF-16 code units.
#[derive(Clone, Debug)]
pub struct Placed {
    pub planted: Planted,
    pub entry_id: String,
    pub field: String,
    pub start: usize,
    pub end: usize,
}

/// A Pi session (version 3 JSONL) with every planted secret in a user message, a tool result or
/// a tool call's arguments (in turn), the look-alikes in a user message, a tool result and a
/// tool call, and an image whose base64 data must stay. Returns the file's text and where each
/// secret is.
pub fn planted_session() -> (String, Vec<Placed>) {
    let mut lines = vec![
        r#"{"type":"session","version":3,"id":"5ec2e7a2-0000-4000-8000-00000000a7b0","timestamp":"2025-03-01T09:00:00.000Z","cwd":"/home/dev/project"}"#.to_string(),
    ];
    let mut placed = Vec::new();
    let mut parent: Option<String> = None;
    let mut n = 0;
    let mut push = |lines: &mut Vec<String>, message: String| -> String {
        n += 1;
        let id = format!("{n:08x}");
        let parent_json = parent.as_ref().map(|p| format!("\"{p}\"")).unwrap_or_else(|| "null".into());
        lines.push(format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent_json},"timestamp":"2025-03-01T09:{:02}:00.000Z","message":{message}}}"#,
            n % 60
        ));
        parent = Some(id.clone());
        id
    };
    let user = |text: &str| {
        format!(r#"{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":1740819600000}}"#, js(text))
    };
    let call = |id: &str, command: &str| {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"{id}","name":"bash","arguments":{{"command":{}}}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"toolUse","timestamp":1740819600000}}"#,
            js(command)
        )
    };
    let result = |id: &str, text: &str| {
        format!(
            r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"bash","content":[{{"type":"text","text":{}}}],"isError":false,"timestamp":1740819600000}}"#,
            js(text)
        )
    };
    for (i, p) in planted_secrets().into_iter().enumerate() {
        let call_id = format!("call_{i}");
        let (text, field, entry) = match i % 3 {
            0 => {
                let t = p.line.clone();
                let e = push(&mut lines, user(&t));
                (t, "message.content[0].text", e)
            }
            1 => {
                push(&mut lines, call(&call_id, "cat .env"));
                let t = format!("output:\n{}", p.line);
                let e = push(&mut lines, result(&call_id, &t));
                (t, "message.content[0].text", e)
            }
            _ => {
                let t = p.line.clone();
                let e = push(&mut lines, call(&call_id, &t));
                push(&mut lines, result(&call_id, "ok"));
                (t, "message.content[0].arguments.command", e)
            }
        };
        let at = text.find(&p.secret).expect("the line holds its secret");
        let start = text[..at].encode_utf16().count();
        let end = start + p.secret.encode_utf16().count();
        placed.push(Placed { planted: p, entry_id: entry, field: field.into(), start, end });
    }
    let looks = look_alikes().join("\n");
    push(&mut lines, user(&looks));
    push(&mut lines, call("call_look", &looks));
    push(&mut lines, result("call_look", &looks));
    let image = format!("iVBORw0KGgoAAAANSUhEUgAA{}", Rng(7).pick(B64, 2000));
    push(
        &mut lines,
        format!(
            r#"{{"role":"user","content":[{{"type":"text","text":"a screenshot"}},{{"type":"image","data":"{image}","mimeType":"image/png"}}],"timestamp":1740819600000}}"#
        ),
    );
    (lines.join("\n") + "\n", placed)
}

/// A JSON string literal, as `JSON.stringify` writes it.
fn js(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
