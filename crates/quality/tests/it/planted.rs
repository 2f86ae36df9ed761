//! Each measure with a planted case: a question copied into train with one word changed, a
//! labeller flipping every third vote, an answer missing from its chunk, a mix target the build
//! misses. Each moves its number the right way and, where there is one, fails its gate.

use std::collections::BTreeMap;

use noisebench_core::{CheckStatus, Chunk, Claim, ClaimDocumentLabel, Question, QuestionSplit};
use noisebench_quality::{MixTarget, QualityConfig, Tables, gates, measure};

const STANCES: [&str; 3] = ["support", "reject", "not enough evidence"];
const EXAM: [&str; 3] = ["supporting", "misleading", "irrelevant"];

fn claims(n: usize) -> Vec<Claim> {
    (0..n)
        .map(|i| Claim {
            id: format!("c{i}"),
            text: format!("claim number {i}"),
            verdict: if i % 2 == 0 { "true" } else { "false" }.into(),
            ..Claim::default()
        })
        .collect()
}

/// Pairs whose stance agrees with the exam (through the verdict), except those `flip` picks:
/// their stance moves to the next label.
fn labels(claims: &[Claim], flip: impl Fn(usize) -> bool) -> Vec<ClaimDocumentLabel> {
    claims
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let exam = (i / 2 + i / 7) % 3;
            let said = if flip(i) { (exam + 1) % 3 } else { exam };
            // The stance that maps to `said` for this claim's verdict.
            let stance = match (said, c.verdict.as_str()) {
                (0, "true") | (1, "false") => STANCES[0],
                (1, "true") | (0, "false") => STANCES[1],
                _ => STANCES[2],
            };
            ClaimDocumentLabel {
                id: format!("l{i}"),
                claim_id: c.id.clone(),
                document_id: format!("d{i}"),
                label: Some(EXAM[exam].into()),
                stance_majority: Some(stance.into()),
                label_source: "model".into(),
                ..ClaimDocumentLabel::default()
            }
        })
        .collect()
}

#[test]
fn a_labeller_flipping_every_third_vote_brings_kappa_to_about_a_half() {
    let claims = claims(600);
    let config = QualityConfig::default();
    let agree = labels(&claims, |_| false);
    let flipped = labels(&claims, |i| i % 3 == 2);
    let of = |labels: &[ClaimDocumentLabel]| {
        measure(
            &Tables {
                claims: &claims,
                labels,
                ..Tables::default()
            },
            &config,
        )
        .agreement
        .unwrap()
    };
    let full = of(&agree);
    assert_eq!(full.kappa, Some(1.0));
    assert_eq!(full.disagreeing, 0);
    let a = of(&flipped);
    assert_eq!(a.pairs, 600);
    assert_eq!(a.disagreeing, 200);
    assert!((a.observed - 2.0 / 3.0).abs() < 1e-9);
    // Near-uniform marginals: expected agreement about 1/3, so kappa about (2/3 - 1/3) / (2/3).
    let kappa = a.kappa.unwrap();
    assert!((0.4..0.6).contains(&kappa), "{kappa}");
    let [lo, hi] = a.interval.unwrap();
    assert!(
        lo < kappa && kappa < hi && hi - lo < 0.2,
        "{lo} {kappa} {hi}"
    );
    assert_eq!(a.disagreements.len(), config.samples);
    // Every sampled disagreement really disagrees.
    assert!(a.disagreements.iter().all(|d| d.exam != d.mapped));

    let mut strict = config.clone();
    strict.gates.min_kappa = 0.7;
    let report = measure(
        &Tables {
            claims: &claims,
            labels: &flipped,
            ..Tables::default()
        },
        &strict,
    );
    let kappa_gate = gates(&report, &strict.gates)
        .into_iter()
        .find(|g| g.check == "min_kappa")
        .unwrap();
    assert_eq!(kappa_gate.status, CheckStatus::Failed);
    assert_eq!(kappa_gate.failed, 200);
}

fn question(id: &str, kind: &str, text: &str, answer: &str, chunk: &str) -> Question {
    Question {
        id: id.into(),
        kind: kind.into(),
        question: text.into(),
        answer: answer.into(),
        answer_chunk_ids: vec![chunk.into()],
        source_sentences: vec![],
        ..Question::default()
    }
}

fn corpus() -> (Vec<Question>, Vec<Chunk>, Vec<QuestionSplit>) {
    let facts = [
        ("Acme", "revenue", "four billion dollars"),
        ("Globex", "headcount", "twelve thousand employees"),
        ("Initech", "net income", "ninety million dollars"),
        ("Umbrella", "debt", "two billion dollars"),
        ("Hooli", "cash", "seven hundred million dollars"),
        ("Vandelay", "backlog", "three hundred orders"),
    ];
    let mut questions = Vec::new();
    let mut chunks = Vec::new();
    let mut splits = Vec::new();
    for (i, (company, what, value)) in facts.iter().enumerate() {
        let chunk = format!("k{i}");
        chunks.push(Chunk {
            id: chunk.clone(),
            text: format!(
                "In its annual filing {company} reported {what} of {value} for the year."
            ),
            ..Chunk::default()
        });
        let id = format!("q{i}");
        questions.push(question(
            &id,
            if i % 2 == 0 {
                "single_hop"
            } else {
                "star_shaped"
            },
            &format!("According to the annual filing, what {what} did {company} report?"),
            value,
            &chunk,
        ));
        splits.push(QuestionSplit {
            id: format!("s{i}"),
            question_id: id,
            kind: String::new(),
            split: if i < 3 { "test" } else { "train" }.into(),
        });
    }
    (questions, chunks, splits)
}

#[test]
fn a_test_question_copied_into_train_with_one_word_changed_is_found_and_fails_the_gate() {
    let (mut questions, chunks, mut splits) = corpus();
    // A release's gate: no more than one test question in ten with a twin in train.
    let mut config = QualityConfig::default();
    config.gates.max_cross_split_duplicate_share = 0.1;
    let clean = measure(
        &Tables {
            questions: &questions,
            chunks: &chunks,
            splits: &splits,
            ..Tables::default()
        },
        &config,
    );
    let cross = clean.duplicates.cross_split.as_ref().unwrap();
    assert_eq!((cross.test, cross.leaked), (3, 0));
    assert!(gates(&clean, &config.gates).iter().all(|g| !g.failed()));

    // q0 copied into train with one word changed.
    let mut copy = questions[0].clone();
    copy.id = "leak".into();
    copy.question = copy.question.replace("annual", "yearly");
    questions.push(copy);
    splits.push(QuestionSplit {
        id: "s-leak".into(),
        question_id: "leak".into(),
        kind: String::new(),
        split: "train".into(),
    });
    let leaky = measure(
        &Tables {
            questions: &questions,
            chunks: &chunks,
            splits: &splits,
            ..Tables::default()
        },
        &config,
    );
    let cross = leaky.duplicates.cross_split.as_ref().unwrap();
    assert_eq!(cross.leaked, 1);
    assert_eq!(
        (cross.pairs[0].a.as_str(), cross.pairs[0].b.as_str()),
        ("q0", "leak")
    );
    assert!(leaky.duplicates.tables["questions"].near >= 2);
    let gate = gates(&leaky, &config.gates)
        .into_iter()
        .find(|g| g.check == "max_cross_split_duplicate_share")
        .unwrap();
    assert_eq!(gate.status, CheckStatus::Failed);
    assert_eq!(gate.ids, vec!["q0".to_string()]);
}

#[test]
fn an_answer_missing_from_its_chunk_lowers_the_grounded_share_and_fails_the_gate() {
    let (mut questions, chunks, _) = corpus();
    let config = QualityConfig::default();
    let of = |questions: &[Question]| {
        measure(
            &Tables {
                questions,
                chunks: &chunks,
                ..Tables::default()
            },
            &config,
        )
    };
    let before = of(&questions);
    assert_eq!(before.grounding.as_ref().unwrap().share, 1.0);
    questions[1].answer = "forty-two submarines".into();
    questions[2].answer = "a merger with Contoso".into();
    let after = of(&questions);
    let g = after.grounding.as_ref().unwrap();
    assert_eq!(g.grounded, 4);
    assert!((g.share - 4.0 / 6.0).abs() < 1e-9);
    let ids: Vec<&str> = g
        .ungrounded
        .iter()
        .map(|u| u.question_id.as_str())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&"q1") && ids.contains(&"q2"));
    let gate = gates(&after, &config.gates)
        .into_iter()
        .find(|g| g.check == "min_grounding_share")
        .unwrap();
    assert_eq!(gate.status, CheckStatus::Failed);
}

#[test]
fn a_mix_target_the_build_misses_is_named() {
    let (questions, chunks, _) = corpus();
    let config = QualityConfig {
        mix: MixTarget {
            kinds: BTreeMap::from([
                ("single_hop".into(), 0.2),
                ("star_shaped".into(), 0.2),
                ("chained_multi_hop".into(), 0.6),
            ]),
            ..MixTarget::default()
        },
        ..QualityConfig::default()
    };
    let report = measure(
        &Tables {
            questions: &questions,
            chunks: &chunks,
            ..Tables::default()
        },
        &config,
    );
    let first = &report.mix.gaps[0];
    assert_eq!(
        (first.dimension.as_str(), first.value.as_str()),
        ("kinds", "chained_multi_hop")
    );
    assert!((first.gap + 0.6).abs() < 1e-9);
    assert!(noisebench_quality::render_markdown(&report).contains("chained_multi_hop"));
}

/// A human review round over a third of the pairs: `overrule` picks the pairs where the
/// reviewer writes another label than the exam's (which `model_label` keeps).
fn reviewed(
    labels: &[ClaimDocumentLabel],
    overrule: impl Fn(usize) -> bool,
) -> Vec<ClaimDocumentLabel> {
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i % 3 != 0 {
                return l.clone();
            }
            let exam = l.label.clone().unwrap();
            let at = EXAM.iter().position(|e| *e == exam).unwrap();
            let human = if overrule(i) {
                EXAM[(at + 2) % 3]
            } else {
                EXAM[at]
            };
            ClaimDocumentLabel {
                label: Some(human.into()),
                model_label: Some(exam),
                label_source: "human".into(),
                ..l.clone()
            }
        })
        .collect()
}

#[test]
fn a_review_round_gives_krippendorffs_alpha_which_a_contrary_reviewer_lowers() {
    let claims = claims(600);
    let config = QualityConfig::default();
    let machine = labels(&claims, |_| false);
    let of = |labels: &[ClaimDocumentLabel]| {
        measure(
            &Tables {
                claims: &claims,
                labels,
                ..Tables::default()
            },
            &config,
        )
    };
    // Without a review round: no alpha.
    assert!(of(&machine).review.is_none());
    // A reviewer who keeps every label: the three coders agree, alpha 1.
    let agreeing = of(&reviewed(&machine, |_| false));
    let review = agreeing.review.as_ref().unwrap();
    assert_eq!(review.pairs, 200);
    assert_eq!(review.alpha, Some(1.0));
    assert_eq!(review.human_agrees_with_exam, 1.0);
    // A reviewer who overrules every other reviewed pair: on those, one coder of three
    // disagrees; alpha falls well below 1 but stays above chance.
    let contrary = of(&reviewed(&machine, |i| i % 2 == 0));
    let review = contrary.review.as_ref().unwrap();
    let alpha = review.alpha.unwrap();
    assert!((0.3..0.8).contains(&alpha), "{alpha}");
    let [lo, hi] = review.interval.unwrap();
    assert!(lo <= alpha && alpha <= hi && hi < 1.0, "{lo} {alpha} {hi}");
    assert!((review.human_agrees_with_exam - 0.5).abs() < 0.01);
    // Kappa of the two machine methods does not move: the exam's label is read from
    // `model_label`.
    assert_eq!(
        contrary.agreement.as_ref().unwrap().kappa,
        agreeing.agreement.as_ref().unwrap().kappa
    );
    let card = noisebench_quality::render_markdown(&contrary);
    assert!(card.contains("Krippendorff's alpha"), "{card}");
}
