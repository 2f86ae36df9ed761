//! The question tasks' sense check: a generated question must name its facts (the anchor: an
//! entity or relation word other than the answer's and the pivot's); a declined answer passes.

use std::collections::BTreeMap;

use noisebench_llm::{Sense, Task};
use noisebench_qa::{
    MultiHopPattern, QaMulti, QaMultiInput, QaOutput, QaSingle, QaSingleInput, TripletText,
};

fn fact(e1: &str, rel: &str, e2: &str) -> TripletText {
    TripletText {
        entity_1: e1.into(),
        relation: rel.into(),
        entity_2: e2.into(),
        chunk_id: "c1".into(),
        source_sentence: format!("{e1} {rel} {e2}."),
    }
}

fn qa(q: &str, a: &str) -> QaOutput {
    QaOutput {
        question: q.into(),
        answer: a.into(),
    }
}

#[test]
fn a_question_that_names_none_of_its_facts_misses_its_anchor() {
    let input = QaSingleInput {
        triplet: fact("Calder Port Authority", "acquired", "Harbor Cranes Ltd"),
        chunk: "Calder Port Authority acquired Harbor Cranes Ltd.".into(),
        metadata: BTreeMap::new(),
    };
    let e = QaSingle::sense(
        &input,
        &qa(
            "What is the most important thing you learned in school?",
            "Harbor Cranes Ltd",
        ),
    )
    .unwrap_err();
    assert_eq!(e.sense, Sense::AnchorMissing);
    assert!(
        QaSingle::sense(
            &input,
            &qa(
                "What did Calder Port Authority acquire?",
                "Harbor Cranes Ltd"
            )
        )
        .is_ok()
    );
    assert!(QaSingle::sense(&input, &qa("", "")).is_ok(), "declined");
    assert!(QaSingle::sense(&input, &QaSingle::offline(&input)).is_ok());

    let multi = QaMultiInput {
        pattern: MultiHopPattern::Chain,
        triplets: vec![
            fact("Calder Port Authority", "acquired", "Harbor Cranes Ltd"),
            fact("Harbor Cranes Ltd", "is headquartered in", "Rotterdam"),
        ],
        chunks: vec!["a".into(), "b".into()],
        pivots: vec!["Harbor Cranes Ltd".into()],
        metadata: BTreeMap::new(),
    };
    // Naming only the pivot (which must stay indirect) or the answer is no anchor.
    let e = QaMulti::sense(&multi, &qa("Where is Harbor Cranes based?", "Rotterdam")).unwrap_err();
    assert_eq!(e.sense, Sense::AnchorMissing);
    assert!(
        QaMulti::sense(
            &multi,
            &qa(
                "Where is the company Calder Port Authority acquired headquartered?",
                "Rotterdam"
            )
        )
        .is_ok()
    );
}
