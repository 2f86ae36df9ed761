//! Every format in `noisebench_releases::formats()`, through the one shape: its stage kind and
//! files, an export from tables in memory whose every item read is written or left out with a
//! reason, the files read back strictly with as many items as were written, and the export
//! stage writing the same files. A new format passes these by being listed.

use std::collections::BTreeMap;

use noisebench_core::{
    Claim, ClaimDocumentLabel, Document, DocumentCredibility, Inputs, NoProgress, Question, Rows,
    SideFile, Stage, StageContext, stable_id,
};
use noisebench_releases::{ExportStage, MemoryTables, format, format_names, formats};

fn claim(id: &str, verdict: &str) -> Claim {
    Claim {
        id: id.into(),
        text: format!("Claim {id} says a thing."),
        verdict: verdict.into(),
        original_rating: verdict.into(),
        claim_date: Some("2020-01-01".into()),
        source: "test".into(),
        ..Claim::default()
    }
}

fn document(id: &str, text: &str) -> Document {
    Document {
        id: id.into(),
        url: format!("https://news.example/{id}"),
        canonical_url: format!("https://news.example/{id}"),
        domain: "news.example".into(),
        title: Some(format!("Title {id}")),
        text: text.into(),
        content_hash: stable_id("h", &[text]),
        ..Document::default()
    }
}

fn label(claim: &str, doc: &str, label: Option<&str>) -> ClaimDocumentLabel {
    ClaimDocumentLabel {
        id: stable_id("label", &[claim, doc]),
        claim_id: claim.into(),
        document_id: doc.into(),
        label: label.map(str::to_string),
        model_label: label.map(str::to_string),
        stance: label.map(|_| "support".to_string()),
        label_source: "model".into(),
        provenance: "test".into(),
        ..ClaimDocumentLabel::default()
    }
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
        report_ids: vec!["report_1".into()],
        provenance: "offline".into(),
        ..Question::default()
    }
}

/// Both tracks' tables, each with an item some format leaves out: a label with no label, a
/// claim with no true/false verdict, a question of a kind RARE has no file for.
fn tables() -> Vec<Rows> {
    let documents = vec![
        document("d1", "First report text."),
        document("d2", "Second report text."),
        document("d3", "Third report text."),
    ];
    let credibility = documents
        .iter()
        .map(|d| DocumentCredibility {
            id: stable_id("cred", &[&d.id]),
            document_id: d.id.clone(),
            domain: d.domain.clone(),
            credibility: Some("high".into()),
            credibility_source: Some("table".into()),
            source_type: "news".into(),
            source_type_source: "table".into(),
        })
        .collect();
    vec![
        Rows::Claims(vec![
            claim("c1", "true"),
            claim("c2", "false"),
            claim("c3", "half-true"),
        ]),
        Rows::Documents(documents),
        Rows::Labels(vec![
            label("c1", "d1", Some("supporting")),
            label("c1", "d2", Some("irrelevant")),
            label("c2", "d3", Some("misleading")),
            label("c2", "d1", None),
            label("c3", "d2", Some("supporting")),
        ]),
        Rows::DocumentCredibility(credibility),
        Rows::Questions(vec![
            question("q1", "single_hop", 1),
            question("q2", "chained_multi_hop", 2),
            question("q3", "riddle", 1),
        ]),
    ]
}

/// Items a format reads: the rows of its items' table.
fn items_read(tables: &[Rows], format: &dyn noisebench_releases::ReleaseFormat) -> usize {
    tables
        .iter()
        .find(|r| r.kind() == format.items())
        .map_or(0, Rows::len)
}

#[test]
fn the_list_has_unique_names_and_each_stage_kind_is_export_name() {
    let names = format_names();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert!(names.len() >= 3, "{names:?}");
    for f in formats() {
        assert_eq!(f.stage_kind(), format!("export-{}", f.name()));
        assert!(
            !f.files().is_empty() && !f.about().is_empty(),
            "{}",
            f.name()
        );
        assert!(
            f.inputs().iter().any(|i| i.required && i.kind == f.items()),
            "{}: its items' table is a required input",
            f.name()
        );
        assert_eq!(format(f.name()).map(|g| g.name()), Some(f.name()));
    }
    assert!(format("no-such-format").is_none());
}

#[test]
fn every_format_exports_every_item_or_a_reason_and_reads_back_what_it_wrote() {
    let tables = tables();
    for f in formats() {
        let dir = tempfile::tempdir().unwrap();
        let exported = f
            .export(&MemoryTables(tables.clone()), dir.path())
            .unwrap_or_else(|e| panic!("{}: {e}", f.name()));
        let (written, skipped) = (exported.written(), exported.skipped());
        eprintln!(
            "format {}: {written} written, {} left out",
            f.name(),
            skipped.len()
        );
        assert_eq!(
            written + skipped.len(),
            items_read(&tables, *f),
            "{}: written {written}, skipped {skipped:?}",
            f.name()
        );
        assert!(
            written > 0 && !skipped.is_empty(),
            "{}: {exported:?}",
            f.name()
        );
        assert!(
            skipped
                .iter()
                .all(|(id, reason, _)| !id.is_empty() && !reason.is_empty())
        );
        for file in f.files() {
            assert!(dir.path().join(file).is_file(), "{}: {file}", f.name());
        }
        assert_eq!(f.read_back(dir.path()).unwrap(), written, "{}", f.name());
    }
}

#[test]
fn a_missing_required_table_is_an_error_naming_it() {
    for f in formats() {
        let dir = tempfile::tempdir().unwrap();
        let e = f
            .export(&MemoryTables(Vec::new()), dir.path())
            .unwrap_err()
            .to_string();
        let first = f.inputs()[0].kind.name();
        assert!(e.contains(first), "{}: {e}", f.name());
    }
}

#[test]
fn each_export_stage_writes_its_format_and_counts_what_it_left_out() {
    let tables = tables();
    for f in formats() {
        let stage = ExportStage::new(*f);
        assert_eq!(stage.kind(), f.stage_kind());
        assert_eq!(
            stage.files(&serde_json::json!({})),
            f.files()
                .into_iter()
                .map(|file| SideFile::export(file, f.name()))
                .collect::<Vec<_>>()
        );
        assert!(
            stage
                .check(&serde_json::json!({"nope": 1}), ".".as_ref())
                .is_err()
        );
        let by_role: BTreeMap<String, Rows> = f
            .inputs()
            .iter()
            .filter_map(|spec| {
                let rows = tables.iter().find(|r| r.kind() == spec.kind)?;
                Some((spec.role.to_string(), rows.clone()))
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let ctx = StageContext {
            root: dir.path().into(),
            stage_dir: dir.path().into(),
            pipeline: "test".into(),
            stage_id: f.stage_kind().into(),
            progress: std::sync::Arc::new(NoProgress),
        };
        let out = stage
            .run(&serde_json::json!({}), Inputs::new(by_role), &ctx)
            .unwrap();
        let report = &out.report;
        assert_eq!(
            report.items_in,
            items_read(&tables, *f) as u64,
            "{}",
            f.name()
        );
        assert_eq!(
            report.items_in,
            report.items_out + report.drops.len() as u64,
            "{}",
            f.name()
        );
        assert_eq!(f.read_back(dir.path()).unwrap() as u64, report.items_out);
        // A required input not given is refused by role.
        let e = stage
            .run(&serde_json::json!({}), Inputs::new(BTreeMap::new()), &ctx)
            .unwrap_err()
            .to_string();
        assert!(e.contains(f.inputs()[0].role), "{}: {e}", f.name());
    }
}
