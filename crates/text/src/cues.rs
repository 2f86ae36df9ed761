//! Refutation and confirmation cues: how much of a claim a text mentions and which phrases in it
//! signal that the claim is refuted ("hoax", "no evidence") or confirmed ("records show").
//!
//! The offline LLM rules of the exam and stance tasks decide from these signals, so the rules of
//! two stages (the counter-evidence drafts of `queries` and the exam of `labels`) read a text the
//! same way. A lexicon, not a classifier: it is there to make offline runs deterministic.

use std::collections::BTreeMap;

use crate::words::{count_phrases, share_found, words};

/// Phrases that signal a refutation, lowercase.
pub(crate) const REFUTE_CUES: &[&str] = &[
    "false",
    "not true",
    "untrue",
    "debunked",
    "debunk",
    "hoax",
    "fake",
    "misleading",
    "no evidence",
    "myth",
    "incorrect",
    "wrong",
    "fabricated",
    "baseless",
    "pants on fire",
    "not accurate",
    "inaccurate",
    "never happened",
    "disproven",
    "refuted",
];

/// Phrases that signal a confirmation, lowercase.
pub(crate) const SUPPORT_CUES: &[&str] = &[
    "true",
    "confirmed",
    "confirms",
    "correct",
    "accurate",
    "indeed",
    "verified",
    "evidence shows",
    "data show",
    "data shows",
    "records show",
    "official figures",
];

/// What a text says about a claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Signals {
    /// Share of the claim's content words found in the text.
    pub relevance: f64,
    /// Refutation cues found, with their counts.
    pub refute: BTreeMap<String, usize>,
    /// Confirmation cues found, with their counts.
    pub support: BTreeMap<String, usize>,
}

impl Signals {
    /// Read `text` against `claim`. A cue that also appears in the claim says nothing about the
    /// text's stance ("The hoax was real" is not refuted by repeating "hoax"), so it is left out.
    pub fn of(claim: &str, text: &str) -> Signals {
        let tw = words(text);
        let claim_words = words(claim);
        let strip = |mut m: BTreeMap<String, usize>| {
            m.retain(|cue, _| !count_phrases(&claim_words, &[cue.as_str()]).contains_key(cue));
            m
        };
        Signals {
            relevance: share_found(claim, &tw),
            refute: strip(count_phrases(&tw, REFUTE_CUES)),
            support: strip(count_phrases(&tw, SUPPORT_CUES)),
        }
    }

    pub fn refute_count(&self) -> usize {
        self.refute.values().sum()
    }

    pub fn support_count(&self) -> usize {
        self.support.values().sum()
    }

    /// `(relevance, refuting cues, supporting cues)`.
    pub fn counts(&self) -> (f64, usize, usize) {
        (self.relevance, self.refute_count(), self.support_count())
    }
}

/// `(relevance, refuting cues, supporting cues)` of `text` read against `claim`.
pub fn cue_counts(claim: &str, text: &str) -> (f64, usize, usize) {
    Signals::of(claim, text).counts()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_in_the_claim_do_not_count() {
        let s = Signals::of(
            "The moon landing was a hoax",
            "The moon landing hoax is false; records show the landing happened.",
        );
        assert_eq!(s.relevance, 1.0);
        assert_eq!(s.refute.keys().collect::<Vec<_>>(), ["false"]);
        assert_eq!(s.counts(), (1.0, 1, 1));
        assert_eq!(cue_counts("x", ""), (0.0, 0, 0));
    }
}
