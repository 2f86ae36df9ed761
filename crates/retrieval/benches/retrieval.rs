//! BM25 retrieval against Python's `rank_bm25`, and the pruned search against scoring every
//! posting, side by side in one run.
//!
//! `cargo bench -p noisebench-retrieval --bench retrieval` generates a RARE-sized synthetic corpus
//! (40K chunks of 150-600 words drawn from a Zipf vocabulary with English stopwords between)
//! and 288K queries (48K questions x 6: the question, then a typo, a swapped word, a reordering,
//! an irrelevant addition and a dropped word), indexes the chunks with the retrieval stage's
//! BM25 (`noisebench-index`, tantivy), runs every query for its top 10 on every core, then runs
//! `rank_bm25_baseline.py` (BM25Okapi) on the same corpus for a sample of the queries. It prints
//! seconds and queries/s of both, their ratio, and how many sampled queries got the same top-10
//! ids (and where the others part) three times: against stock BM25Okapi, against it with
//! Lucene's idf (tantivy's), and with tantivy's one-byte document lengths too, so each cause of
//! difference is measured apart. Before the Python side, it times every query of half the
//! corpus the same way (the stage's search, half to whole: its growth per doubling), then the
//! first 20,000 queries on one thread at half the corpus and at the whole (three rounds in turn,
//! the fastest kept), exhaustive (every posting of each query's terms scored) and pruned
//! (block-max MaxScore, what the stage runs); it prints microseconds per query, the ratio, and each one's
//! growth from the half to the whole (per query, and for a run whose queries double with the
//! chunks), and checks that both give every query the same top 10, bit for bit. Exits non-zero
//! when the two differ, when all queries take 60 s or more, the queries/s ratio to `rank_bm25`
//! is under 50x, or under 95% of sampled queries agree with the aligned run.
//!
//! `NOISEBENCH_PYTHON` names the interpreter (default: `.venv-bench/bin/python3` at the
//! repository root if present, else `python3`; it needs `rank_bm25`, `snowballstemmer` and
//! `numpy`); `NOISEBENCH_BENCH_BM25_SAMPLE` the sampled queries (default 300);
//! `NOISEBENCH_BENCH_SCALE` a fraction of the corpus and queries (default 1.0). A baseline
//! that cannot run fails the bench unless `NOISEBENCH_BENCH_SKIP_BASELINE=1` asks to skip it.
//! Plain `main` with `std::time`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use noisebench_core::default_threads;
use noisebench_retrieval::Bm25Chunks;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CHUNKS: usize = 40_000;
const QUESTIONS: usize = 48_000;
const K: usize = 10;
const MAX_SECONDS: f64 = 60.0;
const TARGET_RATIO: f64 = 50.0;
const TARGET_AGREEMENT: f64 = 0.95;

const STOPWORDS: [&str; 12] = [
    "the", "of", "and", "in", "to", "a", "is", "for", "that", "with", "by", "on",
];
const QUESTION_WORDS: [&str; 6] = ["what", "which", "how", "did", "does", "who"];

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

struct Corpus {
    chunks: Vec<(String, String)>,
    queries: Vec<(String, String)>,
}

fn generate(scale: f64) -> Corpus {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let vocab = vocabulary(30_000, &mut rng);
    let zipf = Zipf::new(vocab.len());
    let n_chunks = ((CHUNKS as f64 * scale) as usize).max(100);
    let mut chunks = Vec::with_capacity(n_chunks);
    let mut words_of: Vec<Vec<usize>> = Vec::with_capacity(n_chunks);
    for i in 0..n_chunks {
        let len = rng.random_range(150..=600);
        let mut text = String::new();
        let mut ws = Vec::new();
        for j in 0..len {
            if j > 0 {
                text.push(' ');
            }
            if rng.random_bool(0.25) {
                text.push_str(STOPWORDS[rng.random_range(0..STOPWORDS.len())]);
            } else {
                let w = zipf.sample(&mut rng);
                ws.push(w);
                text.push_str(&vocab[w]);
            }
            if rng.random_bool(0.06) {
                text.push('.');
            }
        }
        chunks.push((format!("c{i:06}"), text));
        words_of.push(ws);
    }
    let n_questions = ((QUESTIONS as f64 * scale) as usize).max(10);
    let mut queries = Vec::with_capacity(n_questions * 6);
    for i in 0..n_questions {
        let target = rng.random_range(0..n_chunks);
        let ws = &words_of[target];
        let n = rng.random_range(4..=8);
        let mut words: Vec<String> = (0..n)
            .map(|_| vocab[ws[rng.random_range(0..ws.len())]].clone())
            .collect();
        words.insert(
            0,
            QUESTION_WORDS[rng.random_range(0..QUESTION_WORDS.len())].into(),
        );
        words.insert(2, "the".into());
        let join = |w: &[String]| w.join(" ") + "?";
        let original = join(&words);
        // Typo: two neighbouring letters of one content word swapped.
        let mut typo = words.clone();
        let at = rng.random_range(3..typo.len().max(4)).min(typo.len() - 1);
        let mut letters: Vec<char> = typo[at].chars().collect();
        if letters.len() > 2 {
            letters.swap(1, 2);
        }
        typo[at] = letters.into_iter().collect();
        // A content word swapped for another word of the vocabulary.
        let mut swapped = words.clone();
        swapped[1] = vocab[zipf.sample(&mut rng)].clone();
        // Reordered.
        let mut reordered = words.clone();
        reordered.reverse();
        // An irrelevant addition.
        let mut irrelevant = words.clone();
        for _ in 0..3 {
            irrelevant.push(vocab[zipf.sample(&mut rng)].clone());
        }
        // A word dropped.
        let mut dropped = words.clone();
        dropped.remove(1);
        for (j, q) in [
            original,
            join(&typo),
            join(&swapped),
            join(&reordered),
            join(&irrelevant),
            join(&dropped),
        ]
        .into_iter()
        .enumerate()
        {
            queries.push((format!("q{i:06}_{j}"), q));
        }
    }
    Corpus { chunks, queries }
}

fn write_jsonl(path: &Path, rows: &[(String, String)]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create jsonl"));
    for (id, text) in rows {
        serde_json::to_writer(&mut f, &serde_json::json!({"id": id, "text": text}))
            .expect("write jsonl");
        f.write_all(b"\n").expect("write jsonl");
    }
}

#[derive(serde::Deserialize)]
struct Baseline {
    build_s: f64,
    query_s: f64,
    queries: usize,
    results: BTreeMap<String, Vec<(String, f64)>>,
    results_lucene_idf: BTreeMap<String, Vec<(String, f64)>>,
    results_lucene_idf_one_byte_lengths: BTreeMap<String, Vec<(String, f64)>>,
}

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scale: f64 = std::env::var("NOISEBENCH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let sample: usize = std::env::var("NOISEBENCH_BENCH_BM25_SAMPLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);

    let t = Instant::now();
    let corpus = generate(scale);
    let words: usize = corpus
        .chunks
        .iter()
        .map(|(_, t)| t.split(' ').count())
        .sum();
    println!(
        "corpus: {} chunks ({:.1}M words), {} queries, generated in {:.1} s",
        corpus.chunks.len(),
        words as f64 / 1e6,
        corpus.queries.len(),
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let index = Bm25Chunks::build(
        corpus
            .chunks
            .iter()
            .map(|(id, text)| (id.as_str(), text.as_str())),
    )
    .expect("index");
    let build_s = t.elapsed().as_secs_f64();
    let texts: Vec<&str> = corpus.queries.iter().map(|(_, q)| q.as_str()).collect();
    let threads = default_threads();
    let t = Instant::now();
    let ours = index.search_all(&texts, &[], K, threads, &|| {});
    let query_s = t.elapsed().as_secs_f64();
    let ours_qps = texts.len() as f64 / query_s;
    println!(
        "ours (tantivy BM25, {threads} threads): index {build_s:.1} s; top-{K} for {} queries in {query_s:.1} s ({ours_qps:.0} queries/s)",
        texts.len()
    );
    let distinct = Bm25Chunks::distinct_queries(&texts);
    println!(
        "  {distinct} distinct analysed queries of {} (a reordered query is the same term set, searched once)",
        texts.len()
    );
    let probe = &texts[..texts.len().min(30_000)];
    let t1 = Instant::now();
    for q in probe {
        let _ = index.search(q, K);
    }
    let one = probe.len() as f64 / t1.elapsed().as_secs_f64();
    println!(
        "  one thread, no dedupe: {one:.0} queries/s on {} queries",
        probe.len()
    );
    let mut failed = false;
    // Pruned against exhaustive, at half the size and at this size.
    let half_corpus = generate(scale / 2.0);
    // The stage's whole search at half the size: every query, every core.
    let half_index = Bm25Chunks::build(
        half_corpus
            .chunks
            .iter()
            .map(|(id, text)| (id.as_str(), text.as_str())),
    )
    .expect("index");
    let half_texts: Vec<&str> = half_corpus
        .queries
        .iter()
        .map(|(_, q)| q.as_str())
        .collect();
    let t = Instant::now();
    let _ = half_index.search_all(&half_texts, &[], K, threads, &|| {});
    let half_s = t.elapsed().as_secs_f64();
    drop(half_index);
    println!(
        "  at half the size ({} chunks, {} queries): {half_s:.1} s; {:.2}x from half to whole",
        half_corpus.chunks.len(),
        half_texts.len(),
        query_s / half_s
    );
    let half = Prepared::new(&half_corpus);
    drop(half_texts);
    drop(half_corpus);
    let full = Prepared::new(&corpus);
    match side_by_side(&[half, full]) {
        Some(sizes) => {
            let (h, f) = (&sizes[0], &sizes[1]);
            // Per doubling of chunks and queries together: twice the queries, each costing
            // its per-query growth.
            let per = |name: &str, a: f64, b: f64| {
                println!(
                    "  {name}: per query {:.2}x, whole run (queries doubled too) {:.2}x per doubling",
                    b / a,
                    2.0 * b / a
                )
            };
            println!("growth from {} to {} chunks:", h.chunks, f.chunks);
            per("exhaustive", h.exhaustive, f.exhaustive);
            per("pruned (block-max)", h.pruned, f.pruned);
        }
        None => failed = true,
    }
    if query_s >= MAX_SECONDS {
        println!("FAIL: all queries took {query_s:.1} s, not under {MAX_SECONDS} s");
        failed = true;
    }

    // The Python side, on a sample spread over the query set.
    let dir = root.join("target/bench-retrieval");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let corpus_path = dir.join("corpus.jsonl");
    let queries_path = dir.join("queries.jsonl");
    let sample_path = dir.join("sample.txt");
    write_jsonl(&corpus_path, &corpus.chunks);
    // Spread over the set and over the six kinds of query (a plain stride of a multiple of 6
    // would only ever pick originals).
    let step = (corpus.queries.len() / sample.max(1)).max(1);
    let sampled: Vec<usize> = (0..sample)
        .map(|i| i * step + i % 6)
        .filter(|&i| i < corpus.queries.len())
        .collect();
    let sampled_queries: Vec<(String, String)> =
        sampled.iter().map(|&i| corpus.queries[i].clone()).collect();
    write_jsonl(&queries_path, &sampled_queries);
    std::fs::write(
        &sample_path,
        sampled_queries
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .expect("sample");
    let script = root.join("crates/retrieval/benches/rank_bm25_baseline.py");
    let py = python(&root);
    let t = Instant::now();
    let output = Command::new(&py)
        .arg(&script)
        .arg(&corpus_path)
        .arg(&queries_path)
        .arg(&sample_path)
        .arg(K.to_string())
        .output();
    let output = match output {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            println!(
                "rank_bm25 baseline cannot run: {py} failed: {} (pip install rank_bm25 \
                 snowballstemmer numpy; NOISEBENCH_BENCH_SKIP_BASELINE=1 skips the baseline)",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            return baseline_missing(failed);
        }
        Err(e) => {
            println!(
                "rank_bm25 baseline cannot run: {py}: {e} (NOISEBENCH_BENCH_SKIP_BASELINE=1 \
                 skips the baseline)"
            );
            return baseline_missing(failed);
        }
    };
    let base: Baseline = serde_json::from_slice(&output.stdout).expect("baseline json");
    let base_qps = base.queries as f64 / base.query_s;
    println!(
        "rank_bm25 (BM25Okapi, 1 thread): index {:.1} s; top-{K} for {} sampled queries in {:.1} s ({base_qps:.1} queries/s); whole run {:.1} s",
        base.build_s,
        base.queries,
        base.query_s,
        t.elapsed().as_secs_f64()
    );
    let ratio = ours_qps / base_qps;
    println!(
        "ratio: {ratio:.0}x queries/s (per core: {:.0}x)",
        ratio / threads as f64
    );
    if ratio < TARGET_RATIO {
        println!("FAIL: under {TARGET_RATIO}x");
        failed = true;
    }

    // Agreement on the sample: with stock rank_bm25, then with Lucene's idf put into it, then
    // also with tantivy's one-byte document lengths, so each difference is named.
    let variants = [
        ("rank_bm25 BM25Okapi (stock idf)", &base.results),
        ("rank_bm25 with Lucene idf", &base.results_lucene_idf),
        (
            "rank_bm25 with Lucene idf and one-byte lengths",
            &base.results_lucene_idf_one_byte_lengths,
        ),
    ];
    let shares: Vec<f64> = variants
        .iter()
        .map(|(name, results)| agreement(&corpus, &ours, &sampled, results, name))
        .collect();
    let gate = shares.last().copied().unwrap_or(0.0);
    if gate < TARGET_AGREEMENT {
        println!(
            "FAIL: under {:.0}% agreement once idf and lengths are aligned",
            TARGET_AGREEMENT * 100.0
        );
        failed = true;
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Queries timed per size by [`side_by_side`] (one thread each way).
const SIDE_BY_SIDE_QUERIES: usize = 20_000;

/// Rounds of [`side_by_side`]: the sizes and ways take turns, the fastest round of each kept
/// (the machine is shared).
const ROUNDS: usize = 3;

/// One corpus's scored postings and its first [`SIDE_BY_SIDE_QUERIES`] queries' terms.
struct Prepared {
    impacts: noisebench_index::Impacts,
    keys: Vec<BTreeSet<String>>,
}

impl Prepared {
    fn new(corpus: &Corpus) -> Self {
        use noisebench_index::bm25::analyse;
        use noisebench_index::{Impacts, terms};
        let ids: Vec<String> = corpus.chunks.iter().map(|(id, _)| id.clone()).collect();
        let texts: Vec<&str> = corpus.chunks.iter().map(|(_, t)| t.as_str()).collect();
        let analysed = noisebench_core::parallel_map(&texts, default_threads(), |t| analyse(t));
        let impacts = Impacts::from_analysed(ids, &analysed);
        let keys = corpus
            .queries
            .iter()
            .take(SIDE_BY_SIDE_QUERIES)
            .map(|(_, q)| terms(q))
            .collect();
        Prepared { impacts, keys }
    }
}

/// Seconds per query of each way of searching, at one corpus size.
struct PerQuery {
    chunks: usize,
    exhaustive: f64,
    pruned: f64,
}

/// Each size's queries for their top 10 on one thread, exhaustive (every posting of the
/// query's terms scored into one array, every matched chunk offered to the top 10) and pruned
/// (`Impacts::search`, block-max MaxScore: what the stage runs), [`ROUNDS`] times in turn, the fastest of
/// each kept; prints microseconds per query and the ratio. `None` (and a FAIL line) when any
/// query's hits differ between them (ids, order or score bits).
fn side_by_side(sizes: &[Prepared]) -> Option<Vec<PerQuery>> {
    use noisebench_index::Scratch;
    let mut scratch = Scratch::default();
    let mut best = vec![(f64::INFINITY, f64::INFINITY); sizes.len()];
    let mut ok = true;
    for _ in 0..ROUNDS {
        for (p, best) in sizes.iter().zip(best.iter_mut()) {
            let t = Instant::now();
            let want: Vec<_> = p
                .keys
                .iter()
                .map(|q| p.impacts.search_exhaustive(q, K, &mut scratch))
                .collect();
            let exhaustive = t.elapsed().as_secs_f64() / p.keys.len() as f64;
            let t = Instant::now();
            let got: Vec<_> = p
                .keys
                .iter()
                .map(|q| p.impacts.search(q, K, &mut scratch))
                .collect();
            let pruned = t.elapsed().as_secs_f64() / p.keys.len() as f64;
            *best = (best.0.min(exhaustive), best.1.min(pruned));
            let same = got
                .iter()
                .zip(&want)
                .filter(|(g, w)| {
                    g.len() == w.len()
                        && g.iter()
                            .zip(w.iter())
                            .all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1)
                })
                .count();
            ok &= same == p.keys.len();
        }
    }
    for (p, (exhaustive, pruned)) in sizes.iter().zip(&best) {
        println!(
            "pruning, {} chunks, {} queries, top {K}, one thread (fastest of {ROUNDS}): exhaustive {:.1} us/query, pruned {:.1} us/query: {:.1}x faster",
            p.impacts.len(),
            p.keys.len(),
            exhaustive * 1e6,
            pruned * 1e6,
            exhaustive / pruned,
        );
    }
    if !ok {
        println!("FAIL: the pruned search differs from the exhaustive one");
        return None;
    }
    println!("  the same top {K} as exhaustive for every query (ids, order, score bits)");
    Some(
        sizes
            .iter()
            .zip(best)
            .map(|(p, (exhaustive, pruned))| PerQuery {
                chunks: p.impacts.len(),
                exhaustive,
                pruned,
            })
            .collect(),
    )
}

/// Share of sampled queries whose top-10 ids equal `results`', printing where the first few part.
fn agreement(
    corpus: &Corpus,
    ours: &[Result<Vec<noisebench_retrieval::Scored>, noisebench_index::bm25::IndexError>],
    sampled: &[usize],
    results: &BTreeMap<String, Vec<(String, f64)>>,
    name: &str,
) -> f64 {
    let (mut same_set, mut same_order, mut shown) = (0, 0, 0);
    let mut differ_at: BTreeMap<usize, usize> = BTreeMap::new();
    for &i in sampled {
        let (id, text) = &corpus.queries[i];
        let mine: Vec<&str> = match &ours[i] {
            Ok(h) => h
                .iter()
                .map(|s| corpus.chunks[s.chunk].0.as_str())
                .collect(),
            Err(_) => Vec::new(),
        };
        let theirs: Vec<&str> = results
            .get(id)
            .map(|v| v.iter().map(|(d, _)| d.as_str()).collect())
            .unwrap_or_default();
        let mut a = mine.clone();
        let mut b = theirs.clone();
        a.sort_unstable();
        b.sort_unstable();
        if a == b {
            same_set += 1;
            same_order += usize::from(mine == theirs);
            continue;
        }
        let first = mine
            .iter()
            .zip(&theirs)
            .position(|(x, y)| x != y)
            .map_or(mine.len().min(theirs.len()) + 1, |p| p + 1);
        *differ_at.entry(first).or_default() += 1;
        if shown < 4 {
            shown += 1;
            let only_ours: Vec<_> = mine.iter().filter(|d| !theirs.contains(d)).collect();
            let only_theirs: Vec<_> = theirs.iter().filter(|d| !mine.contains(d)).collect();
            let pos =
                |list: &[&str], d: &str| list.iter().position(|x| *x == d).map_or(0, |p| p + 1);
            println!(
                "  differs: {id} {text:?}: only ours {:?} at our ranks {:?}; only theirs {:?} at their ranks {:?}",
                only_ours,
                only_ours.iter().map(|d| pos(&mine, d)).collect::<Vec<_>>(),
                only_theirs,
                only_theirs
                    .iter()
                    .map(|d| pos(&theirs, d))
                    .collect::<Vec<_>>(),
            );
        }
    }
    let n = sampled.len().max(1) as f64;
    println!(
        "top-{K} vs {name} on {} sampled queries: same ids {same_set} ({:.1}%), same order {same_order} ({:.1}%); lists first part at rank: {differ_at:?}",
        sampled.len(),
        same_set as f64 / n * 100.0,
        same_order as f64 / n * 100.0
    );
    same_set as f64 / n
}

/// The exit status when the baseline could not run: a failure unless the user asked to skip it
/// (`NOISEBENCH_BENCH_SKIP_BASELINE=1`) and our own run passed.
fn baseline_missing(failed: bool) -> ExitCode {
    let skip = std::env::var("NOISEBENCH_BENCH_SKIP_BASELINE").is_ok_and(|v| v == "1");
    if failed || !skip {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
