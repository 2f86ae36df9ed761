//! Live backends: ignored by default; each names the environment variables it needs.
//! `cargo test -p noisebench-search --test it live:: -- --ignored` (with the variables set).

use crate::common;

use std::sync::Arc;

use common::*;
use noisebench_core::{Query, Rows, SearchHit};
use noisebench_search::SearchStage;
use noisebench_web::Web;
use serde_json::json;

fn live_search(backend: serde_json::Value) -> Vec<SearchHit> {
    live_search_with(backend, json!({}))
}

/// `web`: the `[web]` table the SearxNG backend fetches through.
fn live_search_with(backend: serde_json::Value, web: serde_json::Value) -> Vec<SearchHit> {
    let web = Arc::new(Web::from_value(&web, &root()).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let q = Query {
        id: "q_live".into(),
        claim_id: "cl_live".into(),
        kind: "keywords".into(),
        text: "wind turbines birds cats".into(),
        provenance: "rule".into(),
        llm_request: None,
    };
    let mut out = run(
        &SearchStage::new(web),
        json!({"top_k": 5, "backends": [backend]}),
        inputs(vec![("queries", Rows::Queries(vec![q]))]),
        &ctx(dir.path(), "search"),
    );
    assert!(
        out.report.drops.iter().all(|d| d.reason == "missing_url"),
        "{:?}",
        out.report.drops
    );
    let hits: Vec<SearchHit> = table(&mut out, "search_hits");
    assert!(!hits.is_empty() && hits.len() <= 5);
    hits
}

#[test]
#[ignore = "needs GOOGLE_API_KEY and GOOGLE_CSE_ID"]
fn live_google() {
    live_search(json!({"type": "google"}));
}

#[test]
#[ignore = "needs BRAVE_API_KEY"]
fn live_brave() {
    live_search(json!({"type": "brave"}));
}

#[test]
#[ignore = "needs REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET"]
fn live_reddit() {
    let hits = live_search(json!({"type": "reddit"}));
    assert!(
        hits.iter()
            .all(|h| h.url.starts_with("https://www.reddit.com/"))
    );
}

#[test]
#[ignore = "needs SEARXNG_URL (an instance with the json format enabled); a self-hosted instance on \
            a loopback or private address also needs NOISEBENCH_ALLOW_ADDRESSES=loopback,private"]
fn live_searxng() {
    // A self-hosted instance usually lives on an internal address, which the web layer refuses
    // unless allowed; the allowance comes from the environment, never by default.
    let allow: Vec<String> = std::env::var("NOISEBENCH_ALLOW_ADDRESSES")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    live_search_with(
        json!({"type": "searxng"}),
        json!({"allow_addresses": allow, "robots": false}),
    );
}
