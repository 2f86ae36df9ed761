//! The `query-perturbations` stage: LLM rewrites through a fake OpenAI-compatible endpoint on
//! 127.0.0.1 (usable ones kept, ones losing a name or number refused, a failed or unusable
//! answer a counted drop), the offline rules end to end, determinism and independence between
//! questions; and property tests of the rules: the realised rate stays near the configured one,
//! protected numbers, years and names are never altered.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use noisebench_core::{
    Inputs, NoProgress, QueryPerturbation, Question, StageContext, StageOutput, TableRow,
    TypedStage, parse_config,
};
use noisebench_llm::Llm;
use noisebench_perturb::character_level;
use noisebench_perturb::{QueryPerturbationsConfig, QueryPerturbationsStage};
use noisebench_perturb::{Synonyms, word_level};
use noisebench_perturb::{protected_mask, question_phrases};
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn llm(server: &FakeServer, cache: &Path) -> Llm {
    Llm::from_value(&strict_openai_config(&server.url(), cache), &repo_root()).unwrap()
}

fn question(id: &str, text: &str, e1: &str, e2: &str) -> Question {
    Question {
        id: id.into(),
        kind: "single_hop".into(),
        question: text.into(),
        answer: e2.into(),
        entity_1: vec![e1.into()],
        entity_2: vec![e2.into()],
        ..Question::default()
    }
}

fn questions() -> Vec<Question> {
    vec![
        question(
            "q_north",
            "Which freight company did Northwind Logistics acquire in 2021 to expand its regional network?",
            "Northwind Logistics",
            "Baltic Freight Lines",
        ),
        question(
            "q_calder",
            "What total cargo volume did the port authority report for Eastgate Terminal during fiscal 2023?",
            "Calder Port Authority",
            "4.2 million tonnes",
        ),
    ]
}

fn run(stage: &QueryPerturbationsStage, config: Value, qs: &[Question]) -> StageOutput {
    let config: QueryPerturbationsConfig = parse_config(&config).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let mut tables = BTreeMap::new();
    tables.insert("questions".to_string(), Question::into_rows(qs.to_vec()));
    let dir = tempfile::tempdir().unwrap();
    let ctx = StageContext {
        root: repo_root(),
        stage_dir: dir.path().to_path_buf(),
        pipeline: "test".into(),
        stage_id: "query_perturbations".into(),
        progress: Arc::new(NoProgress),
    };
    stage.run(&config, Inputs::new(tables), &ctx).unwrap()
}

fn rows(out: &mut StageOutput) -> Vec<QueryPerturbation> {
    QueryPerturbation::from_rows(out.tables.remove("query_perturbations").unwrap()).unwrap()
}

/// The question of a rewrite request.
fn asked(body: &Value) -> String {
    let user = first_message(body, "user");
    user.lines()
        .find_map(|l| l.strip_prefix("Question: "))
        .unwrap_or("")
        .to_string()
}

fn task(body: &Value) -> String {
    body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn llm_rewrites_are_filtered_selected_and_recorded() {
    let server = FakeServer::answering(|body| {
        let q = asked(body);
        match task(body).as_str() {
            "query_grammar" if q.contains("Northwind") => Reply::Content(
                json!({"rewrites": [
                    q,
                    "Which freight company did Northwind acquire in 2021 to expand its regional network?",
                    "In 2021, which freight company did Northwind Logistics acquire to expand its regional network?",
                ]})
                .to_string(),
            ),
            // Every rewrite loses the year: nothing usable.
            "query_grammar" => Reply::Content(
                json!({"rewrites": ["For Eastgate Terminal, what total cargo volume did the port authority report during the fiscal year?"]}).to_string(),
            ),
            "query_irrelevant" if q.contains("Northwind") => Reply::Content("not json".into()),
            "query_irrelevant" => Reply::Content(
                json!({"rewrites": [
                    format!("For a port study I am writing, {}", q.replacen("What", "what", 1)),
                    format!("Ignoring the weather delays, {}", q.replacen("What", "what", 1)),
                ]})
                .to_string(),
            ),
            other => panic!("unexpected task {other}"),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let stage = QueryPerturbationsStage::new(llm(&server, &dir.path().join("cache")));
    let mut out = run(&stage, json!({"seed": 7}), &questions());
    let got = rows(&mut out);

    let find = |q: &str, k: &str| got.iter().find(|r| r.question_id == q && r.kind == k);
    let grammar = find("q_north", "grammar_perturbation").unwrap();
    assert_eq!(
        grammar.perturbed_query,
        "In 2021, which freight company did Northwind Logistics acquire to expand its regional network?"
    );
    assert!(
        grammar.provenance.starts_with("openai:fake-model (prompt "),
        "{}",
        grammar.provenance
    );
    assert!(grammar.provenance.contains("candidate 1 of 1"));
    let irrelevant = find("q_calder", "irrelevant_info").unwrap();
    assert!(
        irrelevant
            .perturbed_query
            .contains("Eastgate Terminal during fiscal 2023")
    );
    assert!(find("q_north", "irrelevant_info").is_none());
    assert!(find("q_calder", "grammar_perturbation").is_none());
    for r in &got {
        assert!((-1.0..=1.0).contains(&r.similarity), "{r:?}");
        assert_ne!(r.perturbed_query, "", "{r:?}");
    }
    // Both rule kinds for both questions, keeping names and numbers.
    for q in ["q_north", "q_calder"] {
        for k in ["character_level", "word_level"] {
            let r = find(q, k).unwrap_or_else(|| panic!("{q} {k}"));
            assert!(
                r.provenance
                    .starts_with(&format!("rule:{k} (rate 0.1, seed 7")),
                "{}",
                r.provenance
            );
        }
    }
    for r in got.iter().filter(|r| r.question_id == "q_north") {
        assert!(
            r.perturbed_query.contains("Northwind Logistics") && r.perturbed_query.contains("2021"),
            "{r:?}"
        );
    }
    for r in got.iter().filter(|r| r.question_id == "q_calder") {
        assert!(
            r.perturbed_query.contains("Eastgate Terminal") && r.perturbed_query.contains("2023"),
            "{r:?}"
        );
    }
    assert_eq!(got.len(), 6);
    let mut reasons: Vec<(String, String)> = out
        .report
        .drops
        .iter()
        .map(|d| (d.item.clone(), d.reason.clone()))
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        [
            (
                "q_calder/grammar_perturbation".to_string(),
                "no_usable_rewrite".to_string()
            ),
            (
                "q_north/irrelevant_info".to_string(),
                "llm_unparseable_output".to_string()
            ),
        ]
    );
    // Items are (question, kind) pairs: 6 rows and 2 drops.
    assert_eq!(out.report.items_in, 8);
    let facts = out.facts.unwrap();
    assert_eq!(facts.data["kept"]["character_level"], 2);
    assert_eq!(facts.data["drops"]["no_usable_rewrite"], 1);

    // A rebuild on the same cache sends nothing new and writes the same rows.
    let before = server.requests();
    let stage = QueryPerturbationsStage::new(llm(&server, &dir.path().join("cache")));
    let mut again = run(&stage, json!({"seed": 7}), &questions());
    assert_eq!(rows(&mut again), got);
    // The failed (unparseable) call is asked again; everything else is a cache hit.
    assert_eq!(server.requests() - before, 1);
}

#[test]
fn offline_rules_make_all_four_kinds_deterministically_and_independently() {
    let stage = QueryPerturbationsStage::new(Llm::offline());
    let qs = questions();
    let mut out = run(&stage, json!({}), &qs);
    assert!(out.report.drops.is_empty(), "{:?}", out.report.drops);
    let all = rows(&mut out);
    assert_eq!(all.len(), 8);
    let mut ids: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
    let sorted = {
        let mut s = ids.clone();
        s.sort();
        s
    };
    assert_eq!(ids, sorted, "rows are sorted by id");
    ids.dedup();
    assert_eq!(ids.len(), 8);
    let grammar = all
        .iter()
        .find(|r| r.question_id == "q_north" && r.kind == "grammar_perturbation")
        .unwrap();
    assert!(
        grammar
            .perturbed_query
            .contains("which freight company did Northwind Logistics acquire in 2021"),
        "{grammar:?}"
    );
    let irrelevant = all
        .iter()
        .find(|r| r.question_id == "q_north" && r.kind == "irrelevant_info")
        .unwrap();
    assert!(irrelevant.perturbed_query.ends_with(", which freight company did Northwind Logistics acquire in 2021 to expand its regional network?"));
    // One question alone gets exactly the rows it got among others.
    let mut alone = run(&stage, json!({}), &qs[..1]);
    let alone = rows(&mut alone);
    let north: Vec<QueryPerturbation> = all
        .iter()
        .filter(|r| r.question_id == "q_north")
        .cloned()
        .collect();
    assert_eq!(alone, north);
    // Another seed, other typos.
    let mut other = run(&stage, json!({"seed": 1}), &qs);
    let other = rows(&mut other);
    let typo = |rs: &[QueryPerturbation]| {
        rs.iter()
            .find(|r| r.kind == "character_level")
            .unwrap()
            .perturbed_query
            .clone()
    };
    assert_ne!(typo(&all), typo(&other));
}

#[test]
fn a_query_with_nothing_to_perturb_is_a_counted_drop() {
    let stage = QueryPerturbationsStage::new(Llm::offline());
    let q = question(
        "q_all",
        "Northwind Logistics 2021?",
        "Northwind Logistics",
        "x",
    );
    let mut out = run(
        &stage,
        json!({"kinds": ["character_level", "word_level"]}),
        &[q],
    );
    assert!(rows(&mut out).is_empty());
    let reasons: Vec<&str> = out.report.drops.iter().map(|d| d.reason.as_str()).collect();
    assert_eq!(reasons, ["nothing_to_perturb", "nothing_to_perturb"]);
    // No questions at all: no rows, no drops, no calls.
    let mut empty = run(
        &QueryPerturbationsStage::new(Llm::offline()),
        json!({}),
        &[],
    );
    assert!(rows(&mut empty).is_empty() && empty.report.drops.is_empty());
}

/// Levenshtein distance over bytes (ASCII inputs).
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Words the synonym table has, none a stopword.
const SWAPPABLE: &[&str] = &[
    "large", "revenue", "quickly", "report", "cost", "price", "purchase", "operate", "market",
    "profit", "growth", "customer", "network", "total",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On 60+ unprotected letters, typos hit the configured share of the unprotected letters: the edit
    /// distance to the original is within 3 points of the rate.
    #[test]
    fn character_rate_holds(
        words in proptest::collection::vec("[a-z]{2,9}", 40..80),
        rate in 0.05f64..0.3,
        seed in any::<u64>(),
    ) {
        let text = words.join(" ");
        let mask = protected_mask(&text, &[] as &[&str]);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let out = character_level(&text, &mask, rate, &mut rng);
        // Number words ("one", "ten") are protected; every other letter counts.
        let letters = text.chars().filter(char::is_ascii_alphabetic).count();
        prop_assert!(out.counted <= letters && out.counted >= 60);
        let realised = distance(&text, &out.text) as f64 / out.counted as f64;
        prop_assert!((realised - rate).abs() <= 0.03, "rate {} realised {}", rate, realised);
    }

    /// On 40+ swappable words, synonyms replace the configured share of the words.
    #[test]
    fn word_rate_holds(
        picks in proptest::collection::vec(0..SWAPPABLE.len(), 40..80),
        rate in 0.05f64..0.3,
        seed in any::<u64>(),
    ) {
        let text = picks.iter().map(|&i| SWAPPABLE[i]).collect::<Vec<_>>().join(" ");
        let mask = protected_mask(&text, &[] as &[&str]);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let out = word_level(&text, &mask, rate, Synonyms::wordnet(), &mut rng);
        let before: Vec<&str> = text.split(' ').collect();
        let after: Vec<&str> = out.text.split(' ').collect();
        prop_assert_eq!(before.len(), after.len());
        let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        let realised = changed as f64 / before.len() as f64;
        prop_assert!((realised - rate).abs() <= 0.02, "rate {} realised {}", rate, realised);
    }

    /// Numbers, years and entity names (given, or capitalised mid-sentence) survive every
    /// character and word perturbation, at any rate.
    #[test]
    fn protected_tokens_are_never_altered(
        parts in proptest::collection::vec(
            prop_oneof![
                "[a-z]{3,8}".prop_map(|s| s),
                proptest::sample::select(vec![
                    "2021", "$4.2", "14%", "1,250", "Q4", "northwind logistics", "Baltic Freight Lines",
                    "large", "revenue", "report", "company", "acquired", "in", "the",
                ]).prop_map(str::to_string),
            ],
            5..40,
        ),
        rate in 0.05f64..1.0,
        seed in any::<u64>(),
    ) {
        let text = format!("What {}?", parts.join(" "));
        let q = Question {
            question: text.clone(),
            entity_1: vec!["Northwind Logistics".into()],
            entity_2: vec!["Baltic Freight Lines".into()],
            ..Question::default()
        };
        let mask = protected_mask(&text, &question_phrases(&q));
        let kept = ["2021", "$4.2", "14%", "1,250", "Q4", "northwind logistics", "Baltic Freight Lines"];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let typos = character_level(&text, &mask, rate, &mut rng);
        let swaps = word_level(&text, &mask, rate, Synonyms::wordnet(), &mut rng);
        for out in [&typos.text, &swaps.text] {
            for k in kept {
                prop_assert_eq!(text.matches(k).count(), out.matches(k).count(), "{} in {}", k, out);
            }
        }
    }
}
