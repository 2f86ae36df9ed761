//! Reports through time: the report track fed from a fake EDGAR on 127.0.0.1 (never the real
//! SEC), refreshed as the company files. An amendment (10-K/A) of the same period keeps its
//! original's report id (company, form and period) and shows as that report `changed`, with
//! exactly the chunks, triplets and questions the amended text changed; a new fiscal year is a
//! new report and, with `latest = 1`, retires the old one with every row derived from it. The
//! version's CHANGES.md and changes.json say so report by report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::{Chunk, NoProgress, Question, Report, Triplet};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{Changes, PublishOptions, PublishOutcome, ReportChange};
use noisebench_testkit::Served;
use serde_json::{Value, json};

/// A filing the fake serves: accession, filing date, period, form, document name, item 7 text.
#[derive(Clone)]
struct Filing {
    accession: &'static str,
    filed: &'static str,
    period: &'static str,
    form: &'static str,
    document: &'static str,
    paragraphs: Vec<String>,
}

#[derive(Clone, Default)]
struct Edgar {
    filings: Arc<Mutex<Vec<Filing>>>,
}

fn html(f: &Filing) -> String {
    let body: String = f
        .paragraphs
        .iter()
        .map(|p| format!("<p>{p}</p>\n"))
        .collect();
    format!(
        "<html><head><title>{}</title></head><body>\n<p>PART II</p>\n<p><b>Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations</b></p>\n{body}<p><b>Item 7A. Quantitative and Qualitative Disclosures About Market Risk</b></p>\n<p>Market risk is described in the notes.</p>\n<p><b>Item 8. Financial Statements</b></p>\n<p>See the statements.</p>\n</body></html>",
        f.document
    )
}

async fn handle(State(edgar): State<Edgar>, uri: Uri) -> Response {
    let filings = edgar.filings.lock().unwrap().clone();
    let path = uri.path();
    if path == "/submissions/CIK0000000077.json" {
        // Newest first, as the SEC lists them.
        let mut rows = filings.clone();
        rows.sort_by(|a, b| b.filed.cmp(a.filed));
        let col = |f: fn(&Filing) -> &str| rows.iter().map(f).collect::<Vec<_>>();
        let body = json!({
            "cik": "0000000077", "name": "Orchard Harbor Corp",
            "filings": {"recent": {
                "accessionNumber": col(|f| f.accession),
                "filingDate": col(|f| f.filed),
                "reportDate": col(|f| f.period),
                "form": col(|f| f.form),
                "primaryDocument": col(|f| f.document),
            }, "files": []}
        });
        return (StatusCode::OK, body.to_string()).into_response();
    }
    for f in &filings {
        let doc = format!(
            "/Archives/edgar/data/77/{}/{}",
            f.accession.replace('-', ""),
            f.document
        );
        if path == doc {
            return (
                StatusCode::OK,
                [("content-type", "text/html")],
                html(f).into_bytes(),
            )
                .into_response();
        }
    }
    (StatusCode::NOT_FOUND, "not found").into_response()
}

/// Item 7 of the fiscal year 2023 10-K: one paragraph per fact, padded so that each is its own
/// chunk.
fn paragraphs(year: u32, acquired: &str) -> Vec<String> {
    let pad = " Teams kept every site running through the season, and the plans for the coming year stay careful and steady.".repeat(9);
    vec![
        format!("Orchard Harbor Corp acquired {acquired} in fiscal {year}.{pad}"),
        format!("{acquired} operates Riverside Cold Storage.{pad}"),
        format!("Riverside Cold Storage supplies Lakeshore Markets.{pad}"),
        format!("Orchard Harbor Corp employs {} people.{pad}", 1000 + year),
    ]
}

const PIPELINE: &str = r#"
[pipeline]
name = "edgar-versions"
description = "A company's 10-K item 7 from a fake EDGAR, through questions."

[llm]
backend = "offline"

[web]
mode = "live"
allow_addresses = ["loopback"]
archive_dir = "work/archive"

[stages.reports]
kind = "reports"
[stages.reports.config]
sources = [{ domain = "finance", items = ["item_7"], edgar = { ciks = ["77"], forms = ["10-K"], from = "2020-01-01", latest = 1, amendments = "replace", user_agent = "noisebench tests tests@example.org", base_url = "URL", archives_url = "URL" } }]

[stages.chunks]
kind = "chunks"
inputs = { reports = "reports" }
[stages.chunks.config]
preset = "finance"

[stages.triplets]
kind = "triplets"
inputs = { chunks = "chunks" }

[stages.graph]
kind = "graph"
inputs = { triplets = "triplets", reports = "reports" }

[stages.patterns]
kind = "patterns"
inputs = { graph_edges = "graph" }

[stages.questions]
kind = "questions"
inputs = { patterns = "patterns", triplets = "triplets", chunks = "chunks", reports = "reports" }

[snapshot]
dataset = "edgar-versions"
title = "EDGAR versions test"
license = "cc-by-4.0"
tables = ["reports", "chunks", "triplets", "patterns", "questions"]
"#;

fn rows<T: noisebench_core::TableRow>(dir: &Path, table: &str) -> Vec<T> {
    table_io::read_rows(&dir.join(format!("data/{table}.parquet"))).unwrap()
}

fn published(outcome: Option<PublishOutcome>) -> (std::path::PathBuf, Changes) {
    match outcome {
        Some(PublishOutcome::Published { dir, changes, .. }) => (dir, changes),
        other => panic!("expected a new version, got {other:?}"),
    }
}

type Ids = BTreeSet<String>;

fn set(ids: &[String]) -> Ids {
    ids.iter().cloned().collect()
}

fn table(changes: &Changes, name: &str) -> (Ids, Ids, Ids) {
    let t = &changes.tables[name];
    (set(&t.added), set(&t.removed), set(&t.changed))
}

fn of(
    r: &ReportChange,
    pick: fn(&ReportChange) -> &noisebench_snapshot::RowDelta,
) -> (Ids, Ids, Ids) {
    let d = pick(r);
    (set(&d.added), set(&d.removed), set(&d.changed))
}

#[test]
fn a_report_keeps_its_identity_and_changes_say_what_followed() {
    let edgar = Edgar::default();
    let original = Filing {
        accession: "0000000077-24-000010",
        filed: "2024-02-20",
        period: "2023-12-31",
        form: "10-K",
        document: "orchard-2023.htm",
        paragraphs: paragraphs(2023, "Pinecrest Freight"),
    };
    edgar.filings.lock().unwrap().push(original.clone());
    let app = Router::new().fallback(handle).with_state(edgar.clone());
    let served = Served::start(app);
    let url = format!("http://{}", served.addr());

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("pipelines")).unwrap();
    noisebench_testkit::copy_dir(
        &noisebench_testkit::repo_root().join("pipelines/prompts"),
        &root.join("pipelines/prompts"),
    );
    std::fs::write(
        root.join("pipelines/edgar-versions.toml"),
        PIPELINE.replace("URL", &url),
    )
    .unwrap();
    let mut ws = Workspace::at(root, Arc::new(NoProgress));

    // 1.0.0: the 10-K for fiscal 2023.
    let built = build_snapshot(&ws, "edgar-versions", false, &PublishOptions::default()).unwrap();
    let (v1, _) = published(built.outcome);
    let reports_v1: Vec<Report> = rows(&v1, "reports");
    assert_eq!(reports_v1.len(), 1);
    let report_id = reports_v1[0].id.clone();
    let questions_v1: Vec<Question> = rows(&v1, "questions");
    assert!(!questions_v1.is_empty(), "the facts give questions");

    // A refresh with nothing filed: nothing published.
    ws.refresh = true;
    let quiet = build_snapshot(&ws, "edgar-versions", false, &PublishOptions::default()).unwrap();
    assert!(
        matches!(quiet.outcome, Some(PublishOutcome::Unchanged { .. })),
        "{:?}",
        quiet.outcome
    );

    // 2.0.0: a 10-K/A for the same period, its first fact revised.
    let mut amended = original.clone();
    amended.accession = "0000000077-24-000031";
    amended.filed = "2024-05-02";
    amended.form = "10-K/A";
    amended.document = "orchard-2023a.htm";
    amended.paragraphs[0] = paragraphs(2023, "Pinecrest Freight")[0].replace(
        "acquired Pinecrest Freight",
        "acquired Pinecrest Freight and Dovetail Rail",
    );
    edgar.filings.lock().unwrap().push(amended);
    let built = build_snapshot(&ws, "edgar-versions", false, &PublishOptions::default()).unwrap();
    let (v2, changes) = published(built.outcome);
    let reports_v2: Vec<Report> = rows(&v2, "reports");
    assert_eq!(reports_v2.len(), 1);
    assert_eq!(
        reports_v2[0].id, report_id,
        "the amendment keeps its original's id"
    );
    assert_eq!(reports_v2[0].metadata["filing_type"], "10-K/A");
    assert_eq!(
        table(&changes, "reports"),
        (Ids::new(), Ids::new(), Ids::from([report_id.clone()]))
    );
    assert_eq!(changes.reports.len(), 1, "{:?}", changes.reports);
    let r = &changes.reports[0];
    assert_eq!(
        (r.report_id.as_str(), r.status.as_str()),
        (report_id.as_str(), "changed")
    );
    assert_eq!(r.name, "Orchard Harbor Corp 10-K/A 2023-12-31");
    // One report: its rows are every row that changed, table by table.
    assert_eq!(of(r, |r| &r.chunks), table(&changes, "chunks"));
    assert_eq!(of(r, |r| &r.triplets), table(&changes, "triplets"));
    assert_eq!(of(r, |r| &r.questions), table(&changes, "questions"));
    let (c_added, c_removed, _) = table(&changes, "chunks");
    assert_eq!(
        (c_added.len(), c_removed.len()),
        (1, 1),
        "only the revised paragraph's chunk"
    );
    let triplets_v2: Vec<Triplet> = rows(&v2, "triplets");
    let (t_added, _, _) = table(&changes, "triplets");
    assert!(
        triplets_v2
            .iter()
            .any(|t| t_added.contains(&t.id) && t.entity_2.contains("Dovetail Rail")),
        "the amended fact is a new triplet"
    );
    let changes_md = std::fs::read_to_string(v2.join("CHANGES.md")).unwrap();
    assert!(changes_md.contains("## Reports"), "{changes_md}");
    assert!(
        changes_md.contains(&format!(
            "| `{report_id}` Orchard Harbor Corp 10-K/A 2023-12-31 | changed |"
        )),
        "{changes_md}"
    );
    let json: Value =
        serde_json::from_slice(&std::fs::read(v2.join("changes.json")).unwrap()).unwrap();
    assert_eq!(json["reports"][0]["report_id"], report_id.as_str());

    // 3.0.0: the 10-K for fiscal 2024; with `latest = 1` it replaces fiscal 2023's.
    edgar.filings.lock().unwrap().push(Filing {
        accession: "0000000077-25-000012",
        filed: "2025-02-18",
        period: "2024-12-31",
        form: "10-K",
        document: "orchard-2024.htm",
        paragraphs: paragraphs(2024, "Pinecrest Freight"),
    });
    let built = build_snapshot(&ws, "edgar-versions", false, &PublishOptions::default()).unwrap();
    let (v3, changes) = published(built.outcome);
    let reports_v3: Vec<Report> = rows(&v3, "reports");
    assert_eq!(reports_v3.len(), 1);
    let new_id = reports_v3[0].id.clone();
    assert_ne!(new_id, report_id, "a new fiscal year is a new report");
    let by_status: BTreeMap<&str, &ReportChange> = changes
        .reports
        .iter()
        .map(|r| (r.status.as_str(), r))
        .collect();
    assert_eq!(by_status.len(), 2, "{:?}", changes.reports);
    let (gone, new) = (by_status["removed"], by_status["added"]);
    assert_eq!(
        (gone.report_id.as_str(), new.report_id.as_str()),
        (report_id.as_str(), new_id.as_str())
    );
    assert_eq!(new.name, "Orchard Harbor Corp 10-K 2024-12-31");
    let chunks_v2: Vec<Chunk> = rows(&v2, "chunks");
    let chunks_v3: Vec<Chunk> = rows(&v3, "chunks");
    let ids = |cs: &[Chunk]| -> Ids { cs.iter().map(|c| c.id.clone()).collect() };
    assert_eq!(
        of(gone, |r| &r.chunks),
        (Ids::new(), ids(&chunks_v2), Ids::new())
    );
    assert_eq!(
        of(new, |r| &r.chunks),
        (ids(&chunks_v3), Ids::new(), Ids::new())
    );
    let questions_v2: Vec<Question> = rows(&v2, "questions");
    let qids = |qs: &[Question]| -> Ids { qs.iter().map(|q| q.id.clone()).collect() };
    assert_eq!(of(gone, |r| &r.questions).1, qids(&questions_v2));
    assert_eq!(
        of(new, |r| &r.questions).0,
        qids(&rows::<Question>(&v3, "questions"))
    );
    drop(served);
}
