//! The `splits` stage: `test` or `train` for every question, per pattern kind, decided by a
//! seeded hash of the question id alone.
//!
//! Why a share and not a count: a split that depends only on the question's own id never moves
//! an existing question when a refresh adds others, and no rule can give both that and an exact
//! test count. Take a test count of one: {a} puts a in test, {b} puts b in test, so {a, b}
//! must put both in test, or move one. So the configuration gives each kind the share of its
//! questions that go to test (the hash, read as a number in [0, 1), is below the share); to
//! reach RARE's counts (1,000 single-hop and about 1,000 multi-hop test questions per domain),
//! set the share to the count over the expected number of questions, and the stage's facts
//! print the counts it gave.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::{
    ConfigError, InputSpec, Inputs, OutputSpec, Question, QuestionSplit, StageContext, StageError,
    StageFacts, StageOutput, StageReport, TableKind, TypedStage, stable_id,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Configuration of the `splits` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitsConfig {
    /// Seed of the hash: a different seed is a different (equally stable) split.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Share of each kind's questions that go to `test`, by kind (`single_hop`,
    /// `chained_multi_hop`, `star_shaped`, `inverted_star_shaped`); kinds left out use
    /// `default_test_share`.
    #[serde(default)]
    pub test_share: BTreeMap<String, f64>,
    /// Share of a kind's questions that go to `test` when `test_share` does not name the kind.
    #[serde(default = "default_share")]
    pub default_test_share: f64,
}

fn default_seed() -> u64 {
    42
}
fn default_share() -> f64 {
    0.5
}

impl Default for SplitsConfig {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({}))
            .unwrap_or_else(|_| unreachable!("all fields have defaults"))
    }
}

impl SplitsConfig {
    /// The test share of a kind.
    pub fn share(&self, kind: &str) -> f64 {
        self.test_share
            .get(kind)
            .copied()
            .unwrap_or(self.default_test_share)
    }
}

/// The question's position in [0, 1) under the seed: the first 8 bytes of
/// `sha256("<seed>:<question id>")` over 2^64.
pub fn position(seed: u64, question_id: &str) -> f64 {
    let digest = Sha256::digest(format!("{seed}:{question_id}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) as f64 / 18_446_744_073_709_551_616.0
}

/// The split of one question: `test` when its position is below its kind's share.
pub fn split_of(config: &SplitsConfig, question_id: &str, kind: &str) -> &'static str {
    if position(config.seed, question_id) < config.share(kind) {
        "test"
    } else {
        "train"
    }
}

/// Split rows for questions, sorted by id.
pub fn assign(config: &SplitsConfig, questions: &[Question]) -> Vec<QuestionSplit> {
    let mut rows: Vec<QuestionSplit> = questions
        .iter()
        .map(|q| QuestionSplit {
            id: stable_id("split", &[&q.id]),
            question_id: q.id.clone(),
            kind: q.kind.clone(),
            split: split_of(config, &q.id, &q.kind).to_string(),
        })
        .collect();
    noisebench_core::sort_by_id(&mut rows);
    rows
}

/// What a run gave: questions per kind and split.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct SplitsSummary {
    pub seed: u64,
    /// kind -> split -> questions.
    pub counts: BTreeMap<String, BTreeMap<String, usize>>,
}

impl SplitsSummary {
    fn facts(&self) -> StageFacts {
        let mut lines = vec![format!(
            "Splits by a hash of each question id (seed {}): a refresh never moves a question.",
            self.seed
        )];
        for (kind, by) in &self.counts {
            lines.push(format!(
                "{kind}: test {}, train {}.",
                by.get("test").copied().unwrap_or(0),
                by.get("train").copied().unwrap_or(0)
            ));
        }
        StageFacts::new("Splits", lines, self)
    }
}

/// The `splits` stage.
#[derive(Debug, Clone, Copy, Default)]
pub struct SplitsStage;

impl TypedStage for SplitsStage {
    type Config = SplitsConfig;
    const KIND: &'static str = "splits";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("questions", TableKind::Questions)]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new(
            "question_splits",
            TableKind::QuestionSplits,
        )]
    }

    fn validate(&self, c: &SplitsConfig, _root: &Path) -> Result<(), ConfigError> {
        let ok = |s: f64| (0.0..=1.0).contains(&s);
        if !ok(c.default_test_share) {
            return Err(ConfigError::new(
                "default_test_share",
                "must be between 0 and 1",
            ));
        }
        if let Some((kind, _)) = c.test_share.iter().find(|(_, s)| !ok(**s)) {
            return Err(ConfigError::new(
                format!("test_share.{kind}"),
                "must be between 0 and 1",
            ));
        }
        Ok(())
    }

    fn run(
        &self,
        c: &SplitsConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let questions: Vec<Question> = inputs.take("questions")?;
        let rows = assign(c, &questions);
        let mut summary = SplitsSummary {
            seed: c.seed,
            ..SplitsSummary::default()
        };
        for r in &rows {
            *summary
                .counts
                .entry(r.kind.clone())
                .or_default()
                .entry(r.split.clone())
                .or_default() += 1;
        }
        let report = StageReport {
            items_in: questions.len() as u64,
            items_out: rows.len() as u64,
            drops: Vec::new(),
        };
        Ok(StageOutput::new(report)
            .with_table("question_splits", rows)
            .with_facts(summary.facts()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn q(id: &str, kind: &str) -> Question {
        Question {
            id: id.into(),
            kind: kind.into(),
            ..Question::default()
        }
    }

    #[test]
    fn shares_are_per_kind_and_roughly_met() {
        let mut c = SplitsConfig::default();
        c.test_share.insert("single_hop".into(), 0.2);
        let qs: Vec<Question> = (0..2000)
            .map(|i| {
                q(
                    &format!("q{i}"),
                    if i % 2 == 0 {
                        "single_hop"
                    } else {
                        "star_shaped"
                    },
                )
            })
            .collect();
        let rows = assign(&c, &qs);
        let test = |kind: &str| {
            rows.iter()
                .filter(|r| r.kind == kind && r.split == "test")
                .count()
        };
        assert!(
            (150..250).contains(&test("single_hop")),
            "{}",
            test("single_hop")
        );
        assert!(
            (430..570).contains(&test("star_shaped")),
            "{}",
            test("star_shaped")
        );
    }

    proptest! {
        /// A refresh that adds questions never moves an existing one between splits.
        #[test]
        fn adding_questions_never_moves_one(
            old in proptest::collection::btree_set("[a-z0-9]{1,12}", 0..60),
            new in proptest::collection::btree_set("[a-z0-9]{1,12}", 0..60),
            seed in any::<u64>(),
            share in 0.0f64..=1.0,
        ) {
            let c = SplitsConfig { seed, default_test_share: share, ..SplitsConfig::default() };
            let before: Vec<Question> = old.iter().map(|id| q(id, "single_hop")).collect();
            let after: Vec<Question> =
                old.iter().chain(&new).map(|id| q(id, "single_hop")).collect();
            let a: BTreeMap<String, String> =
                assign(&c, &before).into_iter().map(|r| (r.question_id, r.split)).collect();
            let b: BTreeMap<String, String> =
                assign(&c, &after).into_iter().map(|r| (r.question_id, r.split)).collect();
            for (id, split) in &a {
                prop_assert_eq!(Some(split), b.get(id));
            }
        }
    }
}
