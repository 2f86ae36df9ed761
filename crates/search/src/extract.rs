//! Main text, title, publication date and language of an HTML page.
//!
//! The readable text comes from dom_smoothie (a Rust port of Mozilla's Readability); its metadata
//! pass reads the publication date from `<meta>` tags (`article:published_time`, Dublin Core,
//! parsely) and JSON-LD `datePublished`. Pages Readability cannot grab fall back to the `<body>`
//! text. Language is detected from the text with whatlang (ISO 639-3 codes). What Readability
//! keeps around the article (captions, credits, galleries, related links, hidden content) is
//! removed by [`crate::boilerplate`].

use dom_smoothie::{Config, Readability, TextMode};

/// What a page yields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extracted {
    pub title: Option<String>,
    pub text: String,
    /// `YYYY-MM-DD` when the metadata date parses, else as found.
    pub published: Option<String>,
    pub language: Option<String>,
}

/// Why a page gave no document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error("the page could not be parsed: {0}")]
    Unparseable(String),
    #[error("no text found in the page")]
    Empty,
}

impl ExtractError {
    pub fn code(&self) -> &'static str {
        match self {
            ExtractError::Unparseable(_) => "unparseable_page",
            ExtractError::Empty => "empty_text",
        }
    }
}

/// Collapse runs of spaces and tabs, keep paragraph breaks (at most one blank line).
pub(crate) fn tidy_text(text: &str) -> String {
    let mut out = Vec::new();
    let mut blank = false;
    for line in text.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank = !out.is_empty();
        } else {
            if blank {
                out.push(String::new());
            }
            blank = false;
            out.push(line);
        }
    }
    out.join("\n")
}

/// A date as `YYYY-MM-DD` when it starts with one (RFC 3339, ISO 8601), else trimmed as found.
pub(crate) fn normalise_date(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(raw) {
        return Some(t.with_timezone(&chrono::Utc).format("%Y-%m-%d").to_string());
    }
    // `get`: byte 10 may fall inside a character (a hostile API answer; found by fuzzing).
    if let Some(head) = raw.get(..10)
        && let Ok(d) = chrono::NaiveDate::parse_from_str(head, "%Y-%m-%d")
    {
        return Some(d.format("%Y-%m-%d").to_string());
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc2822(raw) {
        return Some(t.with_timezone(&chrono::Utc).format("%Y-%m-%d").to_string());
    }
    Some(raw.to_string())
}

/// The language of `text` as an ISO 639-3 code, when whatlang is confident enough.
pub(crate) fn detect_language(text: &str) -> Option<String> {
    if text.split_whitespace().count() < 5 {
        return None;
    }
    let info = whatlang::detect(text)?;
    (info.confidence() >= 0.5).then(|| info.lang().code().to_string())
}

fn non_empty(s: &str) -> Option<String> {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!s.is_empty()).then_some(s)
}

/// Extract title, main text, date and language from an HTML page fetched from `url`.
pub fn extract_html(html: &str, url: &str) -> Result<Extracted, ExtractError> {
    let config = Config {
        text_mode: TextMode::Formatted,
        max_elements_to_parse: 200_000,
        // Classes and ids name captions, galleries and related links (`boilerplate`).
        keep_classes: true,
        ..Config::default()
    };
    let doc_url = url::Url::parse(url).ok().map(|_| url);
    // Only what a browser renders is read (no `display:none`, `hidden`, `ix:header`, templates,
    // comments: `noisebench_web::visible`, the one rule every HTML path shares); nesting is
    // limited on the way (see `nesting`). Then what Readability would keep around the article.
    let html = noisebench_web::visible::strip_unrendered(html);
    let document = dom_query::Document::from(html.as_str());
    crate::boilerplate::clean_page(&document);
    let mut reader = Readability::with_document(document, doc_url, Some(config))
        .map_err(|e| ExtractError::Unparseable(e.to_string()))?;
    let metadata = reader.get_article_metadata(reader.parse_json_ld());
    let fallback_body = tidy_text(&reader.doc.select("body").text());
    let (title, text, published) = match reader.parse() {
        Ok(article) => (
            non_empty(&article.title),
            // The kept block without its captions, credits, galleries and link lists.
            tidy_text(
                &crate::boilerplate::article_text(&reader.doc)
                    .unwrap_or_else(|| article.text_content.to_string()),
            ),
            article.published_time.clone(),
        ),
        Err(dom_smoothie::ReadabilityError::GrabFailed) => (
            non_empty(&metadata.title),
            fallback_body.clone(),
            metadata.published_time.clone(),
        ),
        Err(e) => return Err(ExtractError::Unparseable(e.to_string())),
    };
    let text = if text.is_empty() { fallback_body } else { text };
    if text.trim().is_empty() {
        return Err(ExtractError::Empty);
    }
    let language = detect_language(&text);
    Ok(Extracted {
        title,
        text,
        published: published.as_deref().and_then(normalise_date),
        language,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_with_a_character_across_byte_ten_is_kept_as_found() {
        // fuzz/corpus/search_api/crash-normalise-date-char-boundary: panicked before.
        assert_eq!(
            normalise_date("2020-05-0\u{fffd}x").as_deref(),
            Some("2020-05-0\u{fffd}x")
        );
        assert_eq!(
            normalise_date("2020-05-01\u{e9}").as_deref(),
            Some("2020-05-01")
        );
    }

    #[test]
    fn article_text_title_date_and_language() {
        let para = "The city council approved the new budget on Tuesday after a long debate about \
                    school funding, road repairs and the future of the public library system. ";
        let html = format!(
            r#"<html><head><title>Budget passes | Daily Example</title>
            <meta property="article:published_time" content="2023-05-02T10:00:00-04:00">
            </head><body><nav>Home | News | Sports</nav>
            <article><h1>Budget passes</h1><p>{}</p><p>{}</p></article>
            <footer>Copyright</footer></body></html>"#,
            para.repeat(3),
            para.repeat(2)
        );
        let e = extract_html(&html, "https://news.example/budget").unwrap();
        assert!(e.text.contains("The city council approved"), "{}", e.text);
        assert!(!e.text.contains("Home | News"), "{}", e.text);
        assert!(!e.text.contains("Copyright"), "{}", e.text);
        assert_eq!(e.published.as_deref(), Some("2023-05-02"));
        assert_eq!(e.language.as_deref(), Some("eng"));
        assert!(e.title.unwrap().contains("Budget passes"));
    }

    /// Two real news pages with the main text the benchmark's annotators wrote for them
    /// (fixtures/real/documents/PROVENANCE.md): exactly that text, no caption, credit, dateline,
    /// "read more" line or teaser list.
    #[test]
    fn real_pages_give_their_annotated_main_text() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/real/documents");
        let lines = |s: &str| -> Vec<String> {
            s.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect()
        };
        for (name, url) in [
            (
                "foxbusiness-home-depot",
                "https://www.foxbusiness.com/markets/home-depot-sales-earnings-retail",
            ),
            (
                "cleveland-doobie-brothers",
                "https://www.cleveland.com/entertainment/2019/11/doobie-brothers-to-reunite-with-michael-mcdonald-for-blossom-show.html",
            ),
        ] {
            let html = std::fs::read_to_string(dir.join(format!("{name}.html"))).unwrap();
            let expected =
                std::fs::read_to_string(dir.join(format!("{name}.expected.txt"))).unwrap();
            let got = extract_html(&html, url).unwrap();
            assert_eq!(lines(&got.text), lines(&expected), "{name}");
            assert_eq!(got.language.as_deref(), Some("eng"), "{name}");
        }
    }

    #[test]
    fn empty_pages_are_errors() {
        let err = extract_html("<html><body>  </body></html>", "https://x.example/").unwrap_err();
        assert_eq!(err.code(), "empty_text");
        assert_eq!(
            normalise_date("2021-03-04T00:00:00Z").as_deref(),
            Some("2021-03-04")
        );
        assert_eq!(normalise_date("2021-03-04").as_deref(), Some("2021-03-04"));
        assert_eq!(normalise_date(" ").as_deref(), None);
    }
}
