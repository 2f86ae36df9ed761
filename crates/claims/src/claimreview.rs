//! schema.org ClaimReview JSON-LD: the publisher-independent way to read a fact-check article.
//!
//! Pages embed one or more `<script type="application/ld+json">` blocks holding an object, an array
//! or an `@graph`; a ClaimReview is any node whose `@type` is or contains `ClaimReview`. Fields that
//! are strings in one publisher's markup are objects in another's (`author` as a name or as a
//! `Person`), so every field is read leniently.

use std::collections::HashMap;
use std::sync::LazyLock;

use scraper::{Html, Selector};
use serde_json::Value;

use crate::text::decode_entities;

/// What a ClaimReview says, as raw strings (dates and ratings are normalised by the scrape stage).
/// Text fields have their HTML character references decoded (JSON-LD sits in a `<script>`, whose
/// text the HTML parser leaves as written, and publishers put `&#039;` in it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimReview {
    /// `claimReviewed`: the claim as the fact-checker quotes it.
    pub claim_reviewed: Option<String>,
    /// `reviewRating.alternateName`: the rating's name ("Pants on Fire!", "False").
    pub rating_name: Option<String>,
    /// `reviewRating.ratingValue` (a number on the publisher's scale, or sometimes the name).
    pub rating_value: Option<String>,
    /// `reviewRating.worstRating` and `bestRating`: the ends of the numeric scale, when stated.
    pub rating_worst: Option<String>,
    pub rating_best: Option<String>,
    /// `reviewRating.image`: PolitiFact points it at the meter image.
    pub rating_image: Option<String>,
    /// `itemReviewed.author.name`: who made the claim.
    pub claimant: Option<String>,
    /// `itemReviewed.datePublished`: when the claim was made.
    pub claim_date: Option<String>,
    /// Where the claim appeared: `itemReviewed.url`, else its `firstAppearance`, else its first
    /// `appearance`.
    pub original_url: Option<String>,
    /// `datePublished`: when the review was published.
    pub review_date: Option<String>,
    /// `url`: the fact-check article, as written (it may be relative or lack its scheme).
    pub url: Option<String>,
    /// The fact-checking organisation: `author` when it is an Organization, else `publisher`.
    /// Never a Person: a journalist named as `author` is not the fact-checker.
    pub publisher: Option<String>,
}

/// What the page around a ClaimReview says of itself, for the fields a ClaimReview may lack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PageFacts {
    /// When the page was published: `article:published_time`, else the `datePublished` of its
    /// NewsArticle / Article / WebPage JSON-LD, else a `publish-date` / `date` meta tag. Raw.
    pub published: Option<String>,
    /// The organisation publishing the page: its article's `publisher` in JSON-LD, else a
    /// NewsMediaOrganization / Organization node of its own.
    pub publisher: Option<String>,
    /// `og:site_name`.
    pub site_name: Option<String>,
}

static LD_JSON: LazyLock<Selector> = LazyLock::new(|| {
    Selector::parse(r#"script[type="application/ld+json"]"#).expect("static selector parses")
});
static META: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("meta[content]").expect("static selector parses"));

/// Every ClaimReview in the JSON-LD blocks of `html`, in document order. Blocks that are not valid
/// JSON are skipped (publishers ship trailing commas and HTML comments).
pub fn extract(html: &str) -> Vec<ClaimReview> {
    let doc = Html::parse_document(&noisebench_web::nesting::limit_nesting(html));
    extract_from(&doc)
}

/// The JSON-LD values of a document, in order; invalid blocks skipped.
fn json_ld(doc: &Html) -> Vec<Value> {
    json_ld_blocks(doc)
        .into_iter()
        .filter_map(|(_, parsed)| parsed.ok())
        .collect()
}

/// Every JSON-LD block of a document with its text, parsed or the parse error. A block that does
/// not parse is tried again with its raw control characters (a line break inside a string, which
/// JSON forbids and publishers ship) read as spaces.
fn json_ld_blocks(doc: &Html) -> Vec<(String, Result<Value, String>)> {
    doc.select(&LD_JSON)
        .map(|script| {
            let text: String = script.text().collect();
            let parsed = serde_json::from_str::<Value>(text.trim()).or_else(|e| {
                let spaced: String = text
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                serde_json::from_str::<Value>(spaced.trim()).map_err(|_| e.to_string())
            });
            if let Err(e) = &parsed {
                tracing::debug!("skipping invalid JSON-LD block: {e}");
            }
            (text, parsed)
        })
        .collect()
}

/// The JSON-LD blocks of a document that mention a ClaimReview but do not parse, each as an
/// error message: ClaimReviews that cannot be read, for the scrape stage to count.
pub(crate) fn unreadable_claimreviews(doc: &Html) -> Vec<String> {
    json_ld_blocks(doc)
        .into_iter()
        .enumerate()
        .filter_map(|(i, (text, parsed))| {
            let e = parsed.err()?;
            text.contains("ClaimReview").then(|| {
                format!(
                    "JSON-LD block {} mentions ClaimReview but is not JSON: {e}",
                    i + 1
                )
            })
        })
        .collect()
}

/// [`extract`] on an already parsed document.
pub(crate) fn extract_from(doc: &Html) -> Vec<ClaimReview> {
    let mut out = Vec::new();
    for value in json_ld(doc) {
        from_json(&value, &mut out);
    }
    out
}

/// Collect the ClaimReviews in a JSON-LD value (object, array or `@graph`).
pub fn from_json(value: &Value, out: &mut Vec<ClaimReview>) {
    let mut nodes = Vec::new();
    collect(value, &mut nodes, 0);
    let index = by_id(&nodes);
    out.extend(
        nodes
            .iter()
            .filter(|n| has_type(n, "ClaimReview"))
            .map(|n| read(n, &index)),
    );
}

/// [`PageFacts`] of a parsed document.
pub(crate) fn page_facts(doc: &Html) -> PageFacts {
    let meta = |keys: &[&str]| {
        doc.select(&META).find_map(|m| {
            let key = m
                .value()
                .attr("property")
                .or_else(|| m.value().attr("name"))?;
            keys.iter()
                .any(|k| key.eq_ignore_ascii_case(k))
                .then(|| m.value().attr("content").map(str::trim))
                .flatten()
                .filter(|c| !c.is_empty())
                .map(decode_entities)
        })
    };
    let values = json_ld(doc);
    let mut nodes = Vec::new();
    for value in &values {
        collect(value, &mut nodes, 0);
    }
    let index = by_id(&nodes);
    let articles: Vec<&Value> = nodes
        .iter()
        .copied()
        .filter(|n| ARTICLE_TYPES.iter().any(|t| has_type(n, t)))
        .collect();
    let article_date = articles.iter().find_map(|a| text(a.get("datePublished")));
    let article_publisher = articles
        .iter()
        .find_map(|a| organisation(a.get("publisher"), &index, false));
    let own_organisation = nodes
        .iter()
        .copied()
        .filter(|n| is_organisation(n))
        .find_map(|n| text(n.get("name")));
    PageFacts {
        published: meta(&["article:published_time"])
            .or(article_date)
            .or_else(|| meta(&["publish-date", "date", "pubdate"])),
        publisher: article_publisher.or(own_organisation),
        site_name: meta(&["og:site_name"]),
    }
}

/// Types whose `datePublished` and `publisher` are the page's own.
const ARTICLE_TYPES: [&str; 8] = [
    "NewsArticle",
    "Article",
    "ReportageNewsArticle",
    "AnalysisNewsArticle",
    "BlogPosting",
    "WebPage",
    "ItemPage",
    "ScholarlyArticle",
];

/// JSON-LD nests a few levels at most; bound recursion against hostile input.
const MAX_DEPTH: usize = 8;

/// Every node of a JSON-LD value, flattened: arrays and `@graph`s opened.
fn collect<'a>(value: &'a Value, out: &mut Vec<&'a Value>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Array(items) => {
            for item in items {
                collect(item, out, depth + 1);
            }
        }
        Value::Object(map) => {
            out.push(value);
            if let Some(graph) = map.get("@graph") {
                collect(graph, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// Nodes by their `@id`, to follow references such as `"publisher": {"@id": "...#organization"}`.
fn by_id<'a>(nodes: &[&'a Value]) -> HashMap<&'a str, &'a Value> {
    nodes
        .iter()
        .filter(|n| n.as_object().is_some_and(|m| m.len() > 1))
        .filter_map(|n| Some((n.get("@id")?.as_str()?, *n)))
        .collect()
}

fn has_type(value: &Value, wanted: &str) -> bool {
    let matches = |t: &str| {
        let t = t.rsplit(['/', ':']).next().unwrap_or(t);
        t.eq_ignore_ascii_case(wanted)
    };
    match value.get("@type") {
        Some(Value::String(t)) => matches(t),
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str().is_some_and(matches)),
        _ => false,
    }
}

/// An Organization of any kind (`NewsMediaOrganization`, `Corporation`, `NGO`...).
fn is_organisation(value: &Value) -> bool {
    let org = |t: &str| {
        let t = t.rsplit(['/', ':']).next().unwrap_or(t);
        t.ends_with("Organization") || t == "Corporation" || t == "NGO"
    };
    match value.get("@type") {
        Some(Value::String(t)) => org(t),
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str().is_some_and(org)),
        _ => false,
    }
}

/// Whether a URL is an author's profile page (`/author/x`, `/about/authors/x`): an "Organization"
/// with such a URL is a journalist typed wrongly (Africa Check's ClaimReviews do this).
fn is_profile_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    [
        "/author/",
        "/authors/",
        "/autor/",
        "/autores/",
        "/auteur/",
        "/journaliste/",
        "/profile/",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// The name of the organisation in `value` (an object, a reference by `@id`, a list; a plain string
/// when `strings` allows it), never a Person's.
fn organisation(
    value: Option<&Value>,
    index: &HashMap<&str, &Value>,
    strings: bool,
) -> Option<String> {
    match value? {
        Value::Array(items) => items
            .iter()
            .find_map(|v| organisation(Some(v), index, strings)),
        Value::Object(map) => {
            let node = match map.get("@id").and_then(Value::as_str) {
                Some(id) if map.len() == 1 => index.get(id).copied()?,
                _ => value?,
            };
            if !is_organisation(node) {
                return None;
            }
            if url_of(Some(node)).is_some_and(|u| is_profile_url(&u)) {
                return None;
            }
            name(Some(node))
        }
        Value::String(_) if strings => text(value),
        _ => None,
    }
}

/// A string field, or a number rendered as a string; empty strings are absent. Character
/// references are decoded.
fn text(value: Option<&Value>) -> Option<String> {
    let s = match value? {
        Value::String(s) => decode_entities(s.trim()).trim().to_string(),
        Value::Number(n) => n.to_string(),
        // A list of one: take the first.
        Value::Array(items) => return text(items.first()),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

/// A name: a string, or an object's `name`, or the first of a list.
fn name(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Object(_) => text(value?.get("name")),
        Value::Array(items) => items.iter().find_map(|v| name(Some(v))),
        other => text(Some(other)),
    }
}

/// A URL: a string, or an object's `url`, or the first of a list.
fn url_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Object(map) => text(map.get("url")),
        Value::Array(items) => items.iter().find_map(|v| url_of(Some(v))),
        other => text(Some(other)),
    }
}

fn get<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    value.and_then(|v| v.get(key))
}

fn read(review: &Value, index: &HashMap<&str, &Value>) -> ClaimReview {
    let rating = review.get("reviewRating");
    let item = review.get("itemReviewed");
    ClaimReview {
        claim_reviewed: text(review.get("claimReviewed")),
        rating_name: text(get(rating, "alternateName")).or_else(|| text(get(rating, "name"))),
        rating_value: text(get(rating, "ratingValue")),
        rating_worst: text(get(rating, "worstRating")),
        rating_best: text(get(rating, "bestRating")),
        rating_image: url_of(get(rating, "image")),
        claimant: name(get(item, "author")),
        claim_date: text(get(item, "datePublished")),
        original_url: text(get(item, "url"))
            .or_else(|| url_of(get(item, "firstAppearance")))
            .or_else(|| url_of(get(item, "appearance"))),
        review_date: text(review.get("datePublished")),
        url: text(review.get("url")),
        publisher: organisation(review.get("author"), index, false)
            .or_else(|| organisation(review.get("publisher"), index, true)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_graph_and_lenient_fields() {
        let html = r#"<html><head>
<script type="application/ld+json">{not json</script>
<script type="application/ld+json">
{"@context": "https://schema.org", "@graph": [
  {"@type": "WebPage", "name": "x"},
  {"@type": ["ClaimReview"], "claimReviewed": " The moon is cheese. ",
   "datePublished": "2024-02-01",
   "url": "https://checks.example/moon",
   "author": {"@type": "Organization", "name": "Example Checks"},
   "reviewRating": {"@type": "Rating", "ratingValue": 1, "alternateName": "False",
                    "image": {"url": "https://checks.example/false.png"}},
   "itemReviewed": {"@type": "Claim", "author": [{"@type": "Person", "name": "A. Person"}],
                    "datePublished": "2024-01-20",
                    "firstAppearance": {"@type": "CreativeWork", "url": "https://social.example/p/1"}}}
]}
</script></head><body></body></html>"#;
        let reviews = extract(html);
        assert_eq!(
            reviews,
            vec![ClaimReview {
                claim_reviewed: Some("The moon is cheese.".into()),
                rating_name: Some("False".into()),
                rating_value: Some("1".into()),
                rating_worst: None,
                rating_best: None,
                rating_image: Some("https://checks.example/false.png".into()),
                claimant: Some("A. Person".into()),
                claim_date: Some("2024-01-20".into()),
                original_url: Some("https://social.example/p/1".into()),
                review_date: Some("2024-02-01".into()),
                url: Some("https://checks.example/moon".into()),
                publisher: Some("Example Checks".into()),
            }]
        );
    }

    #[test]
    fn line_breaks_inside_strings_and_unreadable_blocks() {
        let html = "<script type=\"application/ld+json\">{\"@type\": \"ClaimReview\", \"claimReviewed\": \"two\nlines\"}</script>\
                    <script type=\"application/ld+json\">{\"@type\": \"ClaimReview\", \"claimReviewed\": \"x\",}</script>\
                    <script type=\"application/ld+json\">{\"@type\": \"VideoObject\",}</script>";
        let reviews = extract(html);
        assert_eq!(reviews.len(), 1);
        assert_eq!(reviews[0].claim_reviewed.as_deref(), Some("two lines"));
        let doc = Html::parse_document(html);
        let unreadable = unreadable_claimreviews(&doc);
        assert_eq!(unreadable.len(), 1, "{unreadable:?}");
        assert!(
            unreadable[0].starts_with("JSON-LD block 2 "),
            "{unreadable:?}"
        );
    }

    #[test]
    fn other_types_and_deep_nesting_are_ignored() {
        assert!(
            extract(r#"<script type="application/ld+json">{"@type":"NewsArticle"}</script>"#)
                .is_empty()
        );
        let mut deep = serde_json::json!({"@type": "ClaimReview"});
        for _ in 0..20 {
            deep = serde_json::json!([deep]);
        }
        let mut out = Vec::new();
        from_json(&deep, &mut out);
        assert!(out.is_empty());
        let shallow =
            serde_json::json!([{"@type": "http://schema.org/ClaimReview", "claimReviewed": "x"}]);
        from_json(&shallow, &mut out);
        assert_eq!(out.len(), 1);
    }
}
