//! What retrieval and evaluation decide about questions and claims: retrieval results, model
//! predictions and metrics. Kept apart from the generated rows they judge, so a new retriever or
//! model adds rows here and never rewrites a question or a perturbation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::Record;
use crate::schema::{Column, DType::*, TableSchema};

/// One result of a retriever for one query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Retrieval {
    pub id: String,
    pub question_id: String,
    pub query_id: String,
    pub retriever: String,
    pub chunk_id: String,
    pub rank: i64,
    pub score: f64,
    pub ground_truth: bool,
}

impl Record for Retrieval {
    fn schema() -> TableSchema {
        TableSchema {
            table: "retrievals".into(),
            version: 1,
            description: "Retrieval results per query and retriever, over all chunks.".into(),
            columns: vec![
                Column::new(
                    "id",
                    Str,
                    "Stable id from query id, retriever and chunk id.",
                ),
                Column::new("question_id", Str, "The question the query asks."),
                Column::new(
                    "query_id",
                    Str,
                    "The question's id for its original query, or a `query_perturbations` id.",
                ),
                Column::new("retriever", Str, "e.g. `bm25`, `embedding:<model>`."),
                Column::new("chunk_id", Str, "The chunk retrieved."),
                Column::new("rank", Int, "1-based rank."),
                Column::new("score", Float, "The retriever's score."),
                Column::new(
                    "ground_truth",
                    Bool,
                    "The chunk is one of the question's answer chunks.",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A model's answer to one evaluation item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub id: String,
    pub benchmark: String,
    pub task: String,
    pub model: String,
    pub system: String,
    pub item_id: String,
    pub groups: BTreeMap<String, String>,
    pub gold: String,
    pub prompt_hash: String,
    pub raw_answer: String,
    pub parsed_answer: Option<String>,
    pub judged_by: String,
    pub correct: Option<bool>,
    pub failure: Option<String>,
    pub steps: Vec<String>,
}

impl Record for Prediction {
    fn schema() -> TableSchema {
        TableSchema {
            table: "eval_predictions".into(),
            version: 2,
            description: "Per-item model answers of an evaluation run, parsed and judged.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from benchmark, task, model and item."),
                Column::new(
                    "benchmark",
                    Str,
                    "The dataset or snapshot evaluated (name and version).",
                ),
                Column::new(
                    "task",
                    Str,
                    "The evaluation task, e.g. `raguard_oracle`, `rare_query_robustness`.",
                ),
                Column::new("model", Str, "`<backend>:<model>` of the model evaluated."),
                Column::new(
                    "system",
                    Str,
                    "What answered around the model: `plain`, `astute`, `counterrefine`.",
                ),
                Column::new(
                    "item_id",
                    Str,
                    "The claim, question or perturbation asked about.",
                ),
                Column::new(
                    "groups",
                    Json,
                    "What the item's metrics are grouped by (`kind`, `domain`, `label`, `probe`, `query`, `document`).",
                ),
                Column::new("gold", Str, "The gold answer."),
                Column::new(
                    "prompt_hash",
                    Str,
                    "sha256 of the request (the LLM cache key).",
                ),
                Column::new("raw_answer", Str, "The model's reply as received."),
                Column::nullable(
                    "parsed_answer",
                    Str,
                    "The answer found in the reply; null if none.",
                ),
                Column::new(
                    "judged_by",
                    Str,
                    "`exact`, `inclusive`, `refusal`, `empty`, `rule:<name>`, `llm:<model>` or `failed`.",
                ),
                Column::nullable(
                    "correct",
                    Bool,
                    "Whether the task's rule scores it correct; null if unscored.",
                ),
                Column::nullable(
                    "failure",
                    Str,
                    "Why the item has no answer (`llm_<reason>`); null when answered.",
                ),
                Column::new(
                    "steps",
                    StrList,
                    "What a multi-step system did (`draft`, `refine:keep`, `revision_rejected:<rule>`).",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// One metric of a stage or an evaluation run, for one group of items.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub id: String,
    pub scope: String,
    pub task: String,
    pub metric: String,
    pub group: String,
    pub k: Option<i64>,
    pub value: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub n: i64,
}

impl Record for Metric {
    fn schema() -> TableSchema {
        TableSchema {
            table: "metrics".into(),
            version: 1,
            description:
                "Metrics with their groups and confidence intervals (retrieval, evaluation).".into(),
            columns: vec![
                Column::new(
                    "id",
                    Str,
                    "Stable id from scope, task, metric, group and k.",
                ),
                Column::new(
                    "scope",
                    Str,
                    "What was measured: a retriever, or `<backend>:<model>`.",
                ),
                Column::new("task", Str, "The task or stage the metric belongs to."),
                Column::new(
                    "metric",
                    Str,
                    "e.g. `accuracy`, `macro_f1`, `recall`, `mrr`, `ndcg`.",
                ),
                Column::new(
                    "group",
                    Str,
                    "`all`, or the pattern kind, domain or label measured.",
                ),
                Column::nullable("k", Int, "Cut-off for @k metrics."),
                Column::new("value", Float, "The metric."),
                Column::nullable("ci_low", Float, "95% bootstrap interval, lower bound."),
                Column::nullable("ci_high", Float, "95% bootstrap interval, upper bound."),
                Column::new("n", Int, "Items measured."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}
