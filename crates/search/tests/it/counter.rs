//! Counter-evidence queries (CounterRefine 3.3) with a real `openai` backend pointed at a fake
//! chat-completions server on 127.0.0.1: a `true` draft gives the refuting terms, a `false`
//! draft the supporting terms, an undecided draft both or none, and every counter query carries
//! the draft's request hash, which joins the call log.

use crate::common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::*;
use noisebench_core::vocab::exam;
use noisebench_core::{Query, Rows};
use noisebench_llm::Llm;
use noisebench_search::QueriesStage;
use noisebench_search::{ExamVerdict, Keywords, KeywordsInput};
use noisebench_testkit::{FakeServer, Reply, first_message};
use serde_json::{Value, json};

const EIFFEL: &str = "The Eiffel Tower stands in Paris.";
const CHEESE: &str = "The Moon is made of green cheese.";
const ELM: &str = "The city council voted to rename Elm Street last Tuesday.";
const MICROCHIPS: &str = "Vaccines contain microchips, a viral video claims.";
const BANANAS: &str = "Bananas are berries, botanists say.";

/// What the fake model answers for a claim: (claim, `keywords` reply, `exam_verdict` reply).
const REPLIES: &[(&str, &str, &str)] = &[
    (
        EIFFEL,
        r#"{"keywords": ["Eiffel Tower", " Paris ", ""]}"#,
        r#"{"verdict": "true"}"#,
    ),
    (
        CHEESE,
        r#"{"keywords": ["Moon", "green cheese"]}"#,
        r#"{"verdict": "false"}"#,
    ),
    (
        ELM,
        r#"{"keywords": ["council", "Elm Street", "rename"]}"#,
        r#"{"verdict": "undecided"}"#,
    ),
    // Unusable keywords: the counter query falls back to the claim text.
    (MICROCHIPS, "no keywords today", r#"{"verdict": "true"}"#),
    // An unusable draft: no counter query, a drop with the LLM layer's reason.
    (
        BANANAS,
        r#"{"keywords": ["bananas", "berries"]}"#,
        r#"{"verdict": "perhaps"}"#,
    ),
];

/// One request as the fake server saw it: (task, claim, whether the prompt held a document).
type Seen = (String, String, bool);

#[derive(Clone, Default)]
struct FakeLlm {
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeLlm {
    fn seen(&self) -> Vec<Seen> {
        let mut v = self.seen.lock().unwrap().clone();
        v.sort();
        v
    }

    fn answer(&self, body: &Value) -> Reply {
        let (system, user) = (first_message(body, "system"), first_message(body, "user"));
        // The prompts' wording (pipelines/prompts/keywords.md, exam_verdict.md).
        let task = if system.contains("search an online forum") {
            "keywords"
        } else if user.contains("fact-checking exam") {
            "exam_verdict"
        } else {
            "unknown"
        };
        let Some((claim, keywords, verdict)) =
            REPLIES.iter().find(|(claim, _, _)| user.contains(claim))
        else {
            return Reply::Status(400, None, "{\"error\": \"unknown claim\"}".into());
        };
        let reply = match task {
            "keywords" => *keywords,
            "exam_verdict" => *verdict,
            _ => return Reply::Status(400, None, "{\"error\": \"unknown task\"}".into()),
        };
        self.seen.lock().unwrap().push((
            task.to_string(),
            claim.to_string(),
            user.contains("Read the document"),
        ));
        Reply::Content(reply.into())
    }
}

fn start_llm_server() -> (FakeServer, FakeLlm) {
    let fake = FakeLlm::default();
    let answering = fake.clone();
    (
        FakeServer::answering(move |body| answering.answer(body)),
        fake,
    )
}

/// The `openai` backend against the fake server at `url`, the repo's prompts, a cache in
/// `cache_dir`.
fn llm(url: &str, cache_dir: &std::path::Path) -> Llm {
    Llm::from_value(
        &json!({
            "backend": "openai",
            "model": "fake",
            "prompts_dir": root().join("pipelines/prompts"),
            "max_reasks": 0,
            "cache": {"dir": cache_dir},
            "embeddings": {"backend": "hashed"},
            "models": {"fake": {
                "name": "fake-gpt",
                "max_retries": 0,
                "timeout_secs": 10.0,
                "endpoints": [{"name": "local", "url": url}]
            }}
        }),
        &root(),
    )
    .unwrap()
}

fn draft_input(claim: &str) -> exam::Input {
    exam::Input::zero_context(claim, None)
}

fn keywords_input(claim: &str) -> KeywordsInput {
    KeywordsInput {
        claim: claim.into(),
        max_keywords: 5,
    }
}

/// (claim id, kind, text, provenance) of every query, in output order.
fn summary(queries: &[Query]) -> Vec<(String, String, String, String)> {
    queries
        .iter()
        .map(|q| {
            (
                q.claim_id.clone(),
                q.kind.clone(),
                q.text.clone(),
                q.provenance.clone(),
            )
        })
        .collect()
}

fn rows(expected: &[(&str, &str, &str, &str)]) -> Vec<(String, String, String, String)> {
    expected
        .iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
        .collect()
}

#[test]
fn counter_queries_follow_the_draft_verdict() {
    let (server, fake) = start_llm_server();
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(&server.url(), &dir.path().join("cache"));
    let stage = QueriesStage::new(llm.clone());
    let claims = vec![
        claim("cl_true", EIFFEL),
        claim("cl_false", CHEESE),
        claim("cl_undecided", ELM),
    ];
    let qctx = ctx(&dir.path().join("queries"), "queries");

    // Defaults: refute "false debunked", support "true confirmed", undecided gives both.
    let mut out = run(
        &stage,
        json!({"kinds": ["keywords"], "counter": true}),
        inputs(vec![("claims", Rows::Claims(claims.clone()))]),
        &qctx,
    );
    assert_eq!(drops(&out), Vec::<(String, String)>::new());
    assert_eq!((out.report.items_in, out.report.items_out), (3, 7));
    let queries: Vec<Query> = table(&mut out, "queries");
    assert_eq!(
        summary(&queries),
        rows(&[
            (
                "cl_true",
                "keywords",
                "Eiffel Tower Paris",
                "openai:fake-gpt"
            ),
            (
                "cl_true",
                "counter",
                "Eiffel Tower Paris false debunked",
                "openai:fake-gpt (draft true)"
            ),
            (
                "cl_false",
                "keywords",
                "Moon green cheese",
                "openai:fake-gpt"
            ),
            (
                "cl_false",
                "counter",
                "Moon green cheese true confirmed",
                "openai:fake-gpt (draft false)"
            ),
            (
                "cl_undecided",
                "keywords",
                "council Elm Street rename",
                "openai:fake-gpt"
            ),
            (
                "cl_undecided",
                "counter",
                "council Elm Street rename false debunked",
                "openai:fake-gpt (draft undecided)"
            ),
            (
                "cl_undecided",
                "counter",
                "council Elm Street rename true confirmed",
                "openai:fake-gpt (draft undecided)"
            ),
        ])
    );
    // One keywords and one draft request per claim, and the draft had no document.
    let mut expected_seen: Vec<Seen> = [EIFFEL, CHEESE, ELM]
        .iter()
        .flat_map(|c| {
            [
                ("exam_verdict".to_string(), c.to_string(), false),
                ("keywords".to_string(), c.to_string(), false),
            ]
        })
        .collect();
    expected_seen.sort();
    assert_eq!(fake.seen(), expected_seen);

    // `llm_request` of a counter query is the draft's request hash; of a keywords query, the
    // keywords request's. Asking the layer the same again answers from the cache with that hash.
    for (claim_id, text) in [
        ("cl_true", EIFFEL),
        ("cl_false", CHEESE),
        ("cl_undecided", ELM),
    ] {
        let draft = llm
            .run::<ExamVerdict>("queries", draft_input(text))
            .unwrap();
        let kw = llm
            .run::<Keywords>("queries", keywords_input(text))
            .unwrap();
        assert!(draft.cache_hit && kw.cache_hit);
        assert_eq!(draft.request_hash.len(), 64);
        assert_ne!(draft.request_hash, kw.request_hash);
        for q in queries.iter().filter(|q| q.claim_id == claim_id) {
            let want = if q.kind == "counter" {
                &draft.request_hash
            } else {
                &kw.request_hash
            };
            assert_eq!(q.llm_request.as_ref(), Some(want), "{}", q.text);
        }
    }
    assert_eq!(fake.seen().len(), 6, "the checks above came from the cache");

    // The hashes join the call log: the stage's draft calls are exactly the counter queries'.
    let calls = llm.drain_call_log();
    let stage_calls: Vec<_> = calls.iter().filter(|c| !c.cache_hit).collect();
    assert_eq!(stage_calls.len(), 6);
    assert!(
        stage_calls
            .iter()
            .all(|c| c.stage == "queries" && c.error.is_none() && c.attempts == 1)
    );
    let hashes = |task: &str| -> BTreeSet<String> {
        stage_calls
            .iter()
            .filter(|c| c.task == task)
            .map(|c| c.request_hash.clone())
            .collect()
    };
    let of_kind = |kind: &str| -> BTreeSet<String> {
        queries
            .iter()
            .filter(|q| q.kind == kind)
            .map(|q| q.llm_request.clone().unwrap())
            .collect()
    };
    assert_eq!(hashes("exam_verdict").len(), 3);
    assert_eq!(hashes("exam_verdict"), of_kind("counter"));
    assert_eq!(hashes("keywords"), of_kind("keywords"));

    // Custom terms (trimmed) and no counter query for an undecided draft.
    let mut out = run(
        &stage,
        json!({"kinds": ["keywords"], "counter": true, "refute_terms": "  hoax myth ",
               "support_terms": "evidence proves", "undecided": "none"}),
        inputs(vec![("claims", Rows::Claims(claims.clone()))]),
        &qctx,
    );
    assert_eq!(
        drops(&out),
        [(
            "cl_undecided:counter".to_string(),
            "undecided_draft".to_string()
        )]
    );
    assert_eq!((out.report.items_in, out.report.items_out), (3, 5));
    let custom: Vec<Query> = table(&mut out, "queries");
    assert_eq!(
        summary(&custom),
        rows(&[
            (
                "cl_true",
                "keywords",
                "Eiffel Tower Paris",
                "openai:fake-gpt"
            ),
            (
                "cl_true",
                "counter",
                "Eiffel Tower Paris hoax myth",
                "openai:fake-gpt (draft true)"
            ),
            (
                "cl_false",
                "keywords",
                "Moon green cheese",
                "openai:fake-gpt"
            ),
            (
                "cl_false",
                "counter",
                "Moon green cheese evidence proves",
                "openai:fake-gpt (draft false)"
            ),
            (
                "cl_undecided",
                "keywords",
                "council Elm Street rename",
                "openai:fake-gpt"
            ),
        ])
    );
    // Same requests, so the same hashes, answered from the cache.
    let counter_of = |qs: &[Query], claim_id: &str| {
        qs.iter()
            .find(|q| q.claim_id == claim_id && q.kind == "counter")
            .and_then(|q| q.llm_request.clone())
            .unwrap()
    };
    for claim_id in ["cl_true", "cl_false"] {
        assert_eq!(
            counter_of(&custom, claim_id),
            counter_of(&queries, claim_id)
        );
    }
    assert_eq!(fake.seen().len(), 6);

    // Counter queries alone: still built on the claim's keywords.
    let mut out = run(
        &stage,
        json!({"kinds": [], "counter": true}),
        inputs(vec![("claims", Rows::Claims(claims))]),
        &qctx,
    );
    assert_eq!(drops(&out), Vec::<(String, String)>::new());
    let alone: Vec<Query> = table(&mut out, "queries");
    let expected: Vec<&Query> = queries.iter().filter(|q| q.kind == "counter").collect();
    assert_eq!(alone.iter().collect::<Vec<_>>(), expected);
}

#[test]
fn failed_keywords_or_drafts_fall_back_or_drop() {
    let (server, fake) = start_llm_server();
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(&server.url(), &dir.path().join("cache"));
    let claims = vec![
        claim("cl_nokw", MICROCHIPS),
        claim("cl_nodraft", &format!("  {BANANAS} ")),
    ];
    let mut out = run(
        &QueriesStage::new(llm),
        json!({"kinds": ["keywords"], "counter": true}),
        inputs(vec![("claims", Rows::Claims(claims))]),
        &ctx(&dir.path().join("queries"), "queries"),
    );
    assert_eq!(
        drops(&out),
        [
            (
                "cl_nodraft:counter".to_string(),
                "llm_unparseable_output".to_string()
            ),
            ("cl_nokw:keywords".into(), "llm_unparseable_output".into()),
        ]
    );
    let queries: Vec<Query> = table(&mut out, "queries");
    assert_eq!(
        summary(&queries),
        rows(&[
            (
                "cl_nokw",
                "counter",
                "Vaccines contain microchips, a viral video claims. false debunked",
                "openai:fake-gpt (draft true)"
            ),
            (
                "cl_nodraft",
                "keywords",
                "bananas berries",
                "openai:fake-gpt"
            ),
        ])
    );
    // No re-asks (max_reasks = 0): one request per claim and task.
    assert_eq!(fake.seen().len(), 4);
}
