//! The `word_level` query perturbation (RARE C.1; TextAttack swaps words for embedding
//! neighbours, we take WordNet 3.0 synonyms): about `rate` of the query's unprotected words are
//! replaced by a synonym.
//!
//! The synonyms are `data/wordnet-synonyms.txt.zst`, derived from WordNet 3.0 by
//! `data/derive_synonyms.py` (licence: `data/WORDNET-LICENSE`): one line per lowercase word,
//! then its single-word synonyms from its most frequent noun, verb, adjective and adverb senses.
//! It is compiled into the crate and read once.

use std::collections::HashMap;
use std::sync::OnceLock;

use rand::Rng;
use rand::seq::index::sample;

use crate::typos::{Perturbed, changes_for};

static COMPRESSED: &[u8] = include_bytes!("../data/wordnet-synonyms.txt.zst");

/// Word -> synonyms, in the file's order. Never iterated, so its order reaches no output.
pub struct Synonyms {
    map: HashMap<String, Vec<String>>,
}

impl Synonyms {
    /// The compiled-in table, decompressed and parsed on first use.
    pub fn wordnet() -> &'static Synonyms {
        static TABLE: OnceLock<Synonyms> = OnceLock::new();
        TABLE.get_or_init(|| {
            // The bytes are compiled in and checked by this crate's tests: a failure here is a
            // build defect, not an input error.
            let bytes = zstd::decode_all(COMPRESSED).expect("the compiled-in synonym table");
            let text = String::from_utf8(bytes).expect("the synonym table is UTF-8");
            Synonyms::parse(&text)
        })
    }

    /// A table from lines of `word synonym synonym...`.
    pub fn parse(text: &str) -> Synonyms {
        let mut map = HashMap::new();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            if let Some(w) = words.next() {
                let syns: Vec<String> = words.map(str::to_string).collect();
                if !syns.is_empty() {
                    map.insert(w.to_string(), syns);
                }
            }
        }
        Synonyms { map }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The synonyms of a lowercase word; a regular plural (`reports`, `companies`) gets its
    /// singular's synonyms, pluralised.
    pub fn of(&self, word: &str) -> Option<Vec<String>> {
        self.entry(word).map(|(syns, plural_form)| {
            if plural_form {
                syns.iter().map(|w| plural(w)).collect()
            } else {
                syns.to_vec()
            }
        })
    }

    fn has(&self, word: &str) -> bool {
        self.entry(word).is_some()
    }

    /// The word's own synonyms, else those of its singular (`-ies` to `-y`, then a final `-s`
    /// dropped from a word of four letters or more not ending in `-ss`), and whether they came
    /// from the singular. One rule for [`Synonyms::of`] and the eligibility check, so a word
    /// found eligible always has synonyms (`dies`: no `dy`, but `die`).
    fn entry(&self, word: &str) -> Option<(&[String], bool)> {
        if let Some(s) = self.map.get(word) {
            return Some((s, false));
        }
        if let Some(stem) = word.strip_suffix("ies")
            && let Some(s) = self.map.get(&format!("{stem}y"))
        {
            return Some((s, true));
        }
        if !word.ends_with("ss")
            && word.len() >= 4
            && let Some(stem) = word.strip_suffix('s')
            && let Some(s) = self.map.get(stem)
        {
            return Some((s, true));
        }
        None
    }
}

fn plural(w: &str) -> String {
    let consonant_y = w.ends_with('y') && !w.ends_with(['a', 'e', 'i', 'o', 'u']) && {
        let b = w.as_bytes();
        b.len() >= 2 && !b"aeiou".contains(&b[b.len() - 2])
    };
    if consonant_y {
        format!("{}ies", &w[..w.len() - 1])
    } else if w.ends_with(['s', 'x', 'z']) || w.ends_with("ch") || w.ends_with("sh") {
        format!("{w}es")
    } else {
        format!("{w}s")
    }
}

/// Synonym swaps for about `rate` of `text`'s unprotected words (`mask[byte]` = protected).
/// Words are runs of ASCII letters; stopwords, words under three letters and words without a
/// synonym are never swapped, so the rate is reached only when enough words can be.
pub fn word_level(
    text: &str,
    mask: &[bool],
    rate: f64,
    synonyms: &Synonyms,
    rng: &mut impl Rng,
) -> Perturbed {
    let bytes = text.as_bytes();
    let mut counted = 0;
    let mut eligible: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        // A word glued to digits or other letters (`Q4`, `café`) is not a word of its own.
        let glued = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_digit() || *b >= 0x80);
        if glued(bytes.get(i)) || (start > 0 && glued(bytes.get(start - 1))) {
            continue;
        }
        if mask[start..i].iter().any(|&p| p) {
            continue;
        }
        counted += 1;
        let lower = text[start..i].to_ascii_lowercase();
        if lower.len() >= 3 && !noisebench_text::is_stopword(&lower) && synonyms.has(&lower) {
            eligible.push((start, i));
        }
    }
    let k = changes_for(rate, counted).min(eligible.len());
    let mut picked: Vec<usize> = sample(rng, eligible.len(), k).into_vec();
    picked.sort_unstable();
    let mut out = String::with_capacity(text.len() + 16);
    let mut from = 0;
    for p in picked {
        let (s, e) = eligible[p];
        let word = &text[s..e];
        let syns = synonyms.of(&word.to_ascii_lowercase()).unwrap_or_default();
        out.push_str(&text[from..s]);
        let syn = &syns[rng.random_range(0..syns.len())];
        if word.starts_with(|c: char| c.is_ascii_uppercase()) {
            out.push_str(&noisebench_text::upper_first(syn));
        } else {
            out.push_str(syn);
        }
        from = e;
    }
    out.push_str(&text[from..]);
    Perturbed {
        text: out,
        changed: k,
        counted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn the_wordnet_table_loads_with_sensible_entries() {
        let s = Synonyms::wordnet();
        assert!(s.len() > 30_000, "{}", s.len());
        assert!(s.of("large").unwrap().contains(&"big".to_string()));
        assert!(s.of("quickly").unwrap().contains(&"rapidly".to_string()));
        assert!(s.of("reports").unwrap().iter().all(|w| w.ends_with('s')));
        assert_eq!(plural("company"), "companies");
        assert_eq!(plural("tax"), "taxes");
        assert_eq!(plural("day"), "days");
        assert!(s.of("the").is_none() || noisebench_text::is_stopword("the"));
    }

    #[test]
    fn a_word_found_eligible_always_has_synonyms() {
        // `dies` ends in -ies but `dy` has no entry: its singular is `die`. This panicked on an
        // empty synonym list before `of` and the eligibility check shared one rule.
        let s = Synonyms::parse("die perish\nstudy survey\n");
        assert_eq!(s.of("dies").unwrap(), ["perishes"]);
        assert_eq!(s.of("studies").unwrap(), ["surveys"]);
        assert!(s.of("dy").is_none() && !s.has("dy"));
        for w in ["dies", "studies", "die", "perish", "diess", "ies"] {
            assert_eq!(s.has(w), s.of(w).is_some_and(|v| !v.is_empty()), "{w}");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let out = word_level("dies aaa aaa aaa aaa", &[false; 20], 1.0, &s, &mut rng);
        assert_eq!(out.text, "perishes aaa aaa aaa aaa");
    }

    #[test]
    fn swaps_keep_case_and_leave_protected_words() {
        let s = Synonyms::parse("large big\nrevenue receipts\nquickly rapidly\n");
        let text = "Large revenue grew quickly at Large Corp";
        let mask = crate::protect::protected_mask(text, &[] as &[&str]);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let out = word_level(text, &mask, 1.0, &s, &mut rng);
        assert_eq!(out.text, "Big receipts grew rapidly at Large Corp");
        assert_eq!((out.changed, out.counted), (3, 5));
    }
}
