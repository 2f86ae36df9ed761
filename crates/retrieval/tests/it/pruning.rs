//! BM25's pruned search against scoring every posting, at RARE's size: 37,617 generated chunks
//! (a Zipf vocabulary with stopwords between, as RARE's chunks have a few words in most of them
//! and most words in few) and 2,000 question families of five queries each (the question, a
//! typo, a swapped word, an irrelevant addition, a dropped word), searched the way the stage
//! searches them (every core, families together). Every query's top 10 must be the exhaustive
//! search's: the same chunks in the same order with the same scores, ties included.

use noisebench_retrieval::Bm25Chunks;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Chunks at RARE's scale (`just bench-rare`'s full size).
const CHUNKS: usize = 37_617;
const FAMILIES: usize = 2_000;
const K: usize = 10;

const STOPWORDS: [&str; 8] = ["the", "of", "and", "in", "to", "a", "for", "with"];

/// Distinct pronounceable pseudo-words.
fn vocabulary(n: usize, rng: &mut ChaCha8Rng) -> Vec<String> {
    const C: &[u8] = b"bcdfghklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut w = String::new();
        for _ in 0..rng.random_range(2..=4) {
            w.push(C[rng.random_range(0..C.len())] as char);
            w.push(V[rng.random_range(0..V.len())] as char);
        }
        if seen.insert(w.clone()) {
            out.push(w);
        }
    }
    out
}

/// A Zipf(1) rank over `cumulative` (its running sums of 1/r).
fn zipf(cumulative: &[f64], rng: &mut ChaCha8Rng) -> usize {
    let x = rng.random_range(0.0..cumulative[cumulative.len() - 1]);
    cumulative.partition_point(|c| *c < x)
}

#[test]
fn pruned_top_10_is_exhaustive_top_10_at_rare_scale() {
    let mut rng = ChaCha8Rng::seed_from_u64(49);
    let vocab = vocabulary(20_000, &mut rng);
    let mut acc = 0.0;
    let cumulative: Vec<f64> = (1..=vocab.len())
        .map(|r| {
            acc += 1.0 / r as f64;
            acc
        })
        .collect();
    let mut words_of: Vec<Vec<usize>> = Vec::with_capacity(CHUNKS);
    let chunks: Vec<(String, String)> = (0..CHUNKS)
        .map(|i| {
            let mut text = Vec::new();
            let mut words = Vec::new();
            for _ in 0..rng.random_range(60..=240) {
                if rng.random_bool(0.25) {
                    text.push(STOPWORDS[rng.random_range(0..STOPWORDS.len())]);
                } else {
                    let w = zipf(&cumulative, &mut rng);
                    words.push(w);
                    text.push(&vocab[w]);
                }
            }
            words_of.push(words);
            (format!("c{:06}", (i * 7_919) % CHUNKS), text.join(" "))
        })
        .collect();
    // Some chunks twice under another id: whole-score ties, broken by id.
    let mut chunks = chunks;
    for i in (0..CHUNKS).step_by(97) {
        let text = chunks[i].1.clone();
        chunks.push((format!("d{i:06}"), text));
    }
    let mut queries: Vec<String> = Vec::new();
    let mut families: Vec<u32> = Vec::new();
    for f in 0..FAMILIES {
        let target = &words_of[rng.random_range(0..CHUNKS)];
        let words: Vec<&str> = (0..rng.random_range(3..=9))
            .map(|_| vocab[target[rng.random_range(0..target.len())]].as_str())
            .collect();
        let mut typo: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        typo[0] = typo[0].chars().rev().collect();
        let mut swapped = words.clone();
        swapped[0] = &vocab[zipf(&cumulative, &mut rng)];
        let mut added = words.clone();
        added.extend((0..3).map(|_| vocab[zipf(&cumulative, &mut rng)].as_str()));
        let mut dropped = words.clone();
        dropped.pop();
        for q in [
            format!("what the {}?", words.join(" ")),
            typo.join(" "),
            swapped.join(" "),
            added.join(" "),
            dropped.join(" "),
        ] {
            queries.push(q);
            families.push(f as u32);
        }
    }
    let index = Bm25Chunks::build(chunks.iter().map(|(id, t)| (id.as_str(), t.as_str()))).unwrap();
    let texts: Vec<&str> = queries.iter().map(String::as_str).collect();
    let pruned = index.search_all(&texts, &families, K, 2, &|| {});
    let alone = index.search_all(&texts, &[], K, 1, &|| {});
    let (mut ties, mut short) = (0, 0);
    for ((q, got), one) in texts.iter().zip(&pruned).zip(&alone) {
        let want = index.search_exhaustive(q, K);
        let got = got.as_ref().unwrap();
        assert_eq!(got, &want, "query {q:?}");
        assert_eq!(one.as_ref().unwrap(), &want, "query {q:?} alone");
        ties += usize::from(want.windows(2).any(|w| w[0].score == w[1].score));
        short += usize::from(want.len() < K);
    }
    // The corpus exercises what the equality is about: tied scores inside a top 10.
    assert!(ties > 0, "no query had tied scores in its top {K}");
    assert!(pruned.len() == FAMILIES * 5 && short < pruned.len());
}
