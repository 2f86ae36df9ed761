//! RARE-Met against a fake endpoint whose answers are scripted per prompt: every cell of Table 3
//! is scored by its rule, for a question the model knows without retrieval and for one it does
//! not; the four robustness scores are the hand-counted shares; the answer judge asks the LLM
//! only for answers the lexical stage cannot decide.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use noisebench_eval::answers::{RefusalConfig, RefusalDetector};
use noisebench_eval::metrics::Bootstrap;
use noisebench_eval::rare_met::{RareConfig, RareRun, run_rare};
use noisebench_eval::{
    DocVariant, EvalChunk, EvalData, EvalQuestion, Plain, QueryVariant, TaskOutcome,
};
use noisebench_llm::Llm;
use noisebench_testkit::repo_root;
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};

const GOLD: &str = "Ostrava Sawmill Group";
const WRONG: &str = "Kestrel Dredging Company";
const REFUSE: &str = "I don't know";

fn data() -> EvalData {
    let chunk = |id: &str, text: &str| EvalChunk {
        id: id.into(),
        text: text.into(),
        report_id: None,
    };
    EvalData {
        name: "fixture".into(),
        chunks: vec![
            chunk(
                "c1",
                "Ostrava Sawmill Group leases Westgate Basin from the port.",
            ),
            chunk("c2", "Kestrel Dredging Company manages Westgate Basin."),
            chunk("c3", "Westgate Basin reported record tonnage in 2023."),
        ],
        questions: vec![EvalQuestion {
            id: "q1".into(),
            question: "Which company leases Westgate Basin?".into(),
            answer: GOLD.into(),
            kind: "single_hop".into(),
            domain: "finance".into(),
            answer_chunk_ids: vec!["c1".into()],
            query_perturbations: vec![QueryVariant {
                kind: "word_level".into(),
                text: "Which compnay leases Westgate Basin?".into(),
            }],
            document_perturbations: vec![
                DocVariant {
                    kind: "back_translation".into(),
                    chunk_id: "c1".into(),
                    text: "Westgate Basin is rented by Ostrava Sawmill Group from the port.".into(),
                },
                DocVariant {
                    kind: "regex_delete".into(),
                    chunk_id: "c1".into(),
                    text: "[deleted] leases Westgate Basin from the port.".into(),
                },
            ],
            retrieved: vec![],
            split: None,
        }],
        ..Default::default()
    }
}

/// The model's scripted answers, by what the prompt shows.
struct Script {
    probe: &'static str,
    ground_truth: &'static str,
    back_translation: &'static str,
    regex_delete: &'static str,
    retrieval: &'static str,
}

fn answer(text: &str) -> Reply {
    Reply::Content(serde_json::json!({"reasoning": null, "answer": text}).to_string())
}

fn run(script: Script) -> (Vec<TaskOutcome>, usize) {
    let judge_calls = Arc::new(AtomicUsize::new(0));
    let counted = judge_calls.clone();
    let server = FakeServer::answering(move |body| {
        let user = first_message(body, "user");
        if user.contains("Gold answer:") {
            counted.fetch_add(1, Ordering::SeqCst);
            // Only WRONG ever reaches the judge in these scripts.
            assert!(user.contains(WRONG), "{user}");
            return Reply::Content(r#"{"correct": false}"#.into());
        }
        let text = if !user.contains("Passage 1") {
            script.probe
        } else if user.contains("(retrieved)") {
            script.retrieval
        } else if user.contains("[deleted]") {
            script.regex_delete
        } else if user.contains("rented by") {
            script.back_translation
        } else {
            script.ground_truth
        };
        answer(text)
    });
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(
        &strict_openai_config(&server.url(), &dir.path().join("cache")),
        &repo_root(),
    )
    .unwrap();
    let refusal = RefusalDetector::new(&RefusalConfig::default()).unwrap();
    let run = RareRun {
        llm: &llm,
        generator: &Plain,
        refusal: &refusal,
        boot: Bootstrap {
            samples: 200,
            seed: 1,
        },
        limit: None,
        stage: "eval",
    };
    let outcomes = run_rare(&data(), &RareConfig::default(), &run);
    (outcomes, judge_calls.load(Ordering::SeqCst))
}

/// (query, document) -> robust, for every cell.
fn cells(outcomes: &[TaskOutcome]) -> Vec<(String, String, Option<bool>)> {
    let met = outcomes.iter().find(|o| o.task == "rare_met").unwrap();
    met.scored
        .iter()
        .map(|s| {
            (
                s.groups["query"].clone(),
                s.groups["document"].clone(),
                s.correct,
            )
        })
        .collect()
}

fn robustness(outcomes: &[TaskOutcome], task: &str) -> f64 {
    let met = outcomes.iter().find(|o| o.task == "rare_met").unwrap();
    met.metrics
        .iter()
        .find(|m| m.task == task && m.group == "all")
        .unwrap()
        .value
}

#[test]
fn a_model_that_knows_the_answer_must_stay_correct_where_the_answer_is_kept() {
    let (outcomes, judged) = run(Script {
        probe: GOLD,
        ground_truth: GOLD,
        back_translation: WRONG,
        regex_delete: GOLD,
        retrieval: REFUSE,
    });
    let probe = outcomes.iter().find(|o| o.task == "rare_probe").unwrap();
    assert_eq!(probe.scored[0].correct, Some(true));
    // 2 queries x (ground truth, back translation, regex delete, 3 retrieved chunks).
    let cells = cells(&outcomes);
    assert_eq!(cells.len(), 12);
    for (query, document, robust) in &cells {
        let want = match document.as_str() {
            "ground_truth" => true,      // correct: robust
            "back_translation" => false, // wrong where the answer is kept: not robust
            "regex_delete" => true,      // probe 1: correct is robust
            "retrieval" => true,         // a refusal is robust
            other => panic!("{other}"),
        };
        assert_eq!(*robust, Some(want), "{query} x {document}");
    }
    assert_eq!(robustness(&outcomes, "rare_overall"), 10.0 / 12.0);
    assert_eq!(robustness(&outcomes, "rare_query"), 1.0);
    assert_eq!(robustness(&outcomes, "rare_document"), 0.5);
    assert_eq!(robustness(&outcomes, "rare_retrieval"), 1.0);
    // The two back-translation answers (one per query) are the only ones the lexical stage
    // cannot decide; both ask the same (question, gold, prediction), so one request serves both.
    assert_eq!(judged, 1);
    let met = outcomes.iter().find(|o| o.task == "rare_met").unwrap();
    assert_eq!(met.problems.get("refusal"), Some(&6));
}

#[test]
fn a_model_that_does_not_know_must_refuse_where_the_answer_is_gone() {
    let (outcomes, _) = run(Script {
        probe: REFUSE,
        ground_truth: WRONG,
        back_translation: GOLD,
        regex_delete: GOLD,
        retrieval: WRONG,
    });
    let probe = outcomes.iter().find(|o| o.task == "rare_probe").unwrap();
    assert_eq!(probe.scored[0].correct, Some(false));
    for (query, document, robust) in cells(&outcomes) {
        let want = match document.as_str() {
            "ground_truth" => false,    // wrong
            "back_translation" => true, // correct
            "regex_delete" => false,    // probe 0: only a refusal is robust, not a guess
            "retrieval" => false,       // wrong and no refusal
            other => panic!("{other}"),
        };
        assert_eq!(robust, Some(want), "{query} x {document}");
    }
    assert_eq!(robustness(&outcomes, "rare_overall"), 2.0 / 12.0);
    assert_eq!(robustness(&outcomes, "rare_query"), 0.0);
    assert_eq!(robustness(&outcomes, "rare_document"), 0.5);
    assert_eq!(robustness(&outcomes, "rare_retrieval"), 0.0);
}

#[test]
fn refusing_where_the_answer_is_gone_is_robust_for_a_model_that_does_not_know() {
    let (outcomes, _) = run(Script {
        probe: REFUSE,
        ground_truth: GOLD,
        back_translation: GOLD,
        regex_delete: REFUSE,
        retrieval: GOLD,
    });
    assert!(
        cells(&outcomes)
            .iter()
            .all(|(_, _, robust)| *robust == Some(true))
    );
    assert_eq!(robustness(&outcomes, "rare_overall"), 1.0);
}
