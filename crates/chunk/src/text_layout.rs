//! Plain text to blocks: headings, paragraphs, pipe tables, and whitespace-aligned tables that
//! older filings carry flattened into text.
//!
//! In the one-paragraph-per-line layout, tables that edgar-crawler flattened to one cell per line
//! become one table block each ([`crate::flat_table`]).
//!
//! Two layouts exist. EDGAR items put one paragraph per line and break some paragraphs across
//! lines (a line starting in lower case continues the previous one). Plain text files separate
//! paragraphs with blank lines and wrap lines inside them.

use noisebench_core::Block;

use crate::flat_table;
use crate::table::{TableError, square_pipe_table, starts_like_footnote};

/// How paragraphs are delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One paragraph per line (edgar-crawler items).
    LinePerParagraph,
    /// Paragraphs separated by blank lines; lines inside are wrapped text.
    BlankLineSeparated,
}

/// Blocks of `text`, and the tables that could not be kept (index among the text's tables).
pub fn text_blocks(text: &str, layout: Layout) -> (Vec<Block>, Vec<(usize, TableError)>) {
    text_blocks_with(text, layout, true)
}

/// [`text_blocks`], with the rebuilding of cell-per-line tables switched off when `flat_tables`
/// is false: how text was read before it existed, for measuring what it changes.
pub fn text_blocks_with(
    text: &str,
    layout: Layout,
    flat_tables: bool,
) -> (Vec<Block>, Vec<(usize, TableError)>) {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end()).collect();
    let mut blocks = Vec::new();
    let mut bad_tables = Vec::new();
    let mut table_index = 0;
    let mut para: Vec<&str> = Vec::new();
    let mut i = 0;

    let flush = |para: &mut Vec<&str>, blocks: &mut Vec<Block>| {
        if para.is_empty() {
            return;
        }
        let joined = para.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
        para.clear();
        push_text_block(blocks, joined);
    };

    // The previous line was a marker that opens this line's paragraph.
    let mut glue = false;
    while i < lines.len() {
        let line = lines[i];
        let glued = std::mem::take(&mut glue);
        if line.trim().is_empty() {
            flush(&mut para, &mut blocks);
            i += 1;
            continue;
        }
        if let Some(end) = pipe_table_end(&lines, i) {
            flush(&mut para, &mut blocks);
            let rows: Vec<&str> = lines[i..end].iter().map(|l| l.trim()).collect();
            match square_pipe_table(&rows) {
                Ok(markdown) => blocks.push(Block::Table {
                    markdown,
                    caption: None,
                    footnotes: Vec::new(),
                    page: None,
                }),
                Err(e) => bad_tables.push((table_index, e)),
            }
            table_index += 1;
            i = end;
            continue;
        }
        if let Some(end) = aligned_table_end(&lines, i) {
            flush(&mut para, &mut blocks);
            let caption = caption_before(&mut blocks);
            let mut end = end;
            let mut footnotes = Vec::new();
            while end < lines.len() && footnotes.len() < 5 && starts_like_footnote(lines[end]) {
                footnotes.push(lines[end].trim().to_string());
                end += 1;
            }
            blocks.push(Block::Table {
                markdown: lines[i..end - footnotes.len()].join("\n"),
                caption,
                footnotes,
                page: None,
            });
            table_index += 1;
            i = end;
            continue;
        }
        if flat_tables
            && layout == Layout::LinePerParagraph
            && let Some(end) = flat_table::run_end(&lines, i)
        {
            // A table whose cells edgar-crawler put one per line: one block, never headings.
            flush(&mut para, &mut blocks);
            blocks.push(flat_table::table_block(&lines[i..end]));
            table_index += 1;
            i = end;
            continue;
        }
        match layout {
            Layout::LinePerParagraph => {
                let trimmed = line.trim();
                if glued {
                    para.push(trimmed);
                } else if flat_tables
                    && flat_table::is_marker(trimmed)
                    && lines.get(i + 1).is_some_and(|n| flat_table::is_prose(n))
                {
                    // A footnote or exhibit number on its own line, `(1)` or `4.1`, opens the
                    // paragraph on the next line instead of standing alone as a bare number.
                    flush(&mut para, &mut blocks);
                    para.push(trimmed);
                    glue = true;
                } else if trimmed == "•" || trimmed == "●" || trimmed == "·" {
                    // A bullet on its own line belongs to the next line.
                    flush(&mut para, &mut blocks);
                    para.push("•");
                } else if (para.len() == 1 && para[0] == "•")
                    || (continues_paragraph(trimmed) && !para.is_empty())
                {
                    para.push(trimmed);
                } else if continues_paragraph(trimmed)
                    && let Some(Block::Paragraph { text, .. }) = blocks.last_mut()
                {
                    text.push(' ');
                    text.push_str(trimmed);
                } else {
                    flush(&mut para, &mut blocks);
                    para.push(trimmed);
                }
            }
            Layout::BlankLineSeparated => para.push(line),
        }
        i += 1;
    }
    flush(&mut para, &mut blocks);
    (blocks, bad_tables)
}

/// A paragraph or, when it reads like one, a heading.
fn push_text_block(blocks: &mut Vec<Block>, text: String) {
    let text = text.replace("• ", "•").trim().to_string();
    if text.is_empty() {
        return;
    }
    match heading_level(&text) {
        Some(level) => blocks.push(Block::Heading { level, text }),
        None => blocks.push(Block::Paragraph { text, page: None }),
    }
}

/// A line starting in lower case continues the paragraph that a page break cut.
fn continues_paragraph(line: &str) -> bool {
    line.chars().next().is_some_and(char::is_lowercase)
}

const SMALL_WORDS: &[&str] = &[
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "vs",
    "vs.", "with", "net", "per", "into",
];

/// The heading level of a line that reads like a section title, else `None`.
///
/// `ITEM 7.` lines are level 1, all-capital titles level 2, other short title-like lines level 3.
pub(crate) fn heading_level(line: &str) -> Option<u8> {
    let t = line.trim();
    let words: Vec<&str> = t.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let lower = t.to_lowercase();
    if lower.starts_with("item ")
        && words.len() <= 20
        && words
            .get(1)
            .is_some_and(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
    {
        return Some(1);
    }
    if words.len() > 12 || t.len() > 100 {
        return None;
    }
    let first = t.chars().next()?;
    if !first.is_uppercase() {
        return None;
    }
    if t.ends_with([',', ';', ':', '-', '—']) {
        return None;
    }
    let letters: Vec<char> = t.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.len() < 2 {
        return None;
    }
    let all_caps = letters.iter().all(|c| c.is_uppercase());
    let title_case = words.iter().all(|w| {
        let bare = w.trim_matches(|c: char| !c.is_alphanumeric());
        bare.is_empty()
            || SMALL_WORDS.contains(&bare.to_lowercase().as_str())
            || !bare.chars().next().is_some_and(char::is_lowercase)
    });
    if t.ends_with(['.', '?', '!']) {
        // "Product Revenues." is a run-in title; "Sales rose." is a sentence.
        return (title_case && words.len() <= 8 && !t.ends_with("..")).then_some(if all_caps {
            2
        } else {
            3
        });
    }
    if all_caps {
        return Some(2);
    }
    // Short lines without final punctuation are titles unless they read like a sentence.
    (title_case || words.len() <= 4).then_some(3)
}

fn pipe_table_end(lines: &[&str], start: usize) -> Option<usize> {
    let is_row = |l: &str| {
        let t = l.trim();
        t.starts_with('|') && t.len() > 1
    };
    let mut end = start;
    while end < lines.len() && is_row(lines[end]) {
        end += 1;
    }
    (end - start >= 2).then_some(end)
}

/// Cells of a whitespace-aligned row: text separated by two or more spaces or a tab.
fn aligned_cells(line: &str) -> Vec<&str> {
    let mut cells = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        let gap = rest
            .find("  ")
            .into_iter()
            .chain(rest.find('\t'))
            .min()
            .unwrap_or(rest.len());
        cells.push(&rest[..gap]);
        rest = rest[gap..].trim_start();
    }
    cells
}

fn numeric_cell(cell: &str) -> bool {
    let core: String = cell
        .chars()
        .filter(|c| !matches!(c, '$' | '%' | '(' | ')' | ',' | '.' | '-' | '—' | ' '))
        .collect();
    (!core.is_empty() && core.chars().all(|c| c.is_ascii_digit()))
        || cell
            .chars()
            .all(|c| matches!(c, '-' | '=' | '_' | ' ' | '—'))
}

/// A row of an aligned table: at least two cells, at least one of them a number or a rule.
fn aligned_row(line: &str) -> bool {
    let cells = aligned_cells(line);
    cells.len() >= 2 && cells.iter().any(|c| numeric_cell(c))
}

/// End of a whitespace-aligned table starting at `start`: three or more rows, allowing single
/// label lines (`Operating expenses:`) between rows.
fn aligned_table_end(lines: &[&str], start: usize) -> Option<usize> {
    if !aligned_row(lines[start]) {
        return None;
    }
    let mut rows = 0;
    let mut end = start;
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        if aligned_row(line) {
            rows += 1;
            i += 1;
            end = i;
        } else if !line.trim().is_empty()
            && line.split_whitespace().count() <= 8
            && i + 1 < lines.len()
            && aligned_row(lines[i + 1])
        {
            i += 1;
        } else {
            break;
        }
    }
    (rows >= 3).then_some(end)
}

/// A short title line right before an aligned table is its caption.
fn caption_before(blocks: &mut Vec<Block>) -> Option<String> {
    let take = match blocks.last() {
        Some(Block::Paragraph { text, .. }) | Some(Block::Heading { text, .. }) => {
            text.split_whitespace().count() <= 15 && !text.ends_with('.')
        }
        _ => false,
    };
    if !take {
        return None;
    }
    match blocks.pop() {
        Some(Block::Paragraph { text, .. }) | Some(Block::Heading { text, .. }) => Some(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_and_sentences() {
        assert_eq!(heading_level("ITEM 7. MANAGEMENT'S DISCUSSION"), Some(1));
        assert_eq!(heading_level("RESULTS OF OPERATIONS"), Some(2));
        assert_eq!(heading_level("Product Revenues."), Some(3));
        assert_eq!(heading_level("Other Income (Expense), net."), Some(3));
        assert_eq!(heading_level("Fiscal year"), Some(3));
        assert_eq!(heading_level("Sales rose sharply this year."), None);
        assert_eq!(heading_level("2022 vs. 2021 -"), None);
        assert_eq!(heading_level("•Beef - 12.6%"), None);
        assert_eq!(
            heading_level("Operating margins by segment were as follows:"),
            None
        );
    }

    #[test]
    fn edgar_lines_join_page_breaks_and_bullets() {
        let text = "OVERVIEW\nOur strategy is to grow as we: grow\nour business.\n•\nNet revenues rose.\nNext paragraph here.";
        let (blocks, bad) = text_blocks(text, Layout::LinePerParagraph);
        assert!(bad.is_empty());
        assert_eq!(
            blocks,
            vec![
                Block::Heading {
                    level: 2,
                    text: "OVERVIEW".into()
                },
                Block::Paragraph {
                    text: "Our strategy is to grow as we: grow our business.".into(),
                    page: None
                },
                Block::Paragraph {
                    text: "•Net revenues rose.".into(),
                    page: None
                },
                Block::Paragraph {
                    text: "Next paragraph here.".into(),
                    page: None
                },
            ]
        );
    }

    #[test]
    fn aligned_tables_stay_whole_with_caption_and_notes() {
        let text = "The following table shows results.\nSELECTED DATA (in thousands)\n                         1996        1995       1994\n                      ---------   ---------  ---------\nNet sales              $117,800     $64,500    $70,100\nCost of sales:\nMaterials                87,100      51,000     60,200\nGross profit             15,200       5,800      4,900\n(1) Fiscal 1995 had 53 weeks.\nNet sales increased in 1996.";
        let (blocks, _) = text_blocks(text, Layout::LinePerParagraph);
        assert_eq!(blocks.len(), 3, "{blocks:#?}");
        match &blocks[1] {
            Block::Table {
                markdown,
                caption,
                footnotes,
                ..
            } => {
                assert_eq!(caption.as_deref(), Some("SELECTED DATA (in thousands)"));
                assert_eq!(markdown.lines().count(), 6, "{markdown}");
                assert!(markdown.contains("Cost of sales:"));
                assert_eq!(
                    footnotes,
                    &vec!["(1) Fiscal 1995 had 53 weeks.".to_string()]
                );
            }
            other => panic!("expected a table, got {other:?}"),
        }
    }

    #[test]
    fn ragged_pipe_tables_are_padded_not_dropped() {
        let text = "Intro text here.\n\n| a | b |\n|---|---|\n| 1 | 2 | 3 |\n\nAfter.";
        let (blocks, bad) = text_blocks(text, Layout::BlankLineSeparated);
        assert!(bad.is_empty());
        assert_eq!(blocks.len(), 3);
        assert!(
            matches!(&blocks[1], Block::Table { markdown, .. } if markdown.ends_with("| 1 | 2 | 3 |"))
        );
    }
}
