//! Tables that edgar-crawler flattened to one cell per line: the bundled excerpts rebuild
//! exactly, properties of the rebuilding hold for any input, and (ignored, run by hand) a
//! measurement over edgar-crawler's own 62 test filings.
//!
//! Measurement: `NOISEBENCH_EDGAR_FIXTURES=<absolute folder of *.json> cargo test -p
//! noisebench-chunk --test it flat_tables::measure -- --ignored --nocapture` (the folder: the JSON
//! files of `tests/fixtures/EXTRACTED_FILINGS/10-K.zip` in lefterisloukas/edgar-crawler, not
//! bundled). It reads every `item_*` field of every filing (or only those listed in
//! `NOISEBENCH_EDGAR_ITEMS`, e.g. `item_7`) before (`text_blocks_with(.., false)`) and after the
//! rebuilding, and prints two shares:
//!
//! - number-only paragraphs: paragraph blocks whose whole text is a value
//!   ([`flat_table::is_value`]: digits, `$`, `(`, `)`, `%`, `,`, `.`, dashes), among paragraphs;
//! - table-column headings, among heading blocks: a heading immediately followed by a
//!   number-only paragraph, or one whose every word is a column word (a month, a year or other
//!   value, `Fiscal`, `Year(s)`, `Ended`, `Change`, `Quarter`, `vs`, `Increase`, `Decrease`,
//!   `Months`, `Weeks`, `Three`, `Six`, `Nine`, `Twelve`, `Total`, `%`).

use crate::common;

use noisebench_chunk::flat_table::{self, is_value};
use noisebench_chunk::read_filing;
use noisebench_chunk::{Layout, text_blocks, text_blocks_with};
use noisebench_chunk::{block_text, chunk_report};
use noisebench_core::Block;
use proptest::prelude::*;

use common::{check_invariants, dense, root};

/// Words of a table's column headings besides the months (`noisebench_text::MONTHS`).
const COLUMN_WORDS: &[&str] = &[
    "fiscal", "year", "years", "ended", "change", "quarter", "vs", "vs.", "increase", "decrease",
    "months", "weeks", "three", "six", "nine", "twelve", "total", "%",
];

fn column_heading(text: &str) -> bool {
    text.split_whitespace().all(|w| {
        let bare = w.trim_matches(|c: char| matches!(c, ',' | ':' | '(' | ')'));
        let lower = bare.to_lowercase();
        bare.is_empty()
            || is_value(bare)
            || noisebench_text::is_month(&lower)
            || COLUMN_WORDS.contains(&lower.as_str())
    })
}

#[derive(Default, Debug)]
struct Tally {
    paragraphs: usize,
    number_only: usize,
    headings: usize,
    column_headings: usize,
    tables: usize,
    rebuilt: usize,
}

fn tally(blocks: &[Block], t: &mut Tally) {
    let number_only =
        |b: Option<&Block>| matches!(b, Some(Block::Paragraph { text, .. }) if is_value(text));
    for (i, b) in blocks.iter().enumerate() {
        match b {
            Block::Paragraph { .. } => {
                t.paragraphs += 1;
                t.number_only += usize::from(number_only(Some(b)));
            }
            Block::Heading { text, .. } => {
                t.headings += 1;
                t.column_headings +=
                    usize::from(number_only(blocks.get(i + 1)) || column_heading(text));
            }
            Block::Table { markdown, .. } => {
                t.tables += 1;
                t.rebuilt += usize::from(markdown.starts_with('|'));
            }
        }
    }
}

fn pct(a: usize, b: usize) -> String {
    format!("{a} / {b} = {:.1}%", 100.0 * a as f64 / b.max(1) as f64)
}

#[test]
#[ignore = "needs NOISEBENCH_EDGAR_FIXTURES: a folder of edgar-crawler JSON filings"]
fn measure_on_edgar_crawler_fixtures() {
    let dir = std::env::var("NOISEBENCH_EDGAR_FIXTURES")
        .expect("set NOISEBENCH_EDGAR_FIXTURES to a folder of edgar-crawler JSON filings");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    // Optional: only these items (`item_7,item_7A`); default every `item_*` field.
    let only: Option<Vec<String>> = std::env::var("NOISEBENCH_EDGAR_ITEMS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect());
    let (mut before, mut after) = (Tally::default(), Tally::default());
    for path in &files {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for (key, value) in json.as_object().unwrap() {
            let wanted = match &only {
                Some(items) => items.contains(key),
                None => key.starts_with("item_"),
            };
            let Some(text) = value.as_str().filter(|_| wanted) else {
                continue;
            };
            tally(
                &text_blocks_with(text, Layout::LinePerParagraph, false).0,
                &mut before,
            );
            let blocks = text_blocks(text, Layout::LinePerParagraph).0;
            tally(&blocks, &mut after);
        }
    }
    println!("filings: {}", files.len());
    for (name, t) in [("before", &before), ("after", &after)] {
        println!(
            "{name}: number-only paragraphs {}; table-column headings {}; table blocks {} ({} as Markdown)",
            pct(t.number_only, t.paragraphs),
            pct(t.column_headings, t.headings),
            t.tables,
            t.rebuilt
        );
    }
    assert!(after.number_only < before.number_only);
}

fn fixture_blocks(name: &str) -> Vec<Block> {
    let path = root().join("fixtures/reports/edgar-crawler").join(name);
    let json = std::fs::read_to_string(&path).unwrap();
    read_filing(&json, &["item_7".to_string()]).unwrap().blocks
}

/// All non-whitespace characters of each non-empty line appear in `out`, line after line.
fn keeps_lines_in_order(lines: &[&str], out: &str) -> bool {
    let out = dense(out);
    let mut at = 0;
    for l in lines {
        let d = dense(l);
        if d.is_empty() {
            continue;
        }
        match out[at..].find(&d) {
            Some(p) => at += p + d.len(),
            None => return false,
        }
    }
    true
}

fn all_text(blocks: &[Block]) -> String {
    blocks.iter().map(block_text).collect::<Vec<_>>().join("\n")
}

fn no_ragged(blocks: &[Block]) {
    for b in blocks {
        if let Block::Table { markdown, .. } = b
            && markdown.starts_with('|')
        {
            let widths: Vec<usize> = markdown
                .lines()
                .map(noisebench_chunk::pipe_row_cells)
                .collect();
            assert!(widths.iter().all(|w| *w == widths[0]), "{markdown}");
        }
    }
}

// Cell, label and prose generators for the properties.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("$".to_string()),
        Just(")".to_string()),
        Just("%".to_string()),
        Just("—".to_string()),
        "\\(?[0-9]{1,3}(,[0-9]{3})?(\\.[0-9])?",
        "(19|20)[0-9]{2}",
    ]
}
fn label() -> impl Strategy<Value = String> {
    "[A-Z][a-z]{2,8}( [a-z]{2,8}){0,3}:?"
}
fn prose() -> impl Strategy<Value = String> {
    "[A-Z][a-z]{2,8}( [a-z0-9]{1,8}){12,30}\\."
}
fn line() -> impl Strategy<Value = String> {
    prop_oneof![4 => value(), 3 => label(), 1 => prose(), 1 => "[a-z]{2,8}( [a-z]{2,8}){0,2}"]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rebuilding_keeps_every_line_in_order_and_never_ragged(lines in prop::collection::vec(line(), 0..60)) {
        let text = lines.join("\n");
        let (blocks, bad) = text_blocks(&text, Layout::LinePerParagraph);
        prop_assert!(bad.is_empty());
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        prop_assert!(keeps_lines_in_order(&refs, &all_text(&blocks)), "{blocks:#?}");
        no_ragged(&blocks);
        for b in &blocks {
            if let Block::Heading { text, .. } = b {
                prop_assert!(!is_value(text), "a value read as a heading: {}", text);
            }
        }
    }

    #[test]
    fn prose_is_never_a_table(lines in prop::collection::vec(prop_oneof![prose(), label()], 0..40)) {
        let text = lines.join("\n");
        let (blocks, _) = text_blocks(&text, Layout::LinePerParagraph);
        prop_assert!(blocks.iter().all(|b| !matches!(b, Block::Table { .. })), "{blocks:#?}");
    }

    #[test]
    fn rebuilt_rows_have_the_header_width(
        k in 1usize..6,
        rows in prop::collection::vec((label(), prop::collection::vec("[0-9]{1,3}(,[0-9]{3})?", 1..6)), 2..8),
    ) {
        let mut lines: Vec<String> = Vec::new();
        for (l, vals) in &rows {
            lines.push(l.clone());
            lines.extend(vals.iter().take(k).cloned());
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        if let Some((md, _)) = flat_table::rebuild(&refs) {
            let widths: Vec<usize> = md.lines().map(noisebench_chunk::pipe_row_cells).collect();
            prop_assert!(widths.iter().all(|w| *w == widths[0]), "{md}");
        }
        match flat_table::table_block(&refs) {
            b @ Block::Table { .. } => prop_assert!(keeps_lines_in_order(&refs, &block_text(&b))),
            other => prop_assert!(false, "{other:?}"),
        }
    }
}

fn table(markdown: &str, caption: Option<&str>) -> Block {
    Block::Table {
        markdown: markdown.to_string(),
        caption: caption.map(str::to_string),
        footnotes: Vec::new(),
        page: None,
    }
}

fn para(text: &str) -> Block {
    Block::Paragraph {
        text: text.to_string(),
        page: None,
    }
}

fn heading(level: u8, text: &str) -> Block {
    Block::Heading {
        level,
        text: text.to_string(),
    }
}

/// The text of the first paragraph starting with `start` (long prose is matched by its start).
fn prose_starting(blocks: &[Block], start: &str) -> Block {
    blocks
        .iter()
        .find(|b| matches!(b, Block::Paragraph { text, .. } if text.starts_with(start)))
        .cloned()
        .unwrap_or_else(|| panic!("no paragraph starting {start:?}"))
}

#[test]
fn estee_lauder_tables_are_rebuilt_as_markdown() {
    let blocks = fixture_blocks("1001250_10K_2012_item_7_excerpt.json");
    let results = prose_starting(&blocks, "We manufacture, market and sell beauty products");
    assert_eq!(
        blocks,
        vec![
            para(
                "A 25 basis-point change in the discount rate or the expected rate of return on \
                 plan assets would have had the following effect on fiscal 2012 pension expense:"
            ),
            table(
                "|  |  |  |\n| --- | --- | --- |\n\
                 | Discount rate | $ (3.4) | $ 3.3 |\n\
                 | Expected return on assets | $ (2.2) | $ 2.2 |",
                Some("(In millions) 25 Basis-Point Increase 25 Basis-Point Decrease"),
            ),
            heading(2, "RESULTS OF OPERATIONS"),
            results,
            table(
                "|  |  |  |  |\n| --- | --- | --- | --- |\n\
                 | The Americas | $ 4,101.1 | $ 3,796.3 | $ 3,442.1 |\n\
                 | Europe, the Middle East & Africa | 3,603.2 | 3,257.6 | 2,859.3 |\n\
                 | Asia/Pacific | 2,011.4 | 1,760.7 | 1,510.1 |\n\
                 |  | 9,715.7 | 8,814.6 | 7,811.5 |\n\
                 | Returns associated with restructuring activities | (2.1) | (4.6) | (15.7) |\n\
                 | Net Sales | $ 9,713.6 | $ 8,810.0 | $ 7,795.8 |",
                Some("Year Ended June 30 (In millions) NET SALES By Region:"),
            ),
        ]
    );
    // Read line by line the same text gave 56 blocks: 37 bare values (`$`, `4,101.1`, `)`) and
    // 11 headings, most of them column or row labels ("Increase", "The Americas").
    let json = std::fs::read_to_string(
        root().join("fixtures/reports/edgar-crawler/1001250_10K_2012_item_7_excerpt.json"),
    )
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let text = value["item_7"].as_str().unwrap();
    let old = text_blocks_with(text, Layout::LinePerParagraph, false).0;
    let bare = old
        .iter()
        .filter(|b| matches!(b, Block::Paragraph { text, .. } if is_value(text)))
        .count();
    let headings = old
        .iter()
        .filter(|b| matches!(b, Block::Heading { .. }))
        .count();
    assert_eq!((old.len(), bare, headings), (56, 37, 11));
}

#[test]
fn nuance_percent_change_table_is_kept_as_its_lines() {
    // Rows of 5 and 3 values (the percent row leaves the change columns empty): the column
    // count is not certain, so the run stays one table block of its original lines.
    let blocks = fixture_blocks("1002517_10K_2007_item_7_excerpt.json");
    let intro = prose_starting(&blocks, "Professional services revenue primarily consists");
    let after = prose_starting(
        &blocks,
        "Professional services, subscription and hosting revenue for fiscal 2007",
    );
    assert_eq!(
        blocks,
        vec![
            heading(3, "Professional Services, Subscription and Hosting Revenue"),
            intro,
            table(
                "%\n%\nChange\nChange\nFiscal\nFiscal\nFiscal\n2007 vs\n2006 vs\n\
                 Professional services, subscription and hosting revenue\n\
                 $\n165.5\n$\n81.3\n$\n47.3\n103.5\n%\n71.9\n%\n\
                 As a percentage of total revenue\n27.5\n%\n20.9\n%\n20.3\n%",
                None,
            ),
            heading(3, "Fiscal 2007 Compared to Fiscal 2006"),
            after,
        ]
    );
}

#[test]
fn disney_footnote_markers_open_their_notes() {
    let blocks = fixture_blocks("1001039_10K_2016_item_7_excerpt.json");
    let texts: Vec<String> = blocks.iter().map(block_text).collect();
    assert_eq!(blocks.len(), 7, "{texts:#?}");
    assert_eq!(
        texts[0],
        "A summary of the impact of these items on EPS is as follows:"
    );
    for (n, t) in texts[1..5].iter().enumerate() {
        assert!(t.starts_with(&format!("({}) ", n + 1)), "{t}");
        assert!(matches!(blocks[n + 1], Block::Paragraph { .. }));
    }
    assert_eq!(
        blocks[5],
        heading(3, "BUSINESS SEGMENT RESULTS - 2016 vs. 2015")
    );
}

#[test]
fn chunks_keep_rebuilt_tables_whole_and_flag_them() {
    let path = root().join("fixtures/reports/edgar-crawler/1001250_10K_2012_item_7_excerpt.json");
    let blocks = read_filing(
        &std::fs::read_to_string(&path).unwrap(),
        &["item_7".to_string()],
    )
    .unwrap()
    .blocks;
    let report = noisebench_core::Report {
        id: "estee-2012".into(),
        domain: "finance".into(),
        format: "edgar".into(),
        source_path: path.display().to_string(),
        title: None,
        metadata: Default::default(),
        blocks: blocks.clone(),
    };
    // Small chunks so that the tables land in different chunks.
    let config = noisebench_chunk::ChunkConfig {
        max_tokens: 120,
        overlap_tokens: 0,
        min_words: 5,
    };
    let chunks = chunk_report(&report, &config);
    check_invariants(&report, &config, &chunks);
    for b in blocks.iter().filter(|b| matches!(b, Block::Table { .. })) {
        let Block::Table { markdown, .. } = b else {
            unreachable!()
        };
        let holders: Vec<_> = chunks
            .iter()
            .filter(|c| c.chunk.text.contains(markdown.as_str()))
            .collect();
        assert_eq!(holders.len(), 1, "{markdown}");
        assert!(holders[0].chunk.contains_table);
    }
    let sections: Vec<Option<String>> = chunks.iter().map(|c| c.chunk.section.clone()).collect();
    assert!(
        sections
            .iter()
            .flatten()
            .all(|s| s == "RESULTS OF OPERATIONS"),
        "{sections:?}"
    );
}
