//! Speed of the rule perturbations: `character_level` and `word_level` for 48K synthetic
//! questions (RARE's 48,295) times the default 5 candidates each, as the stage makes them
//! (protection mask once per question, one seeded generator per candidate). Target: under 5 s
//! in release. Run with `cargo bench -p noisebench-perturb --bench perturb`.

use std::time::Instant;

use noisebench_perturb::QueryPerturbationsConfig;
use noisebench_perturb::Synonyms;
use noisebench_perturb::protected_mask;
use noisebench_perturb::rule_candidates;

const QUESTIONS: usize = 48_000;

const OPENERS: &[&str] = &["What", "Which", "How much", "In which year did"];
const SUBJECTS: &[&str] = &[
    "total revenue",
    "net income",
    "annual growth",
    "customer base",
    "operating profit",
    "market share",
    "capital expenditure",
    "freight volume",
];
const VERBS: &[&str] = &[
    "report", "increase", "purchase", "operate", "acquire", "record",
];
const NAMES: &[&str] = &[
    "Northwind Logistics",
    "Calder Port Authority",
    "Baltic Freight Lines",
    "Valdoria Fund",
    "Eastgate Terminal",
    "Harbour Trust",
];

/// A question of the shape the generator writes, varied by `i`; its entity names.
fn question(i: usize) -> (String, Vec<String>) {
    let name = NAMES[i % NAMES.len()];
    let other = NAMES[(i / 7) % NAMES.len()];
    let text = format!(
        "{} {} did {name} {} after the large purchase of {other} in {} to expand its regional network quickly?",
        OPENERS[i % OPENERS.len()],
        SUBJECTS[(i / 3) % SUBJECTS.len()],
        VERBS[(i / 5) % VERBS.len()],
        2000 + i % 25,
    );
    (text, vec![name.to_string(), other.to_string()])
}

fn main() {
    let t = Instant::now();
    let table = Synonyms::wordnet();
    println!(
        "synonym table: {} words loaded in {:.1?}",
        table.len(),
        t.elapsed()
    );

    let questions: Vec<(String, Vec<String>)> = (0..QUESTIONS).map(question).collect();
    let chars: usize = questions.iter().map(|(q, _)| q.len()).sum();
    let config = QueryPerturbationsConfig::default();
    let mut total = 0.0;
    for kind in ["character_level", "word_level"] {
        let t = Instant::now();
        let mut made = 0;
        for (i, (q, names)) in questions.iter().enumerate() {
            let mask = protected_mask(q, names);
            made += rule_candidates(&config, &format!("q{i}"), q, &mask, kind).len();
        }
        let secs = t.elapsed().as_secs_f64();
        total += secs;
        println!(
            "{kind}: {QUESTIONS} questions x {} candidates ({made} distinct made, {:.1} MB of queries) in {secs:.2} s ({:.0} questions/s)",
            config.candidates,
            chars as f64 / 1e6,
            QUESTIONS as f64 / secs
        );
    }
    println!("both kinds: {total:.2} s (target < 5 s)");
}
