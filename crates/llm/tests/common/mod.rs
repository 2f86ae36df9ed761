//! Helpers for this crate's tests and bench that know its types. The fake OpenAI-compatible
//! server is `noisebench_testkit::FakeServer`.
#![allow(dead_code)]

pub fn keywords(claim: &str) -> noisebench_llm::task::KeywordsInput {
    noisebench_llm::task::KeywordsInput {
        claim: claim.into(),
        max_keywords: 5,
    }
}
