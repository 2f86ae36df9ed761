//! The layers a pipeline's stages share (one `Llm`, one `Web`), built from its `[llm]` and
//! `[web]` tables; the stages are wired to them in [`crate::registry`].

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use noisebench_llm::Llm;
use noisebench_pipeline::PipelineFile;
use noisebench_web::Web;

/// Where a live run archives fetched responses when `[web] archive_dir` is not set.
pub(crate) const DEFAULT_ARCHIVE_DIR: &str = "work/archive";

/// The layers a pipeline's stages share, built from its `[llm]` and `[web]` tables.
#[derive(Clone)]
pub struct Layers {
    pub llm: Llm,
    pub web: Arc<Web>,
}

/// Command-line overrides of the `[llm]` table.
#[derive(Debug, Clone, Default)]
pub struct LlmOverrides {
    /// `--max-cost`: stop issuing new calls once the estimated cost reaches this (USD).
    pub max_cost: Option<f64>,
    /// `--cache-only`: answer only from the LLM cache; a miss fails the item (reproducibility).
    pub cache_only: bool,
    /// `merge`: a live web layer serves pages only from its archive (what the shards fetched)
    /// and fetches nothing.
    pub archive_only: bool,
}

impl Layers {
    /// Build the layers of a pipeline file. Errors name the table and field.
    pub fn of(file: &PipelineFile, root: &Path, overrides: &LlmOverrides) -> Result<Layers> {
        let mut llm_table = match &file.llm {
            Some(t) => serde_json::to_value(t).context("[llm]")?,
            None => serde_json::Value::Object(Default::default()),
        };
        if let Some(obj) = llm_table.as_object_mut() {
            if let Some(max) = overrides.max_cost {
                obj.insert("max_cost".into(), serde_json::json!(max));
            }
            if overrides.cache_only {
                let cache = obj.entry("cache").or_insert_with(|| serde_json::json!({}));
                if let Some(cache) = cache.as_object_mut() {
                    cache.insert("mode".into(), serde_json::json!("cache-only"));
                }
            }
        }
        let llm = Llm::from_value(&llm_table, root).map_err(|e| anyhow::anyhow!("[llm]: {e}"))?;
        let mut web_table = match &file.web {
            Some(t) => serde_json::to_value(t).context("[web]")?,
            None => serde_json::Value::Object(Default::default()),
        };
        // A live run keeps every response it fetched (work/archive/, docs/web.md) unless the file
        // says where else; replay never fetches.
        if let Some(obj) = web_table.as_object_mut()
            && !obj.contains_key("archive_dir")
            && obj.get("mode").and_then(|m| m.as_str()) != Some("replay")
        {
            obj.insert("archive_dir".into(), serde_json::json!(DEFAULT_ARCHIVE_DIR));
        }
        let web = if overrides.archive_only {
            let config = noisebench_web::WebConfig::from_value(&web_table)
                .map_err(|e| anyhow::anyhow!("[web]: {e}"))?;
            Web::archive_only(config, root)
        } else {
            Web::from_value(&web_table, root)
        }
        .map_err(|e| anyhow::anyhow!("[web]: {e}"))?;
        Ok(Layers {
            llm,
            web: Arc::new(web),
        })
    }
}
