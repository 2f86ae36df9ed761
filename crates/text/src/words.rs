//! Words and normalisation: what "the same words" means for containment and overlap checks.
//!
//! A word is a maximal run of alphanumeric characters, lowercased: punctuation, apostrophes and
//! the inner `.`/`,` of numbers separate words (`"U.S."` is `u`, `s`; `"3.5"` is `3`, `5`), so two
//! texts compare equal whatever their spacing, case and punctuation.

use std::collections::{BTreeMap, BTreeSet};

use crate::stopwords::is_stopword;

/// Lowercase alphanumeric words, in order.
pub fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The distinct words of at least three characters that are not stopwords.
pub fn content_words(s: &str) -> BTreeSet<String> {
    content_of(words(s))
}

/// [`content_words`] of a text's [`words`] already split (a caller that needs both splits once).
pub fn content_of(words: Vec<String>) -> BTreeSet<String> {
    words
        .into_iter()
        .filter(|w| w.len() >= 3 && !is_stopword(w))
        .collect()
}

/// Words joined by single spaces: case, punctuation and spacing differences removed. Built
/// without a `String` per ASCII word (a word with other characters goes through
/// `str::to_lowercase`: a final sigma depends on its word), so the words are exactly those of
/// [`words`].
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in Spans::new(s) {
        if !out.is_empty() {
            out.push(' ');
        }
        if w.is_ascii() {
            out.extend(w.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            out.push_str(&w.to_lowercase());
        }
    }
    out
}

/// The words of a text as slices of it, before lowercasing: maximal runs of alphanumeric
/// characters, found byte by byte while the text is ASCII.
#[derive(Debug, Clone)]
struct Spans<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Spans<'a> {
    fn new(s: &'a str) -> Self {
        Self { s, at: 0 }
    }

    /// Move past characters while they are (or are not) alphanumeric.
    #[inline]
    fn skip(&mut self, alphanumeric: bool) {
        let b = self.s.as_bytes();
        while self.at < b.len() {
            let c = b[self.at];
            if c < 0x80 {
                if c.is_ascii_alphanumeric() != alphanumeric {
                    return;
                }
                self.at += 1;
            } else {
                let ch = self.s[self.at..].chars().next().unwrap_or(' ');
                if ch.is_alphanumeric() != alphanumeric {
                    return;
                }
                self.at += ch.len_utf8();
            }
        }
    }
}

impl<'a> Iterator for Spans<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        self.skip(false);
        if self.at >= self.s.len() {
            return None;
        }
        let start = self.at;
        self.skip(true);
        Some(&self.s[start..self.at])
    }
}

/// Whether `needle`'s words appear in `haystack` as a run of whole words (after
/// [`normalize`]). An empty needle is never contained.
pub fn contains_phrase(haystack: &str, needle: &str) -> bool {
    Phrase::new(needle).is_in(haystack)
}

/// A needle for [`contains_phrase`], its words lowercased once, tested against many haystacks
/// without normalising them: their words are compared one by one as they are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    words: Vec<String>,
}

impl Phrase {
    pub fn new(needle: &str) -> Self {
        Self {
            words: words(needle),
        }
    }

    /// Whether the phrase has no words (it is then in nothing).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// [`contains_phrase`]`(haystack, needle)`.
    pub fn is_in(&self, haystack: &str) -> bool {
        let Some((first, rest)) = self.words.split_first() else {
            return false;
        };
        if haystack.is_ascii() {
            return self.is_in_ascii(haystack, first, rest);
        }
        let mut scratch = String::new();
        let mut same = |w: &str, lower: &str| {
            if w.is_ascii() {
                w.len() == lower.len() && w.eq_ignore_ascii_case(lower)
            } else {
                scratch.clear();
                scratch.push_str(&w.to_lowercase());
                scratch == lower
            }
        };
        let mut spans = Spans::new(haystack);
        while let Some(w) = spans.next() {
            if same(w, first) {
                let mut after = spans.clone();
                if rest
                    .iter()
                    .all(|n| after.next().is_some_and(|w| same(w, n)))
                {
                    return true;
                }
            }
        }
        false
    }

    /// [`Phrase::is_in`] for an ASCII haystack, whose words are all ASCII: a phrase with any
    /// other word is in none of them. The first word's places are found by its first byte
    /// (`memchr`, either case) instead of walking every word; a place where the first word
    /// stands whole is then checked word by word as [`Phrase::is_in`] does.
    fn is_in_ascii(&self, haystack: &str, first: &str, rest: &[String]) -> bool {
        if !self.words.iter().all(|w| w.is_ascii()) {
            return false;
        }
        let b = haystack.as_bytes();
        let f = first.as_bytes();
        let (lower, upper) = (f[0].to_ascii_lowercase(), f[0].to_ascii_uppercase());
        let whole = |i: usize| {
            (i == 0 || !b[i - 1].is_ascii_alphanumeric())
                && b.len() - i >= f.len()
                && b[i..i + f.len()].eq_ignore_ascii_case(f)
                && b.get(i + f.len())
                    .is_none_or(|c| !c.is_ascii_alphanumeric())
        };
        let same = |w: &str, lower: &str| w.len() == lower.len() && w.eq_ignore_ascii_case(lower);
        memchr::memchr2_iter(lower, upper, b)
            .filter(|&i| whole(i))
            .any(|i| {
                let mut after = Spans {
                    s: haystack,
                    at: i + f.len(),
                };
                rest.iter()
                    .all(|n| after.next().is_some_and(|w| same(w, n)))
            })
    }
}

/// How often each phrase (lowercase words separated by single spaces) occurs as a run of whole
/// words in `text_words`; phrases that do not occur are left out.
pub(crate) fn count_phrases(text_words: &[String], phrases: &[&str]) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    for phrase in phrases {
        let pw: Vec<&str> = phrase.split(' ').collect();
        let n = text_words
            .windows(pw.len())
            .filter(|w| w.iter().zip(&pw).all(|(a, b)| a == b))
            .count();
        if n > 0 {
            found.insert((*phrase).to_string(), n);
        }
    }
    found
}

/// The share of `needles`' [`content_words`] found among `haystack_words` (0 when it has none).
pub fn share_found(needles: &str, haystack_words: &[String]) -> f64 {
    let wanted = content_words(needles);
    if wanted.is_empty() {
        return 0.0;
    }
    let have: BTreeSet<&str> = haystack_words.iter().map(String::as_str).collect();
    wanted.iter().filter(|w| have.contains(w.as_str())).count() as f64 / wanted.len() as f64
}

/// `s` with its first character uppercased.
pub fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Month names and their usual abbreviations, lowercase.
pub const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
];

/// Cardinal numbers written as words, lowercase, in order from zero (`CARDINALS[i]` is `i` up
/// to twenty, then the tens).
pub const CARDINALS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
];

/// Words besides the [`CARDINALS`] that are a number or part of one ("4.2 million", "twelve
/// percent", "the third quarter", "half a century"), lowercase: scales, ordinals, fractions.
const NUMBER_PARTS: &[&str] = &[
    "hundred", "thousand", "million", "billion", "trillion", "dozen", "percent", "half", "quarter",
    "first", "second", "third", "fourth", "fifth", "tenth", "century",
];

/// Whether a lowercase word is a month name or abbreviation ([`MONTHS`]).
pub fn is_month(word: &str) -> bool {
    MONTHS.contains(&word)
}

/// Whether a lowercase word is a number or part of one: a cardinal ([`CARDINALS`]), a scale
/// ("million"), an ordinal ("third"), a fraction ("half", "quarter"), "percent" or "century".
pub fn is_number_word(word: &str) -> bool {
    CARDINALS.contains(&word) || NUMBER_PARTS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn words_ignore_case_and_punctuation() {
        assert_eq!(
            words("The U.S. grew 3.5%!"),
            ["the", "u", "s", "grew", "3", "5"]
        );
        assert_eq!(normalize("  Net-sales,  ROSE. "), "net sales rose");
        assert_eq!(
            content_words("Says the moon is made of cheese"),
            ["cheese", "made", "moon"].map(String::from).into()
        );
    }

    #[test]
    fn phrases_match_whole_words_only() {
        assert!(contains_phrase(
            "Free public transport, in Luxembourg.",
            "public TRANSPORT"
        ));
        assert!(!contains_phrase("transportation", "transport"));
        assert!(!contains_phrase("anything", " ,. "));
        let w = words("No evidence: it is false, false and a hoax. Not true.");
        let found = count_phrases(&w, &["false", "no evidence", "not true", "debunked"]);
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            [
                ("false".to_string(), 2),
                ("no evidence".into(), 1),
                ("not true".into(), 1)
            ]
        );
        let text = words("The city banned plastic bags");
        assert_eq!(share_found("City bans plastic bags", &text), 0.75);
        assert_eq!(share_found("the of", &text), 0.0);
    }

    /// What [`contains_phrase`] means: the needle's normalised words, space-delimited, inside
    /// the haystack's.
    fn phrase_by_normalising(haystack: &str, needle: &str) -> bool {
        let n = normalize(needle);
        !n.is_empty() && format!(" {} ", normalize(haystack)).contains(&format!(" {n} "))
    }

    #[test]
    fn phrases_in_ascii_texts_are_found_at_word_edges_in_any_case() {
        let p = Phrase::new("Public transport");
        assert!(p.is_in("public transport"));
        assert!(p.is_in("Free PUBLIC  transport."));
        assert!(p.is_in("9 public-transport 9"));
        assert!(!p.is_in("republic transport"));
        assert!(!p.is_in("public transportation"));
        assert!(!p.is_in("public"));
        assert!(!p.is_in("publictransport"));
        // A first word found once too early, then whole.
        assert!(p.is_in("publicity, public transport"));
        assert!(Phrase::new("2019").is_in("in 2019."));
        assert!(!Phrase::new("café").is_in("cafe"));
        assert!(Phrase::new("café").is_in("Café au lait"));
    }

    proptest! {
        /// The ASCII path and the general one agree with the definition.
        #[test]
        fn a_phrase_is_in_a_text_as_its_normalised_words_are(
            haystack in proptest::collection::vec(
                prop_oneof![
                    Just("Bank"), Just("bank"), Just("BANKS"), Just("of"), Just("Of"),
                    Just("the"), Just("2019"), Just(" "), Just(", "), Just("."), Just("-"),
                    Just("é"), Just("Éa"), Just("\u{212A}ey"), Just("key"),
                ],
                0..24,
            ),
            needle in proptest::collection::vec(
                prop_oneof![
                    Just("bank"), Just("Of"), Just("the"), Just("2019"), Just(" "), Just("."),
                    Just("éa"), Just("key"), Just("banks"),
                ],
                0..5,
            ),
        ) {
            let (h, n) = (haystack.concat(), needle.concat());
            prop_assert_eq!(contains_phrase(&h, &n), phrase_by_normalising(&h, &n), "{:?} in {:?}", n, h);
        }

        #[test]
        fn any_phrase_is_in_any_text_as_its_normalised_words_are(
            h in "[a-cA-C0-9 ,.é]{0,30}",
            n in "[a-cA-C0-9 é]{0,6}",
        ) {
            prop_assert_eq!(contains_phrase(&h, &n), phrase_by_normalising(&h, &n));
        }

        #[test]
        fn normalizing_is_idempotent(s in "\\PC{0,80}") {
            let once = normalize(&s);
            prop_assert_eq!(normalize(&once), once.clone());
            prop_assert!(once.is_empty() || contains_phrase(&s, &once));
        }

        /// The allocation-light forms say what the word lists say (Greek sigma, Turkish
        /// dotted I and other non-ASCII case rules included).
        #[test]
        fn normalize_and_contains_match_the_word_lists(
            h in "[a-zA-Z0-9 .,ΣσςİÄäß]{0,60}",
            n in "[a-zA-Z0-9 .,ΣσςİÄäß]{0,12}",
        ) {
            prop_assert_eq!(normalize(&h), words(&h).join(" "));
            let (hw, nw) = (words(&h).join(" "), words(&n).join(" "));
            let slow = !nw.is_empty() && format!(" {hw} ").contains(&format!(" {nw} "));
            prop_assert_eq!(contains_phrase(&h, &n), slow);
        }
    }
}
