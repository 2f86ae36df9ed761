//! Windows: the runs of consecutive chunks of one report that one `triplets` call reads.
//!
//! Boundaries come from the chunks' content, not their positions: a window ends after a chunk
//! whose text hashes to 0 modulo the configured size (so windows hold `size` chunks on average,
//! RARE's 5), or when it reaches the maximum. Editing a chunk changes only whether that chunk
//! ends a window, so at most its window and the next one change; inserting a chunk changes at
//! most the window it lands in and, if it ends one, the next. Positional windows (every 5
//! chunks) would shift every later window instead, and rerun every later call.
//!
//! The one exception is a run longer than the maximum with no content boundary: its forced cut
//! counts chunks from the run's start, so an insertion there moves the cuts up to the run's end.
//! With the defaults (5 and 12) a run that long has a probability of 0.8^12, about 7%.

use std::ops::Range;

use noisebench_core::{Chunk, sha256_hex};

/// Whether a chunk with this text ends a window of average size `size`.
pub(crate) fn ends_window(text: &str, size: usize) -> bool {
    let hex = sha256_hex(text.as_bytes());
    let h = u64::from_str_radix(&hex[..16], 16).unwrap_or(0);
    h.is_multiple_of(size.max(1) as u64)
}

/// The windows over texts in order, as index ranges: a window ends after a text for which
/// [`ends_window`] holds, or once it holds `max` texts.
pub fn spans(texts: &[&str], size: usize, max: usize) -> Vec<Range<usize>> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, text) in texts.iter().enumerate() {
        if ends_window(text, size) || i + 1 - start >= max {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < texts.len() {
        out.push(start..texts.len());
    }
    out
}

/// One window: consecutive chunks of one report, in order.
#[derive(Debug, Clone)]
pub struct Window<'a> {
    pub chunks: Vec<&'a Chunk>,
}

impl Window<'_> {
    /// A readable name for drop records: the first chunk's id and how many follow it.
    pub fn name(&self) -> String {
        let first = self.chunks.first().map_or("", |c| c.id.as_str());
        format!("{first}+{}", self.chunks.len().saturating_sub(1))
    }

    /// The report's domain, from its chunks' metadata (`general` when none says).
    pub fn domain(&self) -> &str {
        self.chunks
            .iter()
            .find_map(|c| c.metadata.get("domain"))
            .map_or("general", String::as_str)
    }
}

/// `span` cut into consecutive runs whose token counts sum to at most `room` each (a chunk
/// larger than `room` alone in its run): what a model's context holds. Greedy from the
/// span's start, so the cuts depend on the span's own chunks only.
pub fn fit(span: Range<usize>, tokens: &[u64], room: u64) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut sum) = (span.start, 0u64);
    for i in span.clone() {
        if i > start && sum + tokens[i] > room {
            out.push(start..i);
            start = i;
            sum = 0;
        }
        sum += tokens[i];
    }
    if start < span.end {
        out.push(start..span.end);
    }
    out
}

/// The windows of every report, reports in id order, chunks in `index` order. With
/// `token_room` (what the model's context leaves for a window's chunks:
/// `noisebench_llm::Llm::input_room`), a window whose chunks hold more tokens is cut into
/// consecutive windows that fit ([`fit`]).
pub fn windows(
    chunks: &[Chunk],
    size: usize,
    max: usize,
    token_room: Option<u64>,
) -> Vec<Window<'_>> {
    let mut by_report: std::collections::BTreeMap<&str, Vec<&Chunk>> = Default::default();
    for c in chunks {
        by_report.entry(c.report_id.as_str()).or_default().push(c);
    }
    let mut out = Vec::new();
    for mut cs in by_report.into_values() {
        cs.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.id.cmp(&b.id)));
        let texts: Vec<&str> = cs.iter().map(|c| c.text.as_str()).collect();
        let tokens: Vec<u64> = match token_room {
            // Each chunk's line "Chunk ID: <id>" and the blank line after it, too.
            Some(_) => cs
                .iter()
                .map(|c| noisebench_llm::count_tokens(&c.text) + 8 + c.id.len() as u64 / 2)
                .collect(),
            None => Vec::new(),
        };
        for span in spans(&texts, size, max) {
            let fitted = match token_room {
                Some(room) => fit(span, &tokens, room),
                None => vec![span],
            };
            for span in fitted {
                out.push(Window {
                    chunks: cs[span].to_vec(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn windows_are_cut_to_the_tokens_a_context_leaves() {
        // Twelve chunks of 800 tokens (a finance window at its maximum) in a context that leaves
        // 3,000 tokens for chunks: runs of three.
        let tokens = vec![800u64; 12];
        let cut = fit(0..12, &tokens, 3000);
        assert_eq!(cut, vec![0..3, 3..6, 6..9, 9..12]);
        // A chunk larger than the room stands alone; nothing is lost.
        let cut = fit(2..6, &[0, 0, 100, 5000, 100, 100], 1000);
        assert_eq!(cut, vec![2..3, 3..4, 4..6]);
        assert_eq!(fit(0..0, &[], 10), Vec::<Range<usize>>::new());
    }

    fn texts(n: usize, salt: &str) -> Vec<String> {
        (0..n).map(|i| format!("chunk {i} of {salt}")).collect()
    }

    /// The windows as lists of their texts, for comparing before and after an edit.
    fn as_texts(texts: &[String], size: usize, max: usize) -> Vec<Vec<String>> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        spans(&refs, size, max)
            .into_iter()
            .map(|r| texts[r].to_vec())
            .collect()
    }

    /// Windows in `after` that are not in `before`: the calls an edit reruns.
    fn changed(before: &[Vec<String>], after: &[Vec<String>]) -> usize {
        after.iter().filter(|w| !before.contains(w)).count()
    }

    #[test]
    fn windows_cover_every_chunk_once_in_order_and_respect_the_maximum() {
        let t = texts(60, "a");
        let refs: Vec<&str> = t.iter().map(String::as_str).collect();
        let s = spans(&refs, 5, 7);
        assert_eq!(s.first().map(|r| r.start), Some(0));
        assert_eq!(s.last().map(|r| r.end), Some(60));
        assert!(s.windows(2).all(|w| w[0].end == w[1].start));
        assert!(s.iter().all(|r| !r.is_empty() && r.len() <= 7));
        // Content boundaries: about one chunk in five ends a window.
        let ends = refs.iter().filter(|t| ends_window(t, 5)).count();
        assert!((4..=24).contains(&ends), "{ends}");
        assert!(spans(&[], 5, 7).is_empty());
    }

    proptest! {
        /// One edited or inserted chunk changes at most two windows (no forced cut: the
        /// maximum is out of reach, see the module documentation).
        #[test]
        fn one_edit_or_insertion_changes_at_most_two_windows(
            n in 1usize..80, at in 0usize..80, salt in "[a-z]{1,6}", insert in any::<bool>()
        ) {
            let before = texts(n, &salt);
            let mut after = before.clone();
            let at = at % n;
            if insert {
                after.insert(at, format!("new chunk at {at} {salt}"));
            } else {
                after[at] = format!("{} (edited)", after[at]);
            }
            let (b, a) = (as_texts(&before, 5, 1000), as_texts(&after, 5, 1000));
            prop_assert!(changed(&b, &a) <= 2, "{} windows changed", changed(&b, &a));
        }
    }

    #[test]
    fn windows_group_by_report_in_index_order_and_name_the_domain() {
        let chunk = |report: &str, index: i64| Chunk {
            id: format!("{report}_{index}"),
            report_id: report.into(),
            index,
            text: format!("text {report} {index}"),
            metadata: [("domain".to_string(), "policy".to_string())].into(),
            ..Chunk::default()
        };
        let chunks = vec![chunk("b", 1), chunk("a", 2), chunk("b", 0), chunk("a", 0)];
        let w = windows(&chunks, 5, 1, None);
        let ids: Vec<Vec<&str>> = w
            .iter()
            .map(|w| w.chunks.iter().map(|c| c.id.as_str()).collect())
            .collect();
        assert_eq!(ids, [["a_0"], ["a_2"], ["b_0"], ["b_1"]]);
        assert_eq!(w[0].domain(), "policy");
        assert_eq!(w[0].name(), "a_0+0");
    }
}
