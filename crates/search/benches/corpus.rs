//! The `corpus` search backend at 100,000 documents against Python's `rank_bm25`, side by side
//! in one run.
//!
//! `cargo bench -p noisebench-search --bench corpus` generates a seeded corpus of 100,000
//! documents (a title of 4-9 words and a text of 150-400 words drawn from a Zipf(1.0)
//! vocabulary of 50,000 pseudo-words, a quarter of the words English stopwords, sentences ended
//! by full stops) written as JSON Lines, and 2,000 queries of 5-10 words, each drawn from one
//! document's words as the claims track's queries are. Then, each in a fresh process so each
//! peak memory is its own:
//!
//! - ours: `CorpusIndex::open_or_build` on the JSON Lines file (fingerprint, read, index with
//!   tantivy BM25, exactly what the `corpus` backend does on its first run), then every query for
//!   its top 10 through `CorpusIndex::search` on one thread, one query at a time;
//! - theirs: `rank_bm25_corpus.py` (beside this file): the same file read and analysed the way
//!   our index analyses text, `BM25Okapi` built over title and text, every query's top 10.
//!
//! It prints documents/s and MB/s (of the JSON Lines file) of indexing, queries/s, the peak
//! resident memory of each process (VmHWM, after indexing and at the end), our index's size on
//! disk, and the ratios (ours/theirs). Exits non-zero when ours is slower than `rank_bm25` at
//! indexing or at querying, or when the baseline cannot run.
//!
//! `NOISEBENCH_PYTHON` names the interpreter (default: `.venv-bench/bin/python3` at the
//! repository root if present, else `python3`; it needs `rank_bm25`, `snowballstemmer` and
//! `numpy`: `just bench` installs them); `NOISEBENCH_BENCH_SCALE` a fraction of the documents
//! (default 1.0); `NOISEBENCH_BENCH_QUERIES` the queries (default 2,000). A baseline that cannot
//! run fails the bench unless `NOISEBENCH_BENCH_SKIP_BASELINE=1` asks to skip it. Plain `main`
//! with `std::time`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use noisebench_search::CorpusColumns;
use noisebench_search::backends::corpus::CorpusIndex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DOCUMENTS: usize = 100_000;
const QUERIES: usize = 2_000;
const VOCABULARY: usize = 50_000;
const K: usize = 10;
/// Set (to the bench folder) in the child process that runs our side.
const CHILD: &str = "NOISEBENCH_CORPUS_BENCH_CHILD";

const STOPWORDS: [&str; 12] = [
    "the", "of", "and", "in", "to", "a", "is", "for", "that", "with", "by", "on",
];

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

fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Pronounceable pseudo-words, distinct, from consonant-vowel syllables.
fn vocabulary(n: usize, rng: &mut ChaCha8Rng) -> Vec<String> {
    const C: &[u8] = b"bcdfghklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let syllables = rng.random_range(2..=4);
        let mut w = String::new();
        for _ in 0..syllables {
            w.push(C[rng.random_range(0..C.len())] as char);
            w.push(V[rng.random_range(0..V.len())] as char);
        }
        if rng.random_bool(0.3) {
            w.push(C[rng.random_range(0..C.len())] as char);
        }
        if seen.insert(w.clone()) {
            out.push(w);
        }
    }
    out
}

/// Zipf(1.0) sampler over `n` ranks by its cumulative table.
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Self {
        let mut acc = 0.0;
        let cumulative = (1..=n)
            .map(|r| {
                acc += 1.0 / r as f64;
                acc
            })
            .collect();
        Self { cumulative }
    }
    fn sample(&self, rng: &mut ChaCha8Rng) -> usize {
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let x = rng.random_range(0.0..total);
        self.cumulative.partition_point(|c| *c < x)
    }
}

/// Writes the corpus (`{"id", "title", "text"}` a line), the queries (`{"id", "text"}`) and
/// each query's source document (`sources.txt`, one id a line, in query order); returns the
/// number of documents and words.
fn generate(dir: &Path, documents: usize, queries: usize) -> (usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(48);
    let vocab = vocabulary(VOCABULARY, &mut rng);
    let zipf = Zipf::new(vocab.len());
    let mut corpus =
        std::io::BufWriter::new(std::fs::File::create(dir.join("corpus.jsonl")).expect("corpus"));
    let mut query_file =
        std::io::BufWriter::new(std::fs::File::create(dir.join("queries.jsonl")).expect("queries"));
    // Which documents the queries are drawn from: spread evenly, seeded.
    let mut targets: Vec<usize> = (0..queries)
        .map(|_| rng.random_range(0..documents))
        .collect();
    targets.sort_unstable();
    let sources: Vec<String> = targets.iter().map(|t| format!("doc-{t:06}")).collect();
    std::fs::write(dir.join("sources.txt"), sources.join("\n")).expect("sources");
    let mut next_target = 0;
    let mut words_total = 0;
    for i in 0..documents {
        let title: Vec<&str> = (0..rng.random_range(4..=9))
            .map(|_| vocab[zipf.sample(&mut rng)].as_str())
            .collect();
        let len = rng.random_range(150..=400);
        let mut text = String::with_capacity(len * 8);
        let mut content = Vec::new();
        for j in 0..len {
            if j > 0 {
                text.push(' ');
            }
            if rng.random_bool(0.25) {
                text.push_str(STOPWORDS[rng.random_range(0..STOPWORDS.len())]);
            } else {
                let w = zipf.sample(&mut rng);
                content.push(w);
                text.push_str(&vocab[w]);
            }
            if rng.random_bool(0.06) {
                text.push('.');
            }
        }
        words_total += len + title.len();
        let id = format!("doc-{i:06}");
        serde_json::to_writer(
            &mut corpus,
            &serde_json::json!({"id": id, "title": title.join(" "), "text": text}),
        )
        .expect("write corpus");
        corpus.write_all(b"\n").expect("write corpus");
        while next_target < targets.len() && targets[next_target] == i {
            let n = rng.random_range(5..=10);
            let words: Vec<&str> = (0..n)
                .map(|_| vocab[content[rng.random_range(0..content.len())]].as_str())
                .collect();
            serde_json::to_writer(
                &mut query_file,
                &serde_json::json!({"id": format!("q{next_target:05}"), "text": words.join(" ")}),
            )
            .expect("write queries");
            query_file.write_all(b"\n").expect("write queries");
            next_target += 1;
        }
    }
    corpus.flush().expect("write corpus");
    query_file.flush().expect("write queries");
    (documents, words_total)
}

/// This process's peak resident memory in KiB (`VmHWM` of /proc/self/status; 0 where there is
/// none).
fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Side {
    build_s: f64,
    query_s: f64,
    queries: usize,
    documents: u64,
    hwm_after_build_kib: u64,
    hwm_kib: u64,
    index_bytes: u64,
    /// Queries whose top K held the document they were drawn from (a sanity check that both
    /// sides search the same corpus).
    found_source: usize,
}

/// Our side, in the child process: build the backend's index, run every query.
fn child(dir: &Path) {
    let index_root = dir.join("index");
    if index_root.exists() {
        std::fs::remove_dir_all(&index_root).expect("clear index");
    }
    let t = Instant::now();
    let index = CorpusIndex::open_or_build(
        &dir.join("corpus.jsonl"),
        &CorpusColumns::default(),
        &index_root,
    )
    .expect("corpus index");
    let build_s = t.elapsed().as_secs_f64();
    assert!(index.built, "a fresh index root: the index is built");
    let hwm_after_build_kib = vm_hwm_kib();
    let queries = read_queries(&dir.join("queries.jsonl"));
    let t = Instant::now();
    let hits: Vec<Vec<String>> = queries
        .iter()
        .map(|(_, q)| {
            index
                .search(q, K, 1.0, None, None)
                .expect("search")
                .into_iter()
                .map(|h| h.id)
                .collect()
        })
        .collect();
    let query_s = t.elapsed().as_secs_f64();
    let found_source = source_found(dir, &queries, &hits);
    let side = Side {
        build_s,
        query_s,
        queries: queries.len(),
        documents: index.documents,
        hwm_after_build_kib,
        hwm_kib: vm_hwm_kib(),
        index_bytes: dir_bytes(&index.dir),
        found_source,
    };
    println!("{}", serde_json::to_string(&side).expect("json"));
}

fn read_queries(path: &Path) -> Vec<(String, String)> {
    let f = std::io::BufReader::new(std::fs::File::open(path).expect("queries"));
    f.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.expect("line")).expect("json");
            (
                v["id"].as_str().unwrap_or_default().to_string(),
                v["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Queries whose hits contain their source document (`sources.txt`: one document id a line,
/// in query order).
fn source_found(dir: &Path, queries: &[(String, String)], hits: &[Vec<String>]) -> usize {
    let sources = std::fs::read_to_string(dir.join("sources.txt")).unwrap_or_default();
    sources
        .lines()
        .zip(queries.iter().zip(hits))
        .filter(|(s, (_, h))| h.iter().any(|id| id == s))
        .count()
}

fn run_side(mut command: Command, name: &str) -> Result<Side, String> {
    match command.output() {
        Ok(o) if o.status.success() => {
            let out = String::from_utf8_lossy(&o.stdout);
            let line = out.lines().last().unwrap_or("");
            serde_json::from_str(line).map_err(|e| format!("{name}: unreadable answer: {e}"))
        }
        Ok(o) => Err(format!(
            "{name} failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn print_side(name: &str, s: &Side, file_mb: f64) {
    println!(
        "{name}: index {} documents in {:.1} s ({:.0} docs/s, {:.1} MB/s); top-{K} for {} queries in {:.2} s ({:.1} queries/s); peak memory {:.0} MiB after indexing, {:.0} MiB at the end{}; source document in the top {K} for {} of {} queries",
        s.documents,
        s.build_s,
        s.documents as f64 / s.build_s,
        file_mb / s.build_s,
        s.queries,
        s.query_s,
        s.queries as f64 / s.query_s,
        mib(s.hwm_after_build_kib),
        mib(s.hwm_kib),
        if s.index_bytes > 0 {
            format!(
                "; index {:.0} MiB on disk",
                s.index_bytes as f64 / 1048576.0
            )
        } else {
            String::new()
        },
        s.found_source,
        s.queries,
    );
}

fn main() -> ExitCode {
    if let Ok(dir) = std::env::var(CHILD) {
        child(Path::new(&dir));
        return ExitCode::SUCCESS;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scale: f64 = env_number("NOISEBENCH_BENCH_SCALE", 1.0);
    let queries: usize = env_number("NOISEBENCH_BENCH_QUERIES", QUERIES).max(1);
    let documents = ((DOCUMENTS as f64 * scale) as usize).max(100);
    let dir = root.join("target/bench-corpus");
    std::fs::create_dir_all(&dir).expect("bench dir");

    let t = Instant::now();
    let (documents, words) = generate(&dir, documents, queries);
    let file_bytes = std::fs::metadata(dir.join("corpus.jsonl"))
        .map(|m| m.len())
        .unwrap_or(0);
    let file_mb = file_bytes as f64 / 1e6;
    println!(
        "corpus: {documents} documents ({:.1}M words, {file_mb:.0} MB of JSON Lines), {queries} queries of 5-10 words, generated in {:.1} s",
        words as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let mut failed = false;
    let me = std::env::current_exe().expect("own path");
    let mut ours = Command::new(me);
    ours.env(CHILD, &dir);
    let ours = match run_side(ours, "ours") {
        Ok(s) => s,
        Err(e) => {
            println!("FAIL: {e}");
            return ExitCode::FAILURE;
        }
    };
    print_side(
        "ours (corpus backend, tantivy BM25, 1 thread)",
        &ours,
        file_mb,
    );
    let _ = std::fs::remove_dir_all(dir.join("index"));

    let py = python(&root);
    let mut theirs = Command::new(&py);
    theirs
        .arg(root.join("crates/search/benches/rank_bm25_corpus.py"))
        .arg(dir.join("corpus.jsonl"))
        .arg(dir.join("queries.jsonl"))
        .arg(dir.join("sources.txt"))
        .arg(K.to_string());
    let theirs = match run_side(theirs, &format!("rank_bm25 baseline ({py})")) {
        Ok(s) => s,
        Err(e) => {
            println!(
                "{e} (pip install rank_bm25 snowballstemmer numpy; NOISEBENCH_BENCH_SKIP_BASELINE=1 skips the baseline)"
            );
            let skip = std::env::var("NOISEBENCH_BENCH_SKIP_BASELINE").is_ok_and(|v| v == "1");
            return if skip {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
    };
    print_side("rank_bm25 (BM25Okapi, 1 thread)", &theirs, file_mb);
    let index_ratio = theirs.build_s / ours.build_s;
    let query_ratio =
        (ours.queries as f64 / ours.query_s) / (theirs.queries as f64 / theirs.query_s);
    println!(
        "ratio ours/theirs: indexing {index_ratio:.1}x docs/s, querying {query_ratio:.0}x queries/s, peak memory {:.2}x",
        ours.hwm_kib as f64 / theirs.hwm_kib.max(1) as f64
    );
    if index_ratio < 1.0 || query_ratio < 1.0 {
        println!("FAIL: slower than rank_bm25");
        failed = true;
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
