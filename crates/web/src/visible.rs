//! What a browser renders of an HTML page: the one rule every reader of pages and filings shares
//! (the `reports` stage's HTML and EDGAR paths, the `documents` stage's extraction), so hidden
//! content never becomes text anywhere.
//!
//! An element is not rendered (`is_rendered`) when it is one a browser never draws (`script`,
//! `style`, `template`, `noscript` with scripting on, `ix:header` of inline XBRL, `datalist`,
//! `title` outside `<head>`), carries the `hidden` attribute, or its `style` attribute says
//! `display: none` (any case or spacing, `!important` or not; the last `display` declaration
//! wins). Comments are never rendered either. `prune_unrendered` removes all of them from a
//! parsed document, so whatever walks the tree afterwards (`ElementRef::text` included) sees only
//! rendered content; [`parse_rendered`] parses and prunes in one call, [`strip_unrendered`] does
//! it on a string for readers that parse pages themselves.
//!
//! Kept on purpose: the document's `<head>` (never rendered, but its title and `<meta>` tags are
//! read as metadata, not as text) and JSON-LD data blocks (`<script type="application/ld+json">`),
//! which metadata readers parse and text readers skip as scripts.
//!
//! What this is not: a CSS engine. Stylesheet rules (`.x { display: none }`), `visibility` (read
//! by [`style_invisible`] for the documents stage's boilerplate step, not pruned here),
//! off-screen positioning and closed `<details>` are not evaluated; 10-K filings and the pages we
//! read hide content with inline styles and elements, which this covers. [`visible_text`] is the
//! page's text as a browser's `innerText` gives its words (checked against headless Chromium on
//! real filings in the chunk crate's tests).

use scraper::node::Element;
use scraper::{ElementRef, Html, Node};

use crate::nesting::limit_nesting;

/// Elements whose content a browser never renders.
const NEVER_RENDERED: &[&str] = &[
    "script",
    "style",
    "template",
    "noscript",
    "ix:header",
    "datalist",
    "head",
    "title",
];

/// Elements that separate the words around them (a browser lays them out as blocks or cells).
const SEPARATING: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "br",
    "caption",
    "center",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
];

/// The value of the last `prop` declaration of an inline `style` attribute (any case or
/// spacing, `!important` dropped, lower-cased): the one a browser applies.
pub(crate) fn style_value(style: &str, prop: &str) -> Option<String> {
    let mut found = None;
    for decl in style.split(';') {
        let Some((name, value)) = decl.split_once(':') else {
            continue;
        };
        if name.trim().eq_ignore_ascii_case(prop) {
            let value = value.trim().to_ascii_lowercase();
            let value = value.strip_suffix("!important").unwrap_or(&value).trim();
            found = Some(value.to_string());
        }
    }
    found
}

/// Whether an inline `style` attribute hides its element: its last `display` declaration is
/// `none`.
pub(crate) fn style_hides(style: &str) -> bool {
    style_value(style, "display").is_some_and(|v| v == "none")
}

/// Whether an inline `style` attribute makes its element invisible while it keeps its place:
/// its last `visibility` declaration is `hidden` or `collapse`. Not part of `is_rendered`: a
/// descendant may set `visibility: visible` again, and filings do not hide text this way; the
/// documents stage's boilerplate step uses it on web pages.
pub fn style_invisible(style: &str) -> bool {
    style_value(style, "visibility").is_some_and(|v| v == "hidden" || v == "collapse")
}

/// Whether a browser renders this element (and so, possibly, its content).
pub(crate) fn is_rendered(el: &Element) -> bool {
    let name = el.name();
    if NEVER_RENDERED.iter().any(|n| name.eq_ignore_ascii_case(n)) {
        return false;
    }
    if el.attr("hidden").is_some() {
        return false;
    }
    !el.attr("style").is_some_and(style_hides)
}

/// Whether `<script>` holds data for metadata readers (JSON-LD), not code.
fn is_data_block(el: &Element) -> bool {
    el.name() == "script"
        && el
            .attr("type")
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/ld+json"))
}

/// What `prune_unrendered` took out.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Pruned {
    /// Subtrees (elements and comments) removed.
    pub nodes: usize,
    /// The text those subtrees held, one entry per text node (comments included), as found.
    pub hidden_text: Vec<String>,
}

/// Remove every element a browser does not render, and every comment, from `doc` (see the
/// module documentation for what is kept). Whatever walks the tree afterwards sees rendered
/// content only.
pub(crate) fn prune_unrendered(doc: &mut Html) -> Pruned {
    let mut doomed = Vec::new();
    let mut stack = vec![doc.tree.root()];
    while let Some(node) = stack.pop() {
        let remove = match node.value() {
            Node::Comment(_) => true,
            Node::Element(el) if el.name() == "head" => {
                // Never rendered, read as metadata: left alone.
                continue;
            }
            Node::Element(el) => !is_rendered(el) && !is_data_block(el),
            _ => false,
        };
        if remove {
            doomed.push(node.id());
        } else {
            stack.extend(node.children());
        }
    }
    let mut pruned = Pruned::default();
    for id in doomed {
        if let Some(node) = doc.tree.get(id) {
            for d in node.descendants() {
                match d.value() {
                    Node::Text(t) if !t.trim().is_empty() => pruned.hidden_text.push(t.to_string()),
                    Node::Comment(c) if !c.trim().is_empty() => {
                        pruned.hidden_text.push(c.to_string())
                    }
                    _ => {}
                }
            }
        }
        if let Some(mut node) = doc.tree.get_mut(id) {
            node.detach();
            pruned.nodes += 1;
        }
    }
    pruned
}

/// Parse a page (nesting limited, [`limit_nesting`]) and prune what a browser does not render.
pub fn parse_rendered(html: &str) -> (Html, Pruned) {
    let mut doc = Html::parse_document(&limit_nesting(html));
    let pruned = prune_unrendered(&mut doc);
    (doc, pruned)
}

/// `html` without what a browser does not render, serialised again (for readers that parse
/// the page themselves).
pub fn strip_unrendered(html: &str) -> String {
    parse_rendered(html).0.html()
}

/// The text of an element as a browser lays it out, words apart where blocks, cells and line
/// breaks part them, adjacent inline runs joined (`<b>Ex</b>ample` is one word). Whitespace is
/// not collapsed; callers squash it. Walks only what is in the tree: prune first.
pub fn rendered_text(el: ElementRef<'_>) -> String {
    let mut out = String::new();
    push_text(el, &mut out);
    out
}

fn push_text(el: ElementRef<'_>, out: &mut String) {
    for child in el.children() {
        match child.value() {
            Node::Text(t) => out.push_str(t),
            Node::Element(e) => {
                if !is_rendered(e) {
                    continue;
                }
                let separates = SEPARATING.contains(&e.name());
                if separates {
                    out.push('\n');
                }
                if let Some(c) = ElementRef::wrap(child) {
                    push_text(c, out);
                }
                if separates {
                    out.push('\n');
                }
            }
            _ => {}
        }
    }
}

/// The words a browser shows of a page (its `<body>`), separated as [`rendered_text`] separates
/// them, whitespace squashed.
pub fn visible_text(html: &str) -> String {
    let (doc, _) = parse_rendered(html);
    let text = rendered_text(doc.root_element());
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_none_in_any_spelling_hides() {
        for s in [
            "display:none",
            "DISPLAY: NONE",
            "color:red; display : none !important",
            "display:\tnone;",
            "display:block;display:none",
        ] {
            assert!(style_hides(s), "{s}");
        }
        for s in [
            "display:block",
            "display:none;display:block",
            "font-weight:700",
            "",
        ] {
            assert!(!style_hides(s), "{s}");
        }
    }

    #[test]
    fn visibility_in_any_spelling_is_read_apart_from_display() {
        for s in [
            "visibility:hidden",
            "VISIBILITY : Hidden !important",
            "visibility:visible; visibility: collapse",
        ] {
            assert!(style_invisible(s), "{s}");
            assert!(!style_hides(s), "{s}");
        }
        for s in ["visibility:hidden;visibility:visible", "display:none", ""] {
            assert!(!style_invisible(s), "{s}");
        }
    }

    #[test]
    fn hidden_content_is_pruned_and_reported() {
        let html = r#"<html><head><title>T</title>
            <script type="application/ld+json">{"a":1}</script></head><body>
            <div style="display:none"><ix:header><ix:hidden>us-gaap:Member2024</ix:hidden></ix:header></div>
            <p>Shown <span hidden>secret</span><span style="Display: None">gone</span>words.</p>
            <!-- a comment --><template><p>tmpl</p></template><noscript>ns</noscript>
            <script>var x = 1;</script><style>p{}</style>
            <table><tr><td>a</td><td style="display:none"></td><td>b</td></tr></table>
            </body></html>"#;
        let (doc, pruned) = parse_rendered(html);
        let text = visible_text(html);
        assert_eq!(text, "Shown words. a b");
        assert!(pruned.hidden_text.iter().any(|t| t.contains("us-gaap")));
        assert!(pruned.hidden_text.iter().any(|t| t.contains("a comment")));
        let kept = doc.html();
        assert!(kept.contains("<title>T</title>"), "{kept}");
        assert!(kept.contains("application/ld+json"), "{kept}");
        assert!(
            !kept.contains("secret") && !kept.contains("var x"),
            "{kept}"
        );
        let stripped = strip_unrendered(html);
        assert!(!stripped.contains("us-gaap") && stripped.contains("Shown"));
    }

    #[test]
    fn blocks_and_breaks_part_words_inline_runs_do_not() {
        assert_eq!(
            visible_text("<p>Ex<b>ample</b><br>next</p><div>a</div><div>b</div>"),
            "Example next a b"
        );
    }
}
