//! The `labels` stage of the claims track: for every claim-document pair, whether the document
//! supports the claim's gold verdict, misleads away from it, or does not help (RAGuard's LLM
//! exam), how three stance prompts vote on it (CONF-FACT), which claims have conflicting
//! evidence, and how credible each document's source is (a user table of domains, with an LLM
//! fallback marked `generated`). A review sheet goes out for humans and comes back in; human
//! labels take precedence, and agreement is measured with Cohen's kappa and Krippendorff's
//! alpha. RAGuard- and CONFACT-shaped exports are pure functions over the resulting rows
//! ([`export`]), also run as the stages `export-raguard` and `export-confact`.
//!
//! What this crate is not: it fetches nothing and searches nothing (documents come from the
//! `documents` stage), writes no Parquet (the runner does), and talks to models only through
//! `noisebench-llm`'s tasks and prompts.
//!
//! Stages: [`LabelStage`] (`labels`), [`ExportRaguardStage`] (`export-raguard`),
//! [`ExportConfactStage`] (`export-confact`).

pub mod agreement;
pub mod conflicts;
pub mod credibility;
pub mod exam;
pub mod export;
pub mod review;
pub mod stance;
pub mod summary;
pub mod tasks;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use noisebench_core::vocab::{Stance, Verdict};
use noisebench_core::{
    Claim, ClaimDocument, ClaimDocumentLabel, ConfigError, Document, Drops, InputSpec, Inputs,
    OutputSpec, Query, SideFile, StageContext, StageError, StageFacts, StageOutput, StageReport,
    TableKind, TypedStage, is_transient_reason, stable_id,
};
use noisebench_llm::TaskInfo;
use noisebench_llm::{Answer, Llm, LlmError};
use serde::Deserialize;

pub use agreement::{Agreement, cohen_kappa, krippendorff_alpha_nominal};
pub use conflicts::conflicts;
pub use credibility::{CredibilityConfig, DomainTable, Fallback};
pub use exam::{ExamConfig, ExamVariant, LabelPreset};
pub use export::{
    CONFACT_FILE, ExportSummary, RAGUARD_FILES, SkippedPair, export_confact, export_raguard,
};
pub use noisebench_core::vocab::{final_answer, stance_in_reply, verdict_in_reply};
pub use review::{ReviewConfig, ReviewOutcome, ReviewRow, apply_review, read_sheet, review_sheet};
pub use stance::{StanceConfig, majority_stance};
pub use summary::{LabelFacts, label_facts};

/// What happens to a document with no text (a Reddit link post, a removed body, an empty page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
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
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LabelConfig {
    /// Label words: `default` (supporting, misleading, irrelevant) or `raguard` (... unrelated).
    pub preset: LabelPreset,
    pub exam: ExamConfig,
    pub stance: StanceConfig,
    pub credibility: CredibilityConfig,
    pub empty_documents: EmptyDocuments,
    pub review: ReviewConfig,
}

/// The `labels` stage: inputs `claims`, `documents`, `claim_documents`; outputs `labels` (main),
/// `documents` (with credibility) and `conflicts`; its facts (label distribution, models,
/// conflicts, credibility, review agreement) go to the record and the card. With
/// `review.export` it also writes `review_sheet.csv` into its stage directory.
pub struct LabelStage {
    llm: Llm,
}

impl LabelStage {
    /// `llm` is the run's handle, built once from the pipeline's `[llm]` table.
    pub fn new(llm: Llm) -> Self {
        Self { llm }
    }
}

/// One claim-document pair to label.
struct Pair<'a> {
    id: String,
    claim: &'a Claim,
    doc: &'a Document,
    gold: Option<Verdict>,
    /// The page text the stance votes see (empty for an empty page).
    text: String,
    /// The text the exam sees: the page text, or the title of a title-only document (an empty
    /// document would render the prompt's no-document form, the zero-context probe).
    exam_text: String,
    /// Exam skipped: labelled irrelevant.
    skip_exam: bool,
}

/// The model calls that failed for each pair (and each claim's zero-context probe), kept apart
/// until the pair is assembled: a transient failure leaves the pair undone (dropped now, retried
/// by the next run), a permanent one is recorded against a pair that still gets its row.
#[derive(Default)]
struct CallFailures {
    /// pair id -> (call, reason, detail)
    pairs: BTreeMap<String, Vec<(String, String, String)>>,
    /// claim id -> (reason, detail) of the zero-context probe
    claims: BTreeMap<String, (String, String)>,
}

impl CallFailures {
    fn pair(&mut self, pair: &str, call: &str, e: &LlmError) {
        self.pair_reason(pair, call, &format!("llm_{}", e.reason()), e.to_string());
    }

    fn pair_reason(&mut self, pair: &str, call: &str, reason: &str, detail: String) {
        self.pairs.entry(pair.to_string()).or_default().push((
            call.to_string(),
            reason.to_string(),
            detail,
        ));
    }

    /// A pair's failures, its claim's probe first.
    fn of(&self, pair: &str, claim: &str) -> Vec<(String, String, String)> {
        let mut all: Vec<(String, String, String)> = self
            .claims
            .get(claim)
            .map(|(r, d)| ("zero_context".to_string(), r.clone(), d.clone()))
            .into_iter()
            .collect();
        all.extend(self.pairs.get(pair).cloned().unwrap_or_default());
        all
    }
}

fn describe(failures: &[(String, String, String)]) -> String {
    failures
        .iter()
        .map(|(call, reason, detail)| format!("{call}: {reason} ({detail})"))
        .collect::<Vec<_>>()
        .join("; ")
}

impl LabelStage {
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

    fn pairs<'a>(
        &self,
        config: &LabelConfig,
        claims: &'a BTreeMap<&'a str, &'a Claim>,
        docs: &'a BTreeMap<&'a str, &'a Document>,
        links: &[ClaimDocument],
        drops: &mut Drops,
    ) -> Vec<Pair<'a>> {
        let mut links: Vec<&ClaimDocument> = links.iter().collect();
        links.sort_by(|a, b| {
            (&a.claim_id, a.best_rank, &a.document_id).cmp(&(
                &b.claim_id,
                b.best_rank,
                &b.document_id,
            ))
        });
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for link in links {
            let id = stable_id("label", &[&link.claim_id, &link.document_id]);
            if !seen.insert(id.clone()) {
                drops.add(
                    id,
                    "duplicate_link",
                    format!(
                        "claim `{}` and document `{}` are linked more than once",
                        link.claim_id, link.document_id
                    ),
                );
                continue;
            }
            let Some(claim) = claims.get(link.claim_id.as_str()).copied() else {
                drops.add(
                    id,
                    "unknown_claim",
                    format!("claim `{}` is not in the claims input", link.claim_id),
                );
                continue;
            };
            let Some(doc) = docs.get(link.document_id.as_str()).copied() else {
                drops.add(
                    id,
                    "unknown_document",
                    format!(
                        "document `{}` is not in the documents input",
                        link.document_id
                    ),
                );
                continue;
            };
            let gold = exam::gold_verdict(claim);
            if config.exam.enabled && gold.is_none() {
                drops.add(
                    id,
                    "claim_verdict_not_binary",
                    format!(
                        "claim `{}` has verdict `{}`; the exam needs true or false",
                        claim.id, claim.verdict
                    ),
                );
                continue;
            }
            let empty = doc.text.trim().is_empty() || doc.body_removed;
            let has_title = doc.title.as_deref().is_some_and(|t| !t.trim().is_empty());
            let skip_exam = match (empty, config.empty_documents) {
                (false, _) => false,
                (true, EmptyDocuments::Drop) => {
                    drops.add(
                        id,
                        "empty_document",
                        format!(
                            "document `{}` has no text (link post or removed body)",
                            doc.id
                        ),
                    );
                    continue;
                }
                (true, EmptyDocuments::Irrelevant) => true,
                (true, EmptyDocuments::TitleOnly) => !has_title,
            };
            out.push(Pair {
                id,
                claim,
                doc,
                gold,
                text: if empty {
                    String::new()
                } else {
                    doc.text.clone()
                },
                exam_text: if empty {
                    doc.title.clone().unwrap_or_default()
                } else {
                    doc.text.clone()
                },
                skip_exam,
            });
        }
        out
    }
}

fn stance_of(a: &Answer<serde_json::Value>) -> Option<Stance> {
    Stance::in_reply(&a.value)
}

impl TypedStage for LabelStage {
    type Config = LabelConfig;
    const KIND: &'static str = "labels";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec {
                role: "claims",
                kind: TableKind::Claims,
                required: true,
            },
            InputSpec {
                role: "documents",
                kind: TableKind::Documents,
                required: true,
            },
            InputSpec {
                role: "claim_documents",
                kind: TableKind::ClaimDocuments,
                required: true,
            },
        ]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec {
                name: "labels",
                kind: TableKind::Labels,
            },
            OutputSpec {
                name: "documents",
                kind: TableKind::Documents,
            },
            OutputSpec {
                name: "conflicts",
                kind: TableKind::Conflicts,
            },
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
        self.llm
            .require(&self.tasks_used(config))
            .map_err(|e| ConfigError::new("llm", e.to_string()))
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
        self.llm.fingerprint_of(tasks::TASKS)
    }

    fn run(
        &self,
        config: &LabelConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let claims: Vec<Claim> = inputs.take("claims")?;
        let mut documents: Vec<Document> = inputs.take("documents")?;
        let links: Vec<ClaimDocument> = inputs.take("claim_documents")?;
        let stage = ctx.stage_id.as_str();
        let mut drops = Drops::new(stage);

        // Source credibility first: the document rows are an output as well.
        let table = match &config.credibility.table {
            Some(p) => Some(
                DomainTable::load(&ctx.resolve(p))
                    .map_err(|e| ConfigError::new("credibility.table", e.to_string()))?,
            ),
            None => None,
        };
        let annotated = credibility::annotate(
            &self.llm,
            stage,
            &mut documents,
            table.as_ref(),
            config.credibility.fallback,
            &mut drops,
        );
        tracing::info!(
            table = annotated.from_table,
            generated = annotated.generated,
            unknown = annotated.unknown,
            "credibility"
        );

        let claim_index: BTreeMap<&str, &Claim> =
            claims.iter().map(|c| (c.id.as_str(), c)).collect();
        let doc_index: BTreeMap<&str, &Document> =
            documents.iter().map(|d| (d.id.as_str(), d)).collect();
        let pairs = self.pairs(config, &claim_index, &doc_index, &links, &mut drops);

        let mut failures = CallFailures::default();
        // The exam: one call per pair and variant, one zero-context probe per claim.
        let mut exam_votes: Vec<Vec<(ExamVariant, Verdict)>> = vec![Vec::new(); pairs.len()];
        let mut zero: BTreeMap<&str, Verdict> = BTreeMap::new();
        if config.exam.enabled {
            let mut keys = Vec::new();
            let mut calls = Vec::new();
            for (i, p) in pairs.iter().enumerate().filter(|(_, p)| !p.skip_exam) {
                for v in &config.exam.variants {
                    keys.push((i, *v));
                    calls.push(exam::exam_input(
                        *v,
                        p.claim,
                        p.doc,
                        &p.exam_text,
                        &config.exam,
                    ));
                }
            }
            let bar = ctx.progress.bar("exam", Some(calls.len() as u64));
            let answers =
                self.llm
                    .run_batch_with_progress::<tasks::ExamVerdict>(stage, calls, bar.as_ref());
            bar.finish();
            for ((i, v), a) in keys.into_iter().zip(answers) {
                match a.map(|a| Verdict::in_reply(&a.value)) {
                    Ok(Some(verdict)) => exam_votes[i].push((v, verdict)),
                    Ok(None) => failures.pair_reason(
                        &pairs[i].id,
                        &format!("exam:{}", v.as_str()),
                        "llm_unparseable_output",
                        "no verdict in a checked reply".into(),
                    ),
                    Err(e) => failures.pair(&pairs[i].id, &format!("exam:{}", v.as_str()), &e),
                }
            }
            if config.exam.zero_context {
                let probe_claims: Vec<&Claim> = pairs
                    .iter()
                    .map(|p| (p.claim.id.as_str(), p.claim))
                    .collect::<BTreeMap<&str, &Claim>>()
                    .into_values()
                    .collect();
                let calls = probe_claims
                    .iter()
                    .map(|c| exam::zero_context_input(c))
                    .collect();
                let answers = self.llm.run_batch::<tasks::ExamVerdict>(stage, calls);
                for (c, a) in probe_claims.into_iter().zip(answers) {
                    match a {
                        Ok(a) => {
                            if let Some(v) = Verdict::in_reply(&a.value) {
                                zero.insert(c.id.as_str(), v);
                            }
                        }
                        Err(e) => {
                            failures.claims.insert(
                                c.id.clone(),
                                (format!("llm_{}", e.reason()), e.to_string()),
                            );
                        }
                    }
                }
            }
        }

        // The stance vote: the URL always; the text variants only when there is text.
        let mut url_votes: Vec<Option<Stance>> = vec![None; pairs.len()];
        let mut text_votes: Vec<Option<Stance>> = vec![None; pairs.len()];
        let mut reasoned_votes: Vec<Option<Stance>> = vec![None; pairs.len()];
        if config.stance.enabled {
            let url_calls = pairs
                .iter()
                .map(|p| tasks::StanceUrlInput {
                    claim: p.claim.text.clone(),
                    claim_date: p.claim.claim_date.clone(),
                    url: p.doc.url.clone(),
                })
                .collect();
            let bar = ctx.progress.bar("stance", Some(pairs.len() as u64 * 3));
            let answers = self.llm.run_batch_with_progress::<tasks::StanceUrl>(
                stage,
                url_calls,
                bar.as_ref(),
            );
            for (i, a) in answers.into_iter().enumerate() {
                match a {
                    Ok(a) => url_votes[i] = stance_of(&a),
                    Err(e) => failures.pair(&pairs[i].id, "stance_url", &e),
                }
            }
            let with_text: Vec<usize> = (0..pairs.len())
                .filter(|i| !pairs[*i].text.trim().is_empty())
                .collect();
            let text_input = |i: &usize| tasks::StanceTextInput {
                claim: pairs[*i].claim.text.clone(),
                claim_date: pairs[*i].claim.claim_date.clone(),
                text: exam::truncate_chars(&pairs[*i].text, config.stance.max_document_chars),
            };
            let answers = self.llm.run_batch_with_progress::<tasks::StanceText>(
                stage,
                with_text.iter().map(text_input).collect(),
                bar.as_ref(),
            );
            for (i, a) in with_text.iter().zip(answers) {
                match a {
                    Ok(a) => text_votes[*i] = stance_of(&a),
                    Err(e) => failures.pair(&pairs[*i].id, "stance_text", &e),
                }
            }
            let answers = self.llm.run_batch_with_progress::<tasks::StanceReasoned>(
                stage,
                with_text.iter().map(text_input).collect(),
                bar.as_ref(),
            );
            for (i, a) in with_text.iter().zip(answers) {
                match a {
                    Ok(a) => reasoned_votes[*i] = stance_of(&a),
                    Err(e) => failures.pair(&pairs[*i].id, "stance_reasoned", &e),
                }
            }
            bar.finish();
        }

        // Assemble one row per pair that got any answer.
        let facts = self.task_facts(config);
        let model_tasks: Vec<&(String, String, String)> = facts
            .iter()
            .filter(|(t, _, _)| t != "credibility")
            .collect();
        let all_offline = model_tasks.iter().all(|(_, p, _)| p == "offline");
        let provenance = model_tasks
            .iter()
            .map(|(t, p, v)| format!("{t}={p}@{v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut labels = Vec::with_capacity(pairs.len());
        for (i, p) in pairs.iter().enumerate() {
            let votes = &exam_votes[i];
            let exam_verdict = if p.skip_exam {
                Some(Verdict::Undecided)
            } else if votes.is_empty() {
                None
            } else {
                Some(exam::majority_verdict(
                    &votes.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
                ))
            };
            let exam_verdict = exam_verdict.filter(|_| config.exam.enabled);
            let cast: Vec<Stance> = [url_votes[i], text_votes[i], reasoned_votes[i]]
                .into_iter()
                .flatten()
                .collect();
            let stance_majority = majority_stance(&cast);
            let failed = failures.of(&p.id, &p.claim.id);
            if let Some((_, reason, _)) = failed.iter().find(|(_, r, _)| is_transient_reason(r)) {
                // Not done: a row without this vote would be published as final.
                drops.add(p.id.clone(), reason, describe(&failed));
                continue;
            }
            if exam_verdict.is_none() && stance_majority.is_none() {
                let detail = if failed.is_empty() {
                    "no model answer for this pair".to_string()
                } else {
                    format!(
                        "every model call for this pair failed: {}",
                        describe(&failed)
                    )
                };
                drops.add(p.id.clone(), "no_answer", detail);
                continue;
            }
            for (call, reason, detail) in &failed {
                drops.add_failure(format!("{}/{call}", p.id), reason, detail.clone());
            }
            let model_label = match (exam_verdict, p.gold) {
                (Some(v), Some(g)) => Some(exam::label_for(v, g, config.preset).to_string()),
                _ => None,
            };
            let zc = zero.get(p.claim.id.as_str()).copied();
            let stance_str = |s: Option<Stance>| s.map(|s| s.as_str().to_string());
            labels.push(ClaimDocumentLabel {
                id: p.id.clone(),
                claim_id: p.claim.id.clone(),
                document_id: p.doc.id.clone(),
                label: model_label.clone(),
                model_label,
                exam_verdict: exam_verdict.map(|v| v.as_str().to_string()),
                exam_votes: votes
                    .iter()
                    .map(|(var, v)| format!("{}={}", var.as_str(), v.as_str()))
                    .collect(),
                zero_context_verdict: zc.map(|v| v.as_str().to_string()),
                flipped: match (zc, exam_verdict) {
                    (Some(z), Some(e)) => Some(exam::flipped(z, e)),
                    _ => None,
                },
                stance_url: stance_str(url_votes[i]),
                stance_text: stance_str(text_votes[i]),
                stance_reasoned: stance_str(reasoned_votes[i]),
                stance_majority: stance_str(stance_majority),
                stance: stance_str(stance_majority),
                label_source: if all_offline { "offline" } else { "model" }.into(),
                provenance: if p.skip_exam && config.exam.enabled {
                    format!("{provenance} exam=skipped:empty-document")
                } else {
                    provenance.clone()
                },
            });
        }

        // Human review: imported labels take precedence.
        let review = match &config.review.import {
            Some(path) => {
                let resolved = ctx.resolve(path);
                let sheet = read_sheet(&resolved)
                    .map_err(|e| ConfigError::new("review.import", e.to_string()))?;
                let outcome = apply_review(
                    &mut labels,
                    &sheet,
                    config.preset,
                    &path.display().to_string(),
                );
                for p in &outcome.problems {
                    drops.add_failure(format!("review:{}", p.pair_id), p.reason, p.detail.clone());
                }
                Some(outcome)
            }
            None => None,
        };

        let conflict_rows = conflicts(&claims, &labels);
        write_side_files(config, ctx, &claims, &documents, &labels)?;
        let facts = label_facts(&labels, &conflict_rows, &documents, &facts, review);
        let facts = StageFacts::new("How the labels were made", facts.card_lines(), &facts);

        let report = StageReport {
            items_in: links.len() as u64,
            items_out: labels.len() as u64,
            drops: drops.into_records(),
        };
        let mut out = StageOutput {
            report,
            facts: Some(facts),
            ..StageOutput::default()
        }
        .with_table("labels", labels)
        .with_table("documents", documents)
        .with_table("conflicts", conflict_rows);
        out.report.drops.sort();
        Ok(out)
    }
}

fn io_err(path: &Path, source: std::io::Error) -> StageError {
    StageError::Io {
        path: path.into(),
        source,
    }
}

/// The review sheet's file name in the stage directory.
pub const REVIEW_SHEET: &str = "review_sheet.csv";

fn write_side_files(
    config: &LabelConfig,
    ctx: &StageContext,
    claims: &[Claim],
    documents: &[Document],
    labels: &[ClaimDocumentLabel],
) -> Result<(), StageError> {
    if !config.review.export {
        return Ok(());
    }
    std::fs::create_dir_all(&ctx.stage_dir).map_err(|e| io_err(&ctx.stage_dir, e))?;
    let rows = review_sheet(claims, documents, labels, config.review.excerpt_chars);
    let path = ctx.stage_dir.join(REVIEW_SHEET);
    review::write_sheet(&path, &rows).map_err(|e| StageError::Other(e.to_string()))
}

/// Config of the export stages: none yet (an empty table).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportConfig {}

fn export_inputs(with_queries: bool) -> Vec<InputSpec> {
    let mut v = vec![
        InputSpec {
            role: "claims",
            kind: TableKind::Claims,
            required: true,
        },
        InputSpec {
            role: "documents",
            kind: TableKind::Documents,
            required: true,
        },
        InputSpec {
            role: "labels",
            kind: TableKind::Labels,
            required: true,
        },
    ];
    if with_queries {
        v.push(InputSpec {
            role: "queries",
            kind: TableKind::Queries,
            required: false,
        });
    }
    v
}

/// `export-raguard`: writes `claims.csv`, `documents.csv`, `claim_id_map.csv`,
/// `document_id_map.csv` into its stage directory. No table outputs.
pub struct ExportRaguardStage;

impl TypedStage for ExportRaguardStage {
    type Config = ExportConfig;
    const KIND: &'static str = "export-raguard";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        export_inputs(false)
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        Vec::new()
    }

    fn files(&self, _config: &ExportConfig) -> Vec<SideFile> {
        RAGUARD_FILES
            .iter()
            .map(|f| SideFile::export(*f, "raguard"))
            .collect()
    }

    fn run(
        &self,
        _config: &ExportConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let claims: Vec<Claim> = inputs.take("claims")?;
        let documents: Vec<Document> = inputs.take("documents")?;
        let labels: Vec<ClaimDocumentLabel> = inputs.take("labels")?;
        let s = export_raguard(&claims, &documents, &labels, &ctx.stage_dir)
            .map_err(|e| StageError::Other(e.to_string()))?;
        Ok(export_output(ctx, labels.len(), s))
    }
}

/// An export's report: each label row is a written pair or a drop with its reason.
fn export_output(ctx: &StageContext, labels: usize, summary: ExportSummary) -> StageOutput {
    let mut drops = Drops::new(&ctx.stage_id);
    for skip in summary.skipped {
        drops.add(skip.label_id, skip.reason, skip.detail);
    }
    StageOutput {
        report: StageReport {
            items_in: labels as u64,
            items_out: summary.documents as u64,
            drops: drops.into_records(),
        },
        ..StageOutput::default()
    }
}

/// `export-confact`: writes `confact.json` into its stage directory. Optional input `queries`
/// supplies each claim's yes/no question. No table outputs.
pub struct ExportConfactStage;

impl TypedStage for ExportConfactStage {
    type Config = ExportConfig;
    const KIND: &'static str = "export-confact";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        export_inputs(true)
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        Vec::new()
    }

    fn files(&self, _config: &ExportConfig) -> Vec<SideFile> {
        vec![SideFile::export(CONFACT_FILE, "confact")]
    }

    fn run(
        &self,
        _config: &ExportConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let claims: Vec<Claim> = inputs.take("claims")?;
        let documents: Vec<Document> = inputs.take("documents")?;
        let labels: Vec<ClaimDocumentLabel> = inputs.take("labels")?;
        let queries: Vec<Query> = inputs.take_optional("queries")?.unwrap_or_default();
        let s = export_confact(
            &claims,
            &documents,
            &labels,
            &queries,
            &ctx.stage_dir.join(CONFACT_FILE),
        )
        .map_err(|e| StageError::Other(e.to_string()))?;
        Ok(export_output(ctx, labels.len(), s))
    }
}
