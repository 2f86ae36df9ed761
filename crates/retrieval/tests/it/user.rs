//! The user's own retriever in the `retrieval` stage, beside BM25: a TREC run with a tie, a
//! missing query, an unknown doc id, a malformed line and a query of no question (rows, counted
//! records and metrics equal to hand-computed values), and an HTTP retriever behind a fake
//! Elasticsearch `_search` on 127.0.0.1 (request body and key checked, a timeout and a 503
//! retried, a 500 costing its own query only, an endpoint that stays down abandoned).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use noisebench_core::{Retrieval, TypedStage, parse_config};
use noisebench_llm::Llm;
use noisebench_retrieval::{RetrievalConfig, RetrievalStage};
use noisebench_testkit::{Served, respond};
use serde_json::{Value, json};

use crate::stage::{drops, metric, metrics, repo_root, retrievals, run};

/// The fixture's queries (`crate::stage::fixture`): q1, q2, q3 and p1 (a perturbation of q1);
/// q1 and q2 tie at rank 2, q2 names chunk c9 (none), line 8 has 7 fields, p1 has no row, p9
/// is no query.
const RUN: &str = "\
q1 Q0 c3 1 9.0 mine
q1 Q0 c2 2 8.0 mine
q1 Q0 c1 2 8.0 mine
q1 Q0 c4 3 7.0 mine
q2 Q0 c2 1 5.0 mine
q2 Q0 c9 2 4.0 mine
q2 Q0 c1 3 3.0 mine
q3 Q0 c4 1 2.0 mine extra
q3 Q0 c3 1 2.0 mine
p9 Q0 c1 1 1.0 mine
";

fn user_rows(rows: &[Retrieval], query: &str) -> Vec<(String, i64, f64, bool)> {
    let mut r: Vec<_> = rows
        .iter()
        .filter(|r| r.retriever == "user:mine" && r.query_id == query)
        .map(|r| (r.chunk_id.clone(), r.rank, r.score, r.ground_truth))
        .collect();
    r.sort_by_key(|x| x.1);
    r
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn a_run_file_is_scored_beside_bm25_with_every_left_out_row_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.trec");
    std::fs::write(&path, RUN).unwrap();
    let mut out = run(
        Llm::offline(),
        json!({"embedding": false, "user": {"name": "mine", "run": path}}),
    );
    let file = path.display().to_string();
    let d = drops(&out);
    let user: Vec<&(String, String, bool)> =
        d.iter().filter(|(i, _, _)| i.contains("user:")).collect();
    assert_eq!(
        user,
        [
            &("p1/user:mine".into(), "not_in_run".into(), false),
            &("q1/user:mine".into(), "tied_rank".into(), false),
            &("q2/user:mine".into(), "unknown_doc_id".into(), false),
            &(
                "user:mine/line 8".into(),
                "malformed_run_line".into(),
                false
            ),
        ]
    );
    let detail = |reason: &str| {
        out.report
            .drops
            .iter()
            .find(|r| r.reason == reason)
            .unwrap()
            .detail
            .clone()
    };
    assert!(
        detail("malformed_run_line").contains(&format!("{file}, line 8: 7 fields")),
        "{}",
        detail("malformed_run_line")
    );
    assert!(detail("unknown_doc_id").contains("line 6: no document `c9`"));
    assert!(detail("not_in_run").contains("query `p1`"));

    let rows = retrievals(&mut out);
    // The tie at rank 2 (same score) broken by doc id; top 3 of four rows.
    assert_eq!(
        user_rows(&rows, "q1"),
        [
            ("c3".into(), 1, 9.0, false),
            ("c1".into(), 2, 8.0, true),
            ("c2".into(), 3, 8.0, false)
        ]
    );
    assert_eq!(
        user_rows(&rows, "q2"),
        [("c2".into(), 1, 5.0, true), ("c1".into(), 2, 3.0, true)]
    );
    assert_eq!(user_rows(&rows, "q3"), [("c3".into(), 1, 2.0, false)]);
    assert!(user_rows(&rows, "p1").is_empty());
    assert!(
        rows.iter().any(|r| r.retriever == "bm25"),
        "BM25 still runs"
    );

    // By hand, k = 3: q1 [c3, c1, c2] vs {c1}: recall 1, RR 1/2, NDCG 1/log2(3); q2 [c2, c1] vs
    // {c1, c2}: 1, 1, 1; q3 [c3] vs {c4}: 0, 0, 0; p1 not scored.
    let ms = metrics(&mut out);
    let ndcg_q1 = 1.0 / 3f64.log2();
    let all = |m: &str| metric(&ms, "user:mine", m, "all");
    assert_eq!(all("recall").n, 3);
    assert!(close(all("recall").value, 2.0 / 3.0));
    assert!(close(all("mrr").value, 0.5));
    assert!(close(all("ndcg").value, (ndcg_q1 + 1.0) / 3.0));
    let single = metric(&ms, "user:mine", "mrr", "single_hop");
    assert_eq!(single.n, 2);
    assert!(close(single.value, 0.25));
    assert!(close(
        metric(&ms, "user:mine", "recall", "chained_multi_hop").value,
        1.0
    ));
    assert_eq!(metric(&ms, "user:mine", "ndcg", "query:original").n, 3);
    assert_eq!(metric(&ms, "user:mine", "recall", "all").k, Some(3));

    let facts = out.facts.unwrap();
    assert!(
        facts.lines.iter().any(|l| l
            == "user:mine: 1 queries without a ranking, 2 rows or hits left out, 1 run queries naming no query."),
        "{:?}",
        facts.lines
    );
    assert!(
        facts
            .lines
            .iter()
            .any(|l| l.starts_with("user:mine: Recall@3 0.667"))
    );
}

#[test]
fn a_parquet_run_and_the_configuration_checks() {
    let stage = RetrievalStage::new(Llm::offline());
    let dir = tempfile::tempdir().unwrap();
    let trec = dir.path().join("mine.trec");
    std::fs::write(&trec, "q1 Q0 c1 1 1.0 t\n").unwrap();
    for bad in [
        json!({"user": {"name": "mine"}}),
        json!({"user": {"name": "mine", "run": trec, "http": {"endpoint": "http://127.0.0.1:9/"}}}),
        json!({"user": {"name": "has space", "run": trec}}),
        json!({"user": {"name": "mine", "run": dir.path().join("absent.trec")}}),
        json!({"user": {"name": "mine", "http": {"endpoint": "not a url"}}}),
    ] {
        let c: RetrievalConfig = parse_config(&bad).unwrap();
        assert!(stage.validate(&c, &repo_root()).is_err(), "{bad}");
    }
    assert!(
        parse_config::<RetrievalConfig>(&json!({"user": {"name": "m", "path": "x"}})).is_err(),
        "unknown fields refused"
    );
    // Only the user's retriever is enough; its run file is fingerprinted; a key is declared.
    let c: RetrievalConfig = parse_config(
        &json!({"bm25": false, "embedding": false, "user": {"name": "mine", "run": trec}}),
    )
    .unwrap();
    stage.validate(&c, &repo_root()).unwrap();
    assert_eq!(
        stage.external_files(&c, &repo_root()),
        std::slice::from_ref(&trec)
    );
    let c: RetrievalConfig = parse_config(&json!({"user": {"name": "es", "http": {
        "endpoint": "http://127.0.0.1:9/i/_search", "api_key_env": "ES_KEY"}}}))
    .unwrap();
    assert_eq!(
        stage.secret_variables(&c),
        [("user.http.api_key_env".to_string(), "ES_KEY".to_string())]
    );
    assert!(stage.reads_live_sources(&c));

    // The same kind of run as Parquet (query_id, doc_id, rank, score).
    let parquet = dir.path().join("mine.parquet");
    write_parquet(&parquet, &[("q1", "c2", 1, 2.0), ("q1", "c1", 2, 1.0)]);
    let mut out = run(
        Llm::offline(),
        json!({"embedding": false, "user": {"name": "mine", "run": parquet}}),
    );
    let rows = retrievals(&mut out);
    assert_eq!(
        user_rows(&rows, "q1"),
        [("c2".into(), 1, 2.0, false), ("c1".into(), 2, 1.0, true)]
    );
    let ms = metrics(&mut out);
    assert!(close(metric(&ms, "user:mine", "mrr", "all").value, 0.5));
    let d = drops(&out);
    let missing: Vec<&str> = d
        .iter()
        .filter(|(_, r, _)| r == "not_in_run")
        .map(|(i, _, _)| i.as_str())
        .collect();
    assert_eq!(missing, ["p1/user:mine", "q2/user:mine", "q3/user:mine"]);
}

fn write_parquet(path: &std::path::Path, rows: &[(&str, &str, i64, f64)]) {
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let schema = parse_message_type(
        "message run { required binary query_id (STRING); required binary doc_id (STRING); \
         required int64 rank; required double score; }",
    )
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = 0;
    while let Some(mut col) = group.next_column().unwrap() {
        match column {
            0 | 1 => {
                let v: Vec<ByteArray> = rows
                    .iter()
                    .map(|r| ByteArray::from(if column == 0 { r.0 } else { r.1 }))
                    .collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&v, None, None)
                    .unwrap();
            }
            2 => {
                let v: Vec<i64> = rows.iter().map(|r| r.2).collect();
                col.typed::<Int64Type>()
                    .write_batch(&v, None, None)
                    .unwrap();
            }
            _ => {
                let v: Vec<f64> = rows.iter().map(|r| r.3).collect();
                col.typed::<DoubleType>()
                    .write_batch(&v, None, None)
                    .unwrap();
            }
        }
        col.close().unwrap();
        column += 1;
    }
    group.close().unwrap();
    writer.close().unwrap();
}

const KEY: &str = "es-retrieval-key-4711";
const KEY_VAR: &str = "NOISEBENCH_TEST_RETRIEVAL_ES_KEY";

/// Requests seen per query id, and bodies that were not the `_search` shape.
#[derive(Clone, Default)]
struct Seen {
    calls: Arc<std::sync::Mutex<BTreeMap<String, usize>>>,
    bad_bodies: Arc<AtomicUsize>,
}

fn es_answer(hits: Vec<Value>) -> Response {
    let body = json!({"took": 1, "timed_out": false,
        "hits": {"total": {"value": hits.len(), "relation": "eq"}, "hits": hits}});
    respond(200, "application/json", body.to_string())
}

fn hit(id: &str, score: f64) -> Value {
    json!({"_index": "chunks", "_id": id, "_score": score, "_source": {"text": "..."}})
}

/// A fake `_search` over the fixture's chunks: a 400 unless the body is the shape (`size` 3, a
/// `match` on `text`) and the key is sent; q1 is slow once, p1 a 503 once, q3 always a 500.
async fn search(State(seen): State<Seen>, headers: HeaderMap, body: String) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("ApiKey {KEY}"))
    {
        return respond(401, "application/json", r#"{"error":"no key"}"#);
    }
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let text = request["query"]["match"]["text"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if request != json!({"size": 3, "query": {"match": {"text": text}}}) {
        seen.bad_bodies.fetch_add(1, Ordering::SeqCst);
        return respond(400, "application/json", r#"{"error":"unexpected shape"}"#);
    }
    let query = match text.as_str() {
        "Who acquired Baltic Freight Lines?" => "q1",
        "Who acqired Baltic Freight Lines?" => "p1",
        t if t.starts_with("Which harbour") => "q2",
        t if t.starts_with("How did Valdoria") => "q3",
        _ => "other",
    };
    let n = {
        let mut calls = seen.calls.lock().unwrap();
        let n = calls.entry(query.into()).or_default();
        *n += 1;
        *n
    };
    match (query, n) {
        ("q1", 1) => {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            es_answer(Vec::new())
        }
        ("q1", _) => es_answer(vec![hit("c1", 3.0), hit("c9", 2.0), hit("c2", 1.0)]),
        ("p1", 1) => respond(503, "application/json", r#"{"error":"busy"}"#),
        ("p1", _) => es_answer(vec![hit("c1", 2.5)]),
        ("q2", _) => es_answer(vec![
            hit("c2", 4.0),
            json!({"_score": 3.5, "_source": {"text": "no id"}}),
            hit("c1", 3.0),
            hit("c2", 2.0),
        ]),
        _ => respond(500, "application/json", r#"{"error":"shard failure"}"#),
    }
}

fn es_server(seen: Seen) -> Served {
    Served::start(
        Router::new()
            .route("/chunks/_search", post(search))
            .with_state(seen),
    )
}

fn es_config(url: &str, max_failures: usize) -> Value {
    json!({"embedding": false, "user": {
        "name": "es",
        "http": {
            "endpoint": format!("{url}/chunks/_search"),
            "shape": "elasticsearch",
            "api_key_env": KEY_VAR,
            "limits": {"min_interval_ms": 0, "max_retries": 1, "backoff_ms": 10, "timeout_seconds": 1.0},
        },
        "max_consecutive_failures": max_failures,
    }})
}

#[test]
fn an_elasticsearch_retriever_is_retried_and_a_failing_query_costs_its_own_rows() {
    // SAFETY: a variable only this module reads, set to the same value by each test.
    unsafe { std::env::set_var(KEY_VAR, KEY) };
    let seen = Seen::default();
    let server = es_server(seen.clone());
    let mut out = run(Llm::offline(), es_config(server.url(), 5));
    assert_eq!(seen.bad_bodies.load(Ordering::SeqCst), 0);
    let calls = seen.calls.lock().unwrap().clone();
    assert_eq!(
        calls,
        BTreeMap::from([
            ("p1".to_string(), 2),
            ("q1".to_string(), 2),
            ("q2".to_string(), 1),
            ("q3".to_string(), 2)
        ]),
        "the timeout and the 503 retried once; the 500 retried once, then given up"
    );
    let rows = retrievals(&mut out);
    let es = |q: &str| -> Vec<(String, i64, f64)> {
        let mut r: Vec<_> = rows
            .iter()
            .filter(|r| r.retriever == "user:es" && r.query_id == q)
            .map(|r| (r.chunk_id.clone(), r.rank, r.score))
            .collect();
        r.sort_by_key(|x| x.1);
        r
    };
    assert_eq!(es("q1"), [("c1".into(), 1, 3.0), ("c2".into(), 2, 1.0)]);
    assert_eq!(es("p1"), [("c1".into(), 1, 2.5)]);
    assert_eq!(es("q2"), [("c2".into(), 1, 4.0), ("c1".into(), 2, 3.0)]);
    assert!(es("q3").is_empty());
    assert!(
        rows.iter()
            .any(|r| r.retriever == "bm25" && r.query_id == "q3"),
        "the failure costs the user retriever's rows only"
    );
    let d = drops(&out);
    let user: Vec<(&str, &str)> = d
        .iter()
        .filter(|(i, _, _)| i.contains("user:"))
        .map(|(i, r, _)| (i.as_str(), r.as_str()))
        .collect();
    assert_eq!(
        user,
        [
            ("q1/user:es", "unknown_doc_id"),
            ("q2/user:es", "duplicate_doc"),
            ("q2/user:es", "missing_id"),
            ("q3/user:es", "user_failed"),
        ]
    );
    let failed = out
        .report
        .drops
        .iter()
        .find(|r| r.reason == "user_failed")
        .unwrap();
    assert!(failed.detail.starts_with("http_500: "), "{}", failed.detail);
    assert!(
        !failed.retry,
        "as a failing reranker, never blocks publishing"
    );
    assert!(out.report.drops.iter().all(|r| !r.detail.contains(KEY)));
    let ms = metrics(&mut out);
    let recall = metric(&ms, "user:es", "recall", "all");
    assert_eq!((recall.n, recall.value), (3, 1.0));
    assert_eq!(metric(&ms, "user:es", "mrr", "query:character_level").n, 1);
}

#[test]
fn an_endpoint_that_stays_down_is_abandoned_after_the_failures_in_a_row() {
    // SAFETY: a variable only this module reads, set to the same value by each test.
    unsafe { std::env::set_var(KEY_VAR, KEY) };
    let seen = Seen::default();
    let server = es_server(seen.clone());
    let mut config = es_config(server.url(), 1);
    // Every query fails (the wrong field is a 400, permanent, not retried).
    config["user"]["http"]["query_field"] = json!("body");
    let mut out = run(Llm::offline(), config);
    assert_eq!(
        seen.bad_bodies.load(Ordering::SeqCst),
        1,
        "one call, then abandoned"
    );
    let d = drops(&out);
    let user: Vec<(&str, &str)> = d
        .iter()
        .filter(|(i, _, _)| i.contains("user:"))
        .map(|(i, r, _)| (i.as_str(), r.as_str()))
        .collect();
    assert_eq!(
        user,
        [("p1/user:es", "user_failed"), ("user:es", "user_abandoned")]
    );
    assert!(retrievals(&mut out).iter().all(|r| r.retriever == "bm25"));
    let facts = out.facts.unwrap();
    assert!(
        facts
            .lines
            .iter()
            .any(|l| l.starts_with("user:es: 4 queries without a ranking")),
        "{:?}",
        facts.lines
    );
}
