//! Pattern mining against NetworkX, side by side in one run.
//!
//! `cargo bench -p noisebench-kg --bench patterns` generates the graph of
//! `networkx_patterns.py gen-docs 500 200 42` (99.5K triplets; the baseline script kept beside
//! this bench), mines the four patterns with our miners (distinct-chunk rule and cap off, like
//! the script), runs the script's NetworkX miner on the same file, prints counts, seconds and
//! ratios, and exits non-zero when a pattern is under 20x faster or stars and inverted stars do
//! not give the script's counts. The baseline needs `networkx` (`pip install networkx`); when it
//! cannot run, the bench fails unless `NOISEBENCH_BENCH_SKIP_BASELINE=1` asks to skip it (the
//! generator then runs against a stub module). `NOISEBENCH_PYTHON` names the interpreter (default: `.venv-bench/bin/python3` at the
//! repository root if present, else `python3`); `NOISEBENCH_BENCH_NX_TIMEOUT` the script's budget
//! in seconds (default 60: its single-hop test never finishes). Plain `main` with `std::time`.
//!
//! First, a hub-growing scaling point (no baseline): a synthetic graph whose hub degrees double
//! with its size, at three sizes, mined capped as the stage mines it (chains and inverted stars
//! counted and sampled by rank) and by enumerating every group, with seconds per doubling.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use noisebench_core::GraphEdge;
use noisebench_kg::PatternsConfig;
use noisebench_kg::{GraphIndex, PatternKind, mine_pattern, pattern_row};

const TARGET_RATIO: f64 = 20.0;

fn python(root: &Path) -> String {
    if let Ok(p) = std::env::var("NOISEBENCH_PYTHON") {
        return p;
    }
    let venv = root.join(".venv-bench/bin/python3");
    if venv.exists() {
        return venv.display().to_string();
    }
    "python3".into()
}

#[derive(serde::Deserialize)]
struct Line {
    triplet_id: String,
    entity_1: String,
    relation: String,
    entity_2: String,
    answer_chunk_id: String,
}

/// Our graph edges from the script's triplets: one edge per (head, relation, tail), its triplets
/// sorted; the report is the chunk id's document prefix (`d12_c3` -> `d12`).
fn edges_of(lines: &[Line]) -> Vec<GraphEdge> {
    let mut by_key: BTreeMap<(&str, &str, &str), Vec<&Line>> = BTreeMap::new();
    for l in lines {
        by_key
            .entry((&l.entity_1, &l.relation, &l.entity_2))
            .or_default()
            .push(l);
    }
    by_key
        .into_iter()
        .map(|((h, r, t), mut ls)| {
            ls.sort_by(|a, b| a.triplet_id.cmp(&b.triplet_id));
            GraphEdge {
                id: noisebench_core::stable_id("edge", &[h, r, t]),
                head: h.into(),
                relation: r.into(),
                tail: t.into(),
                triplet_ids: ls.iter().map(|l| l.triplet_id.clone()).collect(),
                chunk_ids: ls.iter().map(|l| l.answer_chunk_id.clone()).collect(),
                report_ids: ls
                    .iter()
                    .map(|l| {
                        l.answer_chunk_id
                            .split('_')
                            .next()
                            .unwrap_or("")
                            .to_string()
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The graph NetworkX's `DiGraph` holds: one edge per (head, tail), the last triplet written.
fn collapsed(lines: &[Line]) -> Vec<GraphEdge> {
    let mut by_pair: BTreeMap<(&str, &str), &Line> = BTreeMap::new();
    for l in lines {
        by_pair.insert((&l.entity_1, &l.entity_2), l);
    }
    let one: Vec<Line> = by_pair
        .values()
        .map(|l| Line {
            triplet_id: l.triplet_id.clone(),
            entity_1: l.entity_1.clone(),
            relation: "r".into(),
            entity_2: l.entity_2.clone(),
            answer_chunk_id: l.answer_chunk_id.clone(),
        })
        .collect();
    edges_of(&one)
}

/// Walks of 2 and 3 edges in a simple digraph without self-loops, repeated nodes allowed: what
/// the script's depth-first search counts as chains. From degrees: sum of in(b)*out(b), and
/// over edges b->c of in(b)*out(c).
fn walks(edges: &[GraphEdge]) -> u64 {
    let mut inn: BTreeMap<&str, u64> = BTreeMap::new();
    let mut out: BTreeMap<&str, u64> = BTreeMap::new();
    for e in edges {
        *out.entry(&e.head).or_default() += 1;
        *inn.entry(&e.tail).or_default() += 1;
    }
    let deg = |m: &BTreeMap<&str, u64>, n: &str| m.get(n).copied().unwrap_or(0);
    let two: u64 = out.keys().map(|n| deg(&inn, n) * deg(&out, n)).sum();
    let three: u64 = edges
        .iter()
        .map(|e| deg(&inn, &e.head) * deg(&out, &e.tail))
        .sum();
    two + three
}

/// Median seconds of `runs` runs of `f`, and its last result.
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut secs = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        last = Some(f());
        secs.push(start.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    (secs[secs.len() / 2], last.expect("runs >= 1"))
}

/// A RARE-shaped graph of `reports` reports whose hubs grow with it: each report has its own 20
/// entities and 10 chunks, and names 5 of its sector's 5 shared entities (8 sectors), so a hub's
/// degree doubles when the reports do, and with it the chains and inverted stars through it.
fn hub_graph(reports: usize) -> Vec<GraphEdge> {
    let mut edges = Vec::new();
    let mut add = |h: String, t: String, r: usize, n: usize| {
        let i = edges.len();
        edges.push(GraphEdge {
            id: format!("e{i:07}"),
            head: h,
            relation: format!("rel{}", n % 4),
            tail: t,
            triplet_ids: vec![format!("t{i:07}")],
            chunk_ids: vec![format!("r{r}_c{}", n % 10)],
            report_ids: vec![format!("r{r}")],
        });
    };
    for r in 0..reports {
        let local = |i: usize| format!("r{r}_e{i}");
        let hub = |j: usize| format!("sector{}_name{j}", r % 8);
        for i in 0..10 {
            add(local(i), local(i + 1 + (r + i) % 9), r, i);
        }
        for j in 0..5 {
            add(local(10 + j), hub(j), r, 10 + j);
            add(hub(j), local(15 + j), r, 15 + j);
        }
        add(hub(r % 5), hub((r / 5 + 1 + r % 5) % 5), r, 20);
    }
    edges
}

/// The hub-growing scaling point: [`hub_graph`] at 400, 800 and 1,600 reports, the cap 45 per
/// report (as `just bench-rare` sets it), the stage's miner (counting) against the enumerating
/// reference, seconds per size and per doubling.
fn scaling() {
    println!("hub-growing graphs (cap 45 per report, distinct-chunk rule on):");
    println!(
        "{:>8} {:>8} {:>12} {:>10} {:>10} {:>12} {:>10}",
        "reports", "edges", "groups", "counting s", "x doubling", "enumerate s", "x doubling"
    );
    let mut last: Option<(f64, f64)> = None;
    for reports in [400, 800, 1600] {
        let edges = hub_graph(reports);
        let index = GraphIndex::new(&edges);
        let config = PatternsConfig {
            max_per_pattern: Some(45 * reports),
            ..PatternsConfig::default()
        };
        let mine_all = |enumerate: bool| {
            PatternKind::ALL
                .into_iter()
                .map(|kind| {
                    let mined = if enumerate {
                        noisebench_kg::mine_pattern_enumerating(&index, kind, &config)
                    } else {
                        mine_pattern(&index, kind, &config)
                    };
                    mined.count.found
                })
                .sum::<u64>()
        };
        let (ours, groups) = time(3, || mine_all(false));
        let (theirs, same) = time(1, || mine_all(true));
        assert_eq!(groups, same, "counting and enumerating count alike");
        let ratio = |now: f64, then: Option<f64>| {
            then.map_or("".to_string(), |t| format!("{:.2}x", now / t))
        };
        println!(
            "{:>8} {:>8} {:>12} {:>10.4} {:>10} {:>12.4} {:>10}",
            reports,
            edges.len(),
            groups,
            ours,
            ratio(ours, last.map(|l| l.0)),
            theirs,
            ratio(theirs, last.map(|l| l.1)),
        );
        last = Some((ours, theirs));
    }
}

fn main() -> ExitCode {
    scaling();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("crates/kg/benches/networkx_patterns.py");
    let py = python(&root);
    let skip_baseline = std::env::var("NOISEBENCH_BENCH_SKIP_BASELINE").is_ok_and(|v| v == "1");
    let has_networkx = Command::new(&py)
        .args(["-c", "import networkx"])
        .status()
        .is_ok_and(|s| s.success());
    let dir = tempfile::tempdir().expect("temporary directory");
    let jsonl: PathBuf = dir.path().join("docs.jsonl");

    // The generator imports networkx at the top; without it, run it against a stub module.
    let generated = Command::new(&py)
        .args([
            "-c",
            "import runpy, sys, types\n\
             sys.modules.setdefault('networkx', types.ModuleType('networkx'))\n\
             try:\n    import networkx\nexcept ImportError:\n    pass\n\
             sys.argv = sys.argv[1:]\n\
             runpy.run_path(sys.argv[0], run_name='__main__')",
        ])
        .arg(&script)
        .args(["gen-docs", "500", "200", "42"])
        .arg(&jsonl)
        .status();
    if !generated.is_ok_and(|s| s.success()) {
        println!(
            "failed: `{py}` could not run the generator {}",
            script.display()
        );
        return ExitCode::FAILURE;
    }
    let text = std::fs::read_to_string(&jsonl).expect("generated graph");
    let lines: Vec<Line> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("generator line"))
        .collect();
    let edges = edges_of(&lines);
    println!(
        "graph: {} triplets -> {} edges (gen-docs 500 200 42)",
        lines.len(),
        edges.len()
    );

    let config = PatternsConfig {
        max_per_pattern: None,
        distinct_chunks: false,
        ..PatternsConfig::default()
    };
    let (index_secs, index) = time(5, || GraphIndex::new(&edges));
    println!(
        "index: {} nodes, {} edges in {:.4} s (not in the per-pattern times, as the script's \
         graph building is not in its)",
        index.node_count(),
        index.edge_count(),
        index_secs
    );
    let mut ours: BTreeMap<PatternKind, (u64, f64)> = BTreeMap::new();
    for kind in PatternKind::ALL {
        let (secs, mined) = time(5, || mine_pattern(&index, kind, &config));
        ours.insert(kind, (mined.count.found, secs));
        let (row_secs, rows) = time(1, || {
            mined
                .groups
                .iter()
                .map(|g| pattern_row(&index, kind, g))
                .collect::<Vec<_>>()
                .len()
        });
        println!(
            "ours {:<22} {:>9} groups in {:.4} s; their {rows} rows (ids, strings) in {:.3} s more",
            kind.name(),
            mined.count.found,
            secs,
            row_secs
        );
    }

    // The stage's own work with RARE's defaults (distinct chunks, cap 30,000, rows with ids).
    let (stage_secs, (rows, facts)) = time(1, || {
        noisebench_kg::mine_patterns(&edges, &PatternsConfig::default())
    });
    println!(
        "stage defaults (index, distinct-chunk rule, cap 30,000, {} rows): {:.3} s",
        rows.len(),
        stage_secs
    );
    for line in facts.card_lines() {
        println!("  {line}");
    }

    // Where chain counts differ from the script's, and by how much.
    let dig = collapsed(&lines);
    let dig_index = GraphIndex::new(&dig);
    let ours_dig = mine_pattern(&dig_index, PatternKind::ChainedMultiHop, &config)
        .count
        .found;
    let walks_dig = walks(&dig);
    let ours_multi = ours[&PatternKind::ChainedMultiHop].0;
    println!(
        "chains: ours {ours_multi} on the multigraph; {ours_dig} on the script's DiGraph (one edge \
         per node pair), so {} come from parallel edges (other relations between the same \
         entities); walks of 2-3 edges on the DiGraph {walks_dig} (what the script's search \
         counts), so {} revisit a node",
        ours_multi as i64 - ours_dig as i64,
        walks_dig as i64 - ours_dig as i64,
    );

    if !has_networkx {
        println!(
            "baseline cannot run: `{py} -c \"import networkx\"` failed (pip install networkx, or \
             set NOISEBENCH_PYTHON; NOISEBENCH_BENCH_SKIP_BASELINE=1 skips the baseline)"
        );
        return if skip_baseline {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let timeout: f64 = std::env::var("NOISEBENCH_BENCH_NX_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60.0);
    println!("running NetworkX (budget {timeout} s per timed part) ...");
    let output = Command::new(&py)
        .arg(&script)
        .arg("mine")
        .arg(&jsonl)
        .arg(timeout.to_string())
        .output()
        .expect("run the NetworkX miner");
    if !output.status.success() {
        println!(
            "baseline failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        return ExitCode::FAILURE;
    }
    // Lines: `<name> <count> <seconds> [TIMEOUT]`.
    let mut theirs: BTreeMap<&str, (u64, f64, bool)> = BTreeMap::new();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 3 {
            let (Ok(n), Ok(s)) = (f[1].parse(), f[2].parse()) else {
                continue;
            };
            theirs.insert(f[0], (n, s, f.get(3) == Some(&"TIMEOUT")));
        }
    }

    println!();
    println!(
        "{:<22} {:>10} {:>10} {:>12} {:>10} {:>9}",
        "pattern", "ours", "ours s", "networkx", "nx s", "ratio"
    );
    let mut ok = true;
    for kind in PatternKind::ALL {
        let name = match kind {
            PatternKind::SingleHop => "single",
            PatternKind::ChainedMultiHop => "chain",
            PatternKind::StarShaped => "star",
            PatternKind::InvertedStarShaped => "inverted_star",
        };
        let (n, s) = ours[&kind];
        let Some(&(tn, ts, timed_out)) = theirs.get(name) else {
            println!("{:<22} networkx printed no line for {name}", kind.name());
            ok = false;
            continue;
        };
        let ratio = ts / s.max(1e-9);
        let note = if timed_out {
            format!(">= {ratio:.0}x (NetworkX timed out at {ts:.0} s with {tn})")
        } else {
            format!("{ratio:.1}x")
        };
        println!(
            "{:<22} {:>10} {:>10.4} {:>12} {:>10.3} {:>9}",
            kind.name(),
            n,
            s,
            if timed_out {
                "timeout".to_string()
            } else {
                tn.to_string()
            },
            ts,
            note
        );
        if ratio < TARGET_RATIO {
            println!("  FAIL: under {TARGET_RATIO}x");
            ok = false;
        }
        let must_match = matches!(
            kind,
            PatternKind::StarShaped | PatternKind::InvertedStarShaped
        );
        if must_match && n != tn {
            println!("  FAIL: count {n} differs from the script's {tn}");
            ok = false;
        }
        if kind == PatternKind::ChainedMultiHop && !timed_out && tn != walks_dig {
            println!("  note: the script's {tn} chains differ from the walk count {walks_dig}");
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
