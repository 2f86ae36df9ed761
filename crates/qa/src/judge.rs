//! The `qa-judge` stage: an LLM judge scores every question 1-5 on clarity and correctness,
//! plus reasonableness for multi-hop questions (RARE 3.4, Appendix F). A question is kept only
//! when every score is above the threshold (RARE: 3); the others move to `rejected_questions`
//! with their scores and the dimensions that failed, and are counted as drops
//! (`judge_rejected`) so the stage's funnel adds up. A failed or unusable judgement (a score
//! out of range or not a number, after the LLM layer's re-ask) drops the question with the LLM
//! layer's reason; a transient one is retried by the next run.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::{
    Chunk, ConfigError, Drops, InputSpec, Inputs, OutputSpec, Question, QuestionJudgement,
    RejectedQuestion, ShardKey, StageContext, StageError, StageFacts, StageOutput, StageReport,
    TableKind, TypedStage, stable_id,
};
use noisebench_llm::{Llm, StageTasks};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tasks::{JUDGE_TASKS, QaJudge, QaJudgeInput, QaJudgeOutput};

/// Configuration of the `qa-judge` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeConfig {
    /// A question is kept only when every score is above this (RARE: 3, so 4 and 5 pass).
    #[serde(default = "default_threshold")]
    pub threshold: i64,
}

fn default_threshold() -> i64 {
    3
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            threshold: default_threshold(),
        }
    }
}

/// The dimensions at or below the threshold, e.g. `clarity 3, correctness 2`; empty when kept.
pub(crate) fn failed_dimensions(scores: &QaJudgeOutput, threshold: i64) -> String {
    let mut failed = Vec::new();
    for (name, score) in [
        ("clarity", Some(scores.clarity)),
        ("correctness", Some(scores.correctness)),
        ("reasonableness", scores.reasonableness),
    ] {
        if let Some(s) = score
            && s <= threshold
        {
            failed.push(format!("{name} {s}"));
        }
    }
    failed.join(", ")
}

/// The judge's input for a question: its answer chunks' texts (those the inputs have).
pub(crate) fn judge_input(q: &Question, chunks: &BTreeMap<&str, &Chunk>) -> QaJudgeInput {
    QaJudgeInput {
        question: q.question.clone(),
        answer: q.answer.clone(),
        chunks: q
            .answer_chunk_ids
            .iter()
            .filter_map(|id| chunks.get(id.as_str()).map(|c| c.text.clone()))
            .collect(),
        source_sentences: q.source_sentences.clone(),
        multi_hop: q.kind != "single_hop",
    }
}

/// One judged question: its judgement row and, when rejected, its `rejected_questions` row.
pub fn judged(
    q: &Question,
    scores: &QaJudgeOutput,
    threshold: i64,
    provenance: &str,
) -> (QuestionJudgement, Option<RejectedQuestion>) {
    let failed = failed_dimensions(scores, threshold);
    let judgement = QuestionJudgement {
        id: stable_id("judgement", &[&q.id, provenance]),
        question_id: q.id.clone(),
        clarity: scores.clarity,
        correctness: scores.correctness,
        reasonableness: scores.reasonableness,
        kept: failed.is_empty(),
        provenance: provenance.to_string(),
    };
    let rejected = (!failed.is_empty()).then(|| RejectedQuestion {
        id: q.id.clone(),
        pattern_id: q.pattern_id.clone(),
        kind: q.kind.clone(),
        question: q.question.clone(),
        answer: q.answer.clone(),
        answer_chunk_ids: q.answer_chunk_ids.clone(),
        clarity: scores.clarity,
        correctness: scores.correctness,
        reasonableness: scores.reasonableness,
        threshold,
        reason: failed,
        provenance: provenance.to_string(),
    });
    (judgement, rejected)
}

/// What a run found: the stage's facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct JudgeSummary {
    pub judged: usize,
    pub kept: usize,
    pub rejected: usize,
    pub failed: usize,
    /// `rejected / judged` (RARE filtered 19.69%).
    pub filtered_share: f64,
    pub threshold: i64,
    /// Rejections per failing dimension.
    pub rejected_by: BTreeMap<String, usize>,
    /// Score distributions: dimension -> score -> questions.
    pub scores: BTreeMap<String, BTreeMap<i64, usize>>,
    /// Kept questions per kind.
    pub kept_by_kind: BTreeMap<String, usize>,
}

impl JudgeSummary {
    fn facts(&self) -> StageFacts {
        let mut lines = vec![format!(
            "{} of {} judged questions kept; {} rejected ({:.2}% filtered; RARE filtered 19.69%), threshold: every score above {}.",
            self.kept,
            self.judged,
            self.rejected,
            self.filtered_share * 100.0,
            self.threshold
        )];
        if !self.rejected_by.is_empty() {
            let by: Vec<String> = self
                .rejected_by
                .iter()
                .map(|(d, n)| format!("{d} {n}"))
                .collect();
            lines.push(format!("Rejected for: {}.", by.join(", ")));
        }
        if self.failed > 0 {
            lines.push(format!(
                "{} questions could not be judged (see drops).",
                self.failed
            ));
        }
        for (dim, dist) in &self.scores {
            let d: Vec<String> = dist.iter().map(|(s, n)| format!("{s}: {n}")).collect();
            lines.push(format!("{dim} scores: {}.", d.join(", ")));
        }
        StageFacts::new("Question judge", lines, self)
    }
}

/// The `qa-judge` stage. Build with the run's [`Llm`].
#[derive(Debug, Clone)]
pub struct JudgeStage {
    llm: Llm,
    tasks: StageTasks,
}

impl JudgeStage {
    pub fn new(llm: Llm) -> Self {
        Self {
            tasks: StageTasks::new(llm.clone(), JUDGE_TASKS),
            llm,
        }
    }
}

impl TypedStage for JudgeStage {
    type Config = JudgeConfig;
    const KIND: &'static str = "qa-judge";
    const VERSION: u32 = 1;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec::required("questions", TableKind::Questions),
            InputSpec::required("chunks", TableKind::Chunks),
        ]
    }

    /// One question is one item.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![ShardKey::new("questions", "id")]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec::new("questions", TableKind::Questions),
            OutputSpec::new("question_judgements", TableKind::QuestionJudgements),
            OutputSpec::new("rejected_questions", TableKind::RejectedQuestions),
        ]
    }

    fn validate(&self, c: &JudgeConfig, _root: &Path) -> Result<(), ConfigError> {
        if !(0..=4).contains(&c.threshold) {
            return Err(ConfigError::new(
                "threshold",
                "must be between 0 and 4 (scores are 1-5; a question needs every score above it)",
            ));
        }
        self.tasks.require()
    }

    fn environment(&self) -> serde_json::Value {
        self.tasks.fingerprint()
    }

    fn tasks(&self) -> Vec<&'static str> {
        self.tasks.names()
    }

    fn run(
        &self,
        c: &JudgeConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let mut questions: Vec<Question> = inputs.take("questions")?;
        noisebench_core::sort_by_id(&mut questions);
        let chunks: Vec<Chunk> = inputs.take("chunks")?;
        let by_id: BTreeMap<&str, &Chunk> = chunks.iter().map(|c| (c.id.as_str(), c)).collect();
        let stage = ctx.stage_id.as_str();
        let mut drops = Drops::new(stage);
        let judge_inputs: Vec<QaJudgeInput> =
            questions.iter().map(|q| judge_input(q, &by_id)).collect();
        let bar = ctx
            .progress
            .bar("qa-judge", Some(judge_inputs.len() as u64));
        let answers =
            self.llm
                .run_batch_with_progress::<QaJudge>(stage, judge_inputs, bar.as_ref());
        bar.finish();

        let mut summary = JudgeSummary {
            threshold: c.threshold,
            ..JudgeSummary::default()
        };
        let (mut kept, mut judgements, mut rejected) = (Vec::new(), Vec::new(), Vec::new());
        for (q, answer) in questions.into_iter().zip(answers) {
            let a = match answer {
                Ok(a) => a,
                Err(e) => {
                    summary.failed += 1;
                    drops.add(&q.id, e.as_drop_reason(), e.to_string());
                    continue;
                }
            };
            let provenance = format!("{} (prompt {})", a.provenance, a.prompt_version);
            let (judgement, reject) = judged(&q, &a.value, c.threshold, &provenance);
            summary.judged += 1;
            for (dim, s) in [
                ("clarity", Some(a.value.clarity)),
                ("correctness", Some(a.value.correctness)),
                ("reasonableness", a.value.reasonableness),
            ] {
                if let Some(s) = s {
                    *summary
                        .scores
                        .entry(dim.into())
                        .or_default()
                        .entry(s)
                        .or_default() += 1;
                }
            }
            judgements.push(judgement);
            match reject {
                Some(r) => {
                    for part in r.reason.split(", ") {
                        let dim = part.split(' ').next().unwrap_or(part);
                        *summary.rejected_by.entry(dim.to_string()).or_default() += 1;
                    }
                    drops.add(&q.id, "judge_rejected", r.reason.clone());
                    rejected.push(r);
                }
                None => {
                    *summary.kept_by_kind.entry(q.kind.clone()).or_default() += 1;
                    kept.push(q);
                }
            }
        }
        summary.kept = kept.len();
        summary.rejected = rejected.len();
        summary.filtered_share = if summary.judged == 0 {
            0.0
        } else {
            summary.rejected as f64 / summary.judged as f64
        };
        noisebench_core::sort_by_id(&mut judgements);
        let report = StageReport {
            items_in: (summary.judged + summary.failed) as u64,
            items_out: kept.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput::new(report)
            .with_table("questions", kept)
            .with_table("question_judgements", judgements)
            .with_table("rejected_questions", rejected)
            .with_facts(summary.facts()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_score_must_be_above_the_threshold() {
        let s = |c, k, r| QaJudgeOutput {
            clarity: c,
            correctness: k,
            reasonableness: r,
        };
        assert_eq!(failed_dimensions(&s(4, 5, None), 3), "");
        assert_eq!(failed_dimensions(&s(3, 5, Some(4)), 3), "clarity 3");
        assert_eq!(
            failed_dimensions(&s(5, 2, Some(1)), 3),
            "correctness 2, reasonableness 1"
        );
        assert_eq!(failed_dimensions(&s(3, 3, Some(3)), 2), "");
        let q = Question {
            id: "q1".into(),
            kind: "star_shaped".into(),
            ..Question::default()
        };
        let (j, r) = judged(&q, &s(5, 4, Some(3)), 3, "offline");
        assert!(!j.kept);
        let r = r.unwrap();
        assert_eq!(
            (r.id.as_str(), r.reason.as_str()),
            ("q1", "reasonableness 3")
        );
        let (j, r) = judged(&q, &s(5, 4, Some(4)), 3, "offline");
        assert!(j.kept && r.is_none());
    }
}
