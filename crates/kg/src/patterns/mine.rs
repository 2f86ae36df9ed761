//! The four miners, the dedupe, the distinct-chunk rule and the stable cap, over a [`GraphIndex`].

use std::collections::BinaryHeap;

use noisebench_core::{Pattern, stable_id};
use serde::Serialize;

use super::count::mine_counted;
pub use super::group::Group;
use super::group::{mix, salt, sorted_key};
use super::index::GraphIndex;
use super::{PatternKind, PatternsConfig};

/// What happened to one pattern's groups (RARE's Table 7, with what our rules removed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PatternCount {
    /// The pattern's name as written in the table.
    pub pattern: String,
    /// Distinct groups matching the pattern's shape (after the dedupe).
    pub found: u64,
    /// Groups removed by the dedupe: the same sorted triplet ids as another group, or a triplet
    /// twice (only when edges share a first triplet, which the graph stage never writes).
    pub duplicates: u64,
    /// Multi-hop groups dropped because two of their triplets share a chunk.
    pub shared_chunk: u64,
    /// Groups over the cap, left out by the sampling: `found - shared_chunk - kept`, exact
    /// whether the pattern was enumerated or counted (chains and inverted stars under a cap).
    pub capped: u64,
    /// Groups written: `min(cap, found - shared_chunk)`.
    pub kept: u64,
}

/// One pattern's kept groups and counts.
#[derive(Debug, Clone)]
pub struct PatternGroups {
    pub pattern: PatternKind,
    /// Kept groups.
    pub groups: Vec<Group>,
    pub count: PatternCount,
}

/// Mine one pattern: enumerate, dedupe, apply the distinct-chunk rule (multi-hop patterns,
/// when configured) and the cap. Capped chains and inverted stars (on distinct triplets) are
/// instead counted per centre and sampled by rank, never enumerated (see `count`): the same
/// counts, and a uniform seeded sample whose cost is the graph plus the cap.
pub fn mine_pattern(
    index: &GraphIndex,
    pattern: PatternKind,
    config: &PatternsConfig,
) -> PatternGroups {
    // Chains and inverted stars grow with hub degrees squared: capped, they are counted and
    // sampled by rank without being enumerated (see `count`).
    if index.distinct_triplets
        && let Some(k) = config.max_per_pattern
        && matches!(
            pattern,
            PatternKind::ChainedMultiHop | PatternKind::InvertedStarShaped
        )
    {
        let counted = mine_counted(
            index,
            pattern,
            config.chain_edges.min,
            config.chain_edges.max,
            config.distinct_chunks,
            k,
            config.seed,
        );
        let kept = counted.groups.len() as u64;
        return PatternGroups {
            pattern,
            groups: counted.groups,
            count: PatternCount {
                pattern: pattern.name().to_string(),
                found: counted.found,
                duplicates: 0,
                shared_chunk: counted.found - counted.eligible,
                capped: counted.eligible - kept,
                kept,
            },
        };
    }
    mine_pattern_enumerating(index, pattern, config)
}

/// [`mine_pattern`] by enumerating every group, as it mines single hops and stars: the same
/// counts, and under a cap the bottom-k of a seeded hash of each group (a different sample
/// from [`mine_pattern`]'s for chains and inverted stars). Its cost is the number of groups;
/// kept as the reference the counting miner is tested and benched against.
pub fn mine_pattern_enumerating(
    index: &GraphIndex,
    pattern: PatternKind,
    config: &PatternsConfig,
) -> PatternGroups {
    if !index.distinct_triplets {
        return mine_with_dedupe(index, pattern, config);
    }
    let rule = config.distinct_chunks && pattern != PatternKind::SingleHop;
    // Distinct groups by construction (see `dedupe`): stream them through the rule and the cap,
    // so memory is the cap, not the number of groups a hub makes.
    let (mut found, mut shared_chunk) = (0u64, 0u64);
    let groups = match config.max_per_pattern {
        None => {
            let mut groups = Vec::new();
            each_group(index, pattern, config, |g| {
                found += 1;
                if rule && !distinct_chunks(index, &g) {
                    shared_chunk += 1;
                } else {
                    groups.push(g);
                }
            });
            groups
        }
        Some(k) => {
            let mut sample = BottomK::new(index, k, config.seed, pattern);
            each_group(index, pattern, config, |g| {
                found += 1;
                if rule && !distinct_chunks(index, &g) {
                    shared_chunk += 1;
                } else {
                    sample.offer(g);
                }
            });
            sample.into_groups()
        }
    };
    let kept = groups.len() as u64;
    PatternGroups {
        pattern,
        groups,
        count: PatternCount {
            pattern: pattern.name().to_string(),
            found,
            duplicates: 0,
            shared_chunk,
            capped: found - shared_chunk - kept,
            kept,
        },
    }
}

/// [`mine_pattern`] when edges share a first triplet (bad input): all groups materialised,
/// deduplicated, then the rule and the cap.
fn mine_with_dedupe(
    index: &GraphIndex,
    pattern: PatternKind,
    config: &PatternsConfig,
) -> PatternGroups {
    let mut raw = Vec::new();
    each_group(index, pattern, config, |g| raw.push(g));
    let enumerated = raw.len() as u64;
    let mut groups = dedupe(index, raw);
    let found = groups.len() as u64;
    let mut shared_chunk = 0;
    if config.distinct_chunks && pattern != PatternKind::SingleHop {
        groups.retain(|g| distinct_chunks(index, g));
        shared_chunk = found - groups.len() as u64;
    }
    let before_cap = groups.len() as u64;
    if let Some(cap) = config.max_per_pattern {
        groups = bottom_k(index, groups, cap, config.seed, pattern);
    }
    let kept = groups.len() as u64;
    PatternGroups {
        pattern,
        groups,
        count: PatternCount {
            pattern: pattern.name().to_string(),
            found,
            duplicates: enumerated - found,
            shared_chunk,
            capped: before_cap - kept,
            kept,
        },
    }
}

/// Every group of `pattern` as configured, to `emit`.
fn each_group(
    index: &GraphIndex,
    pattern: PatternKind,
    config: &PatternsConfig,
    emit: impl FnMut(Group),
) {
    match pattern {
        PatternKind::SingleHop => each_single_hop(index, emit),
        PatternKind::ChainedMultiHop => {
            each_chain(index, config.chain_edges.min, config.chain_edges.max, emit)
        }
        PatternKind::StarShaped => each_star(
            index,
            config.star_edges.min,
            config.star_edges.max,
            config.star_leaves,
            emit,
        ),
        PatternKind::InvertedStarShaped => each_inverted_star(index, emit),
    }
}

/// Chains (see `each_chain`), collected.
pub fn chains(index: &GraphIndex, min: usize, max: usize) -> Vec<Group> {
    let mut out = Vec::new();
    each_chain(index, min, max, |g| out.push(g));
    out
}

/// Stars (see `each_star`), collected.
pub fn stars(index: &GraphIndex, min: usize, max: usize, leaves: usize) -> Vec<Group> {
    let mut out = Vec::new();
    each_star(index, min, max, leaves, |g| out.push(g));
    out
}

/// Inverted stars (see `each_inverted_star`), collected.
pub fn inverted_stars(index: &GraphIndex) -> Vec<Group> {
    let mut out = Vec::new();
    each_inverted_star(index, |g| out.push(g));
    out
}

/// Edges `u -> v` where `u` has in-degree 0 and out-degree 1 and `v` in-degree 1 and
/// out-degree 0 (multigraph degrees). Then `u -> v` is the only path from `u` to `v`, which is
/// what RARE's code checks by enumerating every simple path; the degrees decide it in O(1).
fn each_single_hop(index: &GraphIndex, mut emit: impl FnMut(Group)) {
    (0..index.edge_count() as u32)
        .filter(|&e| {
            let (u, v) = (index.head[e as usize], index.tail[e as usize]);
            u != v
                && index.in_degree(u) == 0
                && index.out_degree(u) == 1
                && index.in_degree(v) == 1
                && index.out_degree(v) == 0
        })
        .for_each(|e| emit(Group::of(&[e])));
}

/// Paths of `min..=max` edges (within 2..=3) with no node repeated, parallel edges giving
/// distinct paths. Walked from every edge through the out-lists: the work is the number of
/// paths, never an enumeration of all simple paths between two nodes.
fn each_chain(index: &GraphIndex, min: usize, max: usize, mut emit: impl FnMut(Group)) {
    for e1 in 0..index.edge_count() as u32 {
        let (a, b) = (index.head[e1 as usize], index.tail[e1 as usize]);
        if a == b {
            continue;
        }
        for &e2 in index.outgoing(b) {
            let c = index.tail[e2 as usize];
            if c == a || c == b {
                continue;
            }
            if min <= 2 {
                emit(Group::of(&[e1, e2]));
            }
            if max < 3 {
                continue;
            }
            for &e3 in index.outgoing(c) {
                let d = index.tail[e3 as usize];
                if d != a && d != b && d != c {
                    emit(Group::of(&[e1, e2, e3]));
                }
            }
        }
    }
}

/// Stars: for each head, its first `leaves` out-edges by first triplet id, one per distinct tail
/// (no self-loop), in every combination of `min..=max` of them (RARE: the first 4, in 2 to 4).
fn each_star(
    index: &GraphIndex,
    min: usize,
    max: usize,
    leaves: usize,
    mut emit: impl FnMut(Group),
) {
    let mut chosen: Vec<u32> = Vec::with_capacity(leaves);
    for h in 0..index.node_count() as u32 {
        chosen.clear();
        for &e in index.outgoing(h) {
            let t = index.tail[e as usize];
            if t != h && !chosen.iter().any(|&c| index.tail[c as usize] == t) {
                chosen.push(e);
                if chosen.len() == leaves {
                    break;
                }
            }
        }
        for size in min..=max.min(chosen.len()) {
            combinations(chosen.len(), size, |idx| {
                let mut edges = [0u32; 4];
                for (slot, &i) in edges.iter_mut().zip(idx) {
                    *slot = chosen[i];
                }
                emit(Group::of(&edges[..size]));
            });
        }
    }
}

/// Inverted stars: pairs of edges from two distinct heads into one tail (no self-loop), one edge
/// per head (its first by triplet id), as RARE's code pairs them.
fn each_inverted_star(index: &GraphIndex, mut emit: impl FnMut(Group)) {
    let mut seen = vec![u32::MAX; index.node_count()];
    let mut heads: Vec<u32> = Vec::new();
    for v in 0..index.node_count() as u32 {
        heads.clear();
        for &e in index.incoming(v) {
            let h = index.head[e as usize];
            if h != v && seen[h as usize] != v {
                seen[h as usize] = v;
                heads.push(e);
            }
        }
        for (i, &a) in heads.iter().enumerate() {
            for &b in &heads[i + 1..] {
                emit(Group::of(&[a, b]));
            }
        }
    }
}

/// Calls `f` with every `k`-combination of `0..n`, in lexicographic order (`k` at most 4).
fn combinations(n: usize, k: usize, mut f: impl FnMut(&[usize])) {
    if k == 0 || k > n || k > 4 {
        return;
    }
    let mut idx = [0usize; 4];
    for (i, slot) in idx.iter_mut().enumerate().take(k) {
        *slot = i;
    }
    loop {
        f(&idx[..k]);
        let mut i = k;
        loop {
            if i == 0 {
                return;
            }
            i -= 1;
            if idx[i] < n - k + i {
                break;
            }
        }
        idx[i] += 1;
        for j in i + 1..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

fn repeats_a_triplet(index: &GraphIndex, g: &Group) -> bool {
    let e = g.edges();
    (0..e.len()).any(|i| {
        (i + 1..e.len())
            .any(|j| index.triplet_rank[e[i] as usize] == index.triplet_rank[e[j] as usize])
    })
}

/// Groups with the same sorted triplet ids are one group; a group naming a triplet twice is
/// none.
///
/// When no two edges share a first triplet, this changes nothing and is skipped: every miner
/// yields distinct edge sets (a simple path is fixed by its edge set; stars and inverted stars
/// are distinct combinations), and distinct edges then carry distinct triplets.
fn dedupe(index: &GraphIndex, groups: Vec<Group>) -> Vec<Group> {
    if index.distinct_triplets {
        return groups;
    }
    let mut keyed: Vec<(u128, Group)> = groups
        .into_iter()
        .filter(|g| !repeats_a_triplet(index, g))
        .map(|g| (sorted_key(index, &g), g))
        .collect();
    keyed.sort_unstable_by_key(|&(k, _)| k);
    keyed.dedup_by_key(|&mut (k, _)| k);
    keyed.into_iter().map(|(_, g)| g).collect()
}

/// Whether every edge's (first) triplet comes from a different chunk.
fn distinct_chunks(index: &GraphIndex, g: &Group) -> bool {
    let e = g.edges();
    (0..e.len())
        .all(|i| (i + 1..e.len()).all(|j| index.chunk[e[i] as usize] != index.chunk[e[j] as usize]))
}

/// The seeded sampling hash of a group: of the pattern and its sorted triplet-id hashes, so it
/// depends on the group's identity (what its id is made of) and nothing else in the graph.
fn sample_key(seed: u64, pattern: PatternKind, hashes: &[u64], g: &Group) -> u64 {
    let mut own = [u64::MAX; 4];
    for (slot, &e) in own.iter_mut().zip(g.edges()) {
        *slot = hashes[e as usize];
    }
    let own = &mut own[..g.edges().len()];
    own.sort_unstable();
    let mut h = mix(seed ^ mix(salt(pattern)));
    for &x in own.iter() {
        h = mix(h.wrapping_add(0x9e37_79b9_7f4a_7c15) ^ x);
    }
    h
}

/// Keep the `k` groups with the smallest seeded hash (bottom-k). A group stays sampled as long
/// as it exists and fewer than `k` groups hash below it, so one changed edge changes only the
/// groups through it and as many others as those displace.
fn bottom_k(
    index: &GraphIndex,
    groups: Vec<Group>,
    k: usize,
    seed: u64,
    pattern: PatternKind,
) -> Vec<Group> {
    if groups.len() <= k {
        return groups;
    }
    if k == 0 {
        return Vec::new();
    }
    let hashes = index.triplet_hashes();
    let mut keyed: Vec<(u64, u128, Group)> = groups
        .into_iter()
        .map(|g| {
            (
                sample_key(seed, pattern, hashes, &g),
                sorted_key(index, &g),
                g,
            )
        })
        .collect();
    keyed.select_nth_unstable_by_key(k - 1, |&(h, s, _)| (h, s));
    keyed.truncate(k);
    keyed.sort_unstable_by_key(|&(_, s, _)| s);
    keyed.into_iter().map(|(_, _, g)| g).collect()
}

/// [`bottom_k`] over a stream: the `k` groups with the smallest (hash, sorted triplet ids) seen
/// so far, in a max-heap, so memory is `k` whatever the number of groups.
struct BottomK<'i, 'a> {
    index: &'i GraphIndex<'a>,
    hashes: &'i [u64],
    k: usize,
    seed: u64,
    pattern: PatternKind,
    heap: BinaryHeap<(u64, u128, Group)>,
}

impl<'i, 'a> BottomK<'i, 'a> {
    fn new(index: &'i GraphIndex<'a>, k: usize, seed: u64, pattern: PatternKind) -> Self {
        Self {
            index,
            hashes: index.triplet_hashes(),
            k,
            seed,
            pattern,
            heap: BinaryHeap::with_capacity(k.min(1 << 20) + 1),
        }
    }

    fn offer(&mut self, g: Group) {
        if self.k == 0 {
            return;
        }
        let h = sample_key(self.seed, self.pattern, self.hashes, &g);
        if self.heap.len() < self.k {
            self.heap.push((h, sorted_key(self.index, &g), g));
            return;
        }
        if let Some(mut top) = self.heap.peek_mut()
            && h <= top.0
        {
            let item = (h, sorted_key(self.index, &g), g);
            if item < *top {
                *top = item;
            }
        }
    }

    /// The sample, ordered by sorted triplet ids.
    fn into_groups(self) -> Vec<Group> {
        let mut kept = self.heap.into_vec();
        kept.sort_unstable_by_key(|&(_, s, _)| s);
        kept.into_iter().map(|(_, _, g)| g).collect()
    }
}

/// The `patterns` row of a kept group.
pub fn pattern_row(index: &GraphIndex, pattern: PatternKind, g: &Group) -> Pattern {
    let edges: Vec<_> = g.edges().iter().map(|&e| index.edges[e as usize]).collect();
    let triplet_ids: Vec<String> = edges.iter().map(|e| e.triplet_ids[0].clone()).collect();
    let chunk_ids: Vec<String> = edges.iter().map(|e| e.chunk_ids[0].clone()).collect();
    let report_ids: Vec<String> = edges.iter().map(|e| e.report_ids[0].clone()).collect();
    let pivot_entities: Vec<String> = match pattern {
        PatternKind::SingleHop => Vec::new(),
        PatternKind::ChainedMultiHop => edges[1..].iter().map(|e| e.head.clone()).collect(),
        PatternKind::StarShaped => vec![edges[0].head.clone()],
        PatternKind::InvertedStarShaped => vec![edges[0].tail.clone()],
    };
    let mut sorted: Vec<&str> = triplet_ids.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let mut parts = vec![pattern.name()];
    parts.extend(sorted);
    let spans_reports = report_ids.iter().any(|r| *r != report_ids[0]);
    Pattern {
        id: stable_id("pattern", &parts),
        pattern: pattern.name().to_string(),
        edge_ids: edges.iter().map(|e| e.id.clone()).collect(),
        triplet_ids,
        chunk_ids,
        report_ids,
        pivot_entities,
        spans_reports,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_core::GraphEdge;

    /// A pseudo-random graph of `n` edges over 30 nodes, each edge its own triplet.
    fn graph(n: u32) -> Vec<GraphEdge> {
        (0..n)
            .map(|i| {
                let x = i.wrapping_mul(2_654_435_761);
                let (h, t) = (x % 30, (x >> 12) % 30);
                GraphEdge {
                    id: format!("e{i:03}"),
                    head: format!("n{h}"),
                    relation: "r".into(),
                    tail: format!("n{t}"),
                    triplet_ids: vec![format!("t{i:03}")],
                    chunk_ids: vec![format!("c{}", (x >> 20) % 6)],
                    report_ids: vec!["rep".into()],
                }
            })
            .collect()
    }

    #[test]
    fn streaming_and_materialised_mining_agree() {
        let edges = graph(150);
        let index = GraphIndex::new(&edges);
        assert!(index.distinct_triplets);
        for cap in [None, Some(1), Some(7), Some(60), Some(100_000)] {
            for distinct_chunks in [false, true] {
                let config = PatternsConfig {
                    max_per_pattern: cap,
                    distinct_chunks,
                    ..PatternsConfig::default()
                };
                for kind in PatternKind::ALL {
                    let streamed = mine_pattern_enumerating(&index, kind, &config);
                    let whole = mine_with_dedupe(&index, kind, &config);
                    let sorted = |mut g: Vec<Group>| {
                        g.sort_unstable();
                        g
                    };
                    assert_eq!(streamed.count, whole.count, "{cap:?} {kind:?}");
                    assert_eq!(sorted(streamed.groups), sorted(whole.groups));
                    // Counting gives the same counts (its sample is another, tested in `it`).
                    let counted = mine_pattern(&index, kind, &config);
                    assert_eq!(counted.count, whole.count, "{cap:?} {kind:?}");
                }
            }
        }
    }
}
