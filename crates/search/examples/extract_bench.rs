//! Main text of every page of a folder, in the output format of the article-extraction benchmark
//! (scrapinghub/article-extraction-benchmark): `{"version": ..., "output": {"<id>": {"articleBody":
//! "..."}}}`, the id being the file name up to its first dot. `just extraction-bench` runs it on
//! the benchmark's 181 pages (gunzipped first) and scores it beside trafilatura with the
//! benchmark's own `evaluate.py`.
//!
//! Usage: `extract_bench <folder of .html files> <output.json>`. A page that yields no text (or
//! cannot be read) is written with an empty body and counted on stderr, never left out: the
//! benchmark's evaluation wants every page's key.

use std::path::PathBuf;

use noisebench_search::extract_html;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(out)) = (args.next(), args.next()) else {
        return Err("usage: extract_bench <folder of .html files> <output.json>".into());
    };
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{dir}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".html"))
        })
        .collect();
    pages.sort();
    if pages.is_empty() {
        return Err(format!("{dir}: no .html files"));
    }
    let mut output = serde_json::Map::new();
    let mut failed = Vec::new();
    for page in &pages {
        let name = page
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let id = name.split('.').next().unwrap_or(name).to_string();
        let bytes = std::fs::read(page).map_err(|e| format!("{}: {e}", page.display()))?;
        let html = String::from_utf8_lossy(&bytes);
        // The benchmark gives no page URLs; a placeholder keeps relative links resolvable.
        let body = match extract_html(&html, "https://example.com/") {
            Ok(e) => e.text,
            Err(e) => {
                failed.push(format!("{id}: {}", e.code()));
                String::new()
            }
        };
        output.insert(id, serde_json::json!({ "articleBody": body }));
    }
    let doc = serde_json::json!({
        "version": format!("noisebench {}", env!("CARGO_PKG_VERSION")),
        "output": output,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    std::fs::write(&out, text).map_err(|e| format!("{out}: {e}"))?;
    eprintln!(
        "extract_bench: {} pages, {} without text{}",
        pages.len(),
        failed.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(" ({})", failed.join(", "))
        }
    );
    Ok(())
}
