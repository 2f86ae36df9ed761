//! The `questions`, `qa-judge` and `splits` stages against a fake OpenAI-compatible endpoint:
//! every drop reason of the generation checks (a generic pivot costs no call), the judge's
//! threshold, judge answers out of range or not numbers, and splits that a refresh adding
//! questions does not move.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use noisebench_core::{
    Chunk, Inputs, NoProgress, Pattern, Question, QuestionJudgement, QuestionSplit,
    RejectedQuestion, Report, StageContext, StageOutput, TableRow, Triplet, TypedStage,
    parse_config, stable_id,
};
use noisebench_llm::Llm;
use noisebench_qa::{JudgeConfig, JudgeStage};
use noisebench_qa::{QuestionsConfig, QuestionsStage, sample_toward_mix};
use noisebench_qa::{SplitsConfig, SplitsStage};
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use serde_json::{Value, json};

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn llm(server: &FakeServer, cache: &Path) -> Llm {
    Llm::from_value(&strict_openai_config(&server.url(), cache), &repo_root()).unwrap()
}

fn ctx(dir: &Path, stage: &str) -> StageContext {
    StageContext {
        root: repo_root(),
        stage_dir: dir.to_path_buf(),
        pipeline: "test".into(),
        stage_id: stage.into(),
        progress: Arc::new(NoProgress),
    }
}

/// A small corpus: one chunk per sentence, a triplet per chunk, patterns over them.
#[derive(Default)]
struct Corpus {
    chunks: Vec<Chunk>,
    triplets: Vec<Triplet>,
    patterns: Vec<Pattern>,
}

impl Corpus {
    fn chunk(&mut self, text: &str) -> String {
        let id = stable_id("chunk", &[text]);
        self.chunks.push(Chunk {
            id: id.clone(),
            report_id: "r1".into(),
            index: self.chunks.len() as i64,
            text: text.into(),
            ..Chunk::default()
        });
        id
    }

    /// A chunk `<e1> <rel> <e2>.` and its triplet.
    fn fact(&mut self, e1: &str, rel: &str, e2: &str) -> String {
        let sentence = format!("{e1} {rel} {e2}.");
        let chunk = self.chunk(&sentence);
        let id = stable_id("triplet", &[&chunk, e1, rel, e2]);
        self.triplets.push(Triplet {
            id: id.clone(),
            report_id: "r1".into(),
            chunk_id: chunk,
            entity_1: e1.into(),
            relation: rel.into(),
            entity_2: e2.into(),
            source_sentence: sentence,
            provenance: "test".into(),
        });
        id
    }

    fn pattern(&mut self, kind: &str, triplet_ids: Vec<String>, pivots: &[&str]) {
        self.patterns.push(Pattern {
            id: stable_id("pattern", &[kind, &triplet_ids.join(",")]),
            pattern: kind.into(),
            triplet_ids,
            pivot_entities: pivots.iter().map(|p| p.to_string()).collect(),
            ..Pattern::default()
        });
    }

    fn single(&mut self, e1: &str, e2: &str) {
        let t = self.fact(e1, "acquired", e2);
        self.pattern("single_hop", vec![t], &[]);
    }

    fn chain(&mut self, a: &str, b: &str, c: &str) {
        let t1 = self.fact(a, "selected", b);
        let t2 = self.fact(b, "serves", c);
        self.pattern("chained_multi_hop", vec![t1, t2], &[b]);
    }
}

fn qa(question: &str, answer: &str) -> Reply {
    Reply::Content(json!({"question": question, "answer": answer}).to_string())
}

/// The fake's answer to a `qa_single` / `qa_multi` prompt, by the first entity it shows.
fn generator(body: &Value) -> Reply {
    let user = first_message(body, "user");
    let has = |s: &str| user.contains(s);
    if has("Declo Holdings") {
        qa("", "")
    } else if has("Longo Holdings") {
        qa(
            &format!("Did Longo Holdings buy a {}?", "very ".repeat(501)),
            "Longo Target",
        )
    } else if has("Sentra Holdings") {
        qa(
            "What happened in the spring?",
            "Sentra Holdings acquired Sentra Target Group in spring.",
        )
    } else if has("Inqo Holdings") {
        qa("Did Inqo Holdings buy Inqo Target?", "Inqo Target")
    } else if has("Groundless Holdings") {
        qa("Which firm did Groundless Holdings buy?", "Nowhere Corp")
    } else if has("Dupa Holdings") || has("Dupb Holdings") {
        qa("Which target did the holding group buy?", "Shared Target")
    } else if has("Repa Holdings") {
        qa(
            "Which company was bought by the holding group?",
            "Repa Target",
        )
    } else if has("Repb Holdings") {
        qa(
            "Which company was bought by the holding group?",
            "Repb Target",
        )
    } else if has("Broken Holdings") {
        Reply::Content("this is not JSON".into())
    } else if has("Keeper Holdings") {
        qa("Which company did Keeper Holdings buy?", "Keeper Target")
    } else if has("Pivot Port Authority") {
        qa(
            "Which harbour does Pivotal Freight Lines serve?",
            "Pivot Harbour",
        )
    } else if has("Alpha Port Authority") {
        qa(
            "Which harbour is served by the line Alpha Port Authority selected?",
            "Charlie Harbour",
        )
    } else if has("Delta Port Authority") {
        qa(
            "Which harbour is served by the line Delta Port Authority selected?",
            "Foxtrot Harbour",
        )
    } else {
        Reply::Status(500, None, "unexpected prompt".into())
    }
}

fn run_questions(llm: Llm, corpus: &Corpus, dir: &Path) -> StageOutput {
    let stage = QuestionsStage::new(llm);
    let config: QuestionsConfig = parse_config(&json!({})).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let mut tables = BTreeMap::new();
    tables.insert(
        "patterns".to_string(),
        Pattern::into_rows(corpus.patterns.clone()),
    );
    tables.insert(
        "triplets".to_string(),
        Triplet::into_rows(corpus.triplets.clone()),
    );
    tables.insert(
        "chunks".to_string(),
        Chunk::into_rows(corpus.chunks.clone()),
    );
    tables.insert(
        "reports".to_string(),
        Report::into_rows(vec![Report {
            id: "r1".into(),
            domain: "finance".into(),
            metadata: [("company".to_string(), "Calder Group".to_string())].into(),
            ..Report::default()
        }]),
    );
    stage
        .run(&config, Inputs::new(tables), &ctx(dir, "questions"))
        .unwrap()
}

fn drop_reasons(out: &StageOutput) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for d in &out.report.drops {
        *m.entry(d.reason.clone()).or_default() += 1;
    }
    m
}

#[test]
fn every_generation_check_is_a_counted_drop_and_generic_pivots_cost_no_call() {
    let mut c = Corpus::default();
    for (e1, e2) in [
        ("Declo Holdings", "Declo Target"),
        ("Longo Holdings", "Longo Target"),
        ("Inqo Holdings", "Inqo Target"),
        ("Groundless Holdings", "Groundless Target"),
        ("Dupa Holdings", "Shared Target"),
        ("Dupb Holdings", "Shared Target"),
        // The same question text with two answers: the second is a repeated question.
        ("Repa Holdings", "Repa Target"),
        ("Repb Holdings", "Repb Target"),
        ("Broken Holdings", "Broken Target"),
        ("Keeper Holdings", "Keeper Target"),
    ] {
        c.single(e1, e2);
    }
    // A copied sentence: the chunk's whole sentence as the answer.
    let t = c.fact(
        "Sentra Holdings",
        "acquired",
        "Sentra Target Group in spring",
    );
    c.pattern("single_hop", vec![t], &[]);
    // A generic pivot: skipped before any call.
    c.chain("Widget Port Authority", "the plant", "Widget Harbour");
    // The pivot named in the question.
    c.chain(
        "Pivot Port Authority",
        "Pivotal Freight Lines",
        "Pivot Harbour",
    );
    // One chunk of the corpus holds the named entity and the answer.
    c.chain(
        "Alpha Port Authority",
        "Bravo Freight Lines",
        "Charlie Harbour",
    );
    c.chunk("Alpha Port Authority visited Charlie Harbour last spring.");
    // A good multi-hop question.
    c.chain(
        "Delta Port Authority",
        "Echo Freight Lines",
        "Foxtrot Harbour",
    );
    // A pattern naming a triplet that is not there.
    c.pattern("single_hop", vec!["triplet_missing".into()], &[]);
    // A triplet whose chunk is not there, and a pattern kind the stage does not know.
    let orphan = c.fact("Orphan Holdings", "acquired", "Orphan Target");
    c.chunks
        .retain(|ch| !ch.text.starts_with("Orphan Holdings"));
    c.pattern("single_hop", vec![orphan.clone()], &[]);
    c.pattern("spiral_shaped", vec![orphan], &[]);

    let server = FakeServer::answering(generator);
    let dir = tempfile::tempdir().unwrap();
    let mut out = run_questions(llm(&server, &dir.path().join("cache")), &c, dir.path());
    let questions = Question::from_rows(out.tables.remove("questions").unwrap()).unwrap();
    let mut kept: Vec<(&str, &str)> = questions
        .iter()
        .map(|q| (q.kind.as_str(), q.answer.as_str()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    // Of the two questions with one text, the one with the smaller id is kept.
    let repeated: Vec<&Question> = questions
        .iter()
        .filter(|q| q.answer.starts_with("Rep"))
        .collect();
    assert_eq!(repeated.len(), 1, "{repeated:?}");
    kept.retain(|(_, a)| !a.starts_with("Rep"));
    assert_eq!(
        kept,
        [
            ("chained_multi_hop", "Foxtrot Harbour"),
            ("single_hop", "Keeper Target"),
            ("single_hop", "Shared Target"),
        ]
    );
    let reasons = drop_reasons(&out);
    let expected: BTreeMap<String, usize> = [
        ("answer_in_question", 1),
        ("answer_is_sentence", 1),
        ("answer_not_grounded", 1),
        ("declined", 1),
        ("generic_pivot", 1),
        ("llm_unparseable_output", 1),
        ("missing_chunk", 1),
        ("missing_triplet", 1),
        ("near_duplicate", 1),
        ("pivot_in_question", 1),
        ("question_length", 1),
        ("repeated_question", 1),
        ("single_chunk_answerable", 1),
        ("unknown_pattern", 1),
    ]
    .iter()
    .map(|(r, n)| (r.to_string(), *n))
    .collect();
    assert_eq!(reasons, expected);
    assert_eq!(
        out.report.items_in,
        out.report.items_out + out.report.drops.len() as u64
    );
    // 19 patterns: the missing triplet and chunk, the unknown kind and the generic pivot were
    // never asked about (14 calls); the embeddings of the questions that passed the checks are
    // one request more.
    let chat: usize = server
        .bodies()
        .iter()
        .filter(|b| b.get("messages").is_some())
        .count();
    assert_eq!(chat, 14);
    assert!(
        server
            .bodies()
            .iter()
            .filter_map(|b| b.get("messages"))
            .all(|m| !m.to_string().contains("Widget Port Authority"))
    );
    // The multi-hop question keeps its pattern's evidence, pivots and report metadata.
    let multi = questions
        .iter()
        .find(|q| q.kind == "chained_multi_hop")
        .unwrap();
    assert_eq!(multi.answer_chunk_ids.len(), 2);
    assert_eq!(multi.pivot_entities, ["Echo Freight Lines"]);
    assert_eq!(multi.metadata["company"], "Calder Group");
    assert_eq!(multi.metadata["domain"], "finance");
    assert_eq!(multi.id, stable_id("question", &[&multi.pattern_id]));
}

/// Judge scores by question text: kept, rejected at the threshold, out of range, not numbers.
fn judge(body: &Value) -> Reply {
    let user = first_message(body, "user");
    let scores = if user.contains("Question: Q-good") {
        json!({"clarity": 4, "correctness": 5, "reasonableness": null})
    } else if user.contains("Question: Q-three") {
        json!({"clarity": 3, "correctness": 5, "reasonableness": null})
    } else if user.contains("Question: Q-multi") {
        json!({"clarity": 5, "correctness": 4, "reasonableness": 3})
    } else if user.contains("Question: Q-range") {
        json!({"clarity": 9, "correctness": 5, "reasonableness": null})
    } else {
        json!({"clarity": "high", "correctness": 5, "reasonableness": null})
    };
    Reply::Content(scores.to_string())
}

fn question(id: &str, kind: &str) -> Question {
    Question {
        id: id.into(),
        pattern_id: format!("p-{id}"),
        kind: kind.into(),
        question: format!("{id}: which firm?"),
        answer: "Acme".into(),
        answer_chunk_ids: vec!["c1".into()],
        ..Question::default()
    }
}

fn run_judge(server: &FakeServer, threshold: i64, dir: &Path) -> StageOutput {
    let stage = JudgeStage::new(llm(server, &dir.join("cache")));
    let config: JudgeConfig = parse_config(&json!({ "threshold": threshold })).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let mut tables = BTreeMap::new();
    tables.insert(
        "questions".to_string(),
        Question::into_rows(vec![
            question("Q-good", "single_hop"),
            question("Q-three", "single_hop"),
            question("Q-multi", "star_shaped"),
            question("Q-range", "single_hop"),
            question("Q-words", "single_hop"),
        ]),
    );
    tables.insert(
        "chunks".to_string(),
        Chunk::into_rows(vec![Chunk {
            id: "c1".into(),
            text: "Acme was bought.".into(),
            ..Chunk::default()
        }]),
    );
    stage
        .run(&config, Inputs::new(tables), &ctx(dir, "qa-judge"))
        .unwrap()
}

#[test]
fn the_judge_keeps_only_scores_above_the_threshold_and_drops_bad_scores() {
    let server = FakeServer::answering(judge);
    let dir = tempfile::tempdir().unwrap();
    let mut out = run_judge(&server, 3, dir.path());
    let kept = Question::from_rows(out.tables.remove("questions").unwrap()).unwrap();
    let judged =
        QuestionJudgement::from_rows(out.tables.remove("question_judgements").unwrap()).unwrap();
    let rejected =
        RejectedQuestion::from_rows(out.tables.remove("rejected_questions").unwrap()).unwrap();
    assert_eq!(
        kept.iter().map(|q| q.id.as_str()).collect::<Vec<_>>(),
        ["Q-good"]
    );
    let mut why: Vec<(&str, &str)> = rejected
        .iter()
        .map(|r| (r.id.as_str(), r.reason.as_str()))
        .collect();
    why.sort();
    assert_eq!(
        why,
        [("Q-multi", "reasonableness 3"), ("Q-three", "clarity 3")]
    );
    assert_eq!(judged.len(), 3);
    assert_eq!(judged.iter().filter(|j| j.kept).count(), 1);
    let reasons = drop_reasons(&out);
    assert_eq!(reasons["judge_rejected"], 2);
    assert_eq!(reasons["llm_unparseable_output"], 2, "{reasons:?}");
    let facts = out.facts.as_ref().unwrap();
    assert_eq!(facts.data["filtered_share"], json!(2.0 / 3.0));

    // A lower threshold keeps the 3s.
    let dir = tempfile::tempdir().unwrap();
    let mut out = run_judge(&server, 2, dir.path());
    let kept = Question::from_rows(out.tables.remove("questions").unwrap()).unwrap();
    assert_eq!(kept.len(), 3);
}

#[test]
fn a_refresh_that_adds_questions_moves_none_between_splits() {
    let stage = SplitsStage;
    let config: SplitsConfig = parse_config(&json!({"seed": 7})).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let split = |ids: &[String]| -> BTreeMap<String, String> {
        let qs: Vec<Question> = ids
            .iter()
            .map(|id| {
                question(
                    id,
                    if id.len() % 2 == 0 {
                        "single_hop"
                    } else {
                        "star_shaped"
                    },
                )
            })
            .collect();
        let mut tables = BTreeMap::new();
        tables.insert("questions".to_string(), Question::into_rows(qs));
        let mut out = stage
            .run(&config, Inputs::new(tables), &ctx(dir.path(), "splits"))
            .unwrap();
        QuestionSplit::from_rows(out.tables.remove("question_splits").unwrap())
            .unwrap()
            .into_iter()
            .map(|s| (s.question_id, s.split))
            .collect()
    };
    let first: Vec<String> = (0..300).map(|i| format!("question_{i:04}")).collect();
    let more: Vec<String> = (0..600).map(|i| format!("question_{i:04}")).collect();
    let (a, b) = (split(&first), split(&more));
    assert!(a.values().any(|s| s == "test") && a.values().any(|s| s == "train"));
    for (id, s) in &a {
        assert_eq!(b.get(id), Some(s), "{id} moved");
    }
}

/// The largest gap between the kinds' shares among `patterns` and `target` (both normalised).
fn largest_gap(patterns: &[Pattern], target: &BTreeMap<String, f64>) -> f64 {
    let sum: f64 = target.values().sum();
    let mut kinds: BTreeMap<&str, f64> = BTreeMap::new();
    for p in patterns {
        *kinds.entry(p.pattern.as_str()).or_default() += 1.0 / patterns.len() as f64;
    }
    target
        .iter()
        .map(|(k, t)| (kinds.get(k.as_str()).copied().unwrap_or(0.0) - t / sum).abs())
        .chain(
            kinds
                .iter()
                .filter(|(k, _)| !target.contains_key(**k))
                .map(|(_, a)| *a),
        )
        .fold(0.0, f64::max)
}

#[test]
fn sampling_toward_a_target_mix_shrinks_its_largest_gap_stably() {
    // A graph heavy in chains: 60 chained, 30 star-shaped, 10 single-hop, no inverted stars.
    let kinds = [
        ("chained_multi_hop", 60),
        ("star_shaped", 30),
        ("single_hop", 10),
    ];
    let patterns: Vec<Pattern> = kinds
        .iter()
        .flat_map(|(kind, n)| {
            (0..*n).map(move |i| Pattern {
                id: format!("p_{kind}_{i:03}"),
                pattern: kind.to_string(),
                ..Pattern::default()
            })
        })
        .collect();
    let target: BTreeMap<String, f64> = [
        ("single_hop", 0.4),
        ("chained_multi_hop", 0.2),
        ("star_shaped", 0.2),
        ("inverted_star_shaped", 0.2),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), *v))
    .collect();
    let (off, none_left) = sample_toward_mix(patterns.clone(), &BTreeMap::new(), 0);
    assert_eq!(off.len(), 100);
    assert!(none_left.is_empty());
    let (on, left_out) = sample_toward_mix(patterns.clone(), &target, 0);
    let (gap_off, gap_on) = (largest_gap(&off, &target), largest_gap(&on, &target));
    assert!((gap_off - 0.4).abs() < 1e-9, "{gap_off}");
    // Inverted stars cannot be made; the rest come at 2:1:1, the target's single:chain:star.
    assert!(gap_on < gap_off && (gap_on - 0.2).abs() < 1e-9, "{gap_on}");
    let count = |ps: &[Pattern], k: &str| ps.iter().filter(|p| p.pattern == k).count();
    assert_eq!(count(&on, "single_hop"), 10);
    assert_eq!(count(&on, "chained_multi_hop"), 5);
    assert_eq!(count(&on, "star_shaped"), 5);
    assert_eq!(left_out["chained_multi_hop"], 55);
    // Stable: the same seed keeps the same patterns, another seed others; one pattern more in
    // the input moves at most one of the kept ones.
    assert_eq!(sample_toward_mix(patterns.clone(), &target, 0).0, on);
    assert_ne!(sample_toward_mix(patterns.clone(), &target, 9).0, on);
    let mut more = patterns.clone();
    more.push(Pattern {
        id: "p_chained_multi_hop_999".into(),
        pattern: "chained_multi_hop".into(),
        ..Pattern::default()
    });
    let again = sample_toward_mix(more, &target, 0).0;
    let kept: std::collections::BTreeSet<&str> = on.iter().map(|p| p.id.as_str()).collect();
    assert!(
        again
            .iter()
            .filter(|p| !kept.contains(p.id.as_str()))
            .count()
            <= 1
    );
}
