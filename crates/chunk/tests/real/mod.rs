//! The real 10-K corpus (`fixtures/real/10k/`, filings as the SEC served them): every golden field
//! of `golden.toml` (written by reading the filings), no hidden content in chunks, no table lost,
//! dense tables, sub-headings as sections, and the visible-text rule against headless Chromium's
//! `innerText` (recorded by `scripts/innertext.sh`).

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;

use noisebench_chunk::fidelity::{Fidelity, measure, words};
use noisebench_chunk::html::html_blocks;
use noisebench_chunk::reports::edgar_live::filing_items;
use noisebench_chunk::{ChunkConfig, Domain, block_text, chunk_report};
use noisebench_core::{Block, Report};
use serde::Deserialize;

use crate::common::root;

#[derive(Deserialize)]
struct Golden {
    filing: Vec<Filing>,
}

#[derive(Deserialize)]
struct Filing {
    file: String,
    items: Vec<String>,
    first: Option<String>,
    last: Option<String>,
    #[serde(default)]
    sections: Vec<String>,
    #[serde(default)]
    table: Vec<Table>,
    #[serde(default)]
    item: Vec<Item>,
}

/// One item's golden span: its first and (when the item ends clearly) last sentence.
#[derive(Deserialize)]
struct Item {
    id: String,
    first: String,
    last: Option<String>,
}

#[derive(Deserialize)]
struct Table {
    anchor: Vec<String>,
    rows: usize,
    cols: usize,
    cells: Vec<(usize, usize, String)>,
}

fn dir() -> PathBuf {
    root().join("fixtures/real/10k")
}

fn unzstd(path: &PathBuf) -> String {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    zstd::Decoder::new(file)
        .and_then(|mut d| d.read_to_string(&mut text))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}

fn page(file: &str) -> String {
    unzstd(&dir().join(file))
}

fn golden() -> Golden {
    let path = dir().join("golden.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn report(blocks: Vec<Block>) -> Report {
    Report {
        id: "report_real".into(),
        domain: "finance".into(),
        format: "html".into(),
        blocks,
        ..Default::default()
    }
}

/// A Markdown pipe table back to its cells (escaped pipes do not split).
fn grid(markdown: &str) -> Vec<Vec<String>> {
    markdown
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, line)| {
            let t = line.trim();
            let t = t.strip_prefix('|').unwrap_or(t);
            let t = t.strip_suffix('|').unwrap_or(t);
            let mut cells = vec![String::new()];
            let mut chars = t.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\\' if chars.peek() == Some(&'|') => {
                        cells.last_mut().unwrap().push('|');
                        chars.next();
                    }
                    '|' => cells.push(String::new()),
                    c => cells.last_mut().unwrap().push(c),
                }
            }
            cells.into_iter().map(|c| c.trim().to_string()).collect()
        })
        .collect()
}

/// An item's text after its heading, whitespace squashed (tables as their Markdown).
fn item_body(blocks: &[Block]) -> String {
    squash(
        &blocks
            .iter()
            .skip(1)
            .map(block_text)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The item's first sentence sits at its start (a sub-heading or a table's header may come first).
fn starts_with_near(body: &str, first: &str) -> Result<(), String> {
    match body.find(first) {
        Some(at) if at <= 1000 => Ok(()),
        Some(at) => Err(format!("first sentence at byte {at}, not at the start")),
        None => Err(format!("lacks its first sentence {first:?}")),
    }
}

/// The item's last sentence sits at its end (a page footer or page number may follow it).
fn ends_with_near(body: &str, last: &str) -> Result<(), String> {
    match body.rfind(last) {
        Some(at) if body.len() - (at + last.len()) <= 400 => Ok(()),
        Some(at) => Err(format!(
            "runs {} bytes past its last sentence {last:?}: ...{}",
            body.len() - (at + last.len()),
            tail(body, 300)
        )),
        None => Err(format!("lacks its last sentence {last:?}")),
    }
}

fn tail(s: &str, n: usize) -> &str {
    let mut at = s.len().saturating_sub(n);
    while !s.is_char_boundary(at) {
        at += 1;
    }
    &s[at..]
}

/// Checks one filing's golden fields; returns (fields checked, failures).
fn check(f: &Filing) -> (usize, Vec<String>) {
    let html = page(&f.file);
    let mut fields = 0;
    let mut bad = Vec::new();
    let mut fail = |what: String| bad.push(format!("{}: {what}", f.file));
    let cut = filing_items(&html, &f.items);
    fields += f.items.len();
    for item in &cut.missing {
        fail(format!("item {item} not found"));
    }
    if f.first.is_some() || !f.sections.is_empty() {
        let cut = filing_items(&html, &["7".to_string()]);
        let body = item_body(&cut.blocks);
        if let Some(first) = &f.first {
            fields += 1;
            if let Err(e) = starts_with_near(&body, first) {
                fail(format!("item 7: {e}"));
            }
        }
        if let Some(last) = &f.last {
            fields += 1;
            if let Err(e) = ends_with_near(&body, last) {
                fail(format!("item 7: {e}"));
            }
        }
        let headings: Vec<&str> = cut
            .blocks
            .iter()
            .skip(1)
            .filter_map(|b| match b {
                Block::Heading { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        for s in &f.sections {
            fields += 1;
            if !headings.contains(&s.as_str()) {
                fail(format!(
                    "item 7 has no sub-heading {s:?} (headings: {headings:?})"
                ));
            }
        }
        if !f.sections.is_empty() {
            // Chunks take their section from the sub-headings, not the item's name for all.
            fields += 1;
            let config = ChunkConfig::for_domain(Domain::Finance);
            let chunks = chunk_report(&report(cut.blocks.clone()), &config);
            let item = block_text(&cut.blocks[0]);
            let own = chunks
                .iter()
                .filter(|c| c.chunk.section.as_deref().is_some_and(|s| s != item))
                .count();
            if 2 * own < chunks.len() {
                fail(format!(
                    "{own} of {} chunks have a sub-heading as section",
                    chunks.len()
                ));
            }
        }
    }
    for item in &f.item {
        let cut = filing_items(&html, std::slice::from_ref(&item.id));
        fields += 2 + usize::from(item.last.is_some());
        if !cut.missing.is_empty() {
            fail(format!("item {} not found", item.id));
            continue;
        }
        let body = item_body(&cut.blocks);
        if let Err(e) = starts_with_near(&body, &item.first) {
            fail(format!("item {}: {e}", item.id));
        }
        if let Some(last) = &item.last
            && let Err(e) = ends_with_near(&body, last)
        {
            fail(format!("item {}: {e}", item.id));
        }
    }
    let tables: Vec<Vec<Vec<String>>> = html_blocks(&html)
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table { markdown, .. } => Some(grid(markdown)),
            _ => None,
        })
        .collect();
    for t in &f.table {
        fields += 2 + t.cells.len();
        let found: Vec<&Vec<Vec<String>>> = tables
            .iter()
            .filter(|g| t.anchor.iter().all(|a| g.iter().flatten().any(|c| c == a)))
            .collect();
        let [g] = found.as_slice() else {
            fail(format!("{} tables hold {:?}", found.len(), t.anchor));
            continue;
        };
        let shape = (g.len(), g.first().map_or(0, Vec::len));
        if shape != (t.rows, t.cols) {
            fail(format!(
                "table {:?} is {}x{}, not {}x{}: {g:?}",
                t.anchor, shape.0, shape.1, t.rows, t.cols
            ));
        }
        for (r, c, want) in &t.cells {
            let got = g.get(*r).and_then(|row| row.get(*c));
            if got != Some(want) {
                fail(format!(
                    "table {:?} cell ({r}, {c}) is {got:?}, not {want:?}",
                    t.anchor
                ));
            }
        }
    }
    (fields, bad)
}

/// Every golden field of every filing (items found, item 7's first and last sentences, its
/// sub-headings as sections, table shapes and cells, and on eight filings every item's first and
/// last sentence).
#[test]
fn golden_fields_hold_on_every_real_10k() {
    let golden = golden();
    assert!(
        golden.filing.len() >= 20,
        "the corpus holds at least 20 filings"
    );
    let results: Vec<(usize, Vec<String>)> =
        noisebench_core::parallel_map(&golden.filing, noisebench_core::default_threads(), check);
    let fields: usize = results.iter().map(|r| r.0).sum();
    let bad: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    println!(
        "reports golden fields: {}/{fields} right over {} filings",
        fields - bad.len(),
        golden.filing.len()
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

fn corpus() -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".htm.zst"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, unzstd(p))
        })
        .collect()
}

/// Hidden content (inline XBRL's `ix:header` in a `display:none` block, hidden cells, comments)
/// never reaches chunks; no table with text is lost; table cells are mostly not empty; nearly
/// every word a browser shows reaches chunks. Before the visible-text rule the XBRL header was
/// paragraphs (123 of a bank's 169 chunks); before the table model ragged tables were dropped.
#[test]
fn real_10ks_reach_chunks_whole_and_nothing_hidden_does() {
    let config = ChunkConfig::for_domain(Domain::Finance);
    let pages = corpus();
    let measured: Vec<(String, Fidelity)> = noisebench_core::parallel_map(
        &pages,
        noisebench_core::default_threads(),
        |(name, html)| (name.clone(), measure(html, &config)),
    );
    let mut total = Fidelity::default();
    for (name, f) in &measured {
        assert_eq!(f.hidden_chars, 0, "{name}: hidden content in chunks: {f:?}");
        assert_eq!(f.tables_lost, 0, "{name}: tables lost: {f:?}");
        total.add(f);
    }
    assert!(total.word_share() >= 0.995, "{total:?}");
    assert!(total.cell_density() >= 0.60, "{total:?}");
    // The XBRL header's contexts and units are nowhere in the chunks.
    for (name, html) in pages.iter().filter(|(n, _)| n.starts_with("wfc")) {
        let r = report(html_blocks(html).blocks);
        for c in chunk_report(&r, &config) {
            for needle in ["us-gaap:", "iso4217:", "xbrli:", "0000072971"] {
                assert!(
                    !c.chunk.text.contains(needle),
                    "{name}: {needle} in a chunk"
                );
            }
        }
    }
}

fn bag(text: &str) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for w in words(text) {
        *m.entry(w).or_insert(0) += 1;
    }
    m
}

fn covered(want: &HashMap<String, usize>, have: &HashMap<String, usize>) -> f64 {
    let total: usize = want.values().sum();
    let got: usize = want
        .iter()
        .map(|(w, n)| (*n).min(have.get(w).copied().unwrap_or(0)))
        .sum();
    got as f64 / total as f64
}

/// The visible-text rule gives the words headless Chromium's `innerText` gives, in both
/// directions, on seven filings of 1999-2025 (one with 2,274 hidden table cells).
#[test]
fn visible_text_matches_chromium_inner_text() {
    let dir = dir().join("innertext");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    for path in files {
        let name = path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".txt.zst", "");
        let chromium = bag(&unzstd(&path));
        let ours = bag(&noisebench_web::visible::visible_text(&page(&format!(
            "{name}.htm.zst"
        ))));
        let (recall, precision) = (covered(&chromium, &ours), covered(&ours, &chromium));
        println!("{name}: recall {recall:.4}, precision {precision:.4}");
        assert!(
            recall >= 0.995 && precision >= 0.995,
            "{name}: {recall} {precision}"
        );
    }
}
