//! Print the chunks of one fixture source: `cargo run -p noisebench-chunk --example dump -- PATTERN [DOMAIN]`.
use noisebench_chunk::{ChunksConfig, Domain, ReportsConfig, Source, chunk_report, ingest};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let domain = args
        .get(2)
        .and_then(|d| Domain::from_name(d))
        .unwrap_or_default();
    let config = ReportsConfig {
        sources: vec![Source {
            path: args[1].clone(),
            edgar: None,
            format: None,
            domain,
            items: vec!["item_7".into()],
            metadata: Default::default(),
        }],
    };
    let (reports, drops, n) = ingest(&config, &root, "reports");
    println!(
        "files {n} reports {} drops {:?}",
        reports.len(),
        drops.into_records()
    );
    for r in &reports {
        let d = Domain::from_name(&r.domain).unwrap_or_default();
        let out = chunk_report(r, &ChunksConfig::default().resolve(d));
        let overlaps: Vec<usize> = out.iter().map(|c| c.overlap).collect();
        let chunks: Vec<_> = out.into_iter().map(|c| c.chunk).collect();
        println!("overlaps {overlaps:?}");
        println!(
            "=== {} {:?} {:?} blocks={} chunks={}",
            r.source_path,
            r.title,
            r.metadata,
            r.blocks.len(),
            chunks.len()
        );
        for c in &chunks {
            let words = c.text.split_whitespace().count();
            println!(
                "--- #{} tokens={} words={} table={} oversize={} section={:?} page={:?}\n{}",
                c.index,
                c.token_count,
                words,
                c.contains_table,
                c.oversize_table,
                c.section,
                c.page,
                if std::env::var("FULL").is_ok() {
                    c.text.clone()
                } else {
                    format!(
                        "{} [...] {}",
                        c.text.chars().take(150).collect::<String>(),
                        c.text
                            .chars()
                            .rev()
                            .take(80)
                            .collect::<String>()
                            .chars()
                            .rev()
                            .collect::<String>()
                    )
                }
            );
        }
    }
}
