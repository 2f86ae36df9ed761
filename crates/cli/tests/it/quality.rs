//! The quality card on the demo: every published version has `quality.json` beside its
//! manifest (hashed in it), a "Quality" section in its card and `rai:dataAnnotationAnalysis` in
//! its Croissant file and a section in its report page; the demo passes the quality gates; `noisebench quality --compare` says
//! how each number moved; a gate the demo cannot pass stops the publish unless
//! `--allow-degraded`.

use std::sync::Arc;

use noisebench_cli::{Workspace, build_snapshot, quality_moves, quality_text, version_quality};
use noisebench_core::{CheckStatus, NoProgress};
use noisebench_snapshot::{CROISSANT, Manifest, PublishOptions, PublishOutcome};

#[test]
fn the_demo_has_a_quality_card_and_passes_its_gates() {
    let (_, snapshot) = crate::shared::demo();
    let manifest = Manifest::read(snapshot).unwrap();
    assert!(manifest.metadata.contains_key("quality.json"));
    assert!(noisebench_snapshot::verify(snapshot).ok());
    let report = version_quality(snapshot).unwrap();
    // Both label methods ran on the claims track; the report track has questions and splits.
    let agreement = report.agreement.as_ref().unwrap();
    assert!(agreement.pairs > 0);
    let grounding = report.grounding.as_ref().unwrap();
    assert!(grounding.questions > 0);
    assert!(report.duplicates.cross_split.is_some());
    assert!(report.shortcut.is_some());
    assert_eq!(report.closed_book.status, "not_run");
    for t in ["questions", "claims", "documents"] {
        assert!(report.duplicates.tables.contains_key(t), "{t}");
    }
    // The gates ran before publishing and passed.
    let gates: Vec<_> = manifest
        .checks
        .iter()
        .filter(|c| c.table == "quality")
        .collect();
    assert_eq!(gates.len(), 3, "{gates:?}");
    assert!(
        gates.iter().all(|g| g.status == CheckStatus::Passed),
        "{gates:?}"
    );
    let card = std::fs::read_to_string(snapshot.join("README.md")).unwrap();
    assert!(card.contains("## Quality"), "{card}");
    assert!(card.contains("grounded questions"));
    let croissant: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snapshot.join(CROISSANT)).unwrap()).unwrap();
    let analysis = croissant["rai:dataAnnotationAnalysis"].as_str().unwrap();
    assert!(analysis.contains("Cohen's kappa"), "{analysis}");
    // The report page beside the version has the card's section.
    let page = snapshot.with_file_name(format!("{}.report.html", manifest.version));
    let page = std::fs::read_to_string(page).unwrap();
    let section = page.split("<section id=\"quality\">").nth(1).unwrap();
    let section = section.split("</section>").next().unwrap();
    assert!(section.contains("grounded questions"), "{section}");
    // Compared with itself, nothing moved.
    let text = quality_text(snapshot, Some(snapshot)).unwrap();
    assert!(text.contains("grounded share"), "{text}");
    assert!(text.contains("(+0.000)"), "{text}");
}

#[test]
fn a_quality_gate_the_build_fails_stops_the_publish_unless_degraded() {
    let (root, _) = crate::shared::demo_copy();
    // A first version again: the copy's published one has the same tables, so the build would
    // find nothing to publish.
    std::fs::remove_dir_all(root.join("snapshots/demo")).unwrap();
    let pipeline = root.join("pipelines/demo.toml");
    let mut text = std::fs::read_to_string(&pipeline).unwrap();
    // The demo's kappa is about 0.91 (docs/quality.md).
    text.push_str("\n[quality.gates]\nmin_kappa = 0.99\n");
    std::fs::write(&pipeline, text).unwrap();
    let ws = Workspace::at(&root, Arc::new(NoProgress));
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let withheld = built.withheld.expect("the gate stops the publish");
    assert!(withheld.contains("min_kappa"), "{withheld}");
    assert!(built.outcome.is_none());

    let mut ws = Workspace::at(&root, Arc::new(NoProgress));
    ws.allow_degraded = true;
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let Some(PublishOutcome::Published { dir, .. }) = built.outcome else {
        panic!("--allow-degraded publishes: {:?}", built.withheld)
    };
    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.contains("min_kappa"), "{card}");
    // `diff` of two versions with cards lists the moves; one without a card, none.
    let (_, demo) = crate::shared::demo();
    let moves = quality_moves(demo, &dir).unwrap().unwrap();
    assert!(
        moves.contains("## Quality") && moves.contains("kappa: 0.909 -> 0.909"),
        "{moves}"
    );
}

/// Planted questions whose gold answers a fake endpoint knows: one that answers each question
/// closed-book with its gold answer (every question flagged), one with a wrong answer (none
/// flagged; the judge, answered by its offline rule, finds it wrong).
mod closed_book {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use noisebench_cli::closed_book;
    use noisebench_core::Question;
    use noisebench_llm::Llm;
    use noisebench_quality::QualityConfig;
    use noisebench_testkit::{FakeServer, Reply, openai_config};
    use serde_json::{Value, json};

    fn questions() -> Vec<Question> {
        let q = |id: &str, kind: &str, question: &str, answer: &str| Question {
            id: id.into(),
            kind: kind.into(),
            question: question.into(),
            answer: answer.into(),
            ..Default::default()
        };
        vec![
            q(
                "q1",
                "single_hop",
                "Which company leases Westgate Basin?",
                "Ostrava Sawmill Group",
            ),
            q(
                "q2",
                "single_hop",
                "Where is Halvorsen Freight based?",
                "Tromso",
            ),
            q(
                "q3",
                "star_shaped",
                "Who audits both Kestrel Mining and Orla Foods?",
                "Brightwater LLP",
            ),
        ]
    }

    /// A fake model answering `eval_answer` from `answers` (question -> reply), any other task
    /// by its offline rule over the input the request carries.
    fn endpoint(answers: BTreeMap<String, String>) -> FakeServer {
        let tasks: BTreeMap<&str, noisebench_llm::TaskInfo> = noisebench_eval::tasks()
            .into_iter()
            .map(|t| (t.name, t))
            .collect();
        let tasks = Arc::new(tasks);
        FakeServer::answering(move |body: &Value| {
            let task = body["noisebench_task"]["name"].as_str().unwrap_or("");
            let input = &body["noisebench_task"]["input"];
            let reply = if task == "eval_answer" {
                assert!(
                    input["passages"].as_array().is_some_and(|p| p.is_empty()),
                    "closed-book: no passage"
                );
                let q = input["question"].as_str().unwrap_or("");
                json!({"reasoning": null, "answer": answers.get(q).cloned().unwrap_or_default()})
            } else {
                tasks[task].offline(input).unwrap()
            };
            Reply::Content(reply.to_string())
        })
    }

    /// The card's configuration with the closed-book check on.
    /// The default: on whenever a model is configured.
    fn on() -> QualityConfig {
        let config = QualityConfig::default();
        assert!(config.closed_book.enabled);
        config
    }

    fn llm(server: &FakeServer, cache: &std::path::Path) -> Llm {
        let mut config = openai_config(&server.url(), cache);
        config["models"]["fake"]["send_task"] = json!(true);
        Llm::from_value(&config, cache).unwrap()
    }

    #[test]
    fn a_model_that_knows_every_answer_has_every_question_flagged() {
        let qs = questions();
        let right = qs
            .iter()
            .map(|q| (q.question.clone(), q.answer.clone()))
            .collect();
        let server = endpoint(right);
        let dir = tempfile::tempdir().unwrap();
        let llm = llm(&server, dir.path());
        let c = closed_book(&llm, &qs, &on()).unwrap();
        assert!(c.ran(), "{c:?}");
        assert_eq!((c.asked, c.failed), (3, 0));
        assert_eq!((c.all.judged, c.all.right), (3, 3));
        assert_eq!(c.all.share, 1.0);
        assert_eq!(c.kinds["single_hop"].right, 2);
        assert_eq!(c.kinds["star_shaped"].right, 1);
        assert_eq!(c.flagged, vec!["q1", "q2", "q3"]);
        // Through the LLM layer: logged under the quality step, and cached (asked again, no
        // request is sent).
        let calls = llm.drain_call_log();
        assert_eq!(calls.len(), 3);
        assert!(
            calls
                .iter()
                .all(|c| c.stage == "quality" && c.task == "eval_answer")
        );
        let sent = server.requests();
        let again = closed_book(&llm, &qs, &on()).unwrap();
        assert_eq!(again, c);
        assert_eq!(server.requests(), sent);
        // The card and the comparison show it.
        let mut report = noisebench_quality::measure(
            &noisebench_quality::Tables {
                questions: &qs,
                ..Default::default()
            },
            &QualityConfig::default(),
        );
        report.closed_book = c;
        let card = noisebench_quality::render_markdown(&report);
        assert!(card.contains("3 of 3 (100.0%)"), "{card}");
        assert!(
            card.contains("Questions answered right without retrieval"),
            "{card}"
        );
    }

    #[test]
    fn a_model_that_knows_no_answer_has_none_flagged_and_offline_does_not_run() {
        let qs = questions();
        let wrong = qs
            .iter()
            .map(|q| (q.question.clone(), "Lisbon Harbour Trust".to_string()))
            .collect();
        let server = endpoint(wrong);
        let dir = tempfile::tempdir().unwrap();
        let llm = llm(&server, dir.path());
        let c = closed_book(&llm, &qs, &on()).unwrap();
        assert!(c.ran());
        assert_eq!((c.all.judged, c.all.right), (3, 0));
        assert!(c.flagged.is_empty());
        // The wrong answers went to the judge.
        let calls = llm.drain_call_log();
        assert_eq!(calls.iter().filter(|c| c.task == "answer_judge").count(), 3);
        // At most `max_questions` are asked.
        let mut config = on();
        config.closed_book.max_questions = Some(2);
        assert_eq!(closed_book(&llm, &qs, &config).unwrap().asked, 2);
        // The offline backend, or the check turned off: not run, nothing asked.
        let offline = closed_book(&Llm::offline(), &qs, &on()).unwrap();
        assert!(!offline.ran());
        assert!(offline.reason.contains("offline"), "{}", offline.reason);
        let sent = server.requests();
        config.closed_book.enabled = false;
        assert!(!closed_book(&llm, &qs, &config).unwrap().ran());
        assert_eq!(server.requests(), sent);
    }
}
