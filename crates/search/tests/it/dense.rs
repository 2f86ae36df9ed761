//! The `corpus` backend's `dense` and `hybrid` retrieval: nearest neighbours through the LLM
//! layer's embedder, reciprocal rank fusion with BM25, the documents' vectors made once per
//! corpus content and embedder, and the configuration error when there is no embedder.

use crate::common;
use crate::corpus::{DOCS, query, replay_web, write_jsonl};

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use noisebench_core::{Query, Rows, SearchHit, TypedStage};
use noisebench_llm::Llm;
use noisebench_search::{SearchConfig, SearchStage};
use serde_json::{Value, json};

fn hashed_llm(dir: &Path, dim: usize) -> Llm {
    Llm::from_value(
        &json!({"cache": {"mode": "off"}, "embeddings": {"backend": "hashed", "dim": dim}}),
        dir,
    )
    .unwrap()
}

fn queries() -> Vec<Query> {
    vec![
        query("q1", "cl_water", "water supply unsafe to drink"),
        query("q2", "cl_bridge", "river bridge inspection cracks"),
    ]
}

/// The search stage with `llm` over `corpus`, `retrieval` and `top_k`, its index under `index`.
fn search(
    llm: &Llm,
    corpus: &Path,
    index: &Path,
    retrieval: &str,
    top_k: usize,
    stage_dir: &Path,
) -> Vec<SearchHit> {
    let config = json!({
        "top_k": top_k,
        "backends": [{"type": "corpus", "path": corpus, "name": "memos", "index_dir": index,
                      "retrieval": retrieval, "embed_batch": 2}]
    });
    let mut out = run(
        &SearchStage::new(replay_web()).with_llm(llm.clone()),
        config,
        inputs(vec![("queries", Rows::Queries(queries()))]),
        &ctx(stage_dir, "search"),
    );
    table(&mut out, "search_hits")
}

/// Per query, its hits' (corpus id, retrieved_by), in rank order.
fn by_query(hits: &[SearchHit]) -> BTreeMap<String, Vec<(String, Option<String>)>> {
    let mut m: BTreeMap<String, Vec<(String, Option<String>)>> = BTreeMap::new();
    for h in hits {
        m.entry(h.query_id.clone()).or_default().push((
            h.corpus_id.clone().unwrap_or_default(),
            h.retrieved_by.clone(),
        ));
    }
    m
}

#[test]
fn dense_ranks_first_the_document_sharing_the_query_words() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_jsonl(dir.path());
    let llm = hashed_llm(dir.path(), 256);
    let hits = search(
        &llm,
        &corpus,
        &dir.path().join("index"),
        "dense",
        2,
        &dir.path().join("s"),
    );
    let got = by_query(&hits);
    assert_eq!(got["q1"][0], ("memo-4".into(), Some("dense:1".into())));
    assert_eq!(got["q2"][0], ("memo-2".into(), Some("dense:1".into())));
    assert_eq!(got["q1"][1].1.as_deref(), Some("dense:2"));
    assert!(got.values().all(|v| v.len() == 2));
    for h in &hits {
        assert_eq!(h.backend, "corpus");
        let doc = DOCS
            .iter()
            .find(|d| Some(d.0) == h.corpus_id.as_deref())
            .unwrap();
        assert_eq!(h.title.as_deref(), Some(doc.1));
        assert_eq!(h.text.as_deref(), Some(doc.2));
    }
}

#[test]
fn hybrid_is_the_reciprocal_rank_fusion_of_bm25_and_dense() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_jsonl(dir.path());
    let llm = hashed_llm(dir.path(), 256);
    let index = dir.path().join("index");
    let run_with = |retrieval: &str| {
        by_query(&search(
            &llm,
            &corpus,
            &index,
            retrieval,
            4,
            &dir.path().join(retrieval),
        ))
    };
    let (bm25, dense, hybrid) = (run_with("bm25"), run_with("dense"), run_with("hybrid"));
    // bm25 hits say nothing of retrievers (as before dense retrieval existed).
    assert!(bm25.values().flatten().all(|(_, by)| by.is_none()));
    for q in ["q1", "q2"] {
        // By hand: score = sum of 1 / (60 + rank) over the lists holding the document.
        let mut scores: BTreeMap<String, (f64, Vec<String>)> = BTreeMap::new();
        for (name, list) in [("bm25", &bm25[q]), ("dense", &dense[q])] {
            for (i, (id, _)) in list.iter().enumerate() {
                let e = scores.entry(id.clone()).or_default();
                e.0 += 1.0 / (60.0 + (i + 1) as f64);
                e.1.push(format!("{name}:{}", i + 1));
            }
        }
        let mut expected: Vec<(String, f64, String)> = scores
            .into_iter()
            .map(|(id, (s, by))| (id, s, by.join(" ")))
            .collect();
        expected.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
        expected.truncate(4);
        let expected: Vec<(String, Option<String>)> = expected
            .into_iter()
            .map(|(id, _, by)| (id, Some(by)))
            .collect();
        assert_eq!(hybrid[q], expected, "{q}");
    }
    // Dense ranks every document of four; BM25 only those sharing a word.
    assert_eq!(dense["q1"].len(), 4);
    assert!(bm25["q2"].len() < 4, "{:?}", bm25["q2"]);
}

/// Requests to the fake embeddings endpoint whose input holds more than one text (document
/// batches; a query is embedded alone).
fn document_batches(bodies: &[Value]) -> usize {
    bodies
        .iter()
        .filter(|b| b["input"].as_array().is_some_and(|a| a.len() > 1))
        .count()
}

#[test]
fn document_vectors_are_reused_until_the_corpus_or_the_embedder_changes() {
    let srv = noisebench_testkit::FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_jsonl(dir.path());
    let index = dir.path().join("index");
    let mut cfg = noisebench_testkit::openai_config(&srv.url(), &dir.path().join("cache"));
    cfg["cache"] = json!({"mode": "off"});
    cfg["embeddings"] = json!({"backend": "openai", "model": "fake"});
    let llm = Llm::from_value(&cfg, dir.path()).unwrap();
    let stage = |n: &str| dir.path().join(n);

    let first = search(&llm, &corpus, &index, "dense", 2, &stage("a"));
    // Four documents, two a request: two batches; then one request per query.
    assert_eq!(document_batches(&srv.bodies()), 2);
    assert_eq!(srv.requests(), 4);

    let second = search(&llm, &corpus, &index, "dense", 2, &stage("b"));
    assert_eq!(second, first);
    assert_eq!(document_batches(&srv.bodies()), 2, "vectors reused");
    assert_eq!(srv.requests(), 6, "only the two queries embedded");

    // A changed document: a new corpus fingerprint, the vectors made again.
    let text = std::fs::read_to_string(&corpus)
        .unwrap()
        .replace("no cracks", "two small cracks");
    std::fs::write(&corpus, text).unwrap();
    search(&llm, &corpus, &index, "dense", 2, &stage("c"));
    assert_eq!(
        document_batches(&srv.bodies()),
        4,
        "rebuilt for the new corpus"
    );

    // Another embedder (the hashed one, in two dimensions): vectors of its own, each made once.
    let markers = |index: &Path| -> Vec<String> {
        let mut m: Vec<String> = walk(index)
            .into_iter()
            .filter(|p| p.ends_with(".done"))
            .collect();
        m.sort();
        m
    };
    assert_eq!(markers(&index).len(), 2);
    let (h64, h32) = (hashed_llm(dir.path(), 64), hashed_llm(dir.path(), 32));
    search(&h64, &corpus, &index, "dense", 2, &stage("d"));
    assert_eq!(markers(&index).len(), 3);
    let made = modified(&index);
    search(&h64, &corpus, &index, "dense", 2, &stage("e"));
    assert_eq!(modified(&index), made, "the 64-dimension vectors reused");
    search(&h32, &corpus, &index, "dense", 2, &stage("f"));
    assert_eq!(markers(&index).len(), 4, "32 dimensions: made again");
    assert_eq!(document_batches(&srv.bodies()), 4);
}

/// Every file under `dir`, as strings.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

/// Each vectors file's modification time under `dir`.
fn modified(dir: &Path) -> BTreeMap<String, std::time::SystemTime> {
    walk(dir)
        .into_iter()
        .filter(|p| p.contains("vectors-"))
        .map(|p| {
            let t = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p, t)
        })
        .collect()
}

#[test]
fn dense_without_an_embedder_is_a_configuration_error_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_jsonl(dir.path());
    for retrieval in ["dense", "hybrid"] {
        let config: SearchConfig = noisebench_core::parse_config(&json!({
            "backends": [{"type": "corpus", "path": corpus, "retrieval": retrieval}]
        }))
        .unwrap();
        let e = SearchStage::new(replay_web())
            .validate(&config, &root())
            .unwrap_err();
        assert_eq!(e.field, "backends[0].retrieval");
        assert!(e.message.contains("llm.embeddings"), "{}", e.message);
        let with = SearchStage::new(replay_web()).with_llm(hashed_llm(dir.path(), 32));
        with.validate(&config, &root()).unwrap();
    }
    let bad: Result<SearchConfig, _> = noisebench_core::parse_config(&json!({
        "backends": [{"type": "corpus", "path": corpus, "retrieval": "sparse"}]
    }));
    assert!(bad.is_err());
}

#[test]
fn damaged_vectors_are_made_again_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_jsonl(dir.path());
    let index = dir.path().join("index");
    let llm = hashed_llm(dir.path(), 16);
    let first = search(&llm, &corpus, &index, "dense", 3, &dir.path().join("a"));
    let f32_file = walk(&index)
        .into_iter()
        .find(|p| p.ends_with(".f32"))
        .unwrap();
    // Four documents of 16 dimensions, four bytes each.
    assert_eq!(std::fs::metadata(&f32_file).unwrap().len(), 4 * 16 * 4);
    std::fs::write(&f32_file, [0u8; 10]).unwrap();
    let second = search(&llm, &corpus, &index, "dense", 3, &dir.path().join("b"));
    assert_eq!(second, first);
    assert_eq!(std::fs::metadata(&f32_file).unwrap().len(), 4 * 16 * 4);
}

#[test]
fn the_embedder_is_in_the_fingerprint_of_an_embedding_backend_only() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_jsonl(dir.path());
    let stage = SearchStage::new(replay_web()).with_llm(hashed_llm(dir.path(), 32));
    let environment = |retrieval: &str| {
        noisebench_core::Stage::environment_of(
            &stage,
            &json!({"backends": [{"type": "corpus", "path": corpus, "retrieval": retrieval}]}),
        )
    };
    // BM25 hits do not depend on the embedder: changing it must not rerun (and re-ask paid
    // search APIs of) a search stage that never embeds.
    assert!(environment("bm25").get("embedder").is_none());
    for retrieval in ["dense", "hybrid"] {
        let named = environment(retrieval)["embedder"].clone();
        assert!(named.as_str().is_some_and(|n| n.contains("32")), "{named}");
    }
    assert_eq!(
        environment("bm25")["web_mode"],
        environment("dense")["web_mode"]
    );
}
