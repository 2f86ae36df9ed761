//! MinerU `content_list.json` (parsed PDFs) to blocks.
//!
//! The file is a JSON array in reading order. Text items carry `text`, `page_idx` and, for
//! headings, `text_level`; table items carry `table_body` (HTML), `table_caption` and
//! `table_footnote` (lists of strings); images and equations are not report text: images are
//! skipped and equations kept as text, both counted in the report's `notes` metadata.

use std::collections::BTreeMap;

use noisebench_core::Block;
use serde::Deserialize;

use crate::table::{TableError, attach_captions_and_footnotes, convert_html_table_str, squash};

#[derive(Debug, Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    text_level: Option<u8>,
    #[serde(default)]
    page_idx: Option<u32>,
    #[serde(default)]
    table_body: Option<String>,
    #[serde(default)]
    table_caption: Vec<String>,
    #[serde(default)]
    table_footnote: Vec<String>,
}

/// Blocks of a content list, notes on what was skipped, and tables that could not be kept.
pub struct MineruReport {
    pub blocks: Vec<Block>,
    pub notes: Vec<String>,
    pub bad_tables: Vec<(usize, TableError)>,
}

/// Parse a content list. Errors when the file is not a JSON array of typed items.
pub fn mineru_blocks(json: &str) -> Result<MineruReport, serde_json::Error> {
    let items: Vec<Item> = serde_json::from_str(json)?;
    let mut blocks = Vec::new();
    let mut bad_tables = Vec::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut equations = 0;
    let mut tables = 0;
    for item in items {
        match item.kind.as_str() {
            "text" => {
                let text = squash(item.text.as_deref().unwrap_or(""));
                if text.is_empty() {
                    continue;
                }
                match item.text_level {
                    Some(level) if level >= 1 => blocks.push(Block::Heading {
                        level: level.min(6),
                        text,
                    }),
                    _ => blocks.push(Block::Paragraph {
                        text,
                        page: item.page_idx,
                    }),
                }
            }
            "equation" => {
                let text = item.text.as_deref().unwrap_or("").trim().to_string();
                if !text.is_empty() {
                    equations += 1;
                    blocks.push(Block::Paragraph {
                        text,
                        page: item.page_idx,
                    });
                }
            }
            "table" => {
                let body = item.table_body.as_deref().unwrap_or("");
                match convert_html_table_str(body) {
                    Ok(t) => {
                        let caption = squash(&item.table_caption.join(" "));
                        let mut footnotes: Vec<String> = item
                            .table_footnote
                            .iter()
                            .map(|f| squash(f))
                            .filter(|f| !f.is_empty())
                            .collect();
                        footnotes.extend(t.footnotes);
                        blocks.push(Block::Table {
                            markdown: t.markdown,
                            caption: (!caption.is_empty()).then_some(caption).or(t.caption),
                            footnotes,
                            page: item.page_idx,
                        });
                    }
                    Err(e) => bad_tables.push((tables, e)),
                }
                tables += 1;
            }
            other => *skipped.entry(other.to_string()).or_insert(0) += 1,
        }
    }
    let mut notes: Vec<String> = skipped
        .into_iter()
        .map(|(kind, n)| format!("skipped {n} {kind} block(s)"))
        .collect();
    if equations > 0 {
        notes.push(format!("kept {equations} equation block(s) as text"));
    }
    Ok(MineruReport {
        blocks: attach_captions_and_footnotes(blocks),
        notes,
        bad_tables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_headings_tables_and_counts_the_rest() {
        let json = r#"[
          {"type":"text","text":"OECD Economic Surveys: Testland 2024","text_level":1,"page_idx":0},
          {"type":"text","text":"Growth slowed.","page_idx":0},
          {"type":"image","img_path":"a.jpg","page_idx":1},
          {"type":"equation","text":"$$y = a + b$$","page_idx":1},
          {"type":"table","table_body":"<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>","table_caption":["Table 1.1. Key figures"],"table_footnote":["Source: OECD."],"page_idx":2},
          {"type":"table","table_body":"<table><tr><td>a</td><td>b</td></tr><tr><td>1</td></tr></table>","page_idx":3}
        ]"#;
        let r = mineru_blocks(json).unwrap();
        // The second table's short row is padded, as a browser lays it out: kept.
        assert_eq!(r.blocks.len(), 5);
        assert!(r.bad_tables.is_empty());
        assert_eq!(
            r.notes,
            vec![
                "skipped 1 image block(s)".to_string(),
                "kept 1 equation block(s) as text".to_string()
            ]
        );
        match &r.blocks[3] {
            Block::Table {
                caption,
                footnotes,
                page,
                ..
            } => {
                assert_eq!(caption.as_deref(), Some("Table 1.1. Key figures"));
                assert_eq!(footnotes, &vec!["Source: OECD.".to_string()]);
                assert_eq!(*page, Some(2));
            }
            other => panic!("{other:?}"),
        }
        assert!(mineru_blocks("{\"not\": \"a list\"}").is_err());
    }
}
