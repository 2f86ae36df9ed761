//! Facts about a labelling run for the dataset card: label, stance and source distributions,
//! conflicts, credibility sources, models and prompt versions, the share of human labels.

use std::collections::BTreeMap;

use noisebench_core::{ClaimDocumentLabel, Conflict, DocumentCredibility};
use serde::Serialize;

use crate::review::ReviewOutcome;

/// What the dataset card reports about labels (the labels stage's facts).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LabelFacts {
    pub pairs: usize,
    pub claims: usize,
    pub labels: BTreeMap<String, usize>,
    pub stances: BTreeMap<String, usize>,
    pub label_sources: BTreeMap<String, usize>,
    /// Share of label rows whose final label or stance came from a reviewer.
    pub human_share: f64,
    /// Rows whose document flipped the model's zero-context verdict.
    pub flipped: usize,
    pub model_conflicts: usize,
    pub human_conflicts: usize,
    pub exam_conflicts: usize,
    /// Documents by `credibility_source` (`table`, `generated`, `none`).
    pub credibility_sources: BTreeMap<String, usize>,
    /// Documents by credibility level (`none` when unknown).
    pub credibility: BTreeMap<String, usize>,
    /// Task -> `offline` or `openai:<model>`.
    pub models: BTreeMap<String, String>,
    /// Task -> prompt version (the offline rules' version for `offline`).
    pub prompt_versions: BTreeMap<String, String>,
    pub review: Option<ReviewOutcome>,
}

fn tally<'a>(values: impl Iterator<Item = Option<&'a str>>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for v in values {
        *m.entry(v.unwrap_or("none").to_string()).or_insert(0) += 1;
    }
    m
}

/// Count the facts. `tasks` is `(task, provenance, prompt version)` for each task used.
pub fn label_facts(
    labels: &[ClaimDocumentLabel],
    conflicts: &[Conflict],
    credibility: &[DocumentCredibility],
    tasks: &[(String, String, String)],
    review: Option<ReviewOutcome>,
) -> LabelFacts {
    let human = labels.iter().filter(|l| l.label_source == "human").count();
    LabelFacts {
        pairs: labels.len(),
        claims: conflicts.len(),
        labels: tally(labels.iter().map(|l| l.label.as_deref())),
        stances: tally(labels.iter().map(|l| l.stance.as_deref())),
        label_sources: tally(labels.iter().map(|l| Some(l.label_source.as_str()))),
        human_share: if labels.is_empty() {
            0.0
        } else {
            human as f64 / labels.len() as f64
        },
        flipped: labels.iter().filter(|l| l.flipped == Some(true)).count(),
        model_conflicts: conflicts.iter().filter(|c| c.model_conflict).count(),
        human_conflicts: conflicts
            .iter()
            .filter(|c| c.human_conflict == Some(true))
            .count(),
        exam_conflicts: conflicts.iter().filter(|c| c.exam_conflict).count(),
        credibility_sources: tally(credibility.iter().map(|c| c.credibility_source.as_deref())),
        credibility: tally(credibility.iter().map(|c| c.credibility.as_deref())),
        models: tasks
            .iter()
            .map(|(t, p, _)| (t.clone(), p.clone()))
            .collect(),
        prompt_versions: tasks
            .iter()
            .map(|(t, _, v)| (t.clone(), v.clone()))
            .collect(),
        review,
    }
}

/// `{"a": 1, "b": 2}` as `a: 1, b: 2`; `none` when empty.
fn listed<V: std::fmt::Display>(m: &BTreeMap<String, V>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl LabelFacts {
    /// The facts as the dataset card states them: how the labels were made.
    pub fn card_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!(
                "{} claim-document pairs over {} claims. Labels: {}. Stances (majority of three prompt variants): {}.",
                self.pairs,
                self.claims,
                listed(&self.labels),
                listed(&self.stances)
            ),
            format!(
                "Each pair's label is the model's exam verdict compared with the claim's gold verdict: agreeing is \
                 supporting, contradicting is misleading, undecided is irrelevant. Models per task: {}. Prompt versions: {}.",
                listed(&self.models),
                listed(&self.prompt_versions)
            ),
            format!(
                "Label sources: {}; share of labels set by human reviewers: {:.1}%.",
                listed(&self.label_sources),
                self.human_share * 100.0
            ),
            format!(
                "Conflicts: {} claims with both a supporting and a refuting stance from the model, {} from reviewers, \
                 {} with both a supporting and a misleading document. Documents that flipped the model's zero-context \
                 answer: {}.",
                self.model_conflicts, self.human_conflicts, self.exam_conflicts, self.flipped
            ),
            format!(
                "Source credibility: {} (from: {}).",
                listed(&self.credibility),
                listed(&self.credibility_sources)
            ),
        ];
        if let Some(r) = &self.review {
            let num = |v: Option<f64>| v.map_or("n/a".to_string(), |x| format!("{x:.3}"));
            let agreement = [
                ("model_vs_human_label", &r.model_vs_human_label),
                ("model_vs_human_stance", &r.model_vs_human_stance),
                ("reviewers_label", &r.reviewers_label),
                ("reviewers_stance", &r.reviewers_stance),
            ]
            .iter()
            .map(|(k, a)| {
                format!(
                    "{k} ({}, {}, {}, {})",
                    a.items,
                    num(a.observed),
                    num(a.cohen_kappa),
                    num(a.krippendorff_alpha)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
            lines.push(format!(
                "Human review: {} pairs reviewed, {} labels applied, {} left unresolved (reviewers disagree, no \
                 adjudication). Agreement (items, observed, Cohen's kappa, Krippendorff's alpha): {agreement}.",
                r.reviewed, r.applied, r.unresolved
            ));
        }
        lines
    }
}
