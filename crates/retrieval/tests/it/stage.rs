//! The `retrieval` stage on a tiny corpus: BM25 and hashed-embedding retrieval with the offline
//! `Llm`, metrics against hand-computed values, drops for bad input, and a reranker behind a
//! fake `/v1/rerank` server on 127.0.0.1, answering, and failing.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::routing::post;
use noisebench_core::{
    Chunk, Inputs, Metric, NoProgress, QueryPerturbation, Question, Retrieval, StageContext,
    StageOutput, TableRow, TypedStage, parse_config,
};
use noisebench_llm::Llm;
use noisebench_retrieval::{RetrievalConfig, RetrievalStage};
use noisebench_testkit::{Served, respond};
use serde_json::{Value, json};

pub(crate) fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn chunk(id: &str, text: &str) -> Chunk {
    Chunk {
        id: id.into(),
        report_id: "r1".into(),
        text: text.into(),
        ..Chunk::default()
    }
}

fn question(id: &str, kind: &str, text: &str, answers: &[&str]) -> Question {
    Question {
        id: id.into(),
        kind: kind.into(),
        question: text.into(),
        answer_chunk_ids: answers.iter().map(|s| s.to_string()).collect(),
        ..Question::default()
    }
}

pub(crate) fn fixture() -> (Vec<Question>, Vec<QueryPerturbation>, Vec<Chunk>) {
    let chunks = vec![
        chunk(
            "c1",
            "Northwind Logistics acquired Baltic Freight Lines in 2021 for 40 million euros.",
        ),
        chunk(
            "c2",
            "Baltic Freight Lines operates ferries between Riga Harbour and Stockholm.",
        ),
        chunk(
            "c3",
            "The central bank raised interest rates twice during the inflation surge.",
        ),
        chunk(
            "c4",
            "Quarterly revenue of Valdoria Fund grew by twelve percent in Europe.",
        ),
    ];
    let questions = vec![
        question(
            "q1",
            "single_hop",
            "Who acquired Baltic Freight Lines?",
            &["c1"],
        ),
        question(
            "q2",
            "chained_multi_hop",
            "Which harbour do the ferries of the company Northwind acquired serve?",
            &["c1", "c2"],
        ),
        question(
            "q3",
            "single_hop",
            "How did Valdoria Fund revenue change in Europe?",
            &["c4"],
        ),
        question(
            "q4",
            "single_hop",
            "A question with nothing behind it?",
            &[],
        ),
        question("q5", "single_hop", "Points at a missing chunk?", &["c99"]),
    ];
    let perturbations = vec![
        QueryPerturbation {
            id: "p1".into(),
            question_id: "q1".into(),
            kind: "character_level".into(),
            perturbed_query: "Who acqired Baltic Freight Lines?".into(),
            ..QueryPerturbation::default()
        },
        QueryPerturbation {
            id: "p2".into(),
            question_id: "q4".into(),
            kind: "grammar_perturbation".into(),
            perturbed_query: "Nothing behind it, a question?".into(),
            ..QueryPerturbation::default()
        },
    ];
    (questions, perturbations, chunks)
}

pub(crate) fn run(llm: Llm, config: Value) -> StageOutput {
    let (questions, perturbations, chunks) = fixture();
    run_over(llm, config, questions, perturbations, chunks)
}

fn run_over(
    llm: Llm,
    config: Value,
    questions: Vec<Question>,
    perturbations: Vec<QueryPerturbation>,
    chunks: Vec<Chunk>,
) -> StageOutput {
    let stage = RetrievalStage::new(llm);
    let config: RetrievalConfig = parse_config(&config).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let mut tables = BTreeMap::new();
    tables.insert("questions".to_string(), Question::into_rows(questions));
    tables.insert(
        "query_perturbations".to_string(),
        QueryPerturbation::into_rows(perturbations),
    );
    tables.insert("chunks".to_string(), Chunk::into_rows(chunks));
    let dir = tempfile::tempdir().unwrap();
    let ctx = StageContext {
        root: repo_root(),
        stage_dir: dir.path().to_path_buf(),
        pipeline: "test".into(),
        stage_id: "retrieval".into(),
        progress: Arc::new(NoProgress),
    };
    stage.run(&config, Inputs::new(tables), &ctx).unwrap()
}

pub(crate) fn retrievals(out: &mut StageOutput) -> Vec<Retrieval> {
    Retrieval::from_rows(out.tables.remove("retrievals").unwrap()).unwrap()
}

pub(crate) fn metrics(out: &mut StageOutput) -> Vec<Metric> {
    Metric::from_rows(out.tables.remove("retrieval_metrics").unwrap()).unwrap()
}

pub(crate) fn drops(out: &StageOutput) -> Vec<(String, String, bool)> {
    let mut d: Vec<_> = out
        .report
        .drops
        .iter()
        .map(|d| (d.item.clone(), d.reason.clone(), d.dropped))
        .collect();
    d.sort();
    d
}

pub(crate) fn metric<'a>(ms: &'a [Metric], scope: &str, metric: &str, group: &str) -> &'a Metric {
    ms.iter()
        .find(|m| m.scope == scope && m.metric == metric && m.group == group)
        .unwrap_or_else(|| panic!("no {scope} {metric} {group}"))
}

#[test]
fn bm25_and_embeddings_retrieve_and_score_every_query() {
    let llm = Llm::offline();
    let embedder = format!("embedding:{}", llm.embedder_name());
    let mut out = run(llm, json!({}));
    assert_eq!(
        drops(&out),
        [
            ("p2".into(), "question_dropped".into(), true),
            ("q4".into(), "no_ground_truth".into(), true),
            ("q5".into(), "unknown_answer_chunks".into(), true),
        ]
    );
    let rows = retrievals(&mut out);
    let ms = metrics(&mut out);
    // Three questions and one perturbation, two retrievers, top 3 of four chunks (BM25 may
    // find fewer: a chunk sharing no term is not a hit).
    let queries: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.query_id.as_str()).collect();
    assert_eq!(
        queries.into_iter().collect::<Vec<_>>(),
        ["p1", "q1", "q2", "q3"]
    );
    let emb: Vec<&Retrieval> = rows.iter().filter(|r| r.retriever == embedder).collect();
    assert_eq!(emb.len(), 4 * 3);
    // BM25 puts the answer chunk first for the plain single-hop questions.
    let first = |q: &str, retriever: &str| {
        rows.iter()
            .find(|r| r.query_id == q && r.retriever == retriever && r.rank == 1)
            .unwrap()
            .clone()
    };
    let q1 = first("q1", "bm25");
    assert_eq!((q1.chunk_id.as_str(), q1.ground_truth), ("c1", true));
    assert_eq!(q1.question_id, "q1");
    assert_eq!(first("q3", "bm25").chunk_id, "c4");
    assert_eq!(first("p1", "bm25").question_id, "q1");
    // Ranks are 1..n per query and retriever; rows sorted by id; ground truth flags right.
    for r in &rows {
        assert!((1..=3).contains(&r.rank));
        let want = match r.question_id.as_str() {
            "q1" => r.chunk_id == "c1",
            "q2" => r.chunk_id == "c1" || r.chunk_id == "c2",
            _ => r.chunk_id == "c4",
        };
        assert_eq!(r.ground_truth, want, "{r:?}");
    }
    assert!(rows.windows(2).all(|w| w[0].id < w[1].id));
    // Metrics agree with the rows: recall of BM25 over all four queries, by hand.
    let mut recall = 0.0;
    for (q, relevant) in [("p1", 1.0), ("q1", 1.0), ("q2", 2.0), ("q3", 1.0)] {
        let found = rows
            .iter()
            .filter(|r| r.query_id == q && r.retriever == "bm25" && r.ground_truth)
            .count() as f64;
        recall += found / relevant;
    }
    let m = metric(&ms, "bm25", "recall", "all");
    assert!((m.value - recall / 4.0).abs() < 1e-12);
    assert_eq!((m.n, m.k, m.task.as_str()), (4, Some(3), "retrieval"));
    assert_eq!(metric(&ms, "bm25", "mrr", "single_hop").n, 3);
    assert_eq!(metric(&ms, "bm25", "ndcg", "chained_multi_hop").n, 1);
    assert_eq!(metric(&ms, "bm25", "recall", "query:character_level").n, 1);
    assert_eq!(metric(&ms, &embedder, "recall", "query:original").n, 3);
    let facts = out.facts.as_ref().unwrap();
    assert!(
        facts.lines.iter().any(|l| l.starts_with("bm25: Recall@3")),
        "{:?}",
        facts.lines
    );
    assert_eq!(out.report.items_in, 7);
}

#[test]
fn the_stage_is_deterministic_and_options_narrow_it() {
    let a = {
        let mut o = run(Llm::offline(), json!({"top_k": 2}));
        (retrievals(&mut o), metrics(&mut o))
    };
    let b = {
        let mut o = run(Llm::offline(), json!({"top_k": 2}));
        (retrievals(&mut o), metrics(&mut o))
    };
    assert_eq!(a, b);
    assert!(a.0.iter().all(|r| r.rank <= 2));
    assert!(
        run(Llm::offline(), json!({"top_k": 2}))
            .facts
            .unwrap()
            .lines[0]
            .contains("exact"),
        "facts name the vector search"
    );
    let mut only = run(Llm::offline(), json!({"embedding": false}));
    assert!(retrievals(&mut only).iter().all(|r| r.retriever == "bm25"));
    let stage = RetrievalStage::new(Llm::offline());
    for bad in [
        json!({"top_k": 0}),
        json!({"bm25": false, "embedding": false}),
        json!({"rerank": {"model": "m", "base_url": "http://127.0.0.1:9/v1"}, "embedding": false}),
    ] {
        let c: RetrievalConfig = parse_config(&bad).unwrap();
        assert!(stage.validate(&c, &repo_root()).is_err(), "{bad}");
    }
}

/// BM25 numbers the chunks report by report inside its index; which report a chunk is in
/// changes nothing of what it retrieves (ids, ranks, scores), whether the reports' order runs
/// with the chunk ids' or against it.
#[test]
fn the_reports_chunks_belong_to_change_no_bm25_hit() {
    let config = json!({"embedding": false, "top_k": 3});
    let one_report = {
        let mut o = run(Llm::offline(), config.clone());
        retrievals(&mut o)
    };
    assert!(one_report.len() > 6, "the fixture's queries find chunks");
    for reports in [["r4", "r3", "r2", "r1"], ["r2", "r1", "r2", "r0"]] {
        let (questions, perturbations, mut chunks) = fixture();
        for (c, r) in chunks.iter_mut().zip(reports) {
            c.report_id = r.into();
        }
        let mut o = run_over(
            Llm::offline(),
            config.clone(),
            questions,
            perturbations,
            chunks,
        );
        assert_eq!(retrievals(&mut o), one_report, "reports {reports:?}");
    }
}

/// A rerank server that scores documents by how many words they share with the query, so the
/// chunk repeating the query's words wins; counts its calls.
fn rerank_server(calls: Arc<AtomicUsize>, fail: bool) -> Served {
    let app = Router::new().route(
        "/v1/rerank",
        post(move |body: axum::Json<Value>| {
            let calls = Arc::clone(&calls);
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                if fail {
                    return respond(400, "application/json", r#"{"error":"model not loaded"}"#);
                }
                let q = body["query"].as_str().unwrap_or("").to_lowercase();
                let words: Vec<&str> = q.split(|c: char| !c.is_alphanumeric()).collect();
                let docs = body["documents"].as_array().cloned().unwrap_or_default();
                let mut results: Vec<Value> = docs
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let d = d.as_str().unwrap_or("").to_lowercase();
                        let score = words
                            .iter()
                            .filter(|w| w.len() > 3 && d.contains(*w))
                            .count();
                        json!({"index": i, "relevance_score": score as f64 / 10.0})
                    })
                    .collect();
                results.sort_by(|a, b| {
                    b["relevance_score"]
                        .as_f64()
                        .partial_cmp(&a["relevance_score"].as_f64())
                        .unwrap()
                });
                let top_n = body["top_n"].as_u64().unwrap_or(3) as usize;
                results.truncate(top_n);
                respond(
                    200,
                    "application/json",
                    json!({"id": "rerank-1", "results": results}).to_string(),
                )
            }
        }),
    );
    Served::start(app)
}

#[test]
fn a_reranker_reorders_the_first_stage_candidates() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = rerank_server(Arc::clone(&calls), false);
    let mut out = run(
        Llm::offline(),
        json!({
            "rerank": {"model": "bge-reranker-v2-m3", "base_url": format!("{}/v1", server.url())},
            "rerank_candidates": 4,
        }),
    );
    assert_eq!(calls.load(Ordering::SeqCst), 4, "one call per query");
    let rows = retrievals(&mut out);
    let rr: Vec<&Retrieval> = rows
        .iter()
        .filter(|r| r.retriever == "rerank:bge-reranker-v2-m3")
        .collect();
    assert!(!rr.is_empty());
    let top = rr
        .iter()
        .find(|r| r.query_id == "q3" && r.rank == 1)
        .unwrap();
    assert_eq!(top.chunk_id, "c4");
    assert!(top.ground_truth);
    let ms = metrics(&mut out);
    assert_eq!(
        metric(&ms, "rerank:bge-reranker-v2-m3", "recall", "all").n,
        4
    );
    assert!(
        drops(&out).iter().all(|(_, r, _)| !r.starts_with("rerank")),
        "{:?}",
        drops(&out)
    );
}

#[test]
fn a_failing_reranker_keeps_first_stage_results_and_says_why() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = rerank_server(Arc::clone(&calls), true);
    let mut out = run(
        Llm::offline(),
        json!({
            "rerank": {"model": "m", "base_url": format!("{}/v1", server.url()), "max_retries": 0},
            "rerank_max_consecutive_failures": 2,
        }),
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "abandoned after two in a row"
    );
    let d = drops(&out);
    let failed: Vec<_> = d.iter().filter(|(_, r, _)| r == "rerank_failed").collect();
    assert_eq!(failed.len(), 2);
    assert!(
        failed.iter().all(|(_, _, dropped)| !dropped),
        "not dropped items"
    );
    assert!(
        d.iter()
            .any(|(i, r, _)| i == "rerank" && r == "rerank_abandoned")
    );
    assert!(
        out.report.drops.iter().all(|d| !d.retry),
        "nothing blocks publishing"
    );
    let rows = retrievals(&mut out);
    assert!(rows.iter().all(|r| !r.retriever.starts_with("rerank")));
    assert!(rows.iter().any(|r| r.retriever == "bm25"));
    assert!(rows.iter().any(|r| r.retriever.starts_with("embedding:")));
    let facts = out.facts.unwrap();
    assert!(
        facts
            .lines
            .iter()
            .any(|l| l.starts_with("Reranker: 2 calls failed, 2 queries not sent")),
        "{:?}",
        facts.lines
    );
}

#[test]
fn an_unreachable_reranker_is_a_recorded_failure_not_a_failed_stage() {
    let addr = noisebench_testkit::refused_addr();
    let mut out = run(
        Llm::offline(),
        json!({
            "rerank": {"model": "m", "base_url": format!("http://{addr}/v1"), "max_retries": 0, "timeout_secs": 2.0},
            "rerank_source": "bm25",
            "rerank_max_consecutive_failures": 1,
        }),
    );
    let d = drops(&out);
    assert!(d.iter().any(|(_, r, _)| r == "rerank_failed"), "{d:?}");
    assert!(!retrievals(&mut out).is_empty());
}
