//! `scripts/items-vs-sec-10k-extract.py` runs this: the items noisebench's item cutter finds in
//! filing files (HTML or plain text, read as the `reports` stage reads a file), one JSON object per
//! file on stdout: the form the document states, and each item found (every key from 1 to 16)
//! with its text and whether it only points to the annual report.

use noisebench_chunk::{block_text, cut_items, read_document};
use noisebench_core::Block;

const KEYS: [&str; 23] = [
    "1", "1A", "1B", "1C", "2", "3", "4", "5", "6", "7", "7A", "8", "9", "9A", "9B", "9C", "10",
    "11", "12", "13", "14", "15", "16",
];

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let text = String::from_utf8_lossy(&bytes);
        let lower = path.to_ascii_lowercase();
        let doc = read_document(&text, lower.ends_with(".htm") || lower.ends_with(".html"));
        let mut items = serde_json::Map::new();
        for key in KEYS {
            let cut = cut_items(doc.blocks.clone(), &[key.to_string()]);
            if !cut.missing.is_empty() {
                continue;
            }
            // The item's own blocks: its heading's section, not the unnumbered ones after it.
            let body: Vec<String> = cut
                .blocks
                .iter()
                .skip(1)
                .take_while(|b| !matches!(b, Block::Heading { level: 2, .. }))
                .map(block_text)
                .collect();
            items.insert(
                key.to_string(),
                serde_json::json!({"text": body.join("\n"), "pointer": !cut.pointers.is_empty()}),
            );
        }
        let out = serde_json::json!({
            "path": path,
            "form": doc.annual_form,
            "items": items,
        });
        println!("{out}");
    }
}
