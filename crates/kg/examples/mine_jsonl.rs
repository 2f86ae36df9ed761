//! Time the `patterns` stage's mining on a graph saved as JSON lines of `GraphEdge` rows.
//!
//! `cargo run --release -p noisebench-kg --example mine_jsonl -- EDGES.jsonl CAP [SEED]
//! [--enumerate]`: reads the edges, then times the index and each pattern (distinct-chunk rule
//! on, `max_per_pattern = CAP`) and the whole of `mine_patterns` (index, mining, rows), printing
//! counts and seconds. `--enumerate` mines every pattern by enumerating its groups (the
//! reference miner) instead.

use std::io::BufRead;
use std::time::Instant;

use noisebench_core::GraphEdge;
use noisebench_kg::{
    GraphIndex, PatternKind, PatternsConfig, mine_pattern, mine_pattern_enumerating, mine_patterns,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let enumerate = args.iter().any(|a| a == "--enumerate");
    let args: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let [path, cap, rest @ ..] = args.as_slice() else {
        return Err("usage: mine_jsonl EDGES.jsonl CAP [SEED] [--enumerate]".into());
    };
    let config = PatternsConfig {
        max_per_pattern: Some(cap.parse()?),
        seed: rest.first().map_or(Ok(42), |s| s.parse())?,
        ..PatternsConfig::default()
    };
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut edges: Vec<GraphEdge> = Vec::new();
    for line in file.lines() {
        edges.push(serde_json::from_str(&line?)?);
    }
    let start = Instant::now();
    let index = GraphIndex::new(&edges);
    println!(
        "{} edges, {} nodes; index {:.3} s",
        index.edge_count(),
        index.node_count(),
        start.elapsed().as_secs_f64()
    );
    let mut mining = 0.0;
    for kind in PatternKind::ALL {
        let start = Instant::now();
        let mined = if enumerate {
            mine_pattern_enumerating(&index, kind, &config)
        } else {
            mine_pattern(&index, kind, &config)
        };
        let secs = start.elapsed().as_secs_f64();
        mining += secs;
        let c = &mined.count;
        println!(
            "{:<22} {:>12} found {:>11} shared chunk {:>12} capped {:>7} kept  {secs:.3} s",
            c.pattern, c.found, c.shared_chunk, c.capped, c.kept
        );
    }
    println!("mining (4 patterns) {mining:.3} s");
    if !enumerate {
        let start = Instant::now();
        let (rows, _) = mine_patterns(&edges, &config);
        println!(
            "mine_patterns (index, mining, {} rows) {:.3} s",
            rows.len(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
