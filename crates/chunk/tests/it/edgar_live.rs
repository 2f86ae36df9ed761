//! The `reports` stage's EDGAR source against a fake EDGAR on 127.0.0.1 (never the real SEC): the
//! submissions JSON and filing HTML in the SEC's shapes, item headings in several real variants,
//! nested tables, amendments, a 403 with Retry-After and a page over the size cap; the SEC's
//! rate and User-Agent observed at the server; the archive replayed with no network.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use noisebench_chunk::filing_items;
use noisebench_chunk::{ChunkConfig, ReportsConfig, ReportsStage, chunk_report};
use noisebench_core::rows::TableRow;
use noisebench_core::{Block, Inputs, NoProgress, Report, StageContext, StageReport, TypedStage};
use noisebench_testkit::Served;
use noisebench_web::Web;
use serde_json::{Value, json};

const UA: &str = "Noisebench Tests tests@example.org";

/// One request as the fake server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    user_agent: String,
    at: Instant,
}

type Pages = HashMap<String, (u16, Vec<(&'static str, String)>, Vec<u8>)>;

#[derive(Clone)]
struct Edgar {
    pages: Arc<Pages>,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Edgar {
    fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }
    fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.path).collect()
    }
}

async fn handle(State(edgar): State<Edgar>, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().to_string();
    let user_agent = headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    edgar.log.lock().unwrap().push(Seen {
        path: path.clone(),
        user_agent,
        at: Instant::now(),
    });
    match edgar.pages.get(&path) {
        Some((status, headers, body)) => {
            let mut resp = (StatusCode::from_u16(*status).unwrap(), body.clone()).into_response();
            for (k, v) in headers {
                resp.headers_mut().insert(*k, v.parse().unwrap());
            }
            resp
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// Alpha's 10-K/A: a table of contents as a table of links, "Item 1." split across spans with a
/// non-breaking space, "ITEM&nbsp;7." in bold pieces, a nested table, page furniture, "Item 7A -".
const ALPHA_AMENDED: &str = r##"<html><head><title>alpha-10ka</title></head><body>
<div style="display:none"><ix:header>xbrl contexts</ix:header></div>
<p id="toc">TABLE OF CONTENTS</p>
<table>
<tr><td><a href="#i1">Item 1.</a></td><td>Business</td><td>3</td></tr>
<tr><td><a href="#i7">Item 7.</a></td><td>Management&#8217;s Discussion and Analysis</td><td>20</td></tr>
<tr><td><a href="#i7a">Item 7A.</a></td><td>Quantitative and Qualitative Disclosures About Market Risk</td><td>30</td></tr>
<tr><td><a href="#i8">Item 8.</a></td><td>Financial Statements</td><td>31</td></tr>
</table>
<p><b>PART I</b></p>
<div id="i1"><span style="font-weight:bold">Item</span><span style="font-weight:bold">&#160;1.</span> <span>Business</span></div>
<p>Alpha makes widgets.</p>
<p><b>PART II</b></p>
<div id="i7"><b>ITEM&nbsp;7.</b><b> MANAGEMENT&#8217;S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION</b></div>
<p>Revenue grew 12% to $4.2 billion, as amended.</p>
<table>
<tr><th>Segment</th><th>2023</th><th>2022</th></tr>
<tr><td>Widgets</td><td>3,100</td><td>2,800</td></tr>
<tr><td>Services <table><tr><td>incl. support</td></tr></table></td><td>1,100</td><td>950</td></tr>
</table>
<p>22</p>
<p><a href="#toc">Table of Contents</a></p>
<p>Liquidity remained strong.</p>
<div id="i7a"><b>Item 7A -</b> Quantitative and Qualitative Disclosures About Market Risk</div>
<p>We are exposed to interest rate risk.</p>
<div id="i8"><b>Item 8. Financial Statements</b></div>
<p>See the statements.</p>
<p>SIGNATURES</p>
</body></html>"##;

/// Beta's 10-K: the table of contents as paragraphs of links, items laid out as one-row tables
/// ("Item 7 -" | title), a references to "Item 7 of" in the text, and no Item 7A.
const BETA: &str = r##"<html><head><title>beta-10k</title></head><body>
<p><a href="#a">Item 1A. Risk Factors</a></p>
<p><a href="#b">Item 7. Management&#8217;s Discussion and Analysis</a></p>
<p><a href="#c">Item 8. Financial Statements</a></p>
<table><tr><td>Item 1A.</td><td>Risk Factors</td></tr></table>
<p>Demand may fall, as Item 7 of this report discusses.</p>
<table><tr><td>Item 7 -</td><td>Management&#8217;s Discussion and Analysis</td></tr></table>
<p>Beta&#8217;s sales fell 3% to $900 million.</p>
<table><tr><th>Region</th><th>Sales</th></tr><tr><td>North</td><td>500</td></tr><tr><td>South</td><td>400</td></tr></table>
<table><tr><td>Item 8.</td><td>Financial Statements</td></tr></table>
<p>The statements follow.</p>
</body></html>"##;

/// Beta's 10-K/A: Part III only, so under `replace` Beta's original is kept.
const BETA_AMENDED: &str = r##"<html><body><p>Item 10. Directors, Executive Officers</p>
<p>Our directors are listed here.</p></body></html>"##;

fn recent(rows: &[(&str, &str, &str, &str, &str)]) -> Value {
    json!({
        "accessionNumber": rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "filingDate": rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "reportDate": rows.iter().map(|r| r.2).collect::<Vec<_>>(),
        "form": rows.iter().map(|r| r.3).collect::<Vec<_>>(),
        "primaryDocument": rows.iter().map(|r| r.4).collect::<Vec<_>>(),
    })
}

fn pages() -> Pages {
    let mut p = Pages::new();
    let ok = |body: String| {
        (
            200u16,
            vec![("content-type", "text/html".to_string())],
            body.into_bytes(),
        )
    };
    let alpha = json!({
        "cik": "0000000001", "name": "Alpha Corp", "tickers": ["ALPH"],
        "filings": {
            "recent": recent(&[
                ("0000000001-24-000030", "2024-05-01", "2024-05-01", "8-K", "alpha-8k.htm"),
                ("0000000001-24-000020", "2024-04-01", "2023-12-31", "10-K/A", "alpha-2023a.htm"),
                ("0000000001-24-000010", "2024-02-15", "2023-12-31", "10-K", "alpha-2023.htm"),
                ("0000000001-23-000010", "2023-02-15", "2022-12-31", "10-K", "alpha-2022.htm"),
                ("0000000001-22-000010", "2022-02-15", "2021-12-31", "10-K", "alpha-2021.htm"),
            ]),
            "files": [{"name": "CIK0000000001-submissions-001.json", "filingCount": 1,
                       "filingFrom": "2010-01-01", "filingTo": "2019-12-31"}]
        }
    });
    p.insert(
        "/submissions/CIK0000000001.json".into(),
        ok(alpha.to_string()),
    );
    let beta = json!({
        "cik": "2", "name": "Beta Inc",
        "filings": {"recent": recent(&[
            ("0000000002-24-000005", "2024-04-20", "2023-12-31", "10-K/A", "beta-2023a.htm"),
            ("0000000002-24-000001", "2024-03-01", "2023-12-31", "10-K", "beta-2023.htm"),
            ("0000000002-20-000001", "2020-03-01", "2019-12-31", "10-K", "beta-2019.htm"),
        ]), "files": []}
    });
    p.insert(
        "/submissions/CIK0000000002.json".into(),
        ok(beta.to_string()),
    );
    let tickers = json!({"0": {"cik_str": 2, "ticker": "BETA", "title": "Beta Inc"},
                         "1": {"cik_str": 1, "ticker": "ALPH", "title": "Alpha Corp"}});
    p.insert(
        "/files/company_tickers.json".into(),
        ok(tickers.to_string()),
    );
    let doc = |cik: &str, acc: &str, name: &str| format!("/Archives/edgar/data/{cik}/{acc}/{name}");
    p.insert(
        doc("1", "000000000124000020", "alpha-2023a.htm"),
        ok(ALPHA_AMENDED.into()),
    );
    p.insert(
        doc("1", "000000000124000010", "alpha-2023.htm"),
        ok(ALPHA_AMENDED
            .replace(", as amended", "")
            .replace("alpha-10ka", "alpha-10k")),
    );
    p.insert(
        doc("1", "000000000123000010", "alpha-2022.htm"),
        (
            403,
            vec![("retry-after", "1".into())],
            b"Request Rate Threshold Exceeded".to_vec(),
        ),
    );
    let big = format!(
        "<html><body>{}</body></html>",
        "<p>Item 7. padding padding</p>".repeat(6000)
    );
    p.insert(doc("1", "000000000122000010", "alpha-2021.htm"), ok(big));
    p.insert(
        doc("2", "000000000224000001", "beta-2023.htm"),
        ok(BETA.into()),
    );
    p.insert(
        doc("2", "000000000224000005", "beta-2023a.htm"),
        ok(BETA_AMENDED.into()),
    );
    // Gamma: real plain-text filings (fixtures/real/10k-text): Textron's 10-K405 of 2002 and
    // 24Holdings' 10-KSB of 2008, served as text as EDGAR serves `.txt` documents, and an 8-K.
    let gamma = json!({
        "cik": "3", "name": "Gamma Holdings",
        "filings": {"recent": recent(&[
            ("0000930413-08-001093", "2008-02-20", "2007-12-31", "10-KSB", "0000930413-08-001093.txt"),
            ("0000950135-02-001340", "2002-03-14", "2001-12-29", "10-K405", "b42129tie10-k405.txt"),
            ("0000950135-02-000999", "2002-01-10", "", "8-K", "gamma-8k.txt"),
        ]), "files": []}
    });
    p.insert(
        "/submissions/CIK0000000003.json".into(),
        ok(gamma.to_string()),
    );
    let text = |body: String| {
        (
            200u16,
            vec![("content-type", "text/plain".to_string())],
            body.into_bytes(),
        )
    };
    p.insert(
        doc("3", "000095013502001340", "b42129tie10-k405.txt"),
        text(real_text("textron-2001.txt.zst")),
    );
    p.insert(
        doc("3", "000093041308001093", "0000930413-08-001093.txt"),
        text(real_text("ksb-2007.txt.zst")),
    );
    // Delta: IBM's 10-K405 of 1998, a full submission whose items 5-8 point to its EX-13.
    let delta = json!({
        "cik": "4", "name": "Delta Machines",
        "filings": {"recent": recent(&[
            ("0001047469-98-012291", "1998-03-30", "1997-12-31", "10-K405", "0001047469-98-012291.txt"),
        ]), "files": []}
    });
    p.insert(
        "/submissions/CIK0000000004.json".into(),
        ok(delta.to_string()),
    );
    p.insert(
        doc("4", "000104746998012291", "0001047469-98-012291.txt"),
        text(real_text("ibm-1997.txt.zst")),
    );
    p
}

/// A real plain-text filing of fixtures/real/10k-text, decompressed.
fn real_text(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/real/10k-text")
        .join(file);
    String::from_utf8(zstd::decode_all(std::fs::File::open(&path).unwrap()).unwrap()).unwrap()
}

fn serve() -> (Served, Edgar) {
    let edgar = Edgar {
        pages: Arc::new(pages()),
        log: Arc::new(Mutex::new(Vec::new())),
    };
    let app = Router::new().fallback(handle).with_state(edgar.clone());
    (Served::start(app), edgar)
}

fn web(table: Value) -> Arc<Web> {
    Arc::new(Web::from_value(&table, Path::new("/")).unwrap())
}

/// The run's web layer: loopback allowed (the fake), a fast default rate the SEC cap must lower,
/// a body cap the big filing exceeds, one quick retry.
fn live_web(archive: &Path) -> Arc<Web> {
    web(json!({
        "allow_addresses": ["loopback"], "rate_per_second": 50.0, "max_body_bytes": 100_000,
        "max_retries": 1, "backoff_ms": 10, "archive_dir": archive,
    }))
}

fn config(url: &str, edgar: Value) -> Value {
    let mut e = json!({
        "ciks": ["1"], "tickers": ["BETA", "ZZZZ"], "from": "2021-01-01",
        "user_agent": UA, "base_url": url, "archives_url": url,
        "tickers_url": format!("{url}/files/company_tickers.json"),
    });
    e.as_object_mut()
        .unwrap()
        .extend(edgar.as_object().unwrap().clone());
    json!({"sources": [{"edgar": e, "domain": "finance", "items": ["item_7", "7A"]}]})
}

fn ctx(dir: &Path) -> StageContext {
    StageContext {
        root: dir.to_path_buf(),
        stage_dir: dir.to_path_buf(),
        pipeline: "test".into(),
        stage_id: "reports".into(),
        progress: Arc::new(NoProgress),
    }
}

fn run(web: &Arc<Web>, config: &Value) -> (Vec<Report>, StageReport) {
    let stage = ReportsStage::new(web.clone());
    let config: ReportsConfig = noisebench_core::stage::parse_config(config).unwrap();
    stage.validate(&config, Path::new("/")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut out = stage
        .run(&config, Inputs::default(), &ctx(dir.path()))
        .unwrap();
    let reports = Report::from_rows(out.tables.remove("reports").unwrap()).unwrap();
    (reports, out.report)
}

/// Dropped items (`dropped`) or failures that kept their item, item to reason.
fn records(report: &StageReport, dropped: bool) -> BTreeMap<String, String> {
    report
        .drops
        .iter()
        .filter(|d| d.dropped == dropped)
        .map(|d| (d.item.clone(), d.reason.clone()))
        .collect()
}

fn drops(report: &StageReport) -> BTreeMap<String, String> {
    records(report, true)
}

fn texts(report: &Report) -> Vec<String> {
    report
        .blocks
        .iter()
        .map(|b| match b {
            Block::Heading { text, .. } => format!("h:{text}"),
            Block::Paragraph { text, .. } => format!("p:{text}"),
            Block::Table { markdown, .. } => format!("t:{}", markdown.lines().count()),
        })
        .collect()
}

#[test]
fn filings_become_reports_with_items_amendments_and_counted_drops() {
    let (served, edgar) = serve();
    let archive = tempfile::tempdir().unwrap();
    let web = live_web(archive.path());
    let (reports, report) = run(&web, &config(served.url(), json!({})));

    // Alpha: the 10-K/A replaced its 10-K (never fetched); 2022 was refused (403), 2021 too
    // large; the 8-K and Beta's 2019 10-K are outside the forms and dates, so never items.
    // Beta: its Part III-only 10-K/A has no item 7, so its original is the report. ZZZZ: unknown.
    assert_eq!((report.items_in, report.items_out), (7, 2));
    let d = drops(&report);
    assert_eq!(
        d,
        BTreeMap::from([
            (
                "edgar:1/0000000001-24-000010".to_string(),
                "superseded".to_string()
            ),
            (
                "edgar:1/0000000001-23-000010".to_string(),
                "http_403".to_string()
            ),
            (
                "edgar:1/0000000001-22-000010".to_string(),
                "too_large".to_string()
            ),
            (
                "edgar:2/0000000002-24-000005".to_string(),
                "empty_item".to_string()
            ),
            (
                "edgar:ticker:ZZZZ".to_string(),
                "unknown_ticker".to_string()
            ),
        ])
    );
    assert_eq!(report.items_in, report.items_out + d.len() as u64);
    // Beta's filing has no Item 7A: recorded, the report kept with its Item 7.
    let beta_url = format!(
        "{}/Archives/edgar/data/2/000000000224000001/beta-2023.htm",
        served.url()
    );
    assert_eq!(
        records(&report, false),
        BTreeMap::from([(format!("{beta_url}#7A"), "missing_item".to_string())])
    );
    let paths = edgar.paths();
    assert!(
        !paths.iter().any(|p| p.ends_with("alpha-2023.htm")),
        "{paths:?}"
    );
    assert!(!paths.iter().any(|p| p.ends_with("alpha-8k.htm")));
    // The further index page ends before `from`: not fetched.
    assert!(!paths.iter().any(|p| p.contains("submissions-001")));

    let alpha = reports.iter().find(|r| r.metadata["cik"] == "1").unwrap();
    assert_eq!(alpha.metadata["company"], "Alpha Corp");
    assert_eq!(alpha.metadata["filing_type"], "10-K/A");
    assert_eq!(alpha.metadata["filing_date"], "2024-04-01");
    assert_eq!(alpha.metadata["period_of_report"], "2023-12-31");
    assert_eq!(alpha.metadata["accession_number"], "0000000001-24-000020");
    assert_eq!(alpha.format, "edgar");
    assert!(
        alpha
            .source_path
            .ends_with("/Archives/edgar/data/1/000000000124000020/alpha-2023a.htm")
    );
    assert_eq!(alpha.title.as_deref(), Some("Alpha Corp 10-K/A 2024-04-01"));
    assert_eq!(
        texts(alpha),
        vec![
            "h:ITEM 7. MANAGEMENT’S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION",
            "p:Revenue grew 12% to $4.2 billion, as amended.",
            "t:4",
            "p:Liquidity remained strong.",
            "h:Item 7A - Quantitative and Qualitative Disclosures About Market Risk",
            "p:We are exposed to interest rate risk.",
        ]
    );
    // The nested table is one table, its inner cell's text inside it.
    let table = alpha
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Table { markdown, .. } => Some(markdown.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        table.contains("Segment") && table.contains("incl. support") && table.contains("1,100"),
        "{table}"
    );
    // ... and the chunker keeps it whole.
    let chunks = chunk_report(alpha, &ChunkConfig::default());
    assert!(chunks.iter().any(|c| c.chunk.text.contains(&table)));

    let beta = reports.iter().find(|r| r.metadata["cik"] == "2").unwrap();
    assert_eq!(beta.metadata["filing_type"], "10-K");
    assert_eq!(
        texts(beta),
        vec![
            "h:Item 7 - Management’s Discussion and Analysis",
            "p:Beta’s sales fell 3% to $900 million.",
            "t:4",
        ]
    );

    // The SEC's rules, seen at the server: the declared User-Agent on every request, and at most
    // 10 requests per second (the run's 50 per second lowered to the source's 10).
    let seen = edgar.seen();
    assert!(seen.len() >= 8, "{seen:?}");
    assert!(seen.iter().all(|s| s.user_agent == UA), "{seen:?}");
    // Arrival times: request k leaves at k * 100 ms and arrives a scheduling delay later. A late
    // arrival shortens the gap after it and lengthens the one before, so the median gap stays
    // near 100 ms however loaded the machine; and n requests span (n - 1) * 100 ms, less the
    // first one's delay (allowed up to 100 ms). A limit of 50 per second (20 ms apart) fails both.
    let mut gaps: Vec<Duration> = seen.windows(2).map(|w| w[1].at - w[0].at).collect();
    gaps.sort();
    let median = gaps[gaps.len() / 2];
    assert!(
        median >= Duration::from_millis(70),
        "requests {median:?} apart (median): {gaps:?}"
    );
    let span = seen.last().unwrap().at - seen[0].at;
    let floor = Duration::from_millis(100 * (seen.len() as u64 - 2));
    assert!(
        span >= floor,
        "{} requests in {span:?}: {gaps:?}",
        seen.len()
    );

    // A refetch of the same filings is the same reports.
    let (again, _) = run(&web, &config(served.url(), json!({})));
    assert_eq!(again, reports);
}

#[test]
fn replay_from_the_archive_gives_the_same_reports_without_network() {
    let (served, _edgar) = serve();
    let archive = tempfile::tempdir().unwrap();
    let live = live_web(archive.path());
    let cfg = config(served.url(), json!({}));
    let (reports, _) = run(&live, &cfg);
    drop(live);
    drop(served);
    let replay = web(json!({"mode": "replay", "replay_archive": archive.path()}));
    let stage = ReportsStage::new(replay.clone());
    let parsed: ReportsConfig = noisebench_core::stage::parse_config(&cfg).unwrap();
    assert!(
        !stage.reads_live_sources(&parsed),
        "replay reads nothing live"
    );
    assert!(ReportsStage::new(web(json!({}))).reads_live_sources(&parsed));
    let (replayed, report) = run(&replay, &cfg);
    assert_eq!(replayed, reports);
    // The 403 was archived and replays as a 403; the page over the cap was never kept.
    let d = drops(&report);
    assert_eq!(d["edgar:1/0000000001-23-000010"], "http_403");
    assert_eq!(d["edgar:1/0000000001-22-000010"], "not_in_replay");
    // Byte-identical: the archived body of a filing is what the server sent.
    let url = &reports[0].source_path;
    let page = replay.fetch(url).unwrap();
    let path = url.split_once("/Archives").unwrap().1;
    let sent = &pages()[&format!("/Archives{path}")].2;
    assert_eq!(&page.body, sent);
}

/// A merge of sharded runs (an archive-only run layer) reads EDGAR from the archive alone: the
/// source's own layer, with its User-Agent and the SEC's rate, is archive-only too, so the fake
/// EDGAR, still up, sees no request and the reports are the live run's.
#[test]
fn an_archive_only_run_reads_edgar_from_the_archive_without_a_request() {
    let (served, edgar) = serve();
    let archive = tempfile::tempdir().unwrap();
    let live = live_web(archive.path());
    let cfg = config(served.url(), json!({}));
    let (reports, _) = run(&live, &cfg);
    drop(live);
    let sent = edgar.paths().len();
    let table = json!({
        "allow_addresses": ["loopback"], "rate_per_second": 50.0, "max_body_bytes": 100_000,
        "max_retries": 1, "backoff_ms": 10, "archive_dir": archive.path(),
    });
    let config = noisebench_web::WebConfig::from_value(&table).unwrap();
    let merge = Arc::new(Web::archive_only(config, Path::new("/")).unwrap());
    let (merged, report) = run(&merge, &cfg);
    assert_eq!(
        edgar.paths()[sent..],
        [] as [String; 0],
        "an archive-only run sent requests"
    );
    assert_eq!(merged, reports);
    // The page over the cap was never archived: a transient miss, for the shard to run again.
    assert_eq!(
        drops(&report)["edgar:1/0000000001-22-000010"],
        "not_archived"
    );
}

#[test]
fn amendment_rules_keep_both_and_ignore() {
    let (served, _edgar) = serve();
    let archive = tempfile::tempdir().unwrap();
    let web = live_web(archive.path());
    let url = served.url();
    let one = |rule: &str| {
        let mut c = config(url, json!({"amendments": rule, "tickers": []}));
        c["sources"][0]["edgar"]["from"] = json!("2024-01-01");
        run(&web, &c)
    };
    let (both, report) = one("keep_both");
    let forms: Vec<&str> = both
        .iter()
        .map(|r| r.metadata["filing_type"].as_str())
        .collect();
    assert_eq!(forms.len(), 2);
    assert!(forms.contains(&"10-K") && forms.contains(&"10-K/A"));
    assert_ne!(both[0].id, both[1].id);
    assert_eq!((report.items_in, report.items_out), (2, 2));

    let (ignored, report) = one("ignore");
    assert_eq!(ignored.len(), 1);
    assert_eq!(ignored[0].metadata["filing_type"], "10-K");
    assert_eq!(
        drops(&report)["edgar:1/0000000001-24-000020"],
        "amendment_ignored"
    );

    let (replaced, _) = one("replace");
    assert_eq!(replaced.len(), 1);
    assert_eq!(replaced[0].metadata["filing_type"], "10-K/A");
    // Under `replace` the report id is the original's: an amendment replaces, not adds.
    let kept = ignored[0].id.clone();
    assert_eq!(replaced[0].id, kept);
}

#[test]
fn no_user_agent_no_fetch() {
    let (served, edgar) = serve();
    let archive = tempfile::tempdir().unwrap();
    let web = live_web(archive.path());
    let stage = ReportsStage::new(web);
    for (edit, field) in [
        (json!({"user_agent": null}), "sources[0].edgar.user_agent"),
        (json!({"user_agent": "  "}), "sources[0].edgar.user_agent"),
        (
            json!({"user_agent": "noisebench"}),
            "sources[0].edgar.user_agent",
        ),
        (
            json!({"rate_per_second": 20.0}),
            "sources[0].edgar.rate_per_second",
        ),
        (json!({"from": "2024/01/01"}), "sources[0].edgar.from"),
        (json!({"ciks": ["12345678901"]}), "sources[0].edgar.ciks[0]"),
    ] {
        let mut c = config(served.url(), edit.clone());
        if edit.get("user_agent") == Some(&Value::Null) {
            c["sources"][0]["edgar"]
                .as_object_mut()
                .unwrap()
                .remove("user_agent");
        }
        let parsed: ReportsConfig = noisebench_core::stage::parse_config(&c).unwrap();
        let err = stage.validate(&parsed, Path::new("/")).unwrap_err();
        assert_eq!(err.field, field, "{edit}");
        // `run` refuses too, before any request.
        let dir = tempfile::tempdir().unwrap();
        assert!(
            stage
                .run(&parsed, Inputs::default(), &ctx(dir.path()))
                .is_err()
        );
    }
    assert!(edgar.paths().is_empty());
    // Without a web layer an EDGAR source is refused; files and EDGAR are exclusive.
    let c = config(served.url(), json!({}));
    let parsed: ReportsConfig = noisebench_core::stage::parse_config(&c).unwrap();
    let err = ReportsStage::default()
        .validate(&parsed, Path::new("/"))
        .unwrap_err();
    assert_eq!(err.field, "sources[0].edgar");
    let mut both = c.clone();
    both["sources"][0]["path"] = json!("x.json");
    let parsed: ReportsConfig = noisebench_core::stage::parse_config(&both).unwrap();
    assert_eq!(
        ReportsStage::new(live_web(archive.path()))
            .validate(&parsed, Path::new("/"))
            .unwrap_err()
            .field,
        "sources[0]"
    );
}

/// A real submissions index as data.sec.gov serves it (Tesla, CIK 1318605, saved by edgartools
/// in 2022; fixtures/real/edgar/submissions/PROVENANCE.md): 1,001 recent filings, one further
/// page, 10-Ks and their amendments. Expected values read from the file.
#[test]
fn a_real_submissions_index_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/real/edgar/submissions/CIK0001318605.json");
    let json = std::fs::read_to_string(&path).unwrap();
    let parsed = noisebench_chunk::parse_submissions(&json, "", "").unwrap();
    assert_eq!(parsed.cik, "1318605");
    assert_eq!(parsed.company, "Tesla, Inc.");
    assert_eq!(parsed.filings.len(), 1001);
    assert_eq!(
        parsed.pages,
        vec![(
            "CIK0001318605-submissions-001.json".to_string(),
            "2005-02-17".to_string(),
            "2013-12-10".to_string()
        )]
    );
    let first = &parsed.filings[0];
    assert_eq!(
        (
            first.accession.as_str(),
            first.filing_date.as_str(),
            first.form.as_str()
        ),
        ("0001790565-22-000015", "2022-11-30", "4")
    );
    let annual: Vec<(&str, &str, &str, &str, &str)> = parsed
        .filings
        .iter()
        .filter(|f| f.form == "10-K" || f.form == "10-K/A")
        .map(|f| {
            (
                f.accession.as_str(),
                f.filing_date.as_str(),
                f.report_date.as_str(),
                f.form.as_str(),
                f.primary_document.as_str(),
            )
        })
        .collect();
    assert_eq!(
        annual,
        vec![
            (
                "0001564590-22-016871",
                "2022-05-02",
                "2021-12-31",
                "10-K/A",
                "tsla-10ka_20211231.htm"
            ),
            (
                "0000950170-22-000796",
                "2022-02-07",
                "2021-12-31",
                "10-K",
                "tsla-20211231.htm"
            ),
            (
                "0001564590-21-022604",
                "2021-04-30",
                "2020-12-31",
                "10-K/A",
                "tsla-10ka_20201231.htm"
            ),
            (
                "0001564590-21-004599",
                "2021-02-08",
                "2020-12-31",
                "10-K",
                "tsla-10k_20201231.htm"
            ),
            (
                "0001564590-20-018984",
                "2020-04-28",
                "2019-12-31",
                "10-K/A",
                "tsla-10ka_20191231.htm"
            ),
            (
                "0001564590-20-004475",
                "2020-02-13",
                "2019-12-31",
                "10-K",
                "tsla-10k_20191231.htm"
            ),
            (
                "0001564590-19-003165",
                "2019-02-19",
                "2018-12-31",
                "10-K",
                "tsla-10k_20181231.htm"
            ),
            (
                "0001564590-18-002956",
                "2018-02-23",
                "2017-12-31",
                "10-K",
                "tsla-10k_20171231.htm"
            ),
            (
                "0001564590-17-003118",
                "2017-03-01",
                "2016-12-31",
                "10-K",
                "tsla-10k_20161231.htm"
            ),
            (
                "0001564590-16-013195",
                "2016-02-24",
                "2015-12-31",
                "10-K",
                "tsla-10k_20151231.htm"
            ),
            (
                "0001564590-15-001031",
                "2015-02-26",
                "2014-12-31",
                "10-K",
                "tsla-10k_20141231.htm"
            ),
            (
                "0001193125-14-069681",
                "2014-02-26",
                "2013-12-31",
                "10-K",
                "d668062d10k.htm"
            ),
        ]
    );
    let latest = parsed.filings.iter().find(|f| f.form == "10-K").unwrap();
    assert_eq!(
        latest.document_url("https://www.sec.gov/"),
        "https://www.sec.gov/Archives/edgar/data/1318605/000095017022000796/tsla-20211231.htm"
    );
}

#[test]
fn item_cutting_takes_the_body_not_the_table_of_contents() {
    let cut = filing_items(
        ALPHA_AMENDED,
        &["item_1".into(), "item_8".into(), "item_9".into()],
    );
    let heads: Vec<&str> = cut
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Heading { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        heads,
        vec!["Item 1. Business", "Item 8. Financial Statements"]
    );
    assert_eq!(cut.missing, vec!["item_9".to_string()]);
    // Item 1 ends at "PART II", item 8 at "SIGNATURES".
    assert_eq!(cut.blocks.len(), 4);
    let toc_only = filing_items(
        r##"<p><a href="#x">Item 7. MD&A</a></p><p><a href="#y">Item 8. Statements</a></p>"##,
        &["item_7".into()],
    );
    assert!(toc_only.blocks.is_empty());
    assert_eq!(toc_only.missing, vec!["item_7".to_string()]);
}

/// Gamma's filings are plain-text submissions, as every EDGAR filing before about 2001 is: read
/// as text, their items cut (Textron's 10-K405 of 2002 is of the 10-K family, taken under
/// `forms = ["10-K"]`); the 10-KSB listed beside it is a counted drop naming its form, taken when
/// `forms` names it; the 8-K is no annual report and not counted. Expected text read in the files.
#[test]
fn plain_text_filings_are_read_as_text_and_every_annual_form_is_taken_or_counted() {
    let (served, _edgar) = serve();
    let archive = tempfile::tempdir().unwrap();
    let small = live_web(archive.path());
    let gamma = json!({"ciks": ["3"], "tickers": [], "from": "1990-01-01"});
    let (reports, report) = run(&small, &config(served.url(), gamma));
    assert_eq!((report.items_in, report.items_out), (2, 1));
    assert_eq!(
        drops(&report),
        BTreeMap::from([(
            "edgar:3/0000930413-08-001093".to_string(),
            "form_not_taken".to_string()
        )])
    );
    let why = &report.drops.iter().find(|d| d.dropped).unwrap().detail;
    assert!(why.contains("10-KSB"), "{why}");
    let textron = &reports[0];
    assert_eq!(textron.metadata["filing_type"], "10-K405");
    assert_eq!(textron.metadata["period_of_report"], "2001-12-29");
    assert_eq!(
        texts(textron),
        vec![
            "h:ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION AND RESULTS OF OPERATIONS",
            "p:\"Management's Discussion and Analysis,\" appearing on pages 19 through 32 of our 2001 Annual Report to Shareholders is incorporated by reference into this Annual Report on Form 10-K.",
            "h:ITEM 7A. QUANTITATIVE AND QUALITATIVE DISCLOSURES ABOUT MARKET RISKS",
            "p:\"Quantitative Risks Measures,\" appearing on page 30 of our 2001 Annual Report to Shareholders is incorporated by reference into this Annual Report on Form 10-K.",
        ]
    );

    // Named in `forms`, the 10-KSB is taken: its submission's main document read as text, its
    // exhibits kept apart; it has no item 7A (a counted failure, the report kept).
    let big = web(json!({
        "allow_addresses": ["loopback"], "max_body_bytes": 1_000_000, "archive_dir": archive.path(),
    }));
    let both =
        json!({"ciks": ["3"], "tickers": [], "from": "1990-01-01", "forms": ["10-K", "10-KSB"]});
    let (reports, report) = run(&big, &config(served.url(), both));
    assert_eq!((report.items_in, report.items_out), (2, 2));
    let ksb = reports
        .iter()
        .find(|r| r.metadata["filing_type"] == "10-KSB")
        .unwrap();
    assert_eq!(ksb.metadata["exhibits"], "EX-31.1,EX-31.2,EX-32.1,EX-32.2");
    assert_eq!(
        texts(ksb),
        vec![
            "h:ITEM 7. FINANCIAL STATEMENTS",
            "p:See the index to the Financial Statements below, beginning on page F-1.",
        ]
    );
    assert_eq!(
        records(&report, false).values().collect::<Vec<_>>(),
        vec!["missing_item"]
    );
}

/// This path relative to the working directory (`../../target/tmp/...` from the crate's folder).
fn relative_to_cwd(path: &Path) -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap();
    let common = cwd
        .components()
        .zip(path.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut rel = std::path::PathBuf::new();
    for _ in common..cwd.components().count() {
        rel.push("..");
    }
    for c in path.components().skip(common) {
        rel.push(c);
    }
    rel
}

/// A workspace given as a relative root (`--root ws`): the EDGAR source's web layer finds the
/// replay archive the run's layer resolved against it, not a folder of that name under `/`. And a
/// web layer that cannot be set up fails the stage, so no empty result is kept for a rerun to
/// reuse.
#[test]
fn a_relative_root_replays_and_a_failed_web_setup_fails_the_stage() {
    let (served, _edgar) = serve();
    let ws = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let live = live_web(&ws.path().join("archive"));
    let cfg = config(served.url(), json!({}));
    let (reports, _) = run(&live, &cfg);
    assert_eq!(reports.len(), 2);
    drop(live);
    drop(served);

    let root = relative_to_cwd(ws.path());
    assert!(
        root.is_relative() && root.join("archive").is_dir(),
        "{root:?}"
    );
    let replay = Arc::new(
        Web::from_value(
            &json!({"mode": "replay", "replay_archive": "archive"}),
            &root,
        )
        .unwrap(),
    );
    let stage = ReportsStage::new(replay);
    let parsed: ReportsConfig = noisebench_core::stage::parse_config(&cfg).unwrap();
    let ctx = ctx(&root);
    let out = stage.run(&parsed, Inputs::default(), &ctx).unwrap();
    let replayed = Report::from_rows(out.tables["reports"].clone()).unwrap();
    assert_eq!(replayed, reports);

    // The archive gone after the run's layer was built: the source's own layer cannot load it.
    std::fs::remove_dir_all(ws.path().join("archive")).unwrap();
    let err = stage.run(&parsed, Inputs::default(), &ctx).unwrap_err();
    assert!(err.to_string().contains("sources[0].edgar"), "{err}");
}

/// Through EDGAR too, an item that only points to the annual report brings the submission's
/// EX-13: IBM's item 7 (1998) is flagged and gets the exhibit's MD&A under a level-3 heading
/// naming the exhibit (read in the file).
#[test]
fn a_pointer_item_brings_the_annual_report_exhibit() {
    let (served, _edgar) = serve();
    let archive = tempfile::tempdir().unwrap();
    let big = web(json!({
        "allow_addresses": ["loopback"], "max_body_bytes": 1_000_000, "archive_dir": archive.path(),
    }));
    let delta = json!({"ciks": ["4"], "tickers": [], "from": "1990-01-01"});
    let mut cfg = config(served.url(), delta);
    cfg["sources"][0]["items"] = json!(["item_7"]);
    let (reports, report) = run(&big, &cfg);
    assert_eq!((report.items_in, report.items_out), (1, 1));
    let ibm = &reports[0];
    assert_eq!(ibm.metadata["filing_type"], "10-K405");
    assert_eq!(ibm.metadata["incorporated_by_reference"], "item_7");
    assert_eq!(ibm.metadata["annual_report_exhibit"], "EX-13");
    // The exhibit's MD&A under item 7, by the same cut as a file's.
    assert_eq!(ibm.metadata["item_7_source"], "EX-13");
    let t = texts(ibm);
    assert_eq!(
        t[..3],
        [
            "h:ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION AND RESULTS OF OPERATIONS:",
            "p:Refer to pages 40 through 49 of IBM's 1997 Annual Report to Stockholders which are incorporated herein by reference.",
            "h:EX-13",
        ]
    );
    let mdna = t.iter().position(|p| {
        p.starts_with(
            "p:IBM's financial results in 1997 increasingly reflect the successful implementation",
        )
    });
    // The rest of the exhibit follows, after the MD&A placed under the item.
    let rest = t.iter().rposition(|p| p == "h:EX-13");
    assert!(mdna.is_some() && rest.is_some_and(|r| r > 2 && mdna < Some(r)));
}
