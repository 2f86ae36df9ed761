//! The page: a small CSS block, a max-width column, one `<section>` per part of
//! [`SECTION_IDS`](crate::SECTION_IDS), tables sorted for reading (the page has no script, so
//! none is sortable).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::escape::escape;
use crate::figures::{bars, histogram};
use crate::{ReportData, SECTION_IDS};

const CSS: &str = "body{font-family:sans-serif;color:#222;margin:0;background:#fafafa}\
main{max-width:960px;margin:0 auto;padding:1em 2em;background:#fff}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\
th{background:#f0f0f0}figure{margin:1em 0}figcaption{font-size:.9em;color:#555}\
p.nodata{color:#888;font-style:italic}nav a{margin-right:.8em}";

/// The message a section shows when the snapshot has nothing for it.
pub(crate) const NO_DATA: &str = "no data";

/// The report page of `data`: one self-contained HTML document.
pub fn render(data: &ReportData) -> String {
    let o = &data.overview;
    let title = format!("{} {}", o.dataset, o.version);
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>noisebench report: {}</title>\n<style>{CSS}{}</style>\n</head>\n<body>\n<main>\n\
         <h1>noisebench report: {}</h1>\n<nav>",
        escape(&title),
        crate::samples::CSS,
        escape(&title)
    );
    for id in SECTION_IDS {
        let _ = write!(page, "<a href=\"#{id}\">{}</a>", heading(id));
    }
    page.push_str("</nav>\n");
    for id in SECTION_IDS {
        let body = match id {
            "overview" => overview(data),
            "funnel" => funnel(data),
            "quality" => quality(data),
            "labels" => labels(data),
            "documents" => documents(data),
            "credibility" => credibility(data),
            "chunks" => chunks(data),
            "graph" => graph(data),
            "patterns" => patterns(data),
            "questions" => questions(data),
            "perturbations" => perturbations(data),
            "retrieval" => retrieval(data),
            "evals" => evals(data),
            "claim-items" => crate::samples::claim_items(&data.samples)
                .unwrap_or_else(|| no_data("no labelled claim-document pairs to sample")),
            "question-items" => crate::samples::question_items(&data.samples)
                .unwrap_or_else(|| no_data("no questions to sample")),
            "drop-items" => {
                crate::samples::drop_items(&data.samples).unwrap_or_else(|why| no_data(&why))
            }
            _ => changes(data),
        };
        let _ = write!(
            page,
            "<section id=\"{id}\">\n<h2>{}</h2>\n{body}</section>\n",
            heading(id)
        );
    }
    page.push_str("</main>\n</body>\n</html>\n");
    page
}

fn heading(id: &str) -> &'static str {
    match id {
        "overview" => "Overview",
        "funnel" => "Stages: items in, out and dropped",
        "quality" => "Quality card",
        "labels" => "Labels by claim verdict",
        "documents" => "Documents",
        "credibility" => "Credibility and source types",
        "chunks" => "Chunks",
        "graph" => "Triplets and knowledge graph",
        "patterns" => "Question patterns",
        "questions" => "Questions",
        "perturbations" => "Perturbations",
        "retrieval" => "Retrieval metrics",
        "evals" => "Evaluation results",
        "claim-items" => "Sampled claims, end to end",
        "question-items" => "Sampled questions, end to end",
        "drop-items" => "Sampled drops",
        _ => "Changes against the parent",
    }
}

/// The quality card's headline numbers (docs/quality.md).
fn quality(data: &ReportData) -> String {
    if data.quality.is_empty() {
        return no_data("this version has no quality.json");
    }
    let rows: Vec<Vec<String>> = data
        .quality
        .iter()
        .map(|(m, v)| vec![m.clone(), v.clone()])
        .collect();
    format!(
        "<p>Measured on this version's tables (<code>quality.json</code>; \
         <code>noisebench quality</code> prints it with its samples).</p>\n{}",
        table(&["measure", "value"], &rows)
    )
}

fn no_data(what: &str) -> String {
    format!("<p class=\"nodata\">{NO_DATA}: {}</p>\n", escape(what))
}

fn figure(svg: String, caption: &str) -> String {
    format!(
        "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
        escape(caption)
    )
}

/// A table; a header cell starting with `#` (dropped when shown) marks a right-aligned numeric
/// column.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let numeric: Vec<bool> = headers.iter().map(|h| h.starts_with('#')).collect();
    let mut out = String::from("<table>\n<tr>");
    for (h, n) in headers.iter().zip(&numeric) {
        let class = if *n { " class=\"n\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h.trim_start_matches('#')));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if numeric.get(i).copied().unwrap_or(false) {
                " class=\"n\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

fn counts<K: ToString>(map: &BTreeMap<K, u64>) -> Vec<(String, u64)> {
    map.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn overview(data: &ReportData) -> String {
    let o = &data.overview;
    let mut out = table(
        &["field", "value"],
        &[
            vec!["dataset".into(), o.dataset.clone()],
            vec!["version".into(), o.version.clone()],
            vec![
                "parent".into(),
                o.parent
                    .clone()
                    .unwrap_or_else(|| "none (first version)".into()),
            ],
            vec!["created".into(), o.created_at.clone()],
            vec!["pipeline".into(), o.pipeline.clone()],
            vec!["code version".into(), o.code_version.clone()],
        ],
    );
    out.push_str("<h3>Rows per table</h3>\n");
    if o.tables.is_empty() {
        out.push_str(&no_data("the version publishes no tables"));
    } else {
        match &o.parent_tables {
            None => {
                let rows: Vec<Vec<String>> = o
                    .tables
                    .iter()
                    .map(|(t, n)| vec![t.clone(), n.to_string()])
                    .collect();
                out.push_str(&table(&["table", "#rows"], &rows));
            }
            Some(parent) => {
                let mut names: Vec<&String> = o.tables.keys().chain(parent.keys()).collect();
                names.sort();
                names.dedup();
                let cell = |m: &BTreeMap<String, u64>, t: &String| {
                    m.get(t)
                        .map(|n| n.to_string())
                        .unwrap_or_else(|| "-".into())
                };
                let rows: Vec<Vec<String>> = names
                    .into_iter()
                    .map(|t| vec![t.clone(), cell(&o.tables, t), cell(parent, t)])
                    .collect();
                out.push_str(&table(&["table", "#rows", "#rows in the parent"], &rows));
            }
        }
    }
    out
}

/// The quote made before the build beside what the build's calls used, per stage and task.
fn quote_against_actual(data: &ReportData) -> String {
    if data.quote.is_empty() {
        return String::new();
    }
    let pair = |(q, a): (u64, u64)| format!("{q} / {a}");
    let rows: Vec<Vec<String>> = data
        .quote
        .iter()
        .map(|l| {
            let error = if l.usd.0 > 0.0 {
                format!("{:+.0}%", (l.usd.1 / l.usd.0 - 1.0) * 100.0)
            } else {
                String::new()
            };
            vec![
                l.stage.clone(),
                l.task.clone(),
                pair(l.calls),
                pair(l.input_tokens),
                pair(l.cached_input_tokens),
                pair(l.output_tokens),
                format!("{:.4} / {:.4}", l.usd.0, l.usd.1),
                error,
                if l.projected { "projected" } else { "exact" }.to_string(),
            ]
        })
        .collect();
    let mut out = String::from(
        "<p>LLM use: the quote made before the build (quoted) beside what its calls used \
         (actual). Cache hits are free and not counted.</p>\n",
    );
    out.push_str(&table(
        &[
            "stage",
            "task",
            "calls quoted / actual",
            "tokens in",
            "prompt-cache tokens",
            "tokens out",
            "USD",
            "USD error",
            "quote",
        ],
        &rows,
    ));
    out
}

fn funnel(data: &ReportData) -> String {
    let quote = quote_against_actual(data);
    funnel_only(data) + &quote
}

fn funnel_only(data: &ReportData) -> String {
    let Some(stages) = &data.stages else {
        return no_data(
            "this version does not record its run summary (items in, out and dropped per stage)",
        );
    };
    if stages.is_empty() {
        return no_data("the run summary lists no stages");
    }
    let rows: Vec<Vec<String>> = stages
        .iter()
        .map(|s| {
            let reasons: Vec<String> = s
                .drop_reasons
                .iter()
                .map(|(r, n)| format!("{r}: {n}"))
                .collect();
            vec![
                s.id.clone(),
                s.kind.clone(),
                s.items_in.to_string(),
                s.items_out.to_string(),
                s.dropped.to_string(),
                reasons.join(", "),
            ]
        })
        .collect();
    let mut out = String::from("<p>Stages in the order they ran.</p>\n");
    out.push_str(&table(
        &[
            "stage",
            "kind",
            "#in",
            "#out",
            "#dropped",
            "dropped by reason",
        ],
        &rows,
    ));
    let dropped: Vec<(String, u64)> = stages
        .iter()
        .filter(|s| s.dropped > 0)
        .map(|s| (s.id.clone(), s.dropped.max(0) as u64))
        .collect();
    if !dropped.is_empty() {
        out.push_str(&figure(
            bars(&dropped, "stage", "items dropped"),
            "Items dropped per stage (stages that dropped none are left out).",
        ));
    }
    out
}

fn labels(data: &ReportData) -> String {
    if data.labels.is_empty() {
        return no_data("no labelled claim-document pairs (the snapshot has no claims track)");
    }
    let mut columns: Vec<&String> = data.labels.values().flat_map(|m| m.keys()).collect();
    columns.sort();
    columns.dedup();
    let mut headers = vec!["claim verdict".to_string()];
    headers.extend(columns.iter().map(|c| format!("#{c}")));
    headers.push("#total".into());
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = data
        .labels
        .iter()
        .map(|(verdict, by_label)| {
            let mut row = vec![verdict.clone()];
            row.extend(
                columns
                    .iter()
                    .map(|c| by_label.get(*c).copied().unwrap_or(0).to_string()),
            );
            row.push(by_label.values().sum::<u64>().to_string());
            row
        })
        .collect();
    let mut out = String::from(
        "<p>Claim-document pairs by label, per claim verdict (the layout of RAGuard's Table 3a).</p>\n",
    );
    out.push_str(&table(&header_refs, &rows));
    let flat: Vec<(String, u64)> = data
        .labels
        .iter()
        .flat_map(|(v, m)| m.iter().map(move |(l, n)| (format!("{v}/{l}"), *n)))
        .collect();
    out.push_str(&figure(
        bars(&flat, "claim verdict / label", "pairs"),
        "Labelled claim-document pairs per claim verdict and label.",
    ));
    out
}

fn documents(data: &ReportData) -> String {
    if data.documents_per_claim.is_empty() && data.document_words.is_empty() {
        return no_data("no claims or documents");
    }
    let mut out = String::new();
    if !data.documents_per_claim.is_empty() {
        out.push_str(&figure(
            histogram(&data.documents_per_claim, "documents per claim", "claims"),
            "Claims by the number of documents retrieved for them (claim_documents rows per claim).",
        ));
    }
    if !data.document_words.is_empty() {
        out.push_str(&figure(
            histogram(&data.document_words, "words (bin start)", "documents"),
            "Documents by the length of their extracted text in words.",
        ));
    }
    out
}

fn credibility(data: &ReportData) -> String {
    if data.credibility.is_empty() && data.source_types.is_empty() {
        return no_data("no document credibility ratings or source types");
    }
    let mut out = String::new();
    if !data.credibility.is_empty() {
        out.push_str(&figure(
            bars(&counts(&data.credibility), "credibility", "documents"),
            "Documents by credibility level (none: not rated).",
        ));
    }
    if !data.source_types.is_empty() {
        out.push_str(&figure(
            bars(&counts(&data.source_types), "source type", "documents"),
            "Documents by source type.",
        ));
    }
    out
}

fn chunks(data: &ReportData) -> String {
    if data.chunk_tokens.is_empty() {
        return no_data("no chunks (the snapshot has no report track)");
    }
    let n = data.chunk_tokens.len();
    let mean = data.chunk_tokens.iter().sum::<f64>() / n as f64;
    let mut out = format!("<p>{n} chunks, {mean:.0} tokens on average.</p>\n");
    out.push_str(&figure(
        histogram(&data.chunk_tokens, "tokens (bin start)", "chunks"),
        "Chunks by token count.",
    ));
    out
}

fn graph(data: &ReportData) -> String {
    let g = &data.graph;
    if g.triplets_per_report.is_empty() && g.entities == 0 && g.aliases.is_empty() {
        return no_data("no triplets, entities or aliases (the snapshot has no report track)");
    }
    let mut facts = vec![
        vec![
            "triplets".into(),
            g.triplets_per_report.values().sum::<u64>().to_string(),
        ],
        vec![
            "reports with triplets".into(),
            g.triplets_per_report.len().to_string(),
        ],
        vec![
            "grounding rate".into(),
            g.grounding_rate
                .map(|r| format!("{:.1}%", r * 100.0))
                .unwrap_or_else(|| "not recorded".into()),
        ],
        vec!["entities".into(), g.entities.to_string()],
        vec![
            "entities in more than one report".into(),
            g.cross_report_entities.to_string(),
        ],
    ];
    if let Some((before, after)) = g.relations_before_after {
        facts.push(vec![
            "relations before / after merging".into(),
            format!("{before} / {after}"),
        ]);
    }
    let mut out = table(&["fact", "value"], &facts);
    if !g.triplets_per_report.is_empty() {
        let mut per: Vec<(String, u64)> = counts(&g.triplets_per_report);
        // Most productive reports first; ids break ties so the order is stable.
        per.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let values: Vec<f64> = per.iter().map(|p| p.1 as f64).collect();
        out.push_str(&figure(
            histogram(&values, "triplets per report", "reports"),
            "Reports by the number of triplets extracted from them.",
        ));
    }
    out.push_str("<h3>Alias merges</h3>\n");
    if g.aliases.is_empty() {
        out.push_str(&no_data("no aliases were merged"));
    } else {
        let rows: Vec<Vec<String>> = g
            .aliases
            .iter()
            .flat_map(|(kind, rules)| {
                rules
                    .iter()
                    .map(move |(rule, n)| vec![kind.clone(), rule.clone(), n.to_string()])
            })
            .collect();
        out.push_str(&table(&["kind", "rule", "#aliases"], &rows));
    }
    out
}

/// RARE Table 7's rows, in its order, with the names it uses.
const PATTERN_ROWS: [(&str, &str); 4] = [
    ("single_hop", "single-hop"),
    ("chained_multi_hop", "chained"),
    ("star_shaped", "star"),
    ("inverted_star_shaped", "inverted star"),
];

fn patterns(data: &ReportData) -> String {
    if data.patterns.is_empty() {
        return no_data("no patterns (the snapshot has no report track)");
    }
    let mut domains: Vec<&String> = data.patterns.values().flat_map(|m| m.keys()).collect();
    domains.sort();
    domains.dedup();
    let mut headers = vec!["pattern".to_string()];
    headers.extend(domains.iter().map(|d| format!("#{d}")));
    headers.push("#total".into());
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut kinds: Vec<(String, String)> = PATTERN_ROWS
        .iter()
        .map(|(k, name)| (k.to_string(), name.to_string()))
        .collect();
    kinds.extend(
        data.patterns
            .keys()
            .filter(|k| !PATTERN_ROWS.iter().any(|(known, _)| known == k))
            .map(|k| (k.clone(), k.clone())),
    );
    let empty = BTreeMap::new();
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|(kind, name)| {
            let by_domain = data.patterns.get(kind).unwrap_or(&empty);
            let mut row = vec![name.clone()];
            row.extend(
                domains
                    .iter()
                    .map(|d| by_domain.get(*d).copied().unwrap_or(0).to_string()),
            );
            row.push(by_domain.values().sum::<u64>().to_string());
            row
        })
        .collect();
    let mut out = String::from(
        "<p>Patterns mined from the knowledge graph by kind and report domain (the layout of \
         RARE's Table 7; a pattern spanning reports of several domains counts under \
         <code>mixed</code>).</p>\n",
    );
    out.push_str(&table(&header_refs, &rows));
    let totals: Vec<(String, u64)> = kinds
        .iter()
        .map(|(kind, name)| {
            let n = data
                .patterns
                .get(kind)
                .map(|m| m.values().sum())
                .unwrap_or(0);
            (name.clone(), n)
        })
        .collect();
    out.push_str(&figure(
        bars(&totals, "pattern", "patterns"),
        "Patterns per kind, all domains together.",
    ));
    out
}

fn questions(data: &ReportData) -> String {
    if data.questions.is_empty() && data.judge_scores.is_empty() {
        return no_data("no questions (the snapshot has no report track)");
    }
    let mut out = String::new();
    if data.questions.is_empty() {
        out.push_str(&no_data("no kept questions"));
    } else {
        let mut splits: Vec<&String> = data.questions.values().flat_map(|m| m.keys()).collect();
        splits.sort();
        splits.dedup();
        let mut headers = vec!["kind".to_string()];
        headers.extend(splits.iter().map(|s| format!("#{s}")));
        headers.push("#total".into());
        let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let rows: Vec<Vec<String>> = data
            .questions
            .iter()
            .map(|(kind, by_split)| {
                let mut row = vec![kind.clone()];
                row.extend(
                    splits
                        .iter()
                        .map(|s| by_split.get(*s).copied().unwrap_or(0).to_string()),
                );
                row.push(by_split.values().sum::<u64>().to_string());
                row
            })
            .collect();
        out.push_str("<p>Kept questions by kind and split.</p>\n");
        out.push_str(&table(&header_refs, &rows));
    }
    if data.judge_scores.is_empty() {
        out.push_str(&no_data("no judge scores (question_judgements)"));
    }
    for (dimension, scores) in &data.judge_scores {
        out.push_str(&figure(
            bars(&counts(scores), &format!("{dimension} score"), "questions"),
            &format!("Judged questions by their {dimension} score (question_judgements)."),
        ));
    }
    out
}

fn perturbations(data: &ReportData) -> String {
    if data.query_similarity.is_empty()
        && data.document_similarity.is_empty()
        && data.query_perturbation_kinds.is_empty()
        && data.document_perturbation_kinds.is_empty()
    {
        return no_data("no perturbations (the snapshot has no report track)");
    }
    let mut out = String::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (side, kinds) in [
        ("query", &data.query_perturbation_kinds),
        ("document", &data.document_perturbation_kinds),
    ] {
        for (kind, n) in kinds {
            rows.push(vec![side.into(), kind.clone(), n.to_string()]);
        }
    }
    if !rows.is_empty() {
        out.push_str(&table(&["perturbs", "kind", "#rows"], &rows));
    }
    if data.query_similarity.is_empty() {
        out.push_str(&no_data("no query perturbation similarities"));
    } else {
        out.push_str(&figure(
            histogram(
                &data.query_similarity,
                "similarity (bin start)",
                "perturbed queries",
            ),
            "Perturbed queries by their similarity to the original question \
             (query_perturbations.similarity).",
        ));
    }
    if data.document_similarity.is_empty() {
        out.push_str(&no_data("no document perturbation similarities"));
    } else {
        out.push_str(&figure(
            histogram(
                &data.document_similarity,
                "similarity (bin start)",
                "perturbed chunks",
            ),
            "Perturbed chunks by their similarity to the original chunk \
             (document_perturbations.similarity).",
        ));
    }
    out
}

/// Groups in reading order: `all` first, then the question kinds, then the rest by name.
fn group_rank(group: &str) -> (u8, &str) {
    match group {
        "all" => (0, group),
        g if g.contains(':') || g.contains('=') => (2, g),
        g => (1, g),
    }
}

fn retrieval(data: &ReportData) -> String {
    if data.retrieval.is_empty() {
        return no_data("no retrieval metrics (the snapshot has no retrieval_metrics table)");
    }
    // One row per retriever, group and cutoff; one column per metric.
    let mut metrics: Vec<&str> = data.retrieval.iter().map(|m| m.metric.as_str()).collect();
    metrics.sort();
    metrics.dedup();
    // (retriever, group in reading order, k) -> (metric -> value, n)
    type Key<'a> = (&'a str, (u8, &'a str), Option<i64>);
    let mut table_rows: BTreeMap<Key, (BTreeMap<&str, f64>, i64)> = BTreeMap::new();
    for m in &data.retrieval {
        let entry = table_rows
            .entry((m.scope.as_str(), group_rank(&m.group), m.k))
            .or_default();
        entry.0.insert(m.metric.as_str(), m.value);
        entry.1 = entry.1.max(m.n);
    }
    let mut headers = vec!["retriever".to_string(), "group".into(), "#k".into()];
    headers.extend(metrics.iter().map(|m| format!("#{m}")));
    headers.push("#n".into());
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = table_rows
        .iter()
        .map(|((scope, (_, group), k), (values, n))| {
            let mut row = vec![
                scope.to_string(),
                group.to_string(),
                k.map(|k| k.to_string()).unwrap_or_default(),
            ];
            row.extend(
                metrics
                    .iter()
                    .map(|m| values.get(m).map(|v| format!("{v:.3}")).unwrap_or_default()),
            );
            row.push(n.to_string());
            row
        })
        .collect();
    let mut out = String::from(
        "<p>The <code>retrieval_metrics</code> table: per retriever, question group and cutoff k; \
         n is the number of queries.</p>\n",
    );
    out.push_str(&table(&header_refs, &rows));
    out
}

fn evals(data: &ReportData) -> String {
    if data.evals.is_empty() {
        return no_data("no evaluation results for this version");
    }
    let mut rows: Vec<&crate::EvalRow> = data.evals.iter().collect();
    rows.sort_by(|a, b| (&a.run, &a.task, &a.metric).cmp(&(&b.run, &b.task, &b.metric)));
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.run.clone(),
                r.task.clone(),
                r.metric.clone(),
                format!("{:.3}", r.value),
                r.ci.map(|(lo, hi)| format!("{lo:.3} to {hi:.3}"))
                    .unwrap_or_default(),
                r.n.to_string(),
            ]
        })
        .collect();
    let mut out = String::from(
        "<p>Accuracy and robustness over all items (group <code>all</code>) of each evaluation \
         run of this version.</p>\n",
    );
    out.push_str(&table(
        &["run", "task", "metric", "#value", "95% interval", "#n"],
        &rows,
    ));
    out
}

fn changes(data: &ReportData) -> String {
    let Some(c) = &data.changes else {
        return no_data("this version records no changes (no changes.json)");
    };
    let mut out = match &c.from {
        Some(from) => format!("<p>Against version {}.</p>\n", escape(from)),
        None => "<p>First version: every table is new.</p>\n".to_string(),
    };
    if c.tables.is_empty() {
        out.push_str(&no_data("no table changed"));
    } else {
        out.push_str(&table_changes(&c.tables));
    }
    if !c.exports.is_empty() {
        out.push_str(&export_changes(&c.exports));
    }
    out
}

/// Export files that differ from the parent's: path, status and size before and after.
fn export_changes(exports: &[crate::ExportChange]) -> String {
    let bytes = |b: Option<u64>| b.map_or_else(|| "-".to_string(), |b| b.to_string());
    let rows: Vec<Vec<String>> = exports
        .iter()
        .map(|e| {
            vec![
                e.file.clone(),
                e.status.clone(),
                bytes(e.bytes_before),
                bytes(e.bytes_after),
            ]
        })
        .collect();
    let mut out = "<p>Export files:</p>\n".to_string();
    out.push_str(&table(
        &["export file", "is", "#bytes before", "#bytes after"],
        &rows,
    ));
    out
}

/// Row changes per table.
fn table_changes(tables: &[crate::TableChange]) -> String {
    let rows: Vec<Vec<String>> = tables
        .iter()
        .map(|t| {
            vec![
                t.table.clone(),
                t.table_status.clone().unwrap_or_default(),
                t.rows_before.to_string(),
                t.rows_after.to_string(),
                t.added.to_string(),
                t.removed.to_string(),
                t.changed.to_string(),
            ]
        })
        .collect();
    table(
        &[
            "table",
            "table is",
            "#rows before",
            "#rows after",
            "#added",
            "#removed",
            "#changed",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Changes, EvalRow, Graph, MetricRow, Overview, StageFunnel, TableChange};

    fn map<K: Ord + Clone, V: Clone>(pairs: &[(K, V)]) -> BTreeMap<K, V> {
        pairs.iter().cloned().collect()
    }

    fn full() -> ReportData {
        let s = |v: &str| v.to_string();
        ReportData {
            overview: Overview {
                dataset: s("demo"),
                version: s("1.1.0"),
                parent: Some(s("1.0.0")),
                created_at: s("2026-01-01T00:00:00Z"),
                pipeline: s("demo"),
                code_version: s("0.1.0"),
                tables: map(&[(s("claims"), 3), (s("chunks"), 4)]),
                parent_tables: Some(map(&[(s("claims"), 2)])),
            },
            stages: Some(vec![StageFunnel {
                id: s("claims"),
                kind: s("claims-import"),
                items_in: 5,
                items_out: 3,
                dropped: 2,
                drop_reasons: map(&[(s("bad_date"), 2)]),
            }]),
            labels: map(&[
                (
                    s("true"),
                    map(&[(s("supporting"), 4), (s("irrelevant"), 1)]),
                ),
                (s("false"), map(&[(s("misleading"), 2)])),
            ]),
            documents_per_claim: vec![0.0, 2.0, 3.0],
            document_words: vec![120.0, 800.0, 15.0],
            credibility: map(&[(s("high"), 1), (s("low"), 2)]),
            source_types: map(&[(s("government"), 1), (s("social media"), 2)]),
            chunk_tokens: vec![100.0, 250.0, 512.0, 40.0],
            graph: Graph {
                triplets_per_report: map(&[(s("report_a"), 3), (s("report_b"), 1)]),
                grounding_rate: Some(0.75),
                relations_before_after: Some((5, 4)),
                entities: 6,
                cross_report_entities: 1,
                aliases: map(&[(s("entity"), map(&[(s("filer"), 2)]))]),
            },
            patterns: map(&[
                (s("single_hop"), map(&[(s("finance"), 3)])),
                (
                    s("star_shaped"),
                    map(&[(s("finance"), 1), (s("policy"), 2)]),
                ),
            ]),
            questions: map(&[(s("single_hop"), map(&[(s("test"), 1), (s("train"), 2)]))]),
            judge_scores: map(&[(s("clarity"), map(&[(4, 2), (5, 1)]))]),
            query_similarity: vec![0.9, 0.8, 0.95],
            query_perturbation_kinds: map(&[(s("word_level"), 3)]),
            document_similarity: vec![0.7, 0.6],
            document_perturbation_kinds: map(&[(s("regex_delete"), 2)]),
            retrieval: vec![
                MetricRow {
                    scope: s("bm25"),
                    group: s("single_hop"),
                    metric: s("recall"),
                    k: Some(3),
                    value: 0.5,
                    n: 2,
                },
                MetricRow {
                    scope: s("bm25"),
                    group: s("all"),
                    metric: s("recall"),
                    k: Some(3),
                    value: 0.25,
                    n: 4,
                },
            ],
            evals: vec![EvalRow {
                run: s("offline"),
                task: s("rare_overall"),
                metric: s("robustness"),
                value: 0.5,
                ci: Some((0.25, 0.75)),
                n: 10,
            }],
            changes: Some(Changes {
                from: Some(s("1.0.0")),
                tables: vec![TableChange {
                    table: s("claims"),
                    rows_before: 2,
                    rows_after: 3,
                    added: 1,
                    ..Default::default()
                }],
                exports: vec![crate::ExportChange {
                    file: s("exports/confact/confact.json"),
                    status: s("changed"),
                    bytes_before: Some(7),
                    bytes_after: Some(5),
                }],
            }),
            samples: crate::items::example::samples(),
            quality: vec![(s("grounded questions"), s("36 of 36 (100.0%)"))],
            quote: Vec::new(),
        }
    }

    /// The text of every `<section>`, by id.
    #[test]
    fn the_quote_is_set_beside_the_actual_use_in_the_stages_section() {
        let mut data = full();
        assert!(
            !funnel(&data).contains("quoted / actual"),
            "no quote, no table"
        );
        data.quote = vec![crate::QuoteLine {
            stage: "labels".into(),
            task: "exam_verdict".into(),
            projected: true,
            calls: (10, 12),
            input_tokens: (1000, 1100),
            cached_input_tokens: (0, 0),
            output_tokens: (50, 40),
            usd: (1.0, 1.2),
        }];
        let body = funnel(&data);
        assert!(body.contains("calls quoted / actual"), "{body}");
        assert!(body.contains("10 / 12") && body.contains("+20%") && body.contains("projected"));
    }

    fn sections(page: &str) -> BTreeMap<String, String> {
        page.split("<section id=\"")
            .skip(1)
            .map(|part| {
                let (id, rest) = part.split_once('"').unwrap();
                let body = rest.split("</section>").next().unwrap();
                (id.to_string(), body.to_string())
            })
            .collect()
    }

    #[test]
    fn every_section_is_present_in_order_with_a_heading() {
        let page = render(&full());
        let found: Vec<String> = sections(&page).into_keys().collect();
        let mut expected: Vec<String> = SECTION_IDS.iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(found, expected);
        let positions: Vec<usize> = SECTION_IDS
            .iter()
            .map(|id| page.find(&format!("<section id=\"{id}\">")).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
        for (id, body) in sections(&page) {
            assert!(body.contains("<h2>"), "{id} has no heading");
            assert!(!body.contains(NO_DATA), "{id} says no data: {body}");
        }
    }

    #[test]
    fn every_figure_has_a_caption_and_an_inline_svg() {
        let page = render(&full());
        let figures = page.matches("<figure>").count();
        // funnel 1, labels 1, documents 2, credibility 2, chunks 1, graph 1, patterns 1,
        // questions 1, perturbations 2.
        assert_eq!(figures, 12);
        assert_eq!(page.matches("<figcaption>").count(), figures);
        assert_eq!(page.matches("<svg").count(), figures);
        for fig in page.split("<figure>").skip(1) {
            let fig = fig.split("</figure>").next().unwrap();
            let caption = fig.split("<figcaption>").nth(1).unwrap();
            assert!(
                caption.trim_end_matches("</figcaption>\n").len() > 10,
                "{fig}"
            );
        }
    }

    /// Every attribute value of `name` in the page.
    fn attributes<'a>(page: &'a str, name: &str) -> Vec<&'a str> {
        page.split(&format!(" {name}=\""))
            .skip(1)
            .map(|rest| &rest[..rest.find('"').unwrap()])
            .collect()
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for data in [full(), ReportData::default()] {
            let page = render(&data);
            let lower = page.to_lowercase();
            assert!(!lower.contains("<script"));
            // Addresses appear only as escaped text (a document's address), never in markup
            // that loads or links: no src, no link element, only in-page anchors.
            assert!(!lower.contains(" src=") && !lower.contains("<link"));
            assert!(!lower.contains("<img") && !lower.contains("<iframe"));
            assert!(!lower.contains("@import") && !lower.contains("url("));
            assert!(
                attributes(&page, "href").iter().all(|h| h.starts_with('#')),
                "{:?}",
                attributes(&page, "href")
            );
            for tag in page.split('<').skip(1) {
                let tag = tag.split('>').next().unwrap();
                assert!(!tag.contains("://"), "an address in markup: <{tag}>");
            }
        }
    }

    #[test]
    fn sampled_items_show_every_part_escaped_and_folded() {
        let page = render(&full());
        let s = sections(&page);
        let claims = &s["claim-items"];
        assert_eq!(claims.matches("<details class=\"item\"").count(), 3);
        assert_eq!(
            claims
                .matches("data-kind=\"claim\" data-stratum=\"false / misleading\"")
                .count(),
            // the stratum's div and its two items
            3
        );
        assert!(claims.contains("The &lt;deficit&gt; doubled &amp; more."));
        assert!(!claims.contains("<deficit>"));
        assert!(claims.contains(
            "<code class=\"cmd\">noisebench inspect claim cl_1 --pipeline pipelines/demo.toml</code>"
        ));
        assert!(claims.contains("noisebench inspect document doc_2"));
        assert!(
            claims.contains("https://example.org/1"),
            "addresses as text"
        );
        assert!(claims.contains("2 of 2 pairs shown"));
        let q = &s["question-items"];
        assert!(q.contains("<mark>Net sales grew 5% in 2023 to $10 million.</mark>"));
        assert!(q.contains(
            "grew <del>5%</del> in <del>2023 to $10 million.</del> <ins>2023.</ins> Other"
        ));
        // A translation of an answer chunk: the perturbed text, the original being above.
        assert!(
            q.contains("the original is its answer chunk above") && q.contains("Perturbed chunk")
        );
        assert!(!q.contains("Original chunk"));
        // A perturbation that changed nothing says so instead of repeating the text.
        let identity = q
            .split("<span class=\"badge\">identity</span>")
            .nth(1)
            .unwrap();
        let identity = identity.split("</details>").next().unwrap();
        assert!(identity.contains("unchanged: the same words as the original"));
        assert!(
            !identity.contains("Acme Corp reported revenue"),
            "{identity}"
        );
        assert!(
            q.contains("<td class=\"hit\">hit</td>") && q.contains("<td class=\"miss\">miss</td>")
        );
        assert!(q.contains("noisebench inspect question q_1"));
        let d = &s["drop-items"];
        assert!(d.contains("`2023-13-01` is not a date &lt;sic&gt;"));
        assert!(d.contains("noisebench inspect stage claims --pipeline pipelines/demo.toml"));
        // Items are folded: no item is open when the page loads.
        assert!(!page.contains("<details class=\"item\" open"));
    }

    #[test]
    fn an_empty_snapshot_says_no_data_in_every_section_but_the_overview() {
        let data = ReportData {
            overview: Overview {
                dataset: "empty".into(),
                version: "1.0.0".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let page = render(&data);
        for (id, body) in sections(&page) {
            assert!(body.contains(NO_DATA), "{id}: {body}");
        }
        assert_eq!(page.matches("<figure>").count(), 0);
    }

    #[test]
    fn tables_hold_the_numbers_in_reading_order() {
        let page = render(&full());
        let s = sections(&page);
        // Table 3a: verdicts as rows, labels as columns, a total.
        assert!(s["labels"].contains(
            "<tr><td>true</td><td class=\"n\">1</td><td class=\"n\">0</td><td class=\"n\">4</td><td class=\"n\">5</td></tr>"
        ), "{}", s["labels"]);
        // Table 7: every RARE row, in RARE's order, domains as columns.
        let p = &s["patterns"];
        let order: Vec<usize> = ["single-hop", "chained", "star<", "inverted star"]
            .iter()
            .map(|n| p.find(&format!("<td>{n}")).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{p}");
        assert!(p.contains(
            "<td>star</td><td class=\"n\">1</td><td class=\"n\">2</td><td class=\"n\">3</td>"
        ));
        // Retrieval: group `all` before the kinds.
        let r = &s["retrieval"];
        assert!(r.find("<td>all</td>").unwrap() < r.find("<td>single_hop</td>").unwrap());
        assert!(s["graph"].contains("75.0%"));
        assert!(s["evals"].contains("0.250 to 0.750"));
        assert!(s["changes"].contains("Against version 1.0.0"));
        assert!(
            s["changes"].contains(
                "<td>exports/confact/confact.json</td><td>changed</td><td class=\"n\">7</td><td class=\"n\">5</td>"
            ),
            "{}",
            s["changes"]
        );
        assert!(
            s["overview"]
                .contains("<tr><td>chunks</td><td class=\"n\">4</td><td class=\"n\">-</td></tr>"),
            "{}",
            s["overview"]
        );
    }

    #[test]
    fn text_is_escaped() {
        let mut data = full();
        data.overview.dataset = "<b>&x".into();
        let page = render(&data);
        assert!(page.contains("&lt;b&gt;&amp;x"));
        assert!(!page.contains("<b>&x"));
    }

    #[test]
    fn rendering_is_deterministic() {
        assert!(render(&full()) == render(&full()));
    }
}
