//! Token-aware chunking of one report.
//!
//! The report's blocks become units: a heading, a paragraph (or, only when a paragraph alone is
//! over the limit, its sentences, then words), a table with its caption and footnotes. Units are
//! packed greedily into chunks of at most `max_tokens` cl100k tokens, joined by blank lines:
//!
//! - a heading travels with the unit after it, so a section's title opens its first chunk; a
//!   paragraph ending in `:` right before a table travels with the table;
//! - a table is never split; one over the limit (alone, or with the section titles it carries)
//!   is a chunk of its own, flagged `oversize_table`;
//! - with `overlap_tokens > 0`, a chunk that continues the text of the previous one starts with
//!   that chunk's last sentences (up to the overlap), when they fit;
//! - a chunk under `min_words` words is merged into a neighbour that has room, or takes units
//!   from the end of the previous chunk.
//!
//! Counts are exact: every unit is counted once, alone and followed by a blank-line join, which
//! depends only on its last pre-tokenizer piece ([`TokenCounter::measure`]).

use std::collections::BTreeMap;

use noisebench_core::{Block, Chunk, Report, stable_id};
use unicode_segmentation::UnicodeSegmentation;

use crate::preset::Domain;
use noisebench_text::TokenCounter;

/// The separator between units in a chunk's text.
pub(crate) const SEP: &str = "\n\n";

/// Chunk sizes and rules for one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Upper bound of cl100k tokens per chunk (oversize tables excepted).
    pub max_tokens: usize,
    /// Tokens of the previous chunk's tail repeated at the start of a continuing chunk.
    pub overlap_tokens: usize,
    /// Chunks with fewer words are merged into a neighbour.
    pub min_words: usize,
}

impl ChunkConfig {
    /// The preset of a domain: finance 800 tokens with 100 overlap (RARE's code), others 600.
    pub fn for_domain(domain: Domain) -> Self {
        let sizes = domain.chunk_sizes();
        Self {
            max_tokens: sizes.max_tokens,
            overlap_tokens: sizes.overlap_tokens,
            min_words: 30,
        }
    }
}

impl Default for ChunkConfig {
    fn default() -> Self {
        Self::for_domain(Domain::General)
    }
}

/// A chunk and how much of its text repeats the previous chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportChunk {
    pub chunk: Chunk,
    /// The first `overlap` bytes of `chunk.text` repeat the end of the previous chunk; when
    /// non-zero, the chunk's own text follows after a blank line.
    pub overlap: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Heading,
    Text,
    Table,
}

#[derive(Debug, Clone)]
struct Unit {
    kind: Kind,
    text: String,
    tokens: usize,
    /// Tokens of the unit followed by the separator (and further text).
    joined: usize,
    words: usize,
    page: Option<u32>,
    section: Option<String>,
    oversize: bool,
    glue_next: bool,
}

#[derive(Debug, Clone)]
struct Overlap {
    text: String,
    tokens: usize,
    joined: usize,
}

#[derive(Debug, Clone, Default)]
struct Draft {
    units: Vec<usize>,
    overlap: Option<Overlap>,
    /// Holds a table over the limit (alone, or with the titles it carries).
    oversize: bool,
}

/// Chunks reports. Holds a token counter whose cache outlives single reports.
#[derive(Default)]
pub struct Chunker {
    counter: TokenCounter,
}

/// Chunk one report with a fresh [`Chunker`].
pub fn chunk_report(report: &Report, config: &ChunkConfig) -> Vec<ReportChunk> {
    Chunker::new().chunk(report, config)
}

/// The text a block contributes to chunks (a table with its caption and footnotes).
pub fn block_text(block: &Block) -> String {
    match block {
        Block::Heading { text, .. } | Block::Paragraph { text, .. } => text.trim().to_string(),
        Block::Table {
            markdown,
            caption,
            footnotes,
            ..
        } => {
            let mut parts: Vec<&str> = Vec::new();
            if let Some(c) = caption.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
                parts.push(c);
            }
            parts.push(markdown.trim_matches('\n'));
            parts.extend(footnotes.iter().map(|f| f.trim()).filter(|f| !f.is_empty()));
            parts.join("\n")
        }
    }
}

impl Chunker {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    fn unit(&self, kind: Kind, text: String, page: Option<u32>, section: &Option<String>) -> Unit {
        let (tokens, joined) = self.counter.measure(&text, SEP);
        Unit {
            kind,
            words: text.split_whitespace().count(),
            text,
            tokens,
            joined,
            page,
            section: section.clone(),
            oversize: false,
            glue_next: false,
        }
    }

    /// Cost in tokens of `units` joined by [`SEP`], after an optional overlap.
    fn cost(&self, units: &[Unit], ids: &[usize], overlap: Option<&Overlap>) -> usize {
        let mut total = 0;
        if let Some(o) = overlap {
            total += if ids.is_empty() { o.tokens } else { o.joined };
        }
        for (k, &i) in ids.iter().enumerate() {
            total += if k + 1 < ids.len() {
                units[i].joined
            } else {
                units[i].tokens
            };
        }
        total
    }

    /// Units of a report, in order, with oversize paragraphs already split.
    fn units(&self, report: &Report, config: &ChunkConfig) -> Vec<Unit> {
        let max = config.max_tokens;
        let mut units: Vec<Unit> = Vec::new();
        let mut section: Option<String> = None;
        for block in &report.blocks {
            let text = block_text(block);
            if text.is_empty() {
                continue;
            }
            match block {
                Block::Heading { .. } => {
                    section = Some(text.clone());
                    let mut u = self.unit(Kind::Heading, text, None, &section);
                    u.glue_next = true;
                    units.push(u);
                }
                Block::Table { page, .. } => {
                    let mut u = self.unit(Kind::Table, text, *page, &section);
                    u.oversize = u.tokens > max;
                    units.push(u);
                }
                Block::Paragraph { page, .. } => {
                    // Headings waiting for this paragraph travel in the same chunk.
                    let lead: usize = units
                        .iter()
                        .rev()
                        .take_while(|u| u.kind == Kind::Heading)
                        .map(|u| u.joined)
                        .sum();
                    let u = self.unit(Kind::Text, text, *page, &section);
                    if u.tokens + lead <= max {
                        units.push(u);
                    } else {
                        let cap = max
                            .saturating_sub(config.overlap_tokens + lead)
                            .max(max / 4)
                            .max(1);
                        for piece in self.split_text(&u.text, cap) {
                            units.push(self.unit(Kind::Text, piece, *page, &section));
                        }
                    }
                }
            }
        }
        // An introduction ending in ':' stays with the table it introduces, when both fit.
        for i in 0..units.len().saturating_sub(1) {
            if units[i].kind == Kind::Text
                && units[i].text.ends_with(':')
                && units[i + 1].kind == Kind::Table
            {
                units[i].glue_next = true;
            }
        }
        units
    }

    /// Split text over `cap` tokens at sentence bounds, then words, then characters.
    fn split_text(&self, text: &str, cap: usize) -> Vec<String> {
        let mut out = Vec::new();
        self.split_level(text, cap, 0, &mut out);
        out
    }

    fn split_level(&self, text: &str, cap: usize, level: u8, out: &mut Vec<String>) {
        let spans: Vec<&str> = match level {
            0 => text.split_sentence_bounds().collect(),
            1 => text.split_inclusive(char::is_whitespace).collect(),
            _ => {
                // A character is at most four tokens, so `cap / 4` characters always fit.
                let n = (cap / 4).max(1);
                let chars: Vec<(usize, char)> = text.char_indices().collect();
                chars
                    .chunks(n)
                    .map(|c| {
                        let start = c[0].0;
                        let last = c[c.len() - 1];
                        &text[start..last.0 + last.1.len_utf8()]
                    })
                    .collect()
            }
        };
        let mut start = 0;
        let mut offset = 0;
        let mut estimate = 0;
        for span in spans {
            let (a, b) = (offset, offset + span.len());
            offset = b;
            let t = self.counter.count(span);
            if t > cap && level < 2 {
                self.flush_piece(&text[start..a], cap, level, out);
                self.split_level(span.trim(), cap, level + 1, out);
                start = b;
                estimate = 0;
                continue;
            }
            if estimate + t > cap && a > start {
                self.flush_piece(&text[start..a], cap, level, out);
                start = a;
                estimate = 0;
            }
            estimate += t;
        }
        self.flush_piece(&text[start..], cap, level, out);
    }

    fn flush_piece(&self, piece: &str, cap: usize, level: u8, out: &mut Vec<String>) {
        let piece = piece.trim();
        if piece.is_empty() {
            return;
        }
        if level < 2 && self.counter.count(piece) > cap {
            // Joined spans can count more than their sum; go one level finer.
            self.split_level(piece, cap, level + 1, out);
        } else {
            out.push(piece.to_string());
        }
    }

    /// The overlap for a chunk that continues after `prev`: its last sentences (or words) up to
    /// `budget` tokens, never the whole unit.
    fn overlap_from(&self, prev: &Unit, budget: usize) -> Option<Overlap> {
        if budget == 0 || prev.kind != Kind::Text {
            return None;
        }
        let sentences: Vec<&str> = prev.text.split_sentence_bounds().collect();
        let mut start = prev.text.len();
        for s in sentences.iter().rev() {
            let candidate = start - s.len();
            if candidate == 0 || self.counter.count(prev.text[candidate..].trim()) > budget {
                break;
            }
            start = candidate;
        }
        if start == prev.text.len() {
            // The last sentence alone is over the budget: take its last words.
            let words: Vec<&str> = prev.text.split_inclusive(char::is_whitespace).collect();
            for w in words.iter().rev() {
                let candidate = start - w.len();
                if candidate == 0 || self.counter.count(prev.text[candidate..].trim()) > budget {
                    break;
                }
                start = candidate;
            }
        }
        let text = prev.text[start..].trim();
        if text.is_empty() {
            return None;
        }
        let (tokens, joined) = self.counter.measure(text, SEP);
        Some(Overlap {
            text: text.to_string(),
            tokens,
            joined,
        })
    }

    /// Groups of unit indices that must stay together (glue), in order.
    fn groups(units: &[Unit]) -> Vec<Vec<usize>> {
        let mut groups = Vec::new();
        let mut current = Vec::new();
        for (i, u) in units.iter().enumerate() {
            current.push(i);
            if !u.glue_next {
                groups.push(std::mem::take(&mut current));
            }
        }
        if !current.is_empty() {
            groups.push(current);
        }
        groups
    }

    fn pack(&self, units: &[Unit], config: &ChunkConfig) -> Vec<Draft> {
        let max = config.max_tokens;
        let mut drafts: Vec<Draft> = Vec::new();
        let mut current = Draft::default();
        let mut queue: std::collections::VecDeque<Vec<usize>> = Self::groups(units).into();
        while let Some(group) = queue.pop_front() {
            let with_group = |d: &Draft| {
                let mut ids = d.units.clone();
                ids.extend(&group);
                self.cost(units, &ids, d.overlap.as_ref())
            };
            if !current.units.is_empty() && with_group(&current) <= max {
                current.units.extend(&group);
                continue;
            }
            let mut oversize = group.iter().any(|&i| units[i].oversize);
            let alone = self.cost(units, &group, None);
            if alone > max && !oversize && group.len() > 1 {
                // An introduction's glue is the first to give way.
                if let Some(p) = group
                    .iter()
                    .position(|&i| units[i].kind == Kind::Text && units[i].glue_next)
                {
                    queue.push_front(group[p + 1..].to_vec());
                    queue.push_front(group[..=p].to_vec());
                    continue;
                }
                let (last, titles) = group.split_last().unwrap_or((&group[0], &[]));
                if units[*last].kind == Kind::Table
                    && titles.iter().all(|&i| units[i].kind == Kind::Heading)
                {
                    // A table that only fits without its title keeps it and counts as oversize.
                    oversize = true;
                } else {
                    for g in group.into_iter().rev() {
                        queue.push_front(vec![g]);
                    }
                    continue;
                }
            }
            let prev_last = current.units.last().copied();
            if !current.units.is_empty() {
                drafts.push(std::mem::take(&mut current));
            }
            // A chunk continuing the previous one's text starts with its tail.
            if let Some(p) = prev_last
                && !oversize
                && units[group[0]].kind == Kind::Text
                && units[p].kind == Kind::Text
                && units[p].section == units[group[0]].section
                && let Some(o) = self.overlap_from(&units[p], config.overlap_tokens)
            {
                let d = Draft {
                    units: Vec::new(),
                    overlap: Some(o),
                    oversize: false,
                };
                if with_group(&d) <= max {
                    current.overlap = d.overlap;
                }
            }
            current.units.extend(&group);
            current.oversize = oversize;
        }
        if !current.units.is_empty() {
            drafts.push(current);
        }
        drafts
    }

    fn words(units: &[Unit], d: &Draft) -> usize {
        d.units.iter().map(|&i| units[i].words).sum()
    }

    fn is_oversize(units: &[Unit], d: &Draft) -> bool {
        d.oversize || d.units.iter().any(|&i| units[i].oversize)
    }

    /// Merge chunks under `min_words` words into a neighbour, or fill them from the previous one,
    /// until a pass changes nothing: a merge can give a fragment a new neighbour, and units taken
    /// by a later fragment can leave room in a chunk an earlier fragment could not enter.
    fn merge_fragments(
        &self,
        units: &[Unit],
        mut drafts: Vec<Draft>,
        config: &ChunkConfig,
    ) -> Vec<Draft> {
        let layout =
            |d: &[Draft]| -> Vec<Vec<usize>> { d.iter().map(|d| d.units.clone()).collect() };
        // Every pass merges or moves units toward a fixed point; the cap is a guard, not a limit
        // real input reaches.
        for _ in 0..4 * drafts.len() + 8 {
            let before = layout(&drafts);
            drafts = self.merge_pass(units, drafts, config);
            if layout(&drafts) == before {
                break;
            }
        }
        drafts
    }

    fn merge_pass(
        &self,
        units: &[Unit],
        mut drafts: Vec<Draft>,
        config: &ChunkConfig,
    ) -> Vec<Draft> {
        let max = config.max_tokens;
        let mut i = 0;
        while i < drafts.len() {
            if drafts.len() < 2
                || Self::words(units, &drafts[i]) >= config.min_words
                || Self::is_oversize(units, &drafts[i])
            {
                i += 1;
                continue;
            }
            // Into the previous chunk.
            if i > 0 && !Self::is_oversize(units, &drafts[i - 1]) {
                let prev = &drafts[i - 1];
                let mut ids = prev.units.clone();
                ids.extend(&drafts[i].units);
                if self.cost(units, &ids, prev.overlap.as_ref()) <= max {
                    drafts[i - 1].units = ids;
                    drafts.remove(i);
                    continue;
                }
            }
            // Into the next chunk (whose overlap repeated this fragment's tail).
            if i + 1 < drafts.len() && !Self::is_oversize(units, &drafts[i + 1]) {
                let mut ids = drafts[i].units.clone();
                ids.extend(&drafts[i + 1].units);
                let overlap = drafts[i].overlap.clone();
                let overlap = overlap.filter(|o| self.cost(units, &ids, Some(o)) <= max);
                if self.cost(units, &ids, overlap.as_ref()) <= max {
                    drafts[i + 1] = Draft {
                        units: ids,
                        overlap,
                        oversize: false,
                    };
                    drafts.remove(i);
                    continue;
                }
            }
            // Take units from the end of the previous chunk.
            if i > 0 && !Self::is_oversize(units, &drafts[i - 1]) {
                let mut prev = drafts[i - 1].clone();
                let mut frag = drafts[i].units.clone();
                let mut moved = false;
                while Self::words(
                    units,
                    &Draft {
                        units: frag.clone(),
                        overlap: None,
                        oversize: false,
                    },
                ) < config.min_words
                    && prev.units.len() > 1
                {
                    let mut take = 1;
                    // Never leave a heading (or a glued introduction) at the end of a chunk.
                    while take < prev.units.len()
                        && units[prev.units[prev.units.len() - take - 1]].glue_next
                    {
                        take += 1;
                    }
                    if take >= prev.units.len() {
                        break;
                    }
                    let split = prev.units.len() - take;
                    let mut ids = prev.units[split..].to_vec();
                    ids.extend(&frag);
                    let rest = Draft {
                        units: prev.units[..split].to_vec(),
                        overlap: prev.overlap.clone(),
                        oversize: false,
                    };
                    if self.cost(units, &ids, None) > max
                        || Self::words(units, &rest) < config.min_words
                    {
                        break;
                    }
                    prev = rest;
                    frag = ids;
                    moved = true;
                }
                if moved {
                    drafts[i - 1] = prev;
                    drafts[i] = Draft {
                        units: frag,
                        overlap: None,
                        oversize: false,
                    };
                }
            }
            i += 1;
        }
        drafts
    }

    /// Chunk `report` under `config`.
    pub fn chunk(&self, report: &Report, config: &ChunkConfig) -> Vec<ReportChunk> {
        let units = self.units(report, config);
        let drafts = self.pack(&units, config);
        let drafts = self.merge_fragments(&units, drafts, config);
        let mut metadata: BTreeMap<String, String> = report.metadata.clone();
        metadata.insert("domain".into(), report.domain.clone());
        // A chunk's id comes from its report and its text (and, for a text repeated in one
        // report, how many times it came before), not its position: inserting or editing one
        // chunk leaves every other chunk's id, and so every prompt that names it, unchanged.
        let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        drafts
            .into_iter()
            .enumerate()
            .map(|(index, d)| {
                let mut text = String::new();
                let mut overlap = 0;
                if let Some(o) = &d.overlap {
                    text.push_str(&o.text);
                    overlap = text.len();
                }
                for &i in &d.units {
                    if !text.is_empty() {
                        text.push_str(SEP);
                    }
                    text.push_str(&units[i].text);
                }
                // Exact by construction (see `TokenCounter::measure`); tests recount every chunk.
                let token_count = self.cost(&units, &d.units, d.overlap.as_ref());
                debug_assert_eq!(token_count, self.counter.count(&text));
                let first = &units[d.units[0]];
                let repeat = seen.entry(text.clone()).or_insert(0);
                let occurrence = repeat.to_string();
                *repeat += 1;
                ReportChunk {
                    chunk: Chunk {
                        id: stable_id("chunk", &[&report.id, &text, &occurrence]),
                        report_id: report.id.clone(),
                        index: index as i64,
                        token_count: token_count as i64,
                        contains_table: d.units.iter().any(|&i| units[i].kind == Kind::Table),
                        oversize_table: Self::is_oversize(&units, &d),
                        section: first.section.clone(),
                        page: d.units.iter().find_map(|&i| units[i].page).map(i64::from),
                        metadata: metadata.clone(),
                        text,
                    },
                    overlap,
                }
            })
            .collect()
    }
}
