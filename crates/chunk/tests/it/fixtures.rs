//! The bundled fixtures chunk into exactly the expected number of chunks, and broken inputs are
//! counted drops. Counts were computed once and checked by reading the chunks (README, `chunks`).

use crate::common;
mod real;

use std::collections::BTreeMap;
use std::sync::Arc;

use noisebench_chunk::{
    ChunksConfig, ChunksStage, Domain, ReportsConfig, ReportsStage, Source, chunk_report, ingest,
};
use noisebench_core::{Inputs, NoProgress, Report, Rows, Stage, StageContext, TypedStage};

use common::{check_invariants, check_titles, root};

fn source(path: &str, domain: Domain) -> Source {
    Source {
        path: path.into(),
        edgar: None,
        format: None,
        domain,
        items: vec!["item_7".into()],
        metadata: BTreeMap::new(),
    }
}

fn read(path: &str, domain: Domain) -> Vec<Report> {
    let config = ReportsConfig {
        sources: vec![source(path, domain)],
    };
    let (reports, drops, _) = ingest(&config, &root(), "reports");
    assert!(drops.is_empty(), "{:?}", drops.into_records());
    reports
}

fn chunk_counts(reports: &[Report]) -> Vec<(String, usize)> {
    reports
        .iter()
        .map(|r| {
            let domain = Domain::from_name(&r.domain).unwrap();
            let config = ChunksConfig::default().resolve(domain);
            let chunks = chunk_report(r, &config);
            check_invariants(r, &config, &chunks);
            check_titles(r, &chunks);
            let name = r.source_path.rsplit('/').next().unwrap().to_string();
            (name, chunks.len())
        })
        .collect()
}

#[test]
fn edgar_filings_chunk_with_exact_counts() {
    let reports = read("fixtures/reports/edgar/*.json", Domain::Finance);
    assert_eq!(
        chunk_counts(&reports),
        vec![
            ("1000180_10K_2011_0001000180-11-000006.json".to_string(), 17),
            ("1002047_10K_2021_0001564590-21-033645.json".to_string(), 18),
            ("1003932_10K_1996_0000950134-96-002908.json".to_string(), 4),
            ("100493_10K_2022_0000100493-22-000097.json".to_string(), 20),
            ("109446_10K_1994_0000109446-94-000012.json".to_string(), 1),
        ]
    );
    let tyson = &reports[3];
    assert_eq!(tyson.metadata["cik"], "100493");
    assert_eq!(tyson.metadata["company"], "TYSON FOODS, INC.");
    assert_eq!(tyson.metadata["filing_type"], "10-K");
    assert_eq!(tyson.metadata["filing_date"], "2022-11-14");
    assert_eq!(tyson.metadata["period_of_report"], "2022-10-01");
    assert_eq!(
        tyson.title.as_deref(),
        Some("TYSON FOODS, INC. 10-K 2022-11-14")
    );
    // The 1994 filing's MD&A is a two-line "incorporated by reference" note: one small chunk,
    // kept although under 30 words would merge if it had a neighbour.
    let zurn = chunk_report(
        &reports[4],
        &ChunksConfig::default().resolve(Domain::Finance),
    );
    assert!(zurn[0].chunk.text.contains("incorporated"));
}

#[test]
fn finance_preset_overlaps_continuing_chunks() {
    let reports = read("fixtures/reports/edgar/1000180_*.json", Domain::Finance);
    let config = ChunksConfig::default().resolve(Domain::Finance);
    assert_eq!((config.max_tokens, config.overlap_tokens), (800, 100));
    let chunks = chunk_report(&reports[0], &config);
    let counter = noisebench_chunk::TokenCounter::new();
    let overlapping: Vec<_> = chunks.iter().filter(|c| c.overlap > 0).collect();
    assert!(overlapping.len() >= 5, "{}", overlapping.len());
    for c in overlapping {
        assert!(counter.count(&c.chunk.text[..c.overlap]) <= 100);
    }
}

#[test]
fn mineru_fixture_chunks_with_exact_count() {
    let reports = read("fixtures/reports/mineru/*.json", Domain::Economics);
    assert_eq!(
        chunk_counts(&reports),
        vec![("valdoria_survey_2024_content_list.json".to_string(), 3)]
    );
    let r = &reports[0];
    assert_eq!(r.format, "mineru");
    assert_eq!(r.metadata["country"], "Valdoria");
    assert_eq!(r.metadata["year"], "2024");
    assert_eq!(
        r.metadata["notes"],
        "skipped 2 image block(s); kept 1 equation block(s) as text"
    );
    let chunks = chunk_report(r, &ChunksConfig::default().resolve(Domain::Economics));
    let with_tables: Vec<i64> = chunks
        .iter()
        .filter(|c| c.chunk.contains_table)
        .map(|c| c.chunk.index)
        .collect();
    assert_eq!(with_tables, vec![1, 2]);
    // Caption, table and footnotes travel together.
    let t1 = &chunks[1].chunk.text;
    let cap = t1.find("Table 1. Macroeconomic indicators").unwrap();
    let row = t1.find("| Gross domestic product").unwrap();
    let note = t1.find("Source: fictional data").unwrap();
    assert!(cap < row && row < note);
    assert_eq!(chunks[0].chunk.page, Some(0));
    assert_eq!(chunks[1].chunk.page, Some(2));
    assert_eq!(chunks[1].chunk.metadata["domain"], "economics");
}

#[test]
fn html_fixture_chunks_with_exact_count() {
    let reports = read("fixtures/reports/html/*.html", Domain::Policy);
    assert_eq!(
        chunk_counts(&reports),
        vec![("riverton_action_plan_2023.html".to_string(), 2)]
    );
    let r = &reports[0];
    assert_eq!(
        r.title.as_deref(),
        Some("City of Riverton Disaster Recovery Action Plan 2023")
    );
    // Policy reports stop at the first Attachment heading, as RARE's do.
    assert!(r.metadata["notes"].starts_with("trimmed 4 block(s)"));
    let chunks = chunk_report(r, &ChunksConfig::default().resolve(Domain::Policy));
    let all: String = chunks.iter().map(|c| c.chunk.text.as_str()).collect();
    assert!(!all.contains("Certifications"));
    assert!(!all.contains("window.analytics"), "scripts are not text");
    // The <caption>, the <tfoot> source and the "Note:" paragraph stay with table 1.
    let t = &chunks[0].chunk.text;
    let cap = t
        .find("Table 1: Estimated unmet housing need by tenure")
        .unwrap();
    let total = t.find("| Total").unwrap();
    let src = t.find("Source: city damage inspections").unwrap();
    let note = t.find("Note: assistance includes").unwrap();
    assert!(cap < total && total < src && src < note);
    // The <figcaption> of a figure is the caption of its table.
    assert!(
        chunks[1]
            .chunk
            .text
            .starts_with("Table 2: Infrastructure repair costs")
    );
    assert!(chunks.iter().all(|c| c.chunk.contains_table));
}

#[test]
fn broken_inputs_are_counted_per_file_and_the_rest_proceed() {
    let config = ReportsConfig {
        sources: vec![
            source("fixtures/reports/broken/*.json", Domain::Finance),
            source("fixtures/reports/broken/*.md", Domain::General),
            source("fixtures/reports/broken/*.txt", Domain::General),
        ],
    };
    let (reports, drops, files) = ingest(&config, &root(), "reports");
    assert_eq!(files, 4);
    assert_eq!(reports.len(), 1);
    let drops: Vec<(String, String)> = drops
        .into_records()
        .into_iter()
        .map(|d| (d.item, d.reason))
        .collect();
    assert_eq!(
        drops,
        vec![
            (
                "fixtures/reports/broken/empty_item_10K.json".to_string(),
                "empty_item".to_string()
            ),
            (
                "fixtures/reports/broken/invalid_10K.json".to_string(),
                "invalid_json".to_string()
            ),
            (
                "fixtures/reports/broken/empty.txt".to_string(),
                "empty_report".to_string()
            ),
        ]
    );
    // The ragged table is laid out as Markdown renderers do (short rows padded), not dropped.
    let text: String = chunk_report(&reports[0], &Default::default())
        .into_iter()
        .map(|c| c.chunk.text)
        .collect();
    assert!(text.contains("| 2023 | 12 |"));
    assert!(text.contains("The rest of the report proceeds"));
    assert!(text.contains("| 2022 | 10 |  |\n| 2023 | 12 | 2 |"));
}

fn ctx(stage: &str) -> StageContext {
    StageContext {
        root: root(),
        stage_dir: std::env::temp_dir(),
        pipeline: "test".into(),
        stage_id: stage.into(),
        progress: Arc::new(NoProgress),
    }
}

#[test]
fn stages_run_reports_then_chunks_through_the_runner_interface() {
    let config = serde_json::json!({
        "sources": [
            {"path": "fixtures/reports/edgar/*.json", "format": "edgar", "domain": "finance"},
            {"path": "fixtures/reports/mineru/valdoria_survey_2024_content_list.json", "domain": "economics"},
            {"path": "fixtures/reports/html/*.html", "domain": "policy",
             "metadata": {"grantee": "City of Riverton", "state": "XX", "year": "2023"}}
        ]
    });
    let stage = ReportsStage::default();
    Stage::check(&stage, &config, &root()).unwrap();
    let files = Stage::external_files(&stage, &config, &root()).unwrap();
    assert_eq!(files.len(), 7);
    let out = Stage::run(&stage, &config, Inputs::default(), &ctx("reports")).unwrap();
    assert_eq!((out.report.items_in, out.report.items_out), (7, 7));
    assert!(out.report.drops.is_empty());
    let reports = out.tables["reports"].clone();
    let Rows::Reports(rows) = reports.clone() else {
        panic!("reports table")
    };
    let html = rows.iter().find(|r| r.format == "html").unwrap();
    assert_eq!(html.metadata["grantee"], "City of Riverton");

    let mut tables = BTreeMap::new();
    tables.insert("reports".to_string(), reports);
    let chunks_stage = ChunksStage;
    let out = Stage::run(
        &chunks_stage,
        &serde_json::json!({}),
        Inputs::new(tables),
        &ctx("chunks"),
    )
    .unwrap();
    assert_eq!(out.report.items_in, 7);
    assert_eq!(out.report.items_out, 17 + 18 + 4 + 20 + 1 + 3 + 2);
    let Rows::Chunks(chunks) = &out.tables["chunks"] else {
        panic!("chunks table")
    };
    assert_eq!(chunks.len(), 65);
    let ids: std::collections::HashSet<_> = chunks.iter().map(|c| &c.id).collect();
    assert_eq!(ids.len(), chunks.len());
    // Same input, same ids.
    let again = noisebench_chunk::chunk_reports(&rows, &Default::default(), "chunks").0;
    assert_eq!(&again, chunks);
}

#[test]
fn configuration_errors_name_the_field() {
    let stage = ReportsStage::default();
    let err = Stage::check(
        &stage,
        &serde_json::json!({"sources": [{"path": "fixtures/reports/edgar/*.nothing"}]}),
        &root(),
    )
    .unwrap_err();
    assert_eq!(err.field, "sources[0].path");
    let err = Stage::check(
        &stage,
        &serde_json::json!({"sources": [{"path": "x", "fromat": "html"}]}),
        &root(),
    )
    .unwrap_err();
    assert!(err.message.contains("unknown field"), "{err}");
    let err = Stage::check(
        &ChunksStage,
        &serde_json::json!({"max_tokens": 100, "overlap_tokens": 60}),
        &root(),
    )
    .unwrap_err();
    assert_eq!(err.field, "overlap_tokens");
    assert_eq!(<ChunksStage as TypedStage>::KIND, "chunks");
    assert_eq!(<ReportsStage as TypedStage>::KIND, "reports");
}

#[test]
fn fast_token_counts_equal_tiktoken_on_real_filings() {
    let counter = noisebench_chunk::TokenCounter::new();
    for r in read("fixtures/reports/edgar/*.json", Domain::Finance) {
        let text: Vec<String> = r.blocks.iter().map(noisebench_chunk::block_text).collect();
        let text = text.join("\n\n");
        assert_eq!(
            counter.count(&text),
            counter.reference_count(&text),
            "{}",
            r.source_path
        );
    }
}

/// Files are read on every core, but two sources reaching the same files still keep the first
/// source's reports and count each later one as a duplicate.
#[test]
fn the_first_source_of_a_report_wins_whatever_the_threads() {
    let via = |path: &str, name: &str| Source {
        metadata: BTreeMap::from([("via".to_string(), name.to_string())]),
        ..source(path, Domain::Finance)
    };
    let config = ReportsConfig {
        sources: vec![
            via("fixtures/reports/edgar/1000180_*.json", "first"),
            via("fixtures/reports/edgar/*.json", "second"),
            via("fixtures/reports/edgar/*.json", "third"),
        ],
    };
    let (reports, drops, files) = ingest(&config, &root(), "reports");
    assert_eq!(files, 1 + 5 + 5);
    assert_eq!(reports.len(), 5);
    let via_of = |r: &Report| r.metadata["via"].clone();
    let mut vias: Vec<String> = reports.iter().map(via_of).collect();
    vias.sort();
    assert_eq!(vias, ["first", "second", "second", "second", "second"]);
    let drops = drops.into_records();
    assert_eq!(drops.len(), 6);
    assert!(drops.iter().all(|d| d.reason == "duplicate_report"));
}
