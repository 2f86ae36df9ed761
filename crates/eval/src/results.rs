//! An evaluation as table rows (`eval_predictions`, `metrics`), its printed table, and the
//! side-by-side comparison of two evaluations (`eval --compare`).

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::id::stable_id;
use noisebench_core::{Metric, Prediction};

use crate::metrics::{self, Bootstrap};
use crate::run::Evaluation;

/// `<model>` for the plain generator, `<model>+<system>` otherwise: the metrics' scope and
/// the results folder's name.
pub fn scope(model: &str, system: &str) -> String {
    if system == "plain" {
        model.to_string()
    } else {
        format!("{model}+{system}")
    }
}

/// A scope as a folder name: `openai:gpt-4o-mini` -> `openai-gpt-4o-mini`.
pub fn folder_name(scope: &str) -> String {
    scope
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+-._@".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The evaluation's per-item predictions and metrics as rows, in a stable order.
pub fn to_rows(e: &Evaluation) -> (Vec<Prediction>, Vec<Metric>) {
    let scope = scope(&e.model, &e.system);
    let mut predictions = Vec::new();
    let mut metrics = Vec::new();
    for o in &e.outcomes {
        for s in &o.scored {
            predictions.push(Prediction {
                id: stable_id(
                    "pred",
                    &[&e.benchmark, &s.task, &e.model, &e.system, &s.item_id],
                ),
                benchmark: e.benchmark.clone(),
                task: s.task.clone(),
                model: e.model.clone(),
                system: e.system.clone(),
                item_id: s.item_id.clone(),
                groups: s.groups.clone(),
                gold: s.gold.clone(),
                prompt_hash: s.prompt_hash.clone(),
                raw_answer: s.raw_answer.clone(),
                parsed_answer: s.parsed_answer.clone(),
                judged_by: s.judged_by.clone(),
                correct: s.correct,
                failure: s.failure.clone(),
                steps: s.steps.clone(),
            });
        }
        for m in &o.metrics {
            let k = m.k.map(|k| k.to_string()).unwrap_or_default();
            metrics.push(Metric {
                id: stable_id("metric", &[&scope, &m.task, &m.metric, &m.group, &k]),
                scope: scope.clone(),
                task: m.task.clone(),
                metric: m.metric.clone(),
                group: m.group.clone(),
                k: m.k.map(|k| k as i64),
                value: m.value,
                ci_low: m.ci.map(|c| c.0),
                ci_high: m.ci.map(|c| c.1),
                n: m.n as i64,
            });
        }
    }
    (predictions, metrics)
}

fn pct(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

/// Metrics shown in the printed table: every `all` group and retrieval at k = 1, 5, 10; the
/// per-group rows stay in `metrics.parquet`, except RARE-Met's per kind and domain.
fn shown(m: &Metric) -> bool {
    let grouped_robustness = m.metric == "robustness" && !m.group.starts_with("probe=");
    (m.group == "all" || grouped_robustness) && m.k.is_none_or(|k| [1, 5, 10].contains(&k))
}

/// The printed table: task, metric, group, k, value and interval (percent), n; then problems
/// and bad input rows.
pub fn render(e: &Evaluation) -> String {
    let (_, rows) = to_rows(e);
    let mut out = format!(
        "evaluation of {} on {} (system {})\n\n| task | metric | group | k | value % | 95% CI | n |\n|---|---|---|---|---|---|---|\n",
        e.model, e.benchmark, e.system
    );
    for m in rows.iter().filter(|m| shown(m)) {
        let ci = match (m.ci_low, m.ci_high) {
            (Some(l), Some(h)) => format!("[{}, {}]", pct(l), pct(h)),
            _ => "-".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            m.task,
            m.metric,
            m.group,
            m.k.map(|k| k.to_string()).unwrap_or_default(),
            pct(m.value),
            ci,
            m.n
        ));
    }
    let problems: Vec<String> = e
        .outcomes
        .iter()
        .filter(|o| !o.problems.is_empty())
        .map(|o| {
            let list: Vec<String> = o.problems.iter().map(|(r, n)| format!("{r} {n}")).collect();
            format!("  {}: {}", o.task, list.join(", "))
        })
        .collect();
    if !problems.is_empty() {
        out.push_str(&format!(
            "\nproblems (counted, scored wrong or unscored):\n{}\n",
            problems.join("\n")
        ));
    }
    if !e.bad_rows.is_empty() {
        let list: Vec<String> = e.bad_rows.iter().map(|(r, n)| format!("{r} {n}")).collect();
        out.push_str(&format!("input rows not used: {}\n", list.join(", ")));
    }
    for (family, why) in &e.skipped {
        out.push_str(&format!("{family}: not run ({why})\n"));
    }
    out
}

/// One line of `eval --compare`.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparisonRow {
    pub task: String,
    pub metric: String,
    pub group: String,
    pub k: Option<i64>,
    pub a: f64,
    pub b: f64,
    /// `b - a`.
    pub difference: f64,
    /// A paired bootstrap interval of the difference, over the items both runs scored, for
    /// accuracy and robustness; `None` for other metrics.
    pub ci: Option<(f64, f64)>,
    /// Items paired.
    pub paired: usize,
}

/// Whether a prediction counts in metric `m` (accuracy or robustness of a group).
fn counts_in(m: &Metric, p: &Prediction) -> bool {
    let group_ok = m.group == "all"
        || m.group
            .split_once('=')
            .is_some_and(|(k, v)| p.groups.get(k).map(String::as_str) == Some(v));
    if !group_ok {
        return false;
    }
    if crate::rare_met::SCORES.contains(&m.task.as_str()) {
        p.task == crate::rare_met::CELLS && crate::rare_met::in_score(&m.task, &p.groups)
    } else {
        p.task == m.task
    }
}

/// Two evaluations side by side: every metric both have, with `b - a` and, for accuracy and
/// robustness, a paired bootstrap interval over the items both scored.
pub fn compare(
    a: (&[Metric], &[Prediction]),
    b: (&[Metric], &[Prediction]),
    boot: Bootstrap,
) -> Vec<ComparisonRow> {
    type Key = (String, String, String, Option<i64>);
    let key = |m: &Metric| -> Key { (m.task.clone(), m.metric.clone(), m.group.clone(), m.k) };
    let b_metrics: BTreeMap<Key, &Metric> = b.0.iter().map(|m| (key(m), m)).collect();
    let score = |p: &Prediction| if p.correct == Some(true) { 1.0 } else { 0.0 };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for ma in a.0 {
        let k = key(ma);
        let Some(mb) = b_metrics.get(&k) else {
            continue;
        };
        if !seen.insert(k.clone()) {
            continue;
        }
        let (mut ci, mut paired) = (None, 0);
        if ma.metric == "accuracy" || ma.metric == "robustness" {
            let b_items: BTreeMap<(&str, &str), f64> =
                b.1.iter()
                    .filter(|p| counts_in(mb, p))
                    .map(|p| ((p.task.as_str(), p.item_id.as_str()), score(p)))
                    .collect();
            let (xs, ys): (Vec<f64>, Vec<f64>) =
                a.1.iter()
                    .filter(|p| counts_in(ma, p))
                    .filter_map(|p| {
                        b_items
                            .get(&(p.task.as_str(), p.item_id.as_str()))
                            .map(|y| (score(p), *y))
                    })
                    .unzip();
            paired = xs.len();
            ci = metrics::paired_difference_ci(&xs, &ys, boot);
        }
        out.push(ComparisonRow {
            task: k.0,
            metric: k.1,
            group: k.2,
            k: k.3,
            a: ma.value,
            b: mb.value,
            difference: mb.value - ma.value,
            ci,
            paired,
        });
    }
    out
}

/// The comparison as a table (percent).
pub fn render_comparison(a: &str, b: &str, rows: &[ComparisonRow]) -> String {
    let mut out = format!(
        "A = {a}\nB = {b}\n\n| task | metric | group | k | A % | B % | B - A | 95% CI (paired) | n |\n|---|---|---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        let keep = (r.group == "all" || r.metric == "robustness")
            && r.k.is_none_or(|k| [1, 5, 10].contains(&k));
        if !keep {
            continue;
        }
        let ci =
            r.ci.map(|(l, h)| format!("{}-{}", pct(l), pct(h)))
                .unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:+.1} | {} | {} |\n",
            r.task,
            r.metric,
            r.group,
            r.k.map(|k| k.to_string()).unwrap_or_default(),
            pct(r.a),
            pct(r.b),
            r.difference * 100.0,
            ci,
            r.paired
        ));
    }
    out
}
