//! `noisebench validate`: the demo snapshot passes every dataset rule, and a copy tampered to
//! break one rule fails naming that rule. `noisebench export rare`: the records read back with
//! Python's `json` module, as RARE's scripts read them.
//!
//! The tampered copies start from a snapshot whose report-track tables this file writes itself
//! ([`with_known_questions`]), so each test breaks exactly one rule whatever the demo's
//! questions happen to be; the demo itself is validated as built.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use noisebench_cli::{
    CheckOutcome, ExportFormat, Exported, Workspace, build_snapshot, export_snapshot,
    validate_snapshot,
};
use noisebench_core::{
    Chunk, ClaimDocument, ClaimDocumentLabel, NoProgress, Question, QuestionSplit,
    RejectedQuestion, TableKind, TableRow, Triplet,
};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{MANIFEST, Manifest, PublishOptions, PublishOutcome, TableEntry};
use noisebench_testkit::{copy_dir, repo_root, run_python_json};

/// The demo snapshot, built once per test binary and shared by its tests (read only; tests that
/// tamper work on a copy).
fn demo_snapshot() -> &'static Path {
    static DEMO: OnceLock<PathBuf> = OnceLock::new();
    DEMO.get_or_init(|| {
        // Like `checkout()`, but kept (a static is never dropped) under cargo's temporary
        // folder for this target, which `cargo clean` empties, rather than in /tmp.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap()
            .keep();
        for folder in ["pipelines", "fixtures"] {
            copy_dir(&repo_root().join(folder), &dir.join(folder));
        }
        let ws = Workspace::at(&dir, Arc::new(NoProgress));
        let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
        let Some(PublishOutcome::Published { dir: snapshot, .. }) = built.outcome else {
            panic!("the demo published nothing")
        };
        snapshot
    })
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
    (tmp, dir)
}

/// Validate `dir`, assert exactly `check` failed, naming `offender`.
fn assert_fails_only(dir: &Path, check: &str, offender: &str) {
    let report = validate_snapshot(dir).unwrap();
    assert_eq!(report.failed_checks(), vec![check], "{}", report.render());
    let failed = report.check(check).unwrap();
    assert!(
        failed.failed_ids().iter().any(|id| id == offender),
        "{}",
        failed.render()
    );
    assert!(failed.render().contains(offender));
}

#[test]
fn the_demo_snapshot_is_valid() {
    let report = validate_snapshot(demo_snapshot()).unwrap();
    assert!(report.ok(), "{}", report.render());
    // The demo has every table every check needs: nothing is skipped, and something is checked.
    for c in &report.checks {
        match &c.outcome {
            CheckOutcome::Ran { checked, .. } => assert!(*checked > 0, "{}", c.render()),
            CheckOutcome::Skipped { .. } => panic!("{}", c.render()),
        }
    }
    assert_eq!(report.checks.len(), noisebench_cli::CHECKS.len());
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
        multi.outcome,
        CheckOutcome::Ran {
            checked: 1,
            failed: vec![]
        }
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
    assert_fails_only(&dir, "references_exist", "question_t2");
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
    assert_fails_only(&dir, "unique_ids", "chunks:chunk_t3");
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
    assert_fails_only(&dir, "splits_reference_questions", "split_t8");
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
    let line = report.check("answer_grounded").unwrap().render();
    assert_eq!(line, "answer_grounded: skipped (no `questions` table)");
    assert_eq!(
        report.check("labels_complete").unwrap().render(),
        "labels_complete: skipped (no `labels` table)"
    );
    assert!(matches!(
        report.check("unique_ids").unwrap().outcome,
        CheckOutcome::Ran { .. }
    ));
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
        stdout.contains("answer_grounded: ok (checked 2, failed 0)"),
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
        stdout.contains("references_exist: FAILED (checked 2, failed 1): question_t2"),
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
    let Exported::Rare(s) = export_snapshot(&dir, ExportFormat::Rare, again.path()).unwrap() else {
        panic!("a RARE export returns RARE's summary")
    };
    assert_eq!((s.single_hop, s.multi_hop, s.skipped.len()), (1, 1, 0));
    for name in noisebench_qa::export::RARE_FILES {
        assert_eq!(
            std::fs::read(out.path().join(name)).unwrap(),
            std::fs::read(again.path().join(name)).unwrap(),
            "{name}"
        );
    }
}
