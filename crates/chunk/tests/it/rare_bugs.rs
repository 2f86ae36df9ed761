//! RARE's chunker gave every sub-chunk of one split segment the same id and never wrote a
//! report's last text chunk. These tests show ours does neither, and check the table rules on
//! inputs shaped like real filings.

use crate::common;

use std::collections::{BTreeMap, HashSet};

use noisebench_chunk::{ChunkConfig, ReportsConfig, Source, chunk_report, ingest};
use noisebench_core::{Block, Report};

use common::{check_invariants, check_titles};

fn para(text: &str) -> Block {
    Block::Paragraph {
        text: text.into(),
        page: None,
    }
}

fn report(blocks: Vec<Block>) -> Report {
    Report {
        id: "report_rare".into(),
        domain: "finance".into(),
        format: "edgar".into(),
        blocks,
        ..Default::default()
    }
}

fn long_paragraph(sentences: usize) -> String {
    (0..sentences)
        .map(|i| {
            format!(
                "In quarter {i} the segment's operating income changed because volumes, prices and \
                 input costs moved in different directions across the company's plants."
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn sub_chunks_of_one_split_segment_get_distinct_ids() {
    // One segment (a single paragraph) far over the limit, split into many sub-chunks.
    let r = report(vec![
        Block::Heading {
            level: 2,
            text: "RESULTS OF OPERATIONS".into(),
        },
        para(&long_paragraph(120)),
    ]);
    let config = ChunkConfig::for_domain(noisebench_chunk::Domain::Finance);
    let chunks = chunk_report(&r, &config);
    assert!(chunks.len() >= 4, "{}", chunks.len());
    let ids: HashSet<&str> = chunks.iter().map(|c| c.chunk.id.as_str()).collect();
    assert_eq!(ids.len(), chunks.len(), "every sub-chunk has its own id");
    let indices: Vec<i64> = chunks.iter().map(|c| c.chunk.index).collect();
    assert_eq!(indices, (0..chunks.len() as i64).collect::<Vec<_>>());
    // The pieces continue each other with RARE's 100-token overlap.
    assert!(chunks[1..].iter().all(|c| c.overlap > 0));
    check_invariants(&r, &config, &chunks);
    check_titles(&r, &chunks);
}

#[test]
fn identical_text_in_two_reports_or_positions_still_gets_distinct_ids() {
    let text = long_paragraph(3);
    let a = report(vec![
        para(&text),
        Block::Heading {
            level: 2,
            text: "X".into(),
        },
        para(&text),
    ]);
    let mut b = a.clone();
    b.id = "report_other".into();
    let config = ChunkConfig {
        max_tokens: 64,
        overlap_tokens: 0,
        min_words: 1,
    };
    let ca = chunk_report(&a, &config);
    let cb = chunk_report(&b, &config);
    let ids: HashSet<String> = ca.iter().chain(&cb).map(|c| c.chunk.id.clone()).collect();
    assert_eq!(ids.len(), ca.len() + cb.len());
    // Stable: the same report gives the same ids.
    assert_eq!(chunk_report(&a, &config), ca);
}

#[test]
fn inserting_a_paragraph_leaves_the_other_chunks_ids_unchanged() {
    // Ids come from text, not position: later stages (triplet windows name chunk ids in their
    // prompts) rerun only for the chunks that changed.
    let paragraphs: Vec<String> = (0..6)
        .map(|i| format!("Section {i}. {}", long_paragraph(2)))
        .collect();
    let blocks = |extra: Option<usize>| {
        let mut b: Vec<Block> = Vec::new();
        for (i, p) in paragraphs.iter().enumerate() {
            if extra == Some(i) {
                b.push(para(&format!(
                    "An inserted paragraph. {}",
                    long_paragraph(2)
                )));
            }
            b.push(para(p));
        }
        report(b)
    };
    let config = ChunkConfig {
        max_tokens: 64,
        overlap_tokens: 0,
        min_words: 1,
    };
    let before = chunk_report(&blocks(None), &config);
    let after = chunk_report(&blocks(Some(3)), &config);
    let ids = |cs: &[noisebench_chunk::ReportChunk]| -> HashSet<(String, String)> {
        cs.iter()
            .map(|c| (c.chunk.text.clone(), c.chunk.id.clone()))
            .collect()
    };
    let (b, a) = (ids(&before), ids(&after));
    let kept = b.intersection(&a).count();
    assert!(after.len() > before.len());
    // Every chunk whose text is unchanged keeps its id.
    let texts_after: HashSet<&String> = after.iter().map(|c| &c.chunk.text).collect();
    let unchanged = before
        .iter()
        .filter(|c| texts_after.contains(&c.chunk.text))
        .count();
    assert_eq!(kept, unchanged);
    assert!(
        unchanged >= before.len() - 1,
        "{unchanged} of {}",
        before.len()
    );
}

#[test]
fn the_last_text_chunk_of_a_report_is_written() {
    let last = "Finally, the company expects capital expenditures of about $1.4 billion next year.";
    let table = Block::Table {
        markdown: "| Item | 2022 |\n| --- | --- |\n| Capex | 1.2 |".into(),
        caption: Some("Capital expenditures".into()),
        footnotes: vec![],
        page: None,
    };
    for blocks in [
        vec![para(&long_paragraph(30)), table.clone(), para(last)],
        vec![para(&long_paragraph(30)), para(last)],
        vec![table.clone(), para(last)],
        vec![para(last)],
    ] {
        let r = report(blocks);
        let config = ChunkConfig {
            max_tokens: 200,
            overlap_tokens: 20,
            min_words: 30,
        };
        let chunks = chunk_report(&r, &config);
        let final_text = &chunks.last().expect("at least one chunk").chunk.text;
        assert!(final_text.ends_with(last), "last text lost: {final_text:?}");
        check_invariants(&r, &config, &chunks);
    }
}

#[test]
fn oversize_tables_stay_whole_and_are_flagged() {
    let mut md = String::from("| Segment | 2022 | 2021 |\n| --- | --- | --- |\n");
    for i in 0..80 {
        md.push_str(&format!(
            "| Segment number {i} | {} | {} |\n",
            i * 1000 + 7,
            i * 900 + 3
        ));
    }
    let r = report(vec![
        para(&long_paragraph(4)),
        Block::Heading {
            level: 2,
            text: "Segment table".into(),
        },
        Block::Table {
            markdown: md.trim_end().into(),
            caption: Some("Table 3: Sales by segment".into()),
            footnotes: vec!["(1) Restated.".into()],
            page: Some(7),
        },
        para(&long_paragraph(4)),
    ]);
    let config = ChunkConfig::default();
    let chunks = chunk_report(&r, &config);
    let big: Vec<_> = chunks.iter().filter(|c| c.chunk.oversize_table).collect();
    assert_eq!(big.len(), 1);
    let big = &big[0].chunk;
    assert!(big.token_count > 600);
    assert!(big.contains_table);
    assert!(
        big.text
            .starts_with("Segment table\n\nTable 3: Sales by segment\n| Segment")
    );
    assert!(big.text.ends_with("(1) Restated."));
    assert_eq!(big.page, Some(7));
    assert_eq!(big.section.as_deref(), Some("Segment table"));
    check_invariants(&r, &config, &chunks);
    check_titles(&r, &chunks);
}

#[test]
fn whitespace_aligned_tables_in_old_filings_are_kept_whole() {
    let dir = tempfile::tempdir().unwrap();
    let item_7 = [
        "ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS",
        "RESULTS OF OPERATIONS",
        "The following table sets forth certain items as a percentage of net sales.",
        "                                        1996        1995        1994",
        "                                      --------    --------    --------",
        "Net sales                              100.0%      100.0%      100.0%",
        "Cost of sales                           87.1        91.0        89.2",
        "                                      --------    --------    --------",
        "Gross profit                            12.9         9.0        10.8",
        "Selling, general and administrative      6.2         6.9         7.4",
        "Operating income                         6.7         2.1         3.4",
        "(1) Fiscal 1995 included 53 weeks.",
        &long_paragraph(6),
    ]
    .join("\n");
    let filing = serde_json::json!({
        "cik": "1003932", "company": "OLD CORP", "filing_type": "10-K",
        "filing_date": "1996-06-14", "period_of_report": "1996-03-30",
        "filename": "1003932_10K_1996_x.htm", "item_1": "Business.", "item_7": item_7,
    });
    std::fs::write(dir.path().join("old.json"), filing.to_string()).unwrap();
    let config = ReportsConfig {
        sources: vec![Source {
            path: "*.json".into(),
            edgar: None,
            format: None,
            domain: noisebench_chunk::Domain::Finance,
            items: vec!["item_7".into()],
            metadata: BTreeMap::new(),
        }],
    };
    let (reports, drops, _) = ingest(&config, dir.path(), "reports");
    assert!(drops.is_empty());
    let r = &reports[0];
    let tables: Vec<&Block> = r
        .blocks
        .iter()
        .filter(|b| matches!(b, Block::Table { .. }))
        .collect();
    assert_eq!(tables.len(), 1);
    let Block::Table {
        markdown,
        footnotes,
        ..
    } = tables[0]
    else {
        unreachable!()
    };
    assert_eq!(markdown.lines().count(), 8, "{markdown}");
    assert_eq!(
        footnotes,
        &vec!["(1) Fiscal 1995 included 53 weeks.".to_string()]
    );
    // Small limit: the table and its introduction travel together, whole.
    let chunk_config = ChunkConfig {
        max_tokens: 200,
        overlap_tokens: 0,
        min_words: 30,
    };
    let chunks = chunk_report(r, &chunk_config);
    let holder = chunks
        .iter()
        .find(|c| c.chunk.contains_table)
        .expect("a table chunk");
    assert!(
        holder
            .chunk
            .text
            .contains("Gross profit                            12.9")
    );
    assert!(holder.chunk.text.contains("The following table sets forth"));
    check_invariants(r, &chunk_config, &chunks);
    check_titles(r, &chunks);
}

#[test]
fn short_fragments_merge_into_a_neighbour() {
    let r = report(vec![
        para(&long_paragraph(5)),
        Block::Heading {
            level: 3,
            text: "Other".into(),
        },
        para("A short closing note of a few words."),
    ]);
    let config = ChunkConfig {
        max_tokens: 600,
        overlap_tokens: 0,
        min_words: 30,
    };
    let chunks = chunk_report(&r, &config);
    assert_eq!(chunks.len(), 1);
    // With a tight limit the fragment cannot join its neighbour whole, so it takes a paragraph
    // piece from the end of the previous chunk instead of staying under 30 words.
    let config = ChunkConfig {
        max_tokens: 150,
        overlap_tokens: 0,
        min_words: 30,
    };
    let chunks = chunk_report(&r, &config);
    let last = &chunks.last().unwrap().chunk;
    assert!(last.text.split_whitespace().count() >= 30, "{}", last.text);
    check_invariants(&r, &config, &chunks);
    check_titles(&r, &chunks);
}
