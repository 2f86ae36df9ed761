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

/// Where each block landed: blocks and chunks (without overlaps) laid out on the report's
/// non-whitespace characters, which the chunks reproduce exactly (see [`check_invariants`]).
pub struct Placement {
    /// `[start, end)` of each block.
    pub blocks: Vec<(usize, usize)>,
    /// End offset of each chunk's own text.
    pub chunk_ends: Vec<usize>,
}

impl Placement {
    pub fn new(report: &Report, chunks: &[ReportChunk]) -> Self {
        let mut pos = 0;
        let blocks = report
            .blocks
            .iter()
            .map(|b| {
                let n = dense(&block_text(b)).chars().count();
                pos += n;
                (pos - n, pos)
            })
            .collect();
        let mut end = 0;
        let chunk_ends = chunks
            .iter()
            .map(|c| {
                end += dense(&c.chunk.text[c.overlap..]).chars().count();
                end
            })
            .collect();
        Self { blocks, chunk_ends }
    }

    /// The chunk holding character `offset`.
    pub fn chunk_at(&self, offset: usize) -> usize {
        self.chunk_ends.partition_point(|&e| e <= offset)
    }

    /// First and last chunk holding block `k` (equal when the block is not split).
    pub fn span(&self, k: usize) -> (usize, usize) {
        let (s, e) = self.blocks[k];
        (self.chunk_at(s), self.chunk_at(e.saturating_sub(1).max(s)))
    }
}

/// Each section title sits in the chunk that holds the start of the section's first content,
/// and every table is whole in one chunk.
pub fn check_titles(report: &Report, chunks: &[ReportChunk]) {
    use noisebench_core::Block;
    let place = Placement::new(report, chunks);
    for (k, b) in report.blocks.iter().enumerate() {
        match b {
            Block::Table { .. } => {
                let (first, last) = place.span(k);
                assert_eq!(first, last, "table {k} split over chunks {first}..={last}");
            }
            Block::Heading { text: title, level } => {
                // The section runs to the next heading of the same or a higher level; a heading
                // followed by such a heading before any content heads an empty section, which
                // has no first chunk to open.
                let next = (k + 1..report.blocks.len()).find(|&j| match &report.blocks[j] {
                    Block::Heading { level: l, .. } => l <= level,
                    _ => true,
                });
                let Some(next) =
                    next.filter(|&j| !matches!(report.blocks[j], Block::Heading { .. }))
                else {
                    continue;
                };
                let here = place.span(k).0;
                let content = place.span(next).0;
                assert_eq!(
                    here, content,
                    "title {title:?} is in chunk {here}, its section starts in chunk {content}"
                );
            }
            Block::Paragraph { .. } => {}
        }
    }
}
