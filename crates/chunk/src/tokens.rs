//! cl100k token counting, exact and fast.
//!
//! `tiktoken-rs` is the reference: its BPE table (embedded, offline) encodes every piece. Its own
//! pre-tokenizer runs `fancy-regex` and reaches about 6 MB/s on one core, below the chunker's
//! target, so [`TokenCounter`] splits text into the same pieces with the `regex` crate (emulating
//! the pattern's one look-ahead by hand, as tiktoken's own source suggests) and caches the token
//! count of each distinct piece. Tests hold the result equal to `encode_ordinary(text).len()`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use tiktoken_rs::CoreBPE;

/// cl100k's pre-tokenizer pattern without possessive quantifiers and without `\s+(?!\S)`;
/// [`pieces`] restores the look-ahead's effect. Same alternatives, same (leftmost-first) order.
const PIECE_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+";

fn piece_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: the pattern is a constant that compiles (a unit test builds it).
    RE.get_or_init(|| Regex::new(PIECE_PATTERN).expect("constant pattern compiles"))
}

/// Splits `text` into cl100k pre-tokenizer pieces, in order; concatenated they give `text` back.
pub fn pieces(text: &str) -> Pieces<'_> {
    Pieces { text, pos: 0 }
}

/// Iterator returned by [`pieces`].
pub struct Pieces<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        // Every character matches one alternative, so the leftmost match starts at `start`.
        let mut end = match piece_regex().find_at(self.text, start) {
            Some(m) if m.start() == start => m.end(),
            _ => start + self.text[start..].chars().next().map_or(1, char::len_utf8),
        };
        let s = &self.text[start..end];
        // A whitespace run that neither ends the text nor ends in a newline came from `\s+`; the
        // original `\s+(?!\S)` leaves its last character to start the next piece.
        if end < self.text.len() && !s.ends_with(['\r', '\n']) && s.chars().all(char::is_whitespace)
        {
            let last = s.chars().next_back().map_or(0, char::len_utf8);
            if s.len() > last {
                end -= last;
            }
        }
        self.pos = end;
        Some(&self.text[start..end])
    }
}

/// Counts cl100k tokens. Builds the BPE once per process; caches per-piece counts per counter.
pub struct TokenCounter {
    bpe: &'static CoreBPE,
    cache: RefCell<HashMap<String, u32>>,
}

impl Default for TokenCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl TokenCounter {
    pub fn new() -> Self {
        Self {
            bpe: tiktoken_rs::cl100k_base_singleton(),
            cache: RefCell::new(HashMap::new()),
        }
    }

    /// Exact cl100k token count of `text` (special tokens are treated as ordinary text).
    pub fn count(&self, text: &str) -> usize {
        let mut cache = self.cache.borrow_mut();
        let mut total = 0usize;
        for piece in pieces(text) {
            if let Some(&n) = cache.get(piece) {
                total += n as usize;
            } else {
                let n = self.bpe.encode_ordinary(piece).len();
                // Bound memory on adversarial input: long pieces are rare and not worth keeping.
                if piece.len() <= 64 {
                    cache.insert(piece.to_string(), n as u32);
                }
                total += n;
            }
        }
        total
    }

    /// Tokens that `text` gains when `sep` and further text follow it: only the last
    /// pre-tokenizer piece of `text` can merge with a separator that ends in a newline.
    pub fn join_cost(&self, text: &str, sep: &str) -> usize {
        let last = pieces(text).last().unwrap_or("");
        let joined = format!("{last}{sep}");
        self.count(&joined) - self.count(last)
    }

    /// The reference count, straight from tiktoken (slow; for tests and checks).
    pub fn reference_count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pieces_concatenate_back_to_the_text() {
        let text = "Net sales  rose 12.5%.\n\n   It's   fine\t\tok\r\n  x  ";
        assert_eq!(pieces(text).collect::<String>(), text);
    }

    #[test]
    fn counts_match_tiktoken_on_tricky_text() {
        let c = TokenCounter::new();
        for text in [
            "",
            " ",
            "a",
            "Hello world",
            "Net sales   increased 82.7% to $117.8 million.\n\nGross profit",
            "  leading spaces and trailing   ",
            "tabs\t\tand\u{a0}nbsp\u{3000}ideographic",
            "newlines\n\n\n  indented\n",
            "They'll say it's ours; WE'RE sure.",
            "| a | b |\n| --- | --- |\n| 1 | 2 |",
            "€100 — ünïcödé 東京 123456789",
            "x  \n  y",
        ] {
            assert_eq!(c.count(text), c.reference_count(text), "{text:?}");
        }
    }

    #[test]
    fn join_cost_makes_counts_additive() {
        let c = TokenCounter::new();
        for (a, b) in [
            ("It ended.", "Next one"),
            ("no stop", "Next"),
            ("a table |", "| x |"),
            ("12,345", "(1) note"),
        ] {
            let joined = format!("{a}\n\n{b}");
            assert_eq!(
                c.count(&joined),
                c.count(a) + c.join_cost(a, "\n\n") + c.count(b),
                "{a:?} + {b:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn counts_match_tiktoken(text in "[a-zA-Z0-9 .,;:'$%()\\n\\t\u{a0}é東-]{0,200}") {
            let c = TokenCounter::new();
            prop_assert_eq!(c.count(&text), c.reference_count(&text));
        }

        #[test]
        fn joins_are_additive(a in "[a-zA-Z0-9 .,:'$%()é-]{0,60}[a-z.%)]", b in "[a-zA-Z0-9(|$][a-zA-Z0-9 .,:'$%()é-]{0,60}") {
            let c = TokenCounter::new();
            let joined = format!("{a}\n\n{b}");
            prop_assert_eq!(c.count(&joined), c.count(&a) + c.join_cost(&a, "\n\n") + c.count(&b));
        }
    }
}
