//! The reference systems against a fake OpenAI-compatible endpoint whose replies are scripted per
//! prompt: Astute RAG's call counts, what each round sees and how failures stay with their ask;
//! CounterRefine's KEEP/REVISE gate, every rejection rule, the draft fallbacks and the
//! answer-conditioned queries; and both offline, twice.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use noisebench_eval::systems::{Astute, CounterRefine};
use noisebench_eval::{AnswerForm, Ask, Generated, Generator, Passage, Plain, Retriever};
use noisebench_eval::{AstuteConfig, CounterRefineConfig};
use noisebench_llm::{Llm, LlmError};
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use serde_json::{Value, json};

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn llm(server: &FakeServer, cache: &Path) -> Llm {
    Llm::from_value(&strict_openai_config(&server.url(), cache), &repo_root()).unwrap()
}

/// Which of the systems' prompts a request carries, from a phrase of its system message.
fn kind(body: &Value) -> &'static str {
    let system = first_message(body, "system");
    [
        ("what you reliably know", "generate"),
        ("You consolidate evidence", "consolidate"),
        ("settle on one final answer", "answer"),
        ("You draft a short answer", "draft"),
        ("You check a draft answer", "refine"),
    ]
    .into_iter()
    .find(|(marker, _)| system.contains(marker))
    .map(|(_, k)| k)
    .unwrap_or("unknown")
}

/// The question a request is about (the `Question: ` line of its user message).
fn question_of(body: &Value) -> String {
    first_message(body, "user")
        .lines()
        .find_map(|l| l.strip_prefix("Question: "))
        .unwrap_or("")
        .to_string()
}

fn content(v: Value) -> Reply {
    Reply::Content(v.to_string())
}

fn passage(id: &str, text: &str, source: Option<&str>) -> Passage {
    Passage {
        id: id.into(),
        text: text.into(),
        source: source.map(String::from),
        background: None,
    }
}

fn open_ask(id: &str, question: &str, passages: Vec<Passage>) -> Ask {
    let mut ask = Ask::new(id, question, AnswerForm::Open);
    ask.passages = passages;
    ask
}

fn count_by_kind(server: &FakeServer) -> BTreeMap<&'static str, usize> {
    let mut n = BTreeMap::new();
    for body in server.bodies() {
        *n.entry(kind(&body)).or_default() += 1;
    }
    n
}

fn user_texts(server: &FakeServer, of: &str) -> Vec<String> {
    server
        .bodies()
        .iter()
        .filter(|b| kind(b) == of)
        .map(|b| first_message(b, "user").to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Astute RAG

/// Scripted Astute replies: one internal passage per question; each consolidation round
/// answers `ROUND-<j> <question>`, reading j - 1 from the previous round's passages it is shown;
/// the answer names the last round it saw.
fn astute_script(body: &Value) -> Reply {
    let q = question_of(body);
    let user = first_message(body, "user");
    match kind(body) {
        "generate" => content(json!({"passages": [format!("MEMORY about {q}")], "no_more": true})),
        "consolidate" => {
            let previous = (1..=3)
                .rev()
                .find(|j| user.contains(&format!("ROUND-{j} ")))
                .unwrap_or(0);
            content(json!({"passages": [
                {"text": format!("ROUND-{} {q}", previous + 1), "sources": [1, 3]}
            ]}))
        }
        "answer" => {
            let last = (1..=3)
                .rev()
                .find(|j| user.contains(&format!("ROUND-{j} ")))
                .unwrap_or(0);
            content(json!({"reasoning": "compared", "answer": format!("after round {last}")}))
        }
        _ => Reply::Status(400, None, "unexpected prompt".into()),
    }
}

fn astute_asks() -> Vec<Ask> {
    [
        "Which company leases Westgate Basin?",
        "Who dredged the basin?",
    ]
    .iter()
    .enumerate()
    .map(|(i, q)| {
        open_ask(
            &format!("q{i}"),
            q,
            vec![
                passage(
                    "c1",
                    "Ostrava Sawmill Group leases the basin.",
                    Some("port.example"),
                ),
                passage("c2", "A recipe for apple pie.", None),
            ],
        )
    })
    .collect()
}

#[test]
fn astute_makes_one_generate_t_minus_one_consolidate_and_one_answer_call_per_ask() {
    for t in 1..=3 {
        let server = FakeServer::answering(astute_script);
        let dir = tempfile::tempdir().unwrap();
        let astute = Astute {
            config: AstuteConfig {
                iterations: t,
                max_internal_passages: 2,
            },
        };
        let asks = astute_asks();
        let out: Vec<Generated> = astute
            .generate(&llm(&server, dir.path()), "eval", &asks)
            .into_iter()
            .map(Result::unwrap)
            .collect();

        let mut expected = BTreeMap::from([("generate", 2), ("answer", 2)]);
        if t > 1 {
            expected.insert("consolidate", 2 * (t - 1));
        }
        assert_eq!(count_by_kind(&server), expected, "t = {t}");

        let mut steps = vec!["generate:1".to_string()];
        steps.extend((1..t).map(|j| format!("consolidate:{j}")));
        steps.push("answer".into());
        for g in &out {
            assert_eq!(g.calls, t + 1);
            assert_eq!(g.steps, steps);
            assert_eq!(g.answer, format!("after round {}", t - 1));
            assert_eq!(
                serde_json::from_str::<Value>(&g.raw).unwrap()["answer"],
                g.answer.as_str()
            );
            assert_eq!(g.prompt_hash.len(), 64, "{}", g.prompt_hash);
        }

        // Round j is shown round j - 1's passages (none in round 1), with what they cite.
        let consolidations = user_texts(&server, "consolidate");
        for j in 1..t {
            let seen: Vec<&String> = consolidations
                .iter()
                .filter(|u| u.contains("Question: Who dredged the basin?"))
                .filter(|u| {
                    if j == 1 {
                        !u.contains("ROUND-")
                    } else {
                        u.contains(&format!(
                            "(1) draws on passages 1, 3 (source: internal and external)\n\
                             ROUND-{} Who dredged the basin?",
                            j - 1
                        ))
                    }
                })
                .collect();
            assert_eq!(seen.len(), 1, "round {j} of t = {t}");
        }
        // The model's own passage is labelled internal, the given ones external with their
        // source, in every consolidation and answer prompt.
        let mut prompts = consolidations;
        prompts.extend(user_texts(&server, "answer"));
        for u in &prompts {
            assert!(u.contains("[1] source: external, port.example\n"), "{u}");
            assert!(u.contains("[2] source: external\n"), "{u}");
            assert!(
                u.contains("[3] source: internal (the model's own knowledge)\nMEMORY about"),
                "{u}"
            );
        }
        // The answer sees the last round only, or no consolidated set when t = 1.
        for u in user_texts(&server, "answer") {
            assert_eq!(u.contains("Consolidated passages:"), t > 1, "{u}");
        }
    }
}

#[test]
fn astute_refuses_more_passages_than_the_maximum() {
    // The generate task's bounds are 0 to m̂ passages, in its schema and its check alike: a
    // model that writes more is re-asked and then fails the ask with the check's reason, rather
    // than having its passages cut quietly.
    let server = FakeServer::answering(|body| match kind(body) {
        "generate" => content(json!({"passages": ["one", " ", "two", "three"], "no_more": false})),
        _ => astute_script(body),
    });
    let dir = tempfile::tempdir().unwrap();
    let astute = Astute {
        config: AstuteConfig {
            iterations: 1,
            max_internal_passages: 2,
        },
    };
    let err = astute
        .generate(&llm(&server, dir.path()), "eval", &astute_asks()[..1])
        .remove(0)
        .unwrap_err();
    let err = format!("{err:?}");
    assert!(
        err.contains("`passages` has 4 items, wanted 0 to 2"),
        "{err}"
    );
    assert!(user_texts(&server, "answer").is_empty());
}

#[test]
fn a_failed_astute_step_fails_only_its_ask() {
    let server = FakeServer::answering(|body| {
        let q = question_of(body);
        match kind(body) {
            "generate" if q.starts_with("Fails to generate") => {
                Reply::Status(400, None, "no".into())
            }
            "consolidate" if q.starts_with("Fails to consolidate") => {
                Reply::Status(400, None, "no".into())
            }
            "answer" if q.starts_with("Fails to answer") => Reply::Content("not JSON".into()),
            _ => astute_script(body),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let asks: Vec<Ask> = [
        "Fails to generate: who?",
        "Works: who?",
        "Fails to consolidate: who?",
        "Fails to answer: who?",
    ]
    .iter()
    .enumerate()
    .map(|(i, q)| open_ask(&i.to_string(), q, vec![passage("c", "Some text.", None)]))
    .collect();
    let out = Astute::default().generate(&llm(&server, dir.path()), "eval", &asks);
    assert_eq!(out.len(), 4);
    assert!(
        matches!(out[0], Err(LlmError::Http { status: 400, .. })),
        "{:?}",
        out[0]
    );
    assert_eq!(out[1].as_ref().unwrap().answer, "after round 1");
    assert!(
        matches!(out[2], Err(LlmError::Http { status: 400, .. })),
        "{:?}",
        out[2]
    );
    assert!(
        matches!(out[3], Err(LlmError::Unparseable { .. })),
        "{:?}",
        out[3]
    );
    // A failed ask makes no further call.
    assert_eq!(
        count_by_kind(&server),
        BTreeMap::from([("generate", 4), ("consolidate", 3), ("answer", 2)])
    );
}

// ---------------------------------------------------------------------------------------------
// CounterRefine

/// A retriever that records the queries it is asked and answers each with the same passages.
struct Recorder {
    queries: Mutex<Vec<(String, usize)>>,
    passages: Vec<Passage>,
}

impl Recorder {
    fn new(passages: Vec<Passage>) -> Arc<Recorder> {
        Arc::new(Recorder {
            queries: Mutex::new(Vec::new()),
            passages,
        })
    }

    fn queries(&self) -> Vec<String> {
        self.queries
            .lock()
            .unwrap()
            .iter()
            .map(|(q, _)| q.clone())
            .collect()
    }
}

impl Retriever for Recorder {
    fn retrieve(&self, query: &str, k: usize) -> Vec<Passage> {
        self.queries.lock().unwrap().push((query.to_string(), k));
        self.passages.iter().take(k).cloned().collect()
    }
}

/// One scripted CounterRefine item: the draft from passages, the closed-book draft, and the
/// refine reply.
struct Script {
    draft: Value,
    closed_book: Value,
    refine: Value,
}

fn counterrefine_server(scripts: BTreeMap<String, Script>) -> FakeServer {
    FakeServer::answering(move |body| {
        let q = question_of(body);
        let Some(s) = scripts.get(&q) else {
            return Reply::Status(400, None, format!("no script for {q}"));
        };
        match kind(body) {
            "draft" if first_message(body, "user").contains("Evidence 1") => {
                content(s.draft.clone())
            }
            "draft" => content(s.closed_book.clone()),
            "refine" => content(s.refine.clone()),
            _ => Reply::Status(400, None, "unexpected prompt".into()),
        }
    })
}

fn script(draft: &str, decision: &str, answer: &str, evidence: Option<&str>) -> Script {
    Script {
        draft: json!({"answer": draft}),
        closed_book: json!({"answer": "I don't know"}),
        refine: json!({"decision": decision, "answer": answer, "evidence": evidence}),
    }
}

const EVIDENCE: &str = "The 1999 prize went to Annick Bricaud (oceanographer) of Brest, \
                        who logged 1 , 000 samples.";

/// One refine case: what the gate says and what the system must return.
struct Case {
    question: &'static str,
    form: AnswerForm,
    draft: &'static str,
    decision: &'static str,
    revised: &'static str,
    evidence: Option<&'static str>,
    expected: &'static str,
    /// The last step: `refine:keep`, `revision_accepted` or `revision_rejected:<reason>`.
    step: &'static str,
}

/// A revision of an open question's draft, with [`EVIDENCE`], accepted as `expected`.
fn accepted(
    question: &'static str,
    draft: &'static str,
    revised: &'static str,
    expected: &'static str,
) -> Case {
    Case {
        question,
        form: AnswerForm::Open,
        draft,
        decision: "REVISE",
        revised,
        evidence: Some(EVIDENCE),
        expected,
        step: "revision_accepted",
    }
}

/// A revision of the draft `Marie Curie` (a who question), rejected for `reason`.
fn rejected(question: &'static str, revised: &'static str, reason: &'static str) -> Case {
    Case {
        step: reason,
        expected: "Marie Curie",
        ..accepted(question, "Marie Curie", revised, "")
    }
}

#[test]
fn counterrefine_keeps_or_revises_through_the_validator() {
    let yes_no = AnswerForm::Binary {
        yes: "yes".into(),
        no: "no".into(),
    };
    let cases = vec![
        Case {
            decision: "KEEP",
            evidence: None,
            step: "refine:keep",
            ..rejected("Who won the prize? (keep)", "Somebody else", "")
        },
        accepted(
            "Who won the prize?",
            "Marie Curie",
            "Annick Bricaud (oceanographer)",
            "Annick Bricaud",
        ),
        accepted("Where is the lab?", "Paris", "in Brest", "Brest"),
        accepted("In what year was the prize won?", "2001", "in 1999", "1999"),
        accepted("How many samples were logged?", "12", "1 , 000", "1,000"),
        Case {
            form: yes_no.clone(),
            ..accepted("Did Bricaud win the prize? (accepted)", "no", "Yes.", "yes")
        },
        rejected("Who won the prize? (empty)", " ", "revision_rejected:empty"),
        rejected(
            "Who won the prize? (refusal)",
            "I don't know",
            "revision_rejected:non_responsive",
        ),
        rejected(
            "Who won the prize? (same)",
            "marie  curie.",
            "revision_rejected:same_as_draft",
        ),
        Case {
            form: yes_no,
            draft: "no",
            expected: "no",
            ..rejected(
                "Did Bricaud win the prize?",
                "yes, she did",
                "revision_rejected:not_yes_no",
            )
        },
        rejected(
            "Who won the prize? (descriptor)",
            "the person who logged samples",
            "revision_rejected:descriptor",
        ),
        rejected(
            "Who won the prize? (clause)",
            "Bricaud, who logged samples",
            "revision_rejected:clause_like",
        ),
        rejected(
            "Who won the prize? (long)",
            "Annick Bricaud Of Brest And The Oceanographic Institute Laboratory",
            "revision_rejected:too_long",
        ),
        Case {
            draft: "2001",
            expected: "2001",
            ..rejected(
                "When was the prize won?",
                "recently",
                "revision_rejected:no_marker",
            )
        },
        Case {
            evidence: None,
            ..rejected(
                "Who won the prize? (no evidence)",
                "Annick Bricaud",
                "revision_rejected:no_evidence",
            )
        },
        Case {
            evidence: Some("NONE"),
            ..rejected(
                "Who won the prize? (none)",
                "Annick Bricaud",
                "revision_rejected:no_evidence",
            )
        },
        rejected(
            "Who won the prize? (overlap)",
            "Jean Dupont",
            "revision_rejected:weak_overlap",
        ),
    ];
    let scripts = cases
        .iter()
        .map(|c| {
            let s = script(c.draft, c.decision, c.revised, c.evidence);
            (c.question.to_string(), s)
        })
        .collect();
    let server = counterrefine_server(scripts);
    let dir = tempfile::tempdir().unwrap();
    let asks: Vec<Ask> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut ask = Ask::new(i.to_string(), c.question, c.form.clone());
            ask.passages = vec![passage("r0", "Marie Curie won many prizes.", None)];
            ask
        })
        .collect();
    let out = CounterRefine::default().generate(&llm(&server, dir.path()), "eval", &asks);
    for (c, g) in cases.iter().zip(out) {
        let g = g.unwrap();
        assert_eq!((c.question, g.answer.as_str()), (c.question, c.expected));
        let mut steps = vec!["draft", "retrieve:0"];
        if c.decision == "KEEP" {
            steps.push(c.step);
        } else {
            steps.extend(["refine:revise", c.step]);
        }
        assert_eq!(g.steps, steps, "{}", c.question);
        assert_eq!(g.calls, 2);
        assert_eq!(
            serde_json::from_str::<Value>(&g.raw).unwrap()["decision"],
            c.decision
        );
    }
    assert_eq!(
        count_by_kind(&server),
        BTreeMap::from([("draft", cases.len()), ("refine", cases.len())])
    );
}

#[test]
fn counterrefine_falls_back_to_a_closed_book_draft_then_to_a_default() {
    let mut scripts = BTreeMap::new();
    scripts.insert(
        "Where is the lab?".to_string(),
        Script {
            draft: json!({"answer": ""}),
            closed_book: json!({"answer": "Lyon"}),
            refine: json!({"decision": "KEEP", "answer": "Lyon", "evidence": null}),
        },
    );
    scripts.insert(
        "Who runs the lab?".to_string(),
        script("I don't know.", "KEEP", "unknown", None),
    );
    scripts.insert(
        "Is the lab open?".to_string(),
        script("I do not know", "KEEP", "false", None),
    );
    scripts.insert(
        "Who funds the lab?".to_string(),
        script("unused", "KEEP", "unknown", None),
    );
    let server = counterrefine_server(scripts);
    let dir = tempfile::tempdir().unwrap();
    let with_passage = |q: &str, form: AnswerForm| {
        let mut ask = Ask::new(q, q, form);
        ask.passages = vec![passage("r0", "A lab report.", None)];
        ask
    };
    let asks = vec![
        with_passage("Where is the lab?", AnswerForm::Open),
        with_passage("Who runs the lab?", AnswerForm::Open),
        with_passage(
            "Is the lab open?",
            AnswerForm::Binary {
                yes: "true".into(),
                no: "false".into(),
            },
        ),
        // No passage: the draft is closed-book already, so no second one.
        Ask::new("none", "Who funds the lab?", AnswerForm::Open),
    ];
    let out: Vec<Generated> = CounterRefine::default()
        .generate(&llm(&server, dir.path()), "eval", &asks)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(out[0].answer, "Lyon");
    assert_eq!(
        out[0].steps,
        ["draft", "draft:closed_book", "retrieve:0", "refine:keep"]
    );
    assert_eq!(out[0].calls, 3);
    assert_eq!(out[1].answer, "unknown");
    assert_eq!(
        out[1].steps,
        [
            "draft",
            "draft:closed_book",
            "draft:default",
            "retrieve:0",
            "refine:keep"
        ]
    );
    assert_eq!(out[2].answer, "false");
    assert_eq!(
        out[2].steps[..3],
        ["draft", "draft:closed_book", "draft:default"]
    );
    assert_eq!(out[3].answer, "unknown");
    assert_eq!(
        out[3].steps,
        ["draft", "draft:default", "retrieve:0", "refine:keep"]
    );
    assert_eq!(out[3].calls, 2);
    // Every closed-book draft prompt carries no evidence.
    let closed: Vec<String> = user_texts(&server, "draft")
        .into_iter()
        .filter(|u| !u.contains("Evidence 1"))
        .collect();
    assert_eq!(closed.len(), 4);
    assert!(
        closed
            .iter()
            .all(|u| u.contains("Answer from what you know."))
    );
}

#[test]
fn counterrefine_queries_are_conditioned_on_the_draft() {
    let mut scripts = BTreeMap::new();
    scripts.insert(
        "Who leases Westgate Basin?".to_string(),
        script("Ostrava Group", "KEEP", "Ostrava Group", None),
    );
    scripts.insert(
        "What is leased at the port?".to_string(),
        script("Westgate Basin", "KEEP", "Westgate Basin", None),
    );
    scripts.insert(
        "When was the lease signed?".to_string(),
        script("2001", "KEEP", "2001", None),
    );
    scripts.insert(
        "How many berths are leased?".to_string(),
        script("twelve", "KEEP", "twelve", None),
    );
    let server = counterrefine_server(scripts);
    let dir = tempfile::tempdir().unwrap();
    let r0 = vec![
        passage("a", "Ostrava Group leases a basin.", None),
        passage("b", "The port has berths.", None),
    ];
    let found = vec![
        passage("b", "The port has berths.", None),
        passage("c", "Ostrava Group signed in 2001.", Some("news.example")),
    ];
    let questions = [
        "Who leases Westgate Basin?",
        "What is leased at the port?",
        "When was the lease signed?",
        "How many berths are leased?",
    ];
    let recorders: Vec<Arc<Recorder>> = questions
        .iter()
        .map(|_| Recorder::new(found.clone()))
        .collect();
    let asks: Vec<Ask> = questions
        .iter()
        .zip(&recorders)
        .map(|(q, r)| {
            let mut ask = open_ask(q, q, r0.clone());
            ask.retriever = Some(r.clone() as Arc<dyn Retriever>);
            ask
        })
        .collect();
    let config = CounterRefineConfig {
        k_refine: 3,
        ..CounterRefineConfig::default()
    };
    let out = CounterRefine { config }.generate(&llm(&server, dir.path()), "eval", &asks);
    let drafts = ["Ostrava Group", "Westgate Basin", "2001", "twelve"];
    for (i, (q, a0)) in questions.iter().zip(drafts).enumerate() {
        let mut expected = vec![q.to_string(), format!("{q} \"{a0}\"")];
        if i != 1 {
            expected.push(format!("\"{a0}\""));
        }
        assert_eq!(recorders[i].queries(), expected);
        assert!(
            recorders[i]
                .queries
                .lock()
                .unwrap()
                .iter()
                .all(|(_, k)| *k == 3)
        );
        let g = out[i].as_ref().unwrap();
        // `b` is in R0 already: one passage beyond it.
        assert_eq!(g.steps, ["draft", "retrieve:1", "refine:keep"]);
        assert_eq!(g.answer, a0);
    }
    // The refine prompt shows R1 with the new passage marked; the draft prompt R0 only.
    let refine = user_texts(&server, "refine");
    assert!(refine.iter().all(|u| u.contains(
        "Evidence 3 (found when checking the draft) (news.example):\nOstrava Group signed in 2001."
    )));
    assert!(refine.iter().all(|u| !u.contains("Evidence 4")));
    assert!(
        user_texts(&server, "draft")
            .iter()
            .all(|u| !u.contains("signed in 2001"))
    );
}

#[test]
fn counterrefine_drafts_from_the_first_k_base_passages_and_a_failure_stays_with_its_ask() {
    let mut scripts = BTreeMap::new();
    scripts.insert(
        "Who leases the basin?".to_string(),
        script("Ostrava Group", "KEEP", "Ostrava Group", None),
    );
    scripts.insert(
        "Who refines badly?".to_string(),
        Script {
            draft: json!({"answer": "Someone"}),
            closed_book: json!({"answer": "Someone"}),
            refine: json!({"decision": "MAYBE", "answer": "x", "evidence": null}),
        },
    );
    let server = counterrefine_server(scripts);
    let dir = tempfile::tempdir().unwrap();
    let many: Vec<Passage> = (1..=4)
        .map(|i| passage(&format!("p{i}"), &format!("PASSAGE-{i} text."), None))
        .collect();
    let asks = vec![
        open_ask("a", "Who leases the basin?", many.clone()),
        open_ask("b", "Who refines badly?", many),
    ];
    let config = CounterRefineConfig {
        k_base: 2,
        ..CounterRefineConfig::default()
    };
    let out = CounterRefine { config }.generate(&llm(&server, dir.path()), "eval", &asks);
    assert_eq!(out[0].as_ref().unwrap().answer, "Ostrava Group");
    assert!(
        matches!(out[1], Err(LlmError::Unparseable { .. })),
        "{:?}",
        out[1]
    );
    for u in user_texts(&server, "draft") {
        assert!(u.contains("PASSAGE-2") && !u.contains("PASSAGE-3"), "{u}");
    }
}

// ---------------------------------------------------------------------------------------------
// Offline

/// A retriever over a fixed corpus: passages sharing a word of four letters or more with the
/// query, in corpus order.
struct Corpus(Vec<Passage>);

impl Retriever for Corpus {
    fn retrieve(&self, query: &str, k: usize) -> Vec<Passage> {
        let q: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 4)
            .map(str::to_lowercase)
            .collect();
        self.0
            .iter()
            .filter(|p| q.iter().any(|w| p.text.to_lowercase().contains(w.as_str())))
            .take(k)
            .cloned()
            .collect()
    }
}

fn offline_asks() -> Vec<Ask> {
    let corpus: Arc<dyn Retriever> = Arc::new(Corpus(vec![
        passage(
            "k1",
            "Ostrava Sawmill Group leases Westgate Basin, records show.",
            Some("port.example"),
        ),
        passage(
            "k2",
            "The moon is made of rock, confirmed by samples.",
            None,
        ),
    ]));
    let binary = AnswerForm::Binary {
        yes: "true".into(),
        no: "false".into(),
    };
    let mut asks = vec![
        open_ask(
            "o1",
            "Which company leases Westgate Basin?",
            vec![passage(
                "c1",
                "Westgate Basin lies east of the port. It is leased.",
                None,
            )],
        ),
        open_ask("o2", "Who painted the lighthouse?", Vec::new()),
        Ask::new("b1", "The moon is made of green cheese", binary.clone()),
        Ask::new("b2", "The council banned plastic bags in 2019", binary),
    ];
    asks[2].passages = vec![passage(
        "m1",
        "The claim that the moon is made of green cheese is a hoax, debunked.",
        Some("facts.example"),
    )];
    for ask in &mut asks {
        ask.retriever = Some(corpus.clone());
    }
    asks
}

#[test]
fn both_systems_run_offline_deterministically_in_the_asks_form() {
    let asks = offline_asks();
    for system in [
        Box::new(Astute::default()) as Box<dyn Generator>,
        Box::new(Astute {
            config: AstuteConfig {
                iterations: 1,
                max_internal_passages: 2,
            },
        }),
        Box::new(CounterRefine::default()),
    ] {
        let run = || {
            system
                .generate(&Llm::offline(), "eval", &asks)
                .into_iter()
                .map(Result::unwrap)
                .collect::<Vec<Generated>>()
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b, "{}", system.name());
        for (ask, g) in asks.iter().zip(&a) {
            match &ask.form {
                AnswerForm::Binary { yes, no } => {
                    assert!(
                        g.answer == *yes || g.answer == *no,
                        "{}: {g:?}",
                        system.name()
                    )
                }
                AnswerForm::Open => assert!(!g.answer.trim().is_empty()),
            }
        }
        if system.name() == "astute" {
            // With no internal knowledge offline, Astute reads what the plain generator reads.
            let plain = Plain.generate(&Llm::offline(), "eval", &asks);
            for (g, p) in a.iter().zip(plain) {
                assert_eq!(g.answer, p.unwrap().answer);
            }
        }
    }
    // CounterRefine offline: the corpus names the company, so the refusal is revised to it.
    let out = CounterRefine::default().generate(&Llm::offline(), "eval", &asks);
    let g = out[0].as_ref().unwrap();
    assert_eq!(g.answer, "Ostrava Sawmill Group", "{g:?}");
    assert_eq!(
        g.steps.last().map(String::as_str),
        Some("revision_accepted")
    );
    assert_eq!(out[2].as_ref().unwrap().answer, "false");
}
