//! Step 2, answer-conditioned retrieval: the queries `Q(q, a0)` go to the ask's retriever for
//! `k_refine` passages each, widening `R0` to `R1`.

use std::collections::BTreeSet;

use super::qtype::QType;
use crate::generate::{Ask, Passage};

/// The answer-conditioned queries, `Q(q, a0)`, in order and without repeats.
pub(crate) fn refine_queries(question: &str, draft: &str, kind: QType) -> Vec<String> {
    let quoted = format!("\"{}\"", draft.trim());
    let mut queries = vec![question.to_string(), format!("{question} {quoted}")];
    if kind.queries_answer_alone() {
        queries.push(quoted);
    }
    let mut seen = BTreeSet::new();
    queries.retain(|q| seen.insert(q.clone()));
    queries
}

/// `R1`: `R0`, then what the ask's retriever returns for each query (`k_refine` passages),
/// deduplicated by id; `R0` alone for an ask without a retriever.
pub(super) fn widen(
    ask: &Ask,
    r0: &[Passage],
    draft: &str,
    kind: QType,
    k_refine: usize,
) -> Vec<Passage> {
    let mut r1 = r0.to_vec();
    let Some(retriever) = &ask.retriever else {
        return r1;
    };
    let mut seen: BTreeSet<String> = r1.iter().map(|p| p.id.clone()).collect();
    for q in refine_queries(&ask.question, draft, kind) {
        for p in retriever.retrieve(&q, k_refine) {
            if seen.insert(p.id.clone()) {
                r1.push(p);
            }
        }
    }
    r1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_conditioned_queries() {
        assert_eq!(
            refine_queries("Who leases the basin?", "Ostrava Group", QType::Who),
            [
                "Who leases the basin?",
                "Who leases the basin? \"Ostrava Group\"",
                "\"Ostrava Group\""
            ]
        );
        assert_eq!(
            refine_queries("What is the basin's name?", "Westgate", QType::Other),
            [
                "What is the basin's name?",
                "What is the basin's name? \"Westgate\""
            ]
        );
    }
}
