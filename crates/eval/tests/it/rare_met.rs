//! RARE-Met against a fake endpoint whose answers are scripted per prompt: every cell of Table 3
//! is scored by its rule, for a question the model knows without retrieval and for one it does
//! not; the four robustness scores are the hand-counted shares; the answer judge asks the LLM
//! only for answers the lexical stage cannot decide.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use noisebench_eval::RareConfig;
use noisebench_eval::RefusalConfig;
use noisebench_eval::answers::RefusalDetector;
use noisebench_eval::metrics::Bootstrap;
use noisebench_eval::rare_met::{RareRun, RetrievalContext, run_rare};
use noisebench_eval::{
    DocVariant, EvalChunk, EvalData, EvalQuestion, Plain, QueryVariant, RealRetrieval, TaskOutcome,
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
            retrievals: vec![],
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
    // Each retrieved chunk alone, so the hand counts below see three retrieval cells a query.
    let config = RareConfig {
        retrieval_context: RetrievalContext::Each,
        ..RareConfig::default()
    };
    run_on(script, &data(), &config)
}

fn run_on(script: Script, data: &EvalData, config: &RareConfig) -> (Vec<TaskOutcome>, usize) {
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
    let outcomes = run_rare(data, config, &run);
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

#[test]
fn the_release_retrievals_are_one_joint_context_per_retriever_by_default() {
    // Two retrievers' top chunks for the original query and its perturbation, as RARE's
    // run_retrievals.py writes them; one list names a chunk the corpus lacks.
    let mut data = data();
    let r = |retriever: &str, query: &str, ids: &[&str]| RealRetrieval {
        retriever: retriever.into(),
        query: query.into(),
        chunk_ids: ids.iter().map(|s| s.to_string()).collect(),
    };
    data.questions[0].retrievals = vec![
        r("e5-large", "original", &["c2", "c3", "c1"]),
        r("e5-large", "word_level", &["c2", "missing", "c3"]),
        r("jina", "original", &["c3", "c2"]),
        r("jina", "word_level", &["c3", "c1"]),
    ];
    let (outcomes, _) = run_on(
        Script {
            probe: GOLD,
            ground_truth: GOLD,
            back_translation: GOLD,
            regex_delete: GOLD,
            retrieval: REFUSE,
        },
        &data,
        &RareConfig::default(),
    );
    let met = outcomes.iter().find(|o| o.task == "rare_met").unwrap();
    // 2 queries x (ground truth, back translation, regex delete, 2 retrievers).
    assert_eq!(met.scored.len(), 10);
    let retrieval: Vec<(&str, &str, &str)> = met
        .scored
        .iter()
        .filter(|s| s.groups["document"] == "retrieval")
        .map(|s| {
            (
                s.groups["query"].as_str(),
                s.groups["retriever"].as_str(),
                s.item_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        retrieval,
        [
            ("original", "e5-large", "q1|original|retrieval@e5-large"),
            ("original", "jina", "q1|original|retrieval@jina"),
            ("word_level", "e5-large", "q1|word_level|retrieval@e5-large"),
            ("word_level", "jina", "q1|word_level|retrieval@jina"),
        ]
    );
    assert_eq!(met.problems.get("retrieved_chunk_missing"), Some(&1));
    // Per-retriever real-retrieval robustness, over the original query's cells.
    let by_retriever: Vec<(&str, usize)> = met
        .metrics
        .iter()
        .filter(|m| m.task == "rare_retrieval" && m.group.starts_with("retriever="))
        .map(|m| (m.group.as_str(), m.n))
        .collect();
    assert_eq!(
        by_retriever,
        [("retriever=e5-large", 1), ("retriever=jina", 1)]
    );
}
