//! The two reference systems the evaluation can run in place of the plain generator, each a
//! [`Generator`] over the same [`crate::Ask`]s:
//!
//! - [`Astute`] (Astute RAG, Algorithm 1): the model first writes passages from its own
//!   knowledge, then consolidates them with the given passages, source-aware, for `t - 1`
//!   rounds, then answers from the initial and the consolidated sets.
//! - [`CounterRefine`] (CounterRefine, section 3): a draft answer from the given passages, extra
//!   retrieval conditioned on that draft, and a KEEP/REVISE gate whose revisions pass a
//!   deterministic validator (`validate_revision`) before they replace the draft.
//!
//! Both batch each step over all asks (one `run_batch` per step, the loop in `steps`), so a
//! step's calls run concurrently; a failed call fails its ask only. Each module's doc lists the
//! offline rules of its tasks. This module is not a task: it does not build asks or score
//! answers.

pub mod astute;
pub mod counterrefine;
mod steps;

use serde::{Deserialize, Serialize};

pub use astute::{Astute, AstuteConfig};
pub use counterrefine::{CounterRefine, CounterRefineConfig, Rejection};

use crate::generate::{Generator, Plain};

/// The names [`by_name`] knows.
pub const NAMES: &[&str] = &["plain", "astute", "counterrefine"];

/// Configuration of the reference systems (the plain generator has none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SystemsConfig {
    /// Astute RAG: consolidation rounds and how many passages the model may write itself.
    pub astute: AstuteConfig,
    /// CounterRefine: retrieval depths and the revision validator's thresholds.
    pub counterrefine: CounterRefineConfig,
}

/// A configuration value out of its range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("systems.{field}: {message}")]
pub struct SystemsConfigError {
    /// The field's path under `systems` (`astute.iterations`).
    pub field: String,
    pub message: String,
}

impl SystemsConfig {
    /// Checks every field's range; call it before any work.
    pub fn validate(&self) -> Result<(), SystemsConfigError> {
        self.astute.validate()?;
        self.counterrefine.validate()
    }
}

/// The generator called `name` (`plain`, `astute`, `counterrefine`), configured from `config`;
/// `None` for another name. The configuration is taken as given: [`SystemsConfig::validate`]
/// it first.
pub fn by_name(name: &str, config: &SystemsConfig) -> Option<Box<dyn Generator>> {
    match name {
        "plain" => Some(Box::new(Plain)),
        "astute" => Some(Box::new(Astute {
            config: config.astute.clone(),
        })),
        "counterrefine" => Some(Box::new(CounterRefine {
            config: config.counterrefine.clone(),
        })),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_its_generator() {
        let config = SystemsConfig::default();
        for name in NAMES {
            assert_eq!(by_name(name, &config).map(|g| g.name()), Some(*name));
        }
        assert!(by_name("astute-rag", &config).is_none());
    }

    #[test]
    fn the_configuration_has_defaults_and_ranges() {
        let config: SystemsConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(config, SystemsConfig::default());
        assert_eq!(config.astute.iterations, 2);
        assert_eq!(config.astute.max_internal_passages, 2);
        assert_eq!(config.counterrefine.k_base, 5);
        assert_eq!(config.counterrefine.k_refine, 5);
        assert_eq!(config.counterrefine.min_overlap, 0.5);
        assert_eq!(config.counterrefine.max_answer_words, 8);
        config.validate().unwrap();
        let bad: SystemsConfig =
            serde_json::from_value(serde_json::json!({"astute": {"iterations": 4}})).unwrap();
        assert_eq!(bad.validate().unwrap_err().field, "astute.iterations");
        let bad: SystemsConfig =
            serde_json::from_value(serde_json::json!({"counterrefine": {"min_overlap": 1.5}}))
                .unwrap();
        assert_eq!(
            bad.validate().unwrap_err().field,
            "counterrefine.min_overlap"
        );
        assert!(
            serde_json::from_value::<SystemsConfig>(serde_json::json!({"astute": {"t": 2}}))
                .is_err()
        );
    }
}
