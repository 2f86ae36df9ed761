//! Sense checks of the perturbation tasks: rewrites must share a content word with the
//! question; a back-translation must come back in the passage's language.

use noisebench_llm::{Sense, Task};
use noisebench_perturb::{
    BackTranslate, BackTranslateInput, BackTranslation, QueryGrammar, QueryIrrelevant,
    RewriteInput, Rewrites,
};

fn rewrites(r: &[&str]) -> Rewrites {
    Rewrites {
        rewrites: r.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn rewrites_about_something_else_are_off_topic() {
    let input = RewriteInput {
        query: "What did Calder Port Authority acquire in 2023?".into(),
        candidates: 3,
    };
    // Rewrites that keep none of the question's words are caught by the rewrite-fidelity check
    // (length and shared words) before the topic check would see them.
    let off = rewrites(&["What is your favourite colour?", "How are you today?"]);
    assert_eq!(
        QueryGrammar::sense(&input, &off).unwrap_err().sense,
        Sense::MeaningLost
    );
    // An irrelevant-information rewrite adds to the question, so these are too short for it.
    assert_eq!(
        QueryIrrelevant::sense(&input, &off).unwrap_err().sense,
        Sense::LengthChanged
    );
    let one = rewrites(&[
        "How are you today?",
        "In 2023, what did Calder Port Authority acquire?",
    ]);
    assert!(
        QueryGrammar::sense(&input, &one).is_ok(),
        "one on-topic rewrite keeps the list"
    );
    // The offline rules pass.
    assert!(QueryGrammar::sense(&input, &QueryGrammar::offline(&input)).is_ok());
    assert!(QueryIrrelevant::sense(&input, &QueryIrrelevant::offline(&input)).is_ok());
}

#[test]
fn a_back_translation_left_in_the_pivot_language_is_wrong_language() {
    let input = BackTranslateInput {
        text: "The port authority bought two new cranes in 2023 because traffic grew by a third."
            .into(),
        pivot_language: "French".into(),
    };
    let french = BackTranslation {
        pivot: "L'autorité portuaire a acheté deux nouvelles grues en 2023.".into(),
        text: "L'autorité portuaire a acheté deux nouvelles grues en 2023 parce que le trafic a augmenté d'un tiers."
            .into(),
    };
    assert_eq!(
        BackTranslate::sense(&input, &french).unwrap_err().sense,
        Sense::WrongLanguage
    );
    let english = BackTranslation {
        pivot: french.pivot.clone(),
        text: "In 2023 the port authority purchased two new cranes, as traffic rose by one third."
            .into(),
    };
    assert!(BackTranslate::sense(&input, &english).is_ok());
    assert!(BackTranslate::sense(&input, &BackTranslate::offline(&input)).is_ok());
}
