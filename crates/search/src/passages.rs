//! Passages: a document's text cut into pieces of at most N words (256 by default) that never
//! break a sentence, CONF-FACT's ranking unit (Appendix C).

use unicode_segmentation::UnicodeSegmentation;

/// Words in `s` (whitespace-separated tokens): the unit of the passage limit.
pub fn word_count(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Split `text` into passages of at most `max_words` words. Sentences (Unicode sentence
/// boundaries, UAX #29) are packed greedily and kept whole; a paragraph break also ends a
/// sentence. A single sentence longer than `max_words` is the one exception: it becomes
/// consecutive pieces of `max_words` words, since it cannot fit any passage whole.
pub fn split_passages(text: &str, max_words: usize) -> Vec<String> {
    let max_words = max_words.max(1);
    let mut out = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut current_words = 0usize;
    let flush = |current: &mut Vec<String>, current_words: &mut usize, out: &mut Vec<String>| {
        if !current.is_empty() {
            out.push(current.join(" "));
            current.clear();
            *current_words = 0;
        }
    };
    for paragraph in text.split("\n\n") {
        for sentence in paragraph.unicode_sentences() {
            let sentence = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
            let n = word_count(&sentence);
            if n == 0 {
                continue;
            }
            if n > max_words {
                flush(&mut current, &mut current_words, &mut out);
                let words: Vec<&str> = sentence.split_whitespace().collect();
                for piece in words.chunks(max_words) {
                    out.push(piece.join(" "));
                }
                continue;
            }
            if current_words + n > max_words {
                flush(&mut current, &mut current_words, &mut out);
            }
            current.push(sentence);
            current_words += n;
        }
    }
    flush(&mut current, &mut current_words, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_respect_the_limit_and_keep_sentences() {
        let sentence = |i: usize| format!("Sentence number {i} has exactly seven words.");
        let text: String = (0..100).map(sentence).collect::<Vec<_>>().join(" ");
        let passages = split_passages(&text, 256);
        // 7 words each: 36 sentences (252 words) per passage.
        assert_eq!(passages.len(), 3);
        assert_eq!(word_count(&passages[0]), 252);
        assert_eq!(word_count(&passages[2]), 28 * 7);
        for p in &passages {
            assert!(word_count(p) <= 256);
            assert!(
                p.starts_with("Sentence number") && p.ends_with("words."),
                "{p}"
            );
        }
        assert_eq!(passages.join(" "), text);
    }

    #[test]
    fn an_overlong_sentence_is_cut_by_words() {
        // Capitalised: UAX #29 does not break "one. word" before a lower-case letter.
        let long = format!("Word {}", vec!["word"; 599].join(" "));
        let text = format!("Short one. {long}. Tail sentence.");
        let passages = split_passages(&text, 256);
        assert_eq!(passages[0], "Short one.");
        assert_eq!(word_count(&passages[1]), 256);
        assert_eq!(word_count(&passages[3]), 600 - 512);
        assert_eq!(passages.last().map(String::as_str), Some("Tail sentence."));
        assert!(split_passages("   ", 256).is_empty());
    }
}
