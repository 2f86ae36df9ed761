//! The adjacency index the miners walk: edges as integers, out- and in-lists in CSR form.

use foldhash::{HashMap, HashMapExt};
use std::sync::OnceLock;

use noisebench_core::{GraphEdge, sha256_hex};

/// The merged graph as integers. Built once from the `graph_edges` rows; every miner reads it.
///
/// Hand-written CSR rather than petgraph: the miners need only sorted out- and in-lists of edge
/// indices, multigraph degrees and a dense rank per triplet and chunk, which petgraph's graph
/// types would add indirection to without doing any of it.
#[derive(Debug, Clone)]
pub struct GraphIndex<'a> {
    /// The usable input edges (with at least one triplet, chunk and report id), in input order.
    pub(crate) edges: Vec<&'a GraphEdge>,
    /// Node names, by node index.
    pub(crate) nodes: Vec<&'a str>,
    pub(crate) head: Vec<u32>,
    pub(crate) tail: Vec<u32>,
    /// Dense rank of each edge's first triplet id (equal ids, equal rank): ordering by it is
    /// ordering by the id string.
    pub(crate) triplet_rank: Vec<u32>,
    /// Dense index of each edge's first chunk id.
    pub(crate) chunk: Vec<u32>,
    out_start: Vec<u32>,
    out_edges: Vec<u32>,
    in_start: Vec<u32>,
    in_edges: Vec<u32>,
    /// Input edges left out because a triplet, chunk or report list was empty.
    pub(crate) ignored: usize,
    /// No two edges share a first triplet id (what the graph stage writes: each triplet merges
    /// into one edge).
    pub(crate) distinct_triplets: bool,
    /// [`GraphIndex::triplet_hashes`], computed when a cap first needs them.
    hashes: OnceLock<Vec<u64>>,
}

impl<'a> GraphIndex<'a> {
    /// Index `edges`. Edges without a triplet, chunk or report id are left out (counted).
    pub fn new(edges: &'a [GraphEdge]) -> Self {
        let usable: Vec<&GraphEdge> = edges
            .iter()
            .filter(|e| {
                !e.triplet_ids.is_empty() && !e.chunk_ids.is_empty() && !e.report_ids.is_empty()
            })
            .collect();
        let ignored = edges.len() - usable.len();

        let mut node_of: HashMap<&str, u32> = HashMap::with_capacity(usable.len());
        let mut nodes = Vec::new();
        let mut intern = |name: &'a str| -> u32 {
            *node_of.entry(name).or_insert_with(|| {
                nodes.push(name);
                (nodes.len() - 1) as u32
            })
        };
        let head: Vec<u32> = usable.iter().map(|e| intern(&e.head)).collect();
        let tail: Vec<u32> = usable.iter().map(|e| intern(&e.tail)).collect();

        let mut chunk_of: HashMap<&str, u32> = HashMap::new();
        let chunk: Vec<u32> = usable
            .iter()
            .map(|e| {
                let next = chunk_of.len() as u32;
                *chunk_of.entry(e.chunk_ids[0].as_str()).or_insert(next)
            })
            .collect();

        // Sorted on (triplet id, edge id, index) tuples, one pointer from each string's bytes
        // rather than three: the sort is cache-bound on large graphs. Ties (edges sharing a
        // first triplet: bad input) are broken by edge id, so the input's order never matters.
        let mut keyed: Vec<(&str, &str, u32)> = usable
            .iter()
            .enumerate()
            .map(|(i, e)| (e.triplet_ids[0].as_str(), e.id.as_str(), i as u32))
            .collect();
        keyed.sort_unstable();
        let mut triplet_rank = vec![0u32; usable.len()];
        let mut rank = 0u32;
        for (i, &(t, _, e)) in keyed.iter().enumerate() {
            if i > 0 && t != keyed[i - 1].0 {
                rank += 1;
            }
            triplet_rank[e as usize] = rank;
        }
        let by_triplet: Vec<u32> = keyed.into_iter().map(|(_, _, e)| e).collect();

        // Filling the lists in triplet order leaves each list sorted by first triplet id.
        let (out_start, out_edges) = csr(nodes.len(), &by_triplet, &head);
        let (in_start, in_edges) = csr(nodes.len(), &by_triplet, &tail);
        let distinct_triplets = usable.is_empty() || rank as usize + 1 == usable.len();
        Self {
            distinct_triplets,
            hashes: OnceLock::new(),
            edges: usable,
            nodes,
            head,
            tail,
            triplet_rank,
            chunk,
            out_start,
            out_edges,
            in_start,
            in_edges,
            ignored,
        }
    }

    /// Number of (usable) edges.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// The edge a `Group` names by index.
    pub fn edge(&self, index: u32) -> &'a GraphEdge {
        self.edges[index as usize]
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Input edges left out for an empty triplet, chunk or report list.
    pub fn ignored(&self) -> usize {
        self.ignored
    }

    /// Edges leaving `node`, by first triplet id.
    pub(crate) fn outgoing(&self, node: u32) -> &[u32] {
        let n = node as usize;
        &self.out_edges[self.out_start[n] as usize..self.out_start[n + 1] as usize]
    }

    /// Edges entering `node`, by first triplet id.
    pub(crate) fn incoming(&self, node: u32) -> &[u32] {
        let n = node as usize;
        &self.in_edges[self.in_start[n] as usize..self.in_start[n + 1] as usize]
    }

    /// Edges leaving `node` in the multigraph (parallel edges and self-loops count).
    pub(crate) fn out_degree(&self, node: u32) -> usize {
        self.outgoing(node).len()
    }

    /// Edges entering `node` in the multigraph.
    pub(crate) fn in_degree(&self, node: u32) -> usize {
        self.incoming(node).len()
    }

    /// A stable 64-bit hash of each edge's first triplet id (the first 8 bytes of its sha256),
    /// for sampling: the same triplet hashes alike on every run and machine.
    pub(crate) fn triplet_hashes(&self) -> &[u64] {
        self.hashes.get_or_init(|| {
            self.edges
                .iter()
                .map(|e| {
                    let hex = sha256_hex(e.triplet_ids[0].as_bytes());
                    u64::from_str_radix(&hex[..16], 16).unwrap_or_default()
                })
                .collect()
        })
    }
}

/// CSR lists: `start[n]..start[n + 1]` indexes `list`, holding the edges whose `end` is `n`, in
/// the order of `order`.
fn csr(nodes: usize, order: &[u32], end: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; nodes + 1];
    for &n in end {
        start[n as usize + 1] += 1;
    }
    for i in 0..nodes {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut list = vec![0u32; order.len()];
    for &e in order {
        let n = end[e as usize] as usize;
        list[fill[n] as usize] = e;
        fill[n] += 1;
    }
    (start, list)
}
