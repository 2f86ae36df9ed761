//! Markdown to blocks.
//!
//! Only block boundaries matter for chunking (ATX headings, blank lines, pipe tables, fenced
//! code), not inline rendering, so this reads them by hand rather than pulling in a full
//! CommonMark parser; inline markup stays in the text as written.

use noisebench_core::Block;

use crate::table::{TableError, attach_captions_and_footnotes, square_pipe_table};

/// Blocks of a Markdown document, its first `#` title, and tables that could not be kept.
pub fn markdown_blocks(text: &str) -> (Vec<Block>, Option<String>, Vec<(usize, TableError)>) {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut blocks = Vec::new();
    let mut bad = Vec::new();
    let mut tables = 0;
    let mut title = None;
    let mut para: Vec<&str> = Vec::new();
    let flush = |para: &mut Vec<&str>, blocks: &mut Vec<Block>| {
        if !para.is_empty() {
            let text = para.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
            para.clear();
            blocks.push(Block::Paragraph { text, page: None });
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            flush(&mut para, &mut blocks);
            i += 1;
        } else if let Some((level, text)) = atx_heading(trimmed) {
            flush(&mut para, &mut blocks);
            if level == 1 && title.is_none() {
                title = Some(text.clone());
            }
            blocks.push(Block::Heading { level, text });
            i += 1;
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            // A fenced block is kept verbatim as one paragraph.
            flush(&mut para, &mut blocks);
            let fence = &trimmed[..3];
            let mut end = i + 1;
            while end < lines.len() && !lines[end].trim_start().starts_with(fence) {
                end += 1;
            }
            let end = (end + 1).min(lines.len());
            blocks.push(Block::Paragraph {
                text: lines[i..end].join("\n"),
                page: None,
            });
            i = end;
        } else if trimmed.starts_with('|') {
            flush(&mut para, &mut blocks);
            let mut end = i;
            while end < lines.len() && lines[end].trim_start().starts_with('|') {
                end += 1;
            }
            let rows: Vec<&str> = lines[i..end].iter().map(|l| l.trim()).collect();
            if rows.len() >= 2 {
                match square_pipe_table(&rows) {
                    Ok(markdown) => blocks.push(Block::Table {
                        markdown,
                        caption: None,
                        footnotes: Vec::new(),
                        page: None,
                    }),
                    Err(e) => bad.push((tables, e)),
                }
                tables += 1;
            } else {
                blocks.push(Block::Paragraph {
                    text: rows.join(" "),
                    page: None,
                });
            }
            i = end;
        } else if is_list_item(trimmed) {
            // Each list item is its own paragraph (a short one merges when chunks are packed).
            flush(&mut para, &mut blocks);
            para.push(line);
            i += 1;
        } else {
            para.push(line);
            i += 1;
        }
    }
    flush(&mut para, &mut blocks);
    (attach_captions_and_footnotes(blocks), title, bad)
}

fn is_list_item(line: &str) -> bool {
    line.starts_with("- ")
        || line.starts_with("* ")
        || line.starts_with("+ ")
        || line.split_once(". ").is_some_and(|(n, _)| {
            !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit())
        })
}

fn atx_heading(line: &str) -> Option<(u8, String)> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim().to_string();
    (!text.is_empty()).then_some((hashes as u8, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_paragraphs_and_tables() {
        let md = "# Annual Plan\n\nIntro line one\ncontinues here.\n\n## Budget\n\nTable 2: Spending by year\n\n| Year | Amount |\n|---|---|\n| 2023 | 5 |\n\nSource: state records.\n\n- first item\n- second item\n";
        let (blocks, title, bad) = markdown_blocks(md);
        assert!(bad.is_empty());
        assert_eq!(title.as_deref(), Some("Annual Plan"));
        assert_eq!(blocks.len(), 6, "{blocks:#?}");
        assert_eq!(
            blocks[1],
            Block::Paragraph {
                text: "Intro line one continues here.".into(),
                page: None
            }
        );
        match &blocks[3] {
            Block::Table {
                caption, footnotes, ..
            } => {
                assert_eq!(caption.as_deref(), Some("Table 2: Spending by year"));
                assert_eq!(footnotes, &vec!["Source: state records.".to_string()]);
            }
            other => panic!("{other:?}"),
        }
    }
}
