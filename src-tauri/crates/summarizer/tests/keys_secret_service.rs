//! Keys against a real Secret Service (gnome-keyring under dbus-run-session). Run with
//!   scripts/with-secret-service.sh cargo test -p summarizer --test keys_secret_service
//! Entry names are test-only (`arbor-test-*`), so a developer's real keys are never touched.
mod support;
use std::time::Duration;
use summarizer::keys::{self, KeySource};
use summarizer::{CancellationToken, Client, CompletionRequest, ProviderConfig, Wire};
use support::loopback::{ok_answer, Fmt, Server};

const CANARY: &str = "sk-ant-canary-AAAA1111BBBB2222CCCC";

/// The Secret Service needs a D-Bus session; `scripts/test.sh` runs the tests inside one. Without
/// it the test cannot run here, and says what to do instead of passing.
fn require_bus() {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        panic!(
            "keys_secret_service needs a D-Bus session with a Secret Service, and there is none. Run it as \
             `scripts/with-secret-service.sh cargo test -p summarizer --test keys_secret_service` \
             (scripts/setup.sh installs dbus, gnome-keyring and libsecret-tools), or run scripts/test.sh."
        );
    }
}

/// One test function: the keyring is process-wide state, and the steps depend on each other.
#[tokio::test]
async fn keys_round_trip_through_the_real_secret_service() {
    require_bus();
    // F52: the self-test names the backend and passes.
    let st = keys::self_test();
    assert!(st.ok, "self-test failed: {}", st.message);
    assert_eq!(st.backend, "secret-service", "{st:?}");

    let p = "arbor-test-anthropic";
    let _ = keys::delete_key(p);
    assert!(!keys::has_key(p).unwrap());
    keys::set_key(p, CANARY).unwrap();
    assert!(keys::has_key(p).unwrap());

    // The stored key is visible to other Secret Service clients (it really is in the keyring).
    let out =
        std::process::Command::new("secret-tool").args(["lookup", "service", keys::SERVICE, "username", p]).output();
    match out {
        Ok(out) => {
            assert!(out.status.success(), "secret-tool could not find the key Arbor stored");
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), CANARY);
        }
        Err(e) => {
            panic!("cannot run secret-tool ({e}): scripts/setup.sh installs it (apt-get install libsecret-tools)")
        }
    }

    // Keyring first, even when the environment has another key.
    let look = keys::lookup_key_named(p, "ANTHROPIC_API_KEY", |_| Some("env-key-should-not-win".into()));
    assert_eq!(look.source, Some(KeySource::Keyring));
    assert!(!format!("{look:?}").contains(CANARY), "Debug of a lookup shows the key");

    // The keyring key reaches the request header, and only the header.
    let server = Server::start(|r, _| ok_answer(Fmt::Anthropic, r, "summary")).await;
    let mut cfg = ProviderConfig::new(Wire::Anthropic, "claude-test", look.key);
    cfg.base_url = server.base();
    cfg.timeouts.read_idle = Duration::from_secs(5);
    let c = Client::new(cfg).unwrap();
    let got = c
        .complete(
            &CompletionRequest { system: "s".into(), prompt: "p".into(), max_tokens: 10, ..Default::default() },
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(got.text, "summary");
    let rec = &server.requests()[0];
    assert_eq!(rec.header("x-api-key"), Some(CANARY));
    assert!(!rec.target.contains(CANARY) && !rec.body.contains(CANARY));

    // Replace, then delete.
    keys::set_key(p, "sk-ant-second-key-value").unwrap();
    assert!(keys::has_key(p).unwrap());
    assert!(keys::delete_key(p).unwrap());
    assert!(!keys::has_key(p).unwrap());
    assert!(!keys::delete_key(p).unwrap(), "deleting twice reports that nothing was there");

    // Without a keyring key the environment is used.
    let look =
        keys::lookup_key_named(p, "ANTHROPIC_API_KEY", |v| (v == "ANTHROPIC_API_KEY").then(|| "sk-from-env".into()));
    assert_eq!(look.source, Some(KeySource::Env("ANTHROPIC_API_KEY")));
    let look = keys::lookup_key_named(p, "ANTHROPIC_API_KEY", |_| None);
    assert!(look.key.is_none() && look.source.is_none());

    // F51: invalid keys are refused before anything is stored, without echoing them.
    for bad in ["sk-line1\nline2", "sk-\u{1b}[31m", &"k".repeat(2561), ""] {
        let e = keys::set_key(p, bad).unwrap_err().to_string();
        assert!(bad.len() < 8 || !e.contains(&bad[..8]), "{e}");
        assert!(!keys::has_key(p).unwrap(), "an invalid key was stored");
    }
    // Bad provider ids are refused.
    assert!(keys::set_key("../../etc", "sk-x").is_err());
}
