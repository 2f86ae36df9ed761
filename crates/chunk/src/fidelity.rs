//! How faithfully the HTML report path carries a page into chunks, measured against what a
//! browser renders ([`noisebench_web::visible`], itself checked against headless Chromium's
//! `innerText` in this crate's tests); and a plain-text EDGAR filing ([`measure_text`]), against
//! the words of its main document outside SGML tags. `just fidelity` prints these figures for
//! every real 10-K in `fixtures/real/10k/` and `fixtures/real/10k-text/`.
//!
//! Words are runs of letters and digits, lower-cased ([`words`]): `$3,206` and `$ | 3,206` are the
//! same words, so joining or splitting cells neither gains nor loses any. Counts are multisets: a
//! word rendered three times reaches chunks three times only if chunks hold it three times
//! (overlap repeats do not count twice).

use std::collections::HashMap;

use noisebench_core::{Block, Report};
use noisebench_web::visible::{parse_rendered, rendered_text};
use scraper::{ElementRef, Selector};

use crate::chunker::{ChunkConfig, chunk_report};
use crate::html::html_blocks;
use crate::table::pipe_row_cells;

/// The fidelity figures of one page.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Fidelity {
    /// Words a browser renders.
    pub rendered_words: usize,
    /// Of those, words that reach chunks.
    pub reached_words: usize,
    /// Characters of words found only in hidden content (never rendered) that reach chunks.
    pub hidden_chars: usize,
    /// Rendered tables with text.
    pub tables: usize,
    /// Of those, tables fewer than 90% of whose words reach chunks.
    pub tables_lost: usize,
    /// Cells of the pipe tables in table chunks, and of those the non-empty ones.
    pub table_cells: usize,
    pub nonempty_cells: usize,
    pub chunks: usize,
}

impl Fidelity {
    /// Share of rendered words that reach chunks.
    pub fn word_share(&self) -> f64 {
        ratio(self.reached_words, self.rendered_words)
    }

    /// Share of table cells that are not empty.
    pub fn cell_density(&self) -> f64 {
        ratio(self.nonempty_cells, self.table_cells)
    }

    /// Sum of two pages' figures (for totals over a corpus).
    pub fn add(&mut self, o: &Fidelity) {
        self.rendered_words += o.rendered_words;
        self.reached_words += o.reached_words;
        self.hidden_chars += o.hidden_chars;
        self.tables += o.tables;
        self.tables_lost += o.tables_lost;
        self.table_cells += o.table_cells;
        self.nonempty_cells += o.nonempty_cells;
        self.chunks += o.chunks;
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// The words of a text: runs of letters and digits, lower-cased.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn bag(text: &str) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for w in words(text) {
        *m.entry(w).or_insert(0) += 1;
    }
    m
}

/// Words of `want` found in `have`, as multisets.
fn reached(want: &HashMap<String, usize>, have: &HashMap<String, usize>) -> usize {
    want.iter()
        .map(|(w, n)| (*n).min(have.get(w).copied().unwrap_or(0)))
        .sum()
}

/// The report the HTML path makes of a page (every block; no item cutting).
pub(crate) fn html_report(html: &str) -> Report {
    let r = html_blocks(html);
    Report {
        id: "report_fidelity".into(),
        domain: "finance".into(),
        format: "html".into(),
        title: r.title,
        blocks: r.blocks,
        ..Default::default()
    }
}

/// The words of chunks, and the cells and non-empty cells of their pipe tables.
struct ChunkWords {
    words: HashMap<String, usize>,
    table_cells: usize,
    nonempty_cells: usize,
    chunks: usize,
}

fn chunk_words(report: &Report, config: &ChunkConfig) -> ChunkWords {
    let chunks = chunk_report(report, config);
    let mut chunk_words: HashMap<String, usize> = HashMap::new();
    let (mut table_cells, mut nonempty_cells) = (0, 0);
    for c in &chunks {
        for (w, n) in bag(&c.chunk.text) {
            *chunk_words.entry(w).or_insert(0) += n;
        }
        if c.chunk.contains_table {
            for line in c.chunk.text.lines().map(str::trim) {
                if !(line.starts_with('|') && line.ends_with('|') && line.len() > 1) {
                    continue;
                }
                if line.trim_matches(['|', '-', ':', ' ']).is_empty() {
                    continue;
                }
                table_cells += pipe_row_cells(line);
                nonempty_cells += cells(line).filter(|c| !c.trim().is_empty()).count();
            }
        }
    }
    ChunkWords {
        words: chunk_words,
        table_cells,
        nonempty_cells,
        chunks: chunks.len(),
    }
}

/// Measure a plain-text filing (a whole EDGAR submission, or one document) through the text
/// path ([`crate::read_document`]: header, documents, furniture, `<TABLE>` layout) and the
/// chunker, whole (no item cutting). The reference is every word of the main document's text
/// outside SGML tags, page numbers and running heads included: what the furniture filter drops
/// counts as not reached. Tables are the `<TABLE>` blocks; `hidden_chars` is 0 (text has no
/// hidden content).
pub fn measure_text(text: &str, config: &ChunkConfig) -> Fidelity {
    let main = crate::parse_submission(text)
        .and_then(|sub| {
            let at = sub
                .documents
                .iter()
                .position(|d| crate::family(&d.kind).is_some())
                .unwrap_or(0);
            sub.documents.into_iter().nth(at).map(|d| d.text)
        })
        .unwrap_or_else(|| text.to_string());
    let read = crate::read_document(text, false);
    let report = Report {
        id: "report_fidelity".into(),
        domain: "finance".into(),
        format: "text".into(),
        blocks: read.blocks,
        ..Default::default()
    };
    let got = chunk_words(&report, config);
    // Invariant: constant patterns.
    let tag = regex::Regex::new(r"<[^<>\n]{1,80}>").expect("constant pattern");
    let table = regex::Regex::new(r"(?is)<TABLE>(.*?)</TABLE>").expect("constant pattern");
    let want = bag(&tag.replace_all(&main, " "));
    let (mut tables, mut tables_lost) = (0, 0);
    for t in table.captures_iter(&main) {
        let cells = bag(&tag.replace_all(&t[1], " "));
        let total: usize = cells.values().sum();
        if total == 0 {
            continue;
        }
        tables += 1;
        if (reached(&cells, &got.words) as f64) < 0.9 * total as f64 {
            tables_lost += 1;
        }
    }
    Fidelity {
        rendered_words: want.values().sum(),
        reached_words: reached(&want, &got.words),
        hidden_chars: 0,
        tables,
        tables_lost,
        table_cells: got.table_cells,
        nonempty_cells: got.nonempty_cells,
        chunks: got.chunks,
    }
}

/// Measure one page through the HTML path and the chunker.
pub fn measure(html: &str, config: &ChunkConfig) -> Fidelity {
    let (doc, pruned) = parse_rendered(html);
    let rendered = bag(&rendered_text(doc.root_element()));
    let ChunkWords {
        words: chunk_words,
        table_cells,
        nonempty_cells,
        chunks,
    } = chunk_words(&html_report(html), config);
    let hidden = bag(&pruned.hidden_text.join("\n"));
    let hidden_chars = hidden
        .iter()
        .filter(|(w, _)| !rendered.contains_key(*w))
        .map(|(w, n)| w.chars().count() * (*n).min(chunk_words.get(w).copied().unwrap_or(0)))
        .sum();
    // Invariant: constant selector.
    let sel = Selector::parse("table").expect("constant selector");
    let (mut tables, mut tables_lost) = (0, 0);
    for t in doc.select(&sel) {
        // Tables inside tables are measured with their outer table.
        if t.ancestors()
            .filter_map(ElementRef::wrap)
            .any(|a| a.value().name() == "table")
        {
            continue;
        }
        let want = bag(&rendered_text(t));
        let total: usize = want.values().sum();
        if total == 0 {
            continue;
        }
        tables += 1;
        if (reached(&want, &chunk_words) as f64) < 0.9 * total as f64 {
            tables_lost += 1;
        }
    }
    Fidelity {
        rendered_words: rendered.values().sum(),
        reached_words: reached(&rendered, &chunk_words),
        hidden_chars,
        tables,
        tables_lost,
        table_cells,
        nonempty_cells,
        chunks,
    }
}

/// The cells of a pipe-table line (escaped pipes `\|` do not split).
fn cells(line: &str) -> impl Iterator<Item = String> + '_ {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for ch in t.chars() {
        match ch {
            '|' if !escaped => out.push(std::mem::take(&mut cur)),
            '\\' => {
                escaped = !escaped;
                cur.push(ch);
                continue;
            }
            _ => cur.push(ch),
        }
        escaped = false;
    }
    out.push(cur);
    out.into_iter()
}

/// The tables of a report as they were written, for checks (`Block::Table` Markdown).
pub fn tables(report: &Report) -> Vec<&str> {
    report
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table { markdown, .. } => Some(markdown.as_str()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_words_and_tables_are_measured() {
        let html = r#"<html><body><div style="display:none"><ix:header>zzhidden</ix:header></div>
            <p>Revenue grew strongly this year across every segment.</p>
            <table><tr><td>Revenue</td><td>$</td><td>3,206</td></tr>
            <tr><td>Costs</td><td></td><td>1,000</td></tr></table></body></html>"#;
        let f = measure(html, &ChunkConfig::default());
        assert_eq!(f.hidden_chars, 0);
        assert_eq!(f.rendered_words, f.reached_words, "{f:?}");
        assert_eq!((f.tables, f.tables_lost), (1, 0));
        assert_eq!((f.table_cells, f.nonempty_cells), (4, 4), "{f:?}");
        assert_eq!(
            words("$3,206 Net-Income"),
            vec!["3", "206", "net", "income"]
        );
        assert_eq!(cells(r"| a \| b | | c |").count(), 3);
    }

    #[test]
    fn a_text_filing_is_measured_against_its_words_outside_tags() {
        let text = "<DOCUMENT>\n<TYPE>10-K\n<TEXT>\nRevenue grew strongly this year across \
                    every segment of the company.\n\n<TABLE>\n<S>            <C>\nRevenue        \
                    3,206\nCosts          1,000\n</TABLE>\n</TEXT>\n</DOCUMENT>\n";
        let f = measure_text(text, &ChunkConfig::default());
        assert_eq!(f.hidden_chars, 0);
        assert!(f.rendered_words >= 16, "{f:?}");
        assert_eq!(f.rendered_words, f.reached_words, "{f:?}");
        assert_eq!((f.tables, f.tables_lost), (1, 0), "{f:?}");
    }
}
