//! F52: a build or process where keyring falls back to its in-memory mock store is caught by
//! the self-test, and Arbor refuses to "store" keys that would vanish on exit.
use summarizer::keys;

#[test]
fn mock_store_is_detected_and_refused() {
    keyring::set_default_credential_builder(keyring::mock::default_credential_builder());
    let st = keys::self_test();
    assert!(!st.ok);
    assert_eq!(st.backend, "mock");
    assert!(st.message.contains("no keyring backend"), "{}", st.message);
    let e = keys::set_key("arbor-test-openai", "sk-would-be-lost").unwrap_err().to_string();
    assert!(e.contains("mock"), "{e}");
    assert!(!e.contains("sk-would-be-lost"));
    // The lookup falls back to the environment and says why.
    let look = keys::lookup_key_named("arbor-test-openai", "OPENAI_API_KEY", |_| Some("sk-env-value".into()));
    assert!(look.key.is_some());
    assert!(look.keyring_problem.unwrap().contains("mock"));
}
