//! The knowledge graph between triplets and questions: canonical entities, the aliases merged
//! into them, the merged graph's edges, and the patterns mined from it.
//!
//! Each table has one producer: `graph` writes entities, aliases and edges; `patterns` writes
//! patterns. Later stages refer to rows by id and never rewrite them.

use serde::{Deserialize, Serialize};

use crate::schema::Record;
use crate::schema::{Column, DType::*, TableSchema};

/// A canonical entity of the merged graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    pub id: String,
    pub name: String,
    pub report_ids: Vec<String>,
    pub triplets: i64,
}

impl Record for Entity {
    fn schema() -> TableSchema {
        TableSchema {
            table: "entities".into(),
            version: 1,
            description: "Canonical entities of the merged knowledge graph.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from the canonical name."),
                Column::new("name", Str, "The canonical name every alias maps to."),
                Column::new("report_ids", StrList, "Reports whose triplets name it."),
                Column::new("triplets", Int, "Triplets naming it, as head or tail."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// One merge decided while building the graph: an entity or relation surface form mapped to
/// its canonical form, and by which rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Alias {
    pub id: String,
    pub kind: String,
    pub alias: String,
    pub canonical: String,
    pub rule: String,
    pub score: Option<f64>,
    pub report_id: Option<String>,
}

impl Record for Alias {
    fn schema() -> TableSchema {
        TableSchema {
            table: "aliases".into(),
            version: 1,
            description:
                "Entity and relation merges: alias, canonical form, rule and score, for review."
                    .into(),
            columns: vec![
                Column::new(
                    "id",
                    Str,
                    "Stable id from kind, alias, canonical form and report.",
                ),
                Column::new("kind", Str, "`entity` or `relation`."),
                Column::new("alias", Str, "The surface form as extracted."),
                Column::new("canonical", Str, "The form it was merged into."),
                Column::new(
                    "rule",
                    Str,
                    "Why: `normalised` (case, punctuation), `suffix` (Inc., Corp. ...), `filer` (\"the Company\"), `abbreviation`, `embedding`.",
                ),
                Column::nullable("score", Float, "Cosine similarity for `embedding` merges."),
                Column::nullable(
                    "report_id",
                    Str,
                    "The report the merge holds in (filer and abbreviation rules are per report).",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// An edge of the merged graph: canonical head, relation and tail, with the triplets behind it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphEdge {
    pub id: String,
    pub head: String,
    pub relation: String,
    pub tail: String,
    pub triplet_ids: Vec<String>,
    pub chunk_ids: Vec<String>,
    pub report_ids: Vec<String>,
}

impl Record for GraphEdge {
    fn schema() -> TableSchema {
        TableSchema {
            table: "graph_edges".into(),
            version: 1,
            description: "Edges of the merged cross-report knowledge graph.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from head, relation and tail."),
                Column::new("head", Str, "Canonical head entity (an `entities` name)."),
                Column::new("relation", Str, "Canonical relation."),
                Column::new("tail", Str, "Canonical tail entity."),
                Column::new(
                    "triplet_ids",
                    StrList,
                    "Triplets merged into this edge, sorted by id.",
                ),
                Column::new(
                    "chunk_ids",
                    StrList,
                    "The chunk of each triplet, aligned with `triplet_ids`.",
                ),
                Column::new(
                    "report_ids",
                    StrList,
                    "The report of each triplet, aligned with `triplet_ids`.",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A group of edges matching one of the four question patterns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    pub id: String,
    pub pattern: String,
    pub edge_ids: Vec<String>,
    pub triplet_ids: Vec<String>,
    pub chunk_ids: Vec<String>,
    pub report_ids: Vec<String>,
    pub pivot_entities: Vec<String>,
    pub spans_reports: bool,
}

impl Record for Pattern {
    fn schema() -> TableSchema {
        TableSchema {
            table: "patterns".into(),
            version: 1,
            description: "Graph patterns questions are generated from: single-hop edges, chains, stars, inverted stars.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from the pattern and its sorted triplet ids."),
                Column::new(
                    "pattern",
                    Str,
                    "single_hop, chained_multi_hop, star_shaped or inverted_star_shaped.",
                ),
                Column::new("edge_ids", StrList, "The graph edges of the group, in pattern order."),
                Column::new("triplet_ids", StrList, "One triplet per edge, in pattern order."),
                Column::new("chunk_ids", StrList, "The chunks of those triplets."),
                Column::new("report_ids", StrList, "The reports of those chunks."),
                Column::new(
                    "pivot_entities",
                    StrList,
                    "Entities a multi-hop question must name only indirectly (chain: inner entities; star: the head; inverted star: the shared tail); empty for single-hop.",
                ),
                Column::new("spans_reports", Bool, "The group's triplets come from more than one report."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}
