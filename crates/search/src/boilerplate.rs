//! What Readability keeps around an article that is not the article.
//!
//! dom_smoothie (Readability) finds the block that holds the article; what it keeps with it is
//! often not the text a reader came for: photo captions and credits, bylines and author boxes,
//! galleries and slideshows, "related" and "read more" link lists, share bars, newsletter and
//! promotion boxes, and content a browser does not show. This module removes them, in two steps:
//!
//! - `clean_page`, on the whole page before Readability: what `noisebench_web::visible` leaves,
//!   elements made invisible in place (inline `visibility: hidden` or `collapse`, read by
//!   `noisebench_web::visible::style_invisible`), unless one of them holds most of the page's text
//!   (a page that reveals its article by script). What a browser does not render at all
//!   (`hidden`, `display:none` in any spelling, `<template>`, `ix:header`, scripts, comments) is
//!   gone before this step: `extract_html` reads the page through
//!   `noisebench_web::visible::strip_unrendered`, the rule every HTML path shares.
//! - `article_text`, on the block Readability kept (`#readability-page-1`): figures and
//!   captions, blocks whose class or id names boilerplate, and blocks that are mostly links; then
//!   the block's formatted text.
//!
//! Every rule removes a block only while it is a small part of the article (see
//! `MAX_SHARE`), so a page whose whole article sits in a `gallery` or `related` container keeps
//! it. Measured on the article-extraction benchmark with `just extraction-bench` (figures in
//! docs/real-inputs-search.md).

use dom_query::{Document, NodeRef, Selection};

/// A rule removes a block only when its text is at most this share of the article's text.
pub(crate) const MAX_SHARE: f64 = 0.3;

/// Class and id words that name boilerplate: captions, credits, bylines, galleries, related
/// links, sharing, promotion. Matched against the words of `class` and `id` (split at `-`,
/// `_`, spaces and case changes), so `related` matches `article-related__list` and `relatedLinks`
/// but not `unrelated`.
const BOILERPLATE_WORDS: &[&str] = &[
    "caption",
    "credit",
    "credits",
    "byline",
    "gallery",
    "slideshow",
    "carousel",
    "related",
    "recommended",
    "recommendations",
    "share",
    "sharing",
    "social",
    "newsletter",
    "promo",
    "subscribe",
    "subscription",
    "signup",
    "advert",
    "advertisement",
    "sponsored",
    "outbrain",
    "taboola",
    "breadcrumb",
    "breadcrumbs",
    "tags",
    "toolbar",
    "disclaimer",
];

/// Remove what is invisible in place from the page (before Readability): elements whose inline
/// style sets `visibility: hidden` or `collapse`, unless one holds most of the page's text. The
/// page is expected to have gone through `noisebench_web::visible::strip_unrendered` first
/// (`display:none`, `hidden`, templates and the rest are that rule's).
pub(crate) fn clean_page(doc: &Document) {
    let body_len = text_len(&doc.select("body"));
    let styled = doc.select("[style]");
    for node in styled.nodes() {
        let style = node.attr("style").unwrap_or_default();
        if !noisebench_web::visible::style_invisible(&style) {
            continue;
        }
        // A page that shows its article by script hides it first: keep that.
        if body_len > 0 && node_text_len(node) as f64 > 0.5 * body_len as f64 {
            continue;
        }
        node.remove_from_parent();
    }
}

/// The article's text after its boilerplate is removed, or `None` when Readability kept no
/// article block.
pub(crate) fn article_text(doc: &Document) -> Option<String> {
    let root = doc.select_single("#readability-page-1");
    if !root.exists() {
        return None;
    }
    clean_article(&root);
    Some(root.formatted_text().to_string())
}

/// Remove figures, captions, boilerplate-named blocks and link lists from an article block.
pub(crate) fn clean_article(root: &Selection) {
    let total = text_len(root).max(1) as f64;
    let small = |n: &NodeRef| (node_text_len(n) as f64) <= MAX_SHARE * total;

    for node in root.select("figcaption, figure, aside, nav").nodes() {
        if small(node) {
            node.remove_from_parent();
        }
    }
    for node in root.select("[class], [id]").nodes() {
        if !node.is_element() || node.parent().is_none() {
            continue;
        }
        let names = format!(
            "{} {}",
            node.attr("class").unwrap_or_default(),
            node.attr("id").unwrap_or_default()
        );
        if names_boilerplate(&names) && small(node) {
            node.remove_from_parent();
        }
    }
    for node in root.select("ul, ol").nodes() {
        if small(node) && link_density(node) > 0.6 {
            node.remove_from_parent();
        }
    }
    // Blocks that are mostly links: "read more" lines, share bars, teaser lists.
    for node in root.select("p, div, section, dl, table").nodes() {
        // A long paragraph is prose even when a script stuffed its links with tooltips.
        let prose = node.has_name("p") && node_text_len(node) > 300;
        if !prose && small(node) && link_density(node) > 0.7 {
            node.remove_from_parent();
        }
    }
    // Lines whose words say what they are: bylines, datelines, credits, "read more".
    for node in root
        .select("p, div, span, li, h2, h3, h4, h5, h6, strong, b, em, small, time, header, footer")
        .nodes()
    {
        let text = node.text();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() && small(node) && boilerplate_line(&text) {
            node.remove_from_parent();
        }
    }
}

/// Whole lines that are boilerplate, compared without case and trailing punctuation.
const BOILERPLATE_LINES: &[&str] = &[
    "advert",
    "advertisement",
    "continue reading",
    "continue reading below",
    "story continues below advertisement",
    "you may also like",
    "comments",
    "tell us what you think",
    "related",
    "related articles",
    "related stories",
    "read more",
    "don't miss",
    "recommended",
    "share",
    "share this article",
    "sponsored",
    "trending",
    "most popular",
    "tags",
];

/// Starts of short lines that are boilerplate: "read more" links, datelines, credits.
const BOILERPLATE_STARTS: &[&str] = &[
    "read more:",
    "see more:",
    "related:",
    "also read:",
    "more:",
    "photo:",
    "photograph:",
    "image:",
    "picture:",
    "credit:",
    "photo credit",
    "image source",
    "image copyright",
    "©",
];

/// Starts of datelines (with a digit somewhere in the line).
const DATELINE_STARTS: &[&str] = &[
    "published",
    "updated",
    "posted",
    "last updated",
    "first published",
];

/// Whether a short line of text is a byline, dateline, credit, caption or "read more" line.
pub(crate) fn boilerplate_line(text: &str) -> bool {
    let chars = text.chars().count();
    if chars > 200 {
        return false;
    }
    let lower = text.to_lowercase();
    let bare =
        lower.trim_end_matches(|c: char| c.is_ascii_punctuation() || c == '…' || c.is_whitespace());
    if BOILERPLATE_LINES.contains(&bare) {
        return true;
    }
    if chars <= 120 && BOILERPLATE_STARTS.iter().any(|s| lower.starts_with(s)) {
        return true;
    }
    // "Updated Nov 19, 6:55 AM", "PUBLISHED: 10:48, Tue, Nov 19, 2019": datelines.
    if chars <= 120
        && DATELINE_STARTS.iter().any(|s| lower.starts_with(s))
        && text.chars().any(|c| c.is_ascii_digit())
    {
        return true;
    }
    // "By Jane Doe - 11/18/19 11:04 PM EST": a byline, not a sentence starting with "By".
    if chars <= 100 && text.starts_with("By ") && text.split_whitespace().count() <= 12 {
        return true;
    }
    // Shouted promotions: "GET FOX BUSINESS ON THE GO BY CLICKING HERE".
    let shouted = !text.chars().any(char::is_lowercase);
    if chars <= 120 && shouted && (lower.contains("click here") || lower.contains("clicking here"))
    {
        return true;
    }
    // A caption ending in its credit: "... (AP Photo/Alan Diaz, File)".
    if let Some(open) = lower.rfind('(')
        && lower.ends_with(')')
        && (lower[open..].contains("photo") || lower[open..].contains("getty"))
    {
        return true;
    }
    false
}

/// Whether a `class`/`id` value names boilerplate ([`BOILERPLATE_WORDS`]).
pub(crate) fn names_boilerplate(names: &str) -> bool {
    words(names).any(|w| BOILERPLATE_WORDS.iter().any(|b| w.eq_ignore_ascii_case(b)))
}

/// The words of a class or id value: split at non-alphanumerics and at lower-to-upper changes.
fn words(s: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    for token in s.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut start = 0;
        let bytes = token.as_bytes();
        for i in 1..bytes.len() {
            if bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase() {
                out.push(&token[start..i]);
                start = i;
            }
        }
        if start < token.len() {
            out.push(&token[start..]);
        }
    }
    out.into_iter().filter(|w| !w.is_empty())
}

fn text_len(sel: &Selection) -> usize {
    sel.nodes().iter().map(node_text_len).sum()
}

fn node_text_len(node: &NodeRef) -> usize {
    node.text()
        .split_whitespace()
        .map(|w| w.chars().count() + 1)
        .sum()
}

/// The share of a block's text that sits inside links.
fn link_density(node: &NodeRef) -> f64 {
    let total = node_text_len(node);
    if total == 0 {
        return 0.0;
    }
    let links: usize = Selection::from(*node)
        .select("a")
        .nodes()
        .iter()
        .map(node_text_len)
        .sum();
    links as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_words() {
        assert!(names_boilerplate("article-related__list"));
        assert!(names_boilerplate("relatedLinks"));
        assert!(names_boilerplate("photo caption"));
        assert!(!names_boilerplate("unrelated"));
        assert!(!names_boilerplate("article-body"));
    }

    fn para(words: &str) -> String {
        format!("<p>{}</p>", words.repeat(12))
    }

    #[test]
    fn invisible_content_goes_unless_it_is_the_page() {
        let text = "The council approved the new budget after a long debate. ";
        let html = format!(
            "<html><body><div style=\"VISIBILITY : hidden\">secret tracking text</div>\
             <span style=\"color:red;visibility:collapse !important\">collapsed text</span>\
             <p style=\"visibility:hidden;visibility:visible\">shown again</p>{}</body></html>",
            para(text)
        );
        let doc = Document::from(html.as_str());
        clean_page(&doc);
        let body = doc.select("body").text();
        assert!(
            !body.contains("secret") && !body.contains("collapsed"),
            "{body}"
        );
        assert!(body.contains("shown again") && body.contains("The council approved"));
        // A page that reveals its article by script: the invisible block is the page.
        let html = format!(
            "<html><body><div style=\"visibility:hidden\">{}</div><p>menu</p></body></html>",
            para(text)
        );
        let doc = Document::from(html.as_str());
        clean_page(&doc);
        assert!(doc.select("body").text().contains("The council approved"));
    }

    /// One rule for what a browser does not render: `display:none`, `hidden` and templates are
    /// `noisebench_web::visible`'s, applied at the extraction's entry, with no exception for a
    /// hidden block that holds most of the page (a browser shows none of it).
    #[test]
    fn unrendered_content_never_reaches_the_main_text() {
        let text = "The council approved the new budget after a long debate. ";
        let html = format!(
            "<html><head><title>Budget</title></head><body><article>\
             <div style=\"Display: None\">secret tracking text</div>\
             <template>template text</template><p hidden>hidden text</p>{}</article></body></html>",
            para(text)
        );
        let got = crate::extract::extract_html(&html, "https://example.org/a").unwrap();
        assert!(got.text.contains("The council approved"), "{}", got.text);
        for gone in ["secret", "template text", "hidden text"] {
            assert!(!got.text.contains(gone), "{gone}: {}", got.text);
        }
        // `clean_page` alone leaves them to that rule.
        let doc = Document::from(html.as_str());
        clean_page(&doc);
        assert!(doc.select("body").text().contains("secret tracking"));
    }

    #[test]
    fn article_blocks_go_while_small() {
        let text = "The council approved the new budget after a long debate. ";
        let html = format!(
            "<div id=\"readability-page-1\">{}<figure><img src=\"a.jpg\">\
             <figcaption>The council chamber. (AP Photo/Jane Doe)</figcaption></figure>\
             <div class=\"related-stories\"><a href=\"/x\">Other story</a></div>\
             <ul><li><a href=\"/a\">Teaser one</a></li><li><a href=\"/b\">Teaser two</a></li></ul>\
             <p>Advertisement</p><p>By Jane Doe - 11/18/19 11:04 PM EST</p>{}</div>",
            para(text),
            para(text)
        );
        let doc = Document::from(html.as_str());
        let got = article_text(&doc).unwrap();
        for gone in [
            "council chamber",
            "Other story",
            "Teaser",
            "Advertisement",
            "Jane Doe",
        ] {
            assert!(!got.contains(gone), "{gone} kept: {got}");
        }
        assert_eq!(got.matches("The council approved").count(), 24);
        // The whole article inside a `gallery` container is kept.
        let html = format!(
            "<div id=\"readability-page-1\"><div class=\"gallery\">{}</div></div>",
            para(text)
        );
        let doc = Document::from(html.as_str());
        assert!(article_text(&doc).unwrap().contains("The council approved"));
        assert!(article_text(&Document::from("<p>no block</p>")).is_none());
    }

    #[test]
    fn boilerplate_lines() {
        for line in [
            "Advertisement",
            "READ MORE: China plague outbreak confirmed",
            "By Justine Coleman - 11/18/19 11:04 PM EST",
            "Updated at 1:23 p.m.",
            "© Aaron Schwartz",
            "Vicente Aguiar loads garage door trims (AP Photo/Alan Diaz, File)",
            "You may also like...",
        ] {
            assert!(boilerplate_line(line), "{line}");
        }
        for line in [
            "By contrast, the council said the budget would pass without the library cuts that \
             had been proposed in the spring, and the mayor agreed.",
            "The council approved the budget.",
            "Updates to the plan were approved on Tuesday after a long debate about the budget \
             of the public library and the schools of the city.",
        ] {
            assert!(!boilerplate_line(line), "{line}");
        }
    }
}
