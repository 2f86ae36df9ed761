//! The lexical shortcut: for each question, the BM25 rank of its best gold chunk among all
//! chunks for the unperturbed question (noisebench-index's BM25, tantivy's scoring). A
//! benchmark whose gold chunks all rank first is easy for BM25 and says little about dense
//! retrievers.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use noisebench_core::{
    Chunk, Question, default_threads, parallel_map, parallel_map_with, sample_key,
};
use noisebench_index::bm25::analyse_only;
use noisebench_index::{Impacts, Scratch, terms};
use serde::{Deserialize, Serialize};

/// Where the gold chunks rank, in one stratum (a question kind, or all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankStratum {
    pub questions: usize,
    /// Gold chunk ranked first.
    pub rank_1: usize,
    /// Ranked 2 or 3.
    pub rank_2_3: usize,
    /// Ranked 4 to 10.
    pub rank_4_10: usize,
    /// Ranked below 10, down to the configured depth.
    pub deeper: usize,
    /// Not among the first `depth` hits (or not matched by any query term).
    pub not_found: usize,
    /// `rank_1 / questions`.
    pub share_rank_1: f64,
    /// Median rank of those found.
    pub median_rank: Option<usize>,
}

/// The lexical shortcut of a version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shortcut {
    pub chunks: usize,
    pub depth: usize,
    /// Questions with gold chunks in the version; `all.questions` of them were ranked (the
    /// sample, when there are more than the configured `shortcut_sample`).
    #[serde(default)]
    pub asked: usize,
    pub all: RankStratum,
    /// By question kind.
    pub kinds: BTreeMap<String, RankStratum>,
}

fn stratum(ranks: &[Option<usize>]) -> RankStratum {
    let mut s = RankStratum {
        questions: ranks.len(),
        ..RankStratum::default()
    };
    let mut found: Vec<usize> = Vec::new();
    for r in ranks {
        match r {
            Some(1) => s.rank_1 += 1,
            Some(2..=3) => s.rank_2_3 += 1,
            Some(4..=10) => s.rank_4_10 += 1,
            Some(_) => s.deeper += 1,
            None => s.not_found += 1,
        }
        found.extend(r);
    }
    found.sort_unstable();
    s.median_rank = found
        .get(found.len() / 2)
        .copied()
        .filter(|_| !found.is_empty());
    s.share_rank_1 = s.rank_1 as f64 / ranks.len().max(1) as f64;
    s
}

/// The gold chunk's BM25 rank for each question with gold chunks (at most `sample` of them,
/// those whose ids hash lowest; `0`: all), by kind; `None` when there are no such questions or
/// no chunks.
pub fn lexical_shortcut(
    questions: &[Question],
    chunks: &[Chunk],
    depth: usize,
    sample: usize,
) -> Option<Shortcut> {
    if chunks.is_empty() || questions.iter().all(|q| q.answer_chunk_ids.is_empty()) {
        return None;
    }
    let ids: Vec<String> = chunks.iter().map(|c| c.id.clone()).collect();
    let mut asked: Vec<&Question> = questions
        .iter()
        .filter(|q| !q.answer_chunk_ids.is_empty())
        .collect();
    let with_gold = asked.len();
    if sample > 0 && asked.len() > sample {
        asked.sort_by_cached_key(|q| (sample_key(&q.id), q.id.clone()));
        asked.truncate(sample);
    }
    let asked_terms = parallel_map(&asked, default_threads(), |q| terms(&q.question));
    let vocabulary: HashSet<String> = asked_terms.iter().flatten().cloned().collect();
    // Analysing the chunks is most of the cost: spread over the cores (results in chunk order),
    // and only the questions' terms kept, which rank them as the whole analysis would.
    let analysed = parallel_map(chunks, default_threads(), |c| {
        analyse_only(&c.text, &vocabulary)
    });
    let impacts = Impacts::from_analysed(ids, &analysed);
    drop(analysed);
    let position: std::collections::HashMap<&str, u32> = (0..impacts.len() as u32)
        .map(|d| (impacts.id(d), d))
        .collect();
    let work: Vec<(&Question, &BTreeSet<String>)> =
        asked.iter().copied().zip(&asked_terms).collect();
    let ranks = parallel_map_with(
        &work,
        default_threads(),
        Scratch::default,
        |scratch, (q, terms)| {
            let gold: Vec<u32> = q
                .answer_chunk_ids
                .iter()
                .filter_map(|id| position.get(id.as_str()).copied())
                .collect();
            // The place the search would give the gold chunk, found by following only the
            // chunks that could outscore it.
            impacts.place_of(terms, &gold, depth, scratch)
        },
    );
    let mut by_kind: BTreeMap<String, Vec<Option<usize>>> = BTreeMap::new();
    for (q, rank) in asked.iter().zip(&ranks) {
        by_kind.entry(q.kind.clone()).or_default().push(*rank);
    }
    let all = ranks;
    Some(Shortcut {
        chunks: chunks.len(),
        depth,
        asked: with_gold,
        all: stratum(&all),
        kinds: by_kind
            .iter()
            .map(|(k, r)| (k.clone(), stratum(r)))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str) -> Chunk {
        Chunk {
            id: id.into(),
            text: text.into(),
            ..Chunk::default()
        }
    }

    #[test]
    fn a_question_sharing_its_chunks_words_ranks_it_first_and_a_paraphrase_does_not() {
        let chunks = [
            chunk(
                "c1",
                "Acme's revenue grew to four billion dollars in fiscal 2023.",
            ),
            chunk(
                "c2",
                "Globex opened a new plant in Ohio employing 300 workers.",
            ),
            chunk(
                "c3",
                "The weather in Ohio was mild and the plant stayed open.",
            ),
        ];
        let q = |id: &str, text: &str, gold: &str| Question {
            id: id.into(),
            kind: "single_hop".into(),
            question: text.into(),
            answer_chunk_ids: vec![gold.into()],
            ..Question::default()
        };
        let qs = [
            q(
                "q1",
                "How much revenue did Acme report in fiscal 2023?",
                "c1",
            ),
            q("q2", "What is the capital of France?", "c2"),
        ];
        let s = lexical_shortcut(&qs, &chunks, 10, 0).unwrap();
        assert_eq!(s.all.questions, 2);
        assert_eq!(s.all.rank_1, 1);
        assert_eq!(s.all.not_found, 1);
        assert_eq!(s.kinds["single_hop"].share_rank_1, 0.5);
        assert_eq!(s.all.median_rank, Some(1));
    }

    #[test]
    fn a_gold_chunk_below_the_tenth_place_is_found_as_deep_as_asked() {
        // Fourteen chunks say "copper" more often than the gold chunk, and so outrank it; the
        // rest say it less, or not at all.
        let mut chunks: Vec<Chunk> = (0..14)
            .map(|i| chunk(&format!("a{i:02}"), &"copper mine ".repeat(6)))
            .collect();
        chunks.push(chunk(
            "gold",
            "copper mine output fell in the north and the south of the region last year",
        ));
        chunks.extend((0..10).map(|i| chunk(&format!("z{i:02}"), "the north was quiet")));
        let q = Question {
            id: "q".into(),
            kind: "single_hop".into(),
            question: "copper mine".into(),
            answer_chunk_ids: vec!["gold".into()],
            ..Question::default()
        };
        let deep = lexical_shortcut(std::slice::from_ref(&q), &chunks, 100, 0).unwrap();
        let ids: Vec<String> = chunks.iter().map(|c| c.id.clone()).collect();
        let analysed: Vec<_> = chunks
            .iter()
            .map(|c| noisebench_index::bm25::analyse(&c.text))
            .collect();
        let impacts = Impacts::from_analysed(ids, &analysed);
        let hits = impacts.search(&terms(&q.question), 100, &mut Scratch::default());
        let rank = hits
            .iter()
            .position(|(_, d)| impacts.id(*d) == "gold")
            .unwrap()
            + 1;
        assert!(rank > 10, "the gold chunk ranks {rank}");
        assert_eq!(deep.all.median_rank, Some(rank));
        assert_eq!(deep.all.deeper, 1);
        let shallow = lexical_shortcut(std::slice::from_ref(&q), &chunks, 10, 0).unwrap();
        assert_eq!(shallow.all.not_found, 1);
    }

    #[test]
    fn a_sample_ranks_the_questions_whose_ids_hash_lowest_and_says_of_how_many() {
        let chunks: Vec<Chunk> = (0..6)
            .map(|i| {
                chunk(
                    &format!("c{i}"),
                    &format!("report {i} says revenue rose {i}"),
                )
            })
            .collect();
        let questions: Vec<Question> = (0..6)
            .map(|i| Question {
                id: format!("q{i}"),
                kind: ["single_hop", "star_shaped"][i % 2].into(),
                question: format!("What did report {i} say?"),
                answer_chunk_ids: vec![format!("c{i}")],
                ..Question::default()
            })
            .collect();
        let all = lexical_shortcut(&questions, &chunks, 100, 0).unwrap();
        assert_eq!((all.all.questions, all.asked), (6, 6));
        let some = lexical_shortcut(&questions, &chunks, 100, 3).unwrap();
        assert_eq!((some.all.questions, some.asked), (3, 6));
        // The three whose ids hash lowest, ranked as in the whole run.
        let mut lowest: Vec<&Question> = questions.iter().collect();
        lowest.sort_by_key(|q| sample_key(&q.id));
        let chosen: Vec<Question> = lowest[..3].iter().map(|q| (*q).clone()).collect();
        let alone = lexical_shortcut(&chosen, &chunks, 100, 0).unwrap();
        assert_eq!(some.all, alone.all);
        assert_eq!(some.kinds, alone.kinds);
    }
}
