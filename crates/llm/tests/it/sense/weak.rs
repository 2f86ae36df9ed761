//! A scripted endpoint on 127.0.0.1 answering as small local models did (Gemma 3 270M and
//! SmolLM2-135M behind llama.cpp): each failure is caught as a counted drop with its reason, or
//! by the preflight before anything is spent.
//!
//! - ten rewrites when three were asked: the schema sent says the same bound the check holds;
//! - a context refusal (HTTP 400 "exceeds the available context size"): its own reason naming
//!   the setting, and a prompt that cannot fit a known context is not sent at all;
//! - the server's context size (llama.cpp `/props`, vLLM `/v1/models`) is read, cuts budgets
//!   and is part of the fingerprint;
//! - the preflight tells a good model from a bad one (copied examples, non-JSON, constant
//!   verdicts).

use std::path::Path;

use noisebench_llm::{ItemBounds, Llm, Task, TaskInfo};
use noisebench_testkit::{FakeServer, Reply, first_message, openai_config, strict_openai_config};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Shaped like the perturbation stages' rewrite input, so the repository's prompt renders.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RewriteInput {
    query: String,
    candidates: usize,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Rewrites {
    rewrites: Vec<String>,
}
struct Grammar;
impl Task for Grammar {
    const NAME: &'static str = "query_grammar";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = RewriteInput;
    type Output = Rewrites;
    fn bounds(i: &RewriteInput) -> Vec<ItemBounds> {
        vec![ItemBounds {
            field: "rewrites",
            min: 1,
            max: i.candidates,
        }]
    }
    fn offline(i: &RewriteInput) -> Rewrites {
        Rewrites {
            rewrites: vec![i.query.clone()],
        }
    }
}

#[test]
fn ten_rewrites_for_three_fail_the_check_the_schema_states() {
    let srv = FakeServer::answering(|_| {
        let ten: Vec<String> = (0..10).map(|i| format!("Rewrite {i}?")).collect();
        Reply::Content(json!({ "rewrites": ten }).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let mut config = strict_openai_config(&srv.url(), dir.path());
    config["max_reasks"] = json!(1);
    let llm = Llm::from_value(&config, Path::new("/")).unwrap();
    let input = RewriteInput {
        query: "Who owns Eastgate Terminal?".into(),
        candidates: 3,
    };
    let e = llm
        .run::<Grammar>("query_perturbations", input)
        .unwrap_err();
    assert_eq!(e.drop_reason(), "llm_unparseable_output");
    assert!(
        e.to_string()
            .contains("`rewrites` has 10 items, wanted 1 to 3"),
        "{e}"
    );
    // What the model was held to is what the check wants: the schema sent, and the one the
    // prompt shows.
    let body = &srv.bodies()[0];
    let schema = &body["response_format"]["json_schema"]["schema"]["properties"]["rewrites"];
    assert_eq!(
        (schema["minItems"].clone(), schema["maxItems"].clone()),
        (json!(1), json!(3))
    );
    assert!(first_message(body, "user").contains(r#""maxItems":3"#));
    assert_eq!(srv.requests(), 2, "one re-ask, then the counted drop");
}

/// A task shaped like `back_translate`, whose answer grows with its input.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct TranslateInput {
    text: String,
    pivot_language: String,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Translation {
    pivot: String,
    text: String,
}
struct Translate;
impl Task for Translate {
    const NAME: &'static str = "back_translate";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = TranslateInput;
    type Output = Translation;
    fn answer_tokens(i: &TranslateInput) -> Option<u64> {
        Some(noisebench_llm::count_tokens(&i.text) * 3)
    }
    fn offline(i: &TranslateInput) -> Translation {
        Translation {
            pivot: i.text.clone(),
            text: i.text.clone(),
        }
    }
}

fn passage(words: usize) -> TranslateInput {
    TranslateInput {
        text: (0..words)
            .map(|i| format!("harbour{i}"))
            .collect::<Vec<_>>()
            .join(" "),
        pivot_language: "French".into(),
    }
}

const LLAMA_REFUSAL: &str = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9871,"n_ctx":8192}}"#;

#[test]
fn a_context_refusal_is_its_own_reason_and_names_the_setting() {
    let srv = FakeServer::start_with(
        Reply::Status(400, None, LLAMA_REFUSAL.into()),
        std::time::Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let e = llm
        .run::<Translate>("document_perturbations", passage(50))
        .unwrap_err();
    assert_eq!(e.drop_reason(), "llm_context_exceeded");
    let m = e.to_string();
    assert!(
        m.contains("llm.models.fake.context_tokens") && m.contains("--ctx-size"),
        "{m}"
    );
    assert!(m.contains("exceeds the available context size"), "{m}");
    assert_eq!(srv.requests(), 1, "a refusal is not retried as it is");
    assert!(!e.as_drop_reason().is_transient());
}

#[test]
fn the_servers_context_decides_budgets_and_the_fingerprint() {
    let srv = FakeServer::answering(|body| {
        let text = first_message(body, "user")
            .split("Passage:\n")
            .nth(1)
            .and_then(|r| r.split("\n\nReply").next())
            .unwrap_or("")
            .to_string();
        Reply::Content(json!({"pivot": text, "text": text}).to_string())
    });
    srv.set_props(Some(json!({"default_generation_settings": {"n_ctx": 2048},
        "chat_template": "{% for message in messages %}<|im_start|>{{ message.role }}..."})));
    let dir = tempfile::tempdir().unwrap();
    let config = openai_config(&srv.url(), dir.path());
    let llm = Llm::from_value(&config, Path::new("/")).unwrap();
    let tasks = [TaskInfo::of::<Translate>()];
    llm.require(&tasks).unwrap();
    assert_eq!(
        llm.fingerprint_of(&tasks)["tasks"]["back_translate"]["context_tokens"],
        2048
    );
    // The budget follows the input (three times its tokens, above max_tokens 64), within
    // what the context leaves after the prompt.
    let a = llm
        .run::<Translate>("document_perturbations", passage(100))
        .unwrap();
    assert_eq!(a.value.text.split(' ').count(), 100);
    let max_tokens = srv.bodies()[0]["max_tokens"].as_u64().unwrap();
    assert!(max_tokens > 64 && max_tokens < 2048, "{max_tokens}");
    // A passage whose prompt leaves no room for its answer is not sent.
    let sent = srv.requests();
    let e = llm
        .run::<Translate>("document_perturbations", passage(1000))
        .unwrap_err();
    assert_eq!(e.reason(), "context_exceeded");
    assert!(e.to_string().contains("not sent"), "{e}");
    assert_eq!(srv.requests(), sent);
    // The server restarted with a larger context: another fingerprint, so the stage reruns
    // and the refused items are asked again.
    srv.set_props(Some(
        json!({"default_generation_settings": {"n_ctx": 32768}}),
    ));
    let larger = Llm::from_value(&config, Path::new("/")).unwrap();
    larger.require(&tasks).unwrap();
    assert_ne!(larger.fingerprint_of(&tasks), llm.fingerprint_of(&tasks));
    assert!(
        larger
            .run::<Translate>("document_perturbations", passage(1000))
            .is_ok()
    );
    // A configured context wins over the server's; vLLM's /v1/models is read too.
    let mut pinned = config.clone();
    pinned["models"]["fake"]["context_tokens"] = json!(4096);
    let pinned = Llm::from_value(&pinned, Path::new("/")).unwrap();
    assert_eq!(
        pinned.fingerprint_of(&tasks)["tasks"]["back_translate"]["context_tokens"],
        4096
    );
    srv.set_props(None);
    srv.set_models(Some(
        json!({"data": [{"id": "fake-model", "max_model_len": 32768}]}),
    ));
    let vllm = Llm::from_value(&config, Path::new("/")).unwrap();
    assert_eq!(
        vllm.fingerprint_of(&tasks)["tasks"]["back_translate"]["context_tokens"],
        32768
    );
    srv.set_models(None);
    let unknown = Llm::from_value(&config, Path::new("/")).unwrap();
    assert!(unknown.fingerprint_of(&tasks)["tasks"]["back_translate"]["context_tokens"].is_null());
}

// --- The preflight.

/// Shaped like the queries stage's `claim_to_question`, with two example claims.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct QuestionInput {
    claim: String,
    claim_date: Option<String>,
    speaker: Option<String>,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct QuestionOutput {
    question: String,
}
struct Question;
impl Task for Question {
    const NAME: &'static str = "claim_to_question";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = QuestionInput;
    type Output = QuestionOutput;
    fn offline(i: &QuestionInput) -> QuestionOutput {
        QuestionOutput {
            question: format!("Is it true that {}?", i.claim),
        }
    }
    fn examples() -> Vec<QuestionInput> {
        [
            "Hot lemon water cures the common cold.",
            "The Riverside library opened in 2021.",
        ]
        .iter()
        .map(|c| QuestionInput {
            claim: (*c).into(),
            claim_date: None,
            speaker: None,
        })
        .collect()
    }
}

/// Shaped like `exam_verdict`: a verdict on a claim given a document.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ExamInput {
    claim: String,
    claim_date: Option<String>,
    document_title: Option<String>,
    document: Option<String>,
}
struct Exam;
impl Task for Exam {
    const NAME: &'static str = "exam_verdict";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = ExamInput;
    type Output = Value;
    fn check(_: &ExamInput, v: &Value) -> Result<(), String> {
        v["verdict"].as_str().map(|_| ()).ok_or("no verdict".into())
    }
    fn category(v: &Value) -> Option<String> {
        v["verdict"].as_str().map(str::to_string)
    }
    fn offline(_: &ExamInput) -> Value {
        json!({"verdict": "undecided"})
    }
    fn examples() -> Vec<ExamInput> {
        [
            "It opened in 2021, the city confirmed.",
            "It never opened; the claim is false.",
        ]
        .iter()
        .map(|d| ExamInput {
            claim: "The Riverside library opened in 2021.".into(),
            claim_date: None,
            document_title: None,
            document: Some((*d).into()),
        })
        .collect()
    }
}

/// Keywords answered as plain prose by the bad model.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct KeywordsInput {
    claim: String,
    max_keywords: usize,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct KeywordsOutput {
    keywords: Vec<String>,
}
struct Keywords;
impl Task for Keywords {
    const NAME: &'static str = "keywords";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = KeywordsInput;
    type Output = KeywordsOutput;
    fn offline(_: &KeywordsInput) -> KeywordsOutput {
        KeywordsOutput { keywords: vec![] }
    }
    fn examples() -> Vec<KeywordsInput> {
        vec![KeywordsInput {
            claim: "Hot lemon water cures the common cold.".into(),
            max_keywords: 3,
        }]
    }
}

const TASKS: &[TaskInfo] = &[
    TaskInfo::of::<Question>(),
    TaskInfo::of::<Exam>(),
    TaskInfo::of::<Keywords>(),
];

fn claim_of(body: &Value) -> String {
    first_message(body, "user")
        .split("Claim: ")
        .nth(1)
        .and_then(|r| r.lines().next())
        .unwrap_or("")
        .to_string()
}

/// Reads its inputs: a question of the claim, a verdict from the document, keywords.
fn good_model(body: &Value) -> Reply {
    let user = first_message(body, "user");
    let system = first_message(body, "system");
    let reply = if system.contains("search an online forum") {
        json!({"keywords": ["lemon water", "common cold"]})
    } else if user.contains("Rewrite the claim") {
        json!({"question": format!("Is it true that {}?", claim_of(body).trim_end_matches('.'))})
    } else if user.contains("never opened") {
        json!({"verdict": "false"})
    } else {
        json!({"verdict": "true"})
    };
    Reply::Content(reply.to_string())
}

/// As the small models answered: the prompt's example question, "true" whatever the document,
/// prose instead of JSON.
fn bad_model(body: &Value) -> Reply {
    let user = first_message(body, "user");
    let system = first_message(body, "system");
    if system.contains("search an online forum") {
        return Reply::Content("Sure! Here are some keywords: lemon, water, cold.".into());
    }
    let reply = if user.contains("Rewrite the claim") {
        json!({"question": "Did Nigeria have a population of 45 million at the time of independence?"})
    } else {
        json!({"verdict": "true"})
    };
    Reply::Content(reply.to_string())
}

#[test]
fn the_preflight_tells_a_good_model_from_a_bad_one() {
    let good = FakeServer::answering(good_model);
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&good.url(), dir.path()), Path::new("/")).unwrap();
    llm.require(TASKS).unwrap();
    let report = llm.preflight(TASKS).unwrap();
    assert!(!report.failed(), "{report}");
    assert_eq!(report.probes.len(), 3);
    assert!(report.probes.iter().all(|p| p.asked >= 1), "{report}");
    let asked = good.requests();
    assert_eq!(asked, 5);
    // Its calls are its own: not in the handle's call log, not counted as the run's answers.
    assert!(llm.drain_call_log().is_empty());
    assert!(llm.constant_answers().is_empty());
    // Nothing of it is cached: a second preflight asks again.
    assert!(!llm.preflight(TASKS).unwrap().failed());
    assert_eq!(good.requests(), 2 * asked);

    let bad = FakeServer::answering(bad_model);
    bad.set_props(Some(json!({"default_generation_settings": {"n_ctx": 8192},
        "chat_template": "{% for message in messages %}{{'<|im_start|>' + message['role']}}{% endfor %}"})));
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&bad.url(), dir.path()), Path::new("/")).unwrap();
    llm.require(TASKS).unwrap();
    let report = llm.preflight(TASKS).unwrap();
    assert!(report.failed());
    let text = report.to_string();
    let problems = |task: &str| -> String {
        report
            .probes
            .iter()
            .find(|p| p.task == task)
            .unwrap()
            .problems
            .join("\n")
    };
    assert!(
        problems("claim_to_question").contains("echoes the prompt's example"),
        "{text}"
    );
    assert!(
        problems("exam_verdict").contains("the same answer for 2 inputs"),
        "{text}"
    );
    assert!(
        problems("keywords").contains("no usable JSON answer"),
        "{text}"
    );
    assert!(
        text.contains("context 8192 tokens (as the server says)"),
        "{text}"
    );
    assert!(text.contains("ChatML"), "{text}");
    assert!(text.contains("json_schema = true"), "{text}");

    // Offline, nothing is asked.
    let offline = Llm::offline();
    let report = offline.preflight(TASKS).unwrap();
    assert!(report.skipped.is_some() && !report.failed());
}

#[test]
fn an_unreachable_model_fails_the_preflight_with_its_reason() {
    let srv = FakeServer::start_with(
        Reply::Status(404, None, r#"{"error": "model not found"}"#.into()),
        std::time::Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let report = llm.preflight(&[TaskInfo::of::<Question>()]).unwrap();
    assert!(report.failed());
    assert!(report.to_string().contains("http_error"), "{report}");
}

/// A server failing for a transient cause (HTTP 503, after the layer's own retries) is not a
/// failed model: the preflight asks the example again, and an example that never got an
/// answer is reported as not checked, without failing the preflight.
#[test]
fn transient_failures_are_asked_again_and_never_fail_the_preflight() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    // The first two requests fail with 503; the rest are a good model's answers.
    let failed = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&failed);
    let flaky = FakeServer::answering(move |body| {
        if count.fetch_add(1, Ordering::SeqCst) < 2 {
            return Reply::Status(503, None, "busy".into());
        }
        good_model(body)
    });
    let dir = tempfile::tempdir().unwrap();
    let mut config = openai_config(&flaky.url(), dir.path());
    config["models"]["fake"]["max_retries"] = json!(0);
    config["models"]["fake"]["max_concurrency"] = json!(1);
    let llm = Llm::from_value(&config, Path::new("/")).unwrap();
    let report = llm.preflight(TASKS).unwrap();
    assert!(!report.failed(), "{report}");
    assert!(
        report.probes.iter().all(|p| p.unchecked.is_empty()),
        "{report}"
    );
    // Five examples, two of whose first tries failed and were asked again.
    assert_eq!(flaky.requests(), 5 + 2);

    // A server that never answers: nothing is held against the model, and the report says
    // what could not be checked.
    let down = FakeServer::start_with(
        Reply::Status(503, None, "down".into()),
        std::time::Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let mut config = openai_config(&down.url(), dir.path());
    config["models"]["fake"]["max_retries"] = json!(0);
    let llm = Llm::from_value(&config, Path::new("/")).unwrap();
    let report = llm.preflight(TASKS).unwrap();
    assert!(!report.failed(), "{report}");
    for p in &report.probes {
        assert_eq!(p.unchecked.len(), p.asked, "{report}");
        assert!(p.unchecked[0].contains("retries_exhausted"), "{report}");
    }
    assert!(report.to_string().contains("could not check"), "{report}");

    // A permanent refusal (HTTP 404) is still the model's failure, asked once.
    let gone = FakeServer::start_with(
        Reply::Status(404, None, r#"{"error": "model not found"}"#.into()),
        std::time::Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&gone.url(), dir.path()), Path::new("/")).unwrap();
    let report = llm.preflight(TASKS).unwrap();
    assert!(report.failed());
    assert_eq!(gone.requests(), 5, "a permanent failure is not asked again");
}
