//! Hostile input, by construction, for the fact-check readers: HTML and ClaimReview JSON-LD
//! nested 100,000 deep (no stack overflow on a 2 MiB stack), invalid UTF-8 in a page, and links
//! with control characters (never passed on raw).

use noisebench_claims::claimreview::extract;
use noisebench_claims::politifact::{parse_article, parse_listing};
use url::Url;

const DEPTH: usize = 100_000;

fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn base() -> Url {
    Url::parse("https://www.politifact.com/factchecks/list/").unwrap()
}

fn statement(href: &str) -> String {
    format!(
        r#"<article class="m-statement"><div class="m-statement__quote"><a href="{href}">The moon is made of cheese.</a></div></article>"#
    )
}

#[test]
fn pages_nested_100000_deep_are_read_without_overflowing() {
    let html = format!(
        "<html><body>{}{}{}</body></html>",
        "<div>".repeat(DEPTH),
        statement("/factchecks/2024/jan/01/moon/"),
        "</div>".repeat(DEPTH)
    );
    let listing = html.clone();
    let page = small_stack(move || parse_listing(&listing, &base()));
    assert!(page.items.len() <= 1);
    let article = html.clone();
    let _ = small_stack(move || parse_article(&article, &base()));
    let _ = small_stack(move || extract(&html));
}

#[test]
fn claimreview_json_nested_100000_deep_is_skipped_not_overflowed() {
    let deep = format!("{}{{}}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(DEPTH), "}".repeat(DEPTH));
    for json in [deep, objects] {
        let html = format!(
            r#"<html><head><script type="application/ld+json">{json}</script></head><body></body></html>"#
        );
        let found = small_stack(move || extract(&html));
        assert!(found.is_empty());
    }
}

#[test]
fn invalid_utf8_and_control_characters_never_reach_a_claim_raw() {
    let bytes = [
        b"<html><body>".as_slice(),
        statement("/factchecks/2024/jan/01/moon\u{0}\u{7}\u{1b}[31m\n/").as_bytes(),
        b"<p>\xff\xfe\xc3\x28</p></body></html>",
    ]
    .concat();
    let html = String::from_utf8_lossy(&bytes).into_owned();
    let page = parse_listing(&html, &base());
    assert_eq!(page.items.len() + page.skipped, 1);
    for item in &page.items {
        assert!(!item.url.chars().any(char::is_control), "{:?}", item.url);
        assert!(Url::parse(&item.url).is_ok());
    }
}
