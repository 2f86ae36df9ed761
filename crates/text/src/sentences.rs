//! A rule sentence splitter for report and web prose.
//!
//! Each line is split after `.`, `!` or `?` when a space and an uppercase letter follow, except
//! after a lone capital (`U.S. Steel`, `J. Smith`). Line breaks always end a sentence, so a
//! Markdown table row or heading is a sentence of its own (filter lines first to leave them out).
//! Rules rather than a trained segmenter: the offline LLM rules and grounding checks need the same
//! split on every machine, and report prose rarely needs more.

/// The sentences of `text`, trimmed, in order; empty lines give none.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut start = 0;
        for i in 0..chars.len() {
            let end_mark = matches!(chars[i], '.' | '!' | '?');
            let next_space = chars.get(i + 1).is_some_and(|c| c.is_whitespace());
            let next_upper = chars.get(i + 2).is_some_and(|c| c.is_uppercase());
            // Not after a single capital ("U.S."); "3.5" has no space after the point anyway.
            let abbrev =
                i >= 1 && chars[i - 1].is_uppercase() && (i < 2 || !chars[i - 2].is_alphanumeric());
            if end_mark && next_space && next_upper && !abbrev {
                let s: String = chars[start..=i].iter().collect();
                out.push(s.trim().to_string());
                start = i + 1;
            }
        }
        let rest: String = chars[start..].iter().collect();
        if !rest.trim().is_empty() {
            out.push(rest.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn splits_at_sentence_ends_but_not_abbreviations() {
        assert_eq!(
            sentences(
                "Net sales increased by 8% to $394 billion in 2022. We think so.\nU.S. Steel grew 3.5% in 2021! Why? no split here"
            ),
            [
                "Net sales increased by 8% to $394 billion in 2022.",
                "We think so.",
                "U.S. Steel grew 3.5% in 2021!",
                "Why? no split here",
            ]
        );
        assert!(sentences("\n  \n").is_empty());
    }

    proptest! {
        #[test]
        fn sentences_keep_every_word_in_order(text in "[a-zA-Z .!?\\n]{0,120}") {
            let joined = sentences(&text).join(" ");
            prop_assert_eq!(crate::normalize(&joined), crate::normalize(&text));
        }
    }
}
