//! The `triplets` task's sense check: an answer of several triplets none of which has its
//! entities in its own sentence is condemned whole; one grounded triplet, or a short answer,
//! leaves the judgement to the stage's per-triplet grounding.

use noisebench_kg::{
    ExtractedTriplet, SENSE_MIN_TRIPLETS, Triplets, TripletsInput, TripletsOutput,
};
use noisebench_llm::{Sense, Task};

fn t(e1: &str, e2: &str, sentence: &str) -> ExtractedTriplet {
    ExtractedTriplet {
        entity_1: e1.into(),
        relation: "acquired".into(),
        entity_2: e2.into(),
        chunk_id: "c1".into(),
        source_sentence: sentence.into(),
    }
}

fn input() -> TripletsInput {
    TripletsInput {
        domain: "finance".into(),
        target: 5,
        chunks: vec![],
        found: vec![],
    }
}

#[test]
fn an_answer_whose_triplets_never_ground_is_dropped_whole() {
    let echoed = TripletsOutput {
        triplets: vec![t("type", "array", "The port acquired two cranes."); SENSE_MIN_TRIPLETS],
    };
    let e = Triplets::sense(&input(), &echoed).unwrap_err();
    assert_eq!(e.sense, Sense::EntityNotInSentence);
    let mut one_good = echoed.clone();
    one_good.triplets[1] = t("The port", "two cranes", "The port acquired two cranes.");
    assert!(Triplets::sense(&input(), &one_good).is_ok());
    let short = TripletsOutput {
        triplets: vec![t("type", "array", "The port acquired two cranes.")],
    };
    assert!(
        Triplets::sense(&input(), &short).is_ok(),
        "the stage judges it"
    );
    assert!(Triplets::sense(&input(), &TripletsOutput { triplets: vec![] }).is_ok());
}
