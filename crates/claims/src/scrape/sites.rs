//! Per-site CSS selectors: how to read the claim of a fact-checker whose pages carry no schema.org
//! ClaimReview (FactCheck.org, DW, Geo Fact Check, Soch, iVerify...) without writing code. A
//! `[[sites]]` entry of the stage's configuration names the host and a selector per field; each
//! element the `claim` selector picks (whose text starts with `claim_label`, when one is set) is a
//! claim of its own, read as if the page carried a ClaimReview with those fields, so everything
//! after (rating resolution, verdict map, URL and id, publisher from the page) is the same.
//!
//! A selector is CSS, optionally followed by `@attribute` to take that attribute's value instead
//! of the element's text (`meta[property="article:section"]@content`). A label is text the
//! element's own text starts with (compared without case); the field is what follows it, a `:` or
//! dash after it dropped (`Claim:`, `DW fact check:`, `Verdict`).

use noisebench_core::ConfigError;
use schemars::JsonSchema;
use scraper::{ElementRef, Html, Selector};
use serde::Deserialize;

use crate::claimreview::ClaimReview;

/// CSS selectors reading the claims of one site's pages that carry no ClaimReview.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SiteSelectors {
    /// The site's host (`www.dw.com`; a leading `www.` is ignored). Pages of this host that carry
    /// no ClaimReview JSON-LD are read with these selectors.
    pub host: String,
    /// The claim: every element selected (and kept by `claim_label`) is a claim of its own, in
    /// page order. CSS, optionally `selector@attribute`.
    pub claim: String,
    /// Keep only the `claim` elements whose text starts with this label; the claim is the text
    /// after it (`Claim:`).
    pub claim_label: Option<String>,
    /// The rating as the page words it: the n-th claim takes the n-th rating, or the first when
    /// the page shows fewer ratings than claims.
    pub rating: Option<String>,
    /// Label of the rating elements (`DW fact check:`).
    pub rating_label: Option<String>,
    /// Who made the claim (paired with claims as ratings are).
    pub speaker: Option<String>,
    /// Label of the speaker elements.
    pub speaker_label: Option<String>,
    /// When the claim was made.
    pub claim_date: Option<String>,
    /// When the fact-check was published (else the page's own date, as for any page).
    pub review_date: Option<String>,
}

/// One field's selector, compiled.
#[derive(Debug, Clone)]
struct Field {
    /// As configured, for messages.
    written: String,
    selector: Selector,
    attr: Option<String>,
    label: Option<String>,
}

/// A `[[sites]]` entry, checked and compiled.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    host: String,
    claim: Field,
    rating: Option<Field>,
    speaker: Option<Field>,
    claim_date: Option<Field>,
    review_date: Option<Field>,
}

/// The configured sites, compiled; empty by default.
#[derive(Debug, Clone, Default)]
pub struct Sites(Vec<Site>);

fn bare_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    host.strip_prefix("www.").unwrap_or(&host).to_string()
}

impl Sites {
    /// Check and compile `[[sites]]` entries: a host once each, every selector valid CSS.
    /// Errors name the entry's field (`sites[1].rating`).
    pub fn new(entries: &[SiteSelectors]) -> Result<Sites, ConfigError> {
        let mut sites: Vec<Site> = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let name = |f: &str| format!("sites[{i}].{f}");
            let host = bare_host(&entry.host);
            if host.is_empty() || host.contains(['/', ':', ' ']) {
                return Err(ConfigError::new(
                    name("host"),
                    format!("`{}` is not a host name (`www.dw.com`)", entry.host),
                ));
            }
            if sites.iter().any(|s| s.host == host) {
                return Err(ConfigError::new(
                    name("host"),
                    format!("`{}` has an entry already", entry.host),
                ));
            }
            let field = |f: &str, css: &str, label: Option<&String>| {
                Field::new(css, label).map_err(|m| ConfigError::new(name(f), m))
            };
            let optional = |f: &str, css: &Option<String>, label: Option<&String>| {
                css.as_deref().map(|c| field(f, c, label)).transpose()
            };
            sites.push(Site {
                host,
                claim: field("claim", &entry.claim, entry.claim_label.as_ref())?,
                rating: optional("rating", &entry.rating, entry.rating_label.as_ref())?,
                speaker: optional("speaker", &entry.speaker, entry.speaker_label.as_ref())?,
                claim_date: optional("claim_date", &entry.claim_date, None)?,
                review_date: optional("review_date", &entry.review_date, None)?,
            });
        }
        Ok(Sites(sites))
    }

    /// The entry for a page's host, if any.
    pub(crate) fn for_host(&self, host: &str) -> Option<&Site> {
        let host = bare_host(host);
        self.0.iter().find(|s| s.host == host)
    }
}

impl Field {
    fn new(written: &str, label: Option<&String>) -> Result<Field, String> {
        let written = written.trim();
        // `selector@attribute`: CSS itself has no `@` outside strings, so the last one that is
        // followed by an attribute name is the split.
        let (css, attr) = match written.rsplit_once('@') {
            Some((css, attr))
                if !attr.is_empty()
                    && attr
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':') =>
            {
                (css.trim(), Some(attr.to_ascii_lowercase()))
            }
            _ => (written, None),
        };
        if css.is_empty() {
            return Err("an empty selector".into());
        }
        let selector = Selector::parse(css).map_err(|e| format!("`{css}` is not CSS: {e}"))?;
        let label = label
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty());
        Ok(Field {
            written: written.to_string(),
            selector,
            attr,
            label,
        })
    }

    /// The field's values on a page, in document order: each selected element's text (or
    /// attribute), whitespace collapsed; with a label, only the elements starting with it, the
    /// label cut off. Empty values are left out.
    fn values(&self, doc: &Html) -> Vec<String> {
        doc.select(&self.selector)
            .filter_map(|el| self.value(el))
            .collect()
    }

    fn value(&self, el: ElementRef<'_>) -> Option<String> {
        let raw = match &self.attr {
            Some(attr) => el.value().attr(attr)?.to_string(),
            None => el.text().collect(),
        };
        let text = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = match &self.label {
            None => text,
            Some(label) => after_label(&text, label)?,
        };
        (!text.is_empty()).then_some(text)
    }
}

/// `text` after `label` when it starts with it (without case), the `:` or dash following the
/// label dropped.
fn after_label(text: &str, label: &str) -> Option<String> {
    let head = text.get(..label.len())?;
    if head.to_lowercase() != label.to_lowercase() {
        return None;
    }
    let rest = &text[label.len()..];
    Some(
        rest.trim_start_matches(|c: char| c.is_whitespace() || ":-–—".contains(c))
            .trim_end()
            .to_string(),
    )
}

impl Site {
    /// The page's claims as ClaimReviews: one per value of the `claim` selector. `Err` (a
    /// message naming the selector) when it selects nothing.
    pub(crate) fn read(&self, doc: &Html) -> Result<Vec<ClaimReview>, String> {
        let claims = self.claim.values(doc);
        if claims.is_empty() {
            return Err(format!(
                "the `sites` entry for {}: `claim` selector `{}`{} selects no text",
                self.host,
                self.claim.written,
                self.claim
                    .label
                    .as_deref()
                    .map(|l| format!(" with label `{l}`"))
                    .unwrap_or_default()
            ));
        }
        let values = |f: &Option<Field>| f.as_ref().map(|f| f.values(doc)).unwrap_or_default();
        let (ratings, speakers) = (values(&self.rating), values(&self.speaker));
        let (claim_dates, review_dates) = (values(&self.claim_date), values(&self.review_date));
        // The n-th claim's value, or the first when the page shows fewer.
        let nth = |v: &[String], n: usize| v.get(n).or(v.first()).cloned();
        Ok(claims
            .into_iter()
            .enumerate()
            .map(|(n, text)| ClaimReview {
                claim_reviewed: Some(text),
                rating_name: nth(&ratings, n),
                claimant: nth(&speakers, n),
                claim_date: nth(&claim_dates, n),
                review_date: nth(&review_dates, n),
                ..ClaimReview::default()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(v: serde_json::Value) -> SiteSelectors {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn labels_attributes_and_pairing() {
        let sites = Sites::new(&[entry(serde_json::json!({
            "host": "www.checks.example",
            "claim": "p", "claim_label": "Claim:",
            "rating": "p", "rating_label": "Our verdict",
            "review_date": "meta[property='article:published_time']@content",
        }))])
        .unwrap();
        let site = sites.for_host("checks.example").unwrap();
        assert!(sites.for_host("WWW.Checks.Example.").is_some());
        assert!(sites.for_host("other.example").is_none());
        let doc = Html::parse_document(
            r#"<head><meta property="article:published_time" content="2025-01-22T10:00:00Z"></head>
            <p><b>Claim:</b> The canal was  a gift.</p><p><b>Our verdict:</b> False.</p>
            <p>Claims are checked daily.</p>
            <p><b>CLAIM</b>: China runs the canal.</p><p>our verdict - Misleading</p>"#,
        );
        let crs = site.read(&doc).unwrap();
        let got: Vec<(Option<&str>, Option<&str>)> = crs
            .iter()
            .map(|c| (c.claim_reviewed.as_deref(), c.rating_name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Some("The canal was a gift."), Some("False.")),
                (Some("China runs the canal."), Some("Misleading")),
            ]
        );
        assert_eq!(crs[1].review_date.as_deref(), Some("2025-01-22T10:00:00Z"));
        let none = Html::parse_document("<p>Nothing to see.</p>");
        let err = site.read(&none).unwrap_err();
        assert!(err.contains("`p` with label `Claim:`"), "{err}");
    }

    #[test]
    fn entries_are_checked() {
        let err = |v| Sites::new(&[entry(v)]).unwrap_err();
        let e = err(serde_json::json!({"host": "dw.com", "claim": "p[", "rating": "p"}));
        assert_eq!(e.field, "sites[0].claim");
        let e = err(serde_json::json!({"host": "dw.com", "claim": "p", "rating": "@content"}));
        assert_eq!(e.field, "sites[0].rating");
        let e = err(serde_json::json!({"host": "https://dw.com/", "claim": "p"}));
        assert_eq!(e.field, "sites[0].host");
        let twice = Sites::new(&[
            entry(serde_json::json!({"host": "dw.com", "claim": "p"})),
            entry(serde_json::json!({"host": "www.dw.com", "claim": "h1"})),
        ])
        .unwrap_err();
        assert_eq!(twice.field, "sites[1].host");
        assert!(
            serde_json::from_value::<SiteSelectors>(
                serde_json::json!({"host": "dw.com", "claim": "p", "verdict": "p"})
            )
            .is_err()
        );
    }
}
