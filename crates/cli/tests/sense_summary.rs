//! The run summary's line per model: how many of its answers the sense checks dropped, by
//! reason, and the tasks whose answers never changed; offline rules are not models.

use noisebench_cli::LlmTotals;
use noisebench_core::LlmCall;

fn call(backend: &str, model: &str, task: &str, error: Option<&str>) -> LlmCall {
    LlmCall {
        backend: backend.into(),
        model: model.into(),
        task: task.into(),
        error: error.map(String::from),
        ..LlmCall::default()
    }
}

#[test]
fn the_share_of_sense_drops_per_model_is_in_the_summary() {
    let calls = vec![
        call(
            "openai",
            "small",
            "claim_to_question",
            Some("copied_example: answer not about its input: copied_example: ..."),
        ),
        call(
            "openai",
            "small",
            "claim_to_question",
            Some("off_topic: answer not about its input: off_topic: ..."),
        ),
        call("openai", "small", "keywords", None),
        call(
            "openai",
            "small",
            "stance_reasoned",
            Some("truncated: answer cut off at max_tokens 768"),
        ),
        call("openai", "small", "embedding", None),
        call("openai", "big", "keywords", None),
        call("offline", "rules", "keywords", None),
    ];
    let mut t = LlmTotals::of(&calls);
    let small = &t.sense["openai:small"];
    assert_eq!(
        (small.answers, small.dropped),
        (4, 2),
        "embeddings are not answers"
    );
    assert_eq!(small.reasons["copied_example"], 1);
    assert_eq!(small.reasons["off_topic"], 1);
    assert!(
        !small.reasons.contains_key("truncated"),
        "a failure, not a sense drop"
    );
    assert_eq!(t.sense["openai:big"].dropped, 0);
    assert!(!t.sense.contains_key("offline:rules"));
    t.constant_answers = vec!["stance_text (openai:small): \"support\" for all 6 answers".into()];
    let text = t.render();
    assert!(
        text.contains("sense checks, openai:small: 2 of 4 answers dropped (50.0%): copied_example=1 off_topic=1"),
        "{text}"
    );
    assert!(
        text.contains("sense checks, openai:big: 0 of 1 answers dropped (0.0%)\n"),
        "{text}"
    );
    assert!(text.ends_with("the same answer all run long: stance_text (openai:small): \"support\" for all 6 answers"), "{text}");
    // An offline run's summary is the one line it always was.
    let offline = LlmTotals::of(&[call("offline", "rules", "keywords", None)]);
    assert!(!offline.render().contains('\n'));
    assert!(
        serde_json::to_value(&offline)
            .unwrap()
            .get("sense")
            .is_none()
    );
}
