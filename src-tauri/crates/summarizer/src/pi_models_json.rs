//! Pi's own `models.json` in its agent folder (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`):
//! the providers and models a user defines for local servers and gateways, and the per-model
//! overrides of Pi's built-in table. Pi takes a model's context window from here, so Arbor must
//! too, or its threshold disagrees with the one Pi compacts at.
//!
//! Read as Pi 0.73.1's `ModelRegistry.loadCustomModels` reads it:
//! 1. `//` comments outside strings and trailing commas before `}` / `]` are removed, then the
//!    text is parsed as JSON.
//! 2. The file is checked as Pi checks it (the schema of the fields Arbor reads, then Pi's
//!    `validateConfig` rules). Any failure makes Pi ignore the *whole* file and keep only its
//!    built-in models: Arbor does the same and keeps the reason, to show it.
//! 3. A custom model's window is its `contextWindow`, else 128000 (Pi's default for custom
//!    models). A custom model replaces the built-in one with the same provider and id.
//! 4. `modelOverrides[id].contextWindow` replaces a built-in model's window; ids the built-in
//!    table does not list are ignored, as in Pi.
//!
//! The file is read again whenever its size or modification time changes, so an edit is seen
//! on the next resolution, as Pi sees it on the next `/model`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Pi's window for a custom model whose definition names none.
pub const CUSTOM_DEFAULT_WINDOW: u64 = 128_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomModel {
    pub provider: String,
    pub id: String,
    pub name: String,
    pub context_window: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelOverride {
    pub provider: String,
    pub id: String,
    pub context_window: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PiModelsJson {
    /// The file read (None: there was none).
    pub path: Option<PathBuf>,
    pub custom: Vec<CustomModel>,
    pub overrides: Vec<ModelOverride>,
    /// Why Pi ignores the file, in a sentence that says what to fix.
    pub error: Option<String>,
}

/// `<agent_dir>/models.json`.
pub fn path_in(agent_dir: &Path) -> PathBuf {
    agent_dir.join("models.json")
}

/// Pi's `stripJsonComments`: `//` comments outside strings, then trailing commas.
pub fn strip_json_comments(input: &str) -> String {
    fn pass(input: &str, mut outside: impl FnMut(&[u8], usize, &mut Vec<u8>) -> usize) -> String {
        let b = input.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'"' {
                // A string runs to the next unescaped quote; an unterminated one is not a string
                // (Pi's regular expression does not match it) and its quote is plain text.
                let mut j = i + 1;
                let mut closed = None;
                while j < b.len() {
                    match b[j] {
                        b'\\' => j += 2,
                        b'"' => {
                            closed = Some(j);
                            break;
                        }
                        _ => j += 1,
                    }
                }
                if let Some(end) = closed {
                    out.extend_from_slice(&b[i..=end]);
                    i = end + 1;
                    continue;
                }
            }
            i = outside(b, i, &mut out);
        }
        // Only ASCII bytes were removed, so the text stays UTF-8.
        String::from_utf8(out).unwrap_or_default()
    }
    let no_comments = pass(input, |b, i, out| {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            let mut j = i;
            while j < b.len() && b[j] != b'\n' {
                j += 1;
            }
            j
        } else {
            out.push(b[i]);
            i + 1
        }
    });
    pass(&no_comments, |b, i, out| {
        if b[i] == b',' {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if matches!(b.get(j), Some(b'}' | b']')) {
                return i + 1;
            }
        }
        out.push(b[i]);
        i + 1
    })
}

fn window_of(v: Option<&Value>, at: &str) -> Result<Option<u64>, String> {
    match v {
        None => Ok(None),
        Some(Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(0.0);
            if x <= 0.0 {
                Err(format!("{at}: invalid contextWindow"))
            } else {
                Ok(Some(x as u64))
            }
        }
        Some(_) => Err(format!("{at}.contextWindow: expected a number")),
    }
}

fn nonempty_str(o: &serde_json::Map<String, Value>, key: &str, at: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(format!("{at}.{key}: expected a non-empty string")),
    }
}

impl PiModelsJson {
    /// Parses a models.json text. `builtin` says whether Pi ships a provider (its rules differ
    /// for built-in providers: no `baseUrl`, `apiKey` or `api` needed).
    pub fn parse(text: &str, path: Option<&Path>, builtin: &dyn Fn(&str) -> bool) -> PiModelsJson {
        let mut out = PiModelsJson { path: path.map(Path::to_path_buf), ..Default::default() };
        let shown = path.map(|p| p.display().to_string()).unwrap_or_else(|| "models.json".into());
        let fail = |why: String| format!("Pi's {shown} is ignored, by Pi too ({why}); fix the file to use its models");
        let v: Value = match serde_json::from_str(&strip_json_comments(text)) {
            Ok(v) => v,
            Err(e) => {
                out.error = Some(fail(format!("invalid JSON: {e}")));
                return out;
            }
        };
        match Self::read(&v, builtin) {
            Ok((custom, overrides)) => {
                out.custom = custom;
                out.overrides = overrides;
            }
            Err(why) => out.error = Some(fail(why)),
        }
        out
    }

    fn read(v: &Value, builtin: &dyn Fn(&str) -> bool) -> Result<(Vec<CustomModel>, Vec<ModelOverride>), String> {
        let providers = v.get("providers").and_then(Value::as_object).ok_or("\"providers\" must be an object")?;
        let (mut custom, mut overrides) = (Vec::new(), Vec::new());
        for (name, cfg) in providers {
            let at = format!("providers.{name}");
            let cfg = cfg.as_object().ok_or(format!("{at}: expected an object"))?;
            let base_url = nonempty_str(cfg, "baseUrl", &at)?;
            let api_key = nonempty_str(cfg, "apiKey", &at)?;
            let api = nonempty_str(cfg, "api", &at)?;
            let models = match cfg.get("models") {
                None => Vec::new(),
                Some(Value::Array(a)) => a.clone(),
                Some(_) => return Err(format!("{at}.models: expected an array")),
            };
            let model_overrides = match cfg.get("modelOverrides") {
                None => serde_json::Map::new(),
                Some(Value::Object(o)) => o.clone(),
                Some(_) => return Err(format!("{at}.modelOverrides: expected an object")),
            };
            let is_builtin = builtin(name);
            if models.is_empty() {
                if base_url.is_none()
                    && cfg.get("headers").is_none()
                    && cfg.get("compat").is_none()
                    && model_overrides.is_empty()
                {
                    return Err(format!("provider {name}: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\""));
                }
            } else if !is_builtin {
                if base_url.is_none() {
                    return Err(format!("provider {name}: \"baseUrl\" is required when defining custom models"));
                }
                if api_key.is_none() {
                    return Err(format!("provider {name}: \"apiKey\" is required when defining custom models"));
                }
            }
            for (i, m) in models.iter().enumerate() {
                let mat = format!("{at}.models.{i}");
                let m = m.as_object().ok_or(format!("{mat}: expected an object"))?;
                let id = nonempty_str(m, "id", &mat)?.ok_or(format!("{mat}.id: required"))?;
                let model_api = nonempty_str(m, "api", &mat)?;
                if api.is_none() && model_api.is_none() && !is_builtin {
                    return Err(format!("provider {name}, model {id}: no \"api\" specified"));
                }
                let name_field = nonempty_str(m, "name", &mat)?;
                let window = window_of(m.get("contextWindow"), &mat)?.unwrap_or(CUSTOM_DEFAULT_WINDOW);
                custom.push(CustomModel {
                    provider: name.clone(),
                    name: name_field.unwrap_or_else(|| id.clone()),
                    id,
                    context_window: window,
                });
            }
            for (id, o) in &model_overrides {
                let oat = format!("{at}.modelOverrides.{id}");
                let o = o.as_object().ok_or(format!("{oat}: expected an object"))?;
                if let Some(w) = window_of(o.get("contextWindow"), &oat)? {
                    overrides.push(ModelOverride { provider: name.clone(), id: id.clone(), context_window: w });
                }
            }
        }
        Ok((custom, overrides))
    }

    /// The file in `agent_dir` (no file: empty, no error; unreadable: the error).
    pub fn load(agent_dir: &Path, builtin: &dyn Fn(&str) -> bool) -> PiModelsJson {
        let path = path_in(agent_dir);
        match std::fs::read_to_string(&path) {
            Ok(t) => PiModelsJson::parse(&t, Some(&path), builtin),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => PiModelsJson::default(),
            Err(e) => PiModelsJson {
                path: Some(path.clone()),
                error: Some(format!(
                    "Pi's {} cannot be read ({e}); Arbor uses Pi's built-in models meanwhile",
                    path.display()
                )),
                ..Default::default()
            },
        }
    }

    /// The custom model `provider`/`id`.
    pub fn custom_model(&self, provider: &str, id: &str) -> Option<&CustomModel> {
        self.custom.iter().find(|m| m.provider == provider && m.id == id)
    }

    /// The override of built-in model `provider`/`id`'s window.
    pub fn override_of(&self, provider: &str, id: &str) -> Option<u64> {
        self.overrides.iter().find(|o| o.provider == provider && o.id == id).map(|o| o.context_window)
    }
}

/// A file's length and modification time: what tells [`Cached`] to read it again.
type Stamp = Option<(u64, SystemTime)>;

/// The file as last read, read again when its length or modification time changed.
#[derive(Default)]
pub struct Cached {
    inner: Mutex<Option<(PathBuf, Stamp, PiModelsJson)>>,
}

impl Cached {
    pub fn get(&self, agent_dir: &Path, builtin: &dyn Fn(&str) -> bool) -> PiModelsJson {
        let path = path_in(agent_dir);
        let stamp = std::fs::metadata(&path).ok().and_then(|m| Some((m.len(), m.modified().ok()?)));
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((p, s, v)) = guard.as_ref() {
            if *p == path && *s == stamp && stamp.is_some() {
                return v.clone();
            }
        }
        let v = PiModelsJson::load(agent_dir, builtin);
        *guard = Some((path, stamp, v.clone()));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(p: &str) -> bool {
        matches!(p, "anthropic" | "openai")
    }

    #[test]
    fn comments_and_trailing_commas_are_removed_outside_strings() {
        let t = "{\n // a comment\n \"a\": \"http://x//y\", // after\n \"b\": [1, 2,],\n \"c\": \",}\",\n}";
        let v: Value = serde_json::from_str(&strip_json_comments(t)).unwrap();
        assert_eq!(v["a"], "http://x//y");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
        assert_eq!(v["c"], ",}");
    }

    #[test]
    fn custom_models_overrides_and_defaults() {
        let t = r#"{"providers": {
            "loopback": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
                         "models": [{"id": "scripted-13k", "contextWindow": 13000}, {"id": "bare"}]},
            "anthropic": {"modelOverrides": {"claude-sonnet-4-5": {"contextWindow": 100000}, "x": {"name": "n"}}}
        }}"#;
        let m = PiModelsJson::parse(t, None, &builtin);
        assert_eq!(m.error, None);
        assert_eq!(m.custom_model("loopback", "scripted-13k").map(|c| c.context_window), Some(13_000));
        assert_eq!(m.custom_model("loopback", "bare").map(|c| c.context_window), Some(CUSTOM_DEFAULT_WINDOW));
        assert_eq!(m.override_of("anthropic", "claude-sonnet-4-5"), Some(100_000));
        assert_eq!(m.override_of("anthropic", "x"), None, "an override without a window changes no window");
    }

    #[test]
    fn a_file_pi_rejects_is_ignored_whole_with_a_reason() {
        for (t, why) in [
            ("{not json", "invalid JSON"),
            (
                r#"{"providers": {"local": {"api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}}}"#,
                "\"baseUrl\" is required",
            ),
            (
                r#"{"providers": {"local": {"baseUrl": "u", "api": "a", "models": [{"id": "m"}]}}}"#,
                "\"apiKey\" is required",
            ),
            (r#"{"providers": {"local": {"baseUrl": "u", "apiKey": "k", "models": [{"id": "m"}]}}}"#, "no \"api\""),
            (
                r#"{"providers": {"local": {"baseUrl": "u", "apiKey": "k", "api": "a", "models": [{"id": "m", "contextWindow": 0}]}}}"#,
                "invalid contextWindow",
            ),
            (r#"{"providers": {"local": {}}}"#, "must specify"),
            (r#"{"models": []}"#, "\"providers\" must be an object"),
        ] {
            let m = PiModelsJson::parse(t, Some(Path::new("/a/models.json")), &builtin);
            let e = m.error.unwrap_or_else(|| panic!("accepted: {t}"));
            assert!(e.contains(why) && e.contains("/a/models.json") && e.contains("fix the file"), "{e}");
            assert!(m.custom.is_empty() && m.overrides.is_empty());
        }
        // A built-in provider may add models without baseUrl, apiKey or api.
        let ok = PiModelsJson::parse(
            r#"{"providers": {"openai": {"models": [{"id": "gpt-x", "contextWindow": 5000}]}}}"#,
            None,
            &builtin,
        );
        assert_eq!((ok.error, ok.custom.len()), (None, 1));
    }

    #[test]
    fn the_cache_reads_an_edited_file_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cached::default();
        assert_eq!(cache.get(dir.path(), &builtin), PiModelsJson::default());
        let write = |w: u64| {
            let t = format!(
                r#"{{"providers": {{"l": {{"baseUrl": "u", "apiKey": "k", "api": "a", "models": [{{"id": "m", "contextWindow": {w}}}]}}}}}}"#
            );
            std::fs::write(path_in(dir.path()), t).unwrap();
        };
        write(13_000);
        assert_eq!(cache.get(dir.path(), &builtin).custom[0].context_window, 13_000);
        write(130_000); // a different length: seen even within the same mtime tick
        assert_eq!(cache.get(dir.path(), &builtin).custom[0].context_window, 130_000);
    }
}
