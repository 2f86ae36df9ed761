//! Site restriction and date window through fake Google and Brave APIs on 127.0.0.1: what each
//! API is asked (`siteSearch`, `sort=date:r:`, `site:`, `freshness`) and which returned results
//! the stage drops (`off_site`, `outside_date_window`) or keeps (undated hits, both bounds).

use crate::common;

use std::sync::{Arc, Mutex, Once};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use common::*;
use noisebench_core::{Query as QueryRow, Rows, SearchHit, StageOutput};
use noisebench_search::SearchStage;
use noisebench_testkit::{Served, respond};
use noisebench_web::Web;
use serde_json::{Value, json};

const GOOGLE_KEY: &str = "window-google-key";
const BRAVE_KEY: &str = "window-brave-key";

fn set_keys() {
    static KEYS: Once = Once::new();
    // SAFETY: set once, before any test of this file reads them; nothing else reads them.
    KEYS.call_once(|| unsafe {
        std::env::set_var("NB_WINDOW_GOOGLE_KEY", GOOGLE_KEY);
        std::env::set_var("NB_WINDOW_GOOGLE_CX", "cx-window");
        std::env::set_var("NB_WINDOW_BRAVE_KEY", BRAVE_KEY);
    });
}

/// One result every engine returns: URL and publication date.
type Item = (&'static str, Option<&'static str>);

/// The query parameters of one request, in the order sent.
type Params = Vec<(String, String)>;

/// The results to give, and the requests received per API.
#[derive(Clone)]
struct Fake {
    items: &'static [Item],
    google: Arc<Mutex<Vec<Params>>>,
    brave: Arc<Mutex<Vec<Params>>>,
}

async fn google(State(f): State<Fake>, Query(p): Query<Params>) -> Response {
    f.google.lock().unwrap().push(p);
    let items: Vec<Value> = f
        .items
        .iter()
        .map(|(url, date)| {
            let mut item = json!({"link": url, "title": "t", "snippet": "s"});
            if let Some(d) = date {
                item["pagemap"] = json!({"metatags": [{"article:published_time": d}]});
            }
            item
        })
        .collect();
    respond(200, "application/json", json!({"items": items}).to_string())
}

async fn brave(State(f): State<Fake>, headers: HeaderMap, Query(p): Query<Params>) -> Response {
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some(BRAVE_KEY)
    {
        return respond(401, "application/json", "{}");
    }
    f.brave.lock().unwrap().push(p);
    let results: Vec<Value> = f
        .items
        .iter()
        .map(|(url, date)| json!({"url": url, "title": "t", "description": "s", "page_age": date}))
        .collect();
    respond(
        200,
        "application/json",
        json!({"type": "search", "web": {"results": results}}).to_string(),
    )
}

fn start(items: &'static [Item]) -> (Served, Fake) {
    let fake = Fake {
        items,
        google: Arc::default(),
        brave: Arc::default(),
    };
    let app = Router::new()
        .route("/customsearch/v1", get(google))
        .route("/brave/res/v1/web/search", get(brave))
        .with_state(fake.clone());
    (Served::start(app), fake)
}

/// Run the search stage over one query with Google then Brave and `window` merged into the
/// config.
fn search(base: &str, window: Value) -> StageOutput {
    set_keys();
    let fast = json!({"min_interval_ms": 0, "max_retries": 0});
    let mut config = json!({
        "backends": [
            {"type": "google", "endpoint": format!("{base}/customsearch/v1"),
             "api_key_env": "NB_WINDOW_GOOGLE_KEY", "cx_env": "NB_WINDOW_GOOGLE_CX", "limits": fast},
            {"type": "brave", "endpoint": format!("{base}/brave/res/v1/web/search"),
             "api_key_env": "NB_WINDOW_BRAVE_KEY", "limits": fast}
        ]
    });
    for (k, v) in window.as_object().unwrap() {
        config[k] = v.clone();
    }
    let web = Arc::new(
        Web::from_value(
            &json!({"mode": "replay", "replay_fixtures": "fixtures/web"}),
            &root(),
        )
        .unwrap(),
    );
    let query = QueryRow {
        id: "q_1".into(),
        claim_id: "cl_1".into(),
        kind: "keywords".into(),
        text: "lemon water".into(),
        provenance: "rule".into(),
        llm_request: None,
    };
    let dir = tempfile::tempdir().unwrap();
    run(
        &SearchStage::new(web),
        config,
        inputs(vec![("queries", Rows::Queries(vec![query]))]),
        &ctx(dir.path(), "search"),
    )
}

fn pairs(p: &[(&str, &str)]) -> Params {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// (backend, rank, url, published) of every hit, in output order.
fn hits(out: &mut StageOutput) -> Vec<(String, i64, String, Option<String>)> {
    table::<SearchHit>(out, "search_hits")
        .into_iter()
        .map(|h| (h.backend, h.rank, h.url, h.published))
        .collect()
}

/// Expected drops and hits, the same for both backends.
fn per_backend<T: Clone>(f: impl Fn(&'static str) -> Vec<T>) -> Vec<T> {
    ["google", "brave"].into_iter().flat_map(f).collect()
}

const REDDIT_MARCH: &[Item] = &[
    (
        "https://www.reddit.com/r/news/comments/a1/in_window/",
        Some("2020-03-15T10:00:00Z"),
    ),
    ("https://example.com/news/story", Some("2020-03-15")),
    (
        "https://old.reddit.com/r/news/comments/a3/first_day/",
        Some("2020-03-01"),
    ),
    (
        "https://www.reddit.com/r/news/comments/a4/last_day/",
        Some("2020-03-31T23:59:59Z"),
    ),
    (
        "https://www.reddit.com/r/news/comments/a5/too_early/",
        Some("2020-02-29T23:59:59Z"),
    ),
    (
        "https://www.reddit.com/r/news/comments/a6/too_late/",
        Some("2020-04-01"),
    ),
    ("https://redd.it/a7", None),
    (
        "https://reddit.com.evil.example/r/news/",
        Some("2020-03-15"),
    ),
    ("https://notreddit.com/r/news/", None),
];

#[test]
fn raguard_preset_and_a_date_window() {
    let (server, fake) = start(REDDIT_MARCH);
    let mut out = search(
        server.url(),
        json!({"preset": "raguard", "date_from": "2020-03-01", "date_to": "2020-03-31"}),
    );

    assert_eq!(
        *fake.google.lock().unwrap(),
        [pairs(&[
            ("key", GOOGLE_KEY),
            ("cx", "cx-window"),
            ("q", "lemon water"),
            ("num", "10"),
            ("siteSearch", "reddit.com"),
            ("siteSearchFilter", "i"),
            ("sort", "date:r:20200301:20200331"),
        ])]
    );
    assert_eq!(
        *fake.brave.lock().unwrap(),
        [pairs(&[
            ("q", "lemon water site:reddit.com"),
            ("count", "10"),
            ("freshness", "2020-03-01to2020-03-31"),
        ])]
    );

    let mut expected_drops = per_backend(|b| {
        [
            (2, "off_site"),
            (5, "outside_date_window"),
            (6, "outside_date_window"),
            (8, "off_site"),
            (9, "off_site"),
        ]
        .iter()
        .map(|(rank, reason)| (format!("q_1:{b}:{rank}"), reason.to_string()))
        .collect()
    });
    expected_drops.sort();
    assert_eq!(drops(&out), expected_drops);
    let detail = |item: &str| {
        out.report
            .drops
            .iter()
            .find(|d| d.item == item)
            .map(|d| d.detail.clone())
            .unwrap()
    };
    assert_eq!(
        detail("q_1:google:2"),
        "https://example.com/news/story is not on reddit.com"
    );
    assert_eq!(
        detail("q_1:brave:5"),
        "https://www.reddit.com/r/news/comments/a5/too_early/ published 2020-02-29"
    );

    assert_eq!((out.report.items_in, out.report.items_out), (1, 8));
    let expected_hits = per_backend(|b| {
        [
            (
                1,
                "https://www.reddit.com/r/news/comments/a1/in_window/",
                Some("2020-03-15"),
            ),
            (
                3,
                "https://old.reddit.com/r/news/comments/a3/first_day/",
                Some("2020-03-01"),
            ),
            (
                4,
                "https://www.reddit.com/r/news/comments/a4/last_day/",
                Some("2020-03-31"),
            ),
            (7, "https://redd.it/a7", None),
        ]
        .iter()
        .map(|(rank, url, date)| {
            (
                b.to_string(),
                *rank,
                url.to_string(),
                date.map(str::to_string),
            )
        })
        .collect()
    });
    assert_eq!(hits(&mut out), expected_hits);
}

const OPEN_ENDED: &[Item] = &[
    ("https://example.com/a", Some("2020-03-02")),
    ("https://news.example.com/b", None),
    ("https://badexample.com/c", Some("2020-03-02")),
    (
        "https://www.reddit.com/r/news/comments/d1/x/",
        Some("2020-03-02"),
    ),
    ("https://example.com/e", Some("2020-02-01")),
    ("https://www.example.com/f", Some("2031-01-01")),
];

#[test]
fn an_explicit_site_and_a_window_open_at_the_end() {
    let (server, fake) = start(OPEN_ENDED);
    let mut out = search(
        server.url(),
        json!({"site": " www.Example.COM ", "date_from": "2020-03-01"}),
    );

    // The site is normalised; a missing bound is left empty for Google and filled for Brave.
    assert_eq!(
        *fake.google.lock().unwrap(),
        [pairs(&[
            ("key", GOOGLE_KEY),
            ("cx", "cx-window"),
            ("q", "lemon water"),
            ("num", "10"),
            ("siteSearch", "example.com"),
            ("siteSearchFilter", "i"),
            ("sort", "date:r:20200301:"),
        ])]
    );
    assert_eq!(
        *fake.brave.lock().unwrap(),
        [pairs(&[
            ("q", "lemon water site:example.com"),
            ("count", "10"),
            ("freshness", "2020-03-01to2100-01-01"),
        ])]
    );

    let mut expected_drops = per_backend(|b| {
        [(3, "off_site"), (4, "off_site"), (5, "outside_date_window")]
            .iter()
            .map(|(rank, reason)| (format!("q_1:{b}:{rank}"), reason.to_string()))
            .collect()
    });
    expected_drops.sort();
    assert_eq!(drops(&out), expected_drops);
    let expected_hits = per_backend(|b| {
        [
            (1, "https://example.com/a", Some("2020-03-02")),
            (2, "https://news.example.com/b", None),
            (6, "https://www.example.com/f", Some("2031-01-01")),
        ]
        .iter()
        .map(|(rank, url, date)| {
            (
                b.to_string(),
                *rank,
                url.to_string(),
                date.map(str::to_string),
            )
        })
        .collect()
    });
    assert_eq!(hits(&mut out), expected_hits);
}
