//! HTML to blocks: headings become sections, block elements paragraphs, tables Markdown.

use noisebench_core::Block;
use scraper::{ElementRef, Html, Node, Selector};

use crate::table::{TableError, attach_captions_and_footnotes, convert_html_table, squash};

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
    pub bad_tables: Vec<(usize, TableError)>,
}

struct Walker {
    blocks: Vec<Block>,
    inline: String,
    bad_tables: Vec<(usize, TableError)>,
    tables: usize,
}

impl Walker {
    fn flush(&mut self) {
        let text = squash(&self.inline);
        self.inline.clear();
        if !text.is_empty() {
            self.blocks.push(Block::Paragraph { text, page: None });
        }
    }

    fn table(&mut self, el: &ElementRef<'_>, caption: Option<String>) {
        self.flush();
        match convert_html_table(el) {
            Ok(t) => self.blocks.push(Block::Table {
                markdown: t.markdown,
                caption: t.caption.or(caption),
                footnotes: t.footnotes,
                page: None,
            }),
            Err(e) => self.bad_tables.push((self.tables, e)),
        }
        self.tables += 1;
    }

    fn walk(&mut self, el: ElementRef<'_>) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => self.inline.push_str(t),
                Node::Element(_) => {
                    let Some(child) = ElementRef::wrap(child) else {
                        continue;
                    };
                    self.element(child);
                }
                _ => {}
            }
        }
    }

    fn element(&mut self, el: ElementRef<'_>) {
        let name = el.value().name();
        if SKIP.contains(&name) {
            return;
        }
        if let Some(level) = name
            .strip_prefix('h')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|n| (1..=6).contains(n))
        {
            self.flush();
            let text = squash(&el.text().collect::<String>());
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
                .map(|c| squash(&c.text().collect::<String>()));
            for child in el.children().filter_map(ElementRef::wrap) {
                match child.value().name() {
                    "figcaption" => {}
                    "table" => self.table(&child, caption.clone()),
                    _ => self.element(child),
                }
            }
        } else if PARAGRAPHS.contains(&name) {
            self.flush();
            if name == "li" && has_block_child(&el) {
                self.walk(el);
                self.flush();
            } else {
                let text = squash(&el.text().collect::<String>());
                if !text.is_empty() {
                    let text = if name == "li" {
                        format!("- {text}")
                    } else {
                        text
                    };
                    self.blocks.push(Block::Paragraph { text, page: None });
                }
            }
        } else if CONTAINERS.contains(&name) || name == "figcaption" {
            self.flush();
            self.walk(el);
            self.flush();
        } else if name == "br" {
            self.inline.push(' ');
        } else {
            // Inline element (a, span, em, strong, sup...): its text joins the running paragraph.
            self.walk(el);
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
    let doc = Html::parse_document(&noisebench_web::nesting::limit_nesting(html));
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
        bad_tables: Vec::new(),
        tables: 0,
    };
    w.element(doc.root_element());
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
        bad_tables: w.bad_tables,
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
        assert_eq!(r.bad_tables.len(), 1);
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
                "p:End.",
            ]
        );
    }
}
