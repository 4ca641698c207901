//! Model catalog: context window and output limit per model, built-in entries plus the
//! user's own (stored as JSON in Arbor's app-data folder, written atomically).
use crate::error::{Error, Result};
use crate::provider::Wire;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// "openai" | "anthropic" | "gemini" (the wire format).
    pub provider: String,
    pub id: String,
    pub context_window: u64,
    pub max_output: u64,
    /// Base URL for OpenAI-compatible servers (OpenRouter, Ollama, ...); None = the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default)]
    pub user_added: bool,
}

const BUILTIN: &[(&str, &str, u64, u64)] = &[
    ("openai", "gpt-4o", 128_000, 16_384),
    ("openai", "gpt-4o-mini", 128_000, 16_384),
    ("openai", "gpt-4.1", 1_047_576, 32_768),
    ("openai", "gpt-4.1-mini", 1_047_576, 32_768),
    ("openai", "gpt-5", 400_000, 128_000),
    ("openai", "gpt-5-mini", 400_000, 128_000),
    ("anthropic", "claude-sonnet-4-5", 200_000, 64_000),
    ("anthropic", "claude-haiku-4-5", 200_000, 64_000),
    ("anthropic", "claude-opus-4-1", 200_000, 32_000),
    ("anthropic", "claude-sonnet-4-0", 200_000, 64_000),
    ("gemini", "gemini-2.5-pro", 1_048_576, 65_536),
    ("gemini", "gemini-2.5-flash", 1_048_576, 65_536),
    ("gemini", "gemini-2.5-flash-lite", 1_048_576, 65_536),
];

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Catalog {
    pub models: Vec<ModelInfo>,
}

#[derive(Serialize, Deserialize, Default)]
struct UserFile {
    #[serde(default)]
    models: Vec<ModelInfo>,
}

impl Catalog {
    pub fn builtin() -> Catalog {
        Catalog {
            models: BUILTIN
                .iter()
                .map(|(p, id, cw, mo)| ModelInfo {
                    provider: p.to_string(),
                    id: id.to_string(),
                    context_window: *cw,
                    max_output: *mo,
                    base_url: None,
                    user_added: false,
                })
                .collect(),
        }
    }

    /// Built-ins plus the user's models from `path` (a missing file is fine).
    pub fn load(path: &Path) -> Result<Catalog> {
        let mut cat = Catalog::builtin();
        match std::fs::read(path) {
            Ok(bytes) => {
                let file: UserFile = serde_json::from_slice(&bytes).map_err(|e| {
                    Error::Config(format!("{} is not a valid model list ({e}); fix or delete it", path.display()))
                })?;
                for mut m in file.models {
                    m.user_added = true;
                    cat.upsert(m);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::Config(format!("cannot read {}: {e}", path.display()))),
        }
        Ok(cat)
    }

    /// Writes only the user's models, atomically (temp file + rename).
    pub fn save_user(&self, path: &Path) -> Result<()> {
        let file = UserFile { models: self.models.iter().filter(|m| m.user_added).cloned().collect() };
        let text = serde_json::to_string_pretty(&file).map_err(|e| Error::Config(e.to_string()))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Config(format!("cannot create {}: {e}", dir.display())))?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(|e| Error::Config(format!("cannot write {}: {e}", tmp.display())))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::Config(format!("cannot replace {}: {e}", path.display())))
    }

    /// Adds or replaces a user model after checking it.
    pub fn add_user_model(&mut self, mut m: ModelInfo) -> Result<()> {
        if Wire::parse(&m.provider).is_none() {
            return Err(Error::Config(format!("unknown provider `{}`: use openai, anthropic or gemini", m.provider)));
        }
        if m.id.trim().is_empty() || m.context_window == 0 || m.max_output == 0 {
            return Err(Error::Config("a model needs an id, a context window and an output limit above 0".into()));
        }
        if m.max_output > m.context_window {
            return Err(Error::Config("the output limit cannot be larger than the context window".into()));
        }
        m.user_added = true;
        self.upsert(m);
        Ok(())
    }

    pub fn remove_user_model(&mut self, provider: &str, id: &str) -> bool {
        let before = self.models.len();
        self.models.retain(|m| !(m.user_added && m.provider == provider && m.id == id));
        before != self.models.len()
    }

    pub fn find(&self, provider: &str, id: &str) -> Option<&ModelInfo> {
        // User entries override built-ins of the same name; `upsert` keeps one per key.
        self.models.iter().find(|m| m.provider == provider && m.id == id)
    }

    fn upsert(&mut self, m: ModelInfo) {
        match self.models.iter_mut().find(|x| x.provider == m.provider && x.id == m.id) {
            Some(x) => *x = m,
            None => self.models.push(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn user_models_round_trip_and_override() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("models.json");
        let mut c = Catalog::load(&path).unwrap();
        assert_eq!(c.find("anthropic", "claude-sonnet-4-5").unwrap().context_window, 200_000);
        c.add_user_model(ModelInfo {
            provider: "openai".into(),
            id: "llama3.1:8b".into(),
            context_window: 8192,
            max_output: 2048,
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            user_added: false,
        })
        .unwrap();
        assert!(c
            .add_user_model(ModelInfo {
                provider: "x".into(),
                id: "y".into(),
                context_window: 1,
                max_output: 1,
                base_url: None,
                user_added: true
            })
            .is_err());
        c.save_user(&path).unwrap();
        let c2 = Catalog::load(&path).unwrap();
        let m = c2.find("openai", "llama3.1:8b").unwrap();
        assert!(m.user_added && m.context_window == 8192);
        assert_eq!(c2.models.len(), Catalog::builtin().models.len() + 1);
        std::fs::write(&path, "{oops").unwrap();
        assert!(Catalog::load(&path).unwrap_err().to_string().contains("fix or delete"));
    }
}
