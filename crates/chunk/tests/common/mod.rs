#![allow(dead_code)]

use std::collections::HashSet;
use std::path::PathBuf;

use noisebench_chunk::{ChunkConfig, ReportChunk, TokenCounter, block_text};
use noisebench_core::Report;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// All non-whitespace characters, in order.
pub fn dense(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Checks every invariant the chunker promises for one report; panics naming the broken one.
pub fn check_invariants(report: &Report, config: &ChunkConfig, chunks: &[ReportChunk]) {
    let counter = TokenCounter::new();
    // Nothing lost, nothing invented: the chunks without their overlaps give the report back.
    let expected: String = report
        .blocks
        .iter()
        .map(|b| dense(&block_text(b)))
        .collect();
    let mut got = String::new();
    for c in chunks {
        let own = &c.chunk.text[c.overlap..];
        if c.overlap > 0 {
            assert!(
                own.starts_with("\n\n"),
                "overlap is followed by a blank line"
            );
            let prev = &chunks[c.chunk.index as usize - 1].chunk.text;
            assert!(
                prev.ends_with(&c.chunk.text[..c.overlap]),
                "overlap repeats the previous chunk's end"
            );
        }
        got.push_str(&dense(own));
    }
    assert_eq!(got, expected, "chunks in order cover the report");
    let mut ids = HashSet::new();
    for (i, c) in chunks.iter().enumerate() {
        let ch = &c.chunk;
        assert_eq!(ch.index, i as i64);
        assert_eq!(ch.report_id, report.id);
        assert!(ids.insert(ch.id.clone()), "duplicate id {}", ch.id);
        assert_eq!(
            ch.token_count as usize,
            counter.reference_count(&ch.text),
            "token_count is the real cl100k count"
        );
        if !ch.oversize_table {
            assert!(
                ch.token_count as usize <= config.max_tokens,
                "chunk {i} has {} tokens > {}",
                ch.token_count,
                config.max_tokens
            );
        }
        assert!(!ch.text.trim().is_empty());
    }
    // Tables are never split: each one is whole inside exactly one chunk's own text.
    for b in &report.blocks {
        if let noisebench_core::Block::Table { .. } = b {
            let t = block_text(b);
            let holders = chunks
                .iter()
                .filter(|c| c.chunk.text[c.overlap..].contains(&t))
                .count();
            assert!(holders >= 1, "table split or lost:\n{t}");
        }
    }
}

/// Each section title sits in the chunk that holds the start of the section's first content.
pub fn check_titles(report: &Report, chunks: &[ReportChunk]) {
    use noisebench_core::Block;
    for (k, b) in report.blocks.iter().enumerate() {
        let Block::Heading { text: title, .. } = b else {
            continue;
        };
        let Some(first) = report.blocks[k + 1..]
            .iter()
            .find(|b| !matches!(b, Block::Heading { .. }))
        else {
            continue;
        };
        let start: String = block_text(first).chars().take(60).collect();
        let holder = chunks
            .iter()
            .find(|c| c.chunk.text[c.overlap..].contains(&start))
            .unwrap_or_else(|| panic!("no chunk starts section {title:?}"));
        let own = &holder.chunk.text[holder.overlap..];
        let t = own.find(title.as_str());
        let s = own.find(&start);
        assert!(
            t.is_some() && t < s,
            "title {title:?} not carried into chunk {}",
            holder.chunk.index
        );
    }
}
