//! The CONF-FACT tasks: passage splitting (property tests), the passages each method shows
//! (BM25 order, source filtering, credibility weighting), majority vote and the ensemble against
//! a fake OpenAI-compatible endpoint, hand-computed metrics, and an offline run of all eleven
//! methods.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use noisebench_eval::ConfactConfig;
use noisebench_eval::confact::{
    ClaimIndex, METHODS, Weighted, min_max, run_confact, split_passages, weighted_order,
};
use noisebench_eval::generate::{Generated, Generator, Plain};
use noisebench_eval::metrics::Bootstrap;
use noisebench_eval::{Ask, Credibility, DocLabel, EvalClaim, EvalData, EvalDocument, Style};
use noisebench_llm::{Llm, LlmError, TaskInfo};
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use proptest::prelude::*;
use serde_json::{Value, json};

const BOOT: Bootstrap = Bootstrap {
    samples: 50,
    seed: 7,
};

fn doc(id: &str, claim: &str, text: &str) -> EvalDocument {
    EvalDocument {
        id: id.into(),
        claim_id: Some(claim.into()),
        title: String::new(),
        text: text.into(),
        label: None,
        url: None,
        domain: Some(format!("{id}.example")),
        credibility: Credibility::default(),
    }
}

fn claim(id: &str, question: &str, verdict: bool, docs: &[&str]) -> EvalClaim {
    EvalClaim {
        id: id.into(),
        text: format!("Claim {id}."),
        question: Some(question.into()),
        verdict,
        original_verdict: None,
        documents: docs.iter().map(|d| d.to_string()).collect(),
        claim_date: None,
    }
}

fn config(methods: &[&str], top_k: usize) -> ConfactConfig {
    ConfactConfig {
        top_k,
        methods: methods.iter().map(|m| m.to_string()).collect(),
        ..ConfactConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Passages
// ---------------------------------------------------------------------------------------------

fn sentence_strategy() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["Alpha", "Beta", "Gamma", "Delta", "U.S."]),
        prop::collection::vec("[a-z]{1,6}", 0..14),
        prop::sample::select(vec![".", "!", "?", ""]),
    )
        .prop_map(|(first, rest, end)| {
            let mut words = vec![first.to_string()];
            words.extend(rest);
            format!("{}{end}", words.join(" "))
        })
}

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

proptest! {
    #[test]
    fn passages_keep_every_word_in_order_and_cut_only_long_sentences(
        sentences in prop::collection::vec(sentence_strategy(), 0..12),
        breaks in prop::collection::vec(any::<bool>(), 12),
        max in 1usize..12,
    ) {
        let mut text = String::new();
        for (i, s) in sentences.iter().enumerate() {
            if i > 0 {
                text.push_str(if breaks[i] { "\n" } else { "  " });
            }
            text.push_str(s);
        }
        let d = doc("d", "c", &text);
        let passages = split_passages(&d, max);
        // All words, in order.
        let joined: Vec<&str> = passages.iter().flat_map(|p| words(&p.text)).collect();
        prop_assert_eq!(joined, words(&text));
        // None over the limit (a longer sentence is cut into pieces of at most `max`).
        for p in &passages {
            prop_assert!(words(&p.text).len() <= max, "{:?} over {max}", p.text);
        }
        // A sentence within the limit lies whole inside one passage, on word boundaries.
        for s in noisebench_text::sentences::sentences(&text) {
            let sw = words(&s);
            if sw.is_empty() || sw.len() > max {
                continue;
            }
            let whole = passages.iter().any(|p| {
                words(&p.text).windows(sw.len()).any(|w| w == sw.as_slice())
            });
            prop_assert!(whole, "sentence {:?} was cut", s);
        }
        for (i, p) in passages.iter().enumerate() {
            prop_assert_eq!(&p.id, &format!("d#{}", i + 1));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What each method shows
// ---------------------------------------------------------------------------------------------

/// Records every ask and answers `yes` (or nothing for an ask with `answer_none`).
#[derive(Default)]
struct Recorder {
    asks: Mutex<Vec<(String, Ask)>>,
}

impl Generator for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn tasks(&self) -> Vec<TaskInfo> {
        Vec::new()
    }
    fn generate(&self, _: &Llm, stage: &str, asks: &[Ask]) -> Vec<Result<Generated, LlmError>> {
        let mut log = self.asks.lock().unwrap();
        asks.iter()
            .map(|a| {
                log.push((stage.to_string(), a.clone()));
                Ok(Generated {
                    raw: r#"{"reasoning":null,"answer":"yes"}"#.into(),
                    answer: "yes".into(),
                    prompt_hash: format!("h-{}", a.item_id),
                    calls: 1,
                    steps: Vec::new(),
                })
            })
            .collect()
    }
}

const BRIDGE_Q: &str = "Did the Westgate bridge close for repairs in 2020?";

/// One claim, three documents: a low-credibility one matching every question term, a
/// high-credibility one matching two, an unrated one matching none.
fn bridge_data() -> EvalData {
    let mut low = doc(
        "low",
        "c1",
        "The Westgate bridge closed for repairs in 2020, officials said.",
    );
    low.credibility.level = Some("low".into());
    low.label = Some(DocLabel::Misleading);
    let mut high = doc("high", "c1", "Traffic on the Westgate bridge was normal.");
    high.credibility.level = Some("high".into());
    high.label = Some(DocLabel::Supporting);
    let none = doc("none", "c1", "It was sunny in the harbour all week.");
    EvalData {
        name: "test".into(),
        claims: vec![claim("c1", BRIDGE_Q, false, &["low", "high", "none"])],
        documents: vec![low, high, none],
        ..Default::default()
    }
}

fn shown(rec: &Recorder) -> Vec<Vec<String>> {
    rec.asks
        .lock()
        .unwrap()
        .iter()
        .map(|(_, a)| a.passages.iter().map(|p| p.id.clone()).collect())
        .collect()
}

#[test]
fn bm25_ranks_the_claims_passages_and_source_filtering_drops_the_low_source() {
    let data = bridge_data();
    let rec = Recorder::default();
    let outcomes = run_confact(
        &data,
        &Llm::offline(),
        &rec,
        &config(&["direct", "source_filtering", "sba_exp"], 2),
        BOOT,
        "eval",
    );
    assert_eq!(
        shown(&rec),
        vec![
            vec!["low#1", "high#1"],  // direct: BM25 order
            vec!["high#1", "none#1"], // SF: the low document is gone
            vec!["low#1", "high#1"],  // sba_exp
        ]
    );
    let asks = rec.asks.lock().unwrap();
    let (stage, direct) = &asks[0];
    assert_eq!(stage, "eval");
    assert_eq!(direct.question, BRIDGE_Q);
    assert_eq!(direct.style, Style::Direct);
    assert!(!direct.show_background);
    assert_eq!(direct.passages[0].source.as_deref(), Some("low.example"));
    assert_eq!(
        direct.passages[0].background.as_deref(),
        Some("Source: low.example. Rated credibility: low.")
    );
    let sba = &asks[2].1;
    assert_eq!(sba.style, Style::Discern);
    assert!(sba.show_background);
    // The retriever searches the same claim's passages.
    let more = direct.retriever.as_ref().unwrap().retrieve(BRIDGE_Q, 10);
    let ids: Vec<&str> = more.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, vec!["low#1", "high#1", "none#1"]);
    // SF's retriever no longer sees the dropped document.
    let sf = asks[1].1.retriever.as_ref().unwrap().retrieve(BRIDGE_Q, 10);
    assert!(sf.iter().all(|p| !p.id.starts_with("low")));
    // The claim is conflicting (supporting and misleading documents); gold is `no`.
    let s = &outcomes[0].scored[0];
    assert_eq!(s.groups.get("conflict").map(String::as_str), Some("yes"));
    assert_eq!(s.gold, "no");
    assert_eq!(s.parsed_answer.as_deref(), Some("yes"));
    assert_eq!(s.correct, Some(false));
    assert_eq!(s.judged_by, "rule:binary");
}

#[test]
fn a_claim_whose_documents_are_all_filtered_is_asked_without_passages() {
    let mut data = bridge_data();
    for d in &mut data.documents {
        d.credibility.level = Some("LOW".into());
    }
    let rec = Recorder::default();
    let out = run_confact(
        &data,
        &Llm::offline(),
        &rec,
        &config(&["source_filtering", "direct"], 5),
        BOOT,
        "eval",
    );
    assert_eq!(shown(&rec)[0], Vec::<String>::new());
    assert_eq!(shown(&rec)[1].len(), 3);
    assert_eq!(out[0].problems.get("filtered_all"), Some(&1));
    assert_eq!(out[1].problems.get("filtered_all"), None);
    assert_eq!(out[0].scored.len(), 1);
}

#[test]
fn credibility_weighting_orders_by_eq_2_on_given_scores() {
    let w = |id: &str, relevance: f64, credibility: f64| Weighted {
        id: id.into(),
        relevance,
        credibility,
    };
    let passages = vec![
        w("a", 1.0, 0.1),
        w("b", 0.6, 0.9),
        w("c", 0.0, 0.5),
        w("d", 0.3, 0.3),
    ];
    // Soft, beta 0.8: a 1.08, b 1.32, c 0.40, d 0.54.
    assert_eq!(
        weighted_order(&passages, 0.8, None),
        vec!["b", "a", "d", "c"]
    );
    // Hard, gamma 0.3: a 1.0 + 0, b 0.6 + 0.8, c 0 + 0.8, d 0.3 + 0.8 (0.3 >= gamma).
    assert_eq!(
        weighted_order(&passages, 0.8, Some(0.3)),
        vec!["b", "d", "a", "c"]
    );
    // No weight: relevance alone; a tie goes to the smaller id.
    assert_eq!(
        weighted_order(&passages, 0.0, None),
        vec!["a", "b", "d", "c"]
    );
    assert_eq!(
        weighted_order(&[w("y", 0.5, 0.5), w("x", 0.5, 0.5)], 0.8, None),
        vec!["x", "y"]
    );
}

#[test]
fn credibility_weighted_methods_rank_every_passage_by_normalised_bm25_plus_credibility() {
    let data = bridge_data();
    let rec = Recorder::default();
    run_confact(
        &data,
        &Llm::offline(),
        &rec,
        &config(&["cw_soft", "cw_hard"], 3),
        BOOT,
        "eval",
    );
    // The same computation by hand from the claim's BM25 scores.
    let cfg = ConfactConfig::default();
    let passages: Vec<_> = data
        .documents
        .iter()
        .flat_map(|d| split_passages(d, 256))
        .collect();
    let index = ClaimIndex::new(passages);
    let ranked = index.ranked(BRIDGE_Q);
    let raw: Vec<f64> = ranked.iter().map(|(_, s)| *s).collect();
    assert!(raw[0] > raw[1] && raw[1] > 0.0 && raw[2] == 0.0, "{raw:?}");
    let rel = min_max(&raw);
    let cred = |id: &str| match id {
        "low#1" => 0.1,
        "high#1" => 0.9,
        _ => 0.5,
    };
    let weighted: Vec<Weighted> = ranked
        .iter()
        .zip(&rel)
        .map(|((p, _), r)| Weighted {
            id: p.id.clone(),
            relevance: *r,
            credibility: cred(&p.id),
        })
        .collect();
    let soft = weighted_order(&weighted, cfg.beta, None);
    let hard = weighted_order(&weighted, cfg.beta, Some(cfg.gamma));
    assert_eq!(shown(&rec), vec![soft.clone(), hard.clone()]);
    // Hard: low 1.0 + 0, high rel + 0.8, none 0 + 0.8; soft: low 1.0 + 0.08, high rel + 0.72,
    // none 0 + 0.4. The unrated, irrelevant passage is last either way.
    assert_eq!(hard.last().map(String::as_str), Some("none#1"));
    assert_eq!(soft.last().map(String::as_str), Some("none#1"));
}

// ---------------------------------------------------------------------------------------------
// Against a fake endpoint
// ---------------------------------------------------------------------------------------------

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn llm(server: &FakeServer, cache: &Path) -> Llm {
    Llm::from_value(&strict_openai_config(&server.url(), cache), &repo_root()).unwrap()
}

fn answer(reasoning: Option<&str>, answer: &str) -> Reply {
    Reply::Content(json!({"reasoning": reasoning, "answer": answer}).to_string())
}

fn is_ensemble(body: &Value) -> bool {
    first_message(body, "system").starts_with("You settle fact-check questions")
}

/// Answers `eval_answer` by the first marker found in the user message: `FAIL` is a 400.
fn scripted(markers: &'static [(&'static str, &'static str)], body: &Value) -> Reply {
    let user = first_message(body, "user");
    for (marker, reply) in markers {
        if user.contains(marker) {
            if *reply == "FAIL" {
                return Reply::Status(400, None, r#"{"error": "bad request"}"#.into());
            }
            return answer(Some(&format!("R-{marker}")), reply);
        }
    }
    answer(None, "no marker")
}

/// Three claims sharing the bridge question's terms, each with three documents matching the
/// question strongly (`a`), less (`b`) and least (`c`), so BM25 ranks a, b, c.
fn vote_data(claims: &[&str]) -> EvalData {
    let mut data = EvalData {
        name: "votes".into(),
        ..Default::default()
    };
    for c in claims {
        let ids = [format!("{c}a"), format!("{c}b"), format!("{c}c")];
        let texts = [
            format!("The Westgate bridge closed for repairs in 2020, says {c}a."),
            format!("The Westgate bridge, says {c}b."),
            format!("A bridge, says {c}c."),
        ];
        for (id, text) in ids.iter().zip(&texts) {
            let mut d = doc(id, c, text);
            d.credibility.level = Some(if id.ends_with('a') { "low" } else { "high" }.into());
            data.documents.push(d);
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        data.claims.push(claim(c, BRIDGE_Q, true, &refs));
    }
    data
}

#[test]
fn majority_vote_breaks_ties_by_rank_ignores_out_of_scope_votes_and_fails_with_a_vote() {
    const MARKERS: &[(&str, &str)] = &[
        // vx: yes, no, out of scope -> tie -> the best-ranked valid vote (a): yes.
        ("vxa", "Yes."),
        ("vxb", "no"),
        ("vxc", "it is yes"),
        // vy: out of scope, no, yes -> tie -> b: no.
        ("vya", "maybe"),
        ("vyb", "Final answer: no"),
        ("vyc", "yes"),
        // vz: no valid vote.
        ("vza", "unclear"),
        ("vzb", "both"),
        ("vzc", "neither"),
        // vw: one vote fails.
        ("vwa", "yes"),
        ("vwb", "FAIL"),
        ("vwc", "yes"),
    ];
    let server = FakeServer::answering(|body| scripted(MARKERS, body));
    let cache = tempfile::tempdir().unwrap();
    let llm = llm(&server, cache.path());
    let data = vote_data(&["vx", "vy", "vz", "vw"]);
    let out = run_confact(
        &data,
        &llm,
        &Plain,
        &config(&["majority_vote"], 3),
        BOOT,
        "eval",
    );
    assert_eq!(out.len(), 1);
    let o = &out[0];
    assert_eq!(o.task, "confact_majority_vote");
    let by_id: BTreeMap<&str, _> = o.scored.iter().map(|s| (s.item_id.as_str(), s)).collect();
    assert_eq!(by_id["vx"].parsed_answer.as_deref(), Some("yes"));
    assert_eq!(by_id["vx"].correct, Some(true));
    assert_eq!(
        by_id["vx"].steps,
        vec!["vote:vxa#1:yes", "vote:vxb#1:no", "vote:vxc#1:none"]
    );
    assert_eq!(by_id["vx"].raw_answer, r#"["Yes.","no","it is yes"]"#);
    assert_eq!(by_id["vx"].prompt_hash.len(), 64);
    assert_eq!(by_id["vy"].parsed_answer.as_deref(), Some("no"));
    assert_eq!(by_id["vy"].correct, Some(false));
    assert_eq!(by_id["vz"].parsed_answer, None);
    assert_eq!(by_id["vz"].correct, Some(false));
    assert_eq!(by_id["vw"].correct, None);
    assert!(by_id["vw"].failure.as_deref().unwrap().starts_with("llm_"));
    assert_eq!(o.problems.get("out_of_scope"), Some(&1));
    let llm_problems: usize = o
        .problems
        .iter()
        .filter(|(k, _)| k.starts_with("llm_"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(llm_problems, 1);
    // One call per passage: 4 claims x 3 passages.
    assert_eq!(server.requests(), 12);
    // Accuracy: vx right; vy, vz wrong; vw failed (wrong).
    assert_eq!(o.overall("accuracy").unwrap().value, 0.25);
}

#[test]
fn the_ensemble_reads_every_candidate_with_its_reasons_and_background() {
    const MARKERS: &[(&str, &str)] = &[("ena", "yes"), ("enb", "no"), ("enc", "no")];
    let ensemble_bodies = std::sync::Arc::new(Mutex::new(Vec::<Value>::new()));
    let seen = std::sync::Arc::clone(&ensemble_bodies);
    let server = FakeServer::answering(move |body| {
        if is_ensemble(body) {
            seen.lock().unwrap().push(body.clone());
            return answer(Some("The high-credibility readers agree."), "No");
        }
        scripted(MARKERS, body)
    });
    let cache = tempfile::tempdir().unwrap();
    let llm = llm(&server, cache.path());
    let data = vote_data(&["en"]);
    let out = run_confact(
        &data,
        &llm,
        &Plain,
        &config(&["sba_ensemble"], 3),
        BOOT,
        "eval",
    );
    let bodies = ensemble_bodies.lock().unwrap();
    assert_eq!(bodies.len(), 1);
    let user = first_message(&bodies[0], "user");
    for needle in [
        BRIDGE_Q,
        "Reader 1 (evidence from ena.example)",
        "Answer given: yes",
        "Reasons given: R-ena",
        "About the outlet: Source: ena.example. Rated credibility: low.",
        "Reader 3 (evidence from enc.example)",
        "Reasons given: R-enc",
        "Rated credibility: high.",
    ] {
        assert!(user.contains(needle), "{needle:?} not in {user}");
    }
    // The per-passage asks showed backgrounds and asked for reasons.
    let first = server
        .bodies()
        .into_iter()
        .find(|b| !is_ensemble(b))
        .unwrap();
    assert!(first_message(&first, "user").contains("About the source:"));
    let s = &out[0].scored[0];
    assert_eq!(s.parsed_answer.as_deref(), Some("no"));
    assert_eq!(s.gold, "yes");
    assert_eq!(s.correct, Some(false));
    assert_eq!(
        s.steps,
        vec![
            "candidate:ena#1:yes",
            "candidate:enb#1:no",
            "candidate:enc#1:no",
            "ensemble"
        ]
    );
    assert_eq!(server.requests(), 4);
}

#[test]
fn accuracy_and_macro_f1_of_a_scripted_run_match_hand_counts() {
    // Markers in the questions; gold: q1 yes, q2 no, q3 yes, q4 no.
    const MARKERS: &[(&str, &str)] = &[
        ("qone", "yes"),   // right
        ("qtwo", "yes"),   // wrong
        ("qthree", "hmm"), // out of scope: wrong, predicts neither class
        ("qfour", "No"),   // right
    ];
    let server = FakeServer::answering(|body| scripted(MARKERS, body));
    let cache = tempfile::tempdir().unwrap();
    let llm = llm(&server, cache.path());
    let mut data = EvalData::default();
    for (id, verdict) in [
        ("qone", true),
        ("qtwo", false),
        ("qthree", true),
        ("qfour", false),
    ] {
        data.documents.push(doc(
            &format!("{id}-d"),
            id,
            "The harbour was calm all week.",
        ));
        data.claims.push(claim(
            id,
            &format!("Is claim {id} true?"),
            verdict,
            &[&format!("{id}-d")],
        ));
    }
    let out = run_confact(&data, &llm, &Plain, &config(&["direct"], 5), BOOT, "eval");
    let o = &out[0];
    assert_eq!(o.overall("accuracy").unwrap().value, 0.5);
    assert_eq!(o.overall("accuracy").unwrap().n, 4);
    // yes: tp 1, fp 1, fn 1 -> 0.5; no: tp 1, fp 0, fn 1 -> 2/3.
    let f1 = o.overall("macro_f1").unwrap().value;
    assert!((f1 - (0.5 + 2.0 / 3.0) / 2.0).abs() < 1e-12, "{f1}");
    assert_eq!(o.problems.get("out_of_scope"), Some(&1));
    assert!(o.overall("accuracy").unwrap().ci.is_some());
}

// ---------------------------------------------------------------------------------------------
// Offline
// ---------------------------------------------------------------------------------------------

#[test]
fn an_offline_run_gives_eleven_outcomes_over_every_claim() {
    let mut data = bridge_data();
    data.claims
        .push(claim("c2", "Is the moon made of cheese?", false, &[]));
    let mut cheese = doc(
        "cheese",
        "c3",
        "The claim that the moon is made of green cheese is a hoax, debunked by every survey.",
    );
    cheese.credibility.score = Some(0.95);
    data.documents.push(cheese);
    let mut c3 = claim("c3", "", false, &["cheese", "not-in-data"]);
    c3.question = None;
    c3.text = "The moon is made of green cheese.".into();
    data.claims.push(c3);

    let run = || {
        run_confact(
            &data,
            &Llm::offline(),
            &Plain,
            &ConfactConfig::default(),
            Bootstrap::default(),
            "eval",
        )
    };
    let out = run();
    assert_eq!(out.len(), 11);
    for (o, m) in out.iter().zip(METHODS) {
        assert_eq!(o.task, format!("confact_{m}"));
        assert_eq!(o.scored.len(), 3, "{m}");
        assert_eq!(o.overall("accuracy").unwrap().n, 3);
        assert!(o.overall("macro_f1").is_some());
        assert_eq!(o.problems.get("no_evidence"), Some(&1), "{m}");
        assert_eq!(o.problems.get("missing_document"), Some(&1), "{m}");
        assert!(o.scored.iter().all(|s| s.correct.is_some()), "{m}");
        assert!(o.scored.iter().all(|s| s.parsed_answer.is_some()), "{m}");
    }
    // The offline reader follows the debunking passage.
    let direct = &out[0];
    let c3 = direct.scored.iter().find(|s| s.item_id == "c3").unwrap();
    assert_eq!(c3.parsed_answer.as_deref(), Some("no"));
    assert_eq!(c3.correct, Some(true));
    // Deterministic.
    assert_eq!(run(), out);
}

#[test]
fn credibility_methods_do_not_run_without_credibility_and_count_documents_without_it() {
    use noisebench_eval::confact::CREDIBILITY_METHODS;
    use noisebench_eval::{EvalConfig, evaluate};
    let config = EvalConfig {
        families: vec!["confact".into()],
        bootstrap_samples: 0,
        ..EvalConfig::default()
    };
    // bridge_data's documents carry no credibility.
    let mut data = bridge_data();
    for d in &mut data.documents {
        d.credibility = Credibility::default();
    }
    let e = evaluate(&data, &Llm::offline(), &config).unwrap();
    let tasks: Vec<&str> = e.outcomes.iter().map(|o| o.task.as_str()).collect();
    assert_eq!(
        tasks,
        [
            "confact_direct",
            "confact_majority_vote",
            "confact_discern",
            "confact_cot"
        ]
    );
    for m in CREDIBILITY_METHODS {
        let why = &e.skipped[&format!("confact_{m}")];
        assert!(why.contains("credibility"), "{m}: {why}");
    }
    // One document with a level: every method runs, and the credibility methods count the
    // documents without any.
    data.documents[0].credibility.level = Some("high".into());
    let without = data.documents.len() - 1;
    let e = evaluate(&data, &Llm::offline(), &config).unwrap();
    assert_eq!(e.outcomes.len(), 11);
    assert!(e.skipped.is_empty(), "{:?}", e.skipped);
    for o in &e.outcomes {
        let m = o.task.strip_prefix("confact_").unwrap();
        let want = CREDIBILITY_METHODS.contains(&m).then_some(&without);
        assert_eq!(o.problems.get("no_credibility"), want, "{m}");
    }
}
