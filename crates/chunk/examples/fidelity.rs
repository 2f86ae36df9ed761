//! `just fidelity`: for every real 10-K in `fixtures/real/10k/`, how much of what a browser shows
//! reaches chunks through the HTML report path (whole document, finance chunk sizes), how much
//! hidden content does, how many tables are lost and how dense table cells are
//! ([`noisebench_chunk::fidelity`]); then for every plain-text filing in `fixtures/real/10k-text/`,
//! how much of its main document's words (outside SGML tags) reach chunks and how many
//! `<TABLE>` blocks are lost. Exits non-zero when a target is missed: HTML at least 99.5% of
//! rendered words, 0 hidden characters, 0 tables lost, at least 60% non-empty cells; text at
//! least 99% of words (page numbers and running heads, dropped as furniture, count as lost),
//! 0 tables lost.

use std::io::Read;
use std::path::Path;

use noisebench_chunk::fidelity::{Fidelity, measure, measure_text};
use noisebench_chunk::{ChunkConfig, Domain};

fn files(folder: &str, suffix: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/real")
        .join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

fn unzstd(path: &Path) -> String {
    let mut text = String::new();
    zstd::Decoder::new(std::fs::File::open(path).expect("opens"))
        .expect("zstd frame")
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}

fn main() {
    let html_met = html_filings();
    let text_met = text_filings();
    if !(html_met && text_met) {
        std::process::exit(1);
    }
}

/// The plain-text filings: words and `<TABLE>` blocks reaching chunks.
fn text_filings() -> bool {
    let files = files("10k-text", ".txt.zst");
    let config = ChunkConfig::for_domain(Domain::Finance);
    let mut total = Fidelity::default();
    println!(
        "\n{:<42} {:>7} {:>8} {:>7} {:>6} {:>6} {:>7}",
        "plain-text filing", "chunks", "words", "reached", "tables", "lost", "density"
    );
    for path in &files {
        let f = measure_text(&unzstd(path), &config);
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "{:<42} {:>7} {:>8} {:>6.2}% {:>6} {:>6} {:>6.1}%",
            name.trim_end_matches(".txt.zst"),
            f.chunks,
            f.rendered_words,
            100.0 * f.word_share(),
            f.tables,
            f.tables_lost,
            100.0 * f.cell_density()
        );
        total.add(&f);
    }
    println!(
        "{:<42} {:>7} {:>8} {:>6.2}% {:>6} {:>6} {:>6.1}%",
        format!("all {} filings", files.len()),
        total.chunks,
        total.rendered_words,
        100.0 * total.word_share(),
        total.tables,
        total.tables_lost,
        100.0 * total.cell_density()
    );
    let met = total.word_share() >= 0.99 && total.tables_lost == 0;
    println!(
        "targets (>= 99% words, 0 tables lost): {}",
        if met { "met" } else { "MISSED" }
    );
    met
}

/// The HTML filings against what a browser renders.
fn html_filings() -> bool {
    let files = files("10k", ".htm.zst");
    let config = ChunkConfig::for_domain(Domain::Finance);
    let mut total = Fidelity::default();
    println!(
        "{:<42} {:>7} {:>8} {:>7} {:>7} {:>6} {:>6} {:>7}",
        "filing", "chunks", "words", "reached", "hidden", "tables", "lost", "density"
    );
    for path in &files {
        let f = measure(&unzstd(path), &config);
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "{:<42} {:>7} {:>8} {:>6.2}% {:>7} {:>6} {:>6} {:>6.1}%",
            name.trim_end_matches(".htm.zst"),
            f.chunks,
            f.rendered_words,
            100.0 * f.word_share(),
            f.hidden_chars,
            f.tables,
            f.tables_lost,
            100.0 * f.cell_density()
        );
        total.add(&f);
    }
    println!(
        "{:<42} {:>7} {:>8} {:>6.2}% {:>7} {:>6} {:>6} {:>6.1}%",
        format!("all {} filings", files.len()),
        total.chunks,
        total.rendered_words,
        100.0 * total.word_share(),
        total.hidden_chars,
        total.tables,
        total.tables_lost,
        100.0 * total.cell_density()
    );
    let met = total.word_share() >= 0.995
        && total.hidden_chars == 0
        && total.tables_lost == 0
        && total.cell_density() >= 0.60;
    println!(
        "targets (>= 99.5% words, 0 hidden, 0 tables lost, >= 60% cells): {}",
        if met { "met" } else { "MISSED" }
    );
    met
}
