//! Answers cut off at `max_tokens` (`finish_reason: "length"`) against the fake endpoint: one
//! re-ask with the ceiling's budget, never the same request again; cut again (or no larger
//! budget allowed), the item fails as `truncated`, counted in the call log with its tokens.

use crate::common;

use std::path::Path;

use common::{Keywords, keywords};
use noisebench_llm::{Llm, LlmError};
use noisebench_testkit::{FakeServer, Reply, openai_config};
use serde_json::{Value, json};

/// A chat completion envelope cut off at the budget.
fn cut(content: &str) -> Reply {
    Reply::Raw(
        json!({
            "id": "x", "object": "chat.completion", "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "length"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 64, "total_tokens": 75}
        })
        .to_string(),
    )
}

/// A model that needs more than `need` tokens for its answer: cut off below that budget.
fn needs(need: u64) -> impl Fn(&Value) -> Reply + Send + Sync + 'static {
    move |body: &Value| {
        if body["max_tokens"].as_u64().unwrap_or(0) < need {
            cut(r#"{"keywords": ["type", "array", "items", "type", "arr"#)
        } else {
            Reply::Content(r#"{"keywords": ["moon", "cheese"]}"#.into())
        }
    }
}

fn budgets(srv: &FakeServer) -> Vec<u64> {
    srv.bodies()
        .iter()
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_cut_answer_is_asked_once_more_with_the_ceiling_and_then_kept() {
    let srv = FakeServer::answering(needs(100));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = openai_config(&srv.url(), dir.path());
    cfg["max_tokens_ceiling"] = json!(256);
    let llm = Llm::from_value(&cfg, Path::new("/")).unwrap();
    let a = llm
        .run::<Keywords>("queries", keywords("The moon is cheese."))
        .unwrap();
    assert_eq!(a.value.keywords, vec!["moon", "cheese"]);
    assert_eq!(
        budgets(&srv),
        vec![64, 256],
        "the re-ask has the larger budget"
    );
    // The re-ask repeats the messages: a cut answer is not shown back to the model.
    let bodies = srv.bodies();
    assert_eq!(bodies[0]["messages"], bodies[1]["messages"]);
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].attempts, log[0].tokens_out), (2, 64 + 7));
    assert!(log[0].error.is_none());
    // Cached under the request as configured: the next run asks nothing.
    let again = Llm::from_value(&cfg, Path::new("/")).unwrap();
    assert!(
        again
            .run::<Keywords>("queries", keywords("The moon is cheese."))
            .unwrap()
            .cache_hit
    );
    assert_eq!(srv.requests(), 2);
}

#[test]
fn cut_again_fails_as_truncated_and_is_never_asked_identically() {
    let srv = FakeServer::answering(needs(10_000));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = openai_config(&srv.url(), dir.path());
    cfg["max_tokens_ceiling"] = json!(512);
    let llm = Llm::from_value(&cfg, Path::new("/")).unwrap();
    let e = llm
        .run::<Keywords>("queries", keywords("The moon is cheese."))
        .unwrap_err();
    assert_eq!(e, LlmError::Truncated { max_tokens: 512 });
    assert_eq!(e.drop_reason(), "llm_truncated");
    assert_eq!(budgets(&srv), vec![64, 512], "two requests, two budgets");
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 1);
    let error = log[0].error.as_deref().unwrap();
    assert!(error.starts_with("truncated: "), "{error}");
    assert_eq!(
        (log[0].attempts, log[0].tokens_out),
        (2, 128),
        "tokens spent are counted"
    );
    assert_eq!(llm.stats().failures_by_reason["truncated"], 1);
    // Failures are not cached: the next run asks again (once more, twice).
    let _ = llm.run::<Keywords>("queries", keywords("The moon is cheese."));
    assert_eq!(srv.requests(), 4);
}

#[test]
fn with_no_larger_budget_a_cut_answer_fails_at_once() {
    let srv = FakeServer::answering(needs(10_000));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = openai_config(&srv.url(), dir.path());
    cfg["max_tokens_ceiling"] = json!(64);
    let llm = Llm::from_value(&cfg, Path::new("/")).unwrap();
    let e = llm
        .run::<Keywords>("queries", keywords("The moon is cheese."))
        .unwrap_err();
    assert_eq!(e, LlmError::Truncated { max_tokens: 64 });
    assert_eq!(srv.requests(), 1);
    // A ceiling below max_tokens is refused with the field's name.
    cfg["max_tokens_ceiling"] = json!(32);
    let e = Llm::from_value(&cfg, Path::new("/")).unwrap_err();
    assert!(e.to_string().contains("llm.max_tokens_ceiling"), "{e}");
}

#[test]
fn a_cut_answer_without_content_is_truncated_not_a_server_fault() {
    // Some servers send no content at all with `finish_reason: length`; that is not a broken
    // envelope to retry.
    let srv = FakeServer::answering(|_| {
        Reply::Raw(
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null},
                                 "finish_reason": "length"}],
                   "usage": {"prompt_tokens": 11, "completion_tokens": 64}})
            .to_string(),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let cfg = openai_config(&srv.url(), dir.path());
    let llm = Llm::from_value(&cfg, Path::new("/")).unwrap();
    let e = llm
        .run::<Keywords>("queries", keywords("The moon is cheese."))
        .unwrap_err();
    assert_eq!(e.reason(), "truncated");
    assert_eq!(srv.requests(), 2, "one re-ask with the default ceiling");
    assert_eq!(budgets(&srv), vec![64, 4096]);
}
