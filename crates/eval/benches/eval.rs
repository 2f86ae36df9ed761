//! The evaluation's own work at the releases' sizes, with the offline backend (so what is timed is
//! ours, not a model's): RAGuard (the release's 2,648 claims, with 6 documents each: 15,888, the release has 16,331), CONF-FACT
//! (1,500 claims with 8 evidence pages each) and RARE-Met (6,000 questions, RARE's experiment
//! size, each with 4 perturbed queries, back-translated and answer-deleted chunks, over 40,000
//! chunks: 180,000 judged cells), metrics and bootstrap intervals (1,000 resamples) included.
//!
//! `cargo bench -p noisebench-eval --bench eval` prints each family's time and the peak
//! resident memory, and exits non-zero over the budgets below. `NOISEBENCH_BENCH_SCALE` (default
//! 1.0) scales every size. Plain `main`.

use std::process::ExitCode;
use std::time::Instant;

use noisebench_eval::{
    Credibility, DocLabel, DocVariant, EvalChunk, EvalClaim, EvalConfig, EvalData, EvalDocument,
    EvalQuestion, QueryVariant, evaluate,
};
use noisebench_llm::Llm;

const BUDGET_S: f64 = 180.0;
const BUDGET_BYTES: u64 = 2 << 30;

/// A tiny deterministic generator (xorshift), so the data is the same every run.
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

const WORDS: &[&str] = &[
    "tax",
    "jobs",
    "border",
    "budget",
    "senate",
    "vaccine",
    "climate",
    "wages",
    "deficit",
    "school",
    "police",
    "housing",
    "energy",
    "tariff",
    "election",
    "county",
    "revenue",
    "grant",
    "port",
    "rail",
    "water",
    "health",
    "false",
    "true",
    "hoax",
    "confirmed",
    "records",
    "show",
];

fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut out: Vec<&str> = (0..words).map(|_| WORDS[rng.below(WORDS.len())]).collect();
    out[0] = "Officials";
    format!("{}.", out.join(" "))
}

fn text(rng: &mut Rng, sentences: usize) -> String {
    (0..sentences)
        .map(|_| {
            let n = 8 + rng.below(10);
            sentence(rng, n)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn claims_data(rng: &mut Rng, claims: usize, docs_per_claim: usize, name: &str) -> EvalData {
    let mut data = EvalData {
        name: name.into(),
        ..Default::default()
    };
    let labels = [
        DocLabel::Irrelevant,
        DocLabel::Irrelevant,
        DocLabel::Irrelevant,
        DocLabel::Irrelevant,
        DocLabel::Supporting,
        DocLabel::Misleading,
    ];
    for c in 0..claims {
        let id = format!("c{c}");
        let mut docs = Vec::new();
        for d in 0..docs_per_claim {
            let doc = format!("{id}_{d}");
            data.documents.push(EvalDocument {
                id: doc.clone(),
                claim_id: Some(id.clone()),
                title: sentence(rng, 6),
                text: text(rng, 12),
                label: Some(labels[rng.below(labels.len())]),
                url: None,
                domain: Some(format!("site{}.com", rng.below(200))),
                credibility: Credibility {
                    level: Some(["high", "medium", "low"][rng.below(3)].into()),
                    score: None,
                    background: None,
                },
            });
            docs.push(doc);
        }
        data.claims.push(EvalClaim {
            id,
            text: sentence(rng, 14),
            question: None,
            verdict: rng.below(2) == 0,
            original_verdict: None,
            documents: docs,
            claim_date: None,
        });
    }
    data
}

fn rare_data(rng: &mut Rng, questions: usize, chunks: usize) -> EvalData {
    let mut data = EvalData {
        name: "rare-synthetic".into(),
        ..Default::default()
    };
    for i in 0..chunks {
        data.chunks.push(EvalChunk {
            id: format!("k{i}"),
            text: text(rng, 8),
            report_id: None,
        });
    }
    let kinds = [
        "single_hop",
        "chained_multi_hop",
        "star_shaped",
        "inverted_star_shaped",
    ];
    let domains = ["finance", "economics", "policy"];
    for q in 0..questions {
        let hops = if q % 2 == 0 { 1 } else { 2 };
        let ids: Vec<String> = (0..hops)
            .map(|_| format!("k{}", rng.below(chunks)))
            .collect();
        let question = format!(
            "What {} the {}?",
            WORDS[rng.below(20)],
            WORDS[rng.below(20)]
        );
        let answer = format!("{} {}", WORDS[rng.below(20)], WORDS[rng.below(20)]);
        data.questions.push(EvalQuestion {
            id: format!("q{q}"),
            question: question.clone(),
            answer,
            kind: kinds[q % 4].into(),
            domain: domains[q % 3].into(),
            query_perturbations: [
                "character_level",
                "word_level",
                "grammar_perturbation",
                "irrelevant_info",
            ]
            .iter()
            .map(|k| QueryVariant {
                kind: k.to_string(),
                text: format!("{question} ({k})"),
            })
            .collect(),
            document_perturbations: ids
                .iter()
                .flat_map(|id| {
                    ["back_translation", "regex_delete"].map(|k| DocVariant {
                        kind: k.into(),
                        chunk_id: id.clone(),
                        text: format!("A {k} version of chunk {id}."),
                    })
                })
                .collect(),
            answer_chunk_ids: ids,
            retrievals: vec![],
            split: None,
        });
    }
    data
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
    let scale: f64 = std::env::var("NOISEBENCH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let n = |x: usize| ((x as f64 * scale).round() as usize).max(1);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let raguard = claims_data(&mut rng, n(2648), 6, "raguard-synthetic");
    let confact = claims_data(&mut rng, n(1500), 8, "confact-synthetic");
    let rare = rare_data(&mut rng, n(6000), n(40_000));
    let llm = Llm::offline();
    let mut total = 0.0;
    for (family, data) in [
        ("raguard", &raguard),
        ("confact", &confact),
        ("rare", &rare),
    ] {
        let config = EvalConfig {
            families: vec![family.to_string()],
            ..Default::default()
        };
        let start = Instant::now();
        let e = match evaluate(data, &llm, &config) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("{family}: {err}");
                return ExitCode::FAILURE;
            }
        };
        let secs = start.elapsed().as_secs_f64();
        total += secs;
        let items: usize = e.outcomes.iter().map(|o| o.scored.len()).sum();
        let metrics: usize = e.outcomes.iter().map(|o| o.metrics.len()).sum();
        println!(
            "{family:<8} {items:>7} scored items, {metrics:>4} metrics in {secs:>7.2} s ({:.0} items/s)",
            items as f64 / secs
        );
        // The call log of the offline backend grows with every call; a long evaluation writes it
        // out, so the bench drains it like the binary does.
        drop(llm.drain_call_log());
    }
    let peak = peak_rss_bytes();
    println!(
        "total {total:.2} s, peak resident memory {:.0} MB",
        peak as f64 / 1e6
    );
    if total > BUDGET_S * scale.max(0.01) || peak > BUDGET_BYTES {
        eprintln!(
            "over budget ({BUDGET_S} s at scale 1, {} MB)",
            BUDGET_BYTES >> 20
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
