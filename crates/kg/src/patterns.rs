//! The `patterns` stage: the `graph_edges` table to the `patterns` table.
//!
//! RARE's four question patterns mined from the merged graph (RARE 3.3, Table 2; its traverser in
//! ../shared/REFERENCE.md "RARE code"): single-hop edges by the degree rule alone (never by
//! enumerating simple paths, which is exponential), chains of 2 to 3 edges with no node repeated,
//! stars (a head's first out-edges in combinations), inverted stars (pairs of heads sharing a
//! tail). Multi-hop groups whose triplets share a chunk are dropped, groups are deduplicated by
//! their sorted triplet ids, and each pattern is capped: single hops and stars (a constant number
//! per node) by bottom-k sampling on a seeded hash of the group, so a small graph change changes
//! few sampled groups; chains and inverted stars (which grow with hub degrees squared) by exact
//! counts per centre and a seeded uniform draw by rank, so the cost is the graph plus the cap,
//! not the number of groups (`count`). Pure functions over [`GraphIndex`] (hand-written CSR
//! adjacency) do the work; the stage only counts and reports.

mod count;
mod group;
mod index;
mod mine;

use std::path::Path;

use noisebench_core::{
    ConfigError, GraphEdge, InputSpec, Inputs, OutputSpec, Pattern, StageContext, StageError,
    StageFacts, StageOutput, StageReport, TableKind, TypedStage,
};
use serde::{Deserialize, Serialize};

pub use index::GraphIndex;
pub use mine::{
    PatternCount, chains, inverted_stars, mine_pattern, mine_pattern_enumerating, pattern_row,
    stars,
};

/// One of RARE's four question patterns, named as its records name them.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    /// One edge whose head and tail touch no other edge in that direction.
    SingleHop,
    /// A path of 2 to 3 edges.
    ChainedMultiHop,
    /// One head, several of its out-edges.
    StarShaped,
    /// Two heads, one shared tail.
    InvertedStarShaped,
}

impl PatternKind {
    /// All four, in table order.
    pub const ALL: [PatternKind; 4] = [
        PatternKind::SingleHop,
        PatternKind::ChainedMultiHop,
        PatternKind::StarShaped,
        PatternKind::InvertedStarShaped,
    ];

    /// The name in the `pattern` column.
    pub fn name(self) -> &'static str {
        match self {
            PatternKind::SingleHop => "single_hop",
            PatternKind::ChainedMultiHop => "chained_multi_hop",
            PatternKind::StarShaped => "star_shaped",
            PatternKind::InvertedStarShaped => "inverted_star_shaped",
        }
    }
}

/// An inclusive range of group sizes, in edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeRange {
    /// Fewest edges in a group.
    pub min: usize,
    /// Most edges in a group.
    pub max: usize,
}

fn default_patterns() -> Vec<PatternKind> {
    PatternKind::ALL.to_vec()
}
fn default_chain_edges() -> EdgeRange {
    EdgeRange { min: 2, max: 3 }
}
fn default_star_edges() -> EdgeRange {
    EdgeRange { min: 2, max: 4 }
}
fn default_star_leaves() -> usize {
    4
}
fn default_max_per_pattern() -> Option<usize> {
    Some(30_000)
}
fn default_seed() -> u64 {
    42
}
fn default_true() -> bool {
    true
}

/// Configuration of the `patterns` stage. The defaults are RARE's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternsConfig {
    /// Which patterns to mine: `single_hop`, `chained_multi_hop`, `star_shaped`,
    /// `inverted_star_shaped` (default all four; at least one).
    #[serde(default = "default_patterns")]
    pub patterns: Vec<PatternKind>,
    /// Chain lengths in edges, within 2 to 3 (default `{ min = 2, max = 3 }`).
    #[serde(default = "default_chain_edges")]
    pub chain_edges: EdgeRange,
    /// Star sizes in edges, within 2 to 4 (default `{ min = 2, max = 4 }`).
    #[serde(default = "default_star_edges")]
    pub star_edges: EdgeRange,
    /// How many of a head's out-edges (one per distinct tail, by first triplet id) stars are
    /// combined from: RARE takes the first 4. At least `star_edges.max`, at most 16.
    #[serde(default = "default_star_leaves")]
    pub star_leaves: usize,
    /// Most groups kept per pattern, sampled stably with `seed`: single hops and stars by
    /// bottom-k on a seeded hash of each group, chains and inverted stars uniformly by rank
    /// from exact counts, without enumerating them; RARE keeps 30,000 (the default). At least
    /// 1; `null` (JSON) means no cap, which TOML, having no null, writes as a number above any
    /// count.
    #[serde(default = "default_max_per_pattern")]
    pub max_per_pattern: Option<usize>,
    /// Seed of the sampling hash (default 42).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Keep a multi-hop group only when each of its triplets comes from a different chunk
    /// (RARE's rule; default true).
    #[serde(default = "default_true")]
    pub distinct_chunks: bool,
}

impl Default for PatternsConfig {
    fn default() -> Self {
        Self {
            patterns: default_patterns(),
            chain_edges: default_chain_edges(),
            star_edges: default_star_edges(),
            star_leaves: default_star_leaves(),
            max_per_pattern: default_max_per_pattern(),
            seed: default_seed(),
            distinct_chunks: true,
        }
    }
}

impl PatternsConfig {
    /// Check the ranges; errors name the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.patterns.is_empty() {
            return Err(ConfigError::new("patterns", "name at least one pattern"));
        }
        let range = |field: &str, r: EdgeRange, lo: usize, hi: usize| {
            if r.min < lo || r.max > hi || r.min > r.max {
                Err(ConfigError::new(
                    field,
                    format!("min and max must satisfy {lo} <= min <= max <= {hi}"),
                ))
            } else {
                Ok(())
            }
        };
        range("chain_edges", self.chain_edges, 2, 3)?;
        range("star_edges", self.star_edges, 2, 4)?;
        if self.star_leaves < self.star_edges.max || self.star_leaves > 16 {
            return Err(ConfigError::new(
                "star_leaves",
                format!(
                    "must be at least star_edges.max ({}) and at most 16",
                    self.star_edges.max
                ),
            ));
        }
        if self.max_per_pattern == Some(0) {
            return Err(ConfigError::new(
                "max_per_pattern",
                "must be at least 1 (leave a pattern out of `patterns` instead)",
            ));
        }
        Ok(())
    }

    /// The configured patterns, each once, in table order.
    fn kinds(&self) -> Vec<PatternKind> {
        let mut kinds = self.patterns.clone();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }
}

/// What the stage reports about a run (its [`StageFacts`] data).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PatternsFacts {
    /// Edges read.
    pub edges: u64,
    /// Edges left out for an empty triplet, chunk or report list.
    pub ignored_edges: u64,
    /// Nodes of the graph.
    pub nodes: u64,
    /// The cap per pattern, if any.
    pub max_per_pattern: Option<usize>,
    /// Whether the distinct-chunk rule applied.
    pub distinct_chunks: bool,
    /// Counts per pattern, in table order.
    pub patterns: Vec<PatternCount>,
}

impl PatternsFacts {
    /// The facts as sentences for the dataset card: one line per pattern, like RARE's Table 7.
    pub fn card_lines(&self) -> Vec<String> {
        if self.edges == self.ignored_edges {
            return vec![format!(
                "The graph has no usable edges ({} read): no patterns mined, the `patterns` table is empty.",
                self.edges
            )];
        }
        let mut lines = vec![format!(
            "Graph: {} edges, {} nodes{}; cap per pattern: {}; distinct-chunk rule {}.",
            self.edges - self.ignored_edges,
            self.nodes,
            if self.ignored_edges > 0 {
                format!(
                    " ({} edges without triplet, chunk or report ids left out)",
                    self.ignored_edges
                )
            } else {
                String::new()
            },
            self.max_per_pattern
                .map_or("none".to_string(), |c| c.to_string()),
            if self.distinct_chunks { "on" } else { "off" },
        )];
        for c in &self.patterns {
            let mut line = format!(
                "{}: {} found, {} dropped (shared chunk), {} capped, {} kept",
                c.pattern, c.found, c.shared_chunk, c.capped, c.kept
            );
            if c.duplicates > 0 {
                line.push_str(&format!(" ({} duplicates removed first)", c.duplicates));
            }
            line.push('.');
            lines.push(line);
        }
        lines
    }
}

/// Mine the configured patterns from `edges`: the `patterns` rows (ordered by pattern, then id)
/// and the counts. An empty graph gives no rows.
pub fn mine_patterns(
    edges: &[GraphEdge],
    config: &PatternsConfig,
) -> (Vec<Pattern>, PatternsFacts) {
    let index = GraphIndex::new(edges);
    let mut rows = Vec::new();
    let mut counts = Vec::new();
    for kind in config.kinds() {
        let mined = mine_pattern(&index, kind, config);
        let mut these: Vec<Pattern> = mined
            .groups
            .iter()
            .map(|g| pattern_row(&index, kind, g))
            .collect();
        noisebench_core::sort_by_id(&mut these);
        rows.extend(these);
        counts.push(mined.count);
    }
    let facts = PatternsFacts {
        edges: edges.len() as u64,
        ignored_edges: index.ignored() as u64,
        nodes: index.node_count() as u64,
        max_per_pattern: config.max_per_pattern,
        distinct_chunks: config.distinct_chunks,
        patterns: counts,
    };
    (rows, facts)
}

/// The `patterns` stage.
#[derive(Debug, Default, Clone, Copy)]
pub struct PatternsStage;

impl TypedStage for PatternsStage {
    type Config = PatternsConfig;
    const KIND: &'static str = "patterns";
    const VERSION: u32 = 1;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("graph_edges", TableKind::GraphEdges)]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("patterns", TableKind::Patterns)]
    }

    fn validate(&self, config: &PatternsConfig, _root: &Path) -> Result<(), ConfigError> {
        config.check()
    }

    fn run(
        &self,
        config: &PatternsConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        config.check()?;
        let edges: Vec<GraphEdge> = inputs.take("graph_edges")?;
        let bar = ctx.progress.bar("patterns", Some(edges.len() as u64));
        let (rows, facts) = mine_patterns(&edges, config);
        bar.inc(edges.len() as u64);
        bar.finish();
        tracing::info!(edges = edges.len(), groups = rows.len(), "patterns mined");
        let report = StageReport {
            items_in: edges.len() as u64,
            items_out: rows.len() as u64,
            drops: Vec::new(),
        };
        let facts = StageFacts::new("Question patterns", facts.card_lines(), &facts);
        Ok(StageOutput::new(report)
            .with_facts(facts)
            .with_table("patterns", rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_core::{NoProgress, Rows};
    use std::collections::BTreeMap;
    use std::sync::Arc;

    /// An edge `h -> t` with one triplet, in chunk `c` of report `r`.
    fn edge(h: &str, rel: &str, t: &str, triplet: &str, c: &str, r: &str) -> GraphEdge {
        GraphEdge {
            id: format!("e:{h}:{rel}:{t}"),
            head: h.into(),
            relation: rel.into(),
            tail: t.into(),
            triplet_ids: vec![triplet.into()],
            chunk_ids: vec![c.into()],
            report_ids: vec![r.into()],
        }
    }

    /// Edges from `(head, tail)` pairs, each its own triplet and chunk, one report.
    fn graph(pairs: &[(&str, &str)]) -> Vec<GraphEdge> {
        pairs
            .iter()
            .enumerate()
            .map(|(i, (h, t))| edge(h, "r", t, &format!("t{i:02}"), &format!("c{i:02}"), "rep"))
            .collect()
    }

    fn open() -> PatternsConfig {
        PatternsConfig {
            max_per_pattern: None,
            ..PatternsConfig::default()
        }
    }

    fn of(rows: &[Pattern], kind: PatternKind) -> Vec<&Pattern> {
        rows.iter().filter(|p| p.pattern == kind.name()).collect()
    }

    fn edge_sets(rows: &[Pattern], kind: PatternKind) -> Vec<Vec<String>> {
        let mut sets: Vec<Vec<String>> =
            of(rows, kind).iter().map(|p| p.edge_ids.clone()).collect();
        sets.sort();
        sets
    }

    #[test]
    fn single_hop_needs_a_lone_head_and_a_lone_tail() {
        let mut edges = graph(&[
            ("a", "b"), // single hop
            ("c", "d"), // d goes on
            ("d", "e"), // d has an edge in
            ("f", "g"), // f has two edges out
            ("f", "h"),
            ("z", "z"), // self-loop
        ]);
        // Parallel edges x -> y under two relations: degree 2 in the multigraph.
        edges.push(edge("x", "r1", "y", "t90", "c90", "rep"));
        edges.push(edge("x", "r2", "y", "t91", "c91", "rep"));
        let (rows, _) = mine_patterns(&edges, &open());
        let single = of(&rows, PatternKind::SingleHop);
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].edge_ids, vec!["e:a:r:b"]);
        assert!(single[0].pivot_entities.is_empty());
    }

    #[test]
    fn chains_repeat_no_node_and_name_their_inner_entities() {
        let edges = graph(&[("a", "b"), ("b", "c"), ("c", "d"), ("b", "a")]);
        let (rows, _) = mine_patterns(&edges, &open());
        let chains = of(&rows, PatternKind::ChainedMultiHop);
        let mut seen: Vec<(Vec<String>, Vec<String>)> = chains
            .iter()
            .map(|p| (p.edge_ids.clone(), p.pivot_entities.clone()))
            .collect();
        seen.sort();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            seen,
            vec![
                (s(&["e:a:r:b", "e:b:r:c"]), s(&["b"])),
                (s(&["e:a:r:b", "e:b:r:c", "e:c:r:d"]), s(&["b", "c"])),
                (s(&["e:b:r:c", "e:c:r:d"]), s(&["c"])),
            ]
        );
        // Lengths 2 only.
        let config = PatternsConfig {
            chain_edges: EdgeRange { min: 2, max: 2 },
            ..open()
        };
        let (rows, _) = mine_patterns(&edges, &config);
        assert_eq!(of(&rows, PatternKind::ChainedMultiHop).len(), 2);
        let config = PatternsConfig {
            chain_edges: EdgeRange { min: 3, max: 3 },
            ..open()
        };
        let (rows, _) = mine_patterns(&edges, &config);
        assert_eq!(of(&rows, PatternKind::ChainedMultiHop).len(), 1);
    }

    #[test]
    fn stars_combine_a_heads_first_four_distinct_tails() {
        // Five tails; `t` twice (two relations), the second after the others by triplet id.
        let mut edges = graph(&[("h", "p"), ("h", "q"), ("h", "s"), ("h", "t"), ("h", "u")]);
        edges.push(edge("h", "other", "t", "t99", "c99", "rep"));
        let (rows, _) = mine_patterns(&edges, &open());
        let stars = of(&rows, PatternKind::StarShaped);
        assert_eq!(stars.len(), 6 + 4 + 1);
        for p in &stars {
            assert_eq!(p.pivot_entities, vec!["h"]);
            assert!(!p.edge_ids.contains(&"e:h:r:u".to_string()), "fifth tail");
            assert!(
                !p.edge_ids.contains(&"e:h:other:t".to_string()),
                "tail twice"
            );
            // Pattern order: by first triplet id.
            let mut sorted = p.triplet_ids.clone();
            sorted.sort();
            assert_eq!(p.triplet_ids, sorted);
        }
        let config = PatternsConfig {
            star_edges: EdgeRange { min: 3, max: 3 },
            star_leaves: 5,
            ..open()
        };
        let (rows, _) = mine_patterns(&edges, &config);
        assert_eq!(of(&rows, PatternKind::StarShaped).len(), 10);
    }

    #[test]
    fn inverted_stars_pair_distinct_heads_of_one_tail() {
        let mut edges = graph(&[("a", "v"), ("b", "v"), ("c", "v"), ("v", "v")]);
        edges.push(edge("a", "again", "v", "t99", "c99", "rep"));
        let (rows, _) = mine_patterns(&edges, &open());
        let inverted = of(&rows, PatternKind::InvertedStarShaped);
        assert_eq!(inverted.len(), 3);
        for p in &inverted {
            assert_eq!(p.pivot_entities, vec!["v"]);
            assert!(!p.edge_ids.contains(&"e:a:again:v".to_string()));
        }
    }

    #[test]
    fn multi_hop_groups_sharing_a_chunk_are_dropped_and_counted() {
        let edges = vec![
            edge("a", "r", "b", "t1", "c1", "rep"),
            edge("b", "r", "c", "t2", "c1", "rep"),
            edge("b", "r", "d", "t3", "c2", "rep"),
        ];
        let (rows, facts) = mine_patterns(&edges, &open());
        assert_eq!(
            edge_sets(&rows, PatternKind::ChainedMultiHop),
            vec![vec!["e:a:r:b".to_string(), "e:b:r:d".to_string()]]
        );
        let chain = &facts.patterns[1];
        assert_eq!((chain.found, chain.shared_chunk, chain.kept), (2, 1, 1));
        // b's star {b->c, b->d} has distinct chunks; off, the chain comes back.
        assert_eq!(of(&rows, PatternKind::StarShaped).len(), 1);
        let config = PatternsConfig {
            distinct_chunks: false,
            ..open()
        };
        let (rows, _) = mine_patterns(&edges, &config);
        assert_eq!(of(&rows, PatternKind::ChainedMultiHop).len(), 2);
    }

    #[test]
    fn rows_carry_aligned_ids_and_whether_they_span_reports() {
        let edges = vec![
            edge("a", "r", "b", "t1", "c1", "rep1"),
            edge("b", "r", "c", "t2", "c2", "rep2"),
        ];
        let (rows, _) = mine_patterns(&edges, &open());
        let chain = of(&rows, PatternKind::ChainedMultiHop)[0];
        assert_eq!(chain.triplet_ids, vec!["t1", "t2"]);
        assert_eq!(chain.chunk_ids, vec!["c1", "c2"]);
        assert_eq!(chain.report_ids, vec!["rep1", "rep2"]);
        assert!(chain.spans_reports);
        assert_eq!(chain.id, stable_id_of("chained_multi_hop", &["t1", "t2"]));
        // The same graph in another order gives the same rows.
        let mut reversed = edges.clone();
        reversed.reverse();
        assert_eq!(mine_patterns(&reversed, &open()).0, rows);
    }

    fn stable_id_of(pattern: &str, triplets: &[&str]) -> String {
        let mut parts = vec![pattern];
        parts.extend(triplets);
        noisebench_core::stable_id("pattern", &parts)
    }

    #[test]
    fn the_cap_keeps_a_seeded_stable_sample_and_counts_the_rest() {
        let pairs: Vec<(String, String)> = (0..40)
            .flat_map(|h| (0..4).map(move |t| (format!("h{h}"), format!("h{h}_t{t}"))))
            .collect();
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(h, t)| (h.as_str(), t.as_str()))
            .collect();
        let edges = graph(&pairs);
        let capped = PatternsConfig {
            patterns: vec![PatternKind::StarShaped],
            max_per_pattern: Some(25),
            ..PatternsConfig::default()
        };
        let (rows, facts) = mine_patterns(&edges, &capped);
        assert_eq!(rows.len(), 25);
        let c = &facts.patterns[0];
        assert_eq!((c.found, c.capped, c.kept), (40 * 11, 40 * 11 - 25, 25));
        assert_eq!(
            mine_patterns(&edges, &capped).0,
            rows,
            "same seed, same sample"
        );
        let other = PatternsConfig {
            seed: 7,
            ..capped.clone()
        };
        assert_ne!(
            mine_patterns(&edges, &other).0,
            rows,
            "another seed, another sample"
        );
        // Removing one head's edges removes its groups from the sample and keeps the others.
        let fewer: Vec<GraphEdge> = edges.iter().filter(|e| e.head != "h3").cloned().collect();
        let (after, _) = mine_patterns(&fewer, &capped);
        let before: BTreeMap<&str, &Pattern> = rows.iter().map(|p| (p.id.as_str(), p)).collect();
        let kept_before: Vec<&&Pattern> = before
            .values()
            .filter(|p| p.pivot_entities[0] != "h3")
            .collect();
        for p in kept_before {
            assert!(
                after.iter().any(|q| q.id == p.id),
                "{} left the sample",
                p.id
            );
        }
    }

    #[test]
    fn an_empty_graph_gives_an_empty_table_and_says_so() {
        let (rows, facts) = mine_patterns(&[], &PatternsConfig::default());
        assert!(rows.is_empty());
        let lines = facts.card_lines();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("no usable edges"), "{lines:?}");
        // Edges without triplets are left out and counted; the table is empty too.
        let mut bare = edge("a", "r", "b", "t1", "c1", "rep");
        bare.triplet_ids.clear();
        let (rows, facts) = mine_patterns(&[bare], &PatternsConfig::default());
        assert!(rows.is_empty());
        assert_eq!(facts.ignored_edges, 1);
        assert!(facts.card_lines()[0].contains("1 read"));
    }

    #[test]
    fn facts_read_like_table_7() {
        let edges = graph(&[("a", "b"), ("b", "c"), ("x", "y")]);
        let (_, facts) = mine_patterns(&edges, &PatternsConfig::default());
        let lines = facts.card_lines();
        assert_eq!(
            lines,
            vec![
                "Graph: 3 edges, 5 nodes; cap per pattern: 30000; distinct-chunk rule on.",
                "single_hop: 1 found, 0 dropped (shared chunk), 0 capped, 1 kept.",
                "chained_multi_hop: 1 found, 0 dropped (shared chunk), 0 capped, 1 kept.",
                "star_shaped: 0 found, 0 dropped (shared chunk), 0 capped, 0 kept.",
                "inverted_star_shaped: 0 found, 0 dropped (shared chunk), 0 capped, 0 kept.",
            ]
        );
    }

    #[test]
    fn configuration_is_checked_and_unknown_fields_refused() {
        let parsed: PatternsConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(parsed, PatternsConfig::default());
        assert_eq!(parsed.max_per_pattern, Some(30_000));
        let none: PatternsConfig =
            serde_json::from_value(serde_json::json!({ "max_per_pattern": null })).unwrap();
        assert_eq!(none.max_per_pattern, None);
        assert!(serde_json::from_value::<PatternsConfig>(serde_json::json!({ "cap": 3 })).is_err());
        let bad = |v: serde_json::Value| {
            serde_json::from_value::<PatternsConfig>(v)
                .unwrap()
                .check()
                .unwrap_err()
                .to_string()
        };
        assert!(
            bad(serde_json::json!({ "chain_edges": { "min": 2, "max": 4 } }))
                .contains("chain_edges")
        );
        assert!(
            bad(serde_json::json!({ "star_edges": { "min": 1, "max": 3 } })).contains("star_edges")
        );
        assert!(bad(serde_json::json!({ "star_leaves": 3 })).contains("star_leaves"));
        assert!(bad(serde_json::json!({ "patterns": [] })).contains("patterns"));
        assert!(bad(serde_json::json!({ "max_per_pattern": 0 })).contains("max_per_pattern"));
    }

    #[test]
    fn the_stage_reads_graph_edges_and_writes_patterns_with_facts() {
        // One chain and one single hop.
        let edges = graph(&[("a", "b"), ("b", "c"), ("x", "y")]);
        let mut tables = BTreeMap::new();
        tables.insert("graph_edges".to_string(), Rows::GraphEdges(edges));
        let ctx = StageContext {
            root: ".".into(),
            stage_dir: ".".into(),
            pipeline: "test".into(),
            stage_id: "patterns".into(),
            progress: Arc::new(NoProgress),
        };
        let out = PatternsStage
            .run(&PatternsConfig::default(), Inputs::new(tables), &ctx)
            .unwrap();
        assert_eq!((out.report.items_in, out.report.items_out), (3, 2));
        assert!(out.report.drops.is_empty());
        assert!(matches!(out.tables.get("patterns"), Some(Rows::Patterns(p)) if p.len() == 2));
        let facts = out.facts.unwrap();
        assert_eq!(facts.title, "Question patterns");
        assert_eq!(facts.data["patterns"][0]["kept"], 1);
        assert_eq!(facts.data["patterns"][1]["kept"], 1);
    }
}
