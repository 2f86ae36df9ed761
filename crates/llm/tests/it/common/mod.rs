//! Helpers for this crate's tests and bench. The engine knows no task, so the tests bring their
//! own: [`Keywords`], shaped like the queries stage's `keywords` task so the repository's
//! `pipelines/prompts/keywords.md` renders it. The fake OpenAI-compatible server is
//! `noisebench_testkit::FakeServer`.
#![allow(dead_code)]

use noisebench_llm::Task;
use serde::{Deserialize, Serialize};

/// `keywords`, for the engine's tests: search keywords for a claim.
pub struct Keywords;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeywordsInput {
    pub claim: String,
    pub max_keywords: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeywordsOutput {
    pub keywords: Vec<String>,
}

impl Task for Keywords {
    const NAME: &'static str = "keywords";
    const OFFLINE_VERSION: &'static str = "test-1";
    type Input = KeywordsInput;
    type Output = KeywordsOutput;
    fn check(input: &KeywordsInput, o: &KeywordsOutput) -> Result<(), String> {
        if o.keywords.iter().all(|k| k.trim().is_empty()) {
            return Err("`keywords` holds no keyword".into());
        }
        if o.keywords.len() > input.max_keywords.max(1) * 2 {
            return Err(format!(
                "`keywords` has {} items, asked for at most {}",
                o.keywords.len(),
                input.max_keywords
            ));
        }
        Ok(())
    }
    /// The claim's first words.
    fn offline(input: &KeywordsInput) -> KeywordsOutput {
        KeywordsOutput {
            keywords: input
                .claim
                .split_whitespace()
                .take(input.max_keywords.max(1))
                .map(String::from)
                .collect(),
        }
    }
}

pub fn keywords(claim: &str) -> KeywordsInput {
    KeywordsInput {
        claim: claim.into(),
        max_keywords: 5,
    }
}
