//! Fake Google, Brave, SearxNG and Reddit APIs and a fake web site on 127.0.0.1, driven through
//! the real clients: exact hits and documents, and every failure a counted, recorded reason while
//! the rest proceeds.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, post};
use common::*;
use noisebench_core::{ClaimDocument, Document, Query as QueryRow, Rows, SearchHit};
use noisebench_search::{DocumentsStage, SearchStage};
use noisebench_testkit::{Served, respond};
use noisebench_web::Web;
use serde_json::{Value, json};

const GOOGLE_KEY: &str = "google-test-key-123";
const BRAVE_KEY: &str = "brave-test-key-456";

#[derive(Clone)]
struct Fake {
    base: String,
    token_calls: Arc<AtomicUsize>,
}

/// One result: (url, title, snippet).
type Item = (Option<String>, Option<&'static str>, &'static str);

/// The result list every engine gives for a query.
fn results(base: &str, q: &str) -> Option<Vec<Item>> {
    if !q.contains("lemon") {
        return None;
    }
    let site = |p: &str| Some(format!("{base}/site/{p}"));
    Some(vec![
        (
            site("article?utm_source=feed"),
            Some("Lemon water fact check"),
            "Hot water with lemon does not kill the virus",
        ),
        (site("copy"), Some("Copy of the fact check"), "same text"),
        (None, Some("a result without a link"), "no url"),
        (site("forbidden"), Some("Members only"), "403"),
        (site("huge"), Some("A huge page"), "too big"),
        (site("latin1"), None, "windows-1252 page"),
        (
            site("mislabelled"),
            Some("Mislabelled charset"),
            "utf-8 declared, latin-1 sent",
        ),
    ])
}

/// Google, Brave and SearxNG answers for a query, or the failure the query asks for.
fn engine(
    base: &str,
    q: &str,
    wrap: impl Fn(Vec<Value>) -> Value,
    item: impl Fn(&Item) -> Value,
) -> Response {
    if q.contains("malformed") {
        return respond(200, "application/json", "{\"results\": [ this is not json");
    }
    if q.contains("forbidden") {
        return respond(403, "application/json", "{\"error\": \"forbidden\"}");
    }
    let items = results(base, q).unwrap_or_default();
    respond(
        200,
        "application/json",
        wrap(items.iter().map(item).collect()).to_string(),
    )
}

async fn google(State(f): State<Fake>, Query(p): Query<HashMap<String, String>>) -> Response {
    if p.get("key").map(String::as_str) != Some(GOOGLE_KEY)
        || p.get("cx").map(String::as_str) != Some("cx-1")
    {
        return respond(
            400,
            "application/json",
            format!(
                "{{\"error\":{{\"message\":\"bad key {}\"}}}}",
                p.get("key").cloned().unwrap_or_default()
            ),
        );
    }
    let q = p.get("q").cloned().unwrap_or_default();
    engine(
        &f.base,
        &q,
        |items| {
            if items.is_empty() {
                json!({"searchInformation": {"totalResults": "0"}})
            } else {
                json!({"items": items})
            }
        },
        |(u, t, s)| json!({"link": u, "title": t, "snippet": s}),
    )
}

async fn brave(
    State(f): State<Fake>,
    headers: HeaderMap,
    Query(p): Query<HashMap<String, String>>,
) -> Response {
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some(BRAVE_KEY)
    {
        return respond(401, "application/json", "{}");
    }
    let q = p.get("q").cloned().unwrap_or_default();
    engine(
        &f.base,
        &q,
        |items| json!({"type": "search", "web": {"results": items}}),
        |(u, t, s)| json!({"url": u, "title": t, "description": s}),
    )
}

async fn searxng(State(f): State<Fake>, Query(p): Query<HashMap<String, String>>) -> Response {
    if p.get("format").map(String::as_str) != Some("json") {
        return respond(403, "text/html", "json format not enabled");
    }
    // One page of results only.
    if p.get("pageno").map(String::as_str) != Some("1") {
        return respond(200, "application/json", "{\"results\": []}");
    }
    let q = p.get("q").cloned().unwrap_or_default();
    engine(
        &f.base,
        &q,
        |items| json!({"query": q, "results": items}),
        |(u, t, s)| json!({"url": u, "title": t, "content": s}),
    )
}

async fn reddit_token(State(f): State<Fake>, headers: HeaderMap, body: String) -> Response {
    f.token_calls.fetch_add(1, Ordering::SeqCst);
    // base64("rid:rsecret")
    let ok = headers.get("authorization").and_then(|v| v.to_str().ok())
        == Some("Basic cmlkOnJzZWNyZXQ=")
        && body == "grant_type=client_credentials";
    if !ok {
        return respond(401, "application/json", "{}");
    }
    respond(
        200,
        "application/json",
        json!({"access_token": "tok-1", "token_type": "bearer", "expires_in": 3600}).to_string(),
    )
}

fn post_json(id: &str, title: &str, selftext: &str, is_self: bool) -> Value {
    json!({"id": id, "subreddit": "news", "author": "someone", "title": title, "selftext": selftext,
           "created_utc": 1_600_000_000, "score": 7, "is_self": is_self,
           "url": if is_self { format!("https://www.reddit.com/r/news/comments/{id}/") } else { "https://example.com/story".to_string() },
           "permalink": format!("/r/news/comments/{id}/lemon_water/")})
}

async fn reddit_search(headers: HeaderMap, Query(p): Query<HashMap<String, String>>) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("bearer tok-1") {
        return respond(401, "application/json", "{}");
    }
    let q = p.get("q").cloned().unwrap_or_default();
    if q.contains("malformed") {
        return respond(200, "application/json", "{\"kind\": \"Listing\"}");
    }
    if q.contains("forbidden") {
        return respond(403, "application/json", "{}");
    }
    let children: Vec<Value> = if q.contains("lemon") {
        vec![
            json!({"kind": "t3", "data": post_json("abc1", "Lemon water kills the virus?", "My aunt says hot lemon water every hour kills the coronavirus.", true)}),
            json!({"kind": "t3", "data": post_json("abc2", "Article: lemon water myth", "", false)}),
        ]
    } else {
        Vec::new()
    };
    respond(
        200,
        "application/json",
        json!({"kind": "Listing", "data": {"children": children}}).to_string(),
    )
}

async fn reddit_json(Path((id, rest)): Path<(String, String)>) -> Response {
    assert_eq!(rest, ".json");
    let post = match id.as_str() {
        "abc1" => post_json(
            "abc1",
            "Lemon water kills the virus?",
            "My aunt says hot lemon water every hour kills the coronavirus.",
            true,
        ),
        "abc2" => post_json("abc2", "Article: lemon water myth", "", false),
        _ => return respond(404, "application/json", "{}"),
    };
    respond(
        200,
        "application/json",
        json!([{"kind": "Listing", "data": {"children": [{"kind": "t3", "data": post}]}}, {}])
            .to_string(),
    )
}

/// Brave's recorded answer for the query `1` (fixtures/real/search/brave), whatever the query.
async fn brave_recorded(headers: HeaderMap) -> Response {
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some(BRAVE_KEY)
    {
        return respond(401, "application/json", "{}");
    }
    let body =
        std::fs::read(root().join("fixtures/real/search/brave/web-search-q-1.json")).unwrap();
    respond(200, "application/json", body)
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(root().join("fixtures/web").join(path)).unwrap()
}

async fn site(Path(page): Path<String>) -> Response {
    match page.as_str() {
        "article" | "copy" => respond(
            200,
            "text/html; charset=utf-8",
            fixture("reuters/lemon.html"),
        ),
        "forbidden" => respond(403, "text/html", "<h1>Forbidden</h1>"),
        "huge" => respond(
            200,
            "text/html",
            format!(
                "<html><body>{}</body></html>",
                "<p>padding</p>".repeat(30_000)
            ),
        ),
        "latin1" => respond(
            200,
            "text/html; charset=windows-1252",
            fixture("health-forum/lemon-water.html"),
        ),
        "mislabelled" => {
            let text = "<p>été élève à Noël, déjà là</p>".repeat(100);
            let html = format!("<html><body>{text}</body></html>");
            let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&html);
            respond(200, "text/html; charset=utf-8", bytes.into_owned())
        }
        _ => respond(404, "text/plain", "not found"),
    }
}

/// Start the fake services; returns the server and the count of token requests.
fn start() -> (Served, Arc<AtomicUsize>) {
    let token_calls = Arc::new(AtomicUsize::new(0));
    let calls = token_calls.clone();
    let served = Served::start_with(|base| {
        let state = Fake {
            base: base.to_string(),
            token_calls: calls,
        };
        Router::new()
            .route("/customsearch/v1", get(google))
            .route("/brave/res/v1/web/search", get(brave))
            .route("/brave-recorded/res/v1/web/search", get(brave_recorded))
            .route("/searx/search", get(searxng))
            .route("/reddit/api/v1/access_token", post(reddit_token))
            .route("/reddit/search", get(reddit_search))
            .route("/reddit-json/r/news/comments/{id}/{rest}", get(reddit_json))
            .route("/site/{page}", get(site))
            .with_state(state)
    });
    (served, token_calls)
}

fn web() -> Arc<Web> {
    Arc::new(
        Web::from_value(
            &json!({"allow_addresses": ["loopback"], "rate_per_second": 200.0, "max_retries": 0,
                    "max_body_bytes": 200_000, "timeout_seconds": 10}),
            &root(),
        )
        .unwrap(),
    )
}

fn query(id: &str, text: &str) -> QueryRow {
    QueryRow {
        id: id.into(),
        claim_id: "cl_1".into(),
        kind: "keywords".into(),
        text: text.into(),
        provenance: "rule".into(),
        llm_request: None,
    }
}

#[test]
fn fake_apis_and_site_through_the_real_clients() {
    let (server, token_calls) = start();
    let base = server.url().to_string();
    // SAFETY: these variables are read only by this test, after they are set.
    unsafe {
        std::env::set_var("NB_TEST_GOOGLE_KEY", GOOGLE_KEY);
        std::env::set_var("NB_TEST_GOOGLE_CX", "cx-1");
        std::env::set_var("NB_TEST_BRAVE_KEY", BRAVE_KEY);
        std::env::set_var("NB_TEST_REDDIT_ID", "rid");
        std::env::set_var("NB_TEST_REDDIT_SECRET", "rsecret");
    }
    let fast = json!({"min_interval_ms": 0, "max_retries": 0});
    let config = json!({
        "backends": [
            {"type": "google", "endpoint": format!("{base}/customsearch/v1"), "api_key_env": "NB_TEST_GOOGLE_KEY", "cx_env": "NB_TEST_GOOGLE_CX", "limits": fast},
            {"type": "brave", "endpoint": format!("{base}/brave/res/v1/web/search"), "api_key_env": "NB_TEST_BRAVE_KEY", "limits": fast},
            {"type": "searxng", "base_url": format!("{base}/searx")},
            {"type": "reddit", "token_url": format!("{base}/reddit/api/v1/access_token"), "api_base": format!("{base}/reddit"),
             "client_id_env": "NB_TEST_REDDIT_ID", "client_secret_env": "NB_TEST_REDDIT_SECRET", "limits": fast}
        ]
    });
    let queries = vec![
        query("q_lemon", "hot lemon water"),
        query("q_malformed", "malformed answer"),
        query("q_empty", "nothing matches"),
        query("q_forbidden", "forbidden query"),
    ];
    let web = web();
    let dir = tempfile::tempdir().unwrap();
    let mut out = run(
        &SearchStage::new(web.clone()),
        config,
        inputs(vec![("queries", Rows::Queries(queries.clone()))]),
        &ctx(dir.path(), "search"),
    );
    assert_eq!(out.report.items_in, 4);
    let by_reason = drops(&out);
    let expected: Vec<(String, String)> = [
        ("q_empty:brave", "no_results"),
        ("q_empty:google", "no_results"),
        ("q_empty:reddit", "no_results"),
        ("q_empty:searxng", "no_results"),
        ("q_forbidden:brave", "http_403"),
        ("q_forbidden:google", "http_403"),
        ("q_forbidden:reddit", "http_403"),
        ("q_forbidden:searxng", "http_403"),
        ("q_lemon:brave:3", "missing_url"),
        ("q_lemon:google:3", "missing_url"),
        ("q_lemon:searxng:3", "missing_url"),
        ("q_malformed:brave", "malformed_response"),
        ("q_malformed:google", "malformed_response"),
        ("q_malformed:reddit", "malformed_response"),
        ("q_malformed:searxng", "malformed_response"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(by_reason, expected);
    // No secret in any drop detail.
    for d in &out.report.drops {
        assert!(
            !d.detail.contains(GOOGLE_KEY)
                && !d.detail.contains(BRAVE_KEY)
                && !d.detail.contains("rsecret"),
            "{}",
            d.detail
        );
    }
    assert_eq!(
        token_calls.load(Ordering::SeqCst),
        1,
        "the OAuth token is fetched once and reused"
    );
    let hits: Vec<SearchHit> = table(&mut out, "search_hits");
    let got: Vec<(&str, i64, String)> = hits
        .iter()
        .map(|h| (h.backend.as_str(), h.rank, h.url.replace(&base, "")))
        .collect();
    let mut expected = Vec::new();
    for backend in ["google", "brave", "searxng"] {
        for (rank, path) in [
            (1, "/site/article?utm_source=feed"),
            (2, "/site/copy"),
            (4, "/site/forbidden"),
            (5, "/site/huge"),
            (6, "/site/latin1"),
            (7, "/site/mislabelled"),
        ] {
            expected.push((backend, rank, path.to_string()));
        }
    }
    expected.push((
        "reddit",
        1,
        "https://www.reddit.com/r/news/comments/abc1/lemon_water/".into(),
    ));
    expected.push((
        "reddit",
        2,
        "https://www.reddit.com/r/news/comments/abc2/lemon_water/".into(),
    ));
    assert_eq!(got, expected);
    let latin = hits
        .iter()
        .find(|h| h.backend == "google" && h.rank == 6)
        .unwrap();
    assert_eq!(
        (latin.title.as_deref(), latin.snippet.as_deref()),
        (None, Some("windows-1252 page"))
    );
    assert_eq!(hits[0].title.as_deref(), Some("Lemon water fact check"));

    // documents
    let mut out = run(
        &DocumentsStage::new(web),
        json!({"reddit_json_base": format!("{base}/reddit-json")}),
        inputs(vec![
            ("search_hits", Rows::SearchHits(hits.clone())),
            ("queries", Rows::Queries(queries)),
        ]),
        &ctx(dir.path(), "documents"),
    );
    let mut reasons: Vec<(String, String)> = out
        .report
        .drops
        .iter()
        .map(|d| (d.item.replace(&base, ""), d.reason.clone()))
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        [
            ("/site/copy".to_string(), "merged_duplicate".to_string()),
            ("/site/forbidden".into(), "http_403".into()),
            ("/site/huge".into(), "too_large".into()),
            ("/site/mislabelled".into(), "bad_encoding".into()),
        ]
    );
    let docs: Vec<Document> = table(&mut out, "documents");
    let summary: Vec<(String, Option<&str>, bool, bool)> = docs
        .iter()
        .map(|d| {
            (
                d.canonical_url.replace(&base, ""),
                d.language.as_deref(),
                d.is_link_post,
                d.body_removed,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("/site/article".to_string(), Some("eng"), false, false),
            ("/site/latin1".into(), Some("fra"), false, false),
            (
                "https://www.reddit.com/r/news/comments/abc1/".into(),
                Some("eng"),
                false,
                false
            ),
            (
                "https://www.reddit.com/r/news/comments/abc2/".into(),
                None,
                true,
                false
            ),
        ]
    );
    assert_eq!(
        docs[0].title.as_deref(),
        Some("Fact check: Hot water with lemon does not kill the coronavirus")
    );
    assert_eq!(docs[0].published.as_deref(), Some("2020-03-24"));
    assert_eq!(docs[0].source_type, "other");
    assert!(docs[1].text.contains("café de la place"));
    assert_eq!(
        docs[2].text,
        "My aunt says hot lemon water every hour kills the coronavirus."
    );
    assert_eq!(
        (docs[2].subreddit.as_deref(), docs[2].score),
        (Some("news"), Some(7))
    );
    assert_eq!(docs[2].published.as_deref(), Some("2020-09-13T12:26:40Z"));
    assert_eq!(docs[3].text, "");
    let links: Vec<ClaimDocument> = table(&mut out, "claim_documents");
    let article = links.iter().find(|l| l.document_id == docs[0].id).unwrap();
    // article and its copy, from three engines.
    assert_eq!(article.hit_ids.len(), 6);
    assert_eq!(article.best_rank, 1);
    assert_eq!(article.query_kinds, ["keywords"]);
    assert_eq!(links.len(), 4);
}

/// Two backends of one type in one pipeline (two Google engines, two Brave endpoints): their hits
/// and drops carry the backend's place (`google[0]`, `google[1]`), so no hit id and no drop id is
/// written twice (the runner refuses a table with a repeated id).
#[test]
fn two_backends_of_one_type_keep_their_hits_and_drops_apart() {
    let (server, _) = start();
    let base = server.url().to_string();
    // SAFETY: these variables are read only by the tests of this file, after they are set, and
    // always to the same values.
    unsafe {
        std::env::set_var("NB_TEST_GOOGLE_KEY", GOOGLE_KEY);
        std::env::set_var("NB_TEST_GOOGLE_CX", "cx-1");
        std::env::set_var("NB_TEST_BRAVE_KEY", BRAVE_KEY);
    }
    let fast = json!({"min_interval_ms": 0, "max_retries": 0});
    let google = json!({"type": "google", "endpoint": format!("{base}/customsearch/v1"),
                        "api_key_env": "NB_TEST_GOOGLE_KEY", "cx_env": "NB_TEST_GOOGLE_CX", "limits": fast});
    let config = json!({
        "top_k": 5,
        "backends": [
            google.clone(),
            google,
            {"type": "brave", "endpoint": format!("{base}/brave/res/v1/web/search"), "api_key_env": "NB_TEST_BRAVE_KEY", "limits": fast},
            {"type": "brave", "endpoint": format!("{base}/brave-recorded/res/v1/web/search"), "api_key_env": "NB_TEST_BRAVE_KEY", "limits": fast},
            {"type": "searxng", "base_url": format!("{base}/searx")}
        ]
    });
    let queries = vec![
        query("q_lemon", "hot lemon water"),
        query("q_empty", "nothing matches"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut out = run(
        &SearchStage::new(web()),
        config,
        inputs(vec![("queries", Rows::Queries(queries))]),
        &ctx(dir.path(), "search"),
    );
    let drop_ids: std::collections::BTreeSet<&str> =
        out.report.drops.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(drop_ids.len(), out.report.drops.len(), "a drop id twice");
    let expected: Vec<(String, String)> = [
        ("q_empty:brave[2]", "no_results"),
        ("q_empty:google[0]", "no_results"),
        ("q_empty:google[1]", "no_results"),
        ("q_empty:searxng", "no_results"),
        ("q_lemon:brave[2]:3", "missing_url"),
        ("q_lemon:google[0]:3", "missing_url"),
        ("q_lemon:google[1]:3", "missing_url"),
        ("q_lemon:searxng:3", "missing_url"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(drops(&out), expected);
    let hits: Vec<SearchHit> = table(&mut out, "search_hits");
    let hit_ids: std::collections::BTreeSet<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(hit_ids.len(), hits.len(), "a hit id twice");
    let per_backend = |q: &str, b: &str| {
        hits.iter()
            .filter(|h| h.query_id == q && h.backend == b)
            .count()
    };
    for b in ["google[0]", "google[1]", "brave[2]", "searxng"] {
        assert_eq!(per_backend("q_lemon", b), 4, "{b}");
    }
    // The recorded Brave answer gives its first five results to every query, snippets as text.
    assert_eq!(per_backend("q_lemon", "brave[3]"), 5);
    assert_eq!(per_backend("q_empty", "brave[3]"), 5);
    let first = hits
        .iter()
        .find(|h| h.backend == "brave[3]" && h.query_id == "q_lemon" && h.rank == 1)
        .unwrap();
    assert_eq!(
        first.snippet.as_deref(),
        Some("Listen to the 1 on Spotify. Song · Taylor Swift · 2020")
    );
    // The same URL from two backends of one type: two hits, two ids.
    let same: Vec<&SearchHit> = hits
        .iter()
        .filter(|h| h.query_id == "q_lemon" && h.rank == 1 && h.backend.starts_with("google"))
        .collect();
    assert_eq!(same.len(), 2);
    assert_eq!(same[0].url, same[1].url);
    assert_ne!(same[0].id, same[1].id);
}

/// Every backend's key variables are declared with their fields (the command line checks them
/// all before a run and names every unset one at once), defaults included; `validate` leaves
/// them to it.
#[test]
fn the_key_variables_are_declared_with_their_fields() {
    let stage = SearchStage::new(web());
    let config: noisebench_search::SearchConfig = noisebench_core::parse_config(&json!({
        "backends": [
            {"type": "brave", "api_key_env": "NB_TEST_SURELY_UNSET_KEY"},
            {"type": "google"},
            {"type": "searxng", "base_url": "http://127.0.0.1:1"},
        ]
    }))
    .unwrap();
    assert_eq!(
        noisebench_core::TypedStage::secret_variables(&stage, &config),
        [
            ("backends[0].api_key_env", "NB_TEST_SURELY_UNSET_KEY"),
            ("backends[1].api_key_env", "GOOGLE_API_KEY"),
            ("backends[1].cx_env", "GOOGLE_CSE_ID"),
        ]
        .map(|(f, v)| (f.to_string(), v.to_string()))
    );
    noisebench_core::TypedStage::validate(&stage, &config, &root()).unwrap();
    let bad = noisebench_core::parse_config::<noisebench_search::SearchConfig>(&json!({
        "backends": [{"type": "brave", "api_key": "inline"}]
    }))
    .unwrap_err();
    assert!(bad.message.contains("api_key"), "{bad}");
}
