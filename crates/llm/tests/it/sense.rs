//! Sense checks against the fake endpoint: well-formed answers that copy the prompt's example or
//! are about something else are counted drops with their reason (or re-asked once, when the task
//! says so), cached answers are checked again, `llm.sense_checks = false` keeps them, and a
//! categorical answer that never changes over a run is flagged.

#[path = "sense/weak.rs"]
mod weak;

use std::collections::BTreeSet;
use std::path::Path;

use noisebench_llm::sense::{self, Sense};
use noisebench_llm::{Llm, LlmError, Senseless, Task};
use noisebench_testkit::{FakeServer, Reply, first_message, openai_config};
use serde::{Deserialize, Serialize};
use serde_json::json;

fn words(s: &str) -> BTreeSet<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !["did", "the", "have", "was", "does", "that", "true"].contains(&w.as_str()))
        .collect()
}

const EXAMPLE_CLAIM: &str = "Nigeria had a population of 45 million at the time of independence";
const EXAMPLE_QUESTION: &str =
    "Did Nigeria have a population of 45 million at the time of independence?";

/// Shaped like the queries stage's `claim_to_question`, so the repository's prompt renders it.
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
fn question_sense(i: &QuestionInput, o: &QuestionOutput) -> Result<(), Senseless> {
    let (q, c) = (words(&o.question), words(&i.claim));
    sense::not_the_example(&q, &words(EXAMPLE_QUESTION), &c, &words(EXAMPLE_CLAIM))?;
    sense::on_topic("the question", &q, &c)
}
fn ask(claim: &str) -> QuestionInput {
    QuestionInput {
        claim: claim.into(),
        claim_date: None,
        speaker: None,
    }
}

struct Question;
impl Task for Question {
    const NAME: &'static str = "claim_to_question";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = QuestionInput;
    type Output = QuestionOutput;
    fn sense(i: &QuestionInput, o: &QuestionOutput) -> Result<(), Senseless> {
        question_sense(i, o)
    }
    fn offline(i: &QuestionInput) -> QuestionOutput {
        QuestionOutput {
            question: format!("Is it true that {}?", i.claim),
        }
    }
}

/// The same task, re-asked once before it is dropped.
struct PatientQuestion;
impl Task for PatientQuestion {
    const NAME: &'static str = "claim_to_question";
    const OFFLINE_VERSION: &'static str = "test-1";
    const REASK_SENSELESS: bool = true;
    type Input = QuestionInput;
    type Output = QuestionOutput;
    fn sense(i: &QuestionInput, o: &QuestionOutput) -> Result<(), Senseless> {
        question_sense(i, o)
    }
    fn offline(i: &QuestionInput) -> QuestionOutput {
        Question::offline(i)
    }
}

/// A model that answers the example for claims about lemons, something else for claims about
/// the moon, and the claim's own question otherwise.
fn weak_model() -> FakeServer {
    FakeServer::answering(|body| {
        let user = first_message(body, "user");
        let claim = user
            .split("Claim: ")
            .nth(1)
            .and_then(|r| r.lines().next())
            .unwrap_or("");
        let q = if claim.contains("lemon") {
            EXAMPLE_QUESTION.to_string()
        } else if claim.contains("moon") {
            "What is the most important thing you learned in school?".into()
        } else {
            format!("Is it true that {claim}?")
        };
        Reply::Content(json!({ "question": q }).to_string())
    })
}

const LEMON: &str = "Hot lemon water cures the common cold";
const MOON: &str = "The moon is made of green cheese";
const TAX: &str = "The city raised the sales tax to 9 percent in 2019";

#[test]
fn copied_and_off_topic_answers_are_counted_drops() {
    let srv = weak_model();
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let r = llm.run_batch::<Question>(
        "queries",
        vec![ask(LEMON), ask(MOON), ask(TAX), ask(EXAMPLE_CLAIM)],
    );
    let reasons: Vec<String> = r
        .iter()
        .map(|r| match r {
            Ok(_) => "ok".to_string(),
            Err(e) => e.drop_reason(),
        })
        .collect();
    assert_eq!(
        reasons,
        vec!["llm_copied_example", "llm_off_topic", "ok", "ok"],
        "the example's own claim may get the example's question"
    );
    assert_eq!(
        srv.requests(),
        4,
        "a dropped answer is not re-asked by default"
    );
    match &r[0] {
        Err(LlmError::Senseless(s)) => assert!(s.detail.contains("Nigeria"), "{s}"),
        other => panic!("{other:?}"),
    }
    let log = llm.drain_call_log();
    let errors: Vec<&str> = log
        .iter()
        .filter_map(|c| c.error.as_deref())
        .map(|e| e.split(':').next().unwrap())
        .collect();
    let mut errors = errors;
    errors.sort();
    assert_eq!(errors, vec!["copied_example", "off_topic"]);
    let s = llm.stats();
    assert_eq!(
        (
            s.failures_by_reason["copied_example"],
            s.failures_by_reason["off_topic"]
        ),
        (1, 1)
    );
    // Failures are not cached: a second run asks the two again, and only them.
    let again = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let r = again.run_batch::<Question>("queries", vec![ask(LEMON), ask(MOON), ask(TAX)]);
    assert_eq!(r.iter().filter(|r| r.is_err()).count(), 2);
    assert_eq!(srv.requests(), 6);
}

#[test]
fn checks_off_keeps_them_and_checks_on_rejects_them_from_the_cache() {
    let srv = weak_model();
    let dir = tempfile::tempdir().unwrap();
    let mut off = openai_config(&srv.url(), dir.path());
    off["sense_checks"] = json!(false);
    let llm = Llm::from_value(&off, Path::new("/")).unwrap();
    let r = llm.run_batch::<Question>("queries", vec![ask(LEMON), ask(MOON)]);
    assert!(r.iter().all(Result::is_ok), "kept as the model gave them");
    assert_eq!(r[0].as_ref().unwrap().value.question, EXAMPLE_QUESTION);
    // Checks on, same cache: the same answers, now judged, without a request.
    let on = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let r = on.run_batch::<Question>("queries", vec![ask(LEMON), ask(MOON)]);
    assert_eq!(r[0].as_ref().unwrap_err().reason(), "copied_example");
    assert_eq!(r[1].as_ref().unwrap_err().reason(), "off_topic");
    assert_eq!(srv.requests(), 2, "judged from the cache");
    let log = on.drain_call_log();
    assert!(log.iter().all(|c| c.cache_hit && c.error.is_some()));
}

#[test]
fn a_task_may_re_ask_once_quoting_the_failed_check() {
    // First answer copies the example; the re-ask (which quotes why) gets a real question.
    let srv = FakeServer::answering(|body| {
        let messages = body["messages"].as_array().unwrap();
        let q = if messages.len() > 2 {
            let last = messages.last().unwrap()["content"].as_str().unwrap();
            assert!(last.contains("copied_example"), "{last}");
            format!("Does {LEMON}?")
        } else {
            EXAMPLE_QUESTION.into()
        };
        Reply::Content(json!({ "question": q }).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let a = llm.run::<PatientQuestion>("queries", ask(LEMON)).unwrap();
    assert!(a.value.question.contains("lemon"));
    assert_eq!(srv.requests(), 2);
    // A model that copies again is dropped after the one re-ask.
    let srv = weak_model();
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let e = llm
        .run::<PatientQuestion>("queries", ask(LEMON))
        .unwrap_err();
    assert_eq!(e.reason(), "copied_example");
    assert_eq!(srv.requests(), 2);
}

/// Shaped like the labels stage's `stance_url`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StanceInput {
    claim: String,
    claim_date: Option<String>,
    url: String,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StanceOutput {
    stance: String,
}
struct Stance;
impl Task for Stance {
    const NAME: &'static str = "stance_url";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = StanceInput;
    type Output = StanceOutput;
    fn category(o: &StanceOutput) -> Option<String> {
        Some(o.stance.clone())
    }
    fn offline(_: &StanceInput) -> StanceOutput {
        StanceOutput {
            stance: "not enough evidence".into(),
        }
    }
}

fn stances(n: usize) -> Vec<StanceInput> {
    (0..n)
        .map(|i| StanceInput {
            claim: format!("claim {i}"),
            claim_date: None,
            url: format!("https://example.org/{i}"),
        })
        .collect()
}

#[test]
fn a_stance_that_never_changes_over_a_run_is_flagged() {
    let srv = FakeServer::answering(|_| Reply::Content(r#"{"stance": "support"}"#.into()));
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let _ = llm.run_batch::<Stance>("labels", stances(3));
    assert!(llm.constant_answers().is_empty(), "too few answers to say");
    let _ = llm.run_batch::<Stance>("labels", stances(8));
    assert_eq!(
        llm.constant_answers(),
        vec!["stance_url (openai:fake-model): \"support\" for all 11 answers".to_string()],
        "cache hits count: they are answers of this run"
    );
    // A model whose stance varies is not flagged.
    let srv = FakeServer::answering(|body| {
        let user = first_message(body, "user");
        let s = if user.contains("claim 1") {
            "reject"
        } else {
            "support"
        };
        Reply::Content(json!({ "stance": s }).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(&openai_config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let _ = llm.run_batch::<Stance>("labels", stances(8));
    assert!(llm.constant_answers().is_empty());
    // Offline answers are rules, not a model: never flagged.
    let offline = Llm::offline();
    let _ = offline.run_batch::<Stance>("labels", stances(8));
    assert!(offline.constant_answers().is_empty());
    assert!(Sense::is_code("llm_copied_example"));
}
