//! The offline backend answers with each task's own rule, versioned by the task: the call log
//! and the cache keys carry the rule's version. The tasks' rules themselves are tested in the
//! crates of their stages.

use crate::common;

use std::path::Path;

use common::{Keywords, KeywordsInput};
use noisebench_llm::{Llm, LlmConfig, Task};

#[test]
fn the_offline_handle_logs_calls_with_the_rules_version() {
    let llm = Llm::offline();
    let inputs = vec![
        KeywordsInput {
            claim: "a b c".into(),
            max_keywords: 2,
        },
        KeywordsInput {
            claim: "Taxes rose sharply".into(),
            max_keywords: 2,
        },
    ];
    let r = llm.run_batch::<Keywords>("queries", inputs);
    assert!(r.iter().all(Result::is_ok));
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 2);
    assert!(log.iter().all(|c| c.backend == "offline"
        && c.prompt_version == Keywords::OFFLINE_VERSION
        && c.stage == "queries"));
    assert_eq!(llm.provenance(Keywords::NAME), "offline");
}

#[test]
fn the_offline_backend_can_cache_and_replay_in_cache_only_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LlmConfig::default();
    cfg.cache.dir = dir.path().to_path_buf();
    cfg.cache.offline = true;
    cfg.embeddings.backend = noisebench_llm::EmbeddingBackend::Hashed;
    let llm = Llm::new(cfg.clone(), Path::new("/")).unwrap();
    let input = KeywordsInput {
        claim: "Taxes rose sharply".into(),
        max_keywords: 2,
    };
    let a = llm.run::<Keywords>("q", input.clone()).unwrap();
    assert!(!a.cache_hit);
    cfg.cache.mode = noisebench_llm::CacheMode::CacheOnly;
    let ro = Llm::new(cfg, Path::new("/")).unwrap();
    let b = ro.run::<Keywords>("q", input).unwrap();
    assert!(b.cache_hit);
    assert_eq!(a.value, b.value);
    assert_eq!(
        ro.run::<Keywords>(
            "q",
            KeywordsInput {
                claim: "new".into(),
                max_keywords: 2
            }
        )
        .unwrap_err()
        .reason(),
        "cache_miss"
    );
}

/// A batch large enough to be prepared on every core, and in more than two windows (8,192 items
/// each), answers, and logs, exactly as its items asked one at a time: the same values in input
/// order, and the same call records (the offline rule answers every item, repeated requests
/// included).
#[test]
fn a_large_batch_answers_and_logs_as_its_items_asked_alone() {
    let claims = ["Taxes rose sharply", "a b c", "Prices fell in May", "Rain"];
    let inputs: Vec<KeywordsInput> = (0..17_000)
        .map(|i| KeywordsInput {
            // Every third item makes the same request.
            claim: if i % 3 == 2 {
                claims[0].to_string()
            } else {
                format!("{} {}", claims[i % 4], i / 4)
            },
            max_keywords: 1 + i % 3,
        })
        .collect();
    let batch = Llm::offline();
    let together = batch.run_batch::<Keywords>("queries", inputs.clone());
    let alone = Llm::offline();
    assert_eq!(together.len(), inputs.len());
    let mut hashes = std::collections::HashSet::new();
    for (i, (input, got)) in inputs.iter().zip(&together).enumerate() {
        let want = alone.run::<Keywords>("queries", input.clone()).unwrap();
        let got = got.as_ref().unwrap();
        assert_eq!(got.value, want.value, "item {i}");
        assert_eq!(got.request_hash, want.request_hash, "item {i}");
        assert_eq!(got.cache_hit, want.cache_hit, "item {i}");
        hashes.insert(got.request_hash.clone());
    }
    assert!(hashes.len() < inputs.len(), "the batch repeats requests");
    let calls = |llm: &Llm| {
        let mut log: Vec<(String, String, bool)> = llm
            .drain_call_log()
            .into_iter()
            .map(|c| (c.id, c.request_hash, c.cache_hit))
            .collect();
        log.sort();
        log
    };
    assert_eq!(calls(&batch), calls(&alone));
}
