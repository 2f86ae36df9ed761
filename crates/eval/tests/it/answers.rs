//! The two-stage answer judge against a fake OpenAI-compatible endpoint: the model is asked
//! only about the answers the refusal, empty and lexical stages could not decide, in one batch;
//! its verdict is attributed to the model; a failed call leaves the item unscored.

use std::path::Path;

use noisebench_eval::RefusalConfig;
use noisebench_eval::answers::{JudgeItem, RefusalDetector, judge_answers};
use noisebench_llm::Llm;
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn llm(server: &FakeServer, cache: &Path) -> Llm {
    Llm::from_value(&strict_openai_config(&server.url(), cache), &repo_root()).unwrap()
}

fn item(gold: &str, prediction: &str) -> JudgeItem {
    JudgeItem {
        question: format!("What is the answer about {gold}?"),
        gold: gold.into(),
        prediction: prediction.into(),
    }
}

fn items() -> Vec<JudgeItem> {
    vec![
        item("Baltic Freight Lines", "The passages do not mention it."),
        item("Baltic Freight Lines", ""),
        item("Baltic Freight Lines", "baltic freight lines."),
        item("Riga Harbour", "It operates from Riga Harbour, Latvia."),
        item("$1.2 billion", "1,200 million dollars"),
        item("Westgate Basin", "Eastgate Dock"),
    ]
}

#[test]
fn the_model_is_asked_only_what_the_lexical_stage_cannot_decide() {
    // The model accepts the revenue answer and rejects the dock.
    let server = FakeServer::answering(|body| {
        let user = first_message(body, "user");
        if user.contains("Prediction: 1,200 million dollars") {
            Reply::Content(r#"{"correct": true}"#.into())
        } else {
            Reply::Content(r#"{"correct": false}"#.into())
        }
    });
    let cache = tempfile::tempdir().unwrap();
    let detector = RefusalDetector::new(&RefusalConfig::default()).unwrap();
    let got = judge_answers(&llm(&server, cache.path()), "judge", &items(), &detector);

    assert_eq!(server.requests(), 2, "one request per undecided item");
    let mut asked: Vec<String> = server
        .bodies()
        .iter()
        .map(|b| {
            let user = first_message(b, "user");
            user.lines()
                .find_map(|l| l.strip_prefix("Prediction: "))
                .unwrap_or("")
                .to_string()
        })
        .collect();
    asked.sort();
    assert_eq!(asked, ["1,200 million dollars", "Eastgate Dock"]);

    let by: Vec<&str> = got.iter().map(|j| j.judged_by.as_str()).collect();
    assert_eq!(
        by,
        [
            "refusal",
            "empty",
            "exact",
            "inclusive",
            "llm:openai:fake-model",
            "llm:openai:fake-model"
        ]
    );
    let correct: Vec<Option<bool>> = got.iter().map(|j| j.correct).collect();
    assert_eq!(
        correct,
        [
            Some(false),
            Some(false),
            Some(true),
            Some(true),
            Some(true),
            Some(false)
        ]
    );
    assert!(got[0].refusal);
    assert!(got[1..].iter().all(|j| !j.refusal && j.failure.is_none()));
}

#[test]
fn no_request_when_the_lexical_stage_decides_everything() {
    let server = FakeServer::answering(|_| Reply::Content(r#"{"correct": true}"#.into()));
    let cache = tempfile::tempdir().unwrap();
    let detector = RefusalDetector::new(&RefusalConfig::default()).unwrap();
    let got = judge_answers(
        &llm(&server, cache.path()),
        "judge",
        &items()[..4],
        &detector,
    );
    assert_eq!(server.requests(), 0);
    assert_eq!(got.len(), 4);
}

#[test]
fn a_failed_call_leaves_the_item_unscored() {
    let server = FakeServer::answering(|_| Reply::Status(503, None, "{}".into()));
    let cache = tempfile::tempdir().unwrap();
    let detector = RefusalDetector::new(&RefusalConfig::default()).unwrap();
    let got = judge_answers(&llm(&server, cache.path()), "judge", &items(), &detector);
    assert_eq!(got[2].correct, Some(true), "lexical verdicts stand");
    for j in &got[4..] {
        assert_eq!(j.correct, None);
        assert_eq!(j.judged_by, "failed");
        // A 503 with no retries allowed (the strict test configuration).
        assert_eq!(j.failure.as_deref(), Some("llm_retries_exhausted"));
    }
}
