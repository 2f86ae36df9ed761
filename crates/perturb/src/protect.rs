//! What a query perturbation must never alter: numbers and years, the entity names of the
//! question's triplets, and names the question itself writes (capitalised words mid-sentence,
//! acronyms). Altering them would change what the question asks, not how it is written.
//!
//! The result is a byte mask over the query: `true` bytes are protected. The character and word
//! rules ([`crate::typos`], [`crate::synonyms`]) only touch unprotected bytes.

/// The runs of alphanumeric characters of `text`, as byte ranges.
pub(crate) fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// The protected bytes of `text` (`true` = never altered), given the phrases to keep (entity
/// names): every whitespace-separated token holding a digit (numbers, years, `$4.2m`, `Q4`),
/// every number word (`million`, `twelve`, `percent`, `quarter`),
/// every whole-word, case-insensitive occurrence of a phrase, every capitalised word that does
/// not open a sentence, and every word with a capital after its first letter (`GDP`, `iPhone`).
pub fn protected_mask<S: AsRef<str>>(text: &str, phrases: &[S]) -> Vec<bool> {
    let mut mask = vec![false; text.len()];
    let protect = |from: usize, to: usize, mask: &mut Vec<bool>| {
        mask[from..to].iter_mut().for_each(|b| *b = true);
    };
    // Numbers: the whole whitespace token, so `$96.4` or `2,500` stay whole.
    let mut at = 0;
    for token in text.split(char::is_whitespace) {
        if token.chars().any(|c| c.is_ascii_digit()) {
            protect(at, at + token.len(), &mut mask);
        }
        at += token.len()
            + text[at + token.len()..]
                .chars()
                .next()
                .map_or(0, char::len_utf8);
    }
    let spans = word_spans(text);
    let lower: Vec<String> = spans
        .iter()
        .map(|&(s, e)| text[s..e].to_lowercase())
        .collect();
    for phrase in phrases {
        let words = noisebench_text::words(phrase.as_ref());
        if words.is_empty() || words.len() > lower.len() {
            continue;
        }
        for i in 0..=lower.len() - words.len() {
            if lower[i..i + words.len()] == words[..] {
                protect(spans[i].0, spans[i + words.len() - 1].1, &mut mask);
            }
        }
    }
    for (&(s, e), w) in spans.iter().zip(&lower) {
        if noisebench_text::is_number_word(w) {
            protect(s, e, &mut mask);
            continue;
        }
        let word = &text[s..e];
        let mut chars = word.chars();
        let first_upper = chars.next().is_some_and(char::is_uppercase);
        let inner_upper = chars.any(char::is_uppercase);
        if inner_upper || (first_upper && !opens_sentence(text, s)) {
            protect(s, e, &mut mask);
        }
    }
    // A name of several capitalised words is one piece: the spaces inside it are protected too.
    for pair in spans.windows(2) {
        let ((_, e), (s, _)) = (pair[0], pair[1]);
        if mask[e - 1] && mask[s] && text[e..s].chars().all(|c| c == ' ') {
            protect(e, s, &mut mask);
        }
    }
    mask
}

/// Whether the word at byte `at` opens a sentence: nothing but quotes and brackets between it
/// and the start of the text or a `.`, `!`, `?` or `:`.
fn opens_sentence(text: &str, at: usize) -> bool {
    for c in text[..at].chars().rev() {
        if c.is_whitespace() || matches!(c, '"' | '\'' | '(' | '[' | '“' | '‘') {
            continue;
        }
        return matches!(c, '.' | '!' | '?' | ':');
    }
    true
}

/// The phrases a question's perturbations keep: its triplets' entity names and its pivot
/// entities, trimmed, without empties or repeats, in first-seen order.
pub fn question_phrases(q: &noisebench_core::Question) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in q
        .entity_1
        .iter()
        .chain(&q.entity_2)
        .chain(&q.pivot_entities)
    {
        let p = p.trim();
        if !p.is_empty() && !out.iter().any(|o| o == p) {
            out.push(p.to_string());
        }
    }
    out
}

/// The protected pieces of `text` as strings (each maximal protected run, trimmed): what a
/// rewrite must still contain.
pub(crate) fn protected_pieces(text: &str, mask: &[bool]) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, _) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let on = mask.get(i).copied().unwrap_or(false);
        match (on, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let piece = text[s..i].trim();
                if !piece.is_empty() {
                    out.push(piece.to_string());
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Whether a rewrite keeps what the original protects: every protected word run of the
/// original (numbers, names) is still in it as whole words, case and punctuation aside.
pub(crate) fn keeps_protected(original: &str, mask: &[bool], rewrite: &str) -> bool {
    protected_pieces(original, mask).iter().all(|p| {
        noisebench_text::normalize(p).is_empty() || noisebench_text::contains_phrase(rewrite, p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protected(text: &str, phrases: &[&str]) -> Vec<String> {
        protected_pieces(text, &protected_mask(text, phrases))
    }

    #[test]
    fn numbers_names_and_capitals_mid_sentence_are_protected() {
        assert_eq!(
            protected(
                "What revenue did northwind logistics report in 2022, per the SEC filing of Baltic Freight?",
                &["Northwind Logistics"]
            ),
            ["northwind logistics", "2022,", "SEC", "Baltic Freight"]
        );
        // A sentence-initial capital is not a name; one after a colon opens a sentence too.
        assert_eq!(
            protected("Which firm grew? Question: Who paid $4.2m", &[]),
            ["$4.2m"]
        );
        assert!(protected("how much", &["much more"]).is_empty());
    }

    #[test]
    fn rewrites_must_keep_protected_pieces() {
        let q = "What did Northwind Logistics pay in 2021?";
        let mask = protected_mask(q, &["Northwind Logistics"]);
        assert!(keeps_protected(
            q,
            &mask,
            "In 2021, what did northwind logistics pay?"
        ));
        assert!(!keeps_protected(
            q,
            &mask,
            "What did Northwind pay in 2021?"
        ));
        assert!(!keeps_protected(
            q,
            &mask,
            "What did Northwind Logistics pay in 2020?"
        ));
    }
}
