//! The `labels` stage of the claims track: for every claim-document pair, whether the document
//! supports the claim's gold verdict, misleads away from it, or does not help (RAGuard's LLM
//! exam), how three stance prompts vote on it (CONF-FACT), which claims have conflicting
//! evidence, and how credible each document's source is (a user table of domains, with an LLM
//! fallback marked `generated`; a table of its own, `document_credibility`, since `documents`
//! is the `documents` stage's). A review sheet goes out for humans and comes back in; human
//! labels take precedence, and agreement is measured with Cohen's kappa and Krippendorff's
//! alpha. The releases' formats, and the `export-raguard` and `export-confact` stages that
//! write the resulting rows as the releases do, are `noisebench-releases`'.
//!
//! What this crate is not: it fetches nothing and searches nothing (documents come from the
//! `documents` stage), writes no Parquet (the runner does), and talks to models only through
//! `noisebench-llm`'s tasks and prompts.
//!
//! Stages: [`LabelStage`] (`labels`).
//!
//! # Modules
//!
//! The `labels` stage (`LabelStage::new(llm)`, in `lib.rs`, whose `run` calls one module per step):
//! `credibility.rs` (domain table with an LLM fallback, one `document_credibility` row per
//! document: `documents` stays the `documents` stage's), `pairs.rs` (the claim-document pairs to
//! label, and the links that cannot be one), `exam.rs` (RAGuard's exam and prompt variants, and
//! asking it), `stance.rs` (CONF-FACT's three-prompt vote, and asking it), `assemble.rs` (one label
//! row per pair from the answers, the failed calls kept per pair until then: a transient one drops
//! the pair for the next run, a permanent one is recorded beside its row), `failures.rs`
//! (`CallFailures`: the failed calls per pair that `exam`, `stance` and `assemble` share, a leaf
//! module so they import no circle), `tasks.rs` (its LLM tasks: the stance votes and `credibility`
//! with their offline rules, and its wiring of `exam_verdict`; the exam and the votes keep the
//! model's reply and read it with core's `vocab`), `conflicts.rs`, `review.rs` (review sheet out
//! and back in), `agreement.rs` (Cohen's kappa, Krippendorff's alpha), `summary.rs` (the labels
//! stage's facts and how the card phrases them). The RAGuard and CONF-FACT exports are
//! `noisebench-releases`' (re-exported here as `export_raguard`, `export_confact`). Invariant: one
//! `labels` row per claim-document pair that got an answer, a human label taking precedence over
//! the model's; a pair with a transient failure is left for the next run, whole.

mod agreement;
mod assemble;
mod conflicts;
mod credibility;
mod exam;
mod failures;
mod pairs;
mod review;
mod stance;
mod summary;
mod tasks;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use noisebench_core::{
    Claim, ClaimDocument, ConfigError, Document, Drops, InputSpec, Inputs, OutputSpec, ShardKey,
    SideFile, StageContext, StageError, StageFacts, StageOutput, StageReport, TableKind,
    TypedStage,
};
use noisebench_llm::{Llm, StageTasks, TaskInfo};
use serde::{Deserialize, Serialize};

use assemble::Provenance;
use failures::CallFailures;

pub use agreement::{Agreement, cohen_kappa, krippendorff_alpha_nominal};
pub use conflicts::conflicts;
pub use credibility::{CredibilityConfig, DomainTable, Fallback};
pub use exam::{ExamConfig, ExamVariant, LabelPreset};
// The RAGuard and CONF-FACT formats live in `noisebench-releases`. Re-exported under their
// old names.
pub use noisebench_core::vocab::{final_answer, stance_in_reply, verdict_in_reply};
pub use noisebench_releases::confact::{EXPORT_FILE as CONFACT_FILE, export as export_confact};
pub use noisebench_releases::raguard::{RAGUARD_FILES, export as export_raguard};
pub use noisebench_releases::{ExportSummary, SkippedPair};
pub use review::{
    REVIEW_SHEET, ReviewConfig, ReviewOutcome, ReviewRow, apply_review, read_sheet, review_sheet,
    write_sheet,
};
pub use stance::{StanceConfig, majority_stance};
pub use summary::{LabelFacts, label_facts};
pub use tasks::{ExamVerdict, StanceReasoned, StanceText, StanceUrl, TASKS};

/// What happens to a document with no text (a Reddit link post, a removed body, an empty page).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EmptyDocuments {
    /// The exam sees the title alone (no title: as `irrelevant`); the stance has the URL vote only.
    #[default]
    TitleOnly,
    /// Labelled irrelevant without asking the exam; the stance has the URL vote only.
    Irrelevant,
    /// The pair is dropped (reason `empty_document`).
    Drop,
}

/// `[stages.<id>.config]` of a `labels` stage. Every field has a default.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LabelConfig {
    /// Label words: `default` (supporting, misleading, irrelevant) or `raguard` (... unrelated).
    pub preset: LabelPreset,
    /// RAGuard's exam: the model judges the claim from one document alone.
    pub exam: ExamConfig,
    /// CONF-FACT's stance vote: the URL, the text, the text with reasoning first.
    pub stance: StanceConfig,
    /// Source credibility: a domain table, with a fallback for domains it does not list.
    pub credibility: CredibilityConfig,
    /// What happens to a document with no text (a link post, a removed body, an empty page).
    pub empty_documents: EmptyDocuments,
    /// The human review sheet: its export, and a filled-in sheet to import.
    pub review: ReviewConfig,
}

/// The `labels` stage: inputs `claims`, `documents`, `claim_documents`; outputs `labels` (main),
/// `document_credibility` (one row per input document) and `conflicts`; its facts (label
/// distribution, models, conflicts, credibility, review agreement) go to the record and the
/// card. With `review.export` it also writes `review_sheet.csv` into its stage directory.
///
/// `run` goes concept by concept: credibility (`credibility`), the pairs to label (`pairs`),
/// the exam (`exam`) and the stance vote (`stance`), one row per pair with the calls that
/// failed (`assemble`), the human review (`review`), conflicts and facts.
pub struct LabelStage {
    llm: Llm,
    tasks: StageTasks,
}

impl LabelStage {
    /// `llm` is the run's handle, built once from the pipeline's `[llm]` table.
    pub fn new(llm: Llm) -> Self {
        Self {
            tasks: StageTasks::new(llm.clone(), tasks::TASKS),
            llm,
        }
    }

    fn tasks_used(&self, config: &LabelConfig) -> Vec<TaskInfo> {
        let mut t = Vec::new();
        if config.exam.enabled {
            t.push(TaskInfo::of::<tasks::ExamVerdict>());
        }
        if config.stance.enabled {
            t.extend([
                TaskInfo::of::<tasks::StanceUrl>(),
                TaskInfo::of::<tasks::StanceText>(),
                TaskInfo::of::<tasks::StanceReasoned>(),
            ]);
        }
        if config.credibility.fallback == Fallback::Llm {
            t.push(TaskInfo::of::<tasks::Credibility>());
        }
        t
    }

    /// `(task, provenance, prompt version)` per task used.
    fn task_facts(&self, config: &LabelConfig) -> Vec<(String, String, String)> {
        self.tasks_used(config)
            .into_iter()
            .map(|t| {
                (
                    t.name.to_string(),
                    self.llm.provenance(t.name),
                    self.llm.prompt_version(t).unwrap_or_default(),
                )
            })
            .collect()
    }
}

impl TypedStage for LabelStage {
    type Config = LabelConfig;
    const KIND: &'static str = "labels";
    // 2: credibility in `document_credibility`, no re-emitted `documents`.
    const VERSION: u32 = 2;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec::required("claims", TableKind::Claims),
            InputSpec::required("documents", TableKind::Documents),
            InputSpec::required("claim_documents", TableKind::ClaimDocuments),
        ]
    }

    /// One document is one item: its credibility and every (claim, document) pair it is in.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![
            ShardKey::new("documents", "id"),
            ShardKey::new("claim_documents", "document_id"),
        ]
    }

    /// A claim's conflicts weigh all its documents, which sit in several shards.
    fn gathered_outputs(&self) -> Vec<&'static str> {
        vec!["conflicts"]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec::new("labels", TableKind::Labels),
            OutputSpec::new("document_credibility", TableKind::DocumentCredibility),
            OutputSpec::new("conflicts", TableKind::Conflicts),
        ]
    }

    fn files(&self, config: &LabelConfig) -> Vec<SideFile> {
        if config.review.export {
            vec![SideFile::new(REVIEW_SHEET)]
        } else {
            Vec::new()
        }
    }

    fn validate(&self, config: &LabelConfig, root: &Path) -> Result<(), ConfigError> {
        if !config.exam.enabled && !config.stance.enabled {
            return Err(ConfigError::new(
                "exam.enabled",
                "the exam and the stance vote are both disabled: nothing to label",
            ));
        }
        if config.exam.enabled && config.exam.variants.is_empty() {
            return Err(ConfigError::new(
                "exam.variants",
                "at least one variant is needed",
            ));
        }
        let distinct: BTreeSet<_> = config.exam.variants.iter().collect();
        if distinct.len() != config.exam.variants.len() {
            return Err(ConfigError::new(
                "exam.variants",
                "a variant is listed twice (the same prompt would vote twice from the cache)",
            ));
        }
        for (field, v) in [
            ("exam.max_document_chars", config.exam.max_document_chars),
            ("exam.head_words", config.exam.head_words),
            (
                "stance.max_document_chars",
                config.stance.max_document_chars,
            ),
        ] {
            if v == 0 {
                return Err(ConfigError::new(field, "must be at least 1"));
            }
        }
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                root.join(p)
            }
        };
        if let Some(t) = &config.credibility.table {
            DomainTable::load(&resolve(t))
                .map_err(|e| ConfigError::new("credibility.table", e.to_string()))?;
        }
        if let Some(s) = &config.review.import {
            read_sheet(&resolve(s))
                .map_err(|e| ConfigError::new("review.import", e.to_string()))?;
        }
        // The prompts of the tasks this configuration calls must be there before any work.
        self.tasks.require_only(&self.tasks_used(config))
    }

    fn external_files(&self, config: &LabelConfig, root: &Path) -> Vec<PathBuf> {
        [&config.credibility.table, &config.review.import]
            .into_iter()
            .flatten()
            .map(|p| {
                if p.is_absolute() {
                    p.clone()
                } else {
                    root.join(p)
                }
            })
            .collect()
    }

    fn environment(&self) -> serde_json::Value {
        self.tasks.fingerprint()
    }

    fn tasks(&self) -> Vec<&'static str> {
        self.tasks.names()
    }

    fn run(
        &self,
        config: &LabelConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let claims: Vec<Claim> = inputs.take("claims")?;
        let documents: Vec<Document> = inputs.take("documents")?;
        let links: Vec<ClaimDocument> = inputs.take("claim_documents")?;
        let mut drops = Drops::new(&ctx.stage_id);

        let credibility = credibility::rate_documents(
            &self.llm,
            &config.credibility,
            &documents,
            ctx,
            &mut drops,
        )?;
        let pairs = pairs::pairs(config, &claims, &documents, &links, &mut drops);
        let mut failures = CallFailures::default();
        let exam = exam::ask(&self.llm, &config.exam, &pairs, ctx, &mut failures);
        let stance = stance::ask(&self.llm, &config.stance, &pairs, ctx, &mut failures);
        let tasks = self.task_facts(config);
        let mut labels = assemble::label_rows(
            config,
            &pairs,
            &exam,
            &stance,
            &failures,
            &Provenance::of_tasks(&tasks),
            &mut drops,
        );
        let review =
            review::import_sheet(&config.review, config.preset, ctx, &mut labels, &mut drops)?;
        review::export_sheet(&config.review, ctx, &claims, &documents, &labels)?;

        let conflict_rows = conflicts(&claims, &labels);
        let facts = label_facts(&labels, &conflict_rows, &credibility, &tasks, review);
        let facts = StageFacts::new("How the labels were made", facts.card_lines(), &facts);
        let mut out = StageOutput::new(StageReport {
            items_in: links.len() as u64,
            items_out: labels.len() as u64,
            drops: drops.into_records(),
        })
        .with_facts(facts)
        .with_table("labels", labels)
        .with_table("document_credibility", credibility)
        .with_table("conflicts", conflict_rows);
        out.report.drops.sort();
        Ok(out)
    }
}
