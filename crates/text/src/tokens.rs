//! cl100k token counting, exact and fast.
//!
//! `tiktoken-rs` is the reference: its BPE table (embedded, offline) encodes every piece. Its own
//! pre-tokenizer runs `fancy-regex` and reaches about 6 MB/s on one core, below the chunker's
//! target, so [`pieces`] splits text into the same pieces with a hand-written scanner of cl100k's
//! pattern, and [`TokenCounter`] caches the token count of each distinct piece. Unit and property
//! tests hold the result equal to tiktoken's `encode_ordinary(text).len()`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use tiktoken_rs::CoreBPE;

/// Character classes of cl100k's pattern: `\p{L}`, `\p{N}`, `[\r\n]`, other `\s`, the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Number,
    Newline,
    Space,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return match c {
            'a'..='z' | 'A'..='Z' => Class::Letter,
            '0'..='9' => Class::Number,
            '\r' | '\n' => Class::Newline,
            ' ' | '\t' | '\x0b' | '\x0c' => Class::Space,
            _ => Class::Other,
        };
    }
    // Rust's `char` has no general category; the regex crate's Unicode tables do.
    static RE: OnceLock<[Regex; 3]> = OnceLock::new();
    // Invariant: constant patterns compile.
    let [l, n, s] = RE.get_or_init(|| {
        [r"\A\p{L}", r"\A\p{N}", r"\A\s"].map(|p| Regex::new(p).expect("constant pattern"))
    });
    let mut buf = [0u8; 4];
    let one: &str = c.encode_utf8(&mut buf);
    if l.is_match(one) {
        Class::Letter
    } else if n.is_match(one) {
        Class::Number
    } else if s.is_match(one) {
        Class::Space
    } else {
        Class::Other
    }
}

/// Splits `text` into cl100k pre-tokenizer pieces, in order; concatenated they give `text` back.
///
/// The pattern, alternatives tried in order at each position:
/// `'(?i:[sdmt]|ll|ve|re)` | `[^\r\n\p{L}\p{N}]?\p{L}+` | `\p{N}{1,3}` |
/// ` ?[^\s\p{L}\p{N}]+[\r\n]*` | `\s+$` | `\s*[\r\n]` | `\s+(?!\S)` | `\s`.
pub fn pieces(text: &str) -> Pieces<'_> {
    Pieces {
        text,
        chars: text.char_indices().map(|(i, c)| (i, c, class(c))).collect(),
        pos: 0,
    }
}

/// Iterator returned by [`pieces`].
pub struct Pieces<'a> {
    text: &'a str,
    chars: Vec<(usize, char, Class)>,
    pos: usize,
}

impl Pieces<'_> {
    fn class_at(&self, i: usize) -> Option<Class> {
        self.chars.get(i).map(|c| c.2)
    }

    fn char_at(&self, i: usize) -> Option<char> {
        self.chars.get(i).map(|c| c.1)
    }

    fn run(&self, mut i: usize, f: impl Fn(Class) -> bool) -> usize {
        while self.class_at(i).is_some_and(&f) {
            i += 1;
        }
        i
    }

    /// End (in chars) of the piece starting at char `i`.
    fn piece_end(&self, i: usize) -> usize {
        let n = self.chars.len();
        let c = self.chars[i].1;
        let cls = self.chars[i].2;
        if c == '\'' {
            // `(?i)` folds the long s (U+017F) to `s` as well.
            let fold = |c: char| {
                if c == 'ſ' {
                    's'
                } else {
                    c.to_ascii_lowercase()
                }
            };
            let a = self.char_at(i + 1).map(fold);
            let b = self.char_at(i + 2).map(fold);
            match (a, b) {
                (Some('l'), Some('l')) | (Some('v'), Some('e')) | (Some('r'), Some('e')) => {
                    return i + 3;
                }
                (Some('s' | 'd' | 'm' | 't'), _) => return i + 2,
                _ => {}
            }
        }
        if cls == Class::Letter {
            return self.run(i, |c| c == Class::Letter);
        }
        if matches!(cls, Class::Space | Class::Other) && self.class_at(i + 1) == Some(Class::Letter)
        {
            return self.run(i + 1, |c| c == Class::Letter);
        }
        if cls == Class::Number {
            let end = self.run(i, |c| c == Class::Number);
            return end.min(i + 3);
        }
        let punct_from = if c == ' ' { i + 1 } else { i };
        if self.class_at(punct_from) == Some(Class::Other) {
            let end = self.run(punct_from, |c| c == Class::Other);
            return self.run(end, |c| c == Class::Newline);
        }
        // Whitespace.
        let end = self.run(i, |c| matches!(c, Class::Space | Class::Newline));
        if end == n {
            return end;
        }
        if let Some(last_nl) = (i..end).rev().find(|&k| self.chars[k].2 == Class::Newline) {
            return last_nl + 1;
        }
        if end - i > 1 { end - 1 } else { i + 1 }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.chars.len() {
            return None;
        }
        let start = self.pos;
        let end = self.piece_end(start);
        self.pos = end;
        let from = self.chars[start].0;
        let to = self.chars.get(end).map_or(self.text.len(), |c| c.0);
        Some(&self.text[from..to])
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
        self.measure(text, "").0
    }

    fn piece_count(&self, cache: &mut HashMap<String, u32>, piece: &str) -> usize {
        if let Some(&n) = cache.get(piece) {
            return n as usize;
        }
        let n = self.bpe.encode_ordinary(piece).len();
        // Bound memory on adversarial input: long pieces are rare and not worth keeping.
        if piece.len() <= 64 {
            cache.insert(piece.to_string(), n as u32);
        }
        n
    }

    /// Tokens of `text` alone, and of `text` followed by `sep` (ending in a newline) and further
    /// text: only the last pre-tokenizer piece of `text` can merge with such a separator, so
    /// joined texts count exactly as `joined(a) + b`. The second is not always the larger: BPE
    /// may encode a trailing run of punctuation in fewer tokens once the newlines join it
    /// (`(''')` then a blank line), which is why it is not given as a difference. One pass over
    /// `text`.
    pub fn measure(&self, text: &str, sep: &str) -> (usize, usize) {
        let mut cache = self.cache.borrow_mut();
        let mut total = 0usize;
        let mut last = "";
        for piece in pieces(text) {
            total += self.piece_count(&mut cache, piece);
            last = piece;
        }
        if sep.is_empty() {
            return (total, total);
        }
        let joined = format!("{last}{sep}");
        let with: usize = pieces(&joined)
            .map(|p| self.piece_count(&mut cache, p))
            .sum();
        let alone = if last.is_empty() {
            0
        } else {
            self.piece_count(&mut cache, last)
        };
        // `alone` is one of the pieces summed into `total`, so this never underflows.
        (total, total - alone + with)
    }

    /// Tokens of `text` when `sep` and further text follow it (see [`Self::measure`]).
    pub fn joined_count(&self, text: &str, sep: &str) -> usize {
        self.measure(text, sep).1
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
            "don't 'LL 'Ve 're 'x '",
            "((word)) 1234567 ²³ ٣٤٥ e\u{301}t\u{2028}x",
            "•Beef - 12.6% ’s ‘quoted’",
            "\r\n\r\n",
        ] {
            assert_eq!(c.count(text), c.reference_count(text), "{text:?}");
        }
    }

    #[test]
    fn joined_counts_are_additive() {
        let c = TokenCounter::new();
        for (a, b) in [
            ("It ended.", "Next one"),
            ("no stop", "Next"),
            ("a table |", "| x |"),
            ("12,345", "(1) note"),
            // BPE encodes this run in fewer tokens once the newlines join it.
            ("(''')", "A"),
        ] {
            let joined = format!("{a}\n\n{b}");
            assert_eq!(
                c.count(&joined),
                c.joined_count(a, "\n\n") + c.count(b),
                "{a:?} + {b:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn counts_match_tiktoken(text in "[a-zA-Z0-9 .,;:'$%()\\n\\r\\t\u{a0}\u{2028}\u{301}é東’•²٣ſ-]{0,200}") {
            let c = TokenCounter::new();
            prop_assert_eq!(c.count(&text), c.reference_count(&text));
        }

        #[test]
        fn joins_are_additive(a in "[a-zA-Z0-9 .,:'$%()é-]{0,60}[a-z.%)]", b in "[a-zA-Z0-9(|$][a-zA-Z0-9 .,:'$%()é-]{0,60}") {
            let c = TokenCounter::new();
            let joined = format!("{a}\n\n{b}");
            prop_assert_eq!(c.count(&joined), c.joined_count(&a, "\n\n") + c.count(&b));
        }
    }
}
