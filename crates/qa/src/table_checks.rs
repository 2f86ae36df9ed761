//! The dataset rules of the question tables that need text matching, as table checks the runner
//! runs after the stage that writes `questions` and again before publishing (core declares
//! the rest: keys, references, vocabularies; `noisebench_core::checks`).

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::checks::{Check, typed};
use noisebench_core::{Chunk, Question, TableKind};
use noisebench_text::{contains_phrase, normalize};

use crate::checks::{ChunkIndex, named_entities};

/// The question tables' text rules: `answer_grounded`, `multi_hop_single_chunk`,
/// `unique_question_text`.
pub fn table_checks() -> Vec<Check> {
    vec![
        Check::new(
            "answer_grounded",
            TableKind::Questions,
            vec![TableKind::Chunks],
            |tables| {
                Ok(answer_grounded(
                    typed::<Question>(tables)?,
                    typed::<Chunk>(tables)?,
                ))
            },
        ),
        Check::new(
            "multi_hop_single_chunk",
            TableKind::Questions,
            vec![TableKind::Chunks],
            |tables| {
                Ok(multi_hop_single_chunk(
                    typed::<Question>(tables)?,
                    typed::<Chunk>(tables)?,
                ))
            },
        ),
        Check::new(
            "unique_question_text",
            TableKind::Questions,
            vec![],
            |tables| Ok(unique_question_text(typed::<Question>(tables)?)),
        ),
    ]
}

/// Every answer (normalised, whole words) is in the text of at least one of its answer chunks.
pub fn answer_grounded(questions: &[Question], chunks: &[Chunk]) -> (usize, Vec<String>) {
    let text: BTreeMap<&str, &str> = chunks
        .iter()
        .map(|c| (c.id.as_str(), c.text.as_str()))
        .collect();
    let failed = questions
        .iter()
        .filter(|q| {
            !q.answer_chunk_ids.iter().any(|id| {
                text.get(id.as_str())
                    .is_some_and(|t| contains_phrase(t, &q.answer))
            })
        })
        .map(|q| q.id.clone())
        .collect();
    (questions.len(), failed)
}

/// No single chunk holds both a multi-hop question's answer and every entity the question
/// names directly (`named_entities`): such a chunk answers it in one hop.
///
/// Taken literally, "no chunk holds both its pivot and its answer" fails every valid chain: in
/// A -> B -> C, the chunk stating B -> C holds the pivot B and the answer C by construction.
/// What makes a question single-hop is a chunk that links what the question *names* (A) to the
/// answer, so that is what is checked, with the same index and rule the `questions` stage
/// applies, over every chunk in scope.
pub fn multi_hop_single_chunk(questions: &[Question], chunks: &[Chunk]) -> (usize, Vec<String>) {
    let multi: Vec<&Question> = questions
        .iter()
        .filter(|q| q.kind != "single_hop")
        .collect();
    let named: Vec<Vec<String>> = multi.iter().map(|q| named_entities(q)).collect();
    let phrases = named
        .iter()
        .flatten()
        .map(String::as_str)
        .chain(multi.iter().map(|q| q.answer.as_str()));
    // One pass over the corpus for every phrase, not a scan of every chunk per question.
    let index = ChunkIndex::build(
        chunks.iter().map(|c| (c.id.as_str(), c.text.as_str())),
        phrases,
    );
    let failed = multi
        .iter()
        .zip(&named)
        .filter(|(q, named)| {
            let named: Vec<&str> = named.iter().map(String::as_str).collect();
            !index.chunks_holding_all(&named, &q.answer).is_empty()
        })
        .map(|(q, _)| q.id.clone())
        .collect();
    (multi.len(), failed)
}

/// No two questions share normalised text; every question of a shared text is named.
pub fn unique_question_text(questions: &[Question]) -> (usize, Vec<String>) {
    let mut by_text: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for q in questions {
        by_text
            .entry(normalize(&q.question))
            .or_default()
            .push(q.id.as_str());
    }
    let failed: BTreeSet<String> = by_text
        .into_values()
        .filter(|ids| ids.len() > 1)
        .flatten()
        .map(str::to_string)
        .collect();
    (questions.len(), failed.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, kind: &str, text: &str, answer: &str, chunks: &[&str]) -> Question {
        Question {
            id: id.into(),
            kind: kind.into(),
            question: text.into(),
            answer: answer.into(),
            answer_chunk_ids: chunks.iter().map(|c| c.to_string()).collect(),
            ..Question::default()
        }
    }

    fn chunk(id: &str, text: &str) -> Chunk {
        Chunk {
            id: id.into(),
            text: text.into(),
            ..Chunk::default()
        }
    }

    #[test]
    fn chain_passes_when_no_chunk_links_the_named_entity_to_the_answer() {
        // Acme -> owns -> Beta (c1), Beta -> based in -> Oslo (c2): the question names Acme.
        let mut chain = q(
            "q1",
            "chained_multi_hop",
            "Where is the company Acme owns based?",
            "Oslo",
            &["c1", "c2"],
        );
        chain.entity_1 = vec!["Acme".into(), "Beta".into()];
        chain.entity_2 = vec!["Beta".into(), "Oslo".into()];
        chain.pivot_entities = vec!["Beta".into()];
        let chunks = vec![
            chunk("c1", "Acme owns Beta."),
            chunk("c2", "Beta is based in Oslo."),
        ];
        // c2 holds the pivot and the answer: fine.
        assert_eq!(
            multi_hop_single_chunk(std::slice::from_ref(&chain), &chunks),
            (1, vec![])
        );
        let mut leaky = chunks.clone();
        leaky.push(chunk("c3", "Acme, via Beta, runs its office in Oslo."));
        assert_eq!(
            multi_hop_single_chunk(std::slice::from_ref(&chain), &leaky),
            (1, vec!["q1".to_string()])
        );
        assert_eq!(answer_grounded(&[chain], &chunks), (1, vec![]));
    }

    #[test]
    fn rules_name_their_offenders() {
        let qs = vec![
            q("q1", "single_hop", "What is X?", "ten", &["c1"]),
            q("q2", "star_shaped", "what is x", "nine", &["c1", "c1"]),
        ];
        let chunks = vec![chunk("c1", "X is ten.")];
        assert_eq!(answer_grounded(&qs, &chunks).1, vec!["q2"]);
        assert_eq!(unique_question_text(&qs).1, vec!["q1", "q2"]);
        let mut tables = noisebench_core::checks::InMemory::default();
        tables
            .0
            .insert(TableKind::Questions, noisebench_core::Rows::Questions(qs));
        tables
            .0
            .insert(TableKind::Chunks, noisebench_core::Rows::Chunks(chunks));
        let results: Vec<_> = table_checks()
            .iter()
            .map(|c| c.run("questions", &tables))
            .collect();
        assert_eq!(
            results[0].render(),
            "table `questions`, check `answer_grounded`: FAILED (1 of 2 rows): q2"
        );
        assert_eq!(results[2].ids, vec!["q1", "q2"]);
    }
}
