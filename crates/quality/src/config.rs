//! The `[quality]` table of a pipeline file: how the card measures, the mix the maintainer
//! wants, and the gates a version must pass before it is published.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How the quality card is measured and judged (`[quality]` in a pipeline file; every field
/// optional).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QualityConfig {
    /// Jaccard similarity of two texts' word shingles (0 to 1) from which they are
    /// near-duplicates (questions and claims: single words; documents: word 3-grams).
    pub near_duplicate_threshold: f64,
    /// Bootstrap resamples for the 95% interval of Cohen's kappa.
    pub bootstrap: usize,
    /// Seed of the bootstrap and of the sampled disagreements.
    pub seed: u64,
    /// How many examples (disagreements, ungrounded questions, duplicate pairs) the card lists.
    pub samples: usize,
    /// Normalised fuzzy match score (0 to 1) from which an answer or a cited sentence counts
    /// as found in its chunks when it is not there word for word.
    pub fuzzy_threshold: f64,
    /// How deep the BM25 ranking of a question's gold chunk is looked at; deeper is counted
    /// as not found.
    pub rank_depth: usize,
    /// How many questions the lexical shortcut ranks at most: those whose ids hash lowest
    /// (core's `sample_key`, so the same question stays in the sample across builds). Each
    /// question costs a BM25 search of every chunk as deep as its gold chunk; 5,000 give each
    /// share within about 1.4 points (95%). `0`: every question.
    pub shortcut_sample: usize,
    /// The mix the maintainer wants (`[quality.mix]`), compared with the version's.
    pub mix: MixTarget,
    /// Asking the questions with no context (`[quality.closed_book]`).
    pub closed_book: ClosedBookConfig,
    /// The checks run before publishing (`[quality.gates]`).
    pub gates: QualityGates,
}

impl Default for QualityConfig {
    fn default() -> Self {
        Self {
            near_duplicate_threshold: 0.8,
            bootstrap: 1000,
            seed: 0,
            samples: 5,
            fuzzy_threshold: 0.85,
            rank_depth: 100,
            shortcut_sample: 5000,
            mix: MixTarget::default(),
            closed_book: ClosedBookConfig::default(),
            gates: QualityGates::default(),
        }
    }
}

/// The closed-book check: each question asked of the configured model with no context, through
/// the eval layer (task `eval_answer`, judged by `answer_judge`); with the offline backend it
/// does not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ClosedBookConfig {
    /// Ask the questions closed-book before publishing when a model is configured (the
    /// default): one call per question (and a judge call per answer no lexical match decides),
    /// cached like the stages' calls and counted by `quote`. `false`: the card says it did not
    /// run.
    pub enabled: bool,
    /// Ask at most this many questions, a seeded sample (`seed`); none: every question.
    pub max_questions: Option<usize>,
}

impl Default for ClosedBookConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_questions: None,
        }
    }
}

/// Target shares (each table's shares are normalised to sum to 1), by dimension. A dimension
/// left empty has no target and only its actual mix is reported.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MixTarget {
    /// Question kinds: `single_hop`, `chained_multi_hop`, `star_shaped`,
    /// `inverted_star_shaped`.
    pub kinds: BTreeMap<String, f64>,
    /// Report domains of the questions (the first report a question rests on).
    pub domains: BTreeMap<String, f64>,
    /// Claim verdicts (`true`, `false`).
    pub verdicts: BTreeMap<String, f64>,
    /// Document source types (`news`, `social`, ...).
    pub source_types: BTreeMap<String, f64>,
    /// Query and document perturbation kinds.
    pub perturbations: BTreeMap<String, f64>,
}

impl MixTarget {
    /// The targets by dimension name, as the report names the dimensions.
    pub fn dimensions(&self) -> [(&'static str, &BTreeMap<String, f64>); 5] {
        [
            ("kinds", &self.kinds),
            ("domains", &self.domains),
            ("verdicts", &self.verdicts),
            ("source_types", &self.source_types),
            ("perturbations", &self.perturbations),
        ]
    }
}

/// The quality gates: a version that fails one is not published unless `--allow-degraded`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QualityGates {
    /// The largest share of test questions (0 to 1) that may have a near-duplicate in train.
    pub max_cross_split_duplicate_share: f64,
    /// The smallest share of questions (0 to 1) whose answer and cited sentences are found in
    /// their chunks.
    pub min_grounding_share: f64,
    /// The smallest Cohen's kappa between the exam labels and the stance votes, when both
    /// label methods ran on some pairs: the gate fails when the whole bootstrap 95% interval
    /// is below it (kappa alone when there is no interval), so a labeller no better than
    /// chance on a few pairs is not failed by noise.
    pub min_kappa: f64,
}

impl Default for QualityGates {
    fn default() -> Self {
        Self {
            max_cross_split_duplicate_share: 0.5,
            min_grounding_share: 0.8,
            min_kappa: 0.0,
        }
    }
}

/// A `[quality]` table that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("[quality]: {0}")]
pub struct ConfigError(pub String);

impl QualityConfig {
    /// The configuration from a pipeline file's `[quality]` table (none: the defaults), with
    /// its shares and thresholds checked.
    pub fn from_table(table: Option<&toml::Table>) -> Result<Self, ConfigError> {
        let config: QualityConfig = match table {
            Some(t) => t
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError(e.message().to_string()))?,
            None => QualityConfig::default(),
        };
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let unit = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError(format!(
                    "{name} = {v}: must be between 0 and 1"
                )))
            }
        };
        unit("near_duplicate_threshold", self.near_duplicate_threshold)?;
        unit("fuzzy_threshold", self.fuzzy_threshold)?;
        unit(
            "gates.max_cross_split_duplicate_share",
            self.gates.max_cross_split_duplicate_share,
        )?;
        unit("gates.min_grounding_share", self.gates.min_grounding_share)?;
        if !(-1.0..=1.0).contains(&self.gates.min_kappa) {
            return Err(ConfigError(format!(
                "gates.min_kappa = {}: must be between -1 and 1",
                self.gates.min_kappa
            )));
        }
        for (dimension, target) in self.mix.dimensions() {
            for (value, share) in target {
                if !share.is_finite() || *share < 0.0 {
                    return Err(ConfigError(format!(
                        "mix.{dimension}.{value} = {share}: a share is a number of at least 0"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_parses_and_unknown_fields_or_bad_shares_are_refused() {
        let t: toml::Table = toml::from_str(
            "near_duplicate_threshold = 0.7\n[mix.kinds]\nsingle_hop = 0.5\nstar_shaped = 0.5\n[gates]\nmin_kappa = 0.2\n",
        )
        .unwrap();
        let c = QualityConfig::from_table(Some(&t)).unwrap();
        assert_eq!(c.near_duplicate_threshold, 0.7);
        assert_eq!(c.mix.kinds["single_hop"], 0.5);
        assert_eq!(c.gates.min_kappa, 0.2);
        assert_eq!(c.gates.min_grounding_share, 0.8);
        let bad: toml::Table = toml::from_str("threshold = 0.7").unwrap();
        let e = QualityConfig::from_table(Some(&bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains("threshold"), "{e}");
        let bad: toml::Table = toml::from_str("[mix.kinds]\nsingle_hop = -1").unwrap();
        let e = QualityConfig::from_table(Some(&bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains("mix.kinds.single_hop"), "{e}");
        assert_eq!(
            QualityConfig::from_table(None).unwrap(),
            QualityConfig::default()
        );
    }
}
