//! Fuzz targets: one plain function per target, each feeding arbitrary bytes to the real parsers of
//! one kind of outside data and asserting what must hold for any input (no panic; where cheap, a
//! round trip or a count that must add up).
//!
//! What it is for: the `fuzz/` cargo-fuzz crate wraps each function in a `fuzz_target!` (nightly,
//! coverage-guided, `scripts/fuzz-campaign.sh`), and this crate's test `replay` runs every file of
//! `fuzz/corpus/<target>/` through its function on stable, so CI replays the corpora (and every
//! crash input kept there) without a nightly build. What it is not for: checking parsers' answers
//! on real pages (each owning crate's tests do that); a target only states invariants.
//!
//! A target never reads the network or the repository; `reddit_dump` writes its input to a
//! temporary file, since the dump reader reads files.
//!
//! # Modules
//!
//! One plain function per parser of outside data that feeds it arbitrary bytes and asserts its
//! invariants; `tests/it/replay.rs` replays `fuzz/corpus/` on stable (CI), and `fuzz/` (outside the
//! workspace, nightly, cargo-fuzz) wraps the same functions for the campaigns
//! (`scripts/fuzz-campaign.sh`, `just fuzz`). `answers.rs` is the `llm_answer` target over every
//! task of every stage crate and of the evaluation (each stage's `TASKS` and
//! `noisebench_eval::tasks()`, read through `TaskInfo`; each task's example and its offline answer
//! are its seed), so a task joins it by joining its stage's list. Invariant: a target never panics
//! on any input and checks what must hold for every input.

use noisebench_core::Block;

pub mod answers;
pub use answers::{TaskEntry, llm_answer, seeds as llm_answer_seeds, tasks as llm_tasks};

/// A target: arbitrary bytes in, a panic when an invariant fails.
pub type Target = fn(&[u8]);

/// Every target: its name (the `fuzz/fuzz_targets/<name>.rs` binary and `fuzz/corpus/<name>/`)
/// and its function.
pub const TARGETS: &[(&str, Target)] = &[
    ("politifact_listing", politifact_listing),
    ("politifact_article", politifact_article),
    ("claimreview", claimreview),
    ("search_api", search_api),
    ("reddit_json", reddit_json),
    ("reddit_dump", reddit_dump),
    ("edgar_json", edgar_json),
    ("edgar_filing_html", edgar_filing_html),
    ("edgar_crawler", edgar_crawler),
    ("mineru_json", mineru_json),
    ("report_html", report_html),
    ("report_markdown", report_markdown),
    ("llm_answer", llm_answer),
    #[cfg(feature = "pipeline")]
    ("pipeline_toml", pipeline_toml),
    ("charset", charset),
];

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

fn base_url() -> url::Url {
    url::Url::parse("https://www.politifact.com/factchecks/list/?page=1").expect("static URL")
}

/// What any block list must satisfy: heading levels 1 to 6.
fn check_blocks(blocks: &[Block]) {
    for b in blocks {
        if let Block::Heading { level, text } = b {
            assert!((1..=6).contains(level), "heading level {level}: {text:?}");
        }
        let _ = noisebench_chunk::block_text(b);
    }
}

/// A PolitiFact listing page (current and legacy layouts).
pub fn politifact_listing(data: &[u8]) {
    use noisebench_claims::politifact;
    let html = text(data);
    let page = politifact::parse_listing(&html, &base_url());
    for item in &page.items {
        let _ = format!("{item:?}");
    }
}

/// A PolitiFact article page (current and legacy layouts), its rating image and dates.
pub fn politifact_article(data: &[u8]) {
    use noisebench_claims::{parse_date, politifact, scraped_date};
    let html = text(data);
    let article = politifact::parse_article(&html, &base_url());
    assert!(
        ["current", "legacy", "none"].contains(&article.layout),
        "{}",
        article.layout
    );
    for date in [&article.claim_date, &article.review_date]
        .into_iter()
        .flatten()
    {
        let _ = parse_date(date);
    }
    if let Some(url) = &article.canonical_url {
        assert!(
            url::Url::parse(url).is_ok(),
            "canonical URL not absolute: {url}"
        );
    }
    let _ = politifact::rating_from_image(&html);
    let _ = politifact::classify_slug(&html);
    let _ = scraped_date(&html);
    let _ = parse_date(&html);
}

/// ClaimReview JSON-LD inside a page, and a ClaimReview JSON value on its own.
pub fn claimreview(data: &[u8]) {
    use noisebench_claims::claimreview;
    let html = text(data);
    let _ = claimreview::extract(&html);
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let mut out = Vec::new();
        claimreview::from_json(&value, &mut out);
    }
}

/// The JSON answers of every search API (Google, Brave, SearxNG, Reddit search).
pub fn search_api(data: &[u8]) {
    use noisebench_search::backends::{brave, google, reddit_api, searxng};
    let body = text(data);
    for parsed in [
        google::parse(&body),
        brave::parse(&body),
        searxng::parse(&body),
        reddit_api::parse(&body),
    ]
    .into_iter()
    .flatten()
    {
        let _ = format!("{parsed:?}");
    }
}

/// Reddit's own JSON (a post page or a listing) and one dump object.
pub fn reddit_json(data: &[u8]) {
    use noisebench_search::RedditPost;
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for post in [
        RedditPost::from_json(&value),
        RedditPost::from_page_json(&value),
    ]
    .into_iter()
    .flatten()
    {
        assert!(
            !post.id.is_empty()
                && post
                    .id
                    .chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()),
            "post id {:?}",
            post.id
        );
        assert!(post.post_url().starts_with("http"), "{}", post.post_url());
        if let Some(t) = post.published() {
            assert!(chrono::DateTime::parse_from_rfc3339(&t).is_ok(), "{t}");
        }
        let _ = (post.body_text(), post.is_link_post());
        let _ = noisebench_search::backends::reddit_api::post_hit(&post);
    }
}

/// A plain (uncompressed) Reddit dump, one JSON object a line: every non-blank line is counted,
/// as a post or as a bad line.
pub fn reddit_dump(data: &[u8]) {
    use noisebench_search::backends::reddit_dump::read_posts;
    thread_local! {
        static DIR: tempfile::TempDir = tempfile::tempdir().expect("a temporary directory");
    }
    let path = DIR.with(|d| d.path().join("dump.ndjson"));
    std::fs::write(&path, data).expect("write the dump");
    let mut posts = 0u64;
    let result = read_posts(&path, |_| posts += 1);
    // UTF-8 input always reads; other input reads with replacement characters, or (before
    // invalid UTF-8 was made non-fatal) fails as a whole with an I/O error naming the file.
    let utf8 = std::str::from_utf8(data).is_ok();
    let stats = match result {
        Ok(stats) => stats,
        Err(e) if !utf8 => {
            assert!(e.to_string().contains("dump.ndjson"), "{e}");
            return;
        }
        Err(e) => panic!("a UTF-8 dump reads: {e}"),
    };
    let lines = String::from_utf8_lossy(data)
        .split_inclusive('\n')
        .filter(|l| !l.trim().is_empty())
        .count() as u64;
    assert_eq!(stats.lines, lines, "non-blank lines");
    assert_eq!(stats.posts + stats.bad_lines, stats.lines);
    assert_eq!(stats.posts, posts);
}

/// EDGAR's JSON: a submissions index (or a further page of it) and the company tickers file.
pub fn edgar_json(data: &[u8]) {
    use noisebench_chunk::{parse_submissions, parse_tickers};
    let json = text(data);
    if let Ok(s) = parse_submissions(&json, "320193", "Apple Inc.") {
        let _ = format!("{:?}", s.filings);
    }
    if let Ok(tickers) = parse_tickers(&json) {
        let _ = tickers.len();
    }
}

/// A filing's HTML cut into items (7 and 1A, the first line of the input may name others).
pub fn edgar_filing_html(data: &[u8]) {
    use noisebench_chunk::filing_items;
    let html = text(data);
    let items = vec!["item_7".to_string(), "Item 1A".to_string()];
    let cut = filing_items(&html, &items);
    check_blocks(&cut.blocks);
    assert!(cut.missing.len() <= items.len());
}

/// edgar-crawler JSON, its items read one paragraph a line (flattened tables rebuilt), and the
/// same text in the blank-line layout.
pub fn edgar_crawler(data: &[u8]) {
    use noisebench_chunk::read_filing;
    use noisebench_chunk::{Layout, text_blocks};
    let json = text(data);
    if let Ok(filing) = read_filing(&json, &["item_7".to_string(), "item_1A".to_string()]) {
        check_blocks(&filing.blocks);
    }
    for layout in [Layout::LinePerParagraph, Layout::BlankLineSeparated] {
        let (blocks, _bad) = text_blocks(&json, layout);
        check_blocks(&blocks);
    }
}

/// A MinerU content list.
pub fn mineru_json(data: &[u8]) {
    if let Ok(report) = noisebench_chunk::mineru_blocks(&text(data)) {
        check_blocks(&report.blocks);
    }
}

/// An HTML report.
pub fn report_html(data: &[u8]) {
    let report = noisebench_chunk::html_blocks(&text(data));
    check_blocks(&report.blocks);
}

/// A Markdown report.
pub fn report_markdown(data: &[u8]) {
    let (blocks, _title, _bad) = noisebench_chunk::markdown_blocks(&text(data));
    check_blocks(&blocks);
}

/// A pipeline file: parsed, hashed, its `[llm]` and `[web]` tables read; a parsed file written
/// back as TOML parses to the same configuration hash.
#[cfg(feature = "pipeline")]
pub fn pipeline_toml(data: &[u8]) {
    use noisebench_pipeline::file::PipelineFile;
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = PipelineFile::parse(source, "fuzz.toml") else {
        return;
    };
    let hash = file.config_hash();
    if let Ok(written) = toml::to_string(&file) {
        let again = PipelineFile::parse(&written, "again.toml")
            .unwrap_or_else(|e| panic!("a written pipeline file parses: {e}\n{written}"));
        assert_eq!(again.config_hash(), hash, "{written}");
    }
    if let Some(llm) = &file.llm
        && let Ok(value) = serde_json::to_value(llm)
    {
        let _ = noisebench_llm::LlmConfig::from_value(&value);
    }
    if let Some(web) = &file.web
        && let Ok(value) = serde_json::to_value(web)
    {
        let _ = noisebench_web::WebConfig::from_value(&value);
    }
}

/// Charset detection and decoding. When the first byte is odd, the first line (up to 200 bytes)
/// is a `Content-Type` header value and the rest the body. Valid UTF-8 with no label anywhere
/// decodes to itself.
pub fn charset(data: &[u8]) {
    use noisebench_web::charset::{decode, meta_charset};
    let (content_type, body) = match data.first() {
        Some(b) if b % 2 == 1 => {
            let rest = &data[1..];
            match rest.iter().take(200).position(|&b| b == b'\n') {
                Some(n) => (std::str::from_utf8(&rest[..n]).ok(), &rest[n + 1..]),
                None => (None, rest),
            }
        }
        _ => (None, data),
    };
    let (decoded, name) = decode(body, content_type);
    if content_type.is_none()
        && encoding_is_unlabelled(body)
        && meta_charset(body).is_none()
        && let Ok(s) = std::str::from_utf8(body)
    {
        assert_eq!(name, "UTF-8");
        assert_eq!(decoded, s);
    }
}

fn encoding_is_unlabelled(body: &[u8]) -> bool {
    !(body.starts_with(b"\xef\xbb\xbf")
        || body.starts_with(b"\xfe\xff")
        || body.starts_with(b"\xff\xfe"))
}
