//! RAGuard's tasks against a fake endpoint scripted per prompt: two-shot examples come from the
//! train side, one true and one false claim; answers that are empty, refuse, ramble or are out of
//! scope are each counted and scored wrong while the run goes on; Table 4's drops are the
//! hand-computed differences from zero-context.

use std::sync::{Arc, Mutex};

use noisebench_eval::RaguardConfig;
use noisebench_eval::RefusalConfig;
use noisebench_eval::answers::RefusalDetector;
use noisebench_eval::metrics::Bootstrap;
use noisebench_eval::raguard::{RaguardRun, is_test, run_raguard};
use noisebench_eval::{
    Credibility, DocLabel, EvalClaim, EvalData, EvalDocument, Plain, TaskOutcome,
};
use noisebench_llm::Llm;
use noisebench_testkit::{FakeServer, Reply, first_message, repo_root, strict_openai_config};

const SEED: u64 = 3;

/// Twelve claims, alternately true and false, each with a supporting and a misleading document.
fn data() -> EvalData {
    let mut data = EvalData {
        name: "fixture".into(),
        ..Default::default()
    };
    for i in 0..12 {
        let id = format!("c{i}");
        let verdict = i % 2 == 0;
        let docs: Vec<String> = ["s", "m"].iter().map(|k| format!("{id}{k}")).collect();
        for (doc, label) in docs
            .iter()
            .zip([DocLabel::Supporting, DocLabel::Misleading])
        {
            data.documents.push(EvalDocument {
                id: doc.clone(),
                claim_id: Some(id.clone()),
                title: String::new(),
                text: format!("Post {doc} about claim number {i}."),
                label: Some(label),
                url: None,
                domain: Some("reddit.com".into()),
                credibility: Credibility::default(),
            });
        }
        data.claims.push(EvalClaim {
            id: id.clone(),
            text: format!("Claim number {i} says something checkable."),
            question: None,
            verdict,
            original_verdict: None,
            documents: docs,
            claim_date: None,
        });
    }
    data
}

fn config() -> RaguardConfig {
    RaguardConfig {
        test_share: 0.6,
        ..Default::default()
    }
}

fn run_with(
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (Vec<TaskOutcome>, Vec<String>) {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = prompts.clone();
    let server = FakeServer::answering(move |body| {
        let user = first_message(body, "user").to_string();
        let text = answer(&user);
        seen.lock().unwrap().push(user);
        Reply::Content(serde_json::json!({"reasoning": null, "answer": text}).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let llm = Llm::from_value(
        &strict_openai_config(&server.url(), &dir.path().join("cache")),
        &repo_root(),
    )
    .unwrap();
    let refusal = RefusalDetector::new(&RefusalConfig::default()).unwrap();
    let run = RaguardRun {
        llm: &llm,
        generator: &Plain,
        refusal: &refusal,
        max_answer_words: 60,
        boot: Bootstrap {
            samples: 200,
            seed: SEED,
        },
        seed: SEED,
        limit: None,
        stage: "eval",
    };
    let outcomes = run_raguard(&data(), &config(), &run);
    let prompts = prompts.lock().unwrap().clone();
    (outcomes, prompts)
}

fn outcome<'a>(outcomes: &'a [TaskOutcome], task: &str) -> &'a TaskOutcome {
    outcomes.iter().find(|o| o.task == task).unwrap()
}

fn value(o: &TaskOutcome, metric: &str) -> f64 {
    o.overall(metric).unwrap().value
}

/// The claim number a prompt's question is about (the last "Claim number N" in it: examples
/// come first).
fn asked(prompt: &str) -> usize {
    let at = prompt.rfind("Claim number ").unwrap() + "Claim number ".len();
    prompt[at..].split(' ').next().unwrap().parse().unwrap()
}

/// Every claim number a text names.
fn numbers(text: &str) -> Vec<usize> {
    text.split("Claim number ")
        .skip(1)
        .map(|rest| rest.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn examples_come_from_the_train_side_one_true_and_one_false() {
    let test: Vec<usize> = (0..12)
        .filter(|i| is_test(SEED, &format!("c{i}"), 0.6))
        .collect();
    let train: Vec<usize> = (0..12).filter(|i| !test.contains(i)).collect();
    assert!(train.iter().any(|i| i % 2 == 0) && train.iter().any(|i| i % 2 == 1));
    let (outcomes, prompts) = run_with(|_| "true".into());
    assert_eq!(
        outcome(&outcomes, "raguard_zero_context").scored.len(),
        test.len()
    );
    for p in &prompts {
        let examples = &p[..p
            .find("Passage 1")
            .or_else(|| p.rfind("Question:"))
            .unwrap()];
        assert_eq!(examples.matches("Answer: true").count(), 1, "{p}");
        assert_eq!(examples.matches("Answer: false").count(), 1, "{p}");
        for n in numbers(examples) {
            assert!(train.contains(&n), "example claim {n} is on the test side");
        }
        assert!(test.contains(&asked(p)));
    }
    // Every prompt of a run shows the same two examples.
    let first = |p: &String| p[..p.find("Question:").unwrap()].to_string();
    assert!(prompts.iter().all(|p| first(p) == first(&prompts[0])));
}

#[test]
fn empty_refusing_rambling_and_out_of_scope_answers_are_counted_and_wrong() {
    let (outcomes, _) = run_with(|prompt| {
        if prompt.contains("Passage 1") {
            return "true".into();
        }
        match asked(prompt) % 4 {
            0 => String::new(),
            1 => "I don't know, the claim cannot be determined.".into(),
            2 => "word ".repeat(80),
            _ => "mostly true".into(),
        }
    });
    let zero = outcome(&outcomes, "raguard_zero_context");
    let test: Vec<usize> = (0..12)
        .filter(|i| is_test(SEED, &format!("c{i}"), 0.6))
        .collect();
    let count = |r: usize| test.iter().filter(|i| *i % 4 == r).count();
    let problems = |k: &str| zero.problems.get(k).copied().unwrap_or(0);
    assert_eq!(problems("empty_answer"), count(0));
    assert_eq!(problems("refusal"), count(1));
    assert_eq!(problems("rambling"), count(2));
    assert_eq!(problems("out_of_scope"), count(3));
    assert!(zero.scored.iter().all(|s| s.correct == Some(false)));
    assert!(zero.scored.iter().all(|s| s.parsed_answer.is_none()));
    assert_eq!(value(zero, "accuracy"), 0.0);
}

#[test]
fn drops_against_zero_context_are_table_4s() {
    // Zero-context always right; with a document always "false".
    let (outcomes, _) = run_with(|prompt| {
        if prompt.contains("Passage 1") {
            "false".into()
        } else {
            // Claim numbers are even for true claims.
            if asked(prompt).is_multiple_of(2) {
                "true"
            } else {
                "false"
            }
            .into()
        }
    });
    let zero = outcome(&outcomes, "raguard_zero_context");
    assert_eq!(value(zero, "accuracy"), 1.0);
    for task in ["raguard_rag_top1", "raguard_rag_top5", "raguard_oracle_all"] {
        let o = outcome(&outcomes, task);
        let false_share =
            o.scored.iter().filter(|s| s.gold == "false").count() as f64 / o.scored.len() as f64;
        assert_eq!(value(o, "accuracy"), false_share, "{task}");
        assert!((value(o, "absolute_drop") - (false_share - 1.0)).abs() < 1e-12);
        assert!((value(o, "relative_drop") - (false_share - 1.0)).abs() < 1e-12);
    }
    // Misleading-only: one misleading document per test claim, and every claim has one.
    let m = outcome(&outcomes, "raguard_oracle_misleading");
    assert_eq!(m.scored.len(), zero.scored.len());
    assert_eq!(value(m, "misleading_retrieval_recall"), 1.0);
    assert!(m.scored.iter().all(|s| s.groups["label"] == "misleading"));
}

#[test]
fn claims_alone_run_zero_context_and_say_the_rest_did_not_run() {
    use noisebench_eval::{EvalConfig, evaluate};
    let mut data = data();
    data.documents.clear();
    for c in &mut data.claims {
        c.documents.clear();
    }
    let config = EvalConfig {
        families: vec!["raguard".into(), "confact".into()],
        bootstrap_samples: 0,
        ..EvalConfig::default()
    };
    let e = evaluate(&data, &Llm::offline(), &config).unwrap();
    let tasks: Vec<&str> = e.outcomes.iter().map(|o| o.task.as_str()).collect();
    assert_eq!(tasks, ["raguard_zero_context"]);
    let test_side = data
        .claims
        .iter()
        .filter(|c| is_test(config.seed, &c.id, config.raguard.test_share))
        .count();
    assert!(test_side > 0);
    assert_eq!(e.outcomes[0].scored.len(), test_side);
    assert!(e.skipped["raguard_rag_and_oracle"].contains("only zero_context"));
    assert_eq!(e.skipped["confact"], "no claims with documents");
}
