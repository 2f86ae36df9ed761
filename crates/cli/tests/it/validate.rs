//! `noisebench validate`: the demo snapshot passes every declared table check (the ones a build
//! runs), and a copy tampered to break one rule fails naming that rule. A build whose stage
//! writes a tampered table stops at that stage, naming the table, the check, the count of rows
//! and the first ids, before anything is published. `noisebench export rare`: the records read back with
//! Python's `json` module, as RARE's scripts read them.
//!
//! The tampered copies start from a snapshot whose report-track tables this file writes itself
//! ([`with_known_questions`]), so each test breaks exactly one rule whatever the demo's
//! questions happen to be; the demo itself is validated as built.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_cli::{Exported, export_snapshot, validate_snapshot};
use noisebench_core::{
    CheckStatus, Chunk, ClaimDocument, ClaimDocumentLabel, Question, QuestionSplit,
    RejectedQuestion, Report, TableKind, TableRow, Triplet,
};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{MANIFEST, Manifest, TableEntry};
use noisebench_testkit::{copy_dir, run_python_json};

/// The demo snapshot, built once per test binary and shared by its tests (read only; tests that
/// tamper work on a copy).
fn demo_snapshot() -> &'static Path {
    &crate::shared::demo().1
}

/// A writable copy of the demo snapshot.
fn demo_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("1.0.0");
    copy_dir(demo_snapshot(), &copy);
    (tmp, copy)
}

/// Replace (or add) table `name` of the snapshot at `dir` with `rows`, updating the manifest's
/// entry. The sha256 is left stale on purpose: `validate` checks rules, `verify` hashes.
fn put_table<T: TableRow>(dir: &Path, rows: Vec<T>) {
    let name = T::KIND.name();
    let mut manifest = Manifest::read(dir).unwrap();
    let file = format!("data/{name}.parquet");
    let written = table_io::write_table(&dir.join(&file), &T::into_rows(rows)).unwrap();
    let entry = manifest
        .tables
        .entry(name.to_string())
        .or_insert_with(|| TableEntry {
            file: file.clone(),
            kind: name.to_string(),
            sha256: String::new(),
            rows: 0,
            bytes: 0,
            schema_version: T::KIND.schema().version,
            schema_fingerprint: String::new(),
        });
    entry.file = file;
    entry.rows = written.rows;
    std::fs::write(
        dir.join(MANIFEST),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
}

fn read_table<T: TableRow>(dir: &Path) -> Vec<T> {
    let manifest = Manifest::read(dir).unwrap();
    table_io::read_rows(&dir.join(&manifest.tables[T::KIND.name()].file)).unwrap()
}

fn chunk(id: &str, text: &str) -> Chunk {
    Chunk {
        id: id.into(),
        report_id: "report_t".into(),
        text: text.into(),
        ..Chunk::default()
    }
}

fn triplet(id: &str, chunk: &str, e1: &str, rel: &str, e2: &str, sentence: &str) -> Triplet {
    Triplet {
        id: id.into(),
        report_id: "report_t".into(),
        chunk_id: chunk.into(),
        entity_1: e1.into(),
        relation: rel.into(),
        entity_2: e2.into(),
        source_sentence: sentence.into(),
        provenance: "offline".into(),
    }
}

/// Known report-track tables: three chunks, three triplets, a single-hop question and a chain
/// (Acme -> owns -> Beta Corp -> is based in -> Oslo, pivot Beta Corp), their splits, and one
/// rejected question. Every rule holds.
fn known_tables() -> Known {
    let chunks = vec![
        chunk("chunk_t1", "Acme owns Beta Corp. Revenue rose."),
        chunk("chunk_t2", "Beta Corp is based in Oslo."),
        chunk(
            "chunk_t3",
            "Gamma Ltd reported revenue of 12 million dollars.",
        ),
    ];
    let triplets = vec![
        triplet(
            "triplet_t1",
            "chunk_t1",
            "Acme",
            "owns",
            "Beta Corp",
            "Acme owns Beta Corp.",
        ),
        triplet(
            "triplet_t2",
            "chunk_t2",
            "Beta Corp",
            "is based in",
            "Oslo",
            "Beta Corp is based in Oslo.",
        ),
        triplet(
            "triplet_t3",
            "chunk_t3",
            "Gamma Ltd",
            "reported revenue of",
            "12 million dollars",
            "Gamma Ltd reported revenue of 12 million dollars.",
        ),
    ];
    let single = Question {
        id: "question_t1".into(),
        pattern_id: "pattern_t1".into(),
        kind: "single_hop".into(),
        question: "What revenue did Gamma Ltd report?".into(),
        answer: "12 million dollars".into(),
        answer_chunk_ids: vec!["chunk_t3".into()],
        source_sentences: vec![triplets[2].source_sentence.clone()],
        triplet_ids: vec!["triplet_t3".into()],
        entity_1: vec!["Gamma Ltd".into()],
        relation: vec!["reported revenue of".into()],
        entity_2: vec!["12 million dollars".into()],
        report_ids: vec!["report_t".into()],
        metadata: [("company".to_string(), "Gamma Ltd".to_string())].into(),
        provenance: "offline".into(),
        ..Question::default()
    };
    let chain = Question {
        id: "question_t2".into(),
        pattern_id: "pattern_t2".into(),
        kind: "chained_multi_hop".into(),
        question: "In which city is the company Acme owns based?".into(),
        answer: "Oslo".into(),
        answer_chunk_ids: vec!["chunk_t1".into(), "chunk_t2".into()],
        source_sentences: vec![
            triplets[0].source_sentence.clone(),
            triplets[1].source_sentence.clone(),
        ],
        triplet_ids: vec!["triplet_t1".into(), "triplet_t2".into()],
        entity_1: vec!["Acme".into(), "Beta Corp".into()],
        relation: vec!["owns".into(), "is based in".into()],
        entity_2: vec!["Beta Corp".into(), "Oslo".into()],
        pivot_entities: vec!["Beta Corp".into()],
        report_ids: vec!["report_t".into()],
        metadata: [("company".to_string(), "Acme".to_string())].into(),
        provenance: "offline".into(),
    };
    let splits = vec![
        QuestionSplit {
            id: "split_t1".into(),
            question_id: "question_t1".into(),
            kind: "single_hop".into(),
            split: "test".into(),
        },
        QuestionSplit {
            id: "split_t2".into(),
            question_id: "question_t2".into(),
            kind: "chained_multi_hop".into(),
            split: "train".into(),
        },
    ];
    let rejected = vec![RejectedQuestion {
        id: "question_t9".into(),
        pattern_id: "pattern_t9".into(),
        kind: "single_hop".into(),
        question: "What?".into(),
        answer: "Oslo".into(),
        answer_chunk_ids: vec!["chunk_t2".into()],
        clarity: 1,
        correctness: 5,
        reasonableness: None,
        threshold: 3,
        reason: "clarity 1".into(),
        provenance: "offline".into(),
    }];
    Known {
        chunks,
        triplets,
        questions: vec![single, chain],
        splits,
        rejected,
    }
}

/// The report-track tables [`known_tables`] makes.
struct Known {
    chunks: Vec<Chunk>,
    triplets: Vec<Triplet>,
    questions: Vec<Question>,
    splits: Vec<QuestionSplit>,
    rejected: Vec<RejectedQuestion>,
}

/// A copy of the demo snapshot whose report-track tables are [`known_tables`]: the demo's
/// claims track and other tables as built, the questions known, so each tampering test breaks
/// exactly one rule. The perturbation tables refer to the demo's questions, so they go.
fn with_known_questions() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = demo_copy();
    let known = known_tables();
    put_table(&dir, known.chunks);
    put_table(&dir, known.triplets);
    put_table(&dir, known.questions);
    put_table(&dir, known.splits);
    put_table(&dir, known.rejected);
    put_table::<noisebench_core::QuestionJudgement>(&dir, Vec::new());
    put_table::<noisebench_core::QueryPerturbation>(&dir, Vec::new());
    put_table::<noisebench_core::DocumentPerturbation>(&dir, Vec::new());
    put_table::<noisebench_core::Pattern>(&dir, Vec::new());
    put_table::<noisebench_core::Retrieval>(&dir, Vec::new());
    // The known chunks' report.
    let mut reports: Vec<Report> = read_table(&dir);
    reports.push(Report {
        id: "report_t".into(),
        ..Report::default()
    });
    put_table(&dir, reports);
    (tmp, dir)
}

/// Validate `dir`, assert exactly `check` failed, naming `offender`.
fn assert_fails_only(dir: &Path, check: &str, offender: &str) {
    let report = validate_snapshot(dir).unwrap();
    assert_eq!(report.failed_checks(), vec![check], "{}", report.render());
    let failed = report.check(check).unwrap();
    assert!(
        failed.ids.iter().any(|id| id == offender),
        "{}",
        failed.render()
    );
    assert!(failed.render().contains(offender));
}

#[test]
fn the_demo_snapshot_is_valid() {
    let report = validate_snapshot(demo_snapshot()).unwrap();
    assert!(report.ok(), "{}", report.render());
    // The demo has every table every check needs: nothing is skipped.
    for c in &report.checks {
        assert_ne!(c.status, CheckStatus::Skipped, "{}", c.render());
    }
    // The dataset rules ran, each over some rows.
    for rule in [
        "answer_grounded",
        "multi_hop_chunks",
        "multi_hop_single_chunk",
        "references(triplet_ids -> triplets)",
        "references(answer_chunk_ids -> chunks)",
        "unique_question_text",
        "labels_complete",
        "unique(id)",
        "references(question_id -> questions)",
        "rejected_not_kept",
    ] {
        let c = report
            .check(rule)
            .unwrap_or_else(|| panic!("{rule} did not run"));
        assert!(c.checked > 0, "{}", c.render());
    }
    // A dataset folder means its latest version.
    let folder = demo_snapshot().parent().unwrap();
    assert_eq!(validate_snapshot(folder).unwrap().snapshot, demo_snapshot());
}

#[test]
fn known_questions_pass_every_rule() {
    let (_tmp, dir) = with_known_questions();
    let report = validate_snapshot(&dir).unwrap();
    assert!(report.ok(), "{}", report.render());
    let multi = report.check("multi_hop_single_chunk").unwrap();
    // The chain's chunk_t2 holds the pivot and the answer: that alone is no failure.
    assert_eq!(
        (multi.status, multi.checked, multi.failed),
        (CheckStatus::Passed, 1, 0)
    );
}

#[test]
fn an_ungrounded_answer_fails_answer_grounded() {
    let (_tmp, dir) = with_known_questions();
    let mut questions: Vec<Question> = read_table(&dir);
    questions[0].answer = "14 million dollars".into();
    put_table(&dir, questions);
    assert_fails_only(&dir, "answer_grounded", "question_t1");
}

#[test]
fn a_multi_hop_question_with_one_chunk_fails_multi_hop_chunks() {
    let (_tmp, dir) = with_known_questions();
    let mut questions: Vec<Question> = read_table(&dir);
    // Both ids the same chunk (the answer's): one distinct chunk.
    questions[1].answer_chunk_ids = vec!["chunk_t2".into(), "chunk_t2".into()];
    put_table(&dir, questions);
    assert_fails_only(&dir, "multi_hop_chunks", "question_t2");
}

#[test]
fn a_chunk_answering_a_chain_alone_fails_multi_hop_single_chunk() {
    let (_tmp, dir) = with_known_questions();
    let mut chunks: Vec<Chunk> = read_table(&dir);
    chunks.push(chunk(
        "chunk_t4",
        "Acme runs its Nordic business from Oslo.",
    ));
    put_table(&dir, chunks);
    assert_fails_only(&dir, "multi_hop_single_chunk", "question_t2");
}

#[test]
fn a_missing_triplet_fails_references_exist() {
    let (_tmp, dir) = with_known_questions();
    let mut triplets: Vec<Triplet> = read_table(&dir);
    triplets.retain(|t| t.id != "triplet_t1");
    put_table(&dir, triplets);
    assert_fails_only(&dir, "references(triplet_ids -> triplets)", "question_t2");
}

#[test]
fn a_repeated_question_text_fails_unique_question_text() {
    let (_tmp, dir) = with_known_questions();
    let mut questions: Vec<Question> = read_table(&dir);
    let mut twin = questions[0].clone();
    twin.id = "question_t3".into();
    // The same text once normalised (case and punctuation aside).
    twin.question = "what revenue did gamma ltd report".into();
    questions.push(twin);
    put_table(&dir, questions);
    assert_fails_only(&dir, "unique_question_text", "question_t3");
}

#[test]
fn an_unlabelled_pair_fails_labels_complete() {
    let (_tmp, dir) = with_known_questions();
    let mut labels: Vec<ClaimDocumentLabel> = read_table(&dir);
    let links: Vec<ClaimDocument> = read_table(&dir);
    let link = links.first().expect("the demo links claims to documents");
    let label = labels
        .iter_mut()
        .find(|l| l.claim_id == link.claim_id && l.document_id == link.document_id)
        .expect("the demo labels every pair");
    label.provenance = String::new();
    put_table(&dir, labels);
    assert_fails_only(&dir, "labels_complete", &link.id);
}

#[test]
fn a_repeated_id_fails_unique_ids() {
    let (_tmp, dir) = with_known_questions();
    let mut chunks: Vec<Chunk> = read_table(&dir);
    let mut twin = chunks[2].clone();
    twin.text = "Gamma Ltd reported revenue of 12 million dollars again.".into();
    chunks.push(twin);
    put_table(&dir, chunks);
    assert_fails_only(&dir, "unique(id)", "chunk_t3");
}

#[test]
fn a_split_of_an_unknown_question_fails_splits_reference_questions() {
    let (_tmp, dir) = with_known_questions();
    let mut splits: Vec<QuestionSplit> = read_table(&dir);
    splits.push(QuestionSplit {
        id: "split_t8".into(),
        question_id: "question_t8".into(),
        kind: "single_hop".into(),
        split: "test".into(),
    });
    put_table(&dir, splits);
    assert_fails_only(&dir, "references(question_id -> questions)", "split_t8");
}

#[test]
fn a_rejected_question_still_kept_fails_rejected_not_kept() {
    let (_tmp, dir) = with_known_questions();
    let mut rejected: Vec<RejectedQuestion> = read_table(&dir);
    rejected[0].id = "question_t1".into();
    put_table(&dir, rejected);
    assert_fails_only(&dir, "rejected_not_kept", "question_t1");
}

#[test]
fn checks_without_their_tables_are_skipped_not_failed() {
    let (_tmp, dir) = demo_copy();
    let mut manifest = Manifest::read(&dir).unwrap();
    manifest.tables.retain(|name, _| {
        !matches!(
            TableKind::from_name(name),
            Some(TableKind::Questions | TableKind::Labels)
        )
    });
    std::fs::write(
        dir.join(MANIFEST),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let report = validate_snapshot(&dir).unwrap();
    assert!(report.ok(), "{}", report.render());
    // The questions' own checks have no table to run on; those of tables referring to them
    // are skipped.
    assert!(report.check("answer_grounded").is_none());
    assert!(report.check("labels_complete").is_none());
    let line = report.check("rejected_not_kept").unwrap().render();
    assert_eq!(
        line,
        "table `rejected_questions`, check `rejected_not_kept`: skipped (no `questions` table)"
    );
    assert_eq!(
        report.check("unique(id)").unwrap().status,
        CheckStatus::Passed
    );
}

#[test]
fn the_binary_exits_non_zero_and_names_the_failed_check() {
    let (_tmp, dir) = with_known_questions();
    let bin = env!("CARGO_BIN_EXE_noisebench");
    let ok = std::process::Command::new(bin)
        .arg("validate")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{stdout}");
    assert!(
        stdout.contains("table `questions`, check `answer_grounded`: ok (checked 2)"),
        "{stdout}"
    );

    let mut questions: Vec<Question> = read_table(&dir);
    questions[1].answer_chunk_ids = vec!["chunk_t9".into(), "chunk_t2".into()];
    put_table(&dir, questions);
    let bad = std::process::Command::new(bin)
        .arg("validate")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&bad.stdout);
    assert!(!bad.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "table `questions`, check `references(answer_chunk_ids -> chunks)`: FAILED (1 of 2 rows): question_t2"
        ),
        "{stdout}"
    );
}

/// Export `snapshot` with `noisebench export rare`, read both files back with Python's `json`
/// module, and check every record against the snapshot's questions.
fn assert_rare_export_reads_back(snapshot: &Path, out: &Path) -> serde_json::Value {
    let bin = env!("CARGO_BIN_EXE_noisebench");
    let run = std::process::Command::new(bin)
        .args(["export", "rare"])
        .arg(snapshot)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rare_export.py");
    let read = run_python_json(&script, [out]);
    assert_eq!(read["errors"], serde_json::json!([]), "{read:#}");
    let questions: Vec<Question> = read_table(snapshot);
    let singles = questions.iter().filter(|q| q.kind == "single_hop").count();
    assert_eq!(
        read["single_hop"].as_u64(),
        Some(singles as u64),
        "{read:#}"
    );
    assert_eq!(
        read["multi_hop"].as_u64(),
        Some((questions.len() - singles) as u64),
        "{read:#}"
    );
    // Every record is the question it names, field for field.
    for q in &questions {
        let r = &read["records"][&q.id];
        assert_eq!(r["question"], q.question.as_str(), "{}", q.id);
        assert_eq!(r["answer"], q.answer.as_str(), "{}", q.id);
        assert_eq!(r["answer_chunk_ids"], serde_json::json!(q.answer_chunk_ids));
        assert_eq!(r["source_sentences"], serde_json::json!(q.source_sentences));
        assert_eq!(r["entity_1"], serde_json::json!(q.entity_1));
        assert_eq!(r["relation"], serde_json::json!(q.relation));
        assert_eq!(r["entity_2"], serde_json::json!(q.entity_2));
        assert_eq!(r["metadata"], serde_json::json!(q.metadata));
        if q.kind == "single_hop" {
            assert_eq!(r["multi_hop_type"], serde_json::Value::Null);
        } else {
            assert_eq!(r["multi_hop_type"], q.kind.as_str());
        }
    }
    read
}

#[test]
fn rare_export_reads_back_with_python_json() {
    // The demo as built: its own questions, splits and perturbations.
    let out = tempfile::tempdir().unwrap();
    let read = assert_rare_export_reads_back(demo_snapshot(), out.path());
    let manifest = Manifest::read(demo_snapshot()).unwrap();
    assert_eq!(
        read["with_split"].as_u64(),
        Some(manifest.tables["question_splits"].rows),
        "{read:#}"
    );
    // Every perturbation of the snapshot is in a record, under RARE's key for its kind.
    let records = read["records"].as_object().unwrap();
    let mut query_kinds = std::collections::BTreeMap::<String, u64>::new();
    let mut document_kinds = std::collections::BTreeMap::<String, u64>::new();
    for r in records.values() {
        for (kind, p) in r["query_perturbations"].as_object().unwrap() {
            assert!(p["similarity"].as_f64().unwrap() > 0.0, "{p}");
            *query_kinds.entry(kind.clone()).or_default() += 1;
        }
        for (kind, list) in r["document_perturbations"].as_object().unwrap() {
            *document_kinds.entry(kind.clone()).or_default() +=
                list.as_array().unwrap().len() as u64;
        }
    }
    assert_eq!(
        query_kinds.keys().collect::<Vec<_>>(),
        [
            "character_level",
            "grammar_perturbation",
            "irrelevant_info",
            "word_level"
        ]
    );
    assert_eq!(
        query_kinds.values().sum::<u64>(),
        manifest.tables["query_perturbations"].rows
    );
    assert_eq!(
        document_kinds.keys().collect::<Vec<_>>(),
        ["back_translation", "regex_delete"]
    );
    assert_eq!(
        document_kinds.values().sum::<u64>(),
        manifest.tables["document_perturbations"].rows
    );

    // The known questions: exact splits.
    let (_tmp, dir) = with_known_questions();
    let out = tempfile::tempdir().unwrap();
    let read = assert_rare_export_reads_back(&dir, out.path());
    assert_eq!(read["records"]["question_t1"]["split"], "test");
    assert_eq!(read["records"]["question_t2"]["split"], "train");
    assert_eq!(
        read["records"]["question_t2"]["multi_hop_type"],
        "chained_multi_hop"
    );

    // The library call agrees with the binary.
    let again = tempfile::tempdir().unwrap();
    let Exported::Rare(s) = export_snapshot(&dir, "rare", again.path()).unwrap() else {
        panic!("a RARE export returns RARE's summary")
    };
    assert_eq!((s.single_hop, s.multi_hop, s.skipped.len()), (1, 1, 0));
    for name in noisebench_releases::rare::RARE_FILES {
        assert_eq!(
            std::fs::read(out.path().join(name)).unwrap(),
            std::fs::read(again.path().join(name)).unwrap(),
            "{name}"
        );
    }
}

/// A stage writing [`known_tables`]' report, chunks and triplets.
struct KnownTablesStage;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoConfig {}

impl noisebench_core::TypedStage for KnownTablesStage {
    type Config = NoConfig;
    const KIND: &'static str = "known-tables";
    const VERSION: u32 = 1;
    fn inputs(&self) -> Vec<noisebench_core::InputSpec> {
        vec![]
    }
    fn outputs(&self) -> Vec<noisebench_core::OutputSpec> {
        use noisebench_core::OutputSpec;
        vec![
            OutputSpec::new("reports", TableKind::Reports),
            OutputSpec::new("chunks", TableKind::Chunks),
            OutputSpec::new("triplets", TableKind::Triplets),
        ]
    }
    fn run(
        &self,
        _config: &NoConfig,
        _inputs: noisebench_core::Inputs,
        _ctx: &noisebench_core::StageContext,
    ) -> Result<noisebench_core::StageOutput, noisebench_core::StageError> {
        let known = known_tables();
        let report = Report {
            id: "report_t".into(),
            ..Report::default()
        };
        let mut out = noisebench_core::StageOutput::default()
            .with_table("reports", vec![report])
            .with_table("chunks", known.chunks)
            .with_table("triplets", known.triplets);
        out.report.items_out = 1;
        Ok(out)
    }
}

/// A stage writing [`known_tables`]' questions, tampered as its configuration says: `none`,
/// `dangling` (an answer chunk that does not exist), `duplicate` (an id twice), `ungrounded`
/// (an answer in none of its chunks).
struct TamperedQuestionsStage;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TamperConfig {
    tamper: String,
}

impl noisebench_core::TypedStage for TamperedQuestionsStage {
    type Config = TamperConfig;
    const KIND: &'static str = "tampered-questions";
    const VERSION: u32 = 1;
    fn inputs(&self) -> Vec<noisebench_core::InputSpec> {
        use noisebench_core::InputSpec;
        vec![
            InputSpec::required("chunks", TableKind::Chunks),
            InputSpec::required("triplets", TableKind::Triplets),
        ]
    }
    fn outputs(&self) -> Vec<noisebench_core::OutputSpec> {
        vec![noisebench_core::OutputSpec::new(
            "questions",
            TableKind::Questions,
        )]
    }
    fn run(
        &self,
        config: &TamperConfig,
        _inputs: noisebench_core::Inputs,
        _ctx: &noisebench_core::StageContext,
    ) -> Result<noisebench_core::StageOutput, noisebench_core::StageError> {
        let mut questions = known_tables().questions;
        match config.tamper.as_str() {
            "dangling" => {
                questions[1].answer_chunk_ids = vec!["chunk_t9".into(), "chunk_t2".into()]
            }
            "duplicate" => {
                let mut twin = questions[0].clone();
                twin.question = "Which revenue did Gamma Ltd report, again?".into();
                questions.push(twin);
            }
            "ungrounded" => questions[0].answer = "14 million dollars".into(),
            _ => {}
        }
        let n = questions.len() as u64;
        let mut out = noisebench_core::StageOutput::default().with_table("questions", questions);
        out.report.items_in = n;
        out.report.items_out = n;
        Ok(out)
    }
}

/// Run a pipeline of the two stages above with `tamper`, with the binary's table checks.
fn build_tampered(
    tamper: &str,
) -> (
    tempfile::TempDir,
    Result<noisebench_pipeline::RunResult, noisebench_pipeline::RunError>,
) {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"
[pipeline]
name = "tampered"

[stages.known]
kind = "known-tables"

[stages.questions]
kind = "tampered-questions"
inputs = {{ chunks = "known.chunks", triplets = "known.triplets" }}
config = {{ tamper = "{tamper}" }}

[snapshot]
dataset = "tampered"
tables = ["known.reports", "known.chunks", "known.triplets", "questions"]
"#
    );
    let file = noisebench_pipeline::PipelineFile::parse(&text, "tampered.toml").unwrap();
    let mut registry = noisebench_pipeline::Registry::new();
    registry
        .register(Arc::new(KnownTablesStage))
        .register(Arc::new(TamperedQuestionsStage))
        .add_checks(noisebench_cli::table_checks());
    let plan = noisebench_pipeline::Plan::new(file, dir.path(), &registry).unwrap();
    let options = noisebench_pipeline::RunOptions::new(dir.path().join("work"));
    let result = noisebench_pipeline::Runner::new(&plan, options).run();
    (dir, result)
}

#[test]
fn a_stage_writing_a_tampered_table_stops_the_build_at_that_stage() {
    // Untampered: every check of every table passes, the text rules among them.
    let (_dir, ok) = build_tampered("none");
    let ok = ok.unwrap();
    assert!(ok.failed_checks().is_empty(), "{:?}", ok.failed_checks());
    for rule in ["answer_grounded", "references(answer_chunk_ids -> chunks)"] {
        assert!(
            ok.checks
                .iter()
                .any(|c| c.check == rule && c.status == CheckStatus::Passed),
            "{rule}: {:?}",
            ok.checks
        );
    }

    for (tamper, expected) in [
        (
            "dangling",
            "table `questions`, check `references(answer_chunk_ids -> chunks)`: FAILED (1 of 2 rows): question_t2",
        ),
        (
            "ungrounded",
            "table `questions`, check `answer_grounded`: FAILED (1 of 2 rows): question_t1",
        ),
    ] {
        let (dir, result) = build_tampered(tamper);
        let err = result.expect_err(tamper);
        let message = err.to_string();
        assert!(
            matches!(&err, noisebench_pipeline::RunError::Checks { stage, .. } if stage == "questions"),
            "{message}"
        );
        assert!(message.contains(expected), "{tamper}: {message}");
        // The same check fails on the files before anything would be published.
        let tables: Vec<noisebench_pipeline::PublishedTable> = [
            ("chunks", TableKind::Chunks, "known/chunks.parquet"),
            ("triplets", TableKind::Triplets, "known/triplets.parquet"),
            (
                "questions",
                TableKind::Questions,
                "questions/questions.parquet",
            ),
        ]
        .into_iter()
        .map(|(name, kind, file)| noisebench_pipeline::PublishedTable {
            name: name.into(),
            kind,
            path: dir.path().join("work/tampered").join(file),
        })
        .collect();
        let before = noisebench_pipeline::check_published(&tables, &noisebench_cli::table_checks());
        assert!(
            before.iter().any(|c| c.failed() && c.render() == expected),
            "{tamper}: {before:?}"
        );
        assert!(!dir.path().join("snapshots").exists());
    }

    // A repeated id: the stage is refused as it writes the table.
    let (_dir, result) = build_tampered("duplicate");
    let message = result.expect_err("duplicate").to_string();
    assert!(
        message.contains("stage `questions` wrote 1 ids more than once in table `questions`")
            && message.contains("question_t1"),
        "{message}"
    );
}
