//! API keys in the OS keyring (Secret Service on Linux, Keychain on macOS, Credential Manager
//! on Windows), faults F50–F53.
//!
//! Architecture Invariant: there is no public function that returns a key's text. The UI can
//! `set_key`, `delete_key` and `has_key`; requests get an opaque `ApiKey` from `lookup_key`,
//! whose text only this crate can read. There is no plaintext fallback: when no keyring works,
//! `self_test` says so and the only other source is the environment (for the CLI).
use crate::error::{Error, Result};
use crate::provider::Wire;
use crate::secret::ApiKey;

/// The keyring "service" under which Arbor stores its keys; the "user" is the provider id.
pub const SERVICE: &str = "arbor";
/// Windows Credential Manager's limit for a secret (2560 bytes); applied everywhere.
pub const MAX_KEY_BYTES: usize = 2560;

/// Rejects keys that would break storage or a header: empty, too long, or with newlines or
/// other control characters (F51). The message never contains the key.
pub fn validate_key(key: &str) -> Result<()> {
    if key.trim().is_empty() {
        return Err(Error::Keyring("the key is empty; paste the whole key".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::Keyring(format!(
            "the key is {} bytes, more than the {MAX_KEY_BYTES} bytes a keyring entry can hold; check that you pasted only the key",
            key.len()
        )));
    }
    if let Some(pos) = key.chars().position(|c| c.is_control()) {
        return Err(Error::Keyring(format!(
            "the key contains a newline or control character (at character {}); paste it again without line breaks",
            pos + 1
        )));
    }
    if key != key.trim() {
        return Err(Error::Keyring("the key starts or ends with spaces; paste it again without them".into()));
    }
    Ok(())
}

fn validate_provider(provider: &str) -> Result<()> {
    let ok = !provider.is_empty()
        && provider.len() <= 64
        && provider.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::Keyring(format!("provider id `{provider}` must be 1-64 characters of a-z, 0-9, - or _")))
    }
}

fn entry(provider: &str) -> Result<keyring::Entry> {
    validate_provider(provider)?;
    keyring::Entry::new(SERVICE, provider).map_err(|e| Error::Keyring(describe(&e)))
}

/// A keyring error in words. `BadEncoding` and `Ambiguous` carry secret material in their
/// payloads, so they are never formatted with `{:?}` or `{}`.
fn describe(e: &keyring::Error) -> String {
    match e {
        keyring::Error::NoEntry => "no key stored".into(),
        keyring::Error::NoStorageAccess(inner) => format!(
            "the keyring is locked or not reachable ({inner}); unlock your login keyring, or start a Secret Service provider (gnome-keyring, KeePassXC)"
        ),
        keyring::Error::PlatformFailure(inner) => format!(
            "the keyring backend failed ({inner}); on Linux make sure a D-Bus session and a Secret Service provider (gnome-keyring, KeePassXC) are running"
        ),
        keyring::Error::BadEncoding(_) => "the stored key is not valid UTF-8; set it again".into(),
        keyring::Error::TooLong(attr, limit) => format!("the keyring rejected `{attr}` as longer than {limit}"),
        keyring::Error::Invalid(attr, why) => format!("the keyring rejected `{attr}`: {why}"),
        keyring::Error::Ambiguous(items) => format!("{} keyring entries match; remove the duplicates in your keyring manager", items.len()),
        _ => "unknown keyring error".into(),
    }
}

/// Stores (or replaces) the key for a provider.
pub fn set_key(provider: &str, key: &str) -> Result<()> {
    validate_key(key)?;
    let e = entry(provider)?;
    refuse_mock(&e)?;
    e.set_password(key).map_err(|e| Error::Keyring(format!("could not store the key: {}", describe(&e))))
}

/// Deletes the key; `Ok(false)` when there was none.
pub fn delete_key(provider: &str) -> Result<bool> {
    let e = entry(provider)?;
    match e.delete_credential() {
        Ok(()) => Ok(true),
        Err(keyring::Error::NoEntry) => Ok(false),
        Err(err) => Err(Error::Keyring(format!("could not delete the key: {}", describe(&err)))),
    }
}

/// Whether a key is stored for the provider (the key itself is dropped at once).
pub fn has_key(provider: &str) -> Result<bool> {
    Ok(read_key(provider)?.is_some())
}

/// Crate-private: the key for building a request.
pub(crate) fn read_key(provider: &str) -> Result<Option<ApiKey>> {
    let e = entry(provider)?;
    refuse_mock(&e)?;
    match e.get_password() {
        Ok(k) => Ok(Some(ApiKey::new(k))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(err) => Err(Error::Keyring(format!("could not read the key: {}", describe(&err)))),
    }
}

fn is_mock(e: &keyring::Entry) -> bool {
    e.get_credential().downcast_ref::<keyring::mock::MockCredential>().is_some()
}

fn refuse_mock(e: &keyring::Entry) -> Result<()> {
    if is_mock(e) {
        return Err(Error::Keyring(MOCK_MESSAGE.into()));
    }
    Ok(())
}

const MOCK_MESSAGE: &str = "this build has no keyring backend (keyring's in-memory mock store is active); keys would be lost on exit, so Arbor refuses to store them. Rebuild with the keyring platform features";

/// Where a key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    Keyring,
    Env(&'static str),
}

/// The result of looking a key up for the CLI: keyring first, then the environment.
#[derive(Debug)]
pub struct KeyLookup {
    pub key: Option<ApiKey>,
    pub source: Option<KeySource>,
    /// Why the keyring could not be asked (shown as a warning when the environment is used).
    pub keyring_problem: Option<String>,
}

/// Keyring first, then `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` / `GEMINI_API_KEY`.
pub fn lookup_key(wire: Wire) -> KeyLookup {
    lookup_key_with_env(wire, |name| std::env::var(name).ok())
}

pub fn lookup_key_with_env(wire: Wire, env: impl Fn(&str) -> Option<String>) -> KeyLookup {
    lookup_key_named(wire.name(), wire.env_var(), env)
}

/// Like `lookup_key_with_env` for any keyring entry name and variable (tests use their own
/// names so they never touch a developer's real keys).
pub fn lookup_key_named(provider: &str, var: &'static str, env: impl Fn(&str) -> Option<String>) -> KeyLookup {
    let mut problem = None;
    match read_key(provider) {
        Ok(Some(k)) => return KeyLookup { key: Some(k), source: Some(KeySource::Keyring), keyring_problem: None },
        Ok(None) => {}
        Err(e) => problem = Some(e.to_string()),
    }
    match env(var).filter(|v| !v.trim().is_empty()) {
        Some(v) => {
            let v = v.trim().to_string();
            if validate_key(&v).is_err() {
                return KeyLookup {
                    key: None,
                    source: None,
                    keyring_problem: Some(format!(
                        "{var} is set but is not a valid key (too long or has control characters)"
                    )),
                };
            }
            KeyLookup { key: Some(ApiKey::new(v)), source: Some(KeySource::Env(var)), keyring_problem: problem }
        }
        None => KeyLookup { key: None, source: None, keyring_problem: problem },
    }
}

/// The outcome of `self_test`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfTest {
    pub ok: bool,
    /// "secret-service", "keychain", "windows-credential-manager", "mock" or "unknown".
    pub backend: String,
    /// A sentence for the user; says what to do when `ok` is false.
    pub message: String,
}

fn backend_name(e: &keyring::Entry) -> &'static str {
    let c = e.get_credential();
    if c.is::<keyring::mock::MockCredential>() {
        return "mock";
    }
    #[cfg(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"))]
    if c.is::<keyring::secret_service::SsCredential>() {
        return "secret-service";
    }
    #[cfg(target_os = "linux")]
    if c.is::<keyring::keyutils::KeyutilsCredential>() {
        return "keyutils";
    }
    if cfg!(target_os = "macos") {
        return "keychain";
    }
    if cfg!(target_os = "windows") {
        return "windows-credential-manager";
    }
    "unknown"
}

/// Startup self-test: writes, reads back and deletes a random probe secret. Fails loudly when
/// the build has only the mock store, or when no backend is reachable (F52).
pub fn self_test() -> SelfTest {
    let probe_user = "__arbor_self_test__";
    let e = match keyring::Entry::new(SERVICE, probe_user) {
        Ok(e) => e,
        Err(err) => {
            return SelfTest {
                ok: false,
                backend: "unknown".into(),
                message: format!("no keyring backend works: {}", describe(&err)),
            }
        }
    };
    let backend = backend_name(&e).to_string();
    if backend == "mock" {
        return SelfTest { ok: false, backend, message: MOCK_MESSAGE.into() };
    }
    let probe: String = (0..24).map(|_| fastrand::alphanumeric()).collect();
    if let Err(err) = e.set_password(&probe) {
        return SelfTest {
            ok: false,
            backend,
            message: format!("no keyring backend works, so API keys cannot be stored: {}. Without one, set OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY for the CLI, or use the offline summarizer", describe(&err)),
        };
    }
    let back = e.get_password();
    let _ = e.delete_credential();
    match back {
        Ok(b) if b == probe => {
            SelfTest { ok: true, backend: backend.clone(), message: format!("keyring works ({backend})") }
        }
        Ok(_) => SelfTest {
            ok: false,
            backend,
            message: "the keyring returned a different value than was stored; it is not usable".into(),
        },
        Err(err) => SelfTest {
            ok: false,
            backend,
            message: format!("the keyring stored the probe but could not read it back: {}", describe(&err)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn validation() {
        assert!(validate_key("sk-abc").is_ok());
        assert!(validate_key("").is_err());
        assert!(validate_key("sk-abc\n").is_err());
        assert!(validate_key("sk-\u{7}abc").is_err());
        assert!(validate_key(&"a".repeat(2560)).is_ok());
        let e = validate_key(&"x".repeat(2561)).unwrap_err().to_string();
        assert!(e.contains("2561 bytes") && !e.contains("xxxx"), "{e}");
        let e = validate_key("secret-value\r").unwrap_err().to_string();
        assert!(!e.contains("secret-value"), "{e}");
        assert!(validate_provider("openai").is_ok());
        assert!(validate_provider("../x").is_err());
    }
}
