//! Pi's published model table (context window and output limit per provider and model id),
//! extracted from `@mariozechner/pi-ai`'s `models.generated.js` by `scripts/gen-models.mjs` into
//! `pi-models.json` and embedded here, so it works offline.
//!
//! [`resolve`] answers "which context window does this session's model have?": the user's
//! override for that model, else Pi's `models.json` (a custom model, or a `modelOverrides`
//! window of a built-in one; see [`crate::pi_models_json`]), else Pi's table, else
//! [`DEFAULT_WINDOW`], and says which it was.

use crate::pi_models_json::PiModelsJson;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Used when neither the user nor Pi's table knows the model (Pi's own fallback is 200k too).
pub const DEFAULT_WINDOW: u64 = 200_000;

const TABLE_JSON: &str = include_str!("../pi-models.json");

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiModel {
    pub provider: String,
    pub id: String,
    pub name: String,
    pub context_window: u64,
    pub max_tokens: u64,
}

#[derive(Deserialize)]
struct TableFile {
    source: String,
    models: Vec<PiModel>,
}

fn file() -> &'static TableFile {
    static T: OnceLock<TableFile> = OnceLock::new();
    T.get_or_init(|| {
        serde_json::from_str(TABLE_JSON).expect("pi-models.json is valid (scripts/gen-models.mjs writes it)")
    })
}

/// Whether Pi ships this provider (its table lists a model of it).
pub fn is_builtin_provider(provider: &str) -> bool {
    table().iter().any(|m| m.provider == provider)
}

/// Pi's `models.json` in `agent_dir`, with Pi's built-in providers.
pub fn load_models_json(agent_dir: &std::path::Path) -> PiModelsJson {
    PiModelsJson::load(agent_dir, &is_builtin_provider)
}

/// Every model of Pi's table.
pub fn table() -> &'static [PiModel] {
    &file().models
}

/// Where the table came from ("@mariozechner/pi-ai 0.73.1 models.generated.js").
pub fn table_source() -> &'static str {
    &file().source
}

/// A model found in Pi's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub model: &'static PiModel,
    /// The session named no provider (or one the table does not list with this id): the model
    /// was found by its id alone, under this many providers.
    pub by_id_only: Option<usize>,
}

/// The table's row for `provider`/`id`. Without a provider (or when that provider does not list
/// this id), the id alone decides: when its providers disagree on the window, the smallest is
/// taken (a threshold that fires early is safer than one that never fires).
pub fn lookup(provider: Option<&str>, id: &str) -> Option<Found> {
    let t = table();
    if let Some(p) = provider {
        if let Some(m) = t.iter().find(|m| m.provider == p && m.id == id) {
            return Some(Found { model: m, by_id_only: None });
        }
    }
    let same: Vec<&'static PiModel> = t.iter().filter(|m| m.id == id).collect();
    let smallest = same.iter().min_by_key(|m| m.context_window)?;
    Some(Found { model: smallest, by_id_only: Some(same.len()) })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// The user set it for this model.
    Override,
    /// Pi's model table.
    Table,
    /// Pi's `models.json`: a custom model, or a built-in one's `modelOverrides` window.
    PiModels,
    /// Neither knows the model: [`DEFAULT_WINDOW`].
    Default,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub tokens: u64,
    pub source: WindowSource,
    /// What the session's entries say (model_change or the last assistant message).
    pub provider: Option<String>,
    pub model: Option<String>,
    /// The table's row, when the model is in it (also for an override, to show both).
    pub table_name: Option<String>,
    pub table_provider: Option<String>,
    pub table_tokens: Option<u64>,
    pub by_id_only: Option<usize>,
    /// With [`WindowSource::PiModels`]: the provider of the `models.json` entry used.
    pub models_json_provider: Option<String>,
    /// Why Pi's `models.json` is ignored (by Pi too), when it is.
    pub models_json_error: Option<String>,
}

/// The key an override is remembered under: `provider/model` (`/model` without a provider,
/// `""` for a session that names no model).
pub fn override_key(provider: Option<&str>, model: Option<&str>) -> String {
    match model {
        Some(m) => format!("{}/{m}", provider.unwrap_or("")),
        None => String::new(),
    }
}

/// The context window of `provider`/`model`: the user's override > Pi's `models.json` > Pi's
/// table > the default. Without a provider (or when the named provider has no such model), the
/// id alone decides among `models.json`'s models and the table's, the smallest window winning.
pub fn resolve(
    provider: Option<&str>,
    model: Option<&str>,
    overrides: &BTreeMap<String, u64>,
    pi: &PiModelsJson,
) -> Resolved {
    let found = model.and_then(|m| lookup(provider, m));
    let mut r = Resolved {
        tokens: DEFAULT_WINDOW,
        source: WindowSource::Default,
        provider: provider.map(str::to_string),
        model: model.map(str::to_string),
        table_name: found.as_ref().map(|f| f.model.name.clone()),
        table_provider: found.as_ref().map(|f| f.model.provider.clone()),
        table_tokens: found.as_ref().map(|f| f.model.context_window),
        by_id_only: found.as_ref().and_then(|f| f.by_id_only),
        models_json_provider: None,
        models_json_error: pi.error.clone(),
    };
    // What Pi's registry holds for this id: models.json's custom models (which replace a
    // built-in model of the same provider and id), and the table's rows with their overrides.
    let from_pi = model.and_then(|id| {
        let exact = provider.and_then(|p| {
            pi.custom_model(p, id).map(|c| (c.context_window, true, c.provider.clone())).or_else(|| {
                let row = table().iter().find(|m| m.provider == p && m.id == id)?;
                Some(match pi.override_of(p, id) {
                    Some(w) => (w, true, row.provider.clone()),
                    None => (row.context_window, false, row.provider.clone()),
                })
            })
        });
        exact.or_else(|| {
            let custom = pi.custom.iter().filter(|c| c.id == id).map(|c| (c.context_window, true, c.provider.clone()));
            let rows = table().iter().filter(|m| m.id == id && pi.custom_model(&m.provider, id).is_none()).map(|m| {
                match pi.override_of(&m.provider, id) {
                    Some(w) => (w, true, m.provider.clone()),
                    None => (m.context_window, false, m.provider.clone()),
                }
            });
            custom.chain(rows).min_by_key(|(w, _, _)| *w)
        })
    });
    if let Some(&n) = overrides.get(&override_key(provider, model)).filter(|n| **n > 0) {
        r.tokens = n;
        r.source = WindowSource::Override;
    } else if let Some((w, in_json, p)) = from_pi {
        r.tokens = w;
        if in_json {
            r.source = WindowSource::PiModels;
            r.models_json_provider = Some(p);
        } else {
            r.source = WindowSource::Table;
        }
    }
    r
}

/// 200000 → "200k", 1048576 → "1.05M", 131072 → "131.1k".
pub fn short_tokens(n: u64) -> String {
    let trim = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if n >= 1_000_000 {
        format!("{}M", trim(format!("{:.2}", n as f64 / 1e6)))
    } else if n >= 1000 {
        format!("{}k", trim(format!("{:.1}", n as f64 / 1e3)))
    } else {
        n.to_string()
    }
}

impl Resolved {
    /// "claude-sonnet-4-5 · 200k from Pi's model table" / "… set by you" / "unknown model, default".
    pub fn label(&self) -> String {
        let k = short_tokens(self.tokens);
        let who = self.model.clone().unwrap_or_else(|| "no model named".into());
        match self.source {
            WindowSource::Override => format!("{who} · {k} set by you"),
            WindowSource::Table => match (self.by_id_only, &self.table_provider) {
                (Some(n), Some(p)) if n > 1 => {
                    format!("{who} · {k} from Pi's model table (smallest of {n} providers; {p})")
                }
                (Some(_), Some(p)) => format!("{who} · {k} from Pi's model table ({p})"),
                _ => format!("{who} · {k} from Pi's model table"),
            },
            WindowSource::PiModels => match (&self.models_json_provider, self.table_tokens) {
                (Some(p), Some(t)) if t != self.tokens => {
                    format!("{who} · {k} from Pi's models.json ({p}; Pi's table says {})", short_tokens(t))
                }
                (Some(p), _) => format!("{who} · {k} from Pi's models.json ({p})"),
                _ => format!("{who} · {k} from Pi's models.json"),
            },
            WindowSource::Default if self.model.is_none() => format!("no model in this session yet · {k} default"),
            WindowSource::Default => format!("{who}: unknown model, {k} default"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_pis() {
        assert!(table_source().starts_with("@mariozechner/pi-ai 0.73.1"), "{}", table_source());
        assert!(table().len() > 500, "{} models", table().len());
        assert!(table().iter().all(|m| m.context_window > 0 && !m.id.is_empty() && !m.provider.is_empty()));
    }

    #[test]
    fn known_model() {
        let r = resolve(Some("anthropic"), Some("claude-sonnet-4-5"), &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!((r.tokens, r.source), (200_000, WindowSource::Table));
        assert_eq!(r.table_name.as_deref(), Some("Claude Sonnet 4.5 (latest)"));
        assert_eq!(r.by_id_only, None);
        assert_eq!(r.label(), "claude-sonnet-4-5 · 200k from Pi's model table");
        let g = resolve(Some("google"), Some("gemini-2.5-pro"), &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!((g.tokens, g.source), (1_048_576, WindowSource::Table));
        assert_eq!(g.label(), "gemini-2.5-pro · 1.05M from Pi's model table");
    }

    #[test]
    fn unknown_model_gets_the_default() {
        let r =
            resolve(Some("anthropic"), Some("claude-from-the-future-9"), &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!((r.tokens, r.source), (DEFAULT_WINDOW, WindowSource::Default));
        assert_eq!(r.table_tokens, None);
        assert_eq!(r.label(), "claude-from-the-future-9: unknown model, 200k default");
        let none = resolve(None, None, &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!((none.tokens, none.source), (DEFAULT_WINDOW, WindowSource::Default));
        assert_eq!(none.label(), "no model in this session yet · 200k default");
    }

    #[test]
    fn provider_less_id_is_found_by_id_and_disagreement_takes_the_smallest() {
        // Every provider that lists claude-opus-4-5 gives 200k.
        let r = resolve(None, Some("claude-opus-4-5"), &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!((r.tokens, r.source), (200_000, WindowSource::Table));
        assert!(r.by_id_only.is_some_and(|n| n >= 1));
        // gpt-5: openai says 400k, github-copilot 128k: without a provider, the smallest.
        let rows: Vec<u64> = table().iter().filter(|m| m.id == "gpt-5").map(|m| m.context_window).collect();
        assert!(rows.contains(&400_000) && rows.contains(&128_000), "{rows:?}");
        let bare = resolve(None, Some("gpt-5"), &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!(bare.tokens, 128_000);
        assert!(bare.label().contains("smallest of"), "{}", bare.label());
        let exact = resolve(Some("openai"), Some("gpt-5"), &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!(exact.tokens, 400_000);
        // A provider the table does not list with this id falls back to the id.
        let proxy = resolve(Some("my-proxy"), Some("claude-sonnet-4-5"), &BTreeMap::new(), &PiModelsJson::default());
        assert_eq!((proxy.tokens, proxy.source), (200_000, WindowSource::Table));
    }

    #[test]
    fn override_wins_and_is_per_model() {
        let mut o = BTreeMap::new();
        o.insert(override_key(Some("anthropic"), Some("claude-sonnet-4-5")), 24_000);
        o.insert(override_key(Some("local"), Some("llama-9")), 8_192);
        let r = resolve(Some("anthropic"), Some("claude-sonnet-4-5"), &o, &PiModelsJson::default());
        assert_eq!((r.tokens, r.source), (24_000, WindowSource::Override));
        assert_eq!(r.table_tokens, Some(200_000), "the table's number is still reported");
        assert_eq!(r.label(), "claude-sonnet-4-5 · 24k set by you");
        // another model of the same session is not affected
        assert_eq!(
            resolve(Some("anthropic"), Some("claude-opus-4-5"), &o, &PiModelsJson::default()).source,
            WindowSource::Table
        );
        // an unknown model with an override
        let l = resolve(Some("local"), Some("llama-9"), &o, &PiModelsJson::default());
        assert_eq!((l.tokens, l.source), (8_192, WindowSource::Override));
        // a zero override is no override
        o.insert(override_key(Some("openai"), Some("gpt-5")), 0);
        assert_eq!(resolve(Some("openai"), Some("gpt-5"), &o, &PiModelsJson::default()).source, WindowSource::Table);
        assert_eq!(override_key(None, Some("x")), "/x");
        assert_eq!(override_key(None, None), "");
    }

    #[test]
    fn pis_models_json_comes_between_the_override_and_the_table() {
        let pi = PiModelsJson::parse(
            r#"{"providers": {
                "loopback": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
                             "models": [{"id": "scripted-13k", "contextWindow": 13000}, {"id": "claude-sonnet-4-5", "contextWindow": 50000}]},
                "anthropic": {"modelOverrides": {"claude-opus-4-5": {"contextWindow": 90000}}}
            }}"#,
            None,
            &is_builtin_provider,
        );
        assert_eq!(pi.error, None);
        let none = BTreeMap::new();
        let r = resolve(Some("loopback"), Some("scripted-13k"), &none, &pi);
        assert_eq!((r.tokens, r.source), (13_000, WindowSource::PiModels));
        assert_eq!(r.label(), "scripted-13k · 13k from Pi's models.json (loopback)");
        // A built-in model's override, with the table's number beside it.
        let o = resolve(Some("anthropic"), Some("claude-opus-4-5"), &none, &pi);
        assert_eq!((o.tokens, o.source), (90_000, WindowSource::PiModels));
        assert_eq!(o.label(), "claude-opus-4-5 · 90k from Pi's models.json (anthropic; Pi's table says 200k)");
        // The same id under a built-in provider is not the custom one.
        assert_eq!(resolve(Some("anthropic"), Some("claude-sonnet-4-5"), &none, &pi).tokens, 200_000);
        // By id alone: the smallest of models.json's and the table's.
        assert_eq!(resolve(None, Some("claude-sonnet-4-5"), &none, &pi).tokens, 50_000);
        assert_eq!(resolve(None, Some("scripted-13k"), &none, &pi).tokens, 13_000);
        // The user's own number still wins.
        let mut own = BTreeMap::new();
        own.insert(override_key(Some("loopback"), Some("scripted-13k")), 12_000);
        assert_eq!(resolve(Some("loopback"), Some("scripted-13k"), &own, &pi).source, WindowSource::Override);
        // A file Pi ignores changes nothing and says why.
        let bad = PiModelsJson::parse("{", None, &is_builtin_provider);
        let b = resolve(Some("loopback"), Some("scripted-13k"), &none, &bad);
        assert_eq!((b.tokens, b.source), (DEFAULT_WINDOW, WindowSource::Default));
        assert!(b.models_json_error.as_deref().is_some_and(|e| e.contains("invalid JSON")));
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_tokens(200_000), "200k");
        assert_eq!(short_tokens(131_072), "131.1k");
        assert_eq!(short_tokens(1_000_000), "1M");
        assert_eq!(short_tokens(999), "999");
    }
}
