//! An English stopword list: function words, plus the verbs of reported speech that fact-check
//! claims open with ("says", "claimed"), which carry no topic.
//!
//! It decides what the offline keyword rule breaks phrases at and which words count as a claim's
//! content words; changing it changes those rules' output (bump their versions).

use std::collections::HashSet;

/// Sorted, lowercase (a test holds the order, which [`is_stopword`]'s binary search needs).
pub const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "according",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "claim",
    "claimed",
    "claims",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "s",
    "said",
    "same",
    "say",
    "says",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Whether a lowercase word is a stopword.
pub fn is_stopword(word: &str) -> bool {
    // A hash set: one hash and at most a compare or two, where the binary search made eight
    // string compares (content words are counted in every text of a build).
    static SET: std::sync::LazyLock<HashSet<&'static str, foldhash::fast::FixedState>> =
        std::sync::LazyLock::new(|| STOPWORDS.iter().copied().collect());
    word.len() <= LONGEST && SET.contains(word)
}

/// The longest stopword's length in bytes: a longer word is none.
const LONGEST: usize = {
    let mut longest = 0;
    let mut i = 0;
    while i < STOPWORDS.len() {
        if STOPWORDS[i].len() > longest {
            longest = STOPWORDS[i].len();
        }
        i += 1;
    }
    longest
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_for_binary_search() {
        let mut s = STOPWORDS.to_vec();
        s.sort_unstable();
        assert_eq!(s, STOPWORDS);
        assert!(is_stopword("the") && is_stopword("says"));
        assert!(!is_stopword("moon") && !is_stopword("The"));
        for w in STOPWORDS {
            assert!(is_stopword(w), "{w}");
            assert!(
                !is_stopword(&format!("{w}s"))
                    || s.binary_search(&format!("{w}s").as_str()).is_ok()
            );
            assert!(!is_stopword(&w[1..]) || s.binary_search(&&w[1..]).is_ok());
        }
        assert!(!is_stopword("") && !is_stopword("abovementioned"));
    }
}
