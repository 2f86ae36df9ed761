//! The `export-rare` stage: our questions as RARE's records.
//!
//! The format itself (file names, [`RareRecord`], the writer, the readers) lives in
//! `noisebench_releases::rare`, and the making of records from pipeline tables (questions,
//! splits, perturbations) in `noisebench_releases::rare_export`, which `noisebench export`
//! uses too; this module is the stage around them.

use noisebench_core::{
    DocumentPerturbation, Drops, InputSpec, Inputs, OutputSpec, QueryPerturbation, Question,
    QuestionSplit, SideFile, StageContext, StageError, StageOutput, StageReport, TableKind,
    TypedStage,
};
use serde::Deserialize;

pub use noisebench_releases::rare::RARE_FILES;
use noisebench_releases::rare_export::{Perturbations, export_rare};

/// Configuration of `export-rare`: nothing to set yet (an empty table).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportRareConfig {}

/// `export-rare`: writes RARE's two files ([`RARE_FILES`]) into its stage directory,
/// published in snapshots under `exports/rare/`. Input `questions` (the judge's kept
/// questions); optional `splits`, `query_perturbations`, `document_perturbations`. No table
/// outputs; each question is a record or a drop.
pub struct ExportRareStage;

impl TypedStage for ExportRareStage {
    type Config = ExportRareConfig;
    const KIND: &'static str = "export-rare";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec::required("questions", TableKind::Questions),
            InputSpec::optional("splits", TableKind::QuestionSplits),
            InputSpec::optional("query_perturbations", TableKind::QueryPerturbations),
            InputSpec::optional("document_perturbations", TableKind::DocumentPerturbations),
        ]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        Vec::new()
    }

    fn files(&self, _config: &ExportRareConfig) -> Vec<SideFile> {
        RARE_FILES
            .iter()
            .map(|f| SideFile::export(*f, "rare"))
            .collect()
    }

    fn run(
        &self,
        _config: &ExportRareConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let questions: Vec<Question> = inputs.take("questions")?;
        let splits: Vec<QuestionSplit> = inputs.take_optional("splits")?.unwrap_or_default();
        let queries: Vec<QueryPerturbation> = inputs
            .take_optional("query_perturbations")?
            .unwrap_or_default();
        let documents: Vec<DocumentPerturbation> = inputs
            .take_optional("document_perturbations")?
            .unwrap_or_default();
        let summary = export_rare(
            &questions,
            &splits,
            Perturbations {
                queries: &queries,
                documents: &documents,
            },
            &ctx.stage_dir,
        )
        .map_err(|e| StageError::Other(e.to_string()))?;
        let mut drops = Drops::new(&ctx.stage_id);
        for (id, reason, detail) in summary.skipped {
            drops.add(id, reason, detail);
        }
        Ok(StageOutput::new(StageReport {
            items_in: questions.len() as u64,
            items_out: (summary.single_hop + summary.multi_hop) as u64,
            drops: drops.into_records(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_releases::rare::{MULTI_HOP_FILE, SINGLE_HOP_FILE};
    use noisebench_releases::rare_export::{rare_records, write_rare};

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
            let back = noisebench_releases::rare::read_records(&dir.path().join(name)).unwrap();
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
        let out = ExportRareStage
            .run(&ExportRareConfig::default(), inputs, &ctx)
            .unwrap();
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
        let files = ExportRareStage.files(&ExportRareConfig::default());
        assert_eq!(
            files,
            vec![
                SideFile::export(SINGLE_HOP_FILE, "rare"),
                SideFile::export(MULTI_HOP_FILE, "rare"),
            ]
        );
    }
}
