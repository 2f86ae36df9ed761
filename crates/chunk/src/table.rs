//! Tables: HTML to Markdown (through `htmd`), ragged-row checks, and captions and footnotes found
//! next to a table in running text.

use noisebench_core::Block;
use scraper::{ElementRef, Html, Selector};

/// Why a table could not be kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("ragged table: row widths {0:?}")]
    Ragged(Vec<usize>),
    #[error("empty table")]
    Empty,
}

impl TableError {
    pub fn reason(&self) -> &'static str {
        match self {
            TableError::Ragged(_) => "ragged_table",
            TableError::Empty => "empty_table",
        }
    }
}

/// A converted HTML table: Markdown plus what was lifted out of it.
#[derive(Debug, Clone, PartialEq)]
pub struct HtmlTable {
    pub markdown: String,
    pub caption: Option<String>,
    pub footnotes: Vec<String>,
}

fn selector(css: &str) -> Selector {
    // Invariant: only constant selectors are passed in.
    Selector::parse(css).expect("constant selector parses")
}

/// Collapse runs of whitespace to single spaces and trim.
pub fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text of an element with whitespace collapsed.
pub fn element_text(el: &ElementRef<'_>) -> String {
    squash(&el.text().collect::<String>())
}

/// Convert one `<table>` element: the caption (`<caption>`) and footer rows (`<tfoot>`) are lifted
/// out, the rest becomes a Markdown table. Rows of different widths (counting `colspan` and
/// `rowspan`) are an error: a ragged table cannot be rendered faithfully.
pub fn convert_html_table(table: &ElementRef<'_>) -> Result<HtmlTable, TableError> {
    let caption = table
        .children()
        .filter_map(ElementRef::wrap)
        .find(|c| c.value().name() == "caption")
        .map(|c| element_text(&c))
        .filter(|c| !c.is_empty());
    let mut footnotes = Vec::new();
    let mut body = String::from("<table>");
    for child in table.children().filter_map(ElementRef::wrap) {
        match child.value().name() {
            "caption" => {}
            "tfoot" => {
                for tr in child.select(&selector("tr")) {
                    let t = element_text(&tr);
                    if !t.is_empty() {
                        footnotes.push(t);
                    }
                }
            }
            _ => body.push_str(&child.html()),
        }
    }
    body.push_str("</table>");
    let widths = grid_widths(&Html::parse_fragment(&body));
    if widths.is_empty() {
        return Err(TableError::Empty);
    }
    if widths.iter().any(|w| *w != widths[0]) {
        return Err(TableError::Ragged(widths));
    }
    let markdown = htmd::convert(&body)
        .map_err(|_| TableError::Empty)?
        .trim()
        .to_string();
    if markdown.is_empty() {
        return Err(TableError::Empty);
    }
    Ok(HtmlTable {
        markdown,
        caption,
        footnotes,
    })
}

/// Convert an HTML string holding one table (MinerU's `table_body`).
pub fn convert_html_table_str(html: &str) -> Result<HtmlTable, TableError> {
    let doc = Html::parse_fragment(html);
    let table = doc
        .select(&selector("table"))
        .next()
        .ok_or(TableError::Empty)?;
    convert_html_table(&table)
}

/// Width of every row of the (first) table in `doc`, in grid cells, honouring colspan and rowspan.
fn grid_widths(doc: &Html) -> Vec<usize> {
    let Some(table) = doc.select(&selector("table")).next() else {
        return Vec::new();
    };
    let cell = selector("th, td");
    // Cells still covered by a rowspan from an earlier row, per later row.
    let mut carried: Vec<usize> = Vec::new();
    let mut widths = Vec::new();
    for (r, tr) in table.select(&selector("tr")).enumerate() {
        let mut width = carried.get(r).copied().unwrap_or(0);
        for td in tr.select(&cell) {
            // Only direct cells of this row (nested tables are rare and would be counted twice).
            if td.parent().and_then(ElementRef::wrap).map(|p| p.id()) != Some(tr.id()) {
                continue;
            }
            let span = |name: &str| -> usize {
                td.value()
                    .attr(name)
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .filter(|n| *n >= 1)
                    .unwrap_or(1)
                    .min(1000)
            };
            let (cols, rows) = (span("colspan"), span("rowspan"));
            width += cols;
            for later in r + 1..r + rows {
                if carried.len() <= later {
                    carried.resize(later + 1, 0);
                }
                carried[later] += cols;
            }
        }
        if width > 0 {
            widths.push(width);
        }
    }
    widths
}

/// Cells per row of a Markdown pipe table (escaped pipes `\|` do not split).
pub fn pipe_row_cells(line: &str) -> usize {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut cells = 1;
    let mut escaped = false;
    for ch in t.chars() {
        match ch {
            '\\' => escaped = !escaped,
            '|' if !escaped => cells += 1,
            _ => escaped = false,
        }
    }
    cells
}

/// Checks a Markdown pipe table for rows of different widths.
pub fn check_pipe_table(lines: &[&str]) -> Result<(), TableError> {
    let widths: Vec<usize> = lines.iter().map(|l| pipe_row_cells(l)).collect();
    match widths.first() {
        None => Err(TableError::Empty),
        Some(first) if widths.iter().any(|w| w != first) => Err(TableError::Ragged(widths)),
        _ => Ok(()),
    }
}

fn starts_like_caption(text: &str) -> bool {
    let lower = text.trim_start_matches(['*', '_']).to_lowercase();
    (lower.starts_with("table ") || lower.starts_with("table:") || lower.starts_with("exhibit "))
        && text.split_whitespace().count() <= 30
}

/// Whether a line reads like a table note: `Note:`, `Source:`, `*`, `(1)`, `(a)`, `1.` style markers.
pub fn starts_like_footnote(text: &str) -> bool {
    let t = text.trim_start();
    let lower = t.to_lowercase();
    if ["note", "notes", "source", "sources"]
        .iter()
        .any(|p| lower.starts_with(&format!("{p}:")) || lower.starts_with(&format!("{p} :")))
    {
        return true;
    }
    if t.starts_with('*') && !t.starts_with("**") || t.starts_with('†') || t.starts_with('‡') {
        return true;
    }
    if let Some(rest) = t.strip_prefix('(')
        && let Some(close) = rest.find(')')
    {
        let marker = &rest[..close];
        return !marker.is_empty()
            && marker.len() <= 3
            && marker.chars().all(|c| c.is_ascii_alphanumeric());
    }
    false
}

/// Attach captions and footnotes that sit beside a table as separate paragraphs: a short
/// preceding "Table ..." line becomes the caption; note-like paragraphs right after it become
/// footnotes. Keeps them in the same chunk as the table.
pub fn attach_captions_and_footnotes(blocks: Vec<Block>) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    let mut after_table = false;
    for block in blocks {
        match block {
            Block::Table {
                markdown,
                mut caption,
                footnotes,
                page,
            } => {
                if caption.is_none()
                    && let Some(Block::Paragraph { text, .. }) = out.last()
                    && starts_like_caption(text)
                    && let Some(Block::Paragraph { text, .. }) = out.pop()
                {
                    caption = Some(text.trim_matches(['*', '_']).trim().to_string());
                }
                out.push(Block::Table {
                    markdown,
                    caption,
                    footnotes,
                    page,
                });
                after_table = true;
            }
            Block::Paragraph { text, page }
                if after_table && starts_like_footnote(&text) && text.len() <= 600 =>
            {
                if let Some(Block::Table { footnotes, .. }) = out.last_mut() {
                    footnotes.push(text);
                } else {
                    out.push(Block::Paragraph { text, page });
                }
            }
            other => {
                after_table = false;
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_table_becomes_markdown_with_caption_and_footer() {
        let t = convert_html_table_str(
            "<table><caption>Table 1. Sales</caption><thead><tr><th>Year</th><th>Sales</th></tr></thead>\
             <tbody><tr><td>2021</td><td>10</td></tr><tr><td>2022</td><td>12</td></tr></tbody>\
             <tfoot><tr><td colspan=\"2\">Source: company data.</td></tr></tfoot></table>",
        )
        .unwrap();
        assert_eq!(t.caption.as_deref(), Some("Table 1. Sales"));
        assert_eq!(t.footnotes, vec!["Source: company data.".to_string()]);
        assert!(t.markdown.starts_with("| Year"), "{}", t.markdown);
        assert_eq!(t.markdown.lines().count(), 4, "{}", t.markdown);
    }

    #[test]
    fn spans_are_not_ragged_but_missing_cells_are() {
        let ok = convert_html_table_str(
            "<table><tr><th rowspan=2>A</th><th colspan=2>B</th></tr><tr><td>1</td><td>2</td></tr></table>",
        );
        assert!(ok.is_ok(), "{ok:?}");
        let bad = convert_html_table_str(
            "<table><tr><th>A</th><th>B</th><th>C</th></tr><tr><td>1</td><td>2</td></tr></table>",
        );
        assert_eq!(bad, Err(TableError::Ragged(vec![3, 2])));
    }

    #[test]
    fn pipe_tables_are_checked() {
        assert!(check_pipe_table(&["| a | b |", "|---|---|", "| 1 | 2 |"]).is_ok());
        assert!(check_pipe_table(&["| a | b |", "|---|---|", "| 1 | 2 | 3 |"]).is_err());
        assert_eq!(pipe_row_cells(r"| a \| b | c |"), 2);
    }

    #[test]
    fn footnote_markers() {
        assert!(starts_like_footnote("(1) Excludes items."));
        assert!(starts_like_footnote("Source: OECD."));
        assert!(starts_like_footnote("* Provisional."));
        assert!(!starts_like_footnote("(Loss) income was lower."));
        assert!(!starts_like_footnote("Sales rose."));
    }
}
