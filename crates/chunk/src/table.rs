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
/// out, the rest becomes a Markdown table whose first row is the header. Spanned cells are
/// expanded into empty cells so columns line up; rows of different widths after that are an
/// error, since a ragged table cannot be rendered faithfully.
pub fn convert_html_table(table: &ElementRef<'_>) -> Result<HtmlTable, TableError> {
    let caption = table
        .children()
        .filter_map(ElementRef::wrap)
        .find(|c| c.value().name() == "caption")
        .map(|c| element_text(&c))
        .filter(|c| !c.is_empty());
    let mut footnotes = Vec::new();
    let mut rows: Vec<ElementRef<'_>> = Vec::new();
    for child in table.children().filter_map(ElementRef::wrap) {
        match child.value().name() {
            "tfoot" => {
                for tr in child.children().filter_map(ElementRef::wrap) {
                    let t = element_text(&tr);
                    if !t.is_empty() {
                        footnotes.push(t);
                    }
                }
            }
            "thead" | "tbody" => rows.extend(
                child
                    .children()
                    .filter_map(ElementRef::wrap)
                    .filter(|r| r.value().name() == "tr"),
            ),
            "tr" => rows.push(child),
            _ => {}
        }
    }
    let grid = grid(&rows);
    if grid.is_empty() {
        return Err(TableError::Empty);
    }
    let widths: Vec<usize> = grid.iter().map(Vec::len).collect();
    if widths.iter().any(|w| *w != widths[0]) {
        return Err(TableError::Ragged(widths));
    }
    // htmd renders a pipe table only when the header is explicit, so the first row becomes one.
    let mut html = String::from("<table><thead>");
    for (r, row) in grid.iter().enumerate() {
        let tag = if r == 0 { "th" } else { "td" };
        html.push_str("<tr>");
        for cell in row {
            html.push_str(&format!("<{tag}>{cell}</{tag}>"));
        }
        html.push_str("</tr>");
        if r == 0 {
            html.push_str("</thead><tbody>");
        }
    }
    html.push_str("</tbody></table>");
    let markdown = htmd::convert(&html)
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
    let doc = Html::parse_fragment(&noisebench_web::nesting::limit_nesting(html));
    let table = doc
        .select(&selector("table"))
        .next()
        .ok_or(TableError::Empty)?;
    convert_html_table(&table)
}

/// The cells of `rows` as inner HTML, with `colspan` and `rowspan` expanded into empty cells.
/// Rows with no cell are left out.
fn grid(rows: &[ElementRef<'_>]) -> Vec<Vec<String>> {
    // Cells still covered by a rowspan from an earlier row: (row, column) -> taken.
    let mut carried: std::collections::BTreeSet<(usize, usize)> = Default::default();
    let mut out = Vec::new();
    for (r, tr) in rows.iter().enumerate() {
        let mut row: Vec<String> = Vec::new();
        let mut any = false;
        for td in tr.children().filter_map(ElementRef::wrap) {
            if !matches!(td.value().name(), "td" | "th") {
                continue;
            }
            any = true;
            while carried.contains(&(r, row.len())) {
                row.push(String::new());
            }
            let span = |name: &str| -> usize {
                td.value()
                    .attr(name)
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .filter(|n| *n >= 1)
                    .unwrap_or(1)
                    .min(1000)
            };
            let (cols, rowspan) = (span("colspan"), span("rowspan"));
            let col = row.len();
            row.push(td.inner_html().trim().to_string());
            row.extend(std::iter::repeat_n(String::new(), cols - 1));
            for later in r + 1..r + rowspan {
                for c in col..col + cols {
                    carried.insert((later, c));
                }
            }
        }
        while carried.contains(&(r, row.len())) {
            row.push(String::new());
        }
        if any {
            out.push(row);
        }
    }
    out
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
