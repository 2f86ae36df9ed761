//! The page's aggregates from a version's typed rows: pure functions, no files ([`crate::read`]
//! reads the rows of a published version and hands them here).

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::{
    Alias, Chunk, Claim, ClaimDocument, ClaimDocumentLabel, Document, DocumentCredibility,
    DocumentPerturbation, Entity, Metric, Pattern, Query, QueryPerturbation, Question,
    QuestionJudgement, QuestionSplit, Report, Retrieval, Triplet,
};

use crate::{EvalRow, Graph, MetricRow, ReportData};

/// The rows of a version's tables the page shows (empty for a table the version does not
/// publish).
#[derive(Debug, Clone, Default)]
pub(crate) struct VersionRows {
    pub claims: Vec<Claim>,
    pub labels: Vec<ClaimDocumentLabel>,
    pub claim_documents: Vec<ClaimDocument>,
    pub documents: Vec<Document>,
    pub credibility: Vec<DocumentCredibility>,
    pub queries: Vec<Query>,
    /// Each report's id and domain; no other field is read (the page shows no report text).
    pub reports: Vec<Report>,
    pub chunks: Vec<Chunk>,
    pub triplets: Vec<Triplet>,
    pub entities: Vec<Entity>,
    pub aliases: Vec<Alias>,
    pub patterns: Vec<Pattern>,
    pub question_splits: Vec<QuestionSplit>,
    pub questions: Vec<Question>,
    pub judgements: Vec<QuestionJudgement>,
    pub query_perturbations: Vec<QueryPerturbation>,
    /// Each document perturbation's kind and similarity, the whole table.
    pub document_perturbation_kinds: Vec<(String, Option<f64>)>,
    /// The rows of `document_perturbations` and `retrievals` for the sampled questions only
    /// (what the items show): the rest is never decoded.
    pub document_perturbations: Vec<DocumentPerturbation>,
    pub retrievals: Vec<Retrieval>,
    /// The `retrieval_metrics` table.
    pub metrics: Vec<Metric>,
}

/// What the triplets and graph stages recorded about their run (the manifest's stage facts).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct GraphFacts {
    /// The triplets stage's `grounding_rate`.
    pub grounding_rate: Option<f64>,
    /// The graph stage's `relations_before` and `relations_after`.
    pub relations_before_after: Option<(i64, i64)>,
}

/// Fill the table aggregates of `data` (every field but the overview, stages, evaluation
/// results, changes and samples) from `rows`.
pub(crate) fn aggregate(data: &mut ReportData, rows: &VersionRows, facts: GraphFacts) {
    claims_track(data, rows);
    data.chunk_tokens = rows.chunks.iter().map(|c| c.token_count as f64).collect();
    data.graph = graph(rows, facts);
    data.patterns = pattern_domains(&rows.reports, &rows.patterns);
    questions_track(data, rows);
    perturbations(
        data,
        &rows.query_perturbations,
        &rows.document_perturbation_kinds,
    );
    data.retrieval = rows
        .metrics
        .iter()
        .map(|m| MetricRow {
            scope: m.scope.clone(),
            group: m.group.clone(),
            metric: m.metric.clone(),
            k: m.k,
            value: m.value,
            n: m.n,
        })
        .collect();
}

/// The claims track's figures: labels by verdict, documents per claim, document length,
/// credibility and source types.
fn claims_track(data: &mut ReportData, rows: &VersionRows) {
    let verdicts: BTreeMap<&str, &str> = rows
        .claims
        .iter()
        .map(|c| (c.id.as_str(), c.verdict.as_str()))
        .collect();
    for l in &rows.labels {
        let verdict = verdicts
            .get(l.claim_id.as_str())
            .copied()
            .unwrap_or("unknown");
        let label = l.label.as_deref().unwrap_or("unlabelled");
        *data
            .labels
            .entry(verdict.to_string())
            .or_default()
            .entry(label.to_string())
            .or_default() += 1;
    }
    let mut per_claim: BTreeMap<&str, u64> =
        rows.claims.iter().map(|c| (c.id.as_str(), 0)).collect();
    for cd in &rows.claim_documents {
        if let Some(n) = per_claim.get_mut(cd.claim_id.as_str()) {
            *n += 1;
        }
    }
    data.documents_per_claim = per_claim.values().map(|n| *n as f64).collect();
    data.document_words = rows
        .documents
        .iter()
        .map(|d| d.text.split_whitespace().count() as f64)
        .collect();
    for c in &rows.credibility {
        let level = c.credibility.as_deref().unwrap_or("none");
        *data.credibility.entry(level.to_string()).or_default() += 1;
        *data.source_types.entry(c.source_type.clone()).or_default() += 1;
    }
    // Without the labels stage's settled source types, the documents' own.
    if rows.credibility.is_empty() {
        for d in &rows.documents {
            *data.source_types.entry(d.source_type.clone()).or_default() += 1;
        }
    }
}

/// The graph's figures: triplets per report, grounding, relation merging, entities, aliases.
fn graph(rows: &VersionRows, facts: GraphFacts) -> Graph {
    let mut graph = Graph {
        grounding_rate: facts.grounding_rate,
        relations_before_after: facts.relations_before_after,
        entities: rows.entities.len() as u64,
        cross_report_entities: rows
            .entities
            .iter()
            .filter(|e| e.report_ids.len() > 1)
            .count() as u64,
        ..Default::default()
    };
    for t in &rows.triplets {
        *graph
            .triplets_per_report
            .entry(t.report_id.clone())
            .or_default() += 1;
    }
    for a in &rows.aliases {
        *graph
            .aliases
            .entry(a.kind.clone())
            .or_default()
            .entry(a.rule.clone())
            .or_default() += 1;
    }
    graph
}

/// Patterns by kind and by the domain of their reports (`mixed` across domains, `unknown` for
/// a report the version does not hold).
fn pattern_domains(
    reports: &[Report],
    patterns: &[Pattern],
) -> BTreeMap<String, BTreeMap<String, u64>> {
    let domains: BTreeMap<&str, &str> = reports
        .iter()
        .map(|r| (r.id.as_str(), r.domain.as_str()))
        .collect();
    let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for p in patterns {
        let of: BTreeSet<&str> = p
            .report_ids
            .iter()
            .map(|r| domains.get(r.as_str()).copied().unwrap_or("unknown"))
            .collect();
        let domain = match of.len() {
            0 => "unknown",
            1 => of.first().copied().unwrap_or("unknown"),
            _ => "mixed",
        };
        *counts
            .entry(p.pattern.clone())
            .or_default()
            .entry(domain.to_string())
            .or_default() += 1;
    }
    counts
}

/// Questions by kind and split, and the judge's scores.
fn questions_track(data: &mut ReportData, rows: &VersionRows) {
    let splits: BTreeMap<&str, &str> = rows
        .question_splits
        .iter()
        .map(|s| (s.question_id.as_str(), s.split.as_str()))
        .collect();
    for q in &rows.questions {
        let split = splits.get(q.id.as_str()).copied().unwrap_or("unsplit");
        *data
            .questions
            .entry(q.kind.clone())
            .or_default()
            .entry(split.to_string())
            .or_default() += 1;
    }
    for j in &rows.judgements {
        let scores = [
            ("clarity", Some(j.clarity)),
            ("correctness", Some(j.correctness)),
            ("reasonableness", j.reasonableness),
        ];
        for (dimension, score) in scores {
            if let Some(score) = score {
                *data
                    .judge_scores
                    .entry(dimension.to_string())
                    .or_default()
                    .entry(score)
                    .or_default() += 1;
            }
        }
    }
}

/// The perturbations' kinds and similarities.
fn perturbations(
    data: &mut ReportData,
    query_perturbations: &[QueryPerturbation],
    document_perturbations: &[(String, Option<f64>)],
) {
    for q in query_perturbations {
        data.query_similarity.push(q.similarity);
        *data
            .query_perturbation_kinds
            .entry(q.kind.clone())
            .or_default() += 1;
    }
    for (kind, similarity) in document_perturbations {
        data.document_similarity.extend(*similarity);
        *data
            .document_perturbation_kinds
            .entry(kind.clone())
            .or_default() += 1;
    }
}

/// The evaluation metrics the page shows: accuracy and robustness over all items.
const EVAL_METRICS: [&str; 2] = ["accuracy", "robustness"];

/// The rows of evaluation run `run` the page shows: [`EVAL_METRICS`] of group `all`.
pub(crate) fn eval_rows(run: &str, metrics: Vec<Metric>) -> impl Iterator<Item = EvalRow> + '_ {
    metrics
        .into_iter()
        .filter(|m| m.group == "all" && EVAL_METRICS.contains(&m.metric.as_str()))
        .map(move |m| EvalRow {
            run: run.to_string(),
            task: m.task,
            metric: m.metric,
            value: m.value,
            ci: m.ci_low.zip(m.ci_high),
            n: m.n,
        })
}

#[cfg(test)]
mod tests {
    use noisebench_core::*;

    use super::*;

    fn claim(id: &str, verdict: &str) -> Claim {
        Claim {
            id: id.into(),
            verdict: verdict.into(),
            ..Default::default()
        }
    }

    fn label(claim_id: &str, label: Option<&str>) -> ClaimDocumentLabel {
        ClaimDocumentLabel {
            claim_id: claim_id.into(),
            label: label.map(Into::into),
            ..Default::default()
        }
    }

    fn link(claim_id: &str) -> ClaimDocument {
        ClaimDocument {
            claim_id: claim_id.into(),
            ..Default::default()
        }
    }

    fn counts<const N: usize>(pairs: [(&str, u64); N]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    }

    #[test]
    fn the_claims_track_counts_labels_by_verdict_and_documents_per_claim() {
        let rows = VersionRows {
            claims: vec![claim("c1", "false"), claim("c2", "true")],
            labels: vec![
                label("c1", Some("misleading")),
                label("c1", Some("misleading")),
                label("c1", None),
                label("c2", Some("supporting")),
                // a pair whose claim the version does not hold
                label("c9", Some("irrelevant")),
            ],
            // c1 has two documents, c2 none; a link to an unknown claim counts for nobody
            claim_documents: vec![link("c1"), link("c1"), link("c9")],
            documents: vec![
                Document {
                    text: "three short words".into(),
                    source_type: "news".into(),
                    ..Default::default()
                },
                Document {
                    text: "  one  ".into(),
                    source_type: "blog".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let mut data = ReportData::default();
        aggregate(&mut data, &rows, GraphFacts::default());
        assert_eq!(
            data.labels["false"],
            counts([("misleading", 2), ("unlabelled", 1)])
        );
        assert_eq!(data.labels["true"], counts([("supporting", 1)]));
        assert_eq!(data.labels["unknown"], counts([("irrelevant", 1)]));
        // claims in id order: c1, c2
        assert_eq!(data.documents_per_claim, vec![2.0, 0.0]);
        assert_eq!(data.document_words, vec![3.0, 1.0]);
        // no credibility table: the documents' own source types
        assert!(data.credibility.is_empty());
        assert_eq!(data.source_types, counts([("blog", 1), ("news", 1)]));
    }

    #[test]
    fn credibility_rows_settle_the_source_types() {
        let rated = |level: Option<&str>, source_type: &str| DocumentCredibility {
            credibility: level.map(Into::into),
            source_type: source_type.into(),
            ..Default::default()
        };
        let rows = VersionRows {
            documents: vec![Document {
                source_type: "blog".into(),
                ..Default::default()
            }],
            credibility: vec![
                rated(Some("high"), "news"),
                rated(None, "news"),
                rated(Some("high"), "government"),
            ],
            ..Default::default()
        };
        let mut data = ReportData::default();
        aggregate(&mut data, &rows, GraphFacts::default());
        assert_eq!(data.credibility, counts([("high", 2), ("none", 1)]));
        assert_eq!(data.source_types, counts([("government", 1), ("news", 2)]));
    }

    #[test]
    fn the_graph_counts_triplets_entities_and_aliases_and_keeps_the_stage_facts() {
        let triplet = |report: &str| Triplet {
            report_id: report.into(),
            ..Default::default()
        };
        let entity = |reports: &[&str]| Entity {
            report_ids: reports.iter().map(|r| r.to_string()).collect(),
            ..Default::default()
        };
        let alias = |kind: &str, rule: &str| Alias {
            kind: kind.into(),
            rule: rule.into(),
            ..Default::default()
        };
        let rows = VersionRows {
            triplets: vec![triplet("r1"), triplet("r2"), triplet("r1")],
            entities: vec![entity(&["r1"]), entity(&["r1", "r2"]), entity(&[])],
            aliases: vec![
                alias("entity", "case"),
                alias("entity", "case"),
                alias("relation", "embedding"),
            ],
            chunks: vec![
                Chunk {
                    token_count: 120,
                    ..Default::default()
                },
                Chunk {
                    token_count: 7,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let facts = GraphFacts {
            grounding_rate: Some(0.75),
            relations_before_after: Some((40, 31)),
        };
        let mut data = ReportData::default();
        aggregate(&mut data, &rows, facts);
        let graph = &data.graph;
        assert_eq!(graph.triplets_per_report, counts([("r1", 2), ("r2", 1)]));
        assert_eq!(graph.grounding_rate, Some(0.75));
        assert_eq!(graph.relations_before_after, Some((40, 31)));
        assert_eq!((graph.entities, graph.cross_report_entities), (3, 1));
        assert_eq!(graph.aliases["entity"], counts([("case", 2)]));
        assert_eq!(graph.aliases["relation"], counts([("embedding", 1)]));
        assert_eq!(data.chunk_tokens, vec![120.0, 7.0]);
    }

    #[test]
    fn patterns_count_by_the_domain_of_their_reports() {
        let report = |id: &str, domain: &str| Report {
            id: id.into(),
            domain: domain.into(),
            ..Default::default()
        };
        let pattern = |kind: &str, reports: &[&str]| Pattern {
            pattern: kind.into(),
            report_ids: reports.iter().map(|r| r.to_string()).collect(),
            ..Default::default()
        };
        let reports = [report("r1", "finance"), report("r2", "finance")];
        let reports = [reports.as_slice(), &[report("r3", "health")]].concat();
        let patterns = [
            pattern("chain", &["r1"]),
            // two reports of one domain: that domain
            pattern("chain", &["r1", "r2"]),
            pattern("chain", &["r1", "r3"]),
            pattern("star", &["r9"]),
            pattern("star", &[]),
        ];
        let got = pattern_domains(&reports, &patterns);
        assert_eq!(got["chain"], counts([("finance", 2), ("mixed", 1)]));
        assert_eq!(got["star"], counts([("unknown", 2)]));
    }

    #[test]
    fn questions_count_by_kind_and_split_and_judge_scores_by_dimension() {
        let question = |id: &str, kind: &str| Question {
            id: id.into(),
            kind: kind.into(),
            ..Default::default()
        };
        let judged = |clarity, correctness, reasonableness| QuestionJudgement {
            clarity,
            correctness,
            reasonableness,
            ..Default::default()
        };
        let rows = VersionRows {
            questions: vec![
                question("q1", "single_hop"),
                question("q2", "single_hop"),
                question("q3", "star_shaped"),
            ],
            question_splits: vec![QuestionSplit {
                question_id: "q1".into(),
                split: "test".into(),
                ..Default::default()
            }],
            judgements: vec![judged(5, 4, None), judged(5, 5, Some(3))],
            ..Default::default()
        };
        let mut data = ReportData::default();
        aggregate(&mut data, &rows, GraphFacts::default());
        assert_eq!(
            data.questions["single_hop"],
            counts([("test", 1), ("unsplit", 1)])
        );
        assert_eq!(data.questions["star_shaped"], counts([("unsplit", 1)]));
        let scores = |pairs: &[(i64, u64)]| pairs.iter().copied().collect::<BTreeMap<_, _>>();
        assert_eq!(data.judge_scores["clarity"], scores(&[(5, 2)]));
        assert_eq!(data.judge_scores["correctness"], scores(&[(4, 1), (5, 1)]));
        // only the judgement that scored it
        assert_eq!(data.judge_scores["reasonableness"], scores(&[(3, 1)]));
    }

    #[test]
    fn perturbations_and_metrics_pass_through_and_evals_keep_accuracy_and_robustness_of_all() {
        let rows = VersionRows {
            query_perturbations: vec![QueryPerturbation {
                kind: "typo".into(),
                similarity: 0.9,
                ..Default::default()
            }],
            document_perturbation_kinds: vec![
                ("negation".into(), Some(0.5)),
                ("negation".into(), None),
            ],
            metrics: vec![Metric {
                scope: "retrieval".into(),
                group: "all".into(),
                metric: "recall".into(),
                k: Some(5),
                value: 0.4,
                n: 12,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut data = ReportData::default();
        aggregate(&mut data, &rows, GraphFacts::default());
        assert_eq!(data.query_similarity, vec![0.9]);
        assert_eq!(data.query_perturbation_kinds, counts([("typo", 1)]));
        // a chunk without a similarity adds no value but counts as a perturbation
        assert_eq!(data.document_similarity, vec![0.5]);
        assert_eq!(data.document_perturbation_kinds, counts([("negation", 2)]));
        assert_eq!(
            data.retrieval,
            vec![MetricRow {
                scope: "retrieval".into(),
                group: "all".into(),
                metric: "recall".into(),
                k: Some(5),
                value: 0.4,
                n: 12,
            }]
        );

        let metric = |metric: &str, group: &str, ci: Option<(f64, f64)>| Metric {
            task: "qa".into(),
            metric: metric.into(),
            group: group.into(),
            value: 0.6,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            n: 30,
            ..Default::default()
        };
        let metrics = vec![
            metric("accuracy", "all", Some((0.5, 0.7))),
            metric("accuracy", "single_hop", None),
            metric("f1", "all", None),
            metric("robustness", "all", None),
        ];
        let rows: Vec<EvalRow> = eval_rows("run-a", metrics).collect();
        assert_eq!(
            rows,
            vec![
                EvalRow {
                    run: "run-a".into(),
                    task: "qa".into(),
                    metric: "accuracy".into(),
                    value: 0.6,
                    ci: Some((0.5, 0.7)),
                    n: 30,
                },
                EvalRow {
                    run: "run-a".into(),
                    task: "qa".into(),
                    metric: "robustness".into(),
                    value: 0.6,
                    ci: None,
                    n: 30,
                },
            ]
        );
    }
}
