//! Tables: HTML tables laid out as HTML's table model lays them out and written as dense Markdown
//! pipe tables, ragged-row checks of pipe tables, and captions and footnotes found next to a table
//! in running text.
//!
//! An HTML table becomes a grid the way a browser builds it: each cell takes the first free slot
//! of its row, `colspan` and `rowspan` cover slots, short rows are padded, cells a browser does
//! not render (`display:none`, pruned before) take none. The grid is then made dense, as a reader
//! sees the table: a lone currency sign (`$`, `€`, `£`, `¥`) joins the number after it, a lone
//! `%` or `)` the number before it, spacer rows and columns (all empty) go, and two neighbouring
//! columns that one cell spans and no row fills both of are one column (the `$` | `3,206` a
//! two-column number was cut into). Cell text is what the browser renders, so in-page links (page
//! numbers of a table of contents) keep their text and lose their target.

use noisebench_core::Block;
use noisebench_web::visible::{parse_rendered, rendered_text};
use scraper::{ElementRef, Selector};

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
pub(crate) struct HtmlTable {
    pub markdown: String,
    pub caption: Option<String>,
    pub footnotes: Vec<String>,
    /// The dense grid the Markdown writes, first row the header.
    pub grid: Vec<Vec<String>>,
}

fn selector(css: &str) -> Selector {
    // Invariant: only constant selectors are passed in.
    Selector::parse(css).expect("constant selector parses")
}

/// Zero-width characters (inline XBRL filings pad empty paragraphs with U+200B).
pub(crate) fn is_zero_width(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
    )
}

/// Collapse runs of whitespace to single spaces and trim; zero-width characters (U+200B and its
/// kin, which inline-XBRL filings put in empty paragraphs and spacer cells) count as whitespace.
pub fn squash(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || is_zero_width(c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Rendered text of an element with whitespace collapsed.
pub(crate) fn element_text(el: &ElementRef<'_>) -> String {
    squash(&rendered_text(*el))
}

/// Convert one `<table>` element: the caption (`<caption>`) and footer rows (`<tfoot>`) are lifted
/// out, the rest becomes a dense Markdown table (see the module documentation) whose first row is
/// the header. Only a table without any text is an error ([`TableError::Empty`]).
pub(crate) fn convert_html_table(table: &ElementRef<'_>) -> Result<HtmlTable, TableError> {
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
    let grid = if slots_bound(&rows) <= MAX_SLOTS {
        let (grid, linked) = layout(&rows);
        dense(grid, linked)
    } else {
        // Past any real table's size (a hostile page): each row's text is one cell, so nothing
        // is lost and nothing grows quadratically.
        rows.iter()
            .map(|tr| vec![element_text(tr)])
            .filter(|r| !r[0].is_empty())
            .collect()
    };
    if grid.is_empty() {
        return Err(TableError::Empty);
    }
    Ok(HtmlTable {
        markdown: pipe_table(&grid),
        caption,
        footnotes,
        grid,
    })
}

/// Convert an HTML string holding one table (MinerU's `table_body`).
pub(crate) fn convert_html_table_str(html: &str) -> Result<HtmlTable, TableError> {
    let (doc, _) = parse_rendered(html);
    let table = doc
        .select(&selector("table"))
        .next()
        .ok_or(TableError::Empty)?;
    convert_html_table(&table)
}

/// A grid as Markdown: the first row the header, `|` in cells escaped.
pub(crate) fn pipe_table(grid: &[Vec<String>]) -> String {
    let line = |row: &[String]| {
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut out = Vec::with_capacity(grid.len() + 1);
    for (r, row) in grid.iter().enumerate() {
        out.push(line(row));
        if r == 0 {
            out.push(format!("|{}", " --- |".repeat(row.len())));
        }
    }
    out.join("\n")
}

/// Columns a table may take (HTML caps one cell's `colspan` at 1000).
const MAX_COLUMNS: usize = 1000;
/// Slots (rows times columns) a table may take before it is read row by row; real tables take
/// thousands.
const MAX_SLOTS: usize = 4_000_000;
/// Slots one cell's `rowspan` times `colspan` may cover.
const MAX_CELL_SLOTS: usize = 100_000;

fn span_attr(td: &ElementRef<'_>, name: &str) -> Option<usize> {
    td.value()
        .attr(name)
        .and_then(|v| v.trim().parse::<usize>().ok())
}

/// An upper bound of the slots [`layout`] fills: rows times the columns all cells could span.
fn slots_bound(rows: &[ElementRef<'_>]) -> usize {
    let spans: usize = rows
        .iter()
        .flat_map(|tr| tr.children().filter_map(ElementRef::wrap))
        .filter(|td| matches!(td.value().name(), "td" | "th"))
        .map(|td| span_attr(&td, "colspan").unwrap_or(1).clamp(1, 1000))
        .sum();
    rows.len().saturating_mul(spans.min(MAX_COLUMNS))
}

/// The slots of `rows` laid out as HTML's table model does, each cell's text in its first slot,
/// short rows padded; and for each column whether some cell spans it and the next one.
fn layout(rows: &[ElementRef<'_>]) -> (Vec<Vec<String>>, Vec<bool>) {
    let n = rows.len();
    let mut grid: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut taken: Vec<Vec<bool>> = vec![Vec::new(); n];
    let mut linked: Vec<bool> = Vec::new();
    for (r, tr) in rows.iter().enumerate() {
        let mut c = 0;
        for td in tr.children().filter_map(ElementRef::wrap) {
            if !matches!(td.value().name(), "td" | "th") {
                continue;
            }
            while taken[r].get(c).copied().unwrap_or(false) {
                c += 1;
            }
            if c >= MAX_COLUMNS {
                // Past the widest table kept: the text joins the row's last slot.
                let text = element_text(&td);
                if let Some(last) = grid[r].last_mut()
                    && !text.is_empty()
                {
                    last.push(' ');
                    last.push_str(&text);
                }
                continue;
            }
            // HTML caps colspan at 1000 and rowspan at 65534; rowspan 0 runs to the end.
            let cols = span_attr(&td, "colspan")
                .filter(|n| *n >= 1)
                .unwrap_or(1)
                .min(MAX_COLUMNS - c);
            let span = match span_attr(&td, "rowspan") {
                Some(0) => n - r,
                Some(k) => k.clamp(1, n - r),
                None => 1,
            }
            .min((MAX_CELL_SLOTS / cols).max(1));
            for row in taken.iter_mut().skip(r).take(span) {
                if row.len() < c + cols {
                    row.resize(c + cols, false);
                }
                row[c..c + cols].iter_mut().for_each(|t| *t = true);
            }
            if grid[r].len() < c + 1 {
                grid[r].resize(c + 1, String::new());
            }
            grid[r][c] = element_text(&td);
            if linked.len() < c + cols {
                linked.resize(c + cols, false);
            }
            linked[c..c + cols - 1].iter_mut().for_each(|l| *l = true);
            c += cols;
        }
    }
    let width = taken.iter().map(Vec::len).max().unwrap_or(0);
    for row in &mut grid {
        row.resize(width, String::new());
    }
    linked.resize(width, false);
    (grid, linked)
}

const CURRENCY: &[&str] = &["$", "€", "£", "¥", "US$", "($"];
const CLOSERS: &[&str] = &["%", ")", ")%", "%)", "%)%"];

/// Whether a cell reads as the start of a number (`3,206`, `(12)`, `.5`, `-4`, `—`).
fn starts_number(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || "(.-−—–".contains(c))
}

/// Whether a cell reads as the end of a number, or of a parenthesised figure.
fn ends_number(text: &str) -> bool {
    text.chars()
        .last()
        .is_some_and(|c| c.is_ascii_digit() || ")%—–-".contains(c))
}

/// A grid of equal rows made dense as [`dense`] does, no column spanning into the next (tables
/// laid out in plain text).
pub(crate) fn dense_grid(grid: Vec<Vec<String>>) -> Vec<Vec<String>> {
    let width = grid.first().map_or(0, Vec::len);
    dense(grid, vec![false; width])
}

/// The grid as a reader sees it (see the module documentation).
fn dense(mut grid: Vec<Vec<String>>, linked: Vec<bool>) -> Vec<Vec<String>> {
    for row in &mut grid {
        let width = row.len();
        for c in 0..width {
            let cell = row[c].as_str();
            if CURRENCY.contains(&cell) {
                if let Some(k) = (c + 1..width).find(|&k| !row[k].is_empty())
                    && starts_number(&row[k])
                {
                    let sign = std::mem::take(&mut row[c]);
                    row[k] = format!("{sign}{}", row[k]);
                }
            } else if CLOSERS.contains(&cell)
                && let Some(j) = (0..c).rev().find(|&j| !row[j].is_empty())
                && ends_number(&row[j])
            {
                let close = std::mem::take(&mut row[c]);
                row[j].push_str(&close);
            }
        }
    }
    grid.retain(|row| row.iter().any(|c| !c.is_empty()));
    let mut columns: Vec<Vec<String>> = Vec::new();
    let mut links: Vec<bool> = Vec::new();
    let width = grid.first().map_or(0, Vec::len);
    for c in 0..width {
        let column: Vec<String> = grid.iter_mut().map(|r| std::mem::take(&mut r[c])).collect();
        let joinable = links.last().copied().unwrap_or(false)
            && columns.last().is_some_and(|prev: &Vec<String>| {
                prev.iter()
                    .zip(&column)
                    .all(|(a, b)| a.is_empty() || b.is_empty())
            });
        if joinable && let Some(prev) = columns.last_mut() {
            for (a, b) in prev.iter_mut().zip(column) {
                if a.is_empty() {
                    *a = b;
                }
            }
            // The merged column links onward as the column merged into it did.
            if let Some(l) = links.last_mut() {
                *l = linked[c];
            }
        } else {
            columns.push(column);
            links.push(linked[c]);
        }
    }
    columns.retain(|col| col.iter().any(|c| !c.is_empty()));
    let rows = grid.len();
    (0..rows)
        .map(|r| columns.iter().map(|col| col[r].clone()).collect())
        .collect()
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

/// A Markdown pipe table with every row as wide as its widest, as Markdown renderers lay it out:
/// short rows padded with empty cells (the delimiter row with `---`), so no cell is lost. A table
/// already square comes back as written. Only a table without any cell text is an error.
pub(crate) fn square_pipe_table(lines: &[&str]) -> Result<String, TableError> {
    let split = |line: &str| -> Vec<String> {
        let t = line.trim();
        let t = t.strip_prefix('|').unwrap_or(t);
        let t = t.strip_suffix('|').unwrap_or(t);
        let mut cells = vec![String::new()];
        let mut escaped = false;
        for ch in t.chars() {
            match ch {
                '|' if !escaped => cells.push(String::new()),
                _ => cells.last_mut().expect("one cell at least").push(ch),
            }
            escaped = ch == '\\' && !escaped;
        }
        cells.into_iter().map(|c| c.trim().to_string()).collect()
    };
    let rows: Vec<Vec<String>> = lines.iter().map(|l| split(l)).collect();
    let is_delimiter = |row: &[String]| {
        row.iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':')))
    };
    let has_text = rows
        .iter()
        .any(|r| !is_delimiter(r) && r.iter().any(|c| !c.is_empty()));
    if !has_text {
        return Err(TableError::Empty);
    }
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if rows.iter().all(|r| r.len() == width) {
        return Ok(lines.join("\n"));
    }
    Ok(rows
        .into_iter()
        .map(|mut row| {
            let fill = if is_delimiter(&row) { "---" } else { "" };
            row.resize(width, fill.to_string());
            format!("| {} |", row.join(" | "))
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Checks a Markdown pipe table for rows of different widths.
#[cfg(test)]
fn check_pipe_table(lines: &[&str]) -> Result<(), TableError> {
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
pub(crate) fn starts_like_footnote(text: &str) -> bool {
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
pub(crate) fn attach_captions_and_footnotes(blocks: Vec<Block>) -> Vec<Block> {
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
        assert_eq!(
            t.markdown,
            "| Year | Sales |\n| --- | --- |\n| 2021 | 10 |\n| 2022 | 12 |"
        );
    }

    #[test]
    fn spans_and_short_rows_are_laid_out_as_browsers_do() {
        let t = convert_html_table_str(
            "<table><tr><th rowspan=2>A</th><th colspan=2>B</th></tr><tr><td>1</td><td>2</td></tr></table>",
        )
        .unwrap();
        assert_eq!(t.grid, vec![vec!["A", "B", ""], vec!["", "1", "2"]]);
        // A row one cell short is padded, not dropped.
        let t = convert_html_table_str(
            "<table><tr><th>A</th><th>B</th><th>C</th></tr><tr><td>1</td><td>2</td></tr></table>",
        )
        .unwrap();
        assert_eq!(t.grid, vec![vec!["A", "B", "C"], vec!["1", "2", ""]]);
        assert_eq!(
            convert_html_table_str("<table><tr><td> </td><td></td></tr></table>"),
            Err(TableError::Empty)
        );
    }

    #[test]
    fn hostile_spans_stay_bounded_and_keep_their_text() {
        // 2,000 cells of colspan 1000 in one row: at most 1000 columns, every text kept.
        let cells: String = (0..2000)
            .map(|i| format!("<td colspan=1000>c{i}</td>"))
            .collect();
        let t = convert_html_table_str(&format!("<table><tr>{cells}</tr></table>")).unwrap();
        assert!(t.grid[0].len() <= MAX_COLUMNS);
        assert!(t.grid[0].concat().contains("c1999"));
        // Many rows, each spanning wide: read row by row.
        let rows: String = (0..5000)
            .map(|i| format!("<tr><td colspan=1000 rowspan=0>r{i}</td></tr>"))
            .collect();
        let t = convert_html_table_str(&format!("<table>{rows}</table>")).unwrap();
        assert_eq!(t.grid.len(), 5000);
        assert_eq!(t.grid[4999], vec!["r4999".to_string()]);
    }

    #[test]
    fn money_columns_are_dense() {
        // The 10-K layout: a spacer column, `$` in a cell of its own, a number spanning two
        // columns in another row, a closing parenthesis and a percent sign apart.
        let t = convert_html_table_str(
            "<table>\
             <tr><td></td><td></td><td colspan=3>2025</td><td></td><td colspan=3>Change</td></tr>\
             <tr><td>Revenue</td><td></td><td>$</td><td>3,206</td><td></td><td></td><td>12</td><td>%</td><td></td></tr>\
             <tr><td>Costs</td><td></td><td colspan=2>(2,440</td><td>)</td><td></td><td>(3</td><td>)%</td><td></td></tr>\
             <tr><td></td><td></td><td></td><td></td><td></td><td></td><td></td><td></td><td></td></tr>\
             <tr><td>See <a href=\"#i7bf\">29</a></td></tr></table>",
        )
        .unwrap();
        assert_eq!(
            t.grid,
            vec![
                vec!["", "2025", "Change"],
                vec!["Revenue", "$3,206", "12%"],
                vec!["Costs", "(2,440)", "(3)%"],
                vec!["See 29", "", ""],
            ]
        );
    }

    #[test]
    fn pipe_tables_are_checked() {
        assert!(check_pipe_table(&["| a | b |", "|---|---|", "| 1 | 2 |"]).is_ok());
        assert!(check_pipe_table(&["| a | b |", "|---|---|", "| 1 | 2 | 3 |"]).is_err());
        assert_eq!(pipe_row_cells(r"| a \| b | c |"), 2);
    }

    #[test]
    fn short_pipe_rows_are_padded_not_dropped() {
        assert_eq!(
            square_pipe_table(&["| a | b |", "|---|---|", "| 1 | 2 | 3 |"]).unwrap(),
            "| a | b |  |\n| --- | --- | --- |\n| 1 | 2 | 3 |"
        );
        let square = ["| a | b |", "|---|---|", "| 1 | 2 |"];
        assert_eq!(square_pipe_table(&square).unwrap(), square.join("\n"));
        assert_eq!(
            square_pipe_table(&["| | |", "|---|---|"]),
            Err(TableError::Empty)
        );
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
