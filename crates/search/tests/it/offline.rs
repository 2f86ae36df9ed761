//! The three stages over the fixtures with no network: the offline LLM, the Reddit dump and the
//! fixture search backend, documents replayed from fixtures/web.

use crate::common;

use std::sync::Arc;

use common::*;
use noisebench_core::{ClaimDocument, Document, Passage, Query, Rows, SearchHit};
use noisebench_llm::Llm;
use noisebench_search::{DocumentsStage, QueriesStage, SearchStage};
use noisebench_web::Web;
use serde_json::json;

fn replay_web() -> Arc<Web> {
    Arc::new(
        Web::from_value(
            &json!({"mode": "replay", "replay_fixtures": "fixtures/web"}),
            &root(),
        )
        .unwrap(),
    )
}

const LEMON: &str = "Drinking hot water with lemon every hour kills the coronavirus in the throat.";
const FIVE_G: &str = "5G masts spread the coronavirus, a viral post claims.";
const OIL: &str = "The U.S. produces more oil than any other country in the world.";
const VOTE: &str = "Says a bill would let non-citizens vote in federal elections.";
const WIND: &str = "Wind turbines kill more birds each year than cats do in the United States.";

#[test]
fn claims_to_documents_offline() {
    let dir = tempfile::tempdir().unwrap();
    let claims = vec![
        claim("cl_lemon", LEMON),
        claim("cl_5g", FIVE_G),
        claim("cl_oil", OIL),
        claim("cl_vote", VOTE),
        claim("cl_wind", WIND),
        claim("cl_empty", "  "),
    ];

    // queries
    let qctx = ctx(&dir.path().join("queries"), "queries");
    let mut out = run(
        &QueriesStage::new(Llm::offline()),
        json!({"kinds": ["keywords", "question", "claim"], "counter": true}),
        inputs(vec![("claims", Rows::Claims(claims))]),
        &qctx,
    );
    assert_eq!(reasons(&out).get("empty_claim"), Some(&1));
    let queries: Vec<Query> = table(&mut out, "queries");
    // 5 claims x (keywords, question, claim, 2 counter: the offline draft is undecided).
    assert_eq!(queries.len(), 25);
    let kw = queries
        .iter()
        .find(|q| q.claim_id == "cl_5g" && q.kind == "keywords")
        .unwrap();
    assert_eq!(kw.text, "5G masts spread viral post coronavirus");
    assert_eq!(kw.provenance, "offline");
    assert_eq!(kw.llm_request.as_deref().map(str::len), Some(64));
    let counters: Vec<&str> = queries
        .iter()
        .filter(|q| q.claim_id == "cl_5g" && q.kind == "counter")
        .map(|q| q.text.as_str())
        .collect();
    assert_eq!(
        counters,
        [
            "5G masts spread viral post coronavirus false debunked",
            "5G masts spread viral post coronavirus true confirmed"
        ]
    );
    let claim_q = queries
        .iter()
        .find(|q| q.claim_id == "cl_oil" && q.kind == "claim")
        .unwrap();
    assert_eq!(
        (claim_q.provenance.as_str(), claim_q.llm_request.as_ref()),
        ("rule", None)
    );

    // search: dump for keyword queries, fixtures for all
    let web = replay_web();
    let sctx = ctx(&dir.path().join("search"), "search");
    let config = json!({
        "top_k": 5,
        "backends": [
            {"type": "reddit-dump", "path": "fixtures/reddit/posts.ndjson.zst"},
            {"type": "fixture", "dir": "fixtures/search"}
        ]
    });
    let mut out = run(
        &SearchStage::new(web.clone()),
        config.clone(),
        inputs(vec![("queries", Rows::Queries(queries.clone()))]),
        &sctx,
    );
    let r = reasons(&out);
    assert_eq!(r.get("malformed_response"), Some(&1), "{r:?}");
    // The SearxNG result without `url` and the Reddit listing's `more` child.
    assert_eq!(r.get("missing_url"), Some(&2), "{r:?}");
    // 25 queries, 5 recorded: 20 not recorded; the Brave recording is empty.
    assert_eq!(r.get("not_recorded"), Some(&20), "{r:?}");
    assert!(r.get("no_results").copied().unwrap_or(0) >= 1, "{r:?}");
    let hits: Vec<SearchHit> = table(&mut out, "search_hits");
    let fixture: Vec<(&str, i64, &str)> = hits
        .iter()
        .filter(|h| h.backend == "fixture")
        .map(|h| (h.claim_id.as_str(), h.rank, h.url.as_str()))
        .collect();
    assert_eq!(
        fixture,
        [
            (
                "cl_lemon",
                1,
                "https://www.reuters.com/article/factcheck-hot-water-lemon-coronavirus?utm_source=twitter&utm_medium=social"
            ),
            (
                "cl_lemon",
                2,
                "https://www.cdc.gov/coronavirus/myths.html#hot-drinks"
            ),
            (
                "cl_lemon",
                4,
                "https://health-forum.example.org/threads/lemon-water"
            ),
            (
                "cl_lemon",
                5,
                "https://www.reddit.com/r/Coronavirus/comments/lrtq/does_hot_water_with_lemon_kill_the_coronavirus/"
            ),
            ("cl_5g", 1, "https://www.who.int/news-room/5g-myth"),
            ("cl_5g", 2, "https://mirror.example.net/who-5g-myth"),
            (
                "cl_5g",
                3,
                "https://old.reddit.com/r/conspiracy/comments/q6p0/5g_masts_are_spreading_the_coronavirus_wake_up/?utm_source=share&utm_medium=web2x"
            ),
            (
                "cl_5g",
                4,
                "https://www.reddit.com/r/conspiracy/comments/zz5g01/masts_and_the_virus_who_checked/"
            ),
            ("cl_5g", 5, "https://www.bignews.example/5g-paywall"),
            (
                "cl_wind",
                1,
                "https://www.reddit.com/r/environment/comments/1a1lr/wind_turbines_vs_cats_bird_deaths_in_the_united_states/"
            ),
            (
                "cl_wind",
                2,
                "https://www.reddit.com/r/environment/comments/18uty/do_wind_turbines_kill_more_birds_than_cats/"
            ),
        ]
    );
    let lemon1 = hits
        .iter()
        .find(|h| h.backend == "fixture" && h.rank == 1 && h.claim_id == "cl_lemon")
        .unwrap();
    assert_eq!(lemon1.published.as_deref(), Some("2020-03-24"));
    let forum = hits
        .iter()
        .find(|h| h.url.contains("health-forum"))
        .unwrap();
    assert_eq!(forum.title, None, "missing title kept as null");
    let dump_hits = hits.iter().filter(|h| h.backend == "reddit-dump").count();
    assert!(dump_hits >= 40, "{dump_hits}");
    assert!(
        hits.iter()
            .filter(|h| h.backend == "reddit-dump")
            .all(|h| h.rank <= 5 && h.url.starts_with("https://www.reddit.com/r/"))
    );

    // The same run again gives the same rows (the dump index is reused).
    let mut again = run(
        &SearchStage::new(web.clone()),
        config,
        inputs(vec![("queries", Rows::Queries(queries.clone()))]),
        &sctx,
    );
    assert_eq!(table::<SearchHit>(&mut again, "search_hits"), hits);

    // documents: only the fixture hits, so every case is visible
    let fixture_hits: Vec<SearchHit> = hits
        .iter()
        .filter(|h| h.backend == "fixture")
        .cloned()
        .collect();
    let doc_hits = fixture_hits;
    let dctx = ctx(&dir.path().join("documents"), "documents");
    let mut out = run(
        &DocumentsStage::new(web),
        json!({"reddit_dumps": ["fixtures/reddit/posts.ndjson.zst"]}),
        inputs(vec![
            ("search_hits", Rows::SearchHits(doc_hits)),
            ("queries", Rows::Queries(queries)),
        ]),
        &dctx,
    );
    let r = reasons(&out);
    assert_eq!(r.get("http_403"), Some(&1), "{r:?}");
    assert_eq!(r.get("merged_duplicate"), Some(&1), "{r:?}");
    assert_eq!(out.report.items_in, 11);
    let docs: Vec<Document> = table(&mut out, "documents");
    let links: Vec<ClaimDocument> = table(&mut out, "claim_documents");
    let passages: Vec<Passage> = table(&mut out, "passages");
    type Row<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, Option<&'a str>);
    let summary: Vec<Row> = docs
        .iter()
        .map(|d| {
            (
                d.canonical_url.as_str(),
                d.domain.as_str(),
                d.source_type.as_str(),
                d.published.as_deref(),
                d.language.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "https://www.reuters.com/article/factcheck-hot-water-lemon-coronavirus",
                "reuters.com",
                "mainstream news",
                Some("2020-03-24"),
                Some("eng")
            ),
            (
                "https://www.cdc.gov/coronavirus/myths.html",
                "cdc.gov",
                "government",
                Some("2020-04-02"),
                Some("eng")
            ),
            (
                "https://health-forum.example.org/threads/lemon-water",
                "example.org",
                "non-profit",
                None,
                Some("fra")
            ),
            (
                "https://www.reddit.com/r/coronavirus/comments/lrtq/",
                "reddit.com",
                "social media",
                Some("2021-06-07T02:19:40Z"),
                Some("eng")
            ),
            (
                "https://www.who.int/news-room/5g-myth",
                "who.int",
                "government",
                Some("2020-04-10"),
                Some("eng")
            ),
            (
                "https://www.reddit.com/r/conspiracy/comments/q6p0/",
                "reddit.com",
                "social media",
                Some("2023-05-18T16:43:19Z"),
                Some("eng")
            ),
            (
                "https://www.reddit.com/r/conspiracy/comments/zz5g01/",
                "reddit.com",
                "social media",
                Some("2020-04-04T11:33:20Z"),
                Some("eng")
            ),
            // From the dump, which wins over the search answer's copy of the post.
            (
                "https://www.reddit.com/r/environment/comments/1a1lr/",
                "reddit.com",
                "social media",
                Some("2019-11-10T05:19:40Z"),
                Some("eng")
            ),
            // A title of eight words: too little text to name a language.
            (
                "https://www.reddit.com/r/environment/comments/18uty/",
                "reddit.com",
                "social media",
                Some("2023-06-12T12:13:48Z"),
                None
            ),
        ]
    );
    let forum = &docs[2];
    assert!(forum.text.contains("café de la place"), "{}", forum.text);
    assert!(!forum.text.contains('\u{FFFD}'));
    assert!(
        docs[0].text.starts_with("Social media posts claim"),
        "{}",
        docs[0].text
    );
    assert!(!docs[0].text.contains("Subscribe"), "{}", docs[0].text);
    assert_eq!(
        docs[0].url,
        "https://www.reuters.com/article/factcheck-hot-water-lemon-coronavirus?utm_source=twitter&utm_medium=social"
    );
    assert_eq!(docs[0].archive_ref.as_deref().map(str::len), Some(64));
    let removed = &docs[6];
    assert!(removed.body_removed && removed.text.is_empty() && removed.fetched_at.is_some());
    assert_eq!(removed.subreddit.as_deref(), Some("conspiracy"));
    let from_dump = &docs[5];
    assert!(from_dump.fetched_at.is_none() && from_dump.subreddit.as_deref() == Some("conspiracy"));
    assert!(docs[8].body_removed, "[deleted] body flagged");
    // The WHO page and its mirror are one document; the 5G claim links to it through both hits.
    let who = links.iter().find(|l| l.document_id == docs[4].id).unwrap();
    assert_eq!(who.hit_ids.len(), 2);
    assert_eq!(who.best_rank, 1);
    assert_eq!(who.query_kinds, ["keywords"]);
    assert_eq!(links.len(), 9);
    // Passages cover every document with text, in order, within the limit.
    for d in docs.iter().filter(|d| !d.text.is_empty()) {
        let ps: Vec<&Passage> = passages.iter().filter(|p| p.document_id == d.id).collect();
        assert!(!ps.is_empty());
        assert!(ps.iter().all(|p| p.word_count <= 256 && p.word_count > 0));
    }
    assert!(passages.iter().all(|p| p.document_id != removed.id));
}
