//! Quote mode: requests counted with the model's tokenizer and never sent, stand-in answers from
//! the offline rule, the sample sent for real and cached, the prompt-cache share of a build.

use crate::common;

use std::path::Path;

use common::{Keywords, keywords};
use noisebench_llm::{Llm, QuoteSettings};
use noisebench_testkit::{FakeServer, KEYWORDS_OK, Reply, openai_config};
use serde_json::{Value, json};

fn config(url: &str, cache: &Path) -> Value {
    let mut cfg = openai_config(url, cache);
    // An OpenAI model name: counted with tiktoken's o200k_base, as the fake server counts.
    cfg["models"]["fake"]["name"] = json!("gpt-4o-mini");
    cfg
}

fn claims(n: usize) -> Vec<common::KeywordsInput> {
    (0..n)
        .map(|i| keywords(&format!("Claim number {i} about the moon landing")))
        .collect()
}

#[test]
fn a_quote_sends_nothing_and_counts_what_the_server_would_bill() {
    let srv = FakeServer::start_with(Reply::Content(KEYWORDS_OK.into()), Default::default());
    srv.count_usage_like_openai();
    let dir = tempfile::tempdir().unwrap();
    let quoting = Llm::from_value(&config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    quoting.start_quote(QuoteSettings::default()).unwrap();
    let answers = quoting.run_batch::<Keywords>("queries", claims(5));
    assert_eq!(srv.requests(), 0, "a quote sends no request");
    // Stand-ins: the offline rule's answers, never cached.
    for (a, c) in answers.iter().zip(claims(5)) {
        let a = a.as_ref().unwrap();
        assert_eq!(a.value, <Keywords as noisebench_llm::Task>::offline(&c));
        assert!(!a.cache_hit);
    }
    let calls = quoting.take_quote_calls();
    assert_eq!(calls.len(), 5);
    assert!(calls.iter().all(|c| !c.sampled && c.stage == "queries"));
    assert_eq!(quoting.quote_tokenizers()["fake"], "tiktoken o200k_base");

    // The same requests sent for real: the server's prompt tokens are the quote's, exactly.
    let live = Llm::from_value(&config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let r = live.run_batch::<Keywords>("queries", claims(5));
    assert!(r.iter().all(|a| a.as_ref().is_ok_and(|a| !a.cache_hit)));
    let log = live.drain_call_log();
    let billed: u64 = log.iter().map(|c| c.tokens_in as u64).sum();
    let quoted: u64 = calls.iter().map(|c| c.input_tokens).sum();
    assert_eq!(billed, quoted);
}

#[test]
fn the_sample_is_sent_and_cached_and_the_rest_stand_in() {
    let srv = FakeServer::start_with(Reply::Content(KEYWORDS_OK.into()), Default::default());
    let dir = tempfile::tempdir().unwrap();
    let quoting = Llm::from_value(&config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    quoting.start_quote(QuoteSettings { sample: 2 }).unwrap();
    let answers = quoting.run_batch::<Keywords>("queries", claims(6));
    assert_eq!(srv.requests(), 2);
    let calls = quoting.take_quote_calls();
    assert_eq!(calls.iter().filter(|c| c.sampled).count(), 2);
    assert_eq!(calls.iter().filter(|c| !c.sampled).count(), 4);
    // The sample's answers are the model's, logged as calls; the build asks them from the cache.
    let sampled: Vec<&String> = calls
        .iter()
        .filter(|c| c.sampled)
        .map(|c| &c.request_hash)
        .collect();
    let log = quoting.drain_call_log();
    assert_eq!(log.len(), 2);
    assert!(log.iter().all(|c| sampled.contains(&&c.request_hash)));
    let model_answers = answers
        .iter()
        .filter(|a| a.as_ref().unwrap().value.keywords == ["alpha", "beta"])
        .count();
    assert_eq!(model_answers, 2);
    let build = Llm::from_value(&config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    let r = build.run_batch::<Keywords>("queries", claims(6));
    assert_eq!(
        r.iter()
            .filter(|a| a.as_ref().is_ok_and(|a| a.cache_hit))
            .count(),
        2
    );
}

#[test]
fn repeated_long_prefixes_are_counted_as_cacheable() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let quoting = Llm::from_value(&config(&srv.url(), dir.path()), Path::new("/")).unwrap();
    quoting.start_quote(QuoteSettings::default()).unwrap();
    // Two claims that share a long opening: the keywords prompt shows the claim after the
    // instructions, so the second request repeats a prefix of well over 1,024 tokens.
    let long = "The moon landing was filmed in a studio. ".repeat(200);
    let inputs = vec![
        keywords(&format!("{long} First.")),
        keywords(&format!("{long} Second.")),
    ];
    quoting.run_batch::<Keywords>("queries", inputs);
    let calls = quoting.take_quote_calls();
    assert_eq!(calls[0].prefix_cached, 0);
    assert!(calls[1].prefix_cached >= 1024, "{:?}", calls[1]);
    assert!(calls[1].prefix_cached <= calls[1].input_tokens);
    assert_eq!(srv.requests(), 0);
}
