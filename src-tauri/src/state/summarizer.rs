//! The summarizer's part of the app state (managed beside `AppState`): where the model choice,
//! the user's models and Arbor's settings are kept, the keyring self-test's result, and the one
//! summary or message that runs.

use super::lock;
use crate::error::AppError;
use crate::view::keys::{KeyringStatus, ModelChoice};
use ::summarizer::catalog::Catalog;
use ::summarizer::hooks::ArborSettings;
use ::summarizer::CancellationToken;
use std::path::PathBuf;
use std::sync::Mutex;

pub struct SummarizerState {
    /// Arbor's data dir: `summarizer.json` (the model choice) and `models.json` (user models).
    pub data_dir: PathBuf,
    /// Arbor's settings file (hooks, branch-summary limit); `ArborSettings::default_path()`.
    pub settings_path: Option<PathBuf>,
    /// The keyring self-test, run once.
    pub keyring: Mutex<Option<KeyringStatus>>,
    /// The running summary / message, so `cancel_summary` can stop it.
    pub running: Mutex<Option<CancellationToken>>,
}

impl SummarizerState {
    pub fn new(data_dir: PathBuf, settings_path: Option<PathBuf>) -> SummarizerState {
        SummarizerState { data_dir, settings_path, keyring: Mutex::new(None), running: Mutex::new(None) }
    }
    pub fn choice_file(&self) -> PathBuf {
        self.data_dir.join("summarizer.json")
    }
    pub fn models_file(&self) -> PathBuf {
        self.data_dir.join("models.json")
    }
    pub fn catalog(&self) -> Result<Catalog, AppError> {
        Ok(Catalog::load(&self.models_file())?)
    }
    pub fn arbor_settings(&self) -> Result<ArborSettings, AppError> {
        match &self.settings_path {
            Some(p) => Ok(ArborSettings::load(p)?),
            None => Ok(ArborSettings::default()),
        }
    }

    /// The model choice saved in `summarizer.json`; the offline summarizer when there is none (or
    /// it cannot be read).
    pub fn choice(&self) -> ModelChoice {
        std::fs::read(self.choice_file()).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    /// Writes `choice` to `summarizer.json` (whole: a temporary file, then a rename).
    pub fn save_choice(&self, choice: &ModelChoice) -> Result<(), AppError> {
        let path = self.choice_file();
        let io = |source| AppError::Io { what: format!("writing {}", path.display()), source };
        std::fs::create_dir_all(&self.data_dir).map_err(io)?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(choice).map_err(|e| AppError::BadInput(e.to_string()))?)
            .map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }

    /// Runs the keyring self-test once (write, read back, delete a random probe).
    pub fn keyring_status(&self) -> KeyringStatus {
        let mut g = lock(&self.keyring);
        if let Some(s) = g.as_ref() {
            return s.clone();
        }
        let t = ::summarizer::keys::self_test();
        let s = KeyringStatus { ok: t.ok, backend: t.backend, message: t.message };
        *g = Some(s.clone());
        s
    }

    /// Stops the running summary or message; false when none runs.
    pub fn cancel_run(&self) -> bool {
        match lock(&self.running).as_ref() {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}

/// Registers the run so `cancel_summary` can stop it; one run at a time.
pub struct Running<'a>(&'a SummarizerState);

impl<'a> Running<'a> {
    pub fn start(st: &'a SummarizerState) -> Result<(Running<'a>, CancellationToken), AppError> {
        let mut g = lock(&st.running);
        if g.is_some() {
            return Err(AppError::Refused("a summary or message is already running; wait for it or cancel it".into()));
        }
        let t = CancellationToken::new();
        *g = Some(t.clone());
        Ok((Running(st), t))
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        *lock(&self.0.running) = None;
    }
}

/// `ARBOR_OPENAI_BASE_URL` / `ARBOR_ANTHROPIC_BASE_URL` / `ARBOR_GEMINI_BASE_URL`, read at start.
pub fn env_base_url(provider: &str) -> Option<String> {
    std::env::var(format!("ARBOR_{}_BASE_URL", provider.to_ascii_uppercase())).ok().filter(|v| !v.trim().is_empty())
}

/// The base URL of `choice`: its own, else the provider's `ARBOR_<PROVIDER>_BASE_URL`.
pub fn effective_base_url(choice: &ModelChoice) -> Option<String> {
    choice.base_url.clone().filter(|b| !b.trim().is_empty()).or_else(|| env_base_url(&choice.provider))
}
