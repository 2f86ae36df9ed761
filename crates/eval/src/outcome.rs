//! What a task returns: every item scored (the future `eval_predictions` rows), its metrics with
//! intervals (the future `metrics` rows), and counted problems (empty, refusing, out-of-scope or
//! rambling answers, failed calls), so nothing is dropped without a reason.

use std::collections::BTreeMap;

use noisebench_llm::LlmError;
use serde::{Deserialize, Serialize};

use crate::generate::Generated;
use crate::metrics::{self, Bootstrap};

/// One item of one task, answered and scored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub task: String,
    /// The claim, question, passage-claim pair or perturbation asked about; unique within a task.
    pub item_id: String,
    /// What the item's metrics are grouped by (`kind`, `domain`, `label`, `probe`, `query`,
    /// `document`, ...).
    pub groups: BTreeMap<String, String>,
    /// The gold answer.
    pub gold: String,
    /// The final reply as received; empty when the call failed.
    pub raw_answer: String,
    /// The answer found in the reply; `None` if none (out of scope, refusal, failure).
    pub parsed_answer: Option<String>,
    pub prompt_hash: String,
    /// `exact`, `inclusive`, `rule:<name>`, `refusal`, `llm:<model>`, `offline`, or `failed`.
    pub judged_by: String,
    /// Whether the task's rule scores it correct; `None` when the call failed.
    pub correct: Option<bool>,
    /// Why the item has no answer: the LLM error's reason.
    pub failure: Option<String>,
    /// What a multi-step system did.
    pub steps: Vec<String>,
}

impl Scored {
    /// An item whose generator call failed: unscored, with the error's reason.
    pub fn failed(task: &str, item_id: &str, gold: &str, e: &LlmError) -> Scored {
        Scored {
            task: task.into(),
            item_id: item_id.into(),
            gold: gold.into(),
            judged_by: "failed".into(),
            failure: Some(format!("llm_{}", e.reason())),
            ..Default::default()
        }
    }

    /// A scored item from a generator's answer.
    pub fn answered(task: &str, item_id: &str, gold: &str, g: &Generated) -> Scored {
        Scored {
            task: task.into(),
            item_id: item_id.into(),
            gold: gold.into(),
            raw_answer: g.raw.clone(),
            prompt_hash: g.prompt_hash.clone(),
            steps: g.steps.clone(),
            ..Default::default()
        }
    }

    pub fn with_group(mut self, key: &str, value: impl Into<String>) -> Scored {
        self.groups.insert(key.into(), value.into());
        self
    }

    /// 1.0 when correct, else 0.0 (an unscored item counts as wrong).
    pub fn score(&self) -> f64 {
        if self.correct == Some(true) { 1.0 } else { 0.0 }
    }
}

/// One metric value of a task, for one group of items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    pub task: String,
    /// `accuracy`, `macro_f1`, `precision`, `recall`, `ndcg`, `ndcg_graded`,
    /// `misleading_retrieval_recall`, `robustness`, `absolute_drop`, `relative_drop`, ...
    pub metric: String,
    /// `all`, or `<key>=<value>` of a group (`kind=star_shaped`).
    pub group: String,
    pub k: Option<usize>,
    pub value: f64,
    /// The 95% bootstrap interval.
    pub ci: Option<(f64, f64)>,
    /// Items measured.
    pub n: usize,
}

/// Everything one task produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskOutcome {
    pub task: String,
    pub scored: Vec<Scored>,
    pub metrics: Vec<MetricValue>,
    /// Counted problems by reason (`empty_answer`, `refusal`, `out_of_scope`, `rambling`,
    /// `llm_<reason>`, `no_items`, ...).
    pub problems: BTreeMap<String, usize>,
}

impl TaskOutcome {
    pub fn new(task: &str) -> TaskOutcome {
        TaskOutcome {
            task: task.into(),
            ..Default::default()
        }
    }

    pub fn problem(&mut self, reason: &str) {
        *self.problems.entry(reason.into()).or_insert(0) += 1;
    }

    /// Accuracy over `scored`, overall and per value of each group key in `by`, with intervals.
    pub(crate) fn add_accuracy(&mut self, by: &[&str], b: Bootstrap) {
        let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for s in &self.scored {
            groups.entry("all".into()).or_default().push(s.score());
            for key in by {
                if let Some(v) = s.groups.get(*key) {
                    groups
                        .entry(format!("{key}={v}"))
                        .or_default()
                        .push(s.score());
                }
            }
        }
        for (group, values) in groups {
            self.metrics.push(MetricValue {
                task: self.task.clone(),
                metric: "accuracy".into(),
                group,
                k: None,
                value: metrics::mean(&values),
                ci: metrics::mean_ci(&values, b),
                n: values.len(),
            });
        }
    }

    /// Macro-F1 over binary gold answers (`gold_yes` is the gold string of the `true` class)
    /// with its interval.
    pub(crate) fn add_macro_f1(&mut self, gold_yes: &str, b: Bootstrap) {
        let gold: Vec<bool> = self.scored.iter().map(|s| s.gold == gold_yes).collect();
        let pred: Vec<Option<bool>> = self
            .scored
            .iter()
            .map(|s| s.parsed_answer.as_deref().map(|p| p == gold_yes))
            .collect();
        if gold.is_empty() {
            return;
        }
        let value = metrics::macro_f1(&gold, &pred);
        let ci = metrics::bootstrap_ci(gold.len(), b, |idx| {
            let g: Vec<bool> = idx.iter().map(|&i| gold[i]).collect();
            let p: Vec<Option<bool>> = idx.iter().map(|&i| pred[i]).collect();
            metrics::macro_f1(&g, &p)
        });
        self.metrics.push(MetricValue {
            task: self.task.clone(),
            metric: "macro_f1".into(),
            group: "all".into(),
            k: None,
            value,
            ci,
            n: gold.len(),
        });
    }

    /// The overall value of `metric` (group `all`, no k), if computed.
    pub fn overall(&self, metric: &str) -> Option<&MetricValue> {
        self.metrics
            .iter()
            .find(|m| m.metric == metric && m.group == "all" && m.k.is_none())
    }
}
