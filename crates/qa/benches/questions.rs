//! The `questions` stage's local work on a RARE-sized input (issue 14's budget: under 10 s and
//! 1 GB on this machine).
//!
//! `cargo bench -p noisebench-qa --bench questions` generates a synthetic corpus (40,000 chunks
//! of about 120 words, 100,000 grounded triplets, 60,000 pattern groups of the four kinds),
//! then times what the stage does besides calling the model: preparing every prompt input
//! (generic-pivot check included), answering with the offline rules, the text checks, the
//! entity -> chunks distractor index and its check over all 40,000 chunks, the near-duplicate
//! pass (hashed n-gram embeddings, as the offline backend gives) and the splits. It prints each
//! phase and the peak resident memory, and exits non-zero over 10 s or 1 GB. Plain `main`.

use std::process::ExitCode;
use std::time::Instant;

use noisebench_core::{Chunk, Drops, Pattern, Report, Triplet, stable_id};
use noisebench_llm::Task;
use noisebench_qa::QuestionsConfig;
use noisebench_qa::SplitsConfig;
use noisebench_qa::assign;
use noisebench_qa::{Corpus, Prompt, assemble, dedupe, prepare};
use noisebench_qa::{QaMulti, QaSingle};

const CHUNKS: usize = 40_000;
const TRIPLETS: usize = 100_000;
const GROUPS: usize = 60_000;
const BUDGET_S: f64 = 10.0;
const BUDGET_BYTES: u64 = 1 << 30;

/// A tiny deterministic generator (xorshift), so the corpus is the same every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const FILLER: &[&str] = &[
    "the",
    "company",
    "reported",
    "higher",
    "margins",
    "during",
    "fiscal",
    "year",
    "while",
    "operating",
    "costs",
    "declined",
    "as",
    "demand",
    "for",
    "services",
    "grew",
    "in",
    "several",
    "regions",
    "and",
    "management",
    "expects",
    "further",
    "growth",
];
const SYLLABLES: &[&str] = &[
    "nor", "ka", "bel", "tri", "vos", "mar", "den", "lo", "quin", "sar", "tel", "ro", "ve", "dan",
];

fn name(rng: &mut Rng) -> String {
    let word = |rng: &mut Rng| {
        let mut w = String::new();
        for _ in 0..2 + rng.below(2) {
            w.push_str(SYLLABLES[rng.below(SYLLABLES.len())]);
        }
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    format!("{} {}", word(rng), word(rng))
}

/// Entities, chunks holding 2-3 facts each amid filler, and one triplet per fact.
fn corpus(rng: &mut Rng) -> (Vec<String>, Vec<Chunk>, Vec<Triplet>) {
    let entities: Vec<String> = (0..30_000).map(|_| name(rng)).collect();
    let mut chunks = Vec::with_capacity(CHUNKS);
    let mut triplets = Vec::with_capacity(TRIPLETS);
    for c in 0..CHUNKS {
        let id = format!("chunk_{c:06}");
        let facts = if triplets.len() + 3 <= TRIPLETS && c % 2 == 0 {
            3
        } else {
            2
        };
        let mut text = String::new();
        for _ in 0..facts {
            if triplets.len() >= TRIPLETS {
                break;
            }
            let (h, t) = (
                &entities[rng.below(entities.len())],
                &entities[rng.below(entities.len())],
            );
            let sentence = format!("{h} acquired {t} in {}.", 2000 + rng.below(25));
            for _ in 0..40 {
                text.push_str(FILLER[rng.below(FILLER.len())]);
                text.push(' ');
            }
            text.push_str(&sentence);
            text.push(' ');
            triplets.push(Triplet {
                id: format!("triplet_{:06}", triplets.len()),
                report_id: format!("report_{}", c / 200),
                chunk_id: id.clone(),
                entity_1: h.clone(),
                relation: "acquired".into(),
                entity_2: t.clone(),
                source_sentence: sentence,
                provenance: "bench".into(),
            });
        }
        chunks.push(Chunk {
            id,
            report_id: format!("report_{}", c / 200),
            index: (c % 200) as i64,
            text,
            ..Chunk::default()
        });
    }
    (entities, chunks, triplets)
}

/// Pattern groups of the four kinds over random triplets from different chunks; the pivot is
/// rewritten into the triplets so the shapes hold (chain: t1's tail is t2's head; star: one
/// head; inverted star: one tail).
fn patterns(rng: &mut Rng, triplets: &mut [Triplet]) -> Vec<Pattern> {
    let kinds = [
        "single_hop",
        "chained_multi_hop",
        "star_shaped",
        "inverted_star_shaped",
    ];
    let mut out = Vec::with_capacity(GROUPS);
    for g in 0..GROUPS {
        let kind = kinds[g % 4];
        let n = if kind == "single_hop" { 1 } else { 2 };
        let picked: Vec<usize> = (0..n).map(|_| rng.below(triplets.len())).collect();
        let pivot = match kind {
            "chained_multi_hop" => triplets[picked[0]].entity_2.clone(),
            "star_shaped" => triplets[picked[0]].entity_1.clone(),
            "inverted_star_shaped" => triplets[picked[0]].entity_2.clone(),
            _ => String::new(),
        };
        if n == 2 {
            let t = &mut triplets[picked[1]];
            match kind {
                "chained_multi_hop" => t.entity_1 = pivot.clone(),
                "star_shaped" => t.entity_1 = pivot.clone(),
                _ => t.entity_2 = pivot.clone(),
            }
        }
        let ids: Vec<String> = picked.iter().map(|&i| triplets[i].id.clone()).collect();
        out.push(Pattern {
            id: stable_id("pattern", &[kind, &ids.join(",")]),
            pattern: kind.into(),
            chunk_ids: picked
                .iter()
                .map(|&i| triplets[i].chunk_id.clone())
                .collect(),
            triplet_ids: ids,
            pivot_entities: if pivot.is_empty() {
                vec![]
            } else {
                vec![pivot]
            },
            ..Pattern::default()
        });
    }
    out
}

fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let t = Instant::now();
    let (_, chunks, mut triplets) = corpus(&mut rng);
    let groups = patterns(&mut rng, &mut triplets);
    let reports: Vec<Report> = (0..=CHUNKS / 200)
        .map(|r| Report {
            id: format!("report_{r}"),
            domain: "finance".into(),
            metadata: [("company".to_string(), format!("Company {r}"))].into(),
            ..Report::default()
        })
        .collect();
    println!(
        "generated {} chunks, {} triplets, {} pattern groups in {:.2} s",
        chunks.len(),
        triplets.len(),
        groups.len(),
        t.elapsed().as_secs_f64()
    );

    let config = QuestionsConfig::default();
    let start = Instant::now();
    let mut drops = Drops::new("questions");
    let corpus_index = Corpus::new(&triplets, &chunks, &reports);
    let prepared = prepare(&groups, &corpus_index, &config, &mut drops);
    let t_prepare = start.elapsed().as_secs_f64();

    let t0 = Instant::now();
    let outputs: Vec<_> = prepared
        .iter()
        .map(|p| match p.prompt.as_ref() {
            Some(Prompt::Single(x)) => QaSingle::offline(x),
            Some(Prompt::Multi(x)) => QaMulti::offline(x),
            None => unreachable!("prepare gives every pattern its prompt"),
        })
        .collect();
    let answers: Vec<_> = outputs
        .iter()
        .map(|o| Some((o, "offline".to_string())))
        .collect();
    let t_answer = t0.elapsed().as_secs_f64();

    let t0 = Instant::now();
    let passed = assemble(&prepared, &answers, &chunks, &config.limits(), &mut drops);
    let t_checks = t0.elapsed().as_secs_f64();

    let t0 = Instant::now();
    let vectors: Vec<Vec<f32>> = passed
        .iter()
        .map(|q| noisebench_llm::embed::hashed(&q.question, 384))
        .collect();
    let kept = dedupe(
        passed,
        vectors,
        config.near_duplicate_similarity,
        &mut drops,
    );
    let t_dedupe = t0.elapsed().as_secs_f64();

    let t0 = Instant::now();
    let splits = assign(&SplitsConfig::default(), &kept);
    let t_splits = t0.elapsed().as_secs_f64();
    let total = start.elapsed().as_secs_f64();
    let peak = peak_rss_bytes();

    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    for d in drops.into_records() {
        *reasons.entry(d.reason).or_default() += 1;
    }
    println!("| phase | seconds |\n|---|---:|");
    for (phase, s) in [
        ("prepare (inputs, generic pivots)", t_prepare),
        (
            "offline answers (not part of the budget's subject, shown)",
            t_answer,
        ),
        ("text checks + distractor index + one-chunk check", t_checks),
        ("near duplicates (hashed embeddings)", t_dedupe),
        ("splits", t_splits),
        ("total", total),
    ] {
        println!("| {phase} | {s:.3} |");
    }
    println!(
        "kept {} questions, {} splits; drops: {reasons:?}; peak RSS {:.0} MB (whole process, corpus included)",
        kept.len(),
        splits.len(),
        peak as f64 / 1e6
    );
    if total > BUDGET_S || peak > BUDGET_BYTES {
        eprintln!("over budget: {total:.2} s (max {BUDGET_S}), {peak} bytes (max {BUDGET_BYTES})");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
