//! schema.org ClaimReview JSON-LD: the publisher-independent way to read a fact-check article.
//!
//! Pages embed one or more `<script type="application/ld+json">` blocks holding an object, an array
//! or an `@graph`; a ClaimReview is any node whose `@type` is or contains `ClaimReview`. Fields that
//! are strings in one publisher's markup are objects in another's (`author` as a name or as a
//! `Person`), so every field is read leniently.

use std::sync::LazyLock;

use scraper::{Html, Selector};
use serde_json::Value;

/// What a ClaimReview says, as raw strings (dates and ratings are normalised by the scrape stage).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimReview {
    /// `claimReviewed`: the claim as the fact-checker quotes it.
    pub claim_reviewed: Option<String>,
    /// `reviewRating.alternateName`: the rating's name ("Pants on Fire!", "False").
    pub rating_name: Option<String>,
    /// `reviewRating.ratingValue` (a number on the publisher's scale, or sometimes the name).
    pub rating_value: Option<String>,
    /// `reviewRating.image`: PolitiFact points it at the meter image.
    pub rating_image: Option<String>,
    /// `itemReviewed.author.name`: who made the claim.
    pub claimant: Option<String>,
    /// `itemReviewed.datePublished`: when the claim was made.
    pub claim_date: Option<String>,
    /// `itemReviewed.appearance` / `firstAppearance` URL: where the claim appeared.
    pub appearance_url: Option<String>,
    /// `datePublished`: when the review was published.
    pub review_date: Option<String>,
    /// `url`: the fact-check article.
    pub url: Option<String>,
    /// `author.name` (else `publisher.name`): the fact-checking organisation.
    pub publisher: Option<String>,
}

static LD_JSON: LazyLock<Selector> = LazyLock::new(|| {
    Selector::parse(r#"script[type="application/ld+json"]"#).expect("static selector parses")
});

/// Every ClaimReview in the JSON-LD blocks of `html`, in document order. Blocks that are not valid
/// JSON are skipped (publishers ship trailing commas and HTML comments).
pub fn extract(html: &str) -> Vec<ClaimReview> {
    let doc = Html::parse_document(&noisebench_web::nesting::limit_nesting(html));
    extract_from(&doc)
}

/// [`extract`] on an already parsed document.
pub fn extract_from(doc: &Html) -> Vec<ClaimReview> {
    let mut out = Vec::new();
    for script in doc.select(&LD_JSON) {
        let text: String = script.text().collect();
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(value) => from_json(&value, &mut out),
            Err(e) => tracing::debug!("skipping invalid JSON-LD block: {e}"),
        }
    }
    out
}

/// Collect the ClaimReviews in a JSON-LD value (object, array or `@graph`).
pub fn from_json(value: &Value, out: &mut Vec<ClaimReview>) {
    collect(value, out, 0);
}

/// JSON-LD nests a few levels at most; bound recursion against hostile input.
const MAX_DEPTH: usize = 8;

fn collect(value: &Value, out: &mut Vec<ClaimReview>, depth: usize) {
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
            if has_type(value, "ClaimReview") {
                out.push(read(value));
            } else if let Some(graph) = map.get("@graph") {
                collect(graph, out, depth + 1);
            }
        }
        _ => {}
    }
}

fn has_type(value: &Value, wanted: &str) -> bool {
    let matches = |t: &str| t == wanted || t.rsplit(['/', ':']).next() == Some(wanted);
    match value.get("@type") {
        Some(Value::String(t)) => matches(t),
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str().is_some_and(matches)),
        _ => false,
    }
}

/// A string field, or a number rendered as a string; empty strings are absent.
fn text(value: Option<&Value>) -> Option<String> {
    let s = match value? {
        Value::String(s) => s.trim().to_string(),
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

fn read(review: &Value) -> ClaimReview {
    let rating = review.get("reviewRating");
    let item = review.get("itemReviewed");
    ClaimReview {
        claim_reviewed: text(review.get("claimReviewed")),
        rating_name: text(get(rating, "alternateName")).or_else(|| text(get(rating, "name"))),
        rating_value: text(get(rating, "ratingValue")),
        rating_image: url_of(get(rating, "image")),
        claimant: name(get(item, "author")),
        claim_date: text(get(item, "datePublished")),
        appearance_url: url_of(get(item, "firstAppearance"))
            .or_else(|| url_of(get(item, "appearance"))),
        review_date: text(review.get("datePublished")),
        url: text(review.get("url")),
        publisher: name(review.get("author")).or_else(|| name(review.get("publisher"))),
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
                rating_image: Some("https://checks.example/false.png".into()),
                claimant: Some("A. Person".into()),
                claim_date: Some("2024-01-20".into()),
                appearance_url: Some("https://social.example/p/1".into()),
                review_date: Some("2024-02-01".into()),
                url: Some("https://checks.example/moon".into()),
                publisher: Some("Example Checks".into()),
            }]
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
