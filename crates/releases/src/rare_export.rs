//! RARE's records made from the report track's tables (questions, splits, perturbations) and
//! written with [`crate::rare`]'s writer: what `export-rare` and `noisebench export rare`
//! write ([`Rare`], the format in [`crate::formats`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_core::{DocumentPerturbation, QueryPerturbation, Question, QuestionSplit};

use crate::rare::{
    DOCUMENT_PERTURBATION_KINDS, MULTI_HOP_FILE, MULTI_HOP_KINDS, RareDocumentPerturbation,
    RareError, RareQueryPerturbation, RareRecord, SINGLE_HOP_FILE, create_dir,
    write_records as write_list,
};
pub use crate::summary::RareSummary;

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

/// RARE's release format ([`crate::format::ReleaseFormat`]): its two JSON lists, from
/// `questions` and, when given, `splits`, `query_perturbations` and `document_perturbations`.
pub struct Rare;

impl crate::format::ReleaseFormat for Rare {
    fn name(&self) -> &'static str {
        "rare"
    }
    fn stage_kind(&self) -> &'static str {
        "export-rare"
    }
    fn version(&self) -> u32 {
        1
    }
    fn about(&self) -> &'static str {
        "RARE's rag_single_hop_dataset.json and rag_multi_hop_dataset.json"
    }
    fn items(&self) -> noisebench_core::TableKind {
        noisebench_core::TableKind::Questions
    }
    fn inputs(&self) -> Vec<noisebench_core::InputSpec> {
        use noisebench_core::{InputSpec, TableKind};
        vec![
            InputSpec::required("questions", TableKind::Questions),
            InputSpec::optional("splits", TableKind::QuestionSplits),
            InputSpec::optional("query_perturbations", TableKind::QueryPerturbations),
            InputSpec::optional("document_perturbations", TableKind::DocumentPerturbations),
        ]
    }
    fn files(&self) -> Vec<&'static str> {
        crate::rare::RARE_FILES.to_vec()
    }
    fn export(
        &self,
        tables: &dyn crate::format::TableSource,
        out: &Path,
    ) -> Result<crate::format::Exported, crate::format::BoxError> {
        let questions: Vec<Question> = tables.require()?;
        let splits: Vec<QuestionSplit> = tables.read_or_empty()?;
        let queries: Vec<QueryPerturbation> = tables.read_or_empty()?;
        let documents: Vec<DocumentPerturbation> = tables.read_or_empty()?;
        let perturbations = Perturbations {
            queries: &queries,
            documents: &documents,
        };
        Ok(crate::format::Exported::Rare(export_rare(
            &questions,
            &splits,
            perturbations,
            out,
        )?))
    }
    fn read_back(&self, dir: &Path) -> Result<usize, crate::format::BoxError> {
        let mut n = 0;
        for file in crate::rare::RARE_FILES {
            n += crate::rare::read_records(&dir.join(file))?.len();
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rare::{MULTI_HOP_FILE, RARE_FILES, SINGLE_HOP_FILE};
    use noisebench_core::{Inputs, SideFile, Stage, StageContext};

    fn stage() -> crate::ExportStage {
        crate::ExportStage::new(crate::format("rare").unwrap())
    }

    fn question(id: &str, kind: &str, hops: usize) -> Question {
        Question {
            id: id.into(),
            pattern_id: format!("pattern_{id}"),
            kind: kind.into(),
            question: format!("What is {id}?"),
            answer: format!("answer {id}"),
            answer_chunk_ids: (0..hops).map(|i| format!("chunk_{id}_{i}")).collect(),
            source_sentences: (0..hops).map(|i| format!("Sentence {i}.")).collect(),
            triplet_ids: (0..hops).map(|i| format!("triplet_{id}_{i}")).collect(),
            entity_1: (0..hops).map(|i| format!("head {i}")).collect(),
            relation: (0..hops).map(|i| format!("rel {i}")).collect(),
            entity_2: (0..hops).map(|i| format!("tail {i}")).collect(),
            pivot_entities: vec![],
            report_ids: vec!["report_1".into()],
            metadata: [("company".to_string(), "Acme".to_string())].into(),
            provenance: "offline".into(),
        }
    }

    /// The streamed export writes what serializing the whole lists writes, byte for byte, and
    /// counts the same records and skips; an empty list is `[]` both ways.
    #[test]
    fn streamed_export_is_the_whole_lists_json() {
        let qs = mixed_questions();
        let documents = vec![DocumentPerturbation {
            id: "d1".into(),
            question_id: "q2".into(),
            chunk_id: "chunk_q2_1".into(),
            kind: "regex_delete".into(),
            text: "Sentence \"one\".\n".into(),
            similarity: Some(0.5),
            provenance: "rule".into(),
        }];
        let perturbations = Perturbations {
            queries: &[],
            documents: &documents,
        };
        for questions in [&qs[..], &qs[..1], &[]] {
            let a = tempfile::tempdir().unwrap();
            let b = tempfile::tempdir().unwrap();
            let streamed = export_rare(questions, &[], perturbations, a.path()).unwrap();
            let records = rare_records(questions, &[], perturbations);
            write_rare(&records, b.path()).unwrap();
            for name in RARE_FILES {
                let whole = serde_json::to_string_pretty(if name == SINGLE_HOP_FILE {
                    &records.single_hop
                } else {
                    &records.multi_hop
                })
                .unwrap()
                    + "\n";
                let got = std::fs::read_to_string(a.path().join(name)).unwrap();
                assert_eq!(got, whole, "{name}");
                assert_eq!(got, std::fs::read_to_string(b.path().join(name)).unwrap());
            }
            assert_eq!(streamed.single_hop, records.single_hop.len());
            assert_eq!(streamed.multi_hop, records.multi_hop.len());
            assert_eq!(streamed.skipped, records.skipped);
        }
    }

    /// One question of each kind RARE knows, and one it does not (`riddle`).
    fn mixed_questions() -> Vec<Question> {
        vec![
            question("q1", "single_hop", 1),
            question("q2", "chained_multi_hop", 2),
            question("q3", "star_shaped", 3),
            question("q4", "inverted_star_shaped", 2),
            question("q5", "riddle", 1),
        ]
    }

    #[test]
    fn single_and_multi_hop_records_carry_every_rare_field() {
        let qs = mixed_questions();
        let splits = vec![QuestionSplit {
            id: "split_q2".into(),
            question_id: "q2".into(),
            kind: "chained_multi_hop".into(),
            split: "test".into(),
        }];
        let r = rare_records(&qs, &splits, Perturbations::default());
        assert_eq!(r.single_hop.len(), 1);
        assert_eq!(r.multi_hop.len(), 3);
        assert_eq!(r.skipped.len(), 1);
        assert_eq!(
            (r.skipped[0].0.as_str(), r.skipped[0].1),
            ("q5", "unknown_kind")
        );
        let single = &r.single_hop[0];
        assert_eq!(single.id, "q1");
        assert_eq!(single.multi_hop_type, None);
        assert_eq!(single.split, None);
        let chain = &r.multi_hop[0];
        assert_eq!(chain.multi_hop_type.as_deref(), Some("chained_multi_hop"));
        assert_eq!(chain.split.as_deref(), Some("test"));
        assert_eq!(chain.answer_chunk_ids, vec!["chunk_q2_0", "chunk_q2_1"]);
        assert_eq!(chain.entity_1, vec!["head 0", "head 1"]);
        assert_eq!(chain.metadata["company"], "Acme");
        assert!(chain.query_perturbations.is_empty());
        assert_eq!(
            chain.document_perturbations.keys().collect::<Vec<_>>(),
            vec!["back_translation", "regex_delete"]
        );
        assert!(chain.document_perturbations.values().all(Vec::is_empty));

        let json = serde_json::to_value(single).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        for k in [
            "id",
            "question",
            "answer",
            "answer_chunk_ids",
            "metadata",
            "source_sentences",
            "entity_1",
            "relation",
            "entity_2",
            "split",
            "query_perturbations",
            "document_perturbations",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        assert!(!keys.contains(&"multi_hop_type"));
        let json = serde_json::to_value(chain).unwrap();
        assert_eq!(json["multi_hop_type"], "chained_multi_hop");
    }

    #[test]
    fn perturbations_fill_their_places() {
        let qs = vec![question("q2", "chained_multi_hop", 2)];
        let query = |id: &str, kind: &str, text: &str, similarity: f64| QueryPerturbation {
            id: id.into(),
            question_id: "q2".into(),
            kind: kind.into(),
            perturbed_query: text.into(),
            similarity,
            provenance: "rule".into(),
        };
        let queries = vec![
            query("p1", "character_level", "Waht is q2?", 0.9),
            query("p2", "character_level", "What si q2?", 0.95),
            query("p3", "word_level", "Which is q2?", 0.88),
        ];
        let doc = |id: &str, chunk: &str, kind: &str| DocumentPerturbation {
            id: id.into(),
            question_id: "q2".into(),
            chunk_id: chunk.into(),
            kind: kind.into(),
            text: format!("{kind} of {chunk}"),
            similarity: Some(0.9),
            provenance: "rule".into(),
        };
        let documents = vec![
            doc("d2", "chunk_q2_1", "regex_delete"),
            doc("d1", "chunk_q2_0", "regex_delete"),
        ];
        let r = rare_records(
            &qs,
            &[],
            Perturbations {
                queries: &queries,
                documents: &documents,
            },
        );
        let rec = &r.multi_hop[0];
        assert_eq!(rec.query_perturbations.len(), 2);
        assert_eq!(
            rec.query_perturbations["character_level"].perturbed_query,
            "What si q2?"
        );
        let deleted: Vec<&str> = rec.document_perturbations["regex_delete"]
            .iter()
            .map(|d| d.chunk_id.as_str())
            .collect();
        assert_eq!(deleted, vec!["chunk_q2_0", "chunk_q2_1"]);
        assert!(rec.document_perturbations["back_translation"].is_empty());
    }

    #[test]
    fn files_are_json_lists_that_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let qs = vec![
            question("q1", "single_hop", 1),
            question("q2", "star_shaped", 2),
        ];
        let s = export_rare(&qs, &[], Perturbations::default(), dir.path()).unwrap();
        assert_eq!((s.single_hop, s.multi_hop), (1, 1));
        assert_eq!(s.files.len(), 2);
        for (name, n) in [(SINGLE_HOP_FILE, 1), (MULTI_HOP_FILE, 1)] {
            let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
            assert!(text.starts_with('['), "{name} is a JSON list");
            let back = crate::rare::read_records(&dir.path().join(name)).unwrap();
            assert_eq!(back.len(), n);
        }
        // An empty export still writes both files, as empty lists.
        let empty = tempfile::tempdir().unwrap();
        export_rare(&[], &[], Perturbations::default(), empty.path()).unwrap();
        for name in RARE_FILES {
            let text = std::fs::read_to_string(empty.path().join(name)).unwrap();
            assert_eq!(text.trim(), "[]");
        }
    }

    #[test]
    fn stage_writes_both_files_and_drops_unknown_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = StageContext {
            root: dir.path().into(),
            stage_dir: dir.path().into(),
            pipeline: "test".into(),
            stage_id: "export-rare".into(),
            progress: std::sync::Arc::new(noisebench_core::NoProgress),
        };
        let inputs = Inputs::new(
            [(
                "questions".to_string(),
                noisebench_core::Rows::Questions(vec![
                    question("q1", "single_hop", 1),
                    question("q2", "inverted_star_shaped", 2),
                    question("q3", "riddle", 1),
                ]),
            )]
            .into(),
        );
        let out = stage().run(&serde_json::json!({}), inputs, &ctx).unwrap();
        assert!(out.tables.is_empty());
        assert_eq!((out.report.items_in, out.report.items_out), (3, 2));
        assert_eq!(out.report.drops.len(), 1);
        assert_eq!(out.report.drops[0].reason, "unknown_kind");
        for name in RARE_FILES {
            assert!(dir.path().join(name).is_file(), "{name}");
        }
    }

    #[test]
    fn stage_declares_its_files_as_rare_exports() {
        assert_eq!(stage().kind(), "export-rare");
        let files = stage().files(&serde_json::json!({}));
        assert_eq!(
            files,
            vec![
                SideFile::export(SINGLE_HOP_FILE, "rare"),
                SideFile::export(MULTI_HOP_FILE, "rare"),
            ]
        );
    }
}
