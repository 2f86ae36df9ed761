//! Property tests over generated reports: tables and short paragraphs are never split, the token
//! limit holds except for flagged oversize tables, ids are unique, and the chunks cover the report.

use crate::common;

use noisebench_chunk::{ChunkConfig, Chunker, TokenCounter, block_text};
use noisebench_core::{Block, Report};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "revenue",
    "growth",
    "the",
    "company",
    "reported",
    "net",
    "income",
    "of",
    "$1.2",
    "billion",
    "in",
    "fiscal",
    "2022,",
    "compared",
    "to",
    "inflation",
    "rose",
    "12.5%",
    "while",
    "costs",
    "(excluding",
    "items)",
    "fell;",
    "Board",
    "approved",
    "dividends",
    "U.S.",
    "operations",
];

fn sentence() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 3..25).prop_map(|w| {
        let mut s = w.join(" ");
        if let Some(first) = s.get(..1) {
            s = first.to_uppercase() + &s[1..];
        }
        s + "."
    })
}

fn paragraph() -> impl Strategy<Value = Block> {
    (
        prop::collection::vec(sentence(), 1..12),
        prop::option::of(0u32..20),
    )
        .prop_map(|(s, page)| Block::Paragraph {
            text: s.join(" "),
            page,
        })
}

fn heading() -> impl Strategy<Value = Block> {
    (
        1u8..4,
        prop::collection::vec(prop::sample::select(WORDS), 1..6),
    )
        .prop_map(|(level, w)| Block::Heading {
            level,
            text: w.join(" ").to_uppercase(),
        })
}

fn table() -> impl Strategy<Value = Block> {
    (
        2usize..5,
        1usize..30,
        prop::option::of(sentence()),
        prop::collection::vec(sentence(), 0..3),
    )
        .prop_map(|(cols, rows, caption, footnotes)| {
            let mut md = String::new();
            let header: Vec<String> = (0..cols).map(|c| format!("Col {c}")).collect();
            md.push_str(&format!("| {} |\n", header.join(" | ")));
            md.push_str(&format!("|{}\n", " --- |".repeat(cols)));
            for r in 0..rows {
                let cells: Vec<String> =
                    (0..cols).map(|c| format!("{}", r * 37 + c * 11)).collect();
                md.push_str(&format!("| {} |\n", cells.join(" | ")));
            }
            Block::Table {
                markdown: md.trim_end().to_string(),
                caption: caption.map(|c| format!("Table {c}")),
                footnotes: footnotes.into_iter().map(|f| format!("(1) {f}")).collect(),
                page: None,
            }
        })
}

fn report() -> impl Strategy<Value = Report> {
    prop::collection::vec(
        prop_oneof![4 => paragraph(), 2 => heading(), 1 => table()],
        1..40,
    )
    .prop_map(|blocks| Report {
        id: "report_test".into(),
        domain: "general".into(),
        format: "text".into(),
        blocks,
        ..Default::default()
    })
}

fn config() -> impl Strategy<Value = ChunkConfig> {
    (64usize..400, 0usize..4).prop_map(|(max_tokens, q)| ChunkConfig {
        max_tokens,
        overlap_tokens: max_tokens * q / 10,
        min_words: 30,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn chunking_invariants(report in report(), config in config()) {
        let chunker = Chunker::new();
        let chunks = chunker.chunk(&report, &config);
        common::check_invariants(&report, &config, &chunks);
        common::check_titles(&report, &chunks);

        let counter = TokenCounter::new();
        let place = common::Placement::new(&report, &chunks);
        for (k, b) in report.blocks.iter().enumerate() {
            let text = block_text(b);
            match b {
                // A table is whole in a chunk; over the limit it is alone and flagged.
                Block::Table { .. } => {
                    let (first, last) = place.span(k);
                    prop_assert_eq!(first, last, "table split");
                    let holder = &chunks[first];
                    prop_assert!(holder.chunk.contains_table);
                    if counter.count(&text) > config.max_tokens {
                        prop_assert!(holder.chunk.oversize_table);
                    }
                }
                // A paragraph that fits with the section titles right before it is never split.
                Block::Paragraph { .. } => {
                    let lead: usize = report.blocks[..k]
                        .iter()
                        .rev()
                        .take_while(|b| matches!(b, Block::Heading { .. }))
                        .map(|h| {
                            let h = block_text(h);
                            counter.joined_count(&h, "\n\n")
                        })
                        .sum();
                    if counter.count(&text) + lead <= config.max_tokens {
                        let (first, last) = place.span(k);
                        prop_assert_eq!(first, last, "paragraph split: {}", text);
                    }
                }
                Block::Heading { .. } => {}
            }
        }
        // A chunk under 30 words is left only when neither neighbour has room for it.
        let own = |i: usize| chunks[i].chunk.text[chunks[i].overlap..].trim_start().to_string();
        for (i, c) in chunks.iter().enumerate() {
            if chunks.len() < 2 || c.chunk.oversize_table || own(i).split_whitespace().count() >= 30 {
                continue;
            }
            if i > 0 && !chunks[i - 1].chunk.oversize_table {
                let merged = format!("{}\n\n{}", chunks[i - 1].chunk.text, own(i));
                prop_assert!(counter.count(&merged) > config.max_tokens, "fragment {} fits its predecessor", i);
            }
            if i + 1 < chunks.len() && !chunks[i + 1].chunk.oversize_table {
                let merged = format!("{}\n\n{}", own(i), own(i + 1));
                prop_assert!(counter.count(&merged) > config.max_tokens, "fragment {} fits its successor", i);
            }
        }
    }
}

/// Lines an annual report to shareholders is made of: section titles of every kind, in any case,
/// sub-headings, sentences, a captioned table.
fn exhibit_block() -> impl Strategy<Value = Block> {
    let para = |t: &str| Block::Paragraph {
        text: t.to_string(),
        page: None,
    };
    prop_oneof![
        prop::sample::select(vec![
            "Management's Discussion and Analysis",
            "management discussion",
            "FINANCIAL REVIEW INCORPORATING MANAGEMENT'S DISCUSSION",
            "Market Risk",
            "FINANCIAL RISK MANAGEMENT",
            "Report of Independent Auditors",
            "notes to consolidated financial statements",
            "Quarterly Data (Unaudited)",
            "Five-Year Comparison of Selected Financial Data",
            "Stockholder Information",
            "STOCK PRICES",
            "Glossary",
            "Letter to Shareholders",
            "Overview",
            "Year 2000",
            "Foreign Currency Exchange Rate Risk:",
        ])
        .prop_map(para),
        prop::sample::select(vec![
            "Revenue rose 4 percent on strong demand.",
            "The company's market risk is managed centrally.",
            "stock prices are shown below.",
        ])
        .prop_map(para),
        prop::sample::select(vec![Some("CONSOLIDATED BALANCE SHEETS"), None]).prop_map(|c| {
            Block::Table {
                markdown: "| a | b |\n| --- | --- |\n| 1 | 2 |".into(),
                caption: c.map(str::to_string),
                footnotes: Vec::new(),
                page: None,
            }
        }),
    ]
}

proptest! {
    /// The exhibit cut is a partition: every block goes to exactly one pointer item's section or
    /// to the rest, sections are ordered, disjoint, non-empty ranges of items asked for; with no
    /// pointer everything is rest.
    #[test]
    fn the_exhibit_cut_loses_and_repeats_nothing(
        blocks in prop::collection::vec(exhibit_block(), 0..60),
        keys in prop::sample::subsequence(vec!["5", "6", "7", "7A", "8"], 0..=5),
        quarterly in any::<bool>(),
    ) {
        let pointers: Vec<(String, String)> = keys
            .iter()
            .map(|k| {
                let text = if quarterly { "\"Quarterly Data\" on page 63" } else { "pages 40 to 49" };
                (k.to_string(), text.to_string())
            })
            .collect();
        let cut = noisebench_chunk::cut_exhibit(&blocks, &pointers);
        let mut seen = vec![0usize; blocks.len()];
        for (key, ranges) in &cut.sections {
            prop_assert!(keys.contains(&key.as_str()), "section of {} not asked for", key);
            let mut end = 0;
            for r in ranges {
                prop_assert!(r.start < r.end && r.start >= end, "ranges {:?}", ranges);
                end = r.end;
                for i in r.clone() {
                    seen[i] += 1;
                }
            }
        }
        for &i in &cut.rest {
            seen[i] += 1;
        }
        prop_assert!(seen.iter().all(|&n| n == 1), "blocks taken {:?}", seen);
        if keys.is_empty() {
            prop_assert!(cut.sections.is_empty());
        }
    }
}
