//! HTML to blocks: headings become sections, block elements paragraphs, tables Markdown.
//!
//! Only what a browser renders is read: the page is pruned of hidden content first
//! ([`noisebench_web::visible`]: `display:none`, `hidden`, inline XBRL's `ix:header`, scripts,
//! styles, templates, comments). A paragraph whose text is all bold and short (at most
//! `MAX_HEADING_WORDS` words) is a level-3 heading: filings mark their sub-headings that way,
//! not with `<h1>`-`<h6>`, and chunks take their section from it. A table laid out as a single row
//! or column (a bullet beside its text, an item number beside its title) is read as paragraphs; a
//! table without text is layout, not content, and is counted ([`HtmlReport::empty_tables`]), not
//! kept.

use noisebench_core::Block;
use noisebench_web::visible::{parse_rendered, rendered_text};
use scraper::node::Element;
use scraper::{ElementRef, Node, Selector};

use crate::table::{attach_captions_and_footnotes, convert_html_table, squash};

/// A bold paragraph of at most this many words is a sub-heading.
pub(crate) const MAX_HEADING_WORDS: usize = 15;

/// Elements whose content is never report text.
const SKIP: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "nav", "form", "iframe", "head", "button",
    "select", "object", "canvas",
];

/// Elements that are paragraphs of their own.
const PARAGRAPHS: &[&str] = &["p", "li", "dd", "dt", "blockquote", "pre", "address"];

/// Elements that only group other blocks.
const CONTAINERS: &[&str] = &[
    "html", "body", "div", "section", "article", "main", "header", "footer", "aside", "ul", "ol",
    "dl", "figure", "details", "summary", "center", "hgroup",
];

/// The result of reading an HTML page.
pub struct HtmlReport {
    pub title: Option<String>,
    pub blocks: Vec<Block>,
    /// Tables without any text (layout), left out.
    pub empty_tables: usize,
    /// Tables read as paragraphs (a single row or column).
    pub tables_as_text: usize,
}

struct Walker {
    blocks: Vec<Block>,
    inline: String,
    /// The running paragraph has text outside bold.
    inline_plain: bool,
    empty_tables: usize,
    tables_as_text: usize,
}

/// Whether an element sets its text bold.
fn is_bold(el: &Element) -> bool {
    matches!(el.name(), "b" | "strong")
        || el.attr("style").is_some_and(|style| {
            style.split(';').any(|decl| {
                decl.split_once(':').is_some_and(|(p, v)| {
                    p.trim().eq_ignore_ascii_case("font-weight")
                        && matches!(
                            v.trim().to_ascii_lowercase().as_str(),
                            "bold" | "bolder" | "600" | "700" | "800" | "900"
                        )
                })
            })
        })
}

/// Whether every piece of text under `el` is bold (`bold`: `el` sits in bold text).
fn all_bold(el: ElementRef<'_>, bold: bool) -> bool {
    let bold = bold || is_bold(el.value());
    el.children().all(|child| match child.value() {
        Node::Text(t) => bold || t.trim().is_empty(),
        Node::Element(_) => ElementRef::wrap(child).is_none_or(|c| all_bold(c, bold)),
        _ => true,
    })
}

/// Whether a bold paragraph reads as a sub-heading: short, with a letter, not a sentence running on.
fn heading_like(text: &str) -> bool {
    let words = text.split_whitespace().count();
    (1..=MAX_HEADING_WORDS).contains(&words)
        && text.chars().count() <= 150
        && text.chars().any(char::is_alphabetic)
        && !text.ends_with([',', ';'])
}

impl Walker {
    fn push_text(&mut self, text: String, bold: bool) {
        // Inline-XBRL filings pad empty paragraphs with zero-width spaces: nothing to read.
        if text
            .chars()
            .all(|c| c.is_whitespace() || crate::table::is_zero_width(c))
        {
            return;
        }
        if bold && heading_like(&text) {
            self.blocks.push(Block::Heading { level: 3, text });
        } else {
            self.blocks.push(Block::Paragraph { text, page: None });
        }
    }

    fn flush(&mut self) {
        let text = squash(&self.inline);
        self.inline.clear();
        let bold = !std::mem::take(&mut self.inline_plain);
        self.push_text(text, bold);
    }

    fn table(&mut self, el: &ElementRef<'_>, caption: Option<String>) {
        self.flush();
        match convert_html_table(el) {
            Ok(t) if t.grid.len() == 1 || t.grid.iter().all(|r| r.len() == 1) => {
                // Laid out as a table, read as text: a single row or column.
                self.tables_as_text += 1;
                let lines = t.caption.or(caption).into_iter();
                let rows = t.grid.iter().map(|r| squash(&r.join(" ")));
                for text in lines.chain(rows).chain(t.footnotes) {
                    if !text.is_empty() {
                        self.blocks.push(Block::Paragraph { text, page: None });
                    }
                }
            }
            Ok(t) => self.blocks.push(Block::Table {
                markdown: t.markdown,
                caption: t.caption.or(caption),
                footnotes: t.footnotes,
                page: None,
            }),
            Err(_) => self.empty_tables += 1,
        }
    }

    fn walk(&mut self, el: ElementRef<'_>, bold: bool) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => {
                    if !bold && !t.trim().is_empty() {
                        self.inline_plain = true;
                    }
                    self.inline.push_str(t);
                }
                Node::Element(_) => {
                    let Some(child) = ElementRef::wrap(child) else {
                        continue;
                    };
                    self.element(child, bold);
                }
                _ => {}
            }
        }
    }

    fn element(&mut self, el: ElementRef<'_>, bold: bool) {
        let name = el.value().name();
        if SKIP.contains(&name) {
            return;
        }
        let bold = bold || is_bold(el.value());
        if let Some(level) = name
            .strip_prefix('h')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|n| (1..=6).contains(n))
        {
            self.flush();
            let text = squash(&rendered_text(el));
            if !text.is_empty() {
                self.blocks.push(Block::Heading { level, text });
            }
        } else if name == "table" {
            self.table(&el, None);
        } else if name == "figure" && has_table(&el) {
            // A figure's caption belongs to the table it holds.
            let caption = el
                .children()
                .filter_map(ElementRef::wrap)
                .find(|c| c.value().name() == "figcaption")
                .map(|c| squash(&rendered_text(c)));
            for child in el.children().filter_map(ElementRef::wrap) {
                match child.value().name() {
                    "figcaption" => {}
                    "table" => self.table(&child, caption.clone()),
                    _ => self.element(child, bold),
                }
            }
        } else if PARAGRAPHS.contains(&name) {
            self.flush();
            if name == "li" && has_block_child(&el) {
                self.walk(el, bold);
                self.flush();
            } else if has_table(&el) {
                // A table inside a paragraph-like element (`<dd>`, `<blockquote>`) stays a table.
                self.walk(el, bold);
                self.flush();
            } else {
                let text = squash(&rendered_text(el));
                if name == "li" {
                    if !text.is_empty() {
                        let text = format!("- {text}");
                        self.blocks.push(Block::Paragraph { text, page: None });
                    }
                } else {
                    let bold = name != "pre" && all_bold(el, bold);
                    self.push_text(text, bold);
                }
            }
        } else if CONTAINERS.contains(&name) || name == "figcaption" {
            self.flush();
            self.walk(el, bold);
            self.flush();
        } else if name == "br" {
            self.inline.push(' ');
        } else {
            // Inline element (a, span, em, strong, sup...): its text joins the running paragraph.
            self.walk(el, bold);
        }
    }
}

fn has_table(el: &ElementRef<'_>) -> bool {
    el.children()
        .filter_map(ElementRef::wrap)
        .any(|c| c.value().name() == "table")
}

fn has_block_child(el: &ElementRef<'_>) -> bool {
    el.children().filter_map(ElementRef::wrap).any(|c| {
        let n = c.value().name();
        n == "table" || n == "ul" || n == "ol" || PARAGRAPHS.contains(&n)
    })
}

/// Read an HTML page into blocks.
pub fn html_blocks(html: &str) -> HtmlReport {
    let (doc, _) = parse_rendered(html);
    // Invariant: constant selectors parse.
    let title_sel = Selector::parse("title").expect("constant selector");
    let title = doc
        .select(&title_sel)
        .next()
        .map(|t| squash(&t.text().collect::<String>()))
        .filter(|t| !t.is_empty());
    let mut w = Walker {
        blocks: Vec::new(),
        inline: String::new(),
        inline_plain: false,
        empty_tables: 0,
        tables_as_text: 0,
    };
    w.element(doc.root_element(), false);
    w.flush();
    let blocks = attach_captions_and_footnotes(w.blocks);
    let title = title.or_else(|| {
        blocks.iter().find_map(|b| match b {
            Block::Heading { level: 1, text } => Some(text.clone()),
            _ => None,
        })
    });
    HtmlReport {
        title,
        blocks,
        empty_tables: w.empty_tables,
        tables_as_text: w.tables_as_text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structure_tables_and_notes() {
        let html = r#"<html><head><title>T</title><style>x{}</style></head><body>
            <h1>Plan</h1><div>Loose <b>text</b> here.<p>A paragraph.</p></div>
            <ul><li>one</li><li>two</li></ul>
            <table><caption>Table 1: Money</caption><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>
            <p>Note: rounded.</p>
            <table><tr><th>A</th><th>B</th></tr><tr><td>1</td></tr></table>
            <script>var x;</script><p>End.</p></body></html>"#;
        let r = html_blocks(html);
        assert_eq!(r.title.as_deref(), Some("T"));
        assert_eq!(r.empty_tables, 0);
        let kinds: Vec<String> = r
            .blocks
            .iter()
            .map(|b| match b {
                Block::Heading { text, .. } => format!("h:{text}"),
                Block::Paragraph { text, .. } => format!("p:{text}"),
                Block::Table {
                    caption, footnotes, ..
                } => format!("t:{caption:?}:{footnotes:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                "h:Plan",
                "p:Loose text here.",
                "p:A paragraph.",
                "p:- one",
                "p:- two",
                "t:Some(\"Table 1: Money\"):[\"Note: rounded.\"]",
                // One cell short: padded, kept.
                "t:None:[]",
                "p:End.",
            ]
        );
    }
}
