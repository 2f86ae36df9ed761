//! The `retriever` backend against a fake Elasticsearch on 127.0.0.1 that checks the `_search`
//! request shape and the API key header: hits with their text from the answer or the corpus,
//! a timeout retried, a 500 a transient drop, a malformed answer a counted drop with its reason,
//! and the key in no drop detail; the configuration's `http` table, the old flat shape refused.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use common::*;
use noisebench_core::{Document, Query, Rows, SearchHit};
use noisebench_search::{DocumentsStage, SearchStage};
use noisebench_testkit::{Served, respond};
use noisebench_web::Web;
use serde_json::{Value, json};

const KEY: &str = "es-test-key-789";

/// Requests seen per query text (`slow` and `down` are retried).
#[derive(Clone, Default)]
struct Calls {
    slow: Arc<AtomicUsize>,
    down: Arc<AtomicUsize>,
}

fn es_hit(id: &str, score: f64, body: Option<&str>) -> Value {
    let source = match body {
        Some(b) => json!({"body": b, "name": format!("Memo {id}")}),
        None => json!({"name": format!("Memo {id}")}),
    };
    json!({"_index": "memos", "_id": id, "_score": score, "_source": source})
}

fn es_answer(hits: Vec<Value>) -> Response {
    let body = json!({"took": 2, "timed_out": false,
        "hits": {"total": {"value": hits.len(), "relation": "eq"}, "hits": hits}});
    respond(200, "application/json", body.to_string())
}

/// The fake `_search`: a 400 unless the request is the shape and carries the key.
async fn search(State(calls): State<Calls>, headers: HeaderMap, body: String) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("ApiKey {KEY}"))
    {
        return respond(401, "application/json", r#"{"error":"no key"}"#);
    }
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return respond(400, "application/json", r#"{"error":"not json"}"#);
    };
    let Some(text) = request["query"]["match"]["body"].as_str() else {
        return respond(400, "application/json", r#"{"error":"no match on body"}"#);
    };
    let shape = json!({"size": 3, "query": {"match": {"body": text}}});
    if request != shape {
        return respond(400, "application/json", r#"{"error":"unexpected shape"}"#);
    }
    match text {
        "water safe" => es_answer(vec![
            es_hit("memo-4", 2.7, Some("A post claims the water is unsafe.")),
            es_hit("memo-1", 1.9, None),
            es_hit("memo-9", 1.2, None),
            es_hit("memo-4", 1.0, Some("again")),
            json!({"_id": "memo-3", "_score": "high", "_source": {"body": "x"}}),
        ]),
        "bridge" => {
            if calls.slow.fetch_add(1, Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(1500)).await;
            }
            es_answer(vec![es_hit("memo-2", 3.0, None)])
        }
        "down" => {
            calls.down.fetch_add(1, Ordering::SeqCst);
            respond(500, "application/json", r#"{"error":"shard failure"}"#)
        }
        "broken" => respond(200, "text/html", "<html>proxy error</html>"),
        _ => es_answer(Vec::new()),
    }
}

fn write_corpus(dir: &Path) {
    let docs = [
        (
            "memo-1",
            "Chlorine levels in the city water supply were raised.",
        ),
        ("memo-2", "The river bridge passed its inspection."),
        ("memo-3", "The library budget grew by four percent."),
    ];
    let lines: Vec<String> = docs
        .iter()
        .map(|(id, text)| json!({"id": id, "text": text}).to_string())
        .collect();
    std::fs::write(dir.join("docs.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn query(id: &str, text: &str) -> Query {
    Query {
        id: id.into(),
        claim_id: format!("cl_{id}"),
        kind: "keywords".into(),
        text: text.into(),
        ..Query::default()
    }
}

fn replay_web() -> Arc<Web> {
    Arc::new(
        Web::from_value(
            &json!({"mode": "replay", "replay_fixtures": "fixtures/web"}),
            &root(),
        )
        .unwrap(),
    )
}

#[test]
fn an_elasticsearch_retriever_chooses_the_documents_through_the_http_client() {
    let calls = Calls::default();
    let state = calls.clone();
    let server = Served::start(
        Router::new()
            .route("/memos/_search", post(search))
            .with_state(state),
    );
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path());
    // SAFETY: this variable is read only by this test, after it is set.
    unsafe { std::env::set_var("NB_TEST_ES_KEY", KEY) };
    let config = json!({
        "top_k": 3,
        "backends": [{
            "type": "retriever",
            "http": {
                "shape": "elasticsearch",
                "endpoint": format!("{}/memos/_search", server.url()),
                "query_field": "body", "text_field": "body", "title_field": "name",
                "api_key_env": "NB_TEST_ES_KEY",
                "limits": {"min_interval_ms": 0, "max_retries": 1, "backoff_ms": 10, "timeout_seconds": 0.5}
            },
            "corpus": dir.path().join("docs.jsonl"), "name": "memos"
        }]
    });
    let queries = vec![
        query("q1", "water safe"),
        query("q2", "bridge"),
        query("q3", "down"),
        query("q4", "broken"),
    ];
    let mut out = common::run(
        &SearchStage::new(replay_web()),
        config,
        inputs(vec![("queries", Rows::Queries(queries))]),
        &ctx(&dir.path().join("search"), "search"),
    );

    // The timeout on `bridge` was retried once and answered; `down` was tried twice.
    assert_eq!(calls.slow.load(Ordering::SeqCst), 2);
    assert_eq!(calls.down.load(Ordering::SeqCst), 2);

    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        drops(&out),
        [
            s("q1:retriever:memo-3", "bad_score"),
            s("q1:retriever:memo-4", "duplicate_doc"),
            s("q1:retriever:memo-9", "unknown_doc_id"),
            s("q3:retriever", "http_500"),
            s("q4:retriever", "malformed_response"),
        ]
    );
    let down = out
        .report
        .drops
        .iter()
        .find(|d| d.reason == "http_500")
        .unwrap();
    assert!(down.retry && down.dropped);
    let malformed = out
        .report
        .drops
        .iter()
        .find(|d| d.reason == "malformed_response")
        .unwrap();
    assert!(!malformed.retry && malformed.detail.contains("not JSON"));
    assert!(out.report.drops.iter().all(|d| !d.detail.contains(KEY)));

    let hits: Vec<SearchHit> = table(&mut out, "search_hits");
    let got: Vec<(&str, i64, Option<&str>, Option<&str>)> = hits
        .iter()
        .map(|h| {
            (
                h.query_id.as_str(),
                h.rank,
                h.corpus_id.as_deref(),
                h.text.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "q1",
                1,
                Some("memo-4"),
                Some("A post claims the water is unsafe.")
            ),
            (
                "q1",
                2,
                Some("memo-1"),
                Some("Chlorine levels in the city water supply were raised.")
            ),
            (
                "q2",
                1,
                Some("memo-2"),
                Some("The river bridge passed its inspection.")
            ),
        ]
    );
    assert!(hits.iter().all(|h| h.backend == "retriever"));
    assert_eq!(hits[0].title.as_deref(), Some("Memo memo-4"));
    assert_eq!(hits[1].url, "corpus://memos/memo-1");

    // The hits become documents without a fetch.
    let mut out = common::run(
        &DocumentsStage::new(replay_web()),
        json!({}),
        inputs(vec![("search_hits", Rows::SearchHits(hits))]),
        &ctx(&dir.path().join("documents"), "documents"),
    );
    assert!(out.report.drops.is_empty());
    let documents: Vec<Document> = table(&mut out, "documents");
    let ids: Vec<Option<&str>> = documents.iter().map(|d| d.corpus_id.as_deref()).collect();
    assert_eq!(ids, [Some("memo-4"), Some("memo-1"), Some("memo-2")]);
}

#[test]
fn the_key_variable_is_declared_and_the_endpoint_checked() {
    let stage = SearchStage::new(replay_web());
    let config: noisebench_search::SearchConfig = noisebench_core::parse_config(&json!({
        "backends": [{"type": "retriever", "http": {"endpoint": "http://127.0.0.1:9/x/_search",
                      "shape": "elasticsearch", "api_key_env": "NB_TEST_RETRIEVER_KEY_UNSET"}}]
    }))
    .unwrap();
    assert_eq!(
        noisebench_core::TypedStage::secret_variables(&stage, &config),
        [(
            "backends[0].http.api_key_env".to_string(),
            "NB_TEST_RETRIEVER_KEY_UNSET".to_string()
        )]
    );
    noisebench_core::TypedStage::validate(&stage, &config, &root()).unwrap();
    let bad: noisebench_search::SearchConfig = noisebench_core::parse_config(&json!({
        "backends": [{"type": "retriever", "http": {"endpoint": "not a url"}}]
    }))
    .unwrap();
    let e = noisebench_core::TypedStage::validate(&stage, &bad, &root()).unwrap_err();
    assert!(e.to_string().contains("backends[0].http.endpoint"), "{e}");
}

/// The endpoint's settings live in the `http` table (as the retrieval stage's `user.http`); a
/// pipeline file of the old shape, with them beside `type`, fails naming the first of them, and
/// an unknown field inside `http` fails too.
#[test]
fn the_old_flat_shape_and_unknown_http_fields_are_refused_by_name() {
    let parse = |backend: Value| {
        noisebench_core::parse_config::<noisebench_search::SearchConfig>(
            &json!({"backends": [backend]}),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string()
    };
    let old = parse(
        json!({"type": "retriever", "endpoint": "http://127.0.0.1:9/x/_search",
                           "shape": "elasticsearch", "name": "memos"}),
    );
    assert!(old.contains("unknown field `endpoint`"), "{old}");
    assert!(old.contains("`http`"), "{old}");
    let old = parse(json!({"type": "retriever", "name": "memos",
                           "http": {"endpoint": "http://127.0.0.1:9/x/_search"},
                           "limits": {"timeout_seconds": 1.0}}));
    assert!(old.contains("unknown field `limits`"), "{old}");
    let inner = parse(json!({"type": "retriever",
                             "http": {"endpoint": "http://127.0.0.1:9/x/_search", "corpus": "d"}}));
    assert!(inner.contains("unknown field `corpus`"), "{inner}");
    // The path stops at the tagged item; the fields it expects are the `http` table's.
    assert!(inner.contains("expected one of `endpoint`"), "{inner}");
    let missing = parse(json!({"type": "retriever", "name": "memos"}));
    assert!(missing.contains("missing field `http`"), "{missing}");
}

#[test]
fn a_recorded_elasticsearch_answer_replays_through_the_fixture_backend() {
    let dir = tempfile::tempdir().unwrap();
    let mut out = common::run(
        &SearchStage::new(replay_web()),
        json!({"backends": [{"type": "fixture", "dir": "fixtures/search"}]}),
        inputs(vec![(
            "queries",
            Rows::Queries(vec![query("q1", "city water supply safe")]),
        )]),
        &ctx(&dir.path().join("search"), "search"),
    );
    assert_eq!(
        drops(&out),
        [("q1:fixture:memo-7".into(), "no_text".into())]
    );
    let hits: Vec<SearchHit> = table(&mut out, "search_hits");
    let ids: Vec<Option<&str>> = hits.iter().map(|h| h.corpus_id.as_deref()).collect();
    assert_eq!(ids, [Some("memo-4"), Some("memo-1")]);
    assert!(hits.iter().all(|h| h.text.is_some()));
}
