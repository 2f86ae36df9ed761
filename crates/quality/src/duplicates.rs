//! Near-duplicates and leakage: MinHash signatures (`gaoya`) in LSH bands find the candidate
//! pairs (at most a window of each band's bucket, so templated texts cost linearly), whose exact
//! Jaccard similarity over word shingles decides; texts equal once
//! normalised (case, punctuation, spacing) are duplicates whatever their shingles. Within a
//! table: the share of rows with a twin. Across splits: the share of test questions with a twin
//! in train.

use std::collections::{BTreeSet, HashMap};

use gaoya::minhash::{MinHasher, MinHasher32};
use noisebench_core::{parallel_map, parallel_map_with};
use noisebench_text::words::{normalize, words};
use serde::{Deserialize, Serialize};

/// LSH bands and rows per band: 128 hashes, a pair at Jaccard 0.6 is a candidate with
/// probability 1 - (1 - 0.6^4)^32 > 0.98.
const BANDS: usize = 32;
const BAND_WIDTH: usize = 4;
/// Hashes per signature.
const HASHES: usize = BANDS * BAND_WIDTH;
/// Hashes compared at a time before a lookup checks whether a candidate can still agree enough.
const BLOCK: usize = 16;
const _: () = assert!(HASHES.is_multiple_of(BLOCK));
/// How far below the threshold the signatures' estimate may fall and the pair still be
/// checked exactly (the estimate's standard error at 128 hashes is under 0.045).
const SLACK: f64 = 0.15;

/// Two rows found to be (near-)duplicates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DuplicatePair {
    pub a: String,
    pub b: String,
    /// Jaccard similarity of their word shingles (1 for texts equal once normalised).
    pub similarity: f64,
    /// Equal once normalised.
    pub exact: bool,
}

/// Duplicates within one table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDuplicates {
    pub rows: usize,
    /// Rows with a twin equal once normalised.
    pub exact: usize,
    /// Rows with a twin at or above the threshold (exact ones included).
    pub near: usize,
    pub share: f64,
    /// Pairs found in all.
    pub pair_count: usize,
    /// The most similar pairs, up to the configured sample.
    pub pairs: Vec<DuplicatePair>,
}

/// Test questions with a near-twin in train.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossSplit {
    /// Questions in test.
    pub test: usize,
    /// Of those, the ones with a near-twin among the train questions.
    pub leaked: usize,
    pub share: f64,
    /// Each leaked test question (`a`) with its most similar train question (`b`), up to the
    /// configured sample.
    pub pairs: Vec<DuplicatePair>,
}

impl CrossSplit {
    /// The figures of `test` test rows whose near-twins in train are `pairs`: the share of
    /// leaked rows and the `samples` most similar pairs.
    fn of(test: usize, mut pairs: Vec<DuplicatePair>, samples: usize) -> CrossSplit {
        most_similar_first(&mut pairs);
        let leaked = pairs.len();
        pairs.truncate(samples);
        CrossSplit {
            test,
            leaked,
            share: if test == 0 {
                0.0
            } else {
                leaked as f64 / test as f64
            },
            pairs,
        }
    }
}

/// A text's distinct word `k`-grams (the whole text as one when it is shorter).
pub fn shingles(text: &str, k: usize) -> BTreeSet<String> {
    let w = words(text);
    if w.is_empty() {
        return BTreeSet::new();
    }
    if w.len() <= k {
        return BTreeSet::from([w.join(" ")]);
    }
    w.windows(k.max(1)).map(|g| g.join(" ")).collect()
}

/// Jaccard similarity of two sets (two empty sets: 0).
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

/// The distinct texts of some rows (equal once normalised: one group), each prepared once.
/// Rows of no words belong to no group: they have no twin.
struct Prepared {
    /// Each group's shingles as sorted ids (interned over the whole call, so two groups' ids
    /// compare as their strings do).
    shingles: Vec<Vec<u32>>,
    /// Each group's signature, [`HASHES`] values each, one after the other (one allocation: a
    /// lookup reads hundreds of them).
    signatures: Vec<u32>,
    /// Each signature's values cut to their low byte, [`HASHES`] a group: two signatures agree
    /// on no more values than their sketches do, and the sketches are a quarter of the memory.
    sketches: Vec<u8>,
    /// Each group's rows, in row order.
    rows: Vec<Vec<usize>>,
    /// Each group's shape: groups of one shape have the same shingles (the same words in
    /// another order, with single-word shingles), hence one signature and Jaccard 1.
    shape: Vec<usize>,
    /// Each shape's groups, in group order.
    shapes: Vec<Vec<usize>>,
}

/// Group `texts` by normalised text and prepare each group's shingles and signature (on every
/// core). Equal normalised texts have equal words, hence equal shingles and signatures, so one
/// text stands for its group in the index and in every comparison.
fn prepare(texts: &[&str], k: usize) -> Prepared {
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut first: Vec<&str> = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        let n = normalize(t);
        if n.is_empty() {
            continue;
        }
        let g = *index_of.entry(n).or_insert_with(|| {
            rows.push(Vec::new());
            first.push(t);
            rows.len() - 1
        });
        rows[g].push(i);
    }
    // gaoya's default hasher is FNV with fixed permutations (seed 3): the same text always
    // has the same signature.
    let hasher = MinHasher32::new(BANDS * BAND_WIDTH);
    let threads = noisebench_core::default_threads();
    let made: Vec<(BTreeSet<String>, Vec<u32>)> = parallel_map(&first, threads, |t| {
        let sh = shingles(t, k);
        let sig = hasher.create_signature(sh.iter());
        (sh, sig)
    });
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut shape_of: HashMap<Vec<u32>, usize> = HashMap::new();
    let (mut shape, mut shapes) = (Vec::new(), Vec::<Vec<usize>>::new());
    let mut shingle_ids = Vec::with_capacity(made.len());
    let mut signatures = Vec::with_capacity(made.len() * HASHES);
    let mut sketches = Vec::with_capacity(made.len() * HASHES);
    for (sh, sig) in made {
        let mut v: Vec<u32> = sh
            .into_iter()
            .map(|s| {
                let next = ids.len() as u32;
                *ids.entry(s).or_insert(next)
            })
            .collect();
        v.sort_unstable();
        let next = shapes.len();
        let s = *shape_of.entry(v.clone()).or_insert(next);
        if s == next {
            shapes.push(Vec::new());
        }
        shapes[s].push(shingle_ids.len());
        shape.push(s);
        shingle_ids.push(v);
        signatures.extend_from_slice(&sig);
        sketches.extend(sig.iter().map(|&h| h as u8));
    }
    Prepared {
        shingles: shingle_ids,
        signatures,
        sketches,
        rows,
        shape,
        shapes,
    }
}

impl Prepared {
    /// Group `g`'s signature.
    fn signature(&self, g: usize) -> &[u32] {
        &self.signatures[g * HASHES..(g + 1) * HASHES]
    }

    /// Group `g`'s sketch.
    fn sketch(&self, g: usize) -> &[u8] {
        &self.sketches[g * HASHES..(g + 1) * HASHES]
    }
}

/// Whether signatures `a` and `b` (of [`HASHES`] values) agree on at least `need` values: the
/// count of [`agreement`] compared with `need`, stopping at the first block after which too many
/// values differ.
fn agree_at_least<T: PartialEq>(a: &[T], b: &[T], need: usize) -> bool {
    let Some(allowed) = a.len().checked_sub(need) else {
        return false;
    };
    let mut differ = 0;
    for (x, y) in a.chunks_exact(BLOCK).zip(b.chunks_exact(BLOCK)) {
        differ += x.iter().zip(y).filter(|(p, q)| p != q).count();
        if differ > allowed {
            return false;
        }
    }
    true
}

/// How many values two signatures agree on.
#[cfg(test)]
fn agreement(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).filter(|(p, q)| p == q).count()
}

/// The groups a lookup has met already: `at[h] == stamp` (one array per thread, reused across its
/// lookups instead of sorting and deduplicating each lookup's candidates).
#[derive(Default)]
struct Seen {
    stamp: u32,
    at: Vec<u32>,
}

impl Seen {
    /// Start a lookup among `groups` groups: none met yet.
    fn start(&mut self, groups: usize) {
        self.at.resize(groups, 0);
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.at.fill(0);
            self.stamp = 1;
        }
    }

    /// Whether group `h` is met for the first time in this lookup.
    fn first(&mut self, h: usize) -> bool {
        let met = self.at[h] == self.stamp;
        self.at[h] = self.stamp;
        !met
    }
}

/// Jaccard similarity of two sorted id sets (two empty sets: 0); the same number as
/// [`jaccard`] over the strings they stand for.
fn jaccard_ids(a: &[u32], b: &[u32]) -> f64 {
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

/// The LSH bands over the shapes of some groups (one group standing for each shape): per band,
/// the groups whose signature has that band's values, in group order. gaoya makes the MinHash
/// signatures; the bands are plain maps from a band's values to its groups, so a lookup can
/// read a bounded window of a large bucket instead of all of it.
struct Bands<'a> {
    /// Per band, the bucket (an index into `lists`) of each band value.
    index: Vec<HashMap<&'a [u32], u32>>,
    /// Each bucket's groups, in group order.
    lists: Vec<Vec<u32>>,
    /// Each group's index among the members (`u32::MAX`: not one).
    member_at: Vec<u32>,
    /// Each member's bucket and place in it, band by band ([`BANDS`] entries a member).
    places: Vec<(u32, u32)>,
    /// The fewest of the [`HASHES`] values a candidate's signature must share: those whose share
    /// reaches the threshold less the slack.
    need: usize,
    window: usize,
}

/// How many groups of one bucket a lookup reads at most: the `WINDOW / 2` nearest before and
/// after the asking group, in group order. A bucket larger than this (questions written from a
/// few templates share whole bands by the thousand) is sampled, so each text is compared with a
/// bounded number of others and the search grows linearly with the texts; the share of rows
/// with a twin barely moves (a text in such a bucket finds its twin among its neighbours), while
/// the pair count and the pairs listed are those among the texts compared.
const WINDOW: usize = 64;

impl<'a> Bands<'a> {
    fn new(prepared: &'a Prepared, members: &[usize], threshold: f64, window: usize) -> Self {
        let mut index: Vec<HashMap<&[u32], u32>> = vec![HashMap::new(); BANDS];
        let mut lists: Vec<Vec<u32>> = Vec::new();
        let mut member_at = vec![u32::MAX; prepared.rows.len()];
        let mut places = Vec::new();
        let mut seen = vec![false; prepared.shapes.len()];
        for &g in members {
            let s = prepared.shape[g];
            if prepared.shingles[g].is_empty() || seen[s] {
                continue;
            }
            seen[s] = true;
            member_at[g] = (places.len() / BANDS) as u32;
            let sig = prepared.signature(g);
            for (band, bucket) in index.iter_mut().enumerate() {
                let key = &sig[band * BAND_WIDTH..(band + 1) * BAND_WIDTH];
                let list = *bucket.entry(key).or_insert_with(|| {
                    lists.push(Vec::new());
                    (lists.len() - 1) as u32
                });
                places.push((list, lists[list as usize].len() as u32));
                lists[list as usize].push(g as u32);
            }
        }
        let estimate = (threshold - SLACK).max(0.0);
        Self {
            index,
            lists,
            member_at,
            places,
            need: (0..=HASHES)
                .find(|&k| k as f64 / HASHES as f64 >= estimate)
                .unwrap_or(HASHES + 1),
            window,
        }
    }

    /// Each band's bucket of `g`'s signature and `g`'s place in it (where `g` would go when it
    /// is not a member), the bands whose bucket is empty left out.
    fn places(&self, prepared: &Prepared, g: usize) -> Vec<(u32, usize)> {
        if let Some(m) = self.member_at.get(g).filter(|&&m| m != u32::MAX) {
            let at = *m as usize * BANDS;
            return self.places[at..at + BANDS]
                .iter()
                .map(|&(list, place)| (list, place as usize))
                .collect();
        }
        let sig = prepared.signature(g);
        self.index
            .iter()
            .enumerate()
            .filter_map(|(band, bucket)| {
                let list = *bucket.get(&sig[band * BAND_WIDTH..(band + 1) * BAND_WIDTH])?;
                let place = self.lists[list as usize].partition_point(|&h| (h as usize) < g);
                Some((list, place))
            })
            .collect()
    }

    /// The groups sharing a band with `g`'s signature (a window of each bucket, see [`WINDOW`])
    /// whose signatures agree on at least the threshold less the slack, each once, in the order
    /// met. The sketches decide first (a value's low byte differs where the value does), the
    /// signatures for those the sketches leave.
    fn candidates(&self, prepared: &Prepared, g: usize, seen: &mut Seen) -> Vec<usize> {
        let (sig, sketch) = (prepared.signature(g), prepared.sketch(g));
        seen.start(prepared.rows.len());
        let mut out = Vec::new();
        for (list, at) in self.places(prepared, g) {
            let groups = &self.lists[list as usize];
            let from = at.saturating_sub(self.window / 2);
            let to = at.saturating_add(self.window / 2).min(groups.len());
            out.extend(groups[from..to].iter().map(|&h| h as usize).filter(|&h| {
                seen.first(h)
                    && agree_at_least(sketch, prepared.sketch(h), self.need)
                    && agree_at_least(sig, prepared.signature(h), self.need)
            }));
        }
        out
    }
}

/// The other shapes in `bands` whose shingles' exact Jaccard with shape `s`'s reaches
/// `threshold`, with it (candidates from the bands, then the signatures' estimate).
fn near_shapes(
    prepared: &Prepared,
    bands: &Bands<'_>,
    s: usize,
    threshold: f64,
    seen: &mut Seen,
) -> Vec<(usize, f64)> {
    let g = prepared.shapes[s][0];
    if prepared.shingles[g].is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(usize, f64)> = bands
        .candidates(prepared, g, seen)
        .into_iter()
        .map(|r| prepared.shape[r])
        .filter(|&t| t != s)
        .filter_map(|t| {
            let sim = jaccard_ids(
                &prepared.shingles[g],
                &prepared.shingles[prepared.shapes[t][0]],
            );
            (sim >= threshold).then_some((t, sim))
        })
        .collect();
    found.sort_unstable_by_key(|x| x.0);
    found.dedup_by_key(|x| x.0);
    found
}

/// The other groups that `member` admits and whose shingles' Jaccard with group `g`'s reaches
/// the threshold, in group order: those of its shape (Jaccard 1), then those of the shapes
/// `near` found for it.
fn near_groups(
    prepared: &Prepared,
    near: &[(usize, f64)],
    g: usize,
    member: impl Fn(usize) -> bool,
) -> Vec<(usize, f64)> {
    let mut out: Vec<(usize, f64)> = prepared.shapes[prepared.shape[g]]
        .iter()
        .filter(|&&h| h != g && member(h))
        .map(|&h| (h, 1.0))
        .collect();
    for &(t, sim) in near {
        out.extend(
            prepared.shapes[t]
                .iter()
                .filter(|&&h| member(h))
                .map(|&h| (h, sim)),
        );
    }
    out.sort_unstable_by_key(|x| x.0);
    out
}

/// The `n` first pairs in [`pair_order`], kept while pairs are offered: `(similarity, exact,
/// a, b)` with `a < b`.
struct TopPairs<'a> {
    n: usize,
    kept: Vec<(f64, bool, &'a str, &'a str)>,
}

impl<'a> TopPairs<'a> {
    fn before(x: &(f64, bool, &str, &str), y: &(f64, bool, &str, &str)) -> std::cmp::Ordering {
        y.0.total_cmp(&x.0)
            .then_with(|| x.2.cmp(y.2))
            .then_with(|| x.3.cmp(y.3))
    }

    /// Whether a pair of this similarity could still be kept.
    fn wants(&self, similarity: f64) -> bool {
        self.kept.len() < self.n || self.kept.last().is_some_and(|w| similarity >= w.0)
    }

    /// Offer a pair; false when it is not kept (nor would any after it in the order be).
    fn offer(&mut self, pair: (f64, bool, &'a str, &'a str)) -> bool {
        let at = self
            .kept
            .partition_point(|k| Self::before(k, &pair) == std::cmp::Ordering::Less);
        if at >= self.n {
            return false;
        }
        self.kept.insert(at, pair);
        self.kept.truncate(self.n);
        true
    }

    /// Offer every pair of one id from `a` and one from `b` (each list the group's smallest
    /// ids), at one similarity, best first.
    fn offer_product(&mut self, similarity: f64, exact: bool, a: &[&'a str], b: &[&'a str]) {
        if !self.wants(similarity) {
            return;
        }
        let mut these: Vec<(f64, bool, &str, &str)> = a
            .iter()
            .flat_map(|x| {
                b.iter()
                    .map(move |y| (similarity, exact, (*x).min(*y), (*x).max(*y)))
            })
            .collect();
        these.sort_by(Self::before);
        for p in these {
            if !self.offer(p) {
                break;
            }
        }
    }

    fn pairs(self) -> Vec<DuplicatePair> {
        self.kept
            .into_iter()
            .map(|(similarity, exact, a, b)| DuplicatePair {
                a: a.to_string(),
                b: b.to_string(),
                similarity,
                exact,
            })
            .collect()
    }
}

/// Order of the listed pairs: most similar first, then by ids.
fn pair_order(x: &DuplicatePair, y: &DuplicatePair) -> std::cmp::Ordering {
    y.similarity
        .total_cmp(&x.similarity)
        .then_with(|| x.a.cmp(&y.a))
        .then_with(|| x.b.cmp(&y.b))
}

fn most_similar_first(pairs: &mut [DuplicatePair]) {
    pairs.sort_by(pair_order);
}

/// Up to `n` of a group's row ids, smallest first.
fn smallest_ids<'a>(rows: &[(&'a str, &str)], group: &[usize], n: usize) -> Vec<&'a str> {
    let mut ids: Vec<&str> = group.iter().map(|&i| rows[i].0).collect();
    ids.sort_unstable();
    ids.truncate(n);
    ids
}

/// The (near-)duplicates among `rows` (`(id, text)`), shingled by `k` words.
///
/// Each distinct set of shingles is compared once, whatever number of rows share it; of the
/// pairs only the count and the `samples` listed ones are made (the first pairs of a group, or
/// of two groups, in id order are the only ones that can be listed).
pub fn within(rows: &[(&str, &str)], k: usize, threshold: f64, samples: usize) -> TableDuplicates {
    within_window(rows, k, threshold, samples, WINDOW)
}

/// [`within`] reading at most `window` groups of each LSH bucket (`usize::MAX`: all of them,
/// every candidate pair compared): what the bench sets beside the bounded search.
pub fn within_window(
    rows: &[(&str, &str)],
    k: usize,
    threshold: f64,
    samples: usize,
    window: usize,
) -> TableDuplicates {
    let texts: Vec<&str> = rows.iter().map(|r| r.1).collect();
    let prepared = prepare(&texts, k);
    let groups: Vec<usize> = (0..prepared.rows.len()).collect();
    let bands = Bands::new(&prepared, &groups, threshold, window);
    let shapes: Vec<usize> = (0..prepared.shapes.len()).collect();
    let near = parallel_map_with(
        &shapes,
        noisebench_core::default_threads(),
        Seen::default,
        |seen, &s| near_shapes(&prepared, &bands, s, threshold, seen),
    );
    let first: Vec<Vec<&str>> = prepared
        .rows
        .iter()
        .map(|m| smallest_ids(rows, m, samples + 1))
        .collect();
    let (mut exact, mut near_rows, mut pair_count) = (0, 0, 0);
    let mut top = TopPairs {
        n: samples,
        kept: Vec::new(),
    };
    for (g, members) in prepared.rows.iter().enumerate() {
        let n = members.len();
        if n > 1 {
            exact += n;
            pair_count += n * (n - 1) / 2;
            let ids = &first[g];
            'exact: for (x, a) in ids.iter().enumerate() {
                for b in &ids[x + 1..] {
                    if !top.wants(1.0) || !top.offer((1.0, true, a, b)) {
                        break 'exact;
                    }
                }
            }
        }
        let twins = near_groups(&prepared, &near[prepared.shape[g]], g, |_| true);
        if n > 1 || !twins.is_empty() {
            near_rows += n;
        }
        for &(h, similarity) in twins.iter().filter(|x| x.0 > g) {
            pair_count += n * prepared.rows[h].len();
            let (a, b) = (&first[g], &first[h]);
            top.offer_product(
                similarity,
                false,
                &a[..a.len().min(samples)],
                &b[..b.len().min(samples)],
            );
        }
    }
    TableDuplicates {
        rows: rows.len(),
        exact,
        near: near_rows,
        share: if rows.is_empty() {
            0.0
        } else {
            near_rows as f64 / rows.len() as f64
        },
        pair_count,
        pairs: top.pairs(),
    }
}

/// The `test` rows with a (near-)twin among the `train` rows.
pub fn across(
    test: &[(&str, &str)],
    train: &[(&str, &str)],
    k: usize,
    threshold: f64,
    samples: usize,
) -> CrossSplit {
    across_window(test, train, k, threshold, samples, WINDOW)
}

/// [`across`] reading at most `window` groups of each LSH bucket (`usize::MAX`: all of them).
fn across_window(
    test: &[(&str, &str)],
    train: &[(&str, &str)],
    k: usize,
    threshold: f64,
    samples: usize,
    window: usize,
) -> CrossSplit {
    let texts: Vec<&str> = train.iter().chain(test).map(|r| r.1).collect();
    let prepared = prepare(&texts, k);
    // A group holds train rows, test rows or both; the index holds those with train rows.
    let has_train = |g: usize| prepared.rows[g].first().is_some_and(|&i| i < train.len());
    let with_train: Vec<usize> = (0..prepared.rows.len()).filter(|&g| has_train(g)).collect();
    let bands = Bands::new(&prepared, &with_train, threshold, window);
    let with_test: Vec<usize> = (0..prepared.rows.len())
        .filter(|&g| prepared.rows[g].last().is_some_and(|&i| i >= train.len()))
        .collect();
    let mut test_shapes: Vec<usize> = with_test.iter().map(|&g| prepared.shape[g]).collect();
    test_shapes.sort_unstable();
    test_shapes.dedup();
    let near: HashMap<usize, Vec<(usize, f64)>> = test_shapes
        .iter()
        .copied()
        .zip(parallel_map_with(
            &test_shapes,
            noisebench_core::default_threads(),
            Seen::default,
            |seen, &s| near_shapes(&prepared, &bands, s, threshold, seen),
        ))
        .collect();
    // Each test group's best train twin: the most similar, then the first in train order (a
    // group's rows are in row order, so its first is its first train row).
    let best: Vec<Option<(usize, f64, bool)>> = with_test
        .iter()
        .map(|&g| {
            let near = near.get(&prepared.shape[g]).map_or(&[][..], Vec::as_slice);
            let mut found: Vec<(usize, f64, bool)> = near_groups(&prepared, near, g, has_train)
                .into_iter()
                .map(|(s, sim)| (prepared.rows[s][0], sim, false))
                .collect();
            if has_train(g) {
                found.push((prepared.rows[g][0], 1.0, true));
            }
            found
                .into_iter()
                .max_by(|x, y| x.1.total_cmp(&y.1).then_with(|| y.0.cmp(&x.0)))
        })
        .collect();
    let mut pairs = Vec::new();
    for (&g, best) in with_test.iter().zip(best) {
        let Some((j, similarity, exact)) = best else {
            continue;
        };
        for &i in prepared.rows[g].iter().filter(|&&i| i >= train.len()) {
            pairs.push(DuplicatePair {
                a: test[i - train.len()].0.to_string(),
                b: train[j].0.to_string(),
                similarity,
                exact,
            });
        }
    }
    CrossSplit::of(test.len(), pairs, samples)
}

/// The first implementation, one comparison per row and every pair made: what the grouped one
/// must agree with.
#[cfg(test)]
mod reference {
    use std::collections::{BTreeMap, BTreeSet};

    use gaoya::minhash::{MinHashIndex, MinHasher, MinHasher32};
    use noisebench_text::words::normalize;

    use super::{
        BAND_WIDTH, BANDS, CrossSplit, DuplicatePair, SLACK, TableDuplicates, jaccard, shingles,
    };

    /// Texts prepared once: normalised form, shingles, signature.
    struct Prepared {
        normal: Vec<String>,
        shingles: Vec<BTreeSet<String>>,
        signatures: Vec<Vec<u32>>,
    }

    fn prepare(texts: &[&str], k: usize) -> Prepared {
        // gaoya's default hasher is FNV with fixed permutations (seed 3): the same text always
        // has the same signature.
        let hasher = MinHasher32::new(BANDS * BAND_WIDTH);
        let shingles: Vec<BTreeSet<String>> = texts.iter().map(|t| shingles(t, k)).collect();
        Prepared {
            normal: texts.iter().map(|t| normalize(t)).collect(),
            signatures: shingles
                .iter()
                .map(|s| hasher.create_signature(s.iter()))
                .collect(),
            shingles,
        }
    }

    fn index(prepared: &Prepared, members: &[usize], threshold: f64) -> MinHashIndex<u32, usize> {
        let mut index = MinHashIndex::new(BANDS, BAND_WIDTH, (threshold - SLACK).max(0.0));
        for &i in members {
            if !prepared.shingles[i].is_empty() {
                index.insert(i, prepared.signatures[i].clone());
            }
        }
        index
    }

    /// The twins of text `i` among the index's members (not `i` itself), by exact Jaccard or equal
    /// normalised text.
    fn twins(
        prepared: &Prepared,
        index: &MinHashIndex<u32, usize>,
        by_text: &BTreeMap<&str, Vec<usize>>,
        i: usize,
        threshold: f64,
    ) -> Vec<(usize, f64, bool)> {
        let mut found: BTreeMap<usize, (f64, bool)> = BTreeMap::new();
        if !prepared.normal[i].is_empty() {
            for &j in by_text
                .get(prepared.normal[i].as_str())
                .into_iter()
                .flatten()
            {
                found.insert(j, (1.0, true));
            }
        }
        if !prepared.shingles[i].is_empty() {
            for j in index.query_owned(&prepared.signatures[i]) {
                if found.contains_key(&j) {
                    continue;
                }
                let sim = jaccard(&prepared.shingles[i], &prepared.shingles[j]);
                if sim >= threshold {
                    found.insert(j, (sim, false));
                }
            }
        }
        found.remove(&i);
        found.into_iter().map(|(j, (s, e))| (j, s, e)).collect()
    }

    fn by_text<'a>(prepared: &'a Prepared, members: &[usize]) -> BTreeMap<&'a str, Vec<usize>> {
        let mut m: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &i in members {
            m.entry(prepared.normal[i].as_str()).or_default().push(i);
        }
        m
    }

    fn most_similar_first(pairs: &mut [DuplicatePair]) {
        pairs.sort_by(|x, y| {
            y.similarity
                .total_cmp(&x.similarity)
                .then_with(|| x.a.cmp(&y.a))
                .then_with(|| x.b.cmp(&y.b))
        });
    }

    /// The (near-)duplicates among `rows` (`(id, text)`), shingled by `k` words.
    pub(super) fn within(
        rows: &[(&str, &str)],
        k: usize,
        threshold: f64,
        samples: usize,
    ) -> TableDuplicates {
        let texts: Vec<&str> = rows.iter().map(|r| r.1).collect();
        let prepared = prepare(&texts, k);
        let all: Vec<usize> = (0..rows.len()).collect();
        let index = index(&prepared, &all, threshold);
        let by_text = by_text(&prepared, &all);
        let (mut exact, mut near) = (0, 0);
        let mut pairs = Vec::new();
        for i in 0..rows.len() {
            let t = twins(&prepared, &index, &by_text, i, threshold);
            exact += usize::from(t.iter().any(|x| x.2));
            near += usize::from(!t.is_empty());
            for (j, similarity, is_exact) in t {
                if rows[i].0 < rows[j].0 {
                    pairs.push(DuplicatePair {
                        a: rows[i].0.to_string(),
                        b: rows[j].0.to_string(),
                        similarity,
                        exact: is_exact,
                    });
                }
            }
        }
        most_similar_first(&mut pairs);
        let pair_count = pairs.len();
        pairs.truncate(samples);
        TableDuplicates {
            rows: rows.len(),
            exact,
            near,
            share: if rows.is_empty() {
                0.0
            } else {
                near as f64 / rows.len() as f64
            },
            pair_count,
            pairs,
        }
    }

    /// The `test` rows with a (near-)twin among the `train` rows.
    pub(super) fn across(
        test: &[(&str, &str)],
        train: &[(&str, &str)],
        k: usize,
        threshold: f64,
        samples: usize,
    ) -> CrossSplit {
        let texts: Vec<&str> = train.iter().chain(test).map(|r| r.1).collect();
        let prepared = prepare(&texts, k);
        let train_members: Vec<usize> = (0..train.len()).collect();
        let index = index(&prepared, &train_members, threshold);
        let by_text = by_text(&prepared, &train_members);
        let mut pairs = Vec::new();
        for (t, row) in test.iter().enumerate() {
            let i = train.len() + t;
            let best = twins(&prepared, &index, &by_text, i, threshold)
                .into_iter()
                .max_by(|x, y| x.1.total_cmp(&y.1).then_with(|| y.0.cmp(&x.0)));
            if let Some((j, similarity, exact)) = best {
                pairs.push(DuplicatePair {
                    a: row.0.to_string(),
                    b: train[j].0.to_string(),
                    similarity,
                    exact,
                });
            }
        }
        CrossSplit::of(test.len(), pairs, samples)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_changed_word_is_a_near_duplicate_and_a_new_question_is_not() {
        let train = [
            (
                "t1",
                "What was the total revenue of Acme Corp in fiscal 2023 according to its annual report?",
            ),
            (
                "t2",
                "Which subsidiary did Globex acquire during the second quarter?",
            ),
        ];
        let test = [
            (
                "q1",
                "What was the total revenue of Acme Corp in fiscal 2022 according to its annual report?",
            ),
            ("q2", "How many employees did Initech report at year end?"),
        ];
        let found = across(&test, &train, 1, 0.8, 10);
        assert_eq!(found.leaked, 1, "{found:?}");
        assert_eq!(found.pairs[0].a, "q1");
        assert_eq!(found.pairs[0].b, "t1");
        assert!(found.pairs[0].similarity >= 0.8 && !found.pairs[0].exact);
        assert_eq!(found.test, 2);
        assert_eq!(found.share, 0.5);
    }

    #[test]
    fn texts_equal_once_normalised_are_exact_duplicates() {
        let rows = [
            ("a", "The Moon is made of cheese."),
            ("b", "the moon IS made of   cheese"),
            ("c", "A bridge collapsed in the storm."),
        ];
        let d = within(&rows, 1, 0.8, 10);
        assert_eq!((d.exact, d.near, d.pair_count), (2, 2, 1));
        assert!(d.pairs[0].exact);
        assert!((d.share - 2.0 / 3.0).abs() < 1e-12);
    }

    /// More texts in one LSH bucket than a lookup reads (questions from one template over many
    /// entities): the bounded search finds every row's twin as the unbounded one does, compares
    /// fewer pairs, and its listed pairs are pairs the unbounded search finds.
    #[test]
    fn a_bucket_larger_than_the_window_keeps_the_share_and_compares_fewer_pairs() {
        let texts: Vec<(String, String)> = (0..600)
            .map(|i| {
                (
                    format!("q{i:04}"),
                    format!(
                        "What was the total revenue of Company{i} in fiscal 2023 according to \
                         its annual report filed with the commission?"
                    ),
                )
            })
            .collect();
        let rows: Vec<(&str, &str)> = texts
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let bounded = within(&rows, 1, 0.8, 10);
        let all = within_window(&rows, 1, 0.8, 10, usize::MAX);
        assert_eq!(all.near, 600, "every question has a near-twin");
        assert_eq!(bounded.near, all.near);
        assert!(
            bounded.pair_count < all.pair_count,
            "{} {}",
            bounded.pair_count,
            all.pair_count
        );
        assert!(bounded.pair_count >= 600 / 2, "{}", bounded.pair_count);
        for p in &bounded.pairs {
            assert!(p.similarity >= 0.8 && !p.exact, "{p:?}");
        }
        // Small inputs read whole buckets: the bounded search is the unbounded one.
        let few = &rows[..40];
        assert_eq!(
            within(few, 1, 0.8, 10),
            within_window(few, 1, 0.8, 10, usize::MAX)
        );
    }

    /// The sketches and the early stop decide as counting every agreeing value does.
    #[test]
    fn the_sketch_and_the_early_stop_agree_with_counting() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2_000 {
            let a: Vec<u32> = (0..HASHES).map(|_| next() as u32).collect();
            // Some values shared, some differing only above the low byte (the sketch agrees,
            // the signature does not), the rest drawn anew.
            let keep = (next() % (HASHES as u64 + 1)) as usize;
            let b: Vec<u32> = a
                .iter()
                .enumerate()
                .map(|(i, &x)| match (i < keep, next() % 3) {
                    (true, _) => x,
                    (false, 0) => x ^ 0x100,
                    _ => next() as u32,
                })
                .collect();
            let (sa, sb): (Vec<u8>, Vec<u8>) = (
                a.iter().map(|&h| h as u8).collect(),
                b.iter().map(|&h| h as u8).collect(),
            );
            for need in [
                0,
                1,
                keep.saturating_sub(1),
                keep,
                keep + 1,
                84,
                HASHES,
                HASHES + 1,
            ] {
                let counted = agreement(&a, &b) >= need;
                assert_eq!(agree_at_least(&a, &b, need), counted, "{keep} {need}");
                assert!(agree_at_least(&sa, &sb, need) || !counted);
                assert_eq!(
                    agree_at_least(&sa, &sb, need) && agree_at_least(&a, &b, need),
                    counted
                );
            }
        }
    }

    /// Templated questions crowding the buckets (a few templates over a few entities, texts
    /// repeated): with the whole bucket read, the grouped search finds what one comparison per
    /// row over gaoya's index finds, pair for pair.
    #[test]
    fn crowded_buckets_read_whole_find_what_one_comparison_per_row_finds() {
        let templates = [
            "What was the total revenue of {} in fiscal 2023 according to its annual report?",
            "Which subsidiary did {} acquire during the second quarter of 2023?",
            "The entity that employs {} people also leases what, according to the 2021 10-K?",
        ];
        let texts: Vec<(String, String)> = (0..900)
            .map(|i| {
                let entity = format!("Company{} Group{}", i % 150, i % 7);
                (format!("q{i:04}"), templates[i % 3].replace("{}", &entity))
            })
            .collect();
        let rows: Vec<(&str, &str)> = texts
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        for threshold in [0.6, 0.8] {
            let all = within_window(&rows, 1, threshold, 20, usize::MAX);
            assert_eq!(all, reference::within(&rows, 1, threshold, 20));
            assert!(all.pair_count > 900, "{}", all.pair_count);
            let (train, test) = rows.split_at(450);
            assert_eq!(
                across_window(test, train, 1, threshold, 20, usize::MAX),
                reference::across(test, train, 1, threshold, 20)
            );
        }
    }

    /// Templated texts: few words drawn from a small vocabulary, many repeated.
    fn templated() -> impl Strategy<Value = Vec<String>> {
        let text = prop::collection::vec(0usize..8, 3..9).prop_map(|ws| {
            ws.iter()
                .map(|w| {
                    [
                        "alpha", "beta", "Gamma", "delta", "eps", "zeta", "eta", "theta",
                    ][*w]
                })
                .collect::<Vec<_>>()
                .join(" ")
        });
        prop::collection::vec(text, 0..40).prop_flat_map(|base| {
            let n = base.len();
            (Just(base), prop::collection::vec(0..n.max(1), 0..60)).prop_map(|(base, picks)| {
                let mut out = base.clone();
                out.extend(
                    picks
                        .into_iter()
                        .filter_map(|i| base.get(i).map(|t| t.to_uppercase())),
                );
                out
            })
        })
    }

    proptest! {
        #[test]
        fn grouping_finds_what_one_comparison_per_row_finds(texts in templated(), split in 0usize..40, threshold in 0.5f64..1.0) {
            let ids: Vec<String> = (0..texts.len()).map(|i| format!("r{:03}", (i * 37) % 1000)).collect();
            let rows: Vec<(&str, &str)> = ids.iter().map(String::as_str).zip(texts.iter().map(String::as_str)).collect();
            prop_assert_eq!(within(&rows, 1, threshold, 4), reference::within(&rows, 1, threshold, 4));
            prop_assert_eq!(within(&rows, 2, threshold, 4), reference::within(&rows, 2, threshold, 4));
            let (train, test) = rows.split_at(split.min(rows.len()));
            prop_assert_eq!(across(test, train, 1, threshold, 4), reference::across(test, train, 1, threshold, 4));
        }

        #[test]
        fn a_copy_is_always_found_and_jaccard_is_symmetric(text in "[a-z]{2,8}( [a-z]{2,8}){3,15}", other in "[a-z]{2,8}( [a-z]{2,8}){3,15}") {
            let rows = [("a", text.as_str()), ("b", text.as_str()), ("c", other.as_str())];
            let d = within(&rows, 1, 0.8, 10);
            prop_assert!(d.pairs.iter().any(|p| p.a == "a" && p.b == "b"));
            let (x, y) = (shingles(&text, 2), shingles(&other, 2));
            prop_assert_eq!(jaccard(&x, &y), jaccard(&y, &x));
        }
    }
}
