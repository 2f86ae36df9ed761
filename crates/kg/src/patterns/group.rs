//! A mined group of edges, its sort key by triplet ids, and the seeded hashing both miners (`mine.rs`, enumerating, and
//! `count.rs`, counting) draw their samples with.

use super::PatternKind;
use super::index::GraphIndex;

/// A group of edges (indices into the index's edges), in pattern order: a chain's edges along
/// the path, a star's and an inverted star's by first triplet id. At most four edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Group {
    edges: [u32; 4],
    len: u8,
}

impl Group {
    pub(super) fn of(edges: &[u32]) -> Self {
        let mut g = Group {
            edges: [0; 4],
            len: edges.len() as u8,
        };
        g.edges[..edges.len()].copy_from_slice(edges);
        g
    }

    /// The group's edges, as indices into the index's edges, in pattern order.
    pub fn edges(&self) -> &[u32] {
        &self.edges[..self.len as usize]
    }
}

/// splitmix64's finaliser: a bijective 64-bit mix.
pub(super) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A salt per pattern, so each pattern's sample is drawn independently.
pub(super) fn salt(pattern: PatternKind) -> u64 {
    match pattern {
        PatternKind::SingleHop => 1,
        PatternKind::ChainedMultiHop => 2,
        PatternKind::StarShaped => 3,
        PatternKind::InvertedStarShaped => 4,
    }
}

/// The group's triplet ranks, sorted, packed into one integer (unused slots all ones), so
/// comparing keys compares sorted triplet ids.
pub(super) fn sorted_key(index: &GraphIndex, g: &Group) -> u128 {
    let mut ranks = [u32::MAX; 4];
    for (slot, &e) in ranks.iter_mut().zip(g.edges()) {
        *slot = index.triplet_rank[e as usize];
    }
    ranks[..g.edges().len()].sort_unstable();
    ranks
        .iter()
        .fold(0u128, |acc, &r| (acc << 32) | u128::from(r))
}
