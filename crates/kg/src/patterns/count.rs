//! Capped mining of chains and inverted stars by counting, not enumerating.
//!
//! Why: hubs make these two patterns grow faster than the graph. A chain `a -> b -> c -> d` is a
//! pair (edge into `b`, edge out of `c`) around its middle edge, so a hub's chains number
//! `in(b) * out(c)` per middle edge; inverted stars number `heads(v)^2 / 2` per tail. On the
//! RARE-shaped corpus the 3-chains go from 87M at RARE's size to 4.2G at four times it, while
//! the cap grows linearly. Enumerating every group to offer it to a bottom-k sample
//! costs the number of groups; this costs the graph plus the cap.
//!
//! How, with the cap on and distinct triplets (the graph stage's output):
//!
//! 1. **Count per centre, exactly.** A centre is a chain's last edge (2 edges), its middle edge
//!    (3 edges), or an inverted star's tail. Its groups are counted twice, all node-distinct ones
//!    (`found`) and those also passing the distinct-chunk rule (eligible), from per-node tallies
//!    of in- and out-edges by neighbour (self-loops left out) and the edges of each chunk, by
//!    inclusion-exclusion over the excluded coincidences. A 2-chain centre is a look-up and a
//!    pass over its chunk's edges, an inverted-star centre a pass over the tail's in-list. A 3-chain centre `b -> c` is
//!    `|I| |J|` (usable first and last edges, from the tallies) less the pairs closing a cycle
//!    (`a = d`: counted once per distinct node pair `(b, c)`, marking `c`'s out-neighbours in a
//!    dense array and reading `b`'s in-neighbours there) and, with the rule, less the pairs
//!    sharing a chunk (counted once per chunk, over the pairs of its edges) with corrections from
//!    the edges of the centre's own chunk. So the cost is the edges, the squares of the chunk
//!    sizes (a chunk holds a handful of triplets) and, for the cycles, the sum over distinct
//!    edge ends of the smaller neighbour list (a dense-array read each, no hash).
//! 2. **Draw the sample by rank.** `k` distinct ranks out of the `N` eligible groups (Floyd's
//!    algorithm on a ChaCha8 stream seeded by the seed and the pattern), ordered; the ranks
//!    falling in a centre's range say how many of its groups are kept (a multivariate
//!    hypergeometric split, as a uniform `k`-subset of all groups gives).
//! 3. **Pick within a centre.** That many distinct eligible groups of the centre, uniformly: by
//!    rejection over the centre's candidate grid (in-edge x out-edge, head x head) with a ChaCha8
//!    stream seeded by the seed, the pattern and the centre's own triplet hash, or, when at least
//!    half of the centre's groups are wanted, by listing them and shuffling.
//!
//! Steps 2 and 3 together give a uniform `k`-subset of the eligible groups (spread over the
//! graph as a uniform sample is, never piled on one hub), seeded and single-threaded: the same
//! graph (rows in any order) and seed give the same groups. Unlike the hash-based bottom-k the
//! other patterns use, a change anywhere can reshuffle the sample (ranks move with `N`): that is
//! the price of not looking at every group. Single hops and stars are at most a constant number
//! per node, so they keep the streaming bottom-k.

use foldhash::{HashMap, HashSet};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::PatternKind;
use super::group::{Group, mix, salt};
use super::index::GraphIndex;

/// Per-node tallies of the edges at one end (out-edges by tail, or in-edges by head), self-loops
/// left out: totals and counts by neighbour.
struct Tally {
    total: Vec<u64>,
    by_node: HashMap<(u32, u32), u64>,
}

impl Tally {
    /// `out = true`: for each node, its out-edges by tail; else its in-edges by head.
    fn new(index: &GraphIndex, out: bool) -> Self {
        let mut t = Tally {
            total: vec![0; index.node_count()],
            by_node: HashMap::default(),
        };
        for e in 0..index.edge_count() {
            let (h, tl) = (index.head[e], index.tail[e]);
            if h == tl {
                continue;
            }
            let (n, x) = if out { (h, tl) } else { (tl, h) };
            t.total[n as usize] += 1;
            *t.by_node.entry((n, x)).or_default() += 1;
        }
        t
    }
    fn node(&self, n: u32, x: u32) -> u64 {
        self.by_node.get(&(n, x)).copied().unwrap_or(0)
    }
}

/// The edges of each chunk (CSR, in edge order): a handful each.
struct ChunkEdges {
    start: Vec<u32>,
    edges: Vec<u32>,
}

impl ChunkEdges {
    fn new(index: &GraphIndex) -> Self {
        let keys = index
            .chunk
            .iter()
            .copied()
            .max()
            .map_or(0, |m| m as usize + 1);
        let (start, edges) = csr_by(index.edge_count(), keys, &index.chunk);
        ChunkEdges { start, edges }
    }
    fn of(&self, k: u32) -> &[u32] {
        let k = k as usize;
        &self.edges[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

/// What a centre's groups look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A 2-edge chain ending in the centre edge.
    Chain2,
    /// A 3-edge chain whose middle is the centre edge.
    Chain3,
    /// An inverted star on the centre node.
    Inverted,
}

/// A centre with at least one eligible group.
#[derive(Debug, Clone, Copy)]
struct Centre {
    shape: Shape,
    /// An edge (chains) or a node (inverted stars).
    at: u32,
    eligible: u64,
}

/// What [`mine_counted`] found: the kept groups and the exact counts.
pub(super) struct Counted {
    pub groups: Vec<Group>,
    /// Node-distinct groups (before the distinct-chunk rule).
    pub found: u64,
    /// Groups passing the distinct-chunk rule (all of `found` when it is off).
    pub eligible: u64,
}

/// Chains (`chain_min..=chain_max` edges) or inverted stars with the cap `k`, by counting
/// (module doc). `rule` is the distinct-chunk rule. Requires distinct triplets.
pub(super) fn mine_counted(
    index: &GraphIndex,
    pattern: PatternKind,
    chain_min: usize,
    chain_max: usize,
    rule: bool,
    k: usize,
    seed: u64,
) -> Counted {
    let mut centres = Vec::new();
    let (mut found, mut eligible) = (0u64, 0u64);
    let mut push = |shape, at, (f, e): (u64, u64)| {
        found += f;
        eligible += e;
        if e > 0 {
            centres.push(Centre {
                shape,
                at,
                eligible: e,
            });
        }
    };
    match pattern {
        PatternKind::ChainedMultiHop => {
            let ins = Tally::new(index, false);
            let chunks = rule.then(|| ChunkEdges::new(index));
            let chain3 = (chain_max >= 3).then(|| Chain3::new(index, &ins, chunks.as_ref()));
            // Centres in triplet order, so the row order of the input does not matter.
            let mut order: Vec<u32> = (0..index.edge_count() as u32).collect();
            order.sort_unstable_by_key(|&e| index.triplet_rank[e as usize]);
            for e in order {
                if index.head[e as usize] == index.tail[e as usize] {
                    continue;
                }
                if chain_min <= 2 {
                    push(
                        Shape::Chain2,
                        e,
                        count_chain2(index, &ins, chunks.as_ref(), e),
                    );
                }
                if let Some(chain3) = &chain3 {
                    push(
                        Shape::Chain3,
                        e,
                        chain3.count(index, &ins, chunks.as_ref(), e),
                    );
                }
            }
        }
        PatternKind::InvertedStarShaped => {
            let mut heads = Vec::new();
            let mut seen = vec![u32::MAX; index.node_count()];
            let mut order: Vec<u32> = (0..index.node_count() as u32)
                .filter(|&v| !index.incoming(v).is_empty())
                .collect();
            // By the first triplet into the node (in-lists are in triplet order).
            order.sort_unstable_by_key(|&v| index.triplet_rank[index.incoming(v)[0] as usize]);
            let mut chunks = Vec::new();
            for v in order {
                inverted_heads(index, v, &mut seen, &mut heads);
                let h = heads.len() as u64;
                let all = h * h.saturating_sub(1) / 2;
                let mut ok = all;
                if rule {
                    chunks.clear();
                    chunks.extend(heads.iter().map(|&e| index.chunk[e as usize]));
                    chunks.sort_unstable();
                    for run in chunks.chunk_by(|a, b| a == b) {
                        let n = run.len() as u64;
                        ok -= n * (n - 1) / 2;
                    }
                }
                push(Shape::Inverted, v, (all, ok));
            }
        }
        PatternKind::SingleHop | PatternKind::StarShaped => {
            unreachable!("single hops and stars are enumerated")
        }
    }

    let groups = sample(index, pattern, &centres, eligible, k, seed, rule);
    Counted {
        groups,
        found,
        eligible,
    }
}

/// The inverted-star heads of `v`: its first in-edge from each distinct head (no self-loop), in
/// triplet order, as `each_inverted_star` pairs them. `seen` is scratch, one slot per node.
fn inverted_heads(index: &GraphIndex, v: u32, seen: &mut [u32], heads: &mut Vec<u32>) {
    heads.clear();
    for &e in index.incoming(v) {
        let h = index.head[e as usize];
        if h != v && seen[h as usize] != v {
            seen[h as usize] = v;
            heads.push(e);
        }
    }
    // Reset so that the next call for `v` (when drawing) lists the same heads.
    for &e in heads.iter() {
        seen[index.head[e as usize] as usize] = u32::MAX;
    }
}

/// 2-chains `a -> b -> c` ending in `e2 = b -> c`: `(found, eligible)`; with the rule
/// (`chunks`), less the first edges in `e2`'s chunk.
fn count_chain2(
    index: &GraphIndex,
    ins: &Tally,
    chunks: Option<&ChunkEdges>,
    e2: u32,
) -> (u64, u64) {
    let (b, c, k2) = ends(index, e2);
    // In-edges of b, self-loops left out, not from c.
    let found = ins.total[b as usize] - ins.node(b, c);
    let Some(chunks) = chunks else {
        return (found, found);
    };
    let same = chunks
        .of(k2)
        .iter()
        .filter(|&&e| {
            let (a, t) = (index.head[e as usize], index.tail[e as usize]);
            t == b && a != b && a != c
        })
        .count() as u64;
    (found, found - same)
}

/// What counting 3-chains needs beyond the in-tallies and the chunks' edges: the out-tallies,
/// per node pair `(b, c)` of an edge the pairs `x -> b`, `c -> x` (the `a = d` coincidences),
/// and (rule) per pair the same-chunk pairs of a first and a last edge, found chunk by chunk.
struct Chain3 {
    outs: Tally,
    /// `(b, c)` -> `sum over x of in(b from x) * out(c to x)`.
    closing: HashMap<(u32, u32), u64>,
    /// `(b, c)` -> (pairs `a -> b`, `c -> d` in one chunk with `a, d` not in `{b, c}`; those of
    /// them with `a = d`).
    same_chunk: HashMap<(u32, u32), (u64, u64)>,
}

impl Chain3 {
    fn new(index: &GraphIndex, ins: &Tally, chunks: Option<&ChunkEdges>) -> Self {
        let outs = Tally::new(index, true);
        let n = index.node_count();
        // Distinct neighbours with multiplicities, per node (CSR), from the tallies.
        let neighbours = |t: &Tally| {
            let mut start = vec![0u32; n + 1];
            for &(m, _) in t.by_node.keys() {
                start[m as usize + 1] += 1;
            }
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let mut fill = start.clone();
            let mut list = vec![(0u32, 0u64); t.by_node.len()];
            for (&(m, x), &count) in &t.by_node {
                list[fill[m as usize] as usize] = (x, count);
                fill[m as usize] += 1;
            }
            (start, list)
        };
        let (in_start, in_list) = neighbours(ins);
        let (out_start, out_list) = neighbours(&outs);
        let in_of =
            |b: u32| &in_list[in_start[b as usize] as usize..in_start[b as usize + 1] as usize];
        let out_of =
            |c: u32| &out_list[out_start[c as usize] as usize..out_start[c as usize + 1] as usize];

        // The closing counts, pairs grouped by `c`: `c`'s out-neighbours marked in a dense array,
        // then each `b` reads its in-neighbours there (or, when `b` has more in-neighbours than
        // `c` out-neighbours, `c`'s are looked up in `b`'s tally).
        let mut pairs: Vec<(u32, u32)> = (0..index.edge_count())
            .filter(|&e| index.head[e] != index.tail[e])
            .map(|e| (index.tail[e], index.head[e]))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut closing = HashMap::default();
        closing.reserve(pairs.len());
        let mut mark = vec![0u64; n];
        for run in pairs.chunk_by(|x, y| x.0 == y.0) {
            let c = run[0].0;
            for &(x, count) in out_of(c) {
                mark[x as usize] = count;
            }
            for &(_, b) in run {
                let w: u64 = if in_of(b).len() <= out_of(c).len() {
                    in_of(b).iter().map(|&(x, k)| k * mark[x as usize]).sum()
                } else {
                    out_of(c).iter().map(|&(x, k)| k * ins.node(b, x)).sum()
                };
                closing.insert((b, c), w);
            }
            for &(x, _) in out_of(c) {
                mark[x as usize] = 0;
            }
        }

        let mut same_chunk: HashMap<(u32, u32), (u64, u64)> = HashMap::default();
        if let Some(chunks) = chunks {
            for k in 0..chunks.start.len().saturating_sub(1) {
                let edges = chunks.of(k as u32);
                for &e1 in edges {
                    let (a, b) = (index.head[e1 as usize], index.tail[e1 as usize]);
                    for &e3 in edges {
                        let (c, d) = (index.head[e3 as usize], index.tail[e3 as usize]);
                        if a == b || c == d || b == c || a == c || d == b {
                            continue;
                        }
                        let entry = same_chunk.entry((b, c)).or_default();
                        entry.0 += 1;
                        entry.1 += u64::from(a == d);
                    }
                }
            }
        }
        Chain3 {
            outs,
            closing,
            same_chunk,
        }
    }

    /// 3-chains `a -> b -> c -> d` with middle edge `e2 = b -> c`: `(found, eligible)`.
    ///
    /// With `I` the first edges (into `b`, `a` not `b` or `c`) and `J` the last (out of `c`, `d`
    /// not `c` or `b`), `found = |I| |J| - closing(b, c)` (the pairs with `a = d`). With the rule,
    /// by inclusion-exclusion over `I'`, `J'` (those not in `e2`'s chunk `k2`): `|I'| |J'|`, less
    /// the `a = d` pairs in `I' x J'` (the closing count less those touching `k2`, from `k2`'s own
    /// edges), less the same-chunk pairs in `I' x J'` (the pair's count less those in `k2`),
    /// plus the pairs that are both. All in the tallies and `k2`'s edges: constant work for a
    /// bounded chunk.
    fn count(
        &self,
        index: &GraphIndex,
        ins: &Tally,
        chunks: Option<&ChunkEdges>,
        e2: u32,
    ) -> (u64, u64) {
        let (b, c, k2) = ends(index, e2);
        let outs = &self.outs;
        let i_all = ins.total[b as usize] - ins.node(b, c);
        let j_all = outs.total[c as usize] - outs.node(c, b);
        let closing = self.closing.get(&(b, c)).copied().unwrap_or(0);
        let found = i_all * j_all - closing;
        let Some(chunks) = chunks else {
            return (found, found);
        };
        // e2's chunk: its first edges (L1) and last edges (L3) around b -> c.
        let chunk = chunks.of(k2);
        let (mut l1, mut l3, mut y1, mut y3) = (0i64, 0i64, 0i64, 0i64);
        for &e in chunk {
            let (h, t) = (index.head[e as usize], index.tail[e as usize]);
            if t == b && h != b && h != c {
                l1 += 1;
                y1 += outs.node(c, h) as i64;
            }
            if h == c && t != b && t != c {
                l3 += 1;
                y3 += ins.node(b, t) as i64;
            }
        }
        let mut y13 = 0i64;
        if l1 > 0 && l3 > 0 {
            for &e1 in chunk {
                let (a, t1) = (index.head[e1 as usize], index.tail[e1 as usize]);
                if t1 != b || a == b || a == c {
                    continue;
                }
                for &e3 in chunk {
                    let (h3, d) = (index.head[e3 as usize], index.tail[e3 as usize]);
                    if h3 == c && d == a {
                        y13 += 1;
                    }
                }
            }
        }
        let (z, yz) = self.same_chunk.get(&(b, c)).copied().unwrap_or((0, 0));
        let eligible = (i_all as i64 - l1) * (j_all as i64 - l3)
            - (closing as i64 - y1 - y3 + y13)
            - (z as i64 - l1 * l3)
            + (yz as i64 - y13);
        debug_assert!(eligible >= 0 && eligible as u64 <= found);
        (found, eligible.max(0) as u64)
    }
}

/// CSR of `items` (`0..len`) by `key[item]` (keys below `keys`), items in order.
fn csr_by(len: usize, keys: usize, key: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; keys + 1];
    for &k in key {
        start[k as usize + 1] += 1;
    }
    for i in 0..keys {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut list = vec![0u32; len];
    for (item, &k) in key.iter().enumerate() {
        list[fill[k as usize] as usize] = item as u32;
        fill[k as usize] += 1;
    }
    (start, list)
}

fn ends(index: &GraphIndex, e: u32) -> (u32, u32, u32) {
    let e = e as usize;
    (index.head[e], index.tail[e], index.chunk[e])
}

/// A centre's candidate grid: its size, and the group at a position if it is an eligible one.
struct Grid<'a, 'i> {
    index: &'a GraphIndex<'i>,
    shape: Shape,
    at: u32,
    rule: bool,
    /// Inverted stars: the centre's heads.
    heads: &'a [u32],
}

impl Grid<'_, '_> {
    fn size(&self) -> u64 {
        let ix = self.index;
        match self.shape {
            Shape::Chain2 => ix.in_degree(ix.head[self.at as usize]) as u64,
            Shape::Chain3 => {
                let (b, c) = (ix.head[self.at as usize], ix.tail[self.at as usize]);
                ix.in_degree(b) as u64 * ix.out_degree(c) as u64
            }
            Shape::Inverted => (self.heads.len() as u64).pow(2),
        }
    }

    fn group(&self, p: u64) -> Option<Group> {
        let ix = self.index;
        let chunk = |e: u32| ix.chunk[e as usize];
        match self.shape {
            Shape::Chain2 | Shape::Chain3 => {
                let e2 = self.at;
                let (b, c) = (ix.head[e2 as usize], ix.tail[e2 as usize]);
                let (i, j) = if self.shape == Shape::Chain2 {
                    (p as usize, 0)
                } else {
                    let w = ix.out_degree(c) as u64;
                    ((p / w) as usize, (p % w) as usize)
                };
                let e1 = ix.incoming(b)[i];
                let a = ix.head[e1 as usize];
                if a == b || a == c || (self.rule && chunk(e1) == chunk(e2)) {
                    return None;
                }
                if self.shape == Shape::Chain2 {
                    return Some(Group::of(&[e1, e2]));
                }
                let e3 = ix.outgoing(c)[j];
                let d = ix.tail[e3 as usize];
                if d == a || d == b || d == c {
                    return None;
                }
                if self.rule && (chunk(e3) == chunk(e2) || chunk(e3) == chunk(e1)) {
                    return None;
                }
                Some(Group::of(&[e1, e2, e3]))
            }
            Shape::Inverted => {
                let n = self.heads.len() as u64;
                let (i, j) = ((p / n) as usize, (p % n) as usize);
                let (x, y) = (self.heads[i], self.heads[j]);
                (i < j && !(self.rule && chunk(x) == chunk(y))).then(|| Group::of(&[x, y]))
            }
        }
    }

    /// The centre's stable identity for seeding: a triplet hash of its edge (chains) or of its
    /// first in-edge (inverted stars), tagged with the shape.
    fn identity(&self) -> u64 {
        let ix = self.index;
        let e = match self.shape {
            Shape::Chain2 | Shape::Chain3 => self.at,
            Shape::Inverted => ix.incoming(self.at)[0],
        };
        let tag = match self.shape {
            Shape::Chain2 => 1,
            Shape::Chain3 => 2,
            Shape::Inverted => 3,
        };
        mix(ix.triplet_hashes()[e as usize] ^ mix(tag))
    }
}

/// `k` of the `total` eligible groups over `centres`, uniformly (module doc, steps 2 and 3),
/// ordered by sorted triplet ids.
fn sample(
    index: &GraphIndex,
    pattern: PatternKind,
    centres: &[Centre],
    total: u64,
    k: usize,
    seed: u64,
    rule: bool,
) -> Vec<Group> {
    let base = mix(seed ^ mix(salt(pattern)));
    // How many groups each centre gives: all of them when under the cap.
    let wanted: Vec<u64> = if total <= k as u64 {
        centres.iter().map(|c| c.eligible).collect()
    } else {
        let ranks = distinct_ranks(k, total, &mut ChaCha8Rng::seed_from_u64(base));
        let mut wanted = vec![0u64; centres.len()];
        let (mut next, mut end) = (0usize, 0u64);
        for (w, c) in wanted.iter_mut().zip(centres) {
            end += c.eligible;
            let start = next;
            while next < ranks.len() && ranks[next] < end {
                next += 1;
            }
            *w = (next - start) as u64;
        }
        wanted
    };

    let mut groups = Vec::with_capacity(k.min(total as usize));
    let mut heads = Vec::new();
    let mut seen = vec![
        u32::MAX;
        if pattern == PatternKind::InvertedStarShaped {
            index.node_count()
        } else {
            0
        }
    ];
    for (c, &s) in centres.iter().zip(&wanted) {
        if s == 0 {
            continue;
        }
        if c.shape == Shape::Inverted {
            inverted_heads(index, c.at, &mut seen, &mut heads);
        }
        let grid = Grid {
            index,
            shape: c.shape,
            at: c.at,
            rule,
            heads: &heads,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(mix(base ^ grid.identity()));
        pick(&grid, c.eligible, s, &mut rng, &mut groups);
    }
    groups.sort_unstable_by_key(|g| super::group::sorted_key(index, g));
    groups
}

/// `s` distinct eligible groups of the grid (which holds `eligible` of them), uniformly, to `out`.
fn pick(grid: &Grid, eligible: u64, s: u64, rng: &mut ChaCha8Rng, out: &mut Vec<Group>) {
    let size = grid.size();
    if 2 * s < eligible {
        // Rejection: at least half the eligible groups are still free, so each try succeeds
        // with probability at least eligible / (2 * size).
        let mut taken: HashSet<u64> = HashSet::default();
        while (taken.len() as u64) < s {
            let p = rng.random_range(0..size);
            if let Some(g) = grid.group(p)
                && taken.insert(p)
            {
                out.push(g);
            }
        }
    } else {
        // Most of the centre is wanted: list it, then a partial Fisher-Yates shuffle.
        let mut all: Vec<Group> = (0..size).filter_map(|p| grid.group(p)).collect();
        debug_assert_eq!(all.len() as u64, eligible, "centre count");
        let s = (s as usize).min(all.len());
        for i in 0..s {
            let j = rng.random_range(i..all.len());
            all.swap(i, j);
        }
        out.extend_from_slice(&all[..s]);
    }
}

/// `k` distinct integers of `0..n` (`k < n`), uniformly (Floyd's algorithm), ascending.
fn distinct_ranks(k: usize, n: u64, rng: &mut ChaCha8Rng) -> Vec<u64> {
    let mut set: HashSet<u64> = HashSet::with_capacity_and_hasher(k, Default::default());
    for j in n - k as u64..n {
        let t = rng.random_range(0..=j);
        if !set.insert(t) {
            set.insert(j);
        }
    }
    let mut ranks: Vec<u64> = set.into_iter().collect();
    ranks.sort_unstable();
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_core::GraphEdge;

    /// The tallies with chunks, per-node tallies of the edges at one end (out-edges by tail, or in-edges by head), self-loops
    /// left out: totals, by neighbour, by chunk, by both.
    struct Full {
        total: Vec<u64>,
        by_node: HashMap<(u32, u32), u64>,
        by_chunk: HashMap<(u32, u32), u64>,
        by_both: HashMap<(u32, u32, u32), u64>,
    }

    impl Full {
        /// `out = true`: for each node, its out-edges by tail; else its in-edges by head.
        fn new(index: &GraphIndex, out: bool, chunks: bool) -> Self {
            let mut t = Full {
                total: vec![0; index.node_count()],
                by_node: HashMap::default(),
                by_chunk: HashMap::default(),
                by_both: HashMap::default(),
            };
            for e in 0..index.edge_count() {
                let (h, tl) = (index.head[e], index.tail[e]);
                if h == tl {
                    continue;
                }
                let (n, x) = if out { (h, tl) } else { (tl, h) };
                t.total[n as usize] += 1;
                *t.by_node.entry((n, x)).or_default() += 1;
                if chunks {
                    let k = index.chunk[e];
                    *t.by_chunk.entry((n, k)).or_default() += 1;
                    *t.by_both.entry((n, x, k)).or_default() += 1;
                }
            }
            t
        }
        fn node(&self, n: u32, x: u32) -> u64 {
            self.by_node.get(&(n, x)).copied().unwrap_or(0)
        }
        fn chunk(&self, n: u32, k: u32) -> u64 {
            self.by_chunk.get(&(n, k)).copied().unwrap_or(0)
        }
        fn both(&self, n: u32, x: u32, k: u32) -> u64 {
            self.by_both.get(&(n, x, k)).copied().unwrap_or(0)
        }
    }

    /// 3-chains `a -> b -> c -> d` with middle edge `e2 = b -> c`: `(found, eligible)`.
    ///
    /// With `I` the usable first edges (into `b`, `a` not `b` or `c`, chunk not `e2`'s) and `J` the
    /// usable last edges (out of `c`, `d` not `c` or `b`, chunk not `e2`'s), the pairs are `I x J`
    /// less those with `a = d` or (rule) equal chunks; the pairs are counted from the shorter side,
    /// looking the other side's coincidences up in the tallies. Costs `min(in(b), out(c))` per
    /// middle edge, which hubs make superlinear: the reference [`Chain3::count`] is tested against.
    fn count_chain3_direct(
        index: &GraphIndex,
        ins: &Full,
        outs: &Full,
        e2: u32,
        rule: bool,
    ) -> (u64, u64) {
        let (b, c, k2) = ends(index, e2);
        let (mut found, mut eligible) = (0u64, 0u64);
        if index.in_degree(b) <= index.out_degree(c) {
            let j_all = outs.total[c as usize] - outs.node(c, b);
            let j_ok = if rule {
                j_all + outs.both(c, b, k2) - outs.chunk(c, k2)
            } else {
                j_all
            };
            for &e1 in index.incoming(b) {
                let a = index.head[e1 as usize];
                if a == b || a == c {
                    continue;
                }
                let to_a = outs.node(c, a);
                found += j_all - to_a;
                if !rule {
                    continue;
                }
                let k1 = index.chunk[e1 as usize];
                if k1 == k2 {
                    continue;
                }
                // Added before subtracting: the two removed sets overlap by it.
                eligible += j_ok + outs.both(c, a, k1)
                    - (to_a - outs.both(c, a, k2))
                    - (outs.chunk(c, k1) - outs.both(c, b, k1));
            }
        } else {
            let i_all = ins.total[b as usize] - ins.node(b, c);
            let i_ok = if rule {
                i_all + ins.both(b, c, k2) - ins.chunk(b, k2)
            } else {
                i_all
            };
            for &e3 in index.outgoing(c) {
                let d = index.tail[e3 as usize];
                if d == c || d == b {
                    continue;
                }
                let from_d = ins.node(b, d);
                found += i_all - from_d;
                if !rule {
                    continue;
                }
                let k3 = index.chunk[e3 as usize];
                if k3 == k2 {
                    continue;
                }
                eligible += i_ok + ins.both(b, d, k3)
                    - (from_d - ins.both(b, d, k2))
                    - (ins.chunk(b, k3) - ins.both(b, c, k3));
            }
        }
        (found, if rule { eligible } else { found })
    }

    /// A pseudo-random multigraph of `n` edges over 12 nodes, a third of the ends on hub 0,
    /// chunks shared by a handful of edges.
    fn graph(n: u32, salt: u32) -> Vec<GraphEdge> {
        (0..n)
            .map(|i| {
                let x = mix(u64::from(i) ^ (u64::from(salt) << 32));
                let end = |y: u64| {
                    if y.is_multiple_of(3) {
                        0
                    } else {
                        (y >> 2) % 12
                    }
                };
                GraphEdge {
                    id: format!("e{i:03}"),
                    head: format!("n{}", end(x & 0xffff)),
                    relation: "r".into(),
                    tail: format!("n{}", end((x >> 16) & 0xffff)),
                    triplet_ids: vec![format!("t{i:03}")],
                    chunk_ids: vec![format!("c{}", (x >> 40) % 9)],
                    report_ids: vec!["rep".into()],
                }
            })
            .collect()
    }

    #[test]
    fn chain3_counts_from_pairs_and_chunks_equal_the_direct_counts() {
        for salt in 0..40 {
            let edges = graph(20 + salt * 3, salt);
            let index = GraphIndex::new(&edges);
            for rule in [false, true] {
                let ins = Tally::new(&index, false);
                let (full_in, full_out) = (
                    Full::new(&index, false, rule),
                    Full::new(&index, true, rule),
                );
                let chunks = rule.then(|| ChunkEdges::new(&index));
                let chain3 = Chain3::new(&index, &ins, chunks.as_ref());
                for e in 0..index.edge_count() as u32 {
                    if index.head[e as usize] == index.tail[e as usize] {
                        continue;
                    }
                    assert_eq!(
                        chain3.count(&index, &ins, chunks.as_ref(), e),
                        count_chain3_direct(&index, &full_in, &full_out, e, rule),
                        "salt {salt}, rule {rule}, edge {e}"
                    );
                }
            }
        }
    }
}
