//! `report`: a published version's HTML report (through `noisebench-report`), written beside
//! the version folder, never inside it (published versions are immutable).
//!
//! What the page shows comes from the version itself: its manifest (tables, row counts,
//! provenance facts), its tables (read by name, else by kind), its card's construction table
//! (the only place a published version records the run summary: items in, out and dropped per
//! stage), `changes.json`, the parent version's manifest when the parent is published beside it,
//! and the evaluation results under `<evals>/<dataset>@<version>/*/metrics.parquet`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_core::{
    Alias, Chunk, Claim, ClaimDocument, ClaimDocumentLabel, DEFAULT_PER_STRATUM, Document,
    DocumentCredibility, DocumentPerturbation, DropRecord, Entity, Metric, Pattern, Query,
    QueryPerturbation, Question, QuestionJudgement, QuestionSplit, Report, Retrieval, TableRow,
    Triplet,
};
use noisebench_pipeline::{atomic, table_io};
use noisebench_report::{
    Changes, EvalRow, Graph, ItemRows, MetricRow, Overview, ReportData, StageFunnel, TableChange,
};
use noisebench_snapshot::Manifest;

/// The report's file name beside the version folder: `<version>.report.html`.
pub fn report_path(version_dir: &Path, version: &str) -> PathBuf {
    version_dir
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("{version}.report.html"))
}

/// Write the report of the published version at `version_dir` to `out` (default
/// `snapshots/<dataset>/<version>.report.html`, beside the version folder), including the
/// evaluation results under `evals_dir` when given. Returns the path written.
pub fn write_report(
    version_dir: &Path,
    evals_dir: Option<&Path>,
    out: Option<&Path>,
) -> Result<PathBuf> {
    write_report_sampled(version_dir, evals_dir, out, DEFAULT_PER_STRATUM)
}

/// [`write_report`] with `per_stratum` sampled items per stratum (0: every item).
pub fn write_report_sampled(
    version_dir: &Path,
    evals_dir: Option<&Path>,
    out: Option<&Path>,
    per_stratum: usize,
) -> Result<PathBuf> {
    let data = report_data_sampled(version_dir, evals_dir, per_stratum)?;
    let path = match out {
        Some(p) => p.to_path_buf(),
        None => report_path(version_dir, &data.overview.version),
    };
    let page = noisebench_report::render(&data);
    atomic::write_atomic(&path, page.as_bytes()).with_context(|| path.display().to_string())?;
    Ok(path)
}

/// Everything the report shows about the version at `version_dir`.
pub fn report_data(version_dir: &Path, evals_dir: Option<&Path>) -> Result<ReportData> {
    report_data_sampled(version_dir, evals_dir, DEFAULT_PER_STRATUM)
}

/// [`report_data`] with `per_stratum` sampled items per stratum.
pub fn report_data_sampled(
    version_dir: &Path,
    evals_dir: Option<&Path>,
    per_stratum: usize,
) -> Result<ReportData> {
    let version = noisebench_snapshot::PublishedVersion::open(version_dir)?;
    let manifest = version.manifest().clone();
    let snapshot = Tables(&version);
    let fact = |stage: &str, key: &str| {
        manifest
            .provenance
            .get(&format!("facts:{stage}"))
            .and_then(|f| f.get("data"))
            .and_then(|d| d.get(key))
            .cloned()
    };

    let overview = overview(&manifest, version_dir);
    let mut data = ReportData {
        overview,
        stages: stages(&manifest, version_dir)?,
        ..Default::default()
    };

    // Claims track.
    let claims: Vec<Claim> = snapshot.read()?;
    let labels: Vec<ClaimDocumentLabel> = snapshot.read()?;
    let claim_documents: Vec<ClaimDocument> = snapshot.read()?;
    let documents: Vec<Document> = snapshot.read()?;
    let credibility: Vec<DocumentCredibility> = snapshot.read()?;
    claims_track(
        &mut data,
        &claims,
        &labels,
        &claim_documents,
        &documents,
        &credibility,
    );

    // Report track.
    let chunks: Vec<Chunk> = snapshot.read()?;
    data.chunk_tokens = chunks.iter().map(|c| c.token_count as f64).collect();
    let triplets: Vec<Triplet> = snapshot.read()?;
    data.graph = graph(&snapshot, &triplets, fact)?;
    let patterns: Vec<Pattern> = snapshot.read()?;
    data.patterns = pattern_domains(&snapshot, &patterns)?;

    let question_splits: Vec<QuestionSplit> = snapshot.read()?;
    let questions: Vec<Question> = snapshot.read()?;
    let judgements: Vec<QuestionJudgement> = snapshot.read()?;
    questions_track(&mut data, &question_splits, &questions, &judgements);
    let query_perturbations: Vec<QueryPerturbation> = snapshot.read()?;
    let document_perturbations: Vec<DocumentPerturbation> = snapshot.read()?;
    perturbations(&mut data, &query_perturbations, &document_perturbations);
    data.retrieval = snapshot
        .read::<Metric>()?
        .into_iter()
        .map(|m| MetricRow {
            scope: m.scope,
            group: m.group,
            metric: m.metric,
            k: m.k,
            value: m.value,
            n: m.n,
        })
        .collect();

    if let Some(evals) = evals_dir {
        data.evals = eval_rows(&evals.join(format!("{}@{}", manifest.dataset, manifest.version)))?;
    }
    data.changes = changes(version_dir)?;

    // Sampled items end to end (noisebench-report's `sample_items`).
    let queries: Vec<Query> = snapshot.read()?;
    let retrievals: Vec<Retrieval> = snapshot.read()?;
    let stage_ids: Vec<&str> = data
        .stages
        .iter()
        .flatten()
        .map(|s| s.id.as_str())
        .collect();
    let drops = run_drops(version_dir, &manifest, &stage_ids);
    let rows = ItemRows {
        claims: &claims,
        queries: &queries,
        documents: &documents,
        claim_documents: &claim_documents,
        labels: &labels,
        credibility: &credibility,
        chunks: &chunks,
        triplets: &triplets,
        patterns: &patterns,
        questions: &questions,
        judgements: &judgements,
        splits: &question_splits,
        query_perturbations: &query_perturbations,
        document_perturbations: &document_perturbations,
        retrievals: &retrievals,
        drops: drops.as_deref(),
    };
    let pipeline_file = format!("pipelines/{}.toml", manifest.pipeline);
    data.samples = noisebench_report::sample_items(&rows, per_stratum, &pipeline_file);
    Ok(data)
}

/// What the version is, its tables' rows, and its parent's.
fn overview(manifest: &Manifest, version_dir: &Path) -> Overview {
    let parent_tables = manifest.parent.as_ref().and_then(|parent| {
        let dir = version_dir.parent()?.join(parent);
        let m = Manifest::read(&dir).ok()?;
        Some(m.tables.iter().map(|(n, e)| (n.clone(), e.rows)).collect())
    });
    Overview {
        dataset: manifest.dataset.clone(),
        version: manifest.version.clone(),
        parent: manifest.parent.clone(),
        created_at: manifest.created_at.clone(),
        pipeline: manifest.pipeline.clone(),
        code_version: manifest.code_version.clone(),
        tables: manifest
            .tables
            .iter()
            .map(|(n, e)| (n.clone(), e.rows))
            .collect(),
        parent_tables,
    }
}

/// The claims track's figures: labels by verdict, documents per claim, document length,
/// credibility and source types.
fn claims_track(
    data: &mut ReportData,
    claims: &[Claim],
    labels: &[ClaimDocumentLabel],
    claim_documents: &[ClaimDocument],
    documents: &[Document],
    credibility: &[DocumentCredibility],
) {
    let verdicts: BTreeMap<&str, &str> = claims
        .iter()
        .map(|c| (c.id.as_str(), c.verdict.as_str()))
        .collect();
    for l in labels {
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
    let mut per_claim: BTreeMap<&str, u64> = claims.iter().map(|c| (c.id.as_str(), 0)).collect();
    for cd in claim_documents {
        if let Some(n) = per_claim.get_mut(cd.claim_id.as_str()) {
            *n += 1;
        }
    }
    data.documents_per_claim = per_claim.values().map(|n| *n as f64).collect();
    data.document_words = documents
        .iter()
        .map(|d| d.text.split_whitespace().count() as f64)
        .collect();
    for c in credibility {
        let level = c.credibility.as_deref().unwrap_or("none");
        *data.credibility.entry(level.to_string()).or_default() += 1;
        *data.source_types.entry(c.source_type.clone()).or_default() += 1;
    }
    // Without the labels stage's settled source types, the documents' own.
    if credibility.is_empty() {
        for d in documents {
            *data.source_types.entry(d.source_type.clone()).or_default() += 1;
        }
    }
}

/// The graph's figures: triplets per report, grounding, relation merging, entities, aliases.
fn graph(
    snapshot: &Tables<'_>,
    triplets: &[Triplet],
    fact: impl Fn(&str, &str) -> Option<serde_json::Value>,
) -> Result<Graph> {
    let mut graph = Graph::default();
    for t in triplets {
        *graph
            .triplets_per_report
            .entry(t.report_id.clone())
            .or_default() += 1;
    }
    graph.grounding_rate = fact("triplets", "grounding_rate").and_then(|v| v.as_f64());
    graph.relations_before_after = fact("graph", "relations_before")
        .and_then(|v| v.as_i64())
        .zip(fact("graph", "relations_after").and_then(|v| v.as_i64()));
    let entities: Vec<Entity> = snapshot.read()?;
    graph.entities = entities.len() as u64;
    graph.cross_report_entities = entities.iter().filter(|e| e.report_ids.len() > 1).count() as u64;
    for a in snapshot.read::<Alias>()? {
        *graph
            .aliases
            .entry(a.kind)
            .or_default()
            .entry(a.rule)
            .or_default() += 1;
    }
    Ok(graph)
}

/// Patterns by kind and by the domain of their reports (`mixed` across domains).
fn pattern_domains(
    snapshot: &Tables<'_>,
    patterns: &[Pattern],
) -> Result<BTreeMap<String, BTreeMap<String, u64>>> {
    let domains: BTreeMap<String, String> = snapshot
        .read::<Report>()?
        .into_iter()
        .map(|r| (r.id, r.domain))
        .collect();
    let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for p in patterns {
        let of: BTreeSet<&str> = p
            .report_ids
            .iter()
            .map(|r| domains.get(r).map(String::as_str).unwrap_or("unknown"))
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
    Ok(counts)
}

/// Questions by kind and split, and the judge's scores.
fn questions_track(
    data: &mut ReportData,
    question_splits: &[QuestionSplit],
    questions: &[Question],
    judgements: &[QuestionJudgement],
) {
    let splits: BTreeMap<&str, &str> = question_splits
        .iter()
        .map(|s| (s.question_id.as_str(), s.split.as_str()))
        .collect();
    for q in questions {
        let split = splits.get(q.id.as_str()).copied().unwrap_or("unsplit");
        *data
            .questions
            .entry(q.kind.clone())
            .or_default()
            .entry(split.to_string())
            .or_default() += 1;
    }
    for j in judgements {
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
    document_perturbations: &[DocumentPerturbation],
) {
    for q in query_perturbations {
        data.query_similarity.push(q.similarity);
        *data
            .query_perturbation_kinds
            .entry(q.kind.clone())
            .or_default() += 1;
    }
    for d in document_perturbations {
        data.document_similarity.extend(d.similarity);
        *data
            .document_perturbation_kinds
            .entry(d.kind.clone())
            .or_default() += 1;
    }
}

/// The drops of the run that built the version: `<root>/work/<pipeline>/<stage>/drops.parquet`
/// of each of its stages, when that run folder still holds every table the version published
/// (each one's sha256 among the stages' records); `None` otherwise, as published versions hold
/// no drops.
fn run_drops(version_dir: &Path, manifest: &Manifest, stages: &[&str]) -> Option<Vec<DropRecord>> {
    let run_dir = version_dir
        .parent()?
        .parent()?
        .parent()?
        .join("work")
        .join(&manifest.pipeline);
    let records: Vec<(&str, noisebench_pipeline::runner::StageRecord)> = stages
        .iter()
        .filter_map(|s| {
            Some((
                *s,
                noisebench_pipeline::runner::read_record(&run_dir.join(s))?,
            ))
        })
        .collect();
    let written: BTreeSet<&str> = records
        .iter()
        .flat_map(|(_, r)| r.tables.values().map(|t| t.sha256.as_str()))
        .collect();
    if stages.is_empty()
        || !manifest
            .tables
            .values()
            .all(|t| written.contains(t.sha256.as_str()))
    {
        return None;
    }
    let mut drops = Vec::new();
    for (stage, record) in &records {
        if let Some(file) = record.tables.get("drops") {
            let path = run_dir.join(stage).join(&file.file);
            drops.extend(table_io::read_rows::<DropRecord>(&path).ok()?);
        }
    }
    Some(drops)
}

/// A published version's tables, read typed ([`noisebench_snapshot::PublishedVersion`]).
struct Tables<'a>(&'a noisebench_snapshot::PublishedVersion);

impl Tables<'_> {
    /// The rows of the table of `T`'s kind; none when the version does not publish it.
    fn read<T: TableRow>(&self) -> Result<Vec<T>> {
        Ok(self.0.read::<T>()?.unwrap_or_default())
    }
}

/// The stages' funnel: the manifest's `stages`, or for a version published before the manifest
/// held them, the card's construction table.
fn stages(manifest: &Manifest, version_dir: &Path) -> Result<Option<Vec<StageFunnel>>> {
    if manifest.stages.is_empty() {
        return card_stages(version_dir);
    }
    Ok(Some(
        manifest
            .stages
            .iter()
            .map(|s| StageFunnel {
                id: s.id.clone(),
                kind: s.kind.clone(),
                items_in: s.items_in,
                items_out: s.items_out,
                dropped: s.items_dropped,
                drop_reasons: s.drop_reasons.clone(),
            })
            .collect(),
    ))
}

/// The stages' funnel from the card's construction table (where versions published before
/// `manifest.json` held the run summary keep it); `None` when the card has no such table.
fn card_stages(version_dir: &Path) -> Result<Option<Vec<StageFunnel>>> {
    let path = version_dir.join("README.md");
    if !path.is_file() {
        return Ok(None);
    }
    let card = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    Ok(parse_construction_table(&card))
}

/// The rows of the card's `| stage | kind | in | out | dropped | drop reasons |` table.
fn parse_construction_table(card: &str) -> Option<Vec<StageFunnel>> {
    let mut lines = card
        .lines()
        .skip_while(|l| !l.starts_with("| stage | kind | in | out | dropped |"));
    lines.next()?;
    let stages = lines
        .skip(1) // the |---| separator
        .take_while(|l| l.starts_with('|'))
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let [id, kind, items_in, items_out, dropped, reasons] = cells.as_slice() else {
                return None;
            };
            let drop_reasons = reasons
                .split(", ")
                .filter_map(|r| {
                    let (reason, n) = r.rsplit_once(": ")?;
                    Some((reason.to_string(), n.parse().ok()?))
                })
                .collect();
            Some(StageFunnel {
                id: id.to_string(),
                kind: kind.to_string(),
                items_in: items_in.parse().ok()?,
                items_out: items_out.parse().ok()?,
                dropped: dropped.parse().ok()?,
                drop_reasons,
            })
        })
        .collect();
    Some(stages)
}

/// The evaluation metrics to show: accuracy and robustness over all items.
const EVAL_METRICS: [&str; 2] = ["accuracy", "robustness"];

/// Accuracy and robustness rows of group `all` of every run folder under `dir` (none when the
/// folder does not exist), runs in name order.
fn eval_rows(dir: &Path) -> Result<Vec<EvalRow>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut runs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(crate::METRICS_FILE).is_file())
        .collect();
    runs.sort();
    let mut rows = Vec::new();
    for run in runs {
        let path = run.join(crate::METRICS_FILE);
        let name = run
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let metrics: Vec<Metric> =
            table_io::read_rows(&path).with_context(|| path.display().to_string())?;
        rows.extend(
            metrics
                .into_iter()
                .filter(|m| m.group == "all" && EVAL_METRICS.contains(&m.metric.as_str()))
                .map(|m| EvalRow {
                    run: name.clone(),
                    task: m.task,
                    metric: m.metric,
                    value: m.value,
                    ci: m.ci_low.zip(m.ci_high),
                    n: m.n,
                }),
        );
    }
    Ok(rows)
}

/// The version's `changes.json`, per table; `None` when the version has none.
fn changes(version_dir: &Path) -> Result<Option<Changes>> {
    let path = version_dir.join("changes.json");
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(&path).with_context(|| path.display().to_string())?;
    let changes: noisebench_snapshot::Changes =
        serde_json::from_slice(&bytes).with_context(|| path.display().to_string())?;
    let status = |t: &noisebench_snapshot::TableChanges| {
        if t.table_added {
            Some("added".to_string())
        } else if t.table_removed {
            Some("removed".to_string())
        } else {
            None
        }
    };
    Ok(Some(Changes {
        from: changes.from.clone(),
        tables: changes
            .tables
            .iter()
            .map(|(name, t)| TableChange {
                table: name.clone(),
                rows_before: t.rows_before,
                rows_after: t.rows_after,
                added: t.added.len() as u64,
                removed: t.removed.len() as u64,
                changed: t.changed.len() as u64,
                table_status: status(t),
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_construction_table_reads_back_as_stages() {
        let card = "## Construction\n\nStages:\n\n\
            | stage | kind | in | out | dropped | drop reasons |\n|---|---|---:|---:|---:|---|\n\
            | claims | claims-import | 65 | 53 | 12 | bad_date: 2, empty_claim: 10 |\n\
            | labels | labels | 518 | 518 | 0 |  |\n\nLLM layer: ...\n";
        let stages = parse_construction_table(card).unwrap();
        assert_eq!(stages.len(), 2);
        assert_eq!(stages[0].id, "claims");
        assert_eq!(
            (stages[0].items_in, stages[0].items_out, stages[0].dropped),
            (65, 53, 12)
        );
        assert_eq!(stages[0].drop_reasons["empty_claim"], 10);
        assert!(stages[1].drop_reasons.is_empty());
        assert_eq!(parse_construction_table("# a card without one\n"), None);
    }

    #[test]
    fn the_report_goes_beside_the_version_folder() {
        assert_eq!(
            report_path(Path::new("snapshots/demo/1.2.0"), "1.2.0"),
            Path::new("snapshots/demo/1.2.0.report.html")
        );
    }
}
