//! The quality report of a version: what [`measure`] finds, the gates it is judged by, the
//! card's section and the comparison of two reports.

use std::collections::{BTreeMap, HashMap};

use noisebench_core::{
    CheckKind, CheckResult, CheckStatus, Chunk, Claim, ClaimDocumentLabel, Document,
    QueryPerturbation, Question, QuestionSplit, timed,
};
use serde::{Deserialize, Serialize};

use crate::agreement::{Agreement, ReviewAgreement, label_agreement, review_agreement};
use crate::closed_book::ClosedBook;
use crate::config::{QualityConfig, QualityGates};
use crate::duplicates::{CrossSplit, TableDuplicates, across, within};
use crate::grounding::{Grounding, grounding};
use crate::mix::{Mix, mix};
use crate::shortcut::{Shortcut, lexical_shortcut};

/// The file beside a version's `manifest.json`.
pub const QUALITY_FILE: &str = "quality.json";

/// The rows the card is measured over; a table the version does not have is empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tables<'a> {
    pub claims: &'a [Claim],
    pub documents: &'a [Document],
    pub labels: &'a [ClaimDocumentLabel],
    pub questions: &'a [Question],
    pub chunks: &'a [Chunk],
    /// Each report's id and domain (all the card reads of the reports).
    pub report_domains: &'a [(String, String)],
    pub splits: &'a [QuestionSplit],
    pub query_perturbations: &'a [QueryPerturbation],
    /// Each document perturbation's kind (all the card reads of them).
    pub document_perturbation_kinds: &'a [String],
}

/// Near-duplicates within each table and across splits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Duplicates {
    pub threshold: f64,
    /// By table: `questions`, `claims`, `documents` (those with rows).
    pub tables: BTreeMap<String, TableDuplicates>,
    /// Test questions with a twin in train; `None` without splits.
    pub cross_split: Option<CrossSplit>,
}

/// What the quality card measured on one version (`quality.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityReport {
    /// The format of this file.
    pub format: u32,
    /// Exam labels against stance votes; `None` when no pair has both.
    pub agreement: Option<Agreement>,
    /// Krippendorff's alpha of the exam, the stance vote and a human review round; `None`
    /// without reviewed pairs.
    #[serde(default)]
    pub review: Option<ReviewAgreement>,
    /// Answers and citations found in their chunks; `None` without questions.
    pub grounding: Option<Grounding>,
    pub duplicates: Duplicates,
    pub mix: Mix,
    /// The gold chunk's BM25 rank; `None` without questions or chunks.
    pub shortcut: Option<Shortcut>,
    pub closed_book: ClosedBook,
    /// The gates the version was judged by.
    pub gates: QualityGates,
}

/// Rows as `(id, text)`.
type IdTexts<'a> = Vec<(&'a str, &'a str)>;

/// Every count of `values`, by value.
fn counts<'a>(values: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for v in values {
        *m.entry(v.to_string()).or_insert(0) += 1;
    }
    m
}

/// The quality report of `tables`.
pub fn measure(tables: &Tables<'_>, config: &QualityConfig) -> QualityReport {
    let threshold = config.near_duplicate_threshold;
    let samples = config.samples;
    let mut dup_tables = BTreeMap::new();
    let per_table: [(&str, IdTexts<'_>, usize); 3] = [
        (
            "questions",
            tables
                .questions
                .iter()
                .map(|q| (q.id.as_str(), q.question.as_str()))
                .collect(),
            1,
        ),
        (
            "claims",
            tables
                .claims
                .iter()
                .map(|c| (c.id.as_str(), c.text.as_str()))
                .collect(),
            1,
        ),
        (
            "documents",
            tables
                .documents
                .iter()
                .map(|d| (d.id.as_str(), d.text.as_str()))
                .collect(),
            3,
        ),
    ];
    for (name, texts, k) in per_table {
        if !texts.is_empty() {
            let found = timed(
                &format!("quality card: near-duplicates within {name}"),
                || within(&texts, k, threshold, samples),
            );
            dup_tables.insert(name.to_string(), found);
        }
    }
    let split_of: HashMap<&str, &str> = tables
        .splits
        .iter()
        .map(|s| (s.question_id.as_str(), s.split.as_str()))
        .collect();
    let in_split = |name: &str| -> Vec<(&str, &str)> {
        tables
            .questions
            .iter()
            .filter(|q| split_of.get(q.id.as_str()) == Some(&name))
            .map(|q| (q.id.as_str(), q.question.as_str()))
            .collect()
    };
    let cross_split = (!tables.splits.is_empty()).then(|| {
        timed("quality card: near-duplicates across splits", || {
            across(&in_split("test"), &in_split("train"), 1, threshold, samples)
        })
    });

    let domain: HashMap<&str, &str> = tables
        .report_domains
        .iter()
        .map(|(id, domain)| (id.as_str(), domain.as_str()))
        .collect();
    let mut dims = BTreeMap::new();
    let mut add = |name: &str, c: BTreeMap<String, usize>| {
        if !c.is_empty() {
            dims.insert(name.to_string(), c);
        }
    };
    add(
        "kinds",
        counts(tables.questions.iter().map(|q| q.kind.as_str())),
    );
    add(
        "domains",
        counts(tables.questions.iter().filter_map(|q| {
            q.report_ids
                .first()
                .map(|r| domain.get(r.as_str()).copied().unwrap_or("unknown"))
        })),
    );
    add(
        "verdicts",
        counts(tables.claims.iter().map(|c| c.verdict.as_str())),
    );
    add(
        "source_types",
        counts(tables.documents.iter().map(|d| d.source_type.as_str())),
    );
    add(
        "perturbations",
        counts(
            tables
                .query_perturbations
                .iter()
                .map(|p| p.kind.as_str())
                .chain(
                    tables
                        .document_perturbation_kinds
                        .iter()
                        .map(String::as_str),
                ),
        ),
    );

    QualityReport {
        format: 1,
        agreement: timed("quality card: label agreement", || {
            label_agreement(
                tables.labels,
                tables.claims,
                config.bootstrap,
                samples,
                config.seed,
            )
        }),
        review: review_agreement(tables.labels, tables.claims, config.bootstrap, config.seed),
        grounding: timed("quality card: grounding", || {
            grounding(
                tables.questions,
                tables.chunks,
                config.fuzzy_threshold,
                samples,
            )
        }),
        duplicates: Duplicates {
            threshold,
            tables: dup_tables,
            cross_split,
        },
        mix: mix(dims, &config.mix),
        shortcut: timed("quality card: lexical shortcut", || {
            lexical_shortcut(
                tables.questions,
                tables.chunks,
                config.rank_depth,
                config.shortcut_sample,
            )
        }),
        closed_book: ClosedBook::not_run(
            "no model asked the questions closed-book (measured without one; a build with a \
             model asks them unless [quality.closed_book] enabled = false)",
        ),
        gates: config.gates.clone(),
    }
}

fn result(
    check: &str,
    passed: bool,
    checked: usize,
    failed: usize,
    ids: Vec<String>,
    detail: String,
) -> CheckResult {
    CheckResult {
        kind: CheckKind::Check,
        table: "quality".into(),
        check: check.into(),
        status: if passed {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        checked: checked as u64,
        failed: failed as u64,
        ids: if passed { Vec::new() } else { ids },
        detail,
    }
}

fn skipped(check: &str, detail: &str) -> CheckResult {
    CheckResult {
        kind: CheckKind::Check,
        table: "quality".into(),
        check: check.into(),
        status: CheckStatus::Skipped,
        checked: 0,
        failed: 0,
        ids: Vec::new(),
        detail: detail.into(),
    }
}

/// The report judged by its gates, one result each (skipped when there was nothing to measure).
pub fn gates(report: &QualityReport, gates: &QualityGates) -> Vec<CheckResult> {
    let mut out = Vec::new();
    let name = "max_cross_split_duplicate_share";
    out.push(match &report.duplicates.cross_split {
        Some(c) if c.test > 0 => result(
            name,
            c.share <= gates.max_cross_split_duplicate_share,
            c.test,
            c.leaked,
            c.pairs.iter().map(|p| p.a.clone()).collect(),
            format!(
                "{:.1}% of test questions have a near-duplicate in train (at most {:.1}%); \
                 move each pair to one split or drop one of them",
                100.0 * c.share,
                100.0 * gates.max_cross_split_duplicate_share
            ),
        ),
        _ => skipped(name, "no test questions"),
    });
    let name = "min_grounding_share";
    out.push(match &report.grounding {
        Some(g) => result(
            name,
            g.share >= gates.min_grounding_share,
            g.questions,
            g.questions - g.grounded,
            g.ungrounded.iter().map(|u| u.question_id.clone()).collect(),
            format!(
                "{:.1}% of questions are grounded in their chunks (at least {:.1}%); see the \
                 ungrounded questions in quality.json",
                100.0 * g.share,
                100.0 * gates.min_grounding_share
            ),
        ),
        None => skipped(name, "no questions"),
    });
    let name = "min_kappa";
    out.push(
        match report.agreement.as_ref().and_then(|a| Some((a, a.kappa?))) {
            Some((a, kappa)) => result(
                name,
                a.interval.map_or(kappa, |[_, high]| high) >= gates.min_kappa,
                a.pairs,
                a.disagreeing,
                a.disagreements.iter().map(|d| d.id.clone()).collect(),
                format!(
                    "Cohen's kappa of exam labels and stance votes {kappa:.3}, 95% interval up \
                     to {:.3} (at least {:.3}); review the sampled disagreements",
                    a.interval.map_or(kappa, |[_, high]| high),
                    gates.min_kappa
                ),
            ),
            None => skipped(name, "no pair has both an exam label and a stance vote"),
        },
    );
    out
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The card's "Quality" section (Markdown, starting with its `## Quality` heading).
pub fn render_markdown(report: &QualityReport) -> String {
    let mut s = String::from("## Quality\n\n");
    s.push_str("Measured on this version's tables by `noisebench quality` (the numbers are in `quality.json`; docs/quality.md explains each).\n\n");
    s.push_str("| measure | value |\n|---|---|\n");
    for (name, value) in headline(report) {
        s.push_str(&format!("| {name} | {value} |\n"));
    }
    if let Some(a) = &report.agreement {
        s.push_str("\n### Label agreement\n\nExam label (rows) against the stance vote mapped through the claim's verdict (columns):\n\n| exam \\ stance | supporting | misleading | irrelevant |\n|---|---:|---:|---:|\n");
        for row in crate::agreement::LABELS {
            let cells: Vec<String> = crate::agreement::LABELS
                .iter()
                .map(|col| {
                    a.confusion
                        .get(row)
                        .and_then(|r| r.get(*col))
                        .copied()
                        .unwrap_or(0)
                        .to_string()
                })
                .collect();
            s.push_str(&format!("| {row} | {} |\n", cells.join(" | ")));
        }
        if !a.disagreements.is_empty() {
            s.push_str(&format!(
                "\n{} pairs disagree; a sample:\n\n",
                a.disagreeing
            ));
            for d in &a.disagreements {
                s.push_str(&format!(
                    "- `{}` (claim {}, verdict {}): exam `{}`, stance `{}` (= `{}`)\n",
                    d.id, d.claim_id, d.verdict, d.exam, d.stance, d.mapped
                ));
            }
        }
    }
    if let Some(c) = &report.duplicates.cross_split
        && !c.pairs.is_empty()
    {
        s.push_str("\n### Test questions with a near-duplicate in train\n\n");
        for p in &c.pairs {
            s.push_str(&format!(
                "- `{}` ~ `{}` (Jaccard {:.2})\n",
                p.a, p.b, p.similarity
            ));
        }
    }
    if !report.closed_book.examples.is_empty() {
        s.push_str(&format!(
            "\n### Questions answered right without retrieval\n\n{} questions (all listed in `quality.json`, `closed_book.flagged`); a sample:\n\n",
            report.closed_book.flagged.len()
        ));
        for e in &report.closed_book.examples {
            s.push_str(&format!(
                "- `{}`: {} (gold `{}`, closed-book `{}`)\n",
                e.question_id, e.question, e.gold, e.answer
            ));
        }
    }
    if !report.mix.gaps.is_empty() {
        s.push_str("\n### Largest gaps to the target mix\n\n| dimension | value | target | actual |\n|---|---|---:|---:|\n");
        for g in report.mix.gaps.iter().take(5) {
            s.push_str(&format!(
                "| {} | `{}` | {} | {} |\n",
                g.dimension,
                g.value,
                pct(g.target),
                pct(g.actual)
            ));
        }
    }
    s
}

/// The headline numbers, `(measure, value)`, in the card's order (the card's table, the HTML
/// report's section).
pub fn headline(r: &QualityReport) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match &r.agreement {
        Some(a) => out.push((
            "label agreement (Cohen's kappa, exam vs stance)".into(),
            format!(
                "{} (95% CI {}), {} pairs, {} agree",
                a.kappa.map_or("undefined".into(), |k| format!("{k:.3}")),
                a.interval
                    .map_or("n/a".into(), |[l, h]| format!("{l:.3} to {h:.3}")),
                a.pairs,
                pct(a.observed)
            ),
        )),
        None => out.push((
            "label agreement".into(),
            "not measured (no pair has both label methods)".into(),
        )),
    }
    if let Some(v) = &r.review {
        out.push((
            "agreement with the human review (Krippendorff's alpha, exam, stance, human)".into(),
            format!(
                "{} (95% CI {}), {} reviewed pairs, the reviewer kept the exam's label on {}",
                v.alpha.map_or("undefined".into(), |a| format!("{a:.3}")),
                v.interval
                    .map_or("n/a".into(), |[l, h]| format!("{l:.3} to {h:.3}")),
                v.pairs,
                pct(v.human_agrees_with_exam)
            ),
        ));
    }
    if let Some(g) = &r.grounding {
        out.push((
            "grounded questions".into(),
            format!(
                "{} of {} ({}); answers found word for word: {}; mean citation score {}",
                g.grounded,
                g.questions,
                pct(g.share),
                g.answers_exact,
                g.mean_citation_score
                    .map_or("n/a".into(), |c| format!("{c:.3}"))
            ),
        ));
    }
    for (table, d) in &r.duplicates.tables {
        out.push((
            format!("near-duplicate {table}"),
            format!(
                "{} of {} ({}), {} exact",
                d.near,
                d.rows,
                pct(d.share),
                d.exact
            ),
        ));
    }
    if let Some(c) = &r.duplicates.cross_split {
        out.push((
            "test questions with a near-twin in train".into(),
            format!("{} of {} ({})", c.leaked, c.test, pct(c.share)),
        ));
    }
    if let Some(sc) = &r.shortcut {
        out.push((
            "gold chunk ranked first by BM25".into(),
            format!(
                "{} of {} ({}); median rank {}{}",
                sc.all.rank_1,
                sc.all.questions,
                pct(sc.all.share_rank_1),
                sc.all.median_rank.map_or("n/a".into(), |m| m.to_string()),
                if sc.all.questions < sc.asked {
                    format!(
                        " (a sample of {} of the {} questions with gold chunks)",
                        sc.all.questions, sc.asked
                    )
                } else {
                    String::new()
                }
            ),
        ));
        for (kind, st) in &sc.kinds {
            out.push((
                format!("  ranked first, {kind}"),
                format!(
                    "{} of {} ({})",
                    st.rank_1,
                    st.questions,
                    pct(st.share_rank_1)
                ),
            ));
        }
    }
    if let Some(kinds) = r.mix.dimensions.get("kinds") {
        let parts: Vec<String> = kinds
            .actual
            .iter()
            .map(|(k, v)| format!("{k} {}", pct(*v)))
            .collect();
        out.push(("question kinds".into(), parts.join(", ")));
    }
    out.push((
        "gaps to the target mix (5 points or more)".into(),
        if r.mix.gaps.is_empty() {
            "none".into()
        } else {
            r.mix
                .gaps
                .iter()
                .take(3)
                .map(|g| format!("{}.{} {:+.1} pts", g.dimension, g.value, 100.0 * g.gap))
                .collect::<Vec<_>>()
                .join(", ")
        },
    ));
    let c = &r.closed_book;
    if c.ran() {
        out.push((
            "answered right without retrieval (closed-book)".into(),
            format!(
                "{} of {} ({}){}; {}",
                c.all.right,
                c.all.judged,
                pct(c.all.share),
                if c.failed > 0 {
                    format!(", {} calls failed", c.failed)
                } else {
                    String::new()
                },
                c.reason
            ),
        ));
        for (kind, st) in &c.kinds {
            out.push((
                format!("  closed-book right, {kind}"),
                format!("{} of {} ({})", st.right, st.judged, pct(st.share)),
            ));
        }
    } else {
        out.push((
            "answerable without retrieval".into(),
            format!("not run ({})", c.reason),
        ));
    }
    out
}

/// The numbers two reports compare on, by name.
fn numbers(r: &QualityReport) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    if let Some(k) = r.agreement.as_ref().and_then(|a| a.kappa) {
        m.insert("kappa".into(), k);
    }
    if let Some(a) = r.review.as_ref().and_then(|v| v.alpha) {
        m.insert("Krippendorff's alpha (review)".into(), a);
    }
    if let Some(g) = &r.grounding {
        m.insert("grounded share".into(), g.share);
    }
    for (t, d) in &r.duplicates.tables {
        m.insert(format!("near-duplicate share, {t}"), d.share);
    }
    if let Some(c) = &r.duplicates.cross_split {
        m.insert("cross-split near-duplicate share".into(), c.share);
    }
    if let Some(s) = &r.shortcut {
        m.insert("BM25 rank-1 share".into(), s.all.share_rank_1);
    }
    if r.closed_book.ran() {
        m.insert("closed-book right share".into(), r.closed_book.all.share);
    }
    m.insert("mix gaps named".into(), r.mix.gaps.len() as f64);
    m
}

/// How each number moved from `old` to `new`, one line each.
pub fn compare(old: &QualityReport, new: &QualityReport) -> Vec<String> {
    let (a, b) = (numbers(old), numbers(new));
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|n| match (a.get(n), b.get(n)) {
            (Some(x), Some(y)) => format!("{n}: {x:.3} -> {y:.3} ({:+.3})", y - x),
            (Some(x), None) => format!("{n}: {x:.3} -> not measured"),
            (None, Some(y)) => format!("{n}: not measured -> {y:.3}"),
            (None, None) => unreachable!("a name comes from one of the two maps"),
        })
        .collect()
}
