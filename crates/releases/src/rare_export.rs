//! RARE's records made from the report track's tables (questions, splits, perturbations) and
//! written with [`crate::rare`]'s writer: what `export-rare` (in `noisebench-qa`) and
//! `noisebench export --format rare` write.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_core::{DocumentPerturbation, QueryPerturbation, Question, QuestionSplit};
use serde::Serialize;

use crate::rare::{
    DOCUMENT_PERTURBATION_KINDS, MULTI_HOP_FILE, MULTI_HOP_KINDS, RareDocumentPerturbation,
    RareError, RareQueryPerturbation, RareRecord, SINGLE_HOP_FILE, create_dir,
    write_records as write_list,
};

/// The perturbation tables an export may fill records from (issue 15's stages); empty slices
/// leave the records' perturbation maps empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct Perturbations<'a> {
    pub queries: &'a [QueryPerturbation],
    pub documents: &'a [DocumentPerturbation],
}

/// Records split into RARE's two files, plus the questions left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RareRecords {
    pub single_hop: Vec<RareRecord>,
    pub multi_hop: Vec<RareRecord>,
    /// Questions not exported: (question id, reason code, detail).
    pub skipped: Vec<(String, &'static str, String)>,
}

/// What [`export_rare`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RareSummary {
    pub single_hop: usize,
    pub multi_hop: usize,
    /// Questions left out, each `(id, reason, detail)`: only a kind RARE has no file for.
    pub skipped: Vec<(String, &'static str, String)>,
    pub files: Vec<PathBuf>,
}

/// A question left out of the export: (question id, reason code, detail).
type Skipped = (String, &'static str, String);

/// What records are made from besides their question: splits and perturbations by question.
struct Sources<'a> {
    split_of: BTreeMap<&'a str, &'a str>,
    queries: BTreeMap<&'a str, BTreeMap<String, &'a QueryPerturbation>>,
    documents: BTreeMap<&'a str, Vec<&'a DocumentPerturbation>>,
}

impl<'a> Sources<'a> {
    fn new(splits: &'a [QuestionSplit], perturbations: Perturbations<'a>) -> Self {
        let split_of: BTreeMap<&str, &str> = splits
            .iter()
            .map(|s| (s.question_id.as_str(), s.split.as_str()))
            .collect();
        let mut queries: BTreeMap<&str, BTreeMap<String, &QueryPerturbation>> = BTreeMap::new();
        for p in perturbations.queries {
            let slot = queries
                .entry(p.question_id.as_str())
                .or_default()
                .entry(p.kind.clone())
                .or_insert(p);
            // One per kind in RARE; should a table hold several, keep the most similar (ties:
            // id), so the choice does not depend on row order.
            if (p.similarity, &p.id) > (slot.similarity, &slot.id) {
                *slot = p;
            }
        }
        let mut documents: BTreeMap<&str, Vec<&DocumentPerturbation>> = BTreeMap::new();
        for p in perturbations.documents {
            documents.entry(p.question_id.as_str()).or_default().push(p);
        }
        Sources {
            split_of,
            queries,
            documents,
        }
    }

    /// `q`'s record, or why it is left out (a kind RARE does not know: `unknown_kind`).
    fn record(&self, q: &Question) -> Result<RareRecord, Skipped> {
        let multi_hop_type = hop_type(q)?.map(str::to_string);
        let query_perturbations = self
            .queries
            .get(q.id.as_str())
            .map(|by_kind| {
                by_kind
                    .iter()
                    .map(|(kind, p)| {
                        (
                            kind.clone(),
                            RareQueryPerturbation {
                                perturbed_query: p.perturbed_query.clone(),
                                similarity: p.similarity,
                            },
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(RareRecord {
            id: q.id.clone(),
            question: q.question.clone(),
            answer: q.answer.clone(),
            answer_chunk_ids: q.answer_chunk_ids.clone(),
            metadata: q.metadata.clone(),
            source_sentences: q.source_sentences.clone(),
            entity_1: q.entity_1.clone(),
            relation: q.relation.clone(),
            entity_2: q.entity_2.clone(),
            multi_hop_type,
            split: self.split_of.get(q.id.as_str()).map(|s| s.to_string()),
            query_perturbations,
            document_perturbations: document_map(q, self.documents.get(q.id.as_str())),
        })
    }
}

/// Which of RARE's files `q` goes to: `None` the single-hop file, a multi-hop type the other;
/// a kind RARE does not know is skipped (`unknown_kind`).
fn hop_type(q: &Question) -> Result<Option<&'static str>, Skipped> {
    if q.kind == "single_hop" {
        return Ok(None);
    }
    match MULTI_HOP_KINDS.iter().find(|k| **k == q.kind) {
        Some(k) => Ok(Some(k)),
        None => Err((
            q.id.clone(),
            "unknown_kind",
            format!(
                "kind `{}` is neither single_hop nor a RARE multi-hop type",
                q.kind
            ),
        )),
    }
}

/// Turn questions into RARE records, in `questions` order. `splits` gives each record's split
/// (by `question_id`); `perturbations` its perturbation maps. A question of a kind RARE does not
/// know is skipped with reason `unknown_kind`.
pub fn rare_records(
    questions: &[Question],
    splits: &[QuestionSplit],
    perturbations: Perturbations<'_>,
) -> RareRecords {
    let sources = Sources::new(splits, perturbations);
    let mut out = RareRecords::default();
    for q in questions {
        match sources.record(q) {
            Ok(record) if record.multi_hop_type.is_some() => out.multi_hop.push(record),
            Ok(record) => out.single_hop.push(record),
            Err(skipped) => out.skipped.push(skipped),
        }
    }
    out
}

/// A question's document perturbations by kind, every RARE kind present, each list in the
/// order of the question's answer chunks (then chunk id, then row id).
fn document_map(
    q: &Question,
    rows: Option<&Vec<&DocumentPerturbation>>,
) -> BTreeMap<String, Vec<RareDocumentPerturbation>> {
    let mut map: BTreeMap<String, Vec<&DocumentPerturbation>> = DOCUMENT_PERTURBATION_KINDS
        .iter()
        .map(|k| (k.to_string(), Vec::new()))
        .collect();
    for p in rows.into_iter().flatten() {
        map.entry(p.kind.clone()).or_default().push(p);
    }
    let position = |chunk: &str| {
        q.answer_chunk_ids
            .iter()
            .position(|c| c == chunk)
            .unwrap_or(usize::MAX)
    };
    map.into_iter()
        .map(|(kind, mut list)| {
            list.sort_by(|a, b| {
                (position(&a.chunk_id), &a.chunk_id, &a.id).cmp(&(
                    position(&b.chunk_id),
                    &b.chunk_id,
                    &b.id,
                ))
            });
            let list = list
                .into_iter()
                .map(|p| RareDocumentPerturbation {
                    chunk_id: p.chunk_id.clone(),
                    text: p.text.clone(),
                    similarity: p.similarity,
                })
                .collect();
            (kind, list)
        })
        .collect()
}

/// Write the two files into `dir` (created if missing), pretty-printed as RARE writes them;
/// returns their paths in `RARE_FILES` order.
pub fn write_rare(records: &RareRecords, dir: &Path) -> Result<Vec<PathBuf>, RareError> {
    create_dir(dir)?;
    Ok(vec![
        write_list(&dir.join(SINGLE_HOP_FILE), &records.single_hop)?,
        write_list(&dir.join(MULTI_HOP_FILE), &records.multi_hop)?,
    ])
}

/// The records of `questions` written into `dir` as [`write_rare`] writes them, each made (as
/// [`rare_records`] makes it) only as its file is written, so they are never held together.
pub fn export_rare(
    questions: &[Question],
    splits: &[QuestionSplit],
    perturbations: Perturbations<'_>,
    dir: &Path,
) -> Result<RareSummary, RareError> {
    let sources = Sources::new(splits, perturbations);
    let mut summary = RareSummary::default();
    for q in questions {
        match hop_type(q) {
            Ok(None) => summary.single_hop += 1,
            Ok(Some(_)) => summary.multi_hop += 1,
            Err(skipped) => summary.skipped.push(skipped),
        }
    }
    // The records of one file: its questions' only.
    let records = |multi: bool| {
        let sources = &sources;
        questions
            .iter()
            .filter(move |q| hop_type(q).is_ok_and(|t| t.is_some() == multi))
            .filter_map(move |q| sources.record(q).ok())
    };
    create_dir(dir)?;
    summary.files = vec![
        write_list(&dir.join(SINGLE_HOP_FILE), records(false))?,
        write_list(&dir.join(MULTI_HOP_FILE), records(true))?,
    ];
    Ok(summary)
}
