//! The offline backend answers with each task's own rule, versioned by the task: the call log
//! and the cache keys carry the rule's version. The tasks' rules themselves are tested in the
//! crates of their stages.

mod common;

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
