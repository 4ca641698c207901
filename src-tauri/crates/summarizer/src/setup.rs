//! Building a summarizer from user choices (CLI flags or app settings): provider name, model,
//! base URL, key lookup and catalog limits. Shared by `arbor-cli` and the app.
use crate::catalog::{Catalog, ModelInfo};
use crate::error::{Error, Result};
use crate::keys::{lookup_key, KeySource};
use crate::provider::{Client, ProviderConfig, Wire};
use crate::run::Backend;

/// A backend plus what the caller should know about it.
#[derive(Debug)]
pub struct Prepared {
    pub backend: Backend,
    /// The catalog entry of the model, if known (context window, output limit).
    pub model: Option<ModelInfo>,
    /// Where the key came from, for a one-line notice ("key from ANTHROPIC_API_KEY").
    pub key_source: Option<KeySource>,
    /// Notices for the user (e.g. why the keyring was skipped).
    pub notices: Vec<String>,
}

/// A model client alone, for work that has no offline stand-in (the judge).
#[derive(Debug)]
pub struct PreparedModel {
    pub client: Client,
    pub model: Option<ModelInfo>,
    pub key_source: Option<KeySource>,
    pub notices: Vec<String>,
}

/// `provider` is `openai | anthropic | gemini | offline`. For a model provider the key comes from
/// the keyring, then the environment; without one this is an error that says how to set one
/// (or to use `--provider offline`). Set `ARBOR_KEYRING=off` to skip the keyring lookup.
pub fn prepare_backend(
    provider: &str,
    model: Option<&str>,
    base_url: Option<&str>,
    catalog: &Catalog,
) -> Result<Prepared> {
    if provider.eq_ignore_ascii_case("offline") {
        return Ok(Prepared { backend: Backend::Offline, model: None, key_source: None, notices: Vec::new() });
    }
    let wire = Wire::parse(provider).ok_or_else(|| {
        Error::Config(format!("unknown provider `{provider}`: use openai, anthropic, gemini or offline"))
    })?;
    let model = model.ok_or_else(|| {
        Error::Config(format!("--model is required with --provider {provider} (for example {})", example_model(wire)))
    })?;
    let p = prepare_model(wire, provider, model, base_url, catalog, "or use --provider offline")?;
    Ok(Prepared { backend: Backend::Model(p.client), model: p.model, key_source: p.key_source, notices: p.notices })
}

/// The judge's model from `PROVIDER/MODEL` (`anthropic/claude-sonnet-4-5`). Only the first `/`
/// splits, since model ids may hold one themselves (`openai/meta-llama/llama-3.1-70b` through an
/// OpenAI-compatible router). There is no offline judge: the offline score is the rules one.
pub fn prepare_judge(spec: &str, base_url: Option<&str>, catalog: &Catalog) -> Result<PreparedModel> {
    let example = "for example anthropic/claude-sonnet-4-5 or openai/gpt-4o-mini";
    let (provider, model) = spec
        .split_once('/')
        .map(|(p, m)| (p.trim(), m.trim()))
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        .ok_or_else(|| Error::Config(format!("the judge is PROVIDER/MODEL ({example}), not `{spec}`")))?;
    if provider.eq_ignore_ascii_case("offline") {
        return Err(Error::Config(format!(
            "the judge must be a model ({example}); the offline score needs none (leave out --judge)"
        )));
    }
    let wire = Wire::parse(provider).ok_or_else(|| {
        Error::Config(format!("unknown judge provider `{provider}`: use openai, anthropic or gemini ({example})"))
    })?;
    prepare_model(wire, provider, model, base_url, catalog, "the offline score needs no key (leave out --judge)")
}

/// The key lookup, base URL and catalog limits of one model. `no_key_hint` ends the missing-key
/// error with what the caller can do instead.
fn prepare_model(
    wire: Wire,
    provider: &str,
    model: &str,
    base_url: Option<&str>,
    catalog: &Catalog,
    no_key_hint: &str,
) -> Result<PreparedModel> {
    let info = catalog.find(wire.name(), model).cloned();
    let mut notices = Vec::new();
    let (key, source) = if std::env::var("ARBOR_KEYRING").is_ok_and(|v| v == "off") {
        let k = std::env::var(wire.env_var())
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| crate::secret::ApiKey::new(v.trim()));
        let src = k.as_ref().map(|_| KeySource::Env(wire.env_var()));
        (k, src)
    } else {
        let look = lookup_key(wire);
        if let (Some(p), Some(KeySource::Env(_))) = (&look.keyring_problem, look.source) {
            notices.push(format!("keyring not used: {p}"));
        }
        (look.key, look.source)
    };
    let base = base_url.map(str::to_string).or_else(|| info.as_ref().and_then(|m| m.base_url.clone()));
    let local = base
        .as_deref()
        .is_some_and(|b| b.contains("://127.0.0.1") || b.contains("://localhost") || b.contains("://[::1]"));
    if key.is_none() && !local {
        return Err(Error::Config(format!(
            "no API key for {provider}: store one in Arbor's settings (OS keyring) or set {}; {no_key_hint}",
            wire.env_var()
        )));
    }
    let mut cfg = ProviderConfig::new(wire, model, key);
    if let Some(b) = base {
        cfg.base_url = b;
    }
    if let Some(m) = &info {
        cfg.context_window = m.context_window;
    }
    Ok(PreparedModel { client: Client::new(cfg)?, model: info, key_source: source, notices })
}

fn example_model(wire: Wire) -> &'static str {
    match wire {
        Wire::OpenAi => "gpt-4o-mini",
        Wire::Anthropic => "claude-sonnet-4-5",
        Wire::Gemini => "gemini-2.5-flash",
    }
}
