//! The quality card's cost on a synthetic version: `cargo bench -p noisebench-quality --bench
//! quality`. 20,000 chunks, 4,000 questions (half test, half train) and 4,000 labelled pairs
//! made from a seeded word list; prints each measure's seconds. Then the near-duplicates of
//! templated questions as the offline generator writes them (RARE's shape: 48,000 questions
//! from a few templates over a few hundred entities, so many texts repeat and many pairs are
//! LSH candidates), within the questions and across a half test, half train split. Plain
//! `main` with `std::time`.

use std::time::Instant;

use noisebench_core::{Chunk, Claim, ClaimDocumentLabel, Question, QuestionSplit};
use noisebench_quality::{QualityConfig, Tables, agreement, duplicates, grounding, shortcut};

fn main() {
    let (chunks_n, questions_n) = (20_000usize, 4_000usize);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let vocab: Vec<String> = (0..5_000).map(|i| format!("w{i:x}")).collect();
    let mut sentence = |n: usize| {
        (0..n)
            .map(|_| vocab[(next() % vocab.len() as u64) as usize].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let chunks: Vec<Chunk> = (0..chunks_n)
        .map(|i| Chunk {
            id: format!("k{i}"),
            text: sentence(300),
            ..Chunk::default()
        })
        .collect();
    let questions: Vec<Question> = (0..questions_n)
        .map(|i| {
            let chunk = &chunks[i * 5];
            let words: Vec<&str> = chunk.text.split(' ').collect();
            Question {
                id: format!("q{i}"),
                kind: ["single_hop", "star_shaped"][i % 2].into(),
                question: format!("{} {}", sentence(6), words[10..16].join(" ")),
                answer: words[40..43].join(" "),
                answer_chunk_ids: vec![chunk.id.clone()],
                source_sentences: vec![words[30..50].join(" ")],
                ..Question::default()
            }
        })
        .collect();
    let splits: Vec<QuestionSplit> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| QuestionSplit {
            id: format!("s{i}"),
            question_id: q.id.clone(),
            kind: q.kind.clone(),
            split: ["test", "train"][i % 2].into(),
        })
        .collect();
    let claims: Vec<Claim> = (0..questions_n)
        .map(|i| Claim {
            id: format!("c{i}"),
            text: sentence(15),
            verdict: ["true", "false"][i % 2].into(),
            ..Claim::default()
        })
        .collect();
    let labels: Vec<ClaimDocumentLabel> = (0..questions_n)
        .map(|i| ClaimDocumentLabel {
            id: format!("l{i}"),
            claim_id: format!("c{i}"),
            label: Some(["supporting", "misleading", "irrelevant"][i % 3].into()),
            stance_majority: Some(["support", "reject", "not enough evidence"][i % 3].into()),
            ..ClaimDocumentLabel::default()
        })
        .collect();
    let config = QualityConfig::default();
    let time = |name: &str, f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        println!("{name}: {:.2} s", t.elapsed().as_secs_f64());
    };
    time("agreement", &mut || {
        agreement::label_agreement(&labels, &claims, config.bootstrap, 5, 0);
    });
    time("grounding", &mut || {
        grounding::grounding(&questions, &chunks, config.fuzzy_threshold, 5);
    });
    let texts: Vec<(&str, &str)> = questions
        .iter()
        .map(|q| (q.id.as_str(), q.question.as_str()))
        .collect();
    time("near-duplicates (questions)", &mut || {
        duplicates::within(&texts, 1, config.near_duplicate_threshold, 5);
    });
    time("lexical shortcut", &mut || {
        shortcut::lexical_shortcut(
            &questions,
            &chunks,
            config.rank_depth,
            config.shortcut_sample,
        );
    });
    time("whole card", &mut || {
        noisebench_quality::measure(
            &Tables {
                claims: &claims,
                labels: &labels,
                questions: &questions,
                chunks: &chunks,
                splits: &splits,
                ..Tables::default()
            },
            &config,
        );
    });
    templated(&config, &time);
}

/// Near-duplicates of 48,000 templated questions (`QUALITY_BENCH_TEMPLATED=n` for another count).
fn templated(config: &QualityConfig, time: &dyn Fn(&str, &mut dyn FnMut())) {
    let n: usize = std::env::var("QUALITY_BENCH_TEMPLATED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48_000);
    let templates = [
        "What was the {m} of {c} in fiscal {y} according to its annual report?",
        "Which segment of {c} reported the highest {m} in {y}?",
        "How did the {m} of {c} change between {y} and the prior year?",
        "Which company that shares an auditor with {c} reported {m} in {y}?",
        "What risk factor did {c} name in its {y} filing about {m}?",
        "Who is the chief executive of the company that reported {m} of {c} in {y}?",
    ];
    let metrics = [
        "revenue",
        "net income",
        "operating margin",
        "capital expenditure",
        "headcount",
        "free cash flow",
        "debt",
        "backlog",
    ];
    let questions: Vec<(String, String)> = (0..n)
        .map(|i| {
            let t = templates[i % templates.len()];
            let text = t
                .replace("{m}", metrics[(i / 7) % metrics.len()])
                .replace("{c}", &format!("Company {}", (i * 31) % 400))
                .replace("{y}", &format!("{}", 2015 + (i / 13) % 9));
            (format!("q{i:06}"), text)
        })
        .collect();
    let rows: Vec<(&str, &str)> = questions
        .iter()
        .map(|(id, t)| (id.as_str(), t.as_str()))
        .collect();
    let mut found = None;
    time(
        &format!("near-duplicates ({n} templated questions)"),
        &mut || {
            found = Some(duplicates::within(
                &rows,
                1,
                config.near_duplicate_threshold,
                5,
            ));
        },
    );
    if let Some(d) = found {
        println!(
            "  rows with a twin: {} of {} ({:.4}); pairs compared and found: {}",
            d.near, d.rows, d.share, d.pair_count
        );
    }
    // The bounded search beside the unbounded one (every LSH candidate compared) on a quarter
    // of the questions: the share of rows with a twin it finds, and the time.
    let quarter = &rows[..rows.len() / 4];
    for (label, window) in [("bounded", 64), ("unbounded", usize::MAX)] {
        let mut found = None;
        time(
            &format!(
                "near-duplicates ({} templated questions, {label})",
                quarter.len()
            ),
            &mut || {
                found = Some(duplicates::within_window(
                    quarter,
                    1,
                    config.near_duplicate_threshold,
                    5,
                    window,
                ));
            },
        );
        if let Some(d) = found {
            println!(
                "  rows with a twin: {} of {} ({:.4}); pairs found: {}",
                d.near, d.rows, d.share, d.pair_count
            );
        }
    }
    let (test, train): (Vec<_>, Vec<_>) = rows.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let test: Vec<(&str, &str)> = test.into_iter().map(|(_, r)| *r).collect();
    let train: Vec<(&str, &str)> = train.into_iter().map(|(_, r)| *r).collect();
    time("across splits (templated, half test)", &mut || {
        duplicates::across(&test, &train, 1, config.near_duplicate_threshold, 5);
    });
}
