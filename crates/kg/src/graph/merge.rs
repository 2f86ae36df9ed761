//! Per-report graphs and their merge into one cross-report graph (petgraph).
//!
//! A report's graph holds its canonical `(head, relation, tail)` edges with the triplets behind
//! each. Merging adds them to the cross-report graph: one node per canonical entity name, one edge
//! per distinct `(head, relation, tail)`, the triplets of every report that states it merged into
//! that edge. Merging in any order gives the same rows, since rows are read out sorted.

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::{Entity, GraphEdge, stable_id};
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};

/// A triplet as an edge remembers it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TripletRef {
    pub triplet_id: String,
    pub chunk_id: String,
    pub report_id: String,
}

/// Canonical `(head, relation, tail)`.
pub type EdgeKey = (String, String, String);

/// One report's graph.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportGraph {
    pub report_id: String,
    pub edges: BTreeMap<EdgeKey, Vec<TripletRef>>,
}

impl ReportGraph {
    pub fn new(report_id: impl Into<String>) -> Self {
        Self {
            report_id: report_id.into(),
            edges: BTreeMap::new(),
        }
    }

    pub fn add(&mut self, head: &str, relation: &str, tail: &str, triplet: TripletRef) {
        self.edges
            .entry((head.into(), relation.into(), tail.into()))
            .or_default()
            .push(triplet);
    }
}

/// An edge of the merged graph: its relation and the triplets merged into it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EdgeData {
    pub relation: String,
    pub triplets: Vec<TripletRef>,
}

/// The cross-report graph: nodes are canonical entity names.
#[derive(Debug, Clone, Default)]
pub struct KnowledgeGraph {
    graph: DiGraph<String, EdgeData>,
    nodes: BTreeMap<String, NodeIndex>,
    edges: BTreeMap<EdgeKey, EdgeIndex>,
}

impl KnowledgeGraph {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a report's graph: its entities become (or join) nodes, its edges become (or join)
    /// edges.
    pub fn merge(&mut self, report: ReportGraph) {
        for ((head, relation, tail), triplets) in report.edges {
            let h = self.node(&head);
            let t = self.node(&tail);
            let key = (head, relation, tail);
            match self.edges.get(&key) {
                Some(&e) => self.graph[e].triplets.extend(triplets),
                None => {
                    let e = self.graph.add_edge(
                        h,
                        t,
                        EdgeData {
                            relation: key.1.clone(),
                            triplets,
                        },
                    );
                    self.edges.insert(key, e);
                }
            }
        }
    }

    fn node(&mut self, name: &str) -> NodeIndex {
        if let Some(&n) = self.nodes.get(name) {
            return n;
        }
        let n = self.graph.add_node(name.to_string());
        self.nodes.insert(name.to_string(), n);
        n
    }

    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// The petgraph graph (node weights are entity names).
    pub fn graph(&self) -> &DiGraph<String, EdgeData> {
        &self.graph
    }

    /// Edge rows, sorted by head, relation and tail; each edge's triplets sorted by id with
    /// their chunks and reports aligned.
    pub(crate) fn edge_rows(&self) -> Vec<GraphEdge> {
        self.edges
            .iter()
            .map(|((head, relation, tail), &e)| {
                let mut triplets = self.graph[e].triplets.clone();
                triplets.sort();
                triplets.dedup();
                GraphEdge {
                    id: stable_id("edge", &[head, relation, tail]),
                    head: head.clone(),
                    relation: relation.clone(),
                    tail: tail.clone(),
                    triplet_ids: triplets.iter().map(|t| t.triplet_id.clone()).collect(),
                    chunk_ids: triplets.iter().map(|t| t.chunk_id.clone()).collect(),
                    report_ids: triplets.iter().map(|t| t.report_id.clone()).collect(),
                }
            })
            .collect()
    }

    /// Entity rows, sorted by name: the reports naming each and its triplets as head or tail.
    pub(crate) fn entity_rows(&self) -> Vec<Entity> {
        let mut reports: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut triplets: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for ((head, _, tail), &e) in &self.edges {
            for t in &self.graph[e].triplets {
                for name in [head, tail] {
                    reports.entry(name).or_default().insert(&t.report_id);
                    triplets.entry(name).or_default().insert(&t.triplet_id);
                }
            }
        }
        self.nodes
            .keys()
            .map(|name| Entity {
                id: stable_id("ent", &[name]),
                name: name.clone(),
                report_ids: reports
                    .get(name.as_str())
                    .map(|r| r.iter().map(|s| s.to_string()).collect())
                    .unwrap_or_default(),
                triplets: triplets.get(name.as_str()).map_or(0, |t| t.len() as i64),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: &str, chunk: &str, report: &str) -> TripletRef {
        TripletRef {
            triplet_id: id.into(),
            chunk_id: chunk.into(),
            report_id: report.into(),
        }
    }

    #[test]
    fn an_entity_in_two_reports_is_one_node_and_a_shared_edge_one_edge() {
        let mut a = ReportGraph::new("r1");
        a.add("Acme", "acquired", "Widget", t("t2", "c1", "r1"));
        a.add("Acme", "reported", "revenue", t("t1", "c1", "r1"));
        let mut b = ReportGraph::new("r2");
        b.add("Acme", "acquired", "Widget", t("t0", "c9", "r2"));
        b.add("Widget", "sells", "gears", t("t3", "c8", "r2"));
        let mut g = KnowledgeGraph::new();
        g.merge(a.clone());
        g.merge(b.clone());
        assert_eq!(g.node_count(), 4);
        assert_eq!(g.edge_count(), 3);
        let edges = g.edge_rows();
        let shared = edges.iter().find(|e| e.relation == "acquired").unwrap();
        assert_eq!(shared.triplet_ids, ["t0", "t2"]);
        assert_eq!(shared.chunk_ids, ["c9", "c1"]);
        assert_eq!(shared.report_ids, ["r2", "r1"]);
        let entities = g.entity_rows();
        let acme = entities.iter().find(|e| e.name == "Acme").unwrap();
        assert_eq!(acme.report_ids, ["r1", "r2"]);
        assert_eq!(acme.triplets, 3);
        assert_eq!(acme.id, stable_id("ent", &["Acme"]));

        // The merge order does not change the rows.
        let mut other = KnowledgeGraph::new();
        other.merge(b);
        other.merge(a);
        assert_eq!(other.edge_rows(), edges);
        assert_eq!(other.entity_rows(), entities);
    }
}
