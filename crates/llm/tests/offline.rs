//! The offline backend answers every task deterministically (same input, same bytes), and every
//! task's prompt template renders with the same inputs.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_llm::prompt::Prompts;
use noisebench_llm::task::*;
use noisebench_llm::{Llm, LlmConfig};

const CLAIM: &str = "Says the city of Springfield banned plastic bags in 2019.";
const DOC: &str = "Springfield's council banned single-use plastic bags in 2019, city records show. \
                   The ban took effect in March.";
const CHUNK_1: &str = "Luxembourg implemented free public transport in 2020. The policy is popular.\n\n\
                       | Indicator | 2021 | 2022 |\n|---|---|---|\n| GDP growth | 6.9% | 1.5% |";
const CHUNK_2: &str = "Free public transport aims to reduce carbon emissions from commuting.";

fn triplet(e1: &str, r: &str, e2: &str, c: &str) -> TripletText {
    TripletText {
        entity_1: e1.into(),
        relation: r.into(),
        entity_2: e2.into(),
        chunk_id: c.into(),
        source_sentence: format!("{e1} {r} {e2}."),
    }
}

/// Run `T` on `input` through a fresh offline handle and return the answer's JSON bytes, after
/// checking that its prompt renders.
fn answer<T: Task>(prompts: &Prompts, input: T::Input) -> String {
    let (messages, prompt) = prompts.render(T::NAME, &input).unwrap();
    assert!(!prompt.version.is_empty());
    let user = &messages.last().unwrap().content;
    assert!(
        user.contains("\"type\""),
        "{}: the schema is in the prompt",
        T::NAME
    );
    assert!(!user.contains("{{"), "{}: unrendered template", T::NAME);
    let a = Llm::offline().run::<T>("test", input.clone()).unwrap();
    let b = Llm::offline().run::<T>("test", input.clone()).unwrap();
    assert_eq!(a.provenance, "offline");
    assert_eq!(a.request_hash, b.request_hash);
    let (ja, jb) = (
        serde_json::to_string(&a.value).unwrap(),
        serde_json::to_string(&b.value).unwrap(),
    );
    assert_eq!(ja, jb, "{}: same input, same bytes", T::NAME);
    // The offline answer satisfies the task's own checks, as a model's must.
    T::check(&input, &a.value).unwrap_or_else(|e| panic!("{}: {e}", T::NAME));
    ja
}

#[test]
fn every_task_answers_deterministically_and_every_prompt_renders() {
    let prompts =
        Prompts::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts"))
            .unwrap();
    let mut got = BTreeMap::new();
    got.insert(
        "keywords",
        answer::<Keywords>(
            &prompts,
            KeywordsInput {
                claim: CLAIM.into(),
                max_keywords: 4,
            },
        ),
    );
    got.insert(
        "claim_to_question",
        answer::<ClaimToQuestion>(
            &prompts,
            ClaimToQuestionInput {
                claim: CLAIM.into(),
                claim_date: Some("2019-05-01".into()),
                speaker: None,
            },
        ),
    );
    got.insert(
        "exam_verdict",
        answer::<ExamVerdict>(
            &prompts,
            ExamVerdictInput {
                claim: CLAIM.into(),
                claim_date: None,
                document_title: Some("Bag ban".into()),
                document: Some(DOC.into()),
            },
        ),
    );
    got.insert(
        "stance_url",
        answer::<StanceUrl>(
            &prompts,
            StanceUrlInput {
                claim: CLAIM.into(),
                claim_date: None,
                url: "https://news.example/springfield-plastic-bags-ban".into(),
            },
        ),
    );
    let st = StanceTextInput {
        claim: CLAIM.into(),
        claim_date: Some("2019-05-01".into()),
        text: DOC.into(),
    };
    got.insert("stance_text", answer::<StanceText>(&prompts, st.clone()));
    got.insert("stance_reasoned", answer::<StanceReasoned>(&prompts, st));
    got.insert(
        "credibility",
        answer::<Credibility>(
            &prompts,
            CredibilityInput {
                domain: "www.springfield.gov".into(),
                description: None,
            },
        ),
    );
    got.insert(
        "triplets",
        answer::<Triplets>(
            &prompts,
            TripletsInput {
                domain: "economics".into(),
                chunks: vec![
                    ChunkText {
                        chunk_id: "lux_chunk_0".into(),
                        text: CHUNK_1.into(),
                    },
                    ChunkText {
                        chunk_id: "lux_chunk_1".into(),
                        text: CHUNK_2.into(),
                    },
                ],
                target: 20,
            },
        ),
    );
    let t1 = triplet(
        "Luxembourg",
        "implemented",
        "free public transport",
        "lux_chunk_0",
    );
    let t2 = triplet(
        "free public transport",
        "aims to reduce",
        "carbon emissions",
        "lux_chunk_1",
    );
    got.insert(
        "qa_single",
        answer::<QaSingle>(
            &prompts,
            QaSingleInput {
                triplet: t1.clone(),
                chunk: CHUNK_1.into(),
                metadata: BTreeMap::from([("country".to_string(), "Luxembourg".to_string())]),
            },
        ),
    );
    got.insert(
        "qa_multi",
        answer::<QaMulti>(
            &prompts,
            QaMultiInput {
                pattern: Pattern::Chain,
                triplets: vec![t1, t2],
                chunks: vec![CHUNK_1.into(), CHUNK_2.into()],
            },
        ),
    );
    got.insert(
        "qa_judge",
        answer::<QaJudge>(
            &prompts,
            QaJudgeInput {
                question: "Luxembourg implemented something that aims to reduce what?".into(),
                answer: "carbon emissions".into(),
                chunks: vec![CHUNK_1.into(), CHUNK_2.into()],
                source_sentences: vec![
                    "Luxembourg implemented free public transport in 2020.".into(),
                    CHUNK_2.into(),
                ],
                multi_hop: true,
            },
        ),
    );
    let q = RewriteInput {
        query: "What did Luxembourg implement in 2020?".into(),
        candidates: 3,
    };
    got.insert("query_grammar", answer::<QueryGrammar>(&prompts, q.clone()));
    got.insert("query_irrelevant", answer::<QueryIrrelevant>(&prompts, q));
    got.insert(
        "back_translate",
        answer::<BackTranslate>(
            &prompts,
            BackTranslateInput {
                text: CHUNK_1.into(),
                pivot_language: "French".into(),
            },
        ),
    );
    got.insert(
        "answer_judge",
        answer::<AnswerJudge>(
            &prompts,
            AnswerJudgeInput {
                question: "What does free public transport aim to reduce?".into(),
                gold_answer: "carbon emissions".into(),
                prediction: "It aims to reduce carbon emissions from commuting.".into(),
            },
        ),
    );
    assert_eq!(got.len(), TaskName::ALL.len(), "every task covered");

    // The answers themselves, asserted exactly.
    let want: BTreeMap<&str, &str> = BTreeMap::from([
        (
            "keywords",
            r#"{"keywords":["Springfield banned plastic bags","city","2019"]}"#,
        ),
        (
            "claim_to_question",
            r#"{"question":"Is it true that the city of Springfield banned plastic bags in 2019?"}"#,
        ),
        ("exam_verdict", r#"{"verdict":"true"}"#),
        ("stance_url", r#"{"stance":"support"}"#),
        ("stance_text", r#"{"stance":"support"}"#),
        (
            "credibility",
            r#"{"credibility":"high","source_type":"government"}"#,
        ),
        (
            "qa_single",
            r#"{"question":"Luxembourg implemented what, according to Luxembourg's report?","answer":"free public transport"}"#,
        ),
        (
            "qa_multi",
            r#"{"question":"Luxembourg implemented something that aims to reduce what?","answer":"carbon emissions"}"#,
        ),
        (
            "qa_judge",
            r#"{"clarity":5,"correctness":5,"reasonableness":5}"#,
        ),
        ("answer_judge", r#"{"correct":true}"#),
    ]);
    for (task, json) in want {
        assert_eq!(got[task], json, "{task}");
    }
    let triplets: TripletsOutput = serde_json::from_str(&got["triplets"]).unwrap();
    assert_eq!(triplets.triplets.len(), 4);
    assert!(
        triplets.triplets.iter().all(|t| {
            let chunk = if t.answer_chunk_id == "lux_chunk_0" {
                CHUNK_1
            } else {
                CHUNK_2
            };
            chunk.contains(&t.source_sentence)
        }),
        "every offline triplet is grounded"
    );
    assert!(got["stance_reasoned"].contains("Final answer: Support."));
    assert!(got["back_translate"].contains("6.9%"), "numbers kept");
}

#[test]
fn the_offline_handle_logs_calls_with_the_rules_version() {
    let llm = Llm::offline();
    let inputs = vec![
        KeywordsInput {
            claim: "a b c".into(),
            max_keywords: 2,
        },
        KeywordsInput {
            claim: "Taxes rose sharply".into(),
            max_keywords: 2,
        },
    ];
    let r = llm.run_batch::<Keywords>("queries", inputs);
    assert!(r.iter().all(Result::is_ok));
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 2);
    assert!(log.iter().all(|c| c.backend == "offline"
        && c.prompt_version == noisebench_llm::offline::RULES_VERSION
        && c.stage == "queries"));
    assert_eq!(llm.provenance(TaskName::Keywords), "offline");
}

#[test]
fn the_offline_backend_can_cache_and_replay_in_cache_only_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LlmConfig::default();
    cfg.cache.dir = dir.path().to_path_buf();
    cfg.cache.offline = true;
    cfg.embeddings.backend = noisebench_llm::EmbeddingBackend::Hashed;
    let llm = Llm::new(cfg.clone(), Path::new("/")).unwrap();
    let input = KeywordsInput {
        claim: "Taxes rose sharply".into(),
        max_keywords: 2,
    };
    let a = llm.run::<Keywords>("q", input.clone()).unwrap();
    assert!(!a.cache_hit);
    cfg.cache.mode = noisebench_llm::CacheMode::CacheOnly;
    let ro = Llm::new(cfg, Path::new("/")).unwrap();
    let b = ro.run::<Keywords>("q", input).unwrap();
    assert!(b.cache_hit);
    assert_eq!(a.value, b.value);
    assert_eq!(
        ro.run::<Keywords>(
            "q",
            KeywordsInput {
                claim: "new".into(),
                max_keywords: 2
            }
        )
        .unwrap_err()
        .reason(),
        "cache_miss"
    );
}
