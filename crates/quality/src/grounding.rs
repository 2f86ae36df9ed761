//! Grounding per question: is its answer, and each sentence it cites, in its source chunks?
//! Exact first (the normalised words of the needle appear in a row in the chunks' normalised
//! words), then a normalised fuzzy span match: the best normalised Levenshtein similarity of the
//! needle against a window of the chunks' words of the needle's length (YourBench's citation
//! score takes the best partial match the same way). A question's citation score is the mean of
//! its sentences' scores; it is grounded when its answer and its citation score both reach the
//! threshold.

use std::collections::{BTreeSet, HashMap};

use noisebench_core::{Chunk, Question, default_threads, parallel_map};
use noisebench_text::words::{normalize, words};
use serde::{Deserialize, Serialize};

/// The grounding of a version's questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grounding {
    pub questions: usize,
    /// Questions whose answer and citations reach the threshold.
    pub grounded: usize,
    pub share: f64,
    /// Questions whose answer is in their chunks word for word.
    pub answers_exact: usize,
    /// Mean citation score over the questions that cite sentences.
    pub mean_citation_score: Option<f64>,
    /// Questions by their score (the lower of answer and citation score), in buckets
    /// `1.0`, `0.85-1`, `0.5-0.85`, `0-0.5`.
    pub distribution: Vec<(String, usize)>,
    /// A sample of the questions that are not grounded, lowest score first.
    pub ungrounded: Vec<Ungrounded>,
}

/// A question whose answer or citations are not found in its chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ungrounded {
    pub question_id: String,
    pub answer: String,
    pub answer_score: f64,
    pub citation_score: Option<f64>,
}

/// How well `needle` is found in `haystack`: 1 when its normalised words appear in a row,
/// else the best normalised Levenshtein similarity against a window of the haystack's words
/// as long as the needle, over windows aligned on a word they share. An empty needle is found.
pub fn span_score(needle: &str, haystack: &str) -> f64 {
    Haystack::new(haystack).score(needle)
}

/// A text prepared once for the needles looked for in it (a question's answer and each of its
/// cited sentences): its words, and their normalised form padded with spaces.
struct Haystack {
    words: Vec<String>,
    padded: String,
}

impl Haystack {
    fn new(text: &str) -> Self {
        let words = words(text);
        let padded = format!(" {} ", words.join(" "));
        Self { words, padded }
    }

    /// [`span_score`] of `needle` in this text.
    fn score(&self, needle: &str) -> f64 {
        let needle_words = words(needle);
        if needle_words.is_empty() {
            return 1.0;
        }
        let n = needle_words.join(" ");
        if self.padded.contains(&format!(" {n} ")) {
            return 1.0;
        }
        let hay_words = &self.words;
        let len = needle_words.len();
        let positions: HashMap<&str, Vec<usize>> =
            needle_words
                .iter()
                .enumerate()
                .fold(HashMap::new(), |mut m, (j, w)| {
                    m.entry(w.as_str()).or_insert_with(Vec::new).push(j);
                    m
                });
        let mut starts = BTreeSet::new();
        for (i, w) in hay_words.iter().enumerate() {
            for &j in positions.get(w.as_str()).into_iter().flatten() {
                starts.insert(i.saturating_sub(j));
            }
        }
        let n_chars = n.chars().count();
        let mut best = 0f64;
        for start in starts {
            let end = (start + len).min(hay_words.len());
            let window = hay_words[start..end].join(" ");
            // The edit distance is at least the difference in length, so a window whose length
            // alone keeps it from beating the best so far is not scored.
            let w_chars = window.chars().count();
            let longest = n_chars.max(w_chars) as f64;
            if 1.0 - n_chars.abs_diff(w_chars) as f64 / longest <= best {
                continue;
            }
            best = best.max(strsim::normalized_levenshtein(&n, &window));
            if best >= 1.0 {
                break;
            }
        }
        best
    }
}

/// One question's answer score and citation score against its chunks' text.
pub fn question_scores(question: &Question, context: &str) -> (f64, Option<f64>) {
    let haystack = Haystack::new(context);
    let answer = haystack.score(&question.answer);
    let cited: Vec<f64> = question
        .source_sentences
        .iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| haystack.score(s))
        .collect();
    let citation = (!cited.is_empty()).then(|| cited.iter().sum::<f64>() / cited.len() as f64);
    (answer, citation)
}

/// The grounding of `questions` in `chunks`; `None` when there are no questions.
pub fn grounding(
    questions: &[Question],
    chunks: &[Chunk],
    threshold: f64,
    samples: usize,
) -> Option<Grounding> {
    if questions.is_empty() {
        return None;
    }
    let text: HashMap<&str, &str> = chunks
        .iter()
        .map(|c| (c.id.as_str(), c.text.as_str()))
        .collect();
    let mut grounded = 0;
    let mut exact = 0;
    let mut citations = Vec::new();
    let mut buckets = [0usize; 4];
    let mut ungrounded = Vec::new();
    let scores = parallel_map(questions, default_threads(), |q| {
        let context: Vec<&str> = q
            .answer_chunk_ids
            .iter()
            .filter_map(|id| text.get(id.as_str()).copied())
            .collect();
        question_scores(q, &context.join("\n"))
    });
    for (q, &(answer, citation)) in questions.iter().zip(&scores) {
        exact += usize::from(answer >= 1.0 && !normalize(&q.answer).is_empty());
        if let Some(c) = citation {
            citations.push(c);
        }
        let score = answer.min(citation.unwrap_or(1.0));
        buckets[match score {
            s if s >= 1.0 => 0,
            s if s >= 0.85 => 1,
            s if s >= 0.5 => 2,
            _ => 3,
        }] += 1;
        if score >= threshold {
            grounded += 1;
        } else {
            ungrounded.push(Ungrounded {
                question_id: q.id.clone(),
                answer: q.answer.clone(),
                answer_score: answer,
                citation_score: citation,
            });
        }
    }
    ungrounded.sort_by(|a, b| {
        a.answer_score
            .min(a.citation_score.unwrap_or(1.0))
            .total_cmp(&b.answer_score.min(b.citation_score.unwrap_or(1.0)))
            .then_with(|| a.question_id.cmp(&b.question_id))
    });
    ungrounded.truncate(samples);
    Some(Grounding {
        questions: questions.len(),
        grounded,
        share: grounded as f64 / questions.len() as f64,
        answers_exact: exact,
        mean_citation_score: (!citations.is_empty())
            .then(|| citations.iter().sum::<f64>() / citations.len() as f64),
        distribution: ["1.0", "0.85-1", "0.5-0.85", "0-0.5"]
            .iter()
            .zip(buckets)
            .map(|(b, n)| (b.to_string(), n))
            .collect(),
        ungrounded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_spans_ignore_case_and_punctuation_and_respect_word_bounds() {
        let chunk = "Revenue rose to $3.5 billion in FY2023, driven by cloud services.";
        assert_eq!(span_score("$3.5 Billion", chunk), 1.0);
        assert_eq!(span_score("cloud services", chunk), 1.0);
        // "loud" is inside "cloud" but is not a word of the chunk.
        assert!(span_score("loud", chunk) < 1.0);
        assert_eq!(span_score("", chunk), 1.0);
    }

    #[test]
    fn a_near_copy_scores_high_and_an_absent_answer_low() {
        let chunk = "The company acquired Northwind Traders in March for cash.";
        let near = span_score("acquired Northwind Trader in March", chunk);
        assert!((0.85..1.0).contains(&near), "{near}");
        let absent = span_score("Contoso Pharmaceuticals", chunk);
        assert!(absent < 0.5, "{absent}");
    }

    /// The score as first written: the haystack split for each needle, every window scored.
    fn span_score_reference(needle: &str, haystack: &str) -> f64 {
        let needle_words = words(needle);
        if needle_words.is_empty() {
            return 1.0;
        }
        let hay_words = words(haystack);
        let n = needle_words.join(" ");
        let h = hay_words.join(" ");
        if format!(" {h} ").contains(&format!(" {n} ")) {
            return 1.0;
        }
        let mut starts = BTreeSet::new();
        for (i, w) in hay_words.iter().enumerate() {
            for (j, x) in needle_words.iter().enumerate() {
                if w == x {
                    starts.insert(i.saturating_sub(j));
                }
            }
        }
        starts
            .into_iter()
            .map(|start| {
                let end = (start + needle_words.len()).min(hay_words.len());
                strsim::normalized_levenshtein(&n, &hay_words[start..end].join(" "))
            })
            .fold(0f64, f64::max)
    }

    proptest! {
        #[test]
        fn every_run_of_the_chunks_words_is_found(text in "[a-z]{1,6}( [a-z]{1,6}){2,20}", a in 0usize..20, len in 1usize..5) {
            let w: Vec<&str> = text.split(' ').collect();
            let a = a.min(w.len() - 1);
            let b = (a + len).min(w.len());
            prop_assert_eq!(span_score(&w[a..b].join(" "), &text), 1.0);
        }

        #[test]
        fn a_prepared_haystack_scores_as_the_first_implementation(
            hay in prop::collection::vec(0usize..12, 0..60),
            needles in prop::collection::vec(prop::collection::vec(0usize..14, 0..8), 1..4),
        ) {
            let vocab = ["rose", "Revenue", "to", "3.5", "billion", "in", "the", "cloud", "clouds", "of", "acquired", "a", "Northwind", "Trader"];
            let text = |ws: &[usize]| ws.iter().map(|&w| vocab[w]).collect::<Vec<_>>().join(" ");
            let haystack = text(&hay);
            let question = Question {
                answer: text(&needles[0]),
                source_sentences: needles[1..].iter().map(|n| text(n)).collect(),
                ..Question::default()
            };
            for needle in &needles {
                prop_assert_eq!(span_score(&text(needle), &haystack), span_score_reference(&text(needle), &haystack));
            }
            let cited: Vec<f64> = question.source_sentences.iter().filter(|s| !s.trim().is_empty()).map(|s| span_score_reference(s, &haystack)).collect();
            let citation = (!cited.is_empty()).then(|| cited.iter().sum::<f64>() / cited.len() as f64);
            prop_assert_eq!(question_scores(&question, &haystack), (span_score_reference(&question.answer, &haystack), citation));
        }

        #[test]
        fn scores_are_between_zero_and_one(needle in ".{0,30}", hay in ".{0,80}") {
            let s = span_score(&needle, &hay);
            prop_assert!((0.0..=1.0).contains(&s));
        }
    }
}
