//! The environment variables a pipeline reads its keys from (`[llm]` models' `api_key_env`, the
//! search backends' key variables): all checked before anything runs, and every unset one named
//! at once, so that a maintainer sets them in one go. `check` still prints the plan without
//! them ([`crate::check`]).
//!
//! What this module is not: a reader of keys. It asks only whether a variable is set; values
//! stay in the environment and are never copied, printed or logged.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use noisebench_llm::{Llm, LlmConfig};
use noisebench_pipeline::PipelineFile;
use noisebench_web::{Web, WebConfig};

use crate::layers::Layers;
use crate::registry::registry;

/// One key variable that is not set: where the pipeline names it, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingKey {
    /// `llm.models.gpt.api_key_env`, or ``stage `search`, config field `backends[0].cx_env` ``.
    pub field: String,
    /// `OPENAI_API_KEY`.
    pub variable: String,
}

/// Key variables a pipeline needs that are not set; with the plan `check` printed without them.
#[derive(Debug)]
pub struct MissingKeys {
    pub missing: Vec<MissingKey>,
    /// `check`'s description of the pipeline, loaded without the missing keys.
    pub plan: Option<String>,
}

impl std::fmt::Display for MissingKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.missing.len();
        write!(
            f,
            "{n} environment variable{} the pipeline reads keys from {} not set (set {}; keys are read only from the environment):",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            if n == 1 { "it" } else { "them all" },
        )?;
        for m in &self.missing {
            write!(f, "\n  {} ({})", m.variable, m.field)?;
        }
        Ok(())
    }
}

impl std::error::Error for MissingKeys {}

/// Whether `variable` is unset or blank (what the layers that read it refuse).
fn unset(variable: &str) -> bool {
    std::env::var(variable).map_or(true, |v| v.trim().is_empty())
}

/// Every key variable the pipeline names that is unset: the `[llm]` models' first, then each
/// stage's in id order. An `[llm]` table that does not parse names none here (loading it reports
/// what is wrong).
pub fn missing_keys(file: &PipelineFile, root: &Path) -> Result<Vec<MissingKey>> {
    let mut missing = Vec::new();
    if let Some(table) = &file.llm
        && let Ok(config) = LlmConfig::from_value(&serde_json::to_value(table)?)
    {
        for (name, model) in &config.models {
            if let Some(var) = &model.api_key_env
                && unset(var)
            {
                missing.push(MissingKey {
                    field: format!("llm.models.{name}.api_key_env"),
                    variable: var.clone(),
                });
            }
        }
    }
    // The stages declare their variables from their configuration alone: an offline LLM and a
    // web layer that fetches nothing build them.
    let web = Web::new(WebConfig::default(), root).context("building a web layer")?;
    let layers = Layers {
        llm: Llm::offline(),
        web: Arc::new(web),
    };
    let registry = registry(&layers);
    for (id, entry) in &file.stages {
        let Some(stage) = registry.get(&entry.kind) else {
            continue;
        };
        let config = serde_json::to_value(&entry.config)?;
        for (field, var) in stage.secret_variables(&config) {
            if unset(&var) {
                missing.push(MissingKey {
                    field: format!("stage `{id}`, config field `{field}`"),
                    variable: var,
                });
            }
        }
    }
    Ok(missing)
}

/// `file` with the `[llm]` models whose key variable is unset made keyless, so that `check` can
/// load and describe the pipeline (it sends nothing) before naming the missing keys.
pub fn without_missing_llm_keys(file: &mut PipelineFile, missing: &[MissingKey]) {
    let Some(models) = file
        .llm
        .as_mut()
        .and_then(|t| t.get_mut("models"))
        .and_then(|m| m.as_table_mut())
    else {
        return;
    };
    for (name, model) in models.iter_mut() {
        let field = format!("llm.models.{name}.api_key_env");
        if missing.iter().any(|m| m.field == field)
            && let Some(model) = model.as_table_mut()
        {
            model.remove("api_key_env");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> PipelineFile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, text).unwrap();
        PipelineFile::load(&path).unwrap()
    }

    const PIPELINE: &str = r#"
[pipeline]
name = "keys"

[llm]
backend = "openai"
model = "a"
[llm.models.a]
name = "m"
api_key_env = "NB_KEYS_TEST_SURELY_UNSET_A"
endpoints = [{ name = "e", url = "http://127.0.0.1:1/v1" }]
[llm.models.b]
name = "m"
api_key_env = "PATH"
endpoints = [{ name = "e", url = "http://127.0.0.1:1/v1" }]

[stages.search]
kind = "search"
[[stages.search.config.backends]]
type = "google"
api_key_env = "NB_KEYS_TEST_SURELY_UNSET_G"
cx_env = "PATH"
[[stages.search.config.backends]]
type = "reddit"
client_id_env = "NB_KEYS_TEST_SURELY_UNSET_R1"
client_secret_env = "NB_KEYS_TEST_SURELY_UNSET_R2"
"#;

    #[test]
    fn every_unset_key_is_named_with_its_field_and_set_ones_are_not() {
        let file = file(PIPELINE);
        let missing = missing_keys(&file, Path::new(".")).unwrap();
        let named: Vec<(&str, &str)> = missing
            .iter()
            .map(|m| (m.field.as_str(), m.variable.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("llm.models.a.api_key_env", "NB_KEYS_TEST_SURELY_UNSET_A"),
                (
                    "stage `search`, config field `backends[0].api_key_env`",
                    "NB_KEYS_TEST_SURELY_UNSET_G"
                ),
                (
                    "stage `search`, config field `backends[1].client_id_env`",
                    "NB_KEYS_TEST_SURELY_UNSET_R1"
                ),
                (
                    "stage `search`, config field `backends[1].client_secret_env`",
                    "NB_KEYS_TEST_SURELY_UNSET_R2"
                ),
            ]
        );
        let text = MissingKeys {
            missing,
            plan: None,
        }
        .to_string();
        assert!(
            text.starts_with("4 environment variables the pipeline reads keys from are not set"),
            "{text}"
        );
        assert!(
            text.contains("\n  NB_KEYS_TEST_SURELY_UNSET_R2 (stage `search`"),
            "{text}"
        );
    }

    #[test]
    fn only_the_models_with_a_missing_key_lose_it() {
        let mut f = file(PIPELINE);
        let missing = missing_keys(&f, Path::new(".")).unwrap();
        without_missing_llm_keys(&mut f, &missing);
        let models = f.llm.as_ref().unwrap()["models"].as_table().unwrap();
        assert!(models["a"].get("api_key_env").is_none());
        assert_eq!(models["b"]["api_key_env"].as_str(), Some("PATH"));
    }
}
