//! [`report_data`]: everything the page shows about a published version, read from the version
//! itself (feature `read`): its manifest (tables, row counts, the run's stage counts,
//! provenance facts), its tables (typed, through `noisebench_snapshot::PublishedVersion`),
//! `changes.json`, the parent version's manifest when the parent is published beside it, the
//! drops of the run that built it when its run folder is still there, and evaluation results.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use noisebench_core::{DropRecord, Metric, Report, TableKind, TableRow};
use noisebench_pipeline::{runner, table_io};
use noisebench_snapshot::{Manifest, PublishedVersion, VersionError};

use crate::aggregate::{GraphFacts, VersionRows, aggregate, eval_rows};
use crate::items::{ItemRows, sample_items};
use crate::{Changes, ExportChange, Overview, ReportData, StageFunnel, TableChange};

/// Why a version's report data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Version(#[from] VersionError),
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
}

impl ReadError {
    fn file(path: &Path, message: impl ToString) -> ReadError {
        ReadError::File {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }
}

/// Where evaluation results live: `<dir>/<dataset>@<version>/<run>/<metrics_file>`, one run
/// per folder (the `eval` command's layout).
#[derive(Debug, Clone, Copy)]
pub struct EvalResults<'a> {
    pub dir: &'a Path,
    pub metrics_file: &'a str,
}

/// Everything the report shows about the version at `version_dir` (a version folder, or a
/// dataset folder's latest version), with `per_stratum` sampled items per stratum (0: every
/// item) and the evaluation results under `evals` when given.
pub fn report_data(
    version_dir: &Path,
    evals: Option<EvalResults<'_>>,
    per_stratum: usize,
) -> Result<ReportData, ReadError> {
    let version = PublishedVersion::open(version_dir)?;
    let manifest = version.manifest();
    let mut rows = version_rows(&version)?;
    let mut data = ReportData {
        overview: overview(manifest, version.dir()),
        stages: stages(manifest),
        quote: quote_lines(manifest),
        ..Default::default()
    };
    aggregate(&mut data, &rows, graph_facts(manifest));
    if let Some(evals) = evals {
        let dir = evals
            .dir
            .join(format!("{}@{}", manifest.dataset, manifest.version));
        data.evals = read_evals(&dir, evals.metrics_file)?;
    }
    data.changes = changes(version.dir())?;
    data.quality = quality(version.dir())?;

    // Sampled items end to end (`sample_items`). The two largest tables (a million retrievals,
    // every perturbed chunk's text) are read for the sampled questions alone.
    let sampled: BTreeSet<String> =
        noisebench_core::sample_questions(&rows.questions, &rows.question_splits, per_stratum)
            .iter()
            .flat_map(|s| s.items.iter().map(|q| q.id.clone()))
            .collect();
    let of_sampled = |question: Option<&str>| question.is_some_and(|q| sampled.contains(q));
    rows.document_perturbations = version.read_where("question_id", of_sampled)?;
    rows.retrievals = version.read_where("question_id", of_sampled)?;
    let stage_ids: Vec<&str> = manifest.stages.iter().map(|s| s.id.as_str()).collect();
    let drops = run_drops(version.dir(), manifest, &stage_ids);
    let items = ItemRows {
        claims: &rows.claims,
        queries: &rows.queries,
        documents: &rows.documents,
        claim_documents: &rows.claim_documents,
        labels: &rows.labels,
        credibility: &rows.credibility,
        chunks: &rows.chunks,
        triplets: &rows.triplets,
        patterns: &rows.patterns,
        questions: &rows.questions,
        judgements: &rows.judgements,
        splits: &rows.question_splits,
        query_perturbations: &rows.query_perturbations,
        document_perturbations: &rows.document_perturbations,
        retrievals: &rows.retrievals,
        drops: drops.as_deref(),
    };
    let pipeline_file = format!("pipelines/{}.toml", manifest.pipeline);
    data.samples = sample_items(&items, per_stratum, &pipeline_file);
    Ok(data)
}

/// The rows of every table the page shows; none for a table the version does not publish.
fn version_rows(version: &PublishedVersion) -> Result<VersionRows, VersionError> {
    fn read<T: TableRow>(version: &PublishedVersion) -> Result<Vec<T>, VersionError> {
        Ok(version.read::<T>()?.unwrap_or_default())
    }
    // Of the reports, their ids and domains (the page shows no report's text).
    let reports = version
        .string_columns(TableKind::Reports, &["id", "domain"])?
        .map(|columns| {
            let [ids, domains] = <[_; 2]>::try_from(columns).unwrap_or_default();
            ids.into_iter()
                .zip(domains)
                .map(|(id, domain)| Report {
                    id: id.unwrap_or_default(),
                    domain: domain.unwrap_or_default(),
                    ..Report::default()
                })
                .collect()
        })
        .unwrap_or_default();
    // Of the document perturbations, each one's kind and similarity; their rows are read later,
    // for the sampled questions.
    let kinds = version.string_columns(TableKind::DocumentPerturbations, &["kind"])?;
    let similarities = version.float_column(TableKind::DocumentPerturbations, "similarity")?;
    let document_perturbation_kinds = kinds
        .and_then(|mut c| c.pop())
        .unwrap_or_default()
        .into_iter()
        .map(Option::unwrap_or_default)
        .zip(similarities.unwrap_or_default())
        .collect();
    Ok(VersionRows {
        claims: read(version)?,
        labels: read(version)?,
        claim_documents: read(version)?,
        documents: read(version)?,
        credibility: read(version)?,
        queries: read(version)?,
        reports,
        chunks: read(version)?,
        triplets: read(version)?,
        entities: read(version)?,
        aliases: read(version)?,
        patterns: read(version)?,
        question_splits: read(version)?,
        questions: read(version)?,
        judgements: read(version)?,
        query_perturbations: read(version)?,
        document_perturbation_kinds,
        document_perturbations: Vec::new(),
        retrievals: Vec::new(),
        metrics: read(version)?,
    })
}

/// What the triplets and graph stages recorded (`provenance["facts:<stage>"].data`).
fn graph_facts(manifest: &Manifest) -> GraphFacts {
    let fact = |stage: &str, key: &str| {
        manifest
            .provenance
            .get(&format!("facts:{stage}"))
            .and_then(|f| f.get("data"))
            .and_then(|d| d.get(key))
            .cloned()
    };
    GraphFacts {
        grounding_rate: fact("triplets", "grounding_rate").and_then(|v| v.as_f64()),
        relations_before_after: fact("graph", "relations_before")
            .and_then(|v| v.as_i64())
            .zip(fact("graph", "relations_after").and_then(|v| v.as_i64())),
    }
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

/// The quote beside the build's actual LLM use (`provenance.llm.quote`): its rows, then its
/// total; empty when the build did not quote.
fn quote_lines(manifest: &Manifest) -> Vec<crate::QuoteLine> {
    let Some(quote) = manifest.provenance.get("llm").map(|l| &l["quote"]) else {
        return Vec::new();
    };
    let line = |r: &serde_json::Value| {
        let n = |k: &str| r[k].as_u64().unwrap_or(0);
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        crate::QuoteLine {
            stage: r["stage"].as_str().unwrap_or("").to_string(),
            task: r["task"].as_str().unwrap_or("").to_string(),
            projected: r["projected"].as_bool().unwrap_or(false),
            calls: (n("quoted_calls"), n("actual_calls")),
            input_tokens: (n("quoted_input_tokens"), n("actual_input_tokens")),
            cached_input_tokens: (
                n("quoted_cached_input_tokens"),
                n("actual_cached_input_tokens"),
            ),
            output_tokens: (n("quoted_output_tokens"), n("actual_output_tokens")),
            usd: (f("quoted_usd"), f("actual_usd")),
        }
    };
    let mut lines: Vec<crate::QuoteLine> = quote["rows"]
        .as_array()
        .map(|rows| rows.iter().map(line).collect())
        .unwrap_or_default();
    if quote["total"].is_object() {
        lines.push(line(&quote["total"]));
    }
    lines
}

/// The stages' funnel from the manifest's `stages` (the run summary as data); `None` ("no
/// data" on the page) for a version published before the manifest held them.
fn stages(manifest: &Manifest) -> Option<Vec<StageFunnel>> {
    if manifest.stages.is_empty() {
        return None;
    }
    Some(
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
    )
}

/// The drops of the run that built the version: `<root>/work/<pipeline>/<stage>/drops.parquet`
/// of each of its stages, when that run folder still holds every table the version published
/// (each one's sha256 among the stages' records); `None` otherwise (no stage record found, even
/// for a version without tables), as published versions hold no drops.
fn run_drops(version_dir: &Path, manifest: &Manifest, stages: &[&str]) -> Option<Vec<DropRecord>> {
    let run_dir = version_dir
        .parent()?
        .parent()?
        .parent()?
        .join("work")
        .join(&manifest.pipeline);
    let records: Vec<(&str, runner::StageRecord)> = stages
        .iter()
        .filter_map(|s| Some((*s, runner::read_record(&run_dir.join(s))?)))
        .collect();
    let written: BTreeSet<&str> = records
        .iter()
        .flat_map(|(_, r)| r.tables.values().map(|t| t.sha256.as_str()))
        .collect();
    if records.is_empty()
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

/// The evaluation rows of every run folder under `dir` that holds `metrics_file` (none when
/// the folder does not exist), runs in name order.
fn read_evals(dir: &Path, metrics_file: &str) -> Result<Vec<crate::EvalRow>, ReadError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut runs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(metrics_file).is_file())
        .collect();
    runs.sort();
    let mut rows = Vec::new();
    for run in runs {
        let path = run.join(metrics_file);
        let name = run
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let metrics: Vec<Metric> =
            table_io::read_rows(&path).map_err(|e| ReadError::file(&path, e))?;
        rows.extend(eval_rows(&name, metrics));
    }
    Ok(rows)
}

/// The version's `changes.json`, per table; `None` when the version has none.
/// The quality card's headline numbers, when the version has a `quality.json`.
fn quality(version_dir: &Path) -> Result<Vec<(String, String)>, ReadError> {
    let path = version_dir.join(noisebench_quality::QUALITY_FILE);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let bytes = std::fs::read(&path).map_err(|e| ReadError::file(&path, e))?;
    let report: noisebench_quality::QualityReport =
        serde_json::from_slice(&bytes).map_err(|e| ReadError::file(&path, e))?;
    Ok(noisebench_quality::headline(&report))
}

fn changes(version_dir: &Path) -> Result<Option<Changes>, ReadError> {
    let path = version_dir.join("changes.json");
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(&path).map_err(|e| ReadError::file(&path, e))?;
    let changes: noisebench_snapshot::Changes =
        serde_json::from_slice(&bytes).map_err(|e| ReadError::file(&path, e))?;
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
        exports: changes
            .exports
            .iter()
            .map(|(file, e)| ExportChange {
                file: file.clone(),
                status: e.status.clone(),
                bytes_before: e.bytes_before,
                bytes_after: e.bytes_after,
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A `manifest.json` without tables: `version` of dataset `demo`, `extra` merged in.
    fn manifest(version: &str, extra: serde_json::Value) -> String {
        let mut m = serde_json::json!({
            "dataset": "demo",
            "version": version,
            "parent": null,
            "created_at": "2026-11-27T10:00:00Z",
            "pipeline": "demo",
            "config_hash": "c0ffee",
            "code_version": "0.1.0",
            "tables": {}
        });
        for (k, v) in extra.as_object().unwrap() {
            m[k] = v.clone();
        }
        m.to_string()
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_version_reads_its_overview_funnel_facts_and_changes_from_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dataset = tmp.path().join("snapshots/demo");
        let table = |rows: u64| {
            serde_json::json!({
                "file": "data/claims.parquet", "kind": "claims", "sha256": "ab", "rows": rows,
                "bytes": 10, "schema_version": 1, "schema_fingerprint": "f"
            })
        };
        write(
            &dataset.join("1.0.0/manifest.json"),
            &manifest("1.0.0", serde_json::json!({"tables": {"claims": table(4)}})),
        );
        // The version's own tables are not read here (no table of any kind is published: the
        // table reads are the cli's end-to-end tests'); only its manifest's other parts.
        write(
            &dataset.join("1.1.0/manifest.json"),
            &manifest(
                "1.1.0",
                serde_json::json!({
                    "parent": "1.0.0",
                    "provenance": {
                        "facts:triplets": {"data": {"grounding_rate": 0.8}},
                        "facts:graph": {"data": {"relations_before": 12, "relations_after": 9}}
                    },
                    "stages": [
                        {"id": "claims", "kind": "claims-import", "items_in": 65, "items_out": 53,
                         "items_dropped": 12, "drop_reasons": {"bad_date": 2, "empty_claim": 10}},
                        {"id": "labels", "kind": "labels", "items_in": 518, "items_out": 518,
                         "items_dropped": 0}
                    ]
                }),
            ),
        );
        write(
            &dataset.join("1.1.0/changes.json"),
            &serde_json::json!({
                "from": "1.0.0", "to": "1.1.0",
                "tables": {
                    "claims": {"rows_before": 4, "rows_after": 5, "added": ["c5", "c6"],
                               "removed": ["c1"], "changed": ["c2"], "reserialised": false,
                               "table_added": false, "table_removed": false},
                    "questions": {"rows_before": 0, "rows_after": 3, "added": ["q1", "q2", "q3"],
                                  "removed": [], "changed": [], "reserialised": false,
                                  "table_added": true, "table_removed": false}
                },
                "exports": {
                    "exports/confact/confact.json": {"status": "added", "sha256_before": null,
                        "sha256_after": "ab", "bytes_before": null, "bytes_after": 9}
                }
            })
            .to_string(),
        );
        // An evaluation folder without the version's runs: no rows.
        let evals = tmp.path().join("evals");
        std::fs::create_dir_all(&evals).unwrap();
        let at = EvalResults {
            dir: &evals,
            metrics_file: "metrics.parquet",
        };

        // The dataset folder opens its latest version.
        let data = report_data(&dataset, Some(at), 5).unwrap();
        let o = &data.overview;
        assert_eq!(
            (o.version.as_str(), o.parent.as_deref()),
            ("1.1.0", Some("1.0.0"))
        );
        assert!(o.tables.is_empty());
        let parent: BTreeMap<String, u64> = [("claims".to_string(), 4)].into();
        assert_eq!(o.parent_tables, Some(parent));

        let stages = data.stages.as_ref().unwrap();
        assert_eq!(stages.len(), 2);
        assert_eq!(
            (stages[0].id.as_str(), stages[0].kind.as_str()),
            ("claims", "claims-import")
        );
        assert_eq!(
            (stages[0].items_in, stages[0].items_out, stages[0].dropped),
            (65, 53, 12)
        );
        assert_eq!(stages[0].drop_reasons["empty_claim"], 10);
        assert!(stages[1].drop_reasons.is_empty());

        assert_eq!(data.graph.grounding_rate, Some(0.8));
        assert_eq!(data.graph.relations_before_after, Some((12, 9)));
        assert!(data.evals.is_empty());

        let changes = data.changes.as_ref().unwrap();
        assert_eq!(changes.from.as_deref(), Some("1.0.0"));
        assert_eq!(
            changes.exports,
            vec![crate::ExportChange {
                file: "exports/confact/confact.json".into(),
                status: "added".into(),
                bytes_before: None,
                bytes_after: Some(9),
            }]
        );
        let claims = &changes.tables[0];
        assert_eq!(claims.table, "claims");
        assert_eq!(
            (claims.rows_before, claims.rows_after),
            (4, 5),
            "{claims:?}"
        );
        assert_eq!((claims.added, claims.removed, claims.changed), (2, 1, 1));
        assert_eq!(claims.table_status, None);
        assert_eq!(changes.tables[1].table_status.as_deref(), Some("added"));
        // No run folder beside the snapshots: no drops, and the page says why.
        assert!(data.samples.drops.is_empty());
        assert!(data.samples.drops_missing.is_some());
    }

    #[test]
    fn a_version_published_before_the_manifest_held_stages_has_no_funnel() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("snapshots/demo/1.0.0");
        write(
            &dir.join("manifest.json"),
            &manifest("1.0.0", serde_json::json!({})),
        );
        // A card with a construction table is not read back: the run summary is data or nothing.
        write(
            &dir.join("README.md"),
            "| stage | kind | in | out | dropped | drop reasons |\n|---|---|---:|---:|---:|---|\n\
             | claims | claims-import | 65 | 53 | 12 | empty_claim: 12 |\n",
        );
        let data = report_data(&dir, None, 5).unwrap();
        assert_eq!(data.stages, None);
        assert_eq!(data.changes, None);
        assert_eq!(data.overview.parent_tables, None);
    }

    #[test]
    fn an_unreadable_changes_file_names_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("1.0.0");
        write(
            &dir.join("manifest.json"),
            &manifest("1.0.0", serde_json::json!({})),
        );
        write(&dir.join("changes.json"), "{ not json");
        let err = report_data(&dir, None, 5).unwrap_err().to_string();
        assert!(err.contains("changes.json"), "{err}");
    }
}
