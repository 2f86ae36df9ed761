//! The queries stage with a weak model behind a fake chat-completions server on 127.0.0.1: a
//! question that copies the prompt's example, a question about something else and a keyword
//! list echoing the schema pass every shape check, and the sense checks make each a counted
//! drop with its reason; good answers are kept. With `llm.sense_checks = false` all are kept.

use crate::common;

use common::*;
use noisebench_core::{Query, Rows};
use noisebench_llm::Llm;
use noisebench_search::QUESTION_EXAMPLE;
use noisebench_search::QueriesStage;
use noisebench_testkit::{FakeServer, Reply, first_message};
use serde_json::json;

const LEMON: &str = "Hot lemon water cures the common cold.";
const MOON: &str = "The Moon is made of green cheese.";
const RAIL: &str = "The new rail line created 4,000 jobs in its first year.";
/// A PolitiFact claim, and the question SmolLM2-135M asked for it: it shares only "state" and
/// "country" with the claim, words too general to make it on topic.
const OVERDOSE: &str =
    "Drug overdose deaths in our state are the highest in the country, and rising every month.";
const COUNTRY_QUESTION: &str = "What is the name of the country you are in? (e.g. Nigeria, Ghana, or the United States of America)";

/// SmolLM2-like answers: the example for the lemon claim, a school question for the moon, a
/// schema echo as keywords for the rail claim; otherwise on-topic answers.
fn weak_model(body: &serde_json::Value) -> Reply {
    let (system, user) = (first_message(body, "system"), first_message(body, "user"));
    let keywords = system.contains("search an online forum");
    let reply = if keywords {
        if user.contains(RAIL) {
            json!({"keywords": ["type", "array", "items", "type", "string"]})
        } else if user.contains(LEMON) {
            json!({"keywords": ["lemon water", "common cold"]})
        } else if user.contains(OVERDOSE) {
            json!({"keywords": ["drug overdose deaths", "state"]})
        } else {
            json!({"keywords": ["Moon", "green cheese"]})
        }
    } else if user.contains(LEMON) {
        json!({"question": QUESTION_EXAMPLE.1})
    } else if user.contains(MOON) {
        json!({"question": "What is the most important thing you learned in school?"})
    } else if user.contains(OVERDOSE) {
        json!({"question": COUNTRY_QUESTION})
    } else {
        json!({"question": "Did the new rail line create 4,000 jobs in its first year?"})
    };
    Reply::Content(reply.to_string())
}

fn llm(url: &str, cache: &std::path::Path, sense_checks: bool) -> Llm {
    Llm::from_value(
        &json!({
            "backend": "openai",
            "model": "fake",
            "prompts_dir": root().join("pipelines/prompts"),
            "max_reasks": 0,
            "sense_checks": sense_checks,
            "cache": {"dir": cache},
            "embeddings": {"backend": "hashed"},
            "models": {"fake": {
                "name": "weak-model",
                "max_retries": 0,
                "timeout_secs": 10.0,
                "endpoints": [{"name": "local", "url": url}]
            }}
        }),
        &root(),
    )
    .unwrap()
}

fn claims() -> Rows {
    Rows::Claims(vec![
        claim("cl_lemon", LEMON),
        claim("cl_moon", MOON),
        claim("cl_rail", RAIL),
        claim("cl_overdose", OVERDOSE),
    ])
}

#[test]
fn copied_off_topic_and_echoed_answers_are_counted_drops() {
    let server = FakeServer::answering(weak_model);
    let dir = tempfile::tempdir().unwrap();
    let stage = QueriesStage::new(llm(&server.url(), &dir.path().join("cache"), true));
    let qctx = ctx(&dir.path().join("queries"), "queries");
    let mut out = run(
        &stage,
        json!({"kinds": ["keywords", "question"]}),
        inputs(vec![("claims", claims())]),
        &qctx,
    );
    let reasons = reasons(&out);
    assert_eq!(reasons.get("llm_copied_example"), Some(&1), "{reasons:?}");
    // The moon's question, the rail claim's keywords and the overdose claim's question.
    assert_eq!(reasons.get("llm_off_topic"), Some(&3), "{reasons:?}");
    let queries: Vec<Query> = table(&mut out, "queries");
    let kept: Vec<(&str, &str)> = queries
        .iter()
        .map(|q| (q.claim_id.as_str(), q.kind.as_str()))
        .collect();
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert!(kept.contains(&("cl_overdose", "keywords")));
    assert!(kept.contains(&("cl_lemon", "keywords")));
    assert!(kept.contains(&("cl_moon", "keywords")));
    assert!(kept.contains(&("cl_rail", "question")));
    let ds = drops(&out);
    assert!(
        ds.iter()
            .any(|(item, r)| item.contains("cl_lemon") && r == "llm_copied_example"),
        "{ds:?}"
    );

    // Checks off: the same answers (from the cache) are all kept.
    let stage = QueriesStage::new(llm(&server.url(), &dir.path().join("cache"), false));
    let qctx = ctx(&dir.path().join("queries-off"), "queries");
    let mut out = run(
        &stage,
        json!({"kinds": ["keywords", "question"]}),
        inputs(vec![("claims", claims())]),
        &qctx,
    );
    assert!(drops(&out).is_empty(), "{:?}", drops(&out));
    let queries: Vec<Query> = table(&mut out, "queries");
    assert_eq!(queries.len(), 8);
}
