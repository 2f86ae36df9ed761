//! `validate`: a published snapshot checked against the dataset's own rules.
//!
//! `verify` checks that the files are the ones the manifest names (hashes, sizes, schemas);
//! this checks what the rows say: answers grounded in their chunks, multi-hop questions that
//! need more than one chunk, references that resolve, no repeated ids or question texts, every
//! claim-document pair labelled. A tampered table with a stale hash is `verify`'s business, not
//! this one's. Each check reads only the tables it needs; one whose tables the snapshot lacks
//! is skipped, not failed, so the same command serves the claims-only and report-only datasets.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_core::{
    Chunk, ClaimDocument, ClaimDocumentLabel, Question, QuestionSplit, RejectedQuestion, Rows,
    TableKind, TableRow, Triplet,
};
use noisebench_pipeline::table_io;
use noisebench_qa::checks::{ChunkIndex, named_entities};
use noisebench_text::{contains_phrase, normalize};

/// How many offending ids a rendered check line names.
const SHOWN_IDS: usize = 5;

/// The check names, in the order [`validate_snapshot`] runs them.
pub const CHECKS: [&str; 9] = [
    "answer_grounded",
    "multi_hop_chunks",
    "multi_hop_single_chunk",
    "references_exist",
    "unique_question_text",
    "labels_complete",
    "unique_ids",
    "splits_reference_questions",
    "rejected_not_kept",
];

/// The tables the rules read beyond their ids.
const NEEDED: [TableKind; 7] = [
    TableKind::Questions,
    TableKind::Chunks,
    TableKind::Triplets,
    TableKind::ClaimDocuments,
    TableKind::Labels,
    TableKind::QuestionSplits,
    TableKind::RejectedQuestions,
];

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    /// The snapshot lacks a table the check needs (its name).
    Skipped { missing: String },
    /// `checked` items looked at; `failed` the ids of those breaking the rule (sorted, each
    /// once; for `unique_ids`, `<table>:<id>`).
    Ran { checked: usize, failed: Vec<String> },
}

/// One check's name and outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    pub name: &'static str,
    pub outcome: CheckOutcome,
}

impl CheckResult {
    /// Whether the check ran and found an offending item.
    pub fn failed(&self) -> bool {
        matches!(&self.outcome, CheckOutcome::Ran { failed, .. } if !failed.is_empty())
    }

    /// The ids that broke the rule (empty when skipped or passed).
    pub fn failed_ids(&self) -> &[String] {
        match &self.outcome {
            CheckOutcome::Ran { failed, .. } => failed,
            CheckOutcome::Skipped { .. } => &[],
        }
    }

    /// `name: ok (checked N, failed 0)`, `name: FAILED (checked N, failed K): id, id, ...`,
    /// or `name: skipped (no `x` table)`.
    pub fn render(&self) -> String {
        match &self.outcome {
            CheckOutcome::Skipped { missing } => {
                format!("{}: skipped (no `{missing}` table)", self.name)
            }
            CheckOutcome::Ran { checked, failed } if failed.is_empty() => {
                format!("{}: ok (checked {checked}, failed 0)", self.name)
            }
            CheckOutcome::Ran { checked, failed } => {
                let mut line = format!(
                    "{}: FAILED (checked {checked}, failed {}): {}",
                    self.name,
                    failed.len(),
                    failed
                        .iter()
                        .take(SHOWN_IDS)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                if failed.len() > SHOWN_IDS {
                    let _ = write!(line, ", ... ({} more)", failed.len() - SHOWN_IDS);
                }
                line
            }
        }
    }
}

/// Every check's result for one snapshot version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationReport {
    /// The version folder validated.
    pub snapshot: PathBuf,
    /// One result per check, in [`CHECKS`] order.
    pub checks: Vec<CheckResult>,
}

impl ValidationReport {
    /// No check failed (skipped checks do not fail).
    pub fn ok(&self) -> bool {
        !self.checks.iter().any(CheckResult::failed)
    }

    /// The result of the check called `name`.
    pub fn check(&self, name: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// Names of the checks that failed.
    pub fn failed_checks(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| c.failed())
            .map(|c| c.name)
            .collect()
    }

    /// One line per check, then a verdict line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
            let _ = writeln!(out, "{}", c.render());
        }
        let failed = self.failed_checks();
        let _ = if failed.is_empty() {
            writeln!(out, "{}: valid", self.snapshot.display())
        } else {
            writeln!(
                out,
                "{}: {} checks failed ({})",
                self.snapshot.display(),
                failed.len(),
                failed.join(", ")
            )
        };
        out
    }
}

/// A snapshot's tables, read once each, by kind.
struct Tables {
    rows: BTreeMap<TableKind, Rows>,
}

impl Tables {
    /// Typed rows of `T`'s table, or `None` when the snapshot has no such table. Taken, not
    /// copied: each table is large enough (chunks) that a second copy matters, and each check
    /// shares the one typed copy.
    fn take<T: TableRow>(&mut self) -> Option<Vec<T>> {
        // `rows` holds what `read_table` decoded for this kind, so the conversion cannot fail.
        self.rows
            .remove(&T::KIND)
            .and_then(|r| T::from_rows(r).ok())
    }
}

/// Validate a snapshot: a version folder, or a dataset folder (its latest version). Errors only
/// when the snapshot cannot be read; broken rules are in the report.
pub fn validate_snapshot(path: &Path) -> Result<ValidationReport> {
    let dir = crate::resolve_snapshot(path)?;
    let manifest = noisebench_snapshot::Manifest::read(&dir).map_err(anyhow::Error::msg)?;
    let mut rows: BTreeMap<TableKind, Rows> = BTreeMap::new();
    let mut unique_checked = 0;
    let mut duplicates = Vec::new();
    for (name, entry) in &manifest.tables {
        let kind = TableKind::from_name(&entry.kind).with_context(|| {
            format!(
                "{}: table `{name}` has unknown kind `{}`",
                dir.display(),
                entry.kind
            )
        })?;
        let file = dir.join(&entry.file);
        let table = table_io::read_table(&file, kind)
            .with_context(|| format!("{}: table `{name}`", dir.display()))?;
        unique_checked += table.len();
        duplicates.extend(
            table
                .duplicate_ids()
                .into_iter()
                .map(|id| format!("{name}:{id}")),
        );
        // Keep only what a rule reads (the rest was needed for its ids alone); a table
        // published under its kind's name wins over another of the same kind.
        if NEEDED.contains(&kind) && (name == kind.name() || !rows.contains_key(&kind)) {
            rows.insert(kind, table);
        }
    }
    let mut tables = Tables { rows };
    let questions: Option<Vec<Question>> = tables.take();
    let chunks: Option<Vec<Chunk>> = tables.take();
    let triplets: Option<Vec<Triplet>> = tables.take();
    let questions = questions.as_deref();
    let chunks = chunks.as_deref();

    let mut checks = vec![
        run(
            "answer_grounded",
            &[
                (TableKind::Questions, questions.is_some()),
                (TableKind::Chunks, chunks.is_some()),
            ],
            || answer_grounded(questions.unwrap_or_default(), chunks.unwrap_or_default()),
        ),
        run(
            "multi_hop_chunks",
            &[(TableKind::Questions, questions.is_some())],
            || multi_hop_chunks(questions.unwrap_or_default()),
        ),
        run(
            "multi_hop_single_chunk",
            &[
                (TableKind::Questions, questions.is_some()),
                (TableKind::Chunks, chunks.is_some()),
            ],
            || multi_hop_single_chunk(questions.unwrap_or_default(), chunks.unwrap_or_default()),
        ),
        run(
            "references_exist",
            &[
                (TableKind::Questions, questions.is_some()),
                (TableKind::Triplets, triplets.is_some()),
                (TableKind::Chunks, chunks.is_some()),
            ],
            || {
                references_exist(
                    questions.unwrap_or_default(),
                    triplets.as_deref().unwrap_or_default(),
                    chunks.unwrap_or_default(),
                )
            },
        ),
        run(
            "unique_question_text",
            &[(TableKind::Questions, questions.is_some())],
            || unique_question_text(questions.unwrap_or_default()),
        ),
    ];
    let links: Option<Vec<ClaimDocument>> = tables.take();
    let labels: Option<Vec<ClaimDocumentLabel>> = tables.take();
    checks.push(run(
        "labels_complete",
        &[
            (TableKind::ClaimDocuments, links.is_some()),
            (TableKind::Labels, labels.is_some()),
        ],
        || {
            labels_complete(
                links.as_deref().unwrap_or_default(),
                labels.as_deref().unwrap_or_default(),
            )
        },
    ));
    duplicates.sort();
    checks.push(CheckResult {
        name: "unique_ids",
        outcome: CheckOutcome::Ran {
            checked: unique_checked,
            failed: duplicates,
        },
    });
    let splits: Option<Vec<QuestionSplit>> = tables.take();
    checks.push(run(
        "splits_reference_questions",
        &[
            (TableKind::QuestionSplits, splits.is_some()),
            (TableKind::Questions, questions.is_some()),
        ],
        || {
            splits_reference_questions(
                splits.as_deref().unwrap_or_default(),
                questions.unwrap_or_default(),
            )
        },
    ));
    let rejected: Option<Vec<RejectedQuestion>> = tables.take();
    checks.push(run(
        "rejected_not_kept",
        &[
            (TableKind::RejectedQuestions, rejected.is_some()),
            (TableKind::Questions, questions.is_some()),
        ],
        || {
            rejected_not_kept(
                rejected.as_deref().unwrap_or_default(),
                questions.unwrap_or_default(),
            )
        },
    ));
    Ok(ValidationReport {
        snapshot: dir,
        checks,
    })
}

/// Run `check` when every table it needs is present, else report it skipped for the first
/// missing one.
fn run(
    name: &'static str,
    needs: &[(TableKind, bool)],
    check: impl FnOnce() -> (usize, Vec<String>),
) -> CheckResult {
    let outcome = match needs.iter().find(|(_, present)| !present) {
        Some((kind, _)) => CheckOutcome::Skipped {
            missing: kind.name().to_string(),
        },
        None => {
            let (checked, failed) = check();
            let failed: BTreeSet<String> = failed.into_iter().collect();
            CheckOutcome::Ran {
                checked,
                failed: failed.into_iter().collect(),
            }
        }
    };
    CheckResult { name, outcome }
}

fn is_multi_hop(q: &Question) -> bool {
    q.kind != "single_hop"
}

/// Every answer (normalised, whole words) is in the text of at least one of its answer chunks.
fn answer_grounded(questions: &[Question], chunks: &[Chunk]) -> (usize, Vec<String>) {
    let text: BTreeMap<&str, &str> = chunks
        .iter()
        .map(|c| (c.id.as_str(), c.text.as_str()))
        .collect();
    let failed = questions
        .iter()
        .filter(|q| {
            !q.answer_chunk_ids.iter().any(|id| {
                text.get(id.as_str())
                    .is_some_and(|t| contains_phrase(t, &q.answer))
            })
        })
        .map(|q| q.id.clone())
        .collect();
    (questions.len(), failed)
}

/// Every multi-hop question has at least two distinct answer chunks.
fn multi_hop_chunks(questions: &[Question]) -> (usize, Vec<String>) {
    let multi: Vec<&Question> = questions.iter().filter(|q| is_multi_hop(q)).collect();
    let failed = multi
        .iter()
        .filter(|q| q.answer_chunk_ids.iter().collect::<BTreeSet<_>>().len() < 2)
        .map(|q| q.id.clone())
        .collect();
    (multi.len(), failed)
}

/// No single chunk of the snapshot holds both a multi-hop question's answer and every entity
/// the question names directly ([`named_entities`]): such a chunk answers it in one hop.
///
/// The issue states the rule as "no single chunk holds both its pivot and its answer". Taken
/// literally that fails every valid chain: in A -> B -> C, the chunk stating B -> C holds the
/// pivot B and the answer C by construction. What makes a question single-hop is a chunk that
/// links what the question *names* (A) to the answer, so that is what is checked, with the
/// same index and rule the `questions` stage applies, over every chunk of the snapshot.
fn multi_hop_single_chunk(questions: &[Question], chunks: &[Chunk]) -> (usize, Vec<String>) {
    let multi: Vec<&Question> = questions.iter().filter(|q| is_multi_hop(q)).collect();
    let named: Vec<Vec<String>> = multi.iter().map(|q| named_entities(q)).collect();
    let phrases = named
        .iter()
        .flatten()
        .map(String::as_str)
        .chain(multi.iter().map(|q| q.answer.as_str()));
    // One pass over the corpus for every phrase, not a scan of every chunk per question.
    let index = ChunkIndex::build(
        chunks.iter().map(|c| (c.id.as_str(), c.text.as_str())),
        phrases,
    );
    let failed = multi
        .iter()
        .zip(&named)
        .filter(|(q, named)| {
            let named: Vec<&str> = named.iter().map(String::as_str).collect();
            !index.chunks_holding_all(&named, &q.answer).is_empty()
        })
        .map(|(q, _)| q.id.clone())
        .collect();
    (multi.len(), failed)
}

/// Every question's `triplet_ids` are in `triplets` and its `answer_chunk_ids` in `chunks`.
fn references_exist(
    questions: &[Question],
    triplets: &[Triplet],
    chunks: &[Chunk],
) -> (usize, Vec<String>) {
    let triplet_ids: BTreeSet<&str> = triplets.iter().map(|t| t.id.as_str()).collect();
    let chunk_ids: BTreeSet<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
    let failed = questions
        .iter()
        .filter(|q| {
            q.triplet_ids
                .iter()
                .any(|t| !triplet_ids.contains(t.as_str()))
                || q.answer_chunk_ids
                    .iter()
                    .any(|c| !chunk_ids.contains(c.as_str()))
        })
        .map(|q| q.id.clone())
        .collect();
    (questions.len(), failed)
}

/// No two questions share normalised text; every question of a shared text is named.
fn unique_question_text(questions: &[Question]) -> (usize, Vec<String>) {
    let mut by_text: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for q in questions {
        by_text
            .entry(normalize(&q.question))
            .or_default()
            .push(q.id.as_str());
    }
    let failed = by_text
        .into_values()
        .filter(|ids| ids.len() > 1)
        .flatten()
        .map(str::to_string)
        .collect();
    (questions.len(), failed)
}

/// Every claim-document pair has a `labels` row (same claim and document) whose `provenance`
/// (backend, model and prompt versions, or the review sheet) is not empty. Failures name the
/// pair's `claim_documents` id.
fn labels_complete(links: &[ClaimDocument], labels: &[ClaimDocumentLabel]) -> (usize, Vec<String>) {
    let labelled: BTreeSet<(&str, &str)> = labels
        .iter()
        .filter(|l| !l.provenance.trim().is_empty())
        .map(|l| (l.claim_id.as_str(), l.document_id.as_str()))
        .collect();
    let failed = links
        .iter()
        .filter(|l| !labelled.contains(&(l.claim_id.as_str(), l.document_id.as_str())))
        .map(|l| l.id.clone())
        .collect();
    (links.len(), failed)
}

/// Every split row names a question of `questions`. Failures name the split row.
fn splits_reference_questions(
    splits: &[QuestionSplit],
    questions: &[Question],
) -> (usize, Vec<String>) {
    let ids: BTreeSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    let failed = splits
        .iter()
        .filter(|s| !ids.contains(s.question_id.as_str()))
        .map(|s| s.id.clone())
        .collect();
    (splits.len(), failed)
}

/// A rejected question is out of the benchmark: its id is not in `questions`.
fn rejected_not_kept(
    rejected: &[RejectedQuestion],
    questions: &[Question],
) -> (usize, Vec<String>) {
    let ids: BTreeSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    let failed = rejected
        .iter()
        .filter(|r| ids.contains(r.id.as_str()))
        .map(|r| r.id.clone())
        .collect();
    (rejected.len(), failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, kind: &str, text: &str, answer: &str, chunks: &[&str]) -> Question {
        Question {
            id: id.into(),
            kind: kind.into(),
            question: text.into(),
            answer: answer.into(),
            answer_chunk_ids: chunks.iter().map(|c| c.to_string()).collect(),
            ..Question::default()
        }
    }

    fn chunk(id: &str, text: &str) -> Chunk {
        Chunk {
            id: id.into(),
            text: text.into(),
            ..Chunk::default()
        }
    }

    #[test]
    fn chain_passes_when_no_chunk_links_the_named_entity_to_the_answer() {
        // Acme -> owns -> Beta (c1), Beta -> based in -> Oslo (c2): the question names Acme.
        let mut chain = q(
            "q1",
            "chained_multi_hop",
            "Where is the company Acme owns based?",
            "Oslo",
            &["c1", "c2"],
        );
        chain.entity_1 = vec!["Acme".into(), "Beta".into()];
        chain.entity_2 = vec!["Beta".into(), "Oslo".into()];
        chain.pivot_entities = vec!["Beta".into()];
        let chunks = vec![
            chunk("c1", "Acme owns Beta."),
            chunk("c2", "Beta is based in Oslo."),
        ];
        // c2 holds the pivot and the answer: fine.
        assert_eq!(
            multi_hop_single_chunk(std::slice::from_ref(&chain), &chunks),
            (1, vec![])
        );
        let mut leaky = chunks.clone();
        leaky.push(chunk("c3", "Acme, via Beta, runs its office in Oslo."));
        assert_eq!(
            multi_hop_single_chunk(std::slice::from_ref(&chain), &leaky),
            (1, vec!["q1".to_string()])
        );
        assert_eq!(answer_grounded(&[chain.clone()], &chunks), (1, vec![]));
        assert_eq!(multi_hop_chunks(&[chain]), (1, vec![]));
    }

    #[test]
    fn rules_name_their_offenders() {
        let qs = vec![
            q("q1", "single_hop", "What is X?", "ten", &["c1"]),
            q("q2", "star_shaped", "what is x", "nine", &["c1", "c1"]),
        ];
        let chunks = vec![chunk("c1", "X is ten.")];
        assert_eq!(answer_grounded(&qs, &chunks).1, vec!["q2"]);
        assert_eq!(multi_hop_chunks(&qs), (1, vec!["q2".to_string()]));
        assert_eq!(unique_question_text(&qs).1, vec!["q1", "q2"]);
        assert_eq!(references_exist(&qs, &[], &[]).1, vec!["q1", "q2"]);
        let line = run("unique_question_text", &[], || unique_question_text(&qs)).render();
        assert_eq!(
            line,
            "unique_question_text: FAILED (checked 2, failed 2): q1, q2"
        );
        let skipped = run("x", &[(TableKind::Questions, false)], || unreachable!());
        assert_eq!(skipped.render(), "x: skipped (no `questions` table)");
        assert!(!skipped.failed());
    }
}
