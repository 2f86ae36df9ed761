//! `croissant.json`: the version described in Croissant 1.1 (MLCommons' JSON-LD vocabulary for
//! ML datasets), so `mlcroissant` and the tools that read Croissant load the tables without glue.
//!
//! One `cr:FileObject` per Parquet file (relative `contentUrl`, sha256, size), one `cr:RecordSet`
//! per table with a `cr:Field` per schema column, a `cr:Split` record set naming the splits, and
//! the Responsible AI (`rai:`) and provenance (`prov:`) facts the build knows. It is written from
//! the manifest (before the manifest itself), so it says nothing the manifest does not back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use noisebench_core::{DType, TableKind};
use noisebench_pipeline::table_io;
use serde_json::{Value, json};

use types::{
    Dataset, Distribution, Entity, Extract, Field, FileObject, FileSet, Organization, PARQUET, Rai,
    RecordSet, Ref, References, Source, Transform,
};

use crate::manifest::Manifest;
use crate::request::PublishRequest;

pub(crate) const CONFORMS_TO: &str = "http://mlcommons.org/croissant/1.1";
/// The id of the record set listing the splits.
pub(crate) const SPLITS_RECORD_SET: &str = "splits";
const HOMEPAGE: &str = "https://github.com/noisebench/noisebench";

mod types;

pub(crate) struct CroissantInput<'a> {
    pub request: &'a PublishRequest,
    /// The manifest of the version, its tables and split files final.
    pub manifest: &'a Manifest,
    /// The folder holding the version's `data/`.
    pub dir: &'a Path,
}

/// The Croissant 1.1 `@context`, as the 1.1 examples of mlcommons/croissant write it, with the
/// `rai` and `prov` vocabularies this file uses.
fn context() -> Value {
    json!({
        "@language": "en",
        "@vocab": "https://schema.org/",
        "arrayShape": "cr:arrayShape",
        "citeAs": "cr:citeAs",
        "column": "cr:column",
        "conformsTo": "dct:conformsTo",
        "containedIn": "cr:containedIn",
        "cr": "http://mlcommons.org/croissant/",
        "data": {"@id": "cr:data", "@type": "@json"},
        "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
        "dct": "http://purl.org/dc/terms/",
        "equivalentProperty": "cr:equivalentProperty",
        "examples": {"@id": "cr:examples", "@type": "@json"},
        "extract": "cr:extract",
        "field": "cr:field",
        "fileProperty": "cr:fileProperty",
        "fileObject": "cr:fileObject",
        "fileSet": "cr:fileSet",
        "format": "cr:format",
        "includes": "cr:includes",
        "isArray": "cr:isArray",
        "isLiveDataset": "cr:isLiveDataset",
        "jsonPath": "cr:jsonPath",
        "key": "cr:key",
        "md5": "cr:md5",
        "parentField": "cr:parentField",
        "path": "cr:path",
        "prov": "http://www.w3.org/ns/prov#",
        "rai": "http://mlcommons.org/croissant/RAI/",
        "recordSet": "cr:recordSet",
        "references": "cr:references",
        "regex": "cr:regex",
        "repeated": "cr:repeated",
        "replace": "cr:replace",
        "samplingRate": "cr:samplingRate",
        "sc": "https://schema.org/",
        "separator": "cr:separator",
        "source": "cr:source",
        "subField": "cr:subField",
        "transform": "cr:transform"
    })
}

fn data_type(dtype: DType) -> &'static str {
    match dtype {
        DType::Str | DType::Json | DType::StrList => "sc:Text",
        DType::Int => "sc:Integer",
        DType::Float => "sc:Float",
        DType::Bool => "sc:Boolean",
    }
}

/// A field reading `column` of every row of `source` (a file object or a file set).
fn field(table: &str, column: &noisebench_core::Column, source: &TableSource) -> Field {
    let list = column.dtype == DType::StrList;
    Field {
        kind: "cr:Field",
        id: format!("{table}/{}", column.name),
        name: column.name.clone(),
        description: Some(column.description.clone()),
        data_type: data_type(column.dtype),
        source: Some(source.extract(Extract {
            column: Some(column.name.clone()),
            file_property: None,
        })),
        references: None,
        is_array: list.then_some(true),
        array_shape: list.then_some("-1"),
    }
}

/// What a table's fields read: its one file, or the file set of its split files.
enum TableSource {
    File(String),
    Set(String),
}

impl TableSource {
    fn extract(&self, extract: Extract) -> Source {
        let (file_object, file_set) = match self {
            TableSource::File(id) => (Some(Ref::to(id)), None),
            TableSource::Set(id) => (None, Some(Ref::to(id))),
        };
        Source {
            file_object,
            file_set,
            extract,
            transform: None,
        }
    }
}

/// Distinct non-empty values of `column` in a published table, sorted.
fn distinct(dir: &Path, file: &str, column: &str) -> Result<Vec<String>, String> {
    // Only the column is read: a table's other columns (a report's text) never leave the file.
    let counts = table_io::value_counts(&dir.join(file), &[column]).map_err(|e| e.to_string())?;
    let values: BTreeSet<String> = counts
        .into_values()
        .flat_map(BTreeMap::into_keys)
        .flatten()
        .filter(|v| !v.is_empty())
        .collect();
    Ok(values.into_iter().collect())
}

/// The sources the rows were derived from, as `prov:Entity`s: fact-checkers, search backends,
/// report files, read from the published tables (what the rows say, not what was configured).
fn derived_from(manifest: &Manifest, dir: &Path) -> Result<Vec<Entity>, String> {
    let mut out = Vec::new();
    let mut used = BTreeSet::new();
    for (name, entry) in &manifest.tables {
        let Some(kind) = TableKind::from_name(&entry.kind) else {
            continue;
        };
        let (column, what) = match kind {
            TableKind::Claims => ("fact_checker", "Fact-check articles published by"),
            TableKind::SearchHits => ("backend", "Web search results returned by the backend"),
            TableKind::Reports => ("source_path", "Report file"),
            _ => continue,
        };
        for value in distinct(dir, &entry.file, column)? {
            // Two values may map to one safe id (`a b`, `a-b`); `@id`s must stay unique.
            let base = format!("source/{name}/{column}/{}", id_safe(&value));
            let mut id = base.clone();
            let mut n = 1;
            while !used.insert(id.clone()) {
                n += 1;
                id = format!("{base}-{n}");
            }
            out.push(Entity {
                kind: "prov:Entity",
                id,
                description: format!("{what} `{value}` (table `{name}`, column `{column}`)."),
                name: Some(value),
            });
        }
    }
    Ok(out)
}

/// `value` with every character outside `[A-Za-z0-9._/-]` as `-`: mlcroissant rejects `@id`s
/// with whitespace, even URL-escaped.
fn id_safe(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._/-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The LLM models the run used, `task: model`, sorted by task.
fn models(manifest: &Manifest) -> Vec<String> {
    let llm = manifest.provenance.get("llm");
    let mut out: Vec<String> = llm
        .and_then(|l| l["tasks"].as_object())
        .map(|tasks| {
            tasks
                .iter()
                .map(|(task, v)| format!("{task}: {}", v["model"].as_str().unwrap_or("unknown")))
                .collect()
        })
        .unwrap_or_default();
    if let Some(embedder) = llm.and_then(|l| l["embedder"].as_str()) {
        out.push(format!("embeddings: {embedder}"));
    }
    out
}

/// The files of a version: every table's file, its split files and, per split table, the file
/// set reading them together (also returned by table, for the record sets).
fn distribution(manifest: &Manifest) -> (Vec<Distribution>, BTreeMap<String, FileSet>) {
    let mut distribution: Vec<Distribution> = manifest
        .tables
        .values()
        .map(|e| Distribution::File(FileObject::parquet(&e.file, &e.sha256, e.bytes)))
        .collect();
    let mut split_sets = BTreeMap::new();
    for (table, splits) in &manifest.splits {
        distribution.extend(
            splits
                .values()
                .map(|e| Distribution::File(FileObject::parquet(&e.file, &e.sha256, e.bytes))),
        );
        // The split files of one table, read together: the split comes from each file's name.
        let set = FileSet {
            kind: "cr:FileSet",
            id: format!("data/{table}/"),
            name: format!("data/{table}/"),
            description: format!("`{table}` cut by question split, one file per split."),
            encoding_format: PARQUET,
            includes: format!("data/{table}/*.parquet"),
        };
        distribution.push(Distribution::Set(set.clone()));
        split_sets.insert(table.clone(), set);
    }
    (distribution, split_sets)
}

/// The record set naming the splits, if the version has any.
fn splits_record_set(manifest: &Manifest) -> Option<RecordSet> {
    let split_names: BTreeSet<&String> = manifest.splits.values().flat_map(|s| s.keys()).collect();
    if split_names.is_empty() {
        return None;
    }
    let name_field = format!("{SPLITS_RECORD_SET}/name");
    Some(RecordSet {
        kind: "cr:RecordSet",
        id: SPLITS_RECORD_SET.into(),
        name: SPLITS_RECORD_SET.into(),
        description: "The splits of the tables whose rows belong to a question (assigned per question by the \
                      `question_splits` table)."
            .into(),
        data_type: Some("cr:Split"),
        key: Some(Ref::to(&name_field)),
        field: vec![Field {
            kind: "cr:Field",
            id: name_field.clone(),
            name: "name".into(),
            description: None,
            data_type: "sc:Text",
            source: None,
            references: None,
            is_array: None,
            array_shape: None,
        }],
        data: Some(
            split_names
                .iter()
                .map(|s| json!({name_field.clone(): s}))
                .collect(),
        ),
    })
}

/// The field of a split table giving each row's split, from the name of the file it is in.
fn split_field(table: &str, set: &FileSet) -> Field {
    let mut source = TableSource::Set(set.id.clone()).extract(Extract {
        column: None,
        file_property: Some("fullpath"),
    });
    // The file name without `.parquet`. mlcroissant applies the regex to the path and again to
    // the split name it joins, so it matches both.
    source.transform = Some(Transform {
        regex: "^(?:.*/)?([^/]+?)(?:\\.parquet)?$",
    });
    Field {
        kind: "cr:Field",
        id: format!("{table}/split"),
        name: "split".into(),
        description: Some("The question's split, from the split file the row is in.".into()),
        data_type: "sc:Text",
        source: Some(source),
        references: Some(References {
            field: Ref::to(format!("{SPLITS_RECORD_SET}/name")),
        }),
        is_array: None,
        array_shape: None,
    }
}

/// One record set per table (a field per column, plus `split` for split tables), after the
/// splits' own.
fn record_sets(
    manifest: &Manifest,
    split_sets: &BTreeMap<String, FileSet>,
) -> Result<Vec<RecordSet>, String> {
    let mut record_sets: Vec<RecordSet> = splits_record_set(manifest).into_iter().collect();
    for (table, entry) in &manifest.tables {
        let kind = TableKind::from_name(&entry.kind)
            .ok_or_else(|| format!("unknown table kind `{}`", entry.kind))?;
        let schema = kind.schema();
        let source = match split_sets.get(table) {
            Some(set) => TableSource::Set(set.id.clone()),
            None => TableSource::File(entry.file.clone()),
        };
        let mut fields: Vec<Field> = schema
            .columns
            .iter()
            .map(|c| field(table, c, &source))
            .collect();
        if let Some(set) = split_sets.get(table) {
            fields.push(split_field(table, set));
        }
        record_sets.push(RecordSet {
            kind: "cr:RecordSet",
            id: table.clone(),
            name: table.clone(),
            description: schema.description.clone(),
            data_type: None,
            key: None,
            field: fields,
            data: None,
        });
    }
    Ok(record_sets)
}

/// A string of the manifest's provenance entry `key`, field `field`, or `unknown`.
fn provenance_str<'m>(manifest: &'m Manifest, key: &str, field: &str) -> &'m str {
    manifest
        .provenance
        .get(key)
        .and_then(|v| v[field].as_str())
        .unwrap_or("unknown")
}

/// The stages that read live sources (re-run by `noisebench refresh`).
fn live_sources(manifest: &Manifest) -> Vec<String> {
    manifest
        .provenance
        .get("live_sources")
        .and_then(|l| l.as_array())
        .map(|l| {
            l.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// `rai:dataCollection`: how the build made the rows, stage by stage.
fn data_collection(request: &PublishRequest, manifest: &Manifest, live: &[String]) -> String {
    let web_mode = provenance_str(manifest, "web", "mode");
    let stages: Vec<String> = request
        .stages
        .iter()
        .map(|s| format!("{} ({})", s.id, s.kind))
        .collect();
    format!(
        "Built by the noisebench pipeline `{}` (configuration sha256 {}), stages in order: {}. Claims come from \
         fact-checkers' published reviews (scraped pages or imported files); documents from web search results \
         and the pages they link to, or from report files; derived tables (queries, chunks, questions, \
         perturbations, labels, retrievals) are computed from those by rules and language models. Web layer mode \
         at build time: `{web_mode}`.{}",
        manifest.pipeline,
        manifest.config_hash,
        stages.join(", "),
        if live.is_empty() {
            String::new()
        } else {
            format!(
                " Stages reading live sources (re-run by `noisebench refresh`): {}.",
                live.join(", ")
            )
        }
    )
}

/// `rai:dataAnnotationAnalysis`: how the two labelling methods agree and how many questions
/// are grounded in their chunks (the quality card, `quality.json`).
fn annotation_analysis(q: &noisebench_quality::QualityReport) -> String {
    let agreement = match &q.agreement {
        Some(a) => format!(
            "Exam labels (RAGuard) against stance votes (CONF-FACT) mapped through the claim's verdict, \
             on {} claim-document pairs labelled both ways: Cohen's kappa {}{}, {:.1}% agree.",
            a.pairs,
            a.kappa.map_or("undefined".into(), |k| format!("{k:.3}")),
            a.interval.map_or(String::new(), |[l, h]| format!(
                " (bootstrap 95% interval {l:.3} to {h:.3})"
            )),
            100.0 * a.observed
        ),
        None => "No claim-document pair was labelled by both the exam and the stance vote.".into(),
    };
    let grounding = match &q.grounding {
        Some(g) => format!(
            " {} of {} questions ({:.1}%) have their answer and cited sentences found in their source chunks \
             (exact, then normalised fuzzy span match).",
            g.grounded,
            g.questions,
            100.0 * g.share
        ),
        None => String::new(),
    };
    let review = match &q.review {
        Some(v) => format!(
            " On {} pairs of a human review round, Krippendorff's alpha of the exam, the stance vote and the reviewer is {}.",
            v.pairs,
            v.alpha.map_or("undefined".into(), |a| format!("{a:.3}"))
        ),
        None => String::new(),
    };
    format!(
        "{agreement}{review}{grounding} Details in quality.json and the dataset card's Quality section."
    )
}

/// The quality card's findings that limit what the version measures: near-duplicates across
/// splits, the lexical shortcut, the closed-book check.
fn quality_limitations(q: &noisebench_quality::QualityReport) -> String {
    let mut out = String::new();
    if let Some(c) = &q.duplicates.cross_split {
        out.push_str(&format!(
            " {} of {} test questions ({:.1}%) have a near-duplicate in train (MinHash-LSH, Jaccard at least {}).",
            c.leaked,
            c.test,
            100.0 * c.share,
            q.duplicates.threshold
        ));
    }
    if let Some(s) = &q.shortcut {
        out.push_str(&format!(
            " BM25 ranks the gold chunk first for {:.1}% of questions (unperturbed queries).",
            100.0 * s.all.share_rank_1
        ));
    }
    let c = &q.closed_book;
    if c.ran() {
        out.push_str(&format!(
            " {} of {} questions ({:.1}%) were answered right with no context (closed-book; {}): \
             they test no retrieval and are flagged in quality.json.",
            c.all.right,
            c.all.judged,
            100.0 * c.all.share,
            c.reason
        ));
    } else {
        out.push_str(" Whether questions can be answered without retrieval was not measured.");
    }
    out
}

/// The Responsible AI facts: how the data was collected and annotated, its limits and biases.
fn rai(request: &PublishRequest, manifest: &Manifest, live: &[String]) -> Rai {
    let llm_backend = provenance_str(manifest, "llm", "backend");
    let models = models(manifest);
    let machine_annotation_tools = if models.is_empty() {
        vec![format!("noisebench rules (LLM backend `{llm_backend}`)")]
    } else {
        models
            .iter()
            .map(|m| format!("{m} (LLM backend `{llm_backend}`)"))
            .collect()
    };
    Rai {
        data_collection: data_collection(request, manifest, live),
        data_collection_type: vec![
            "Web Scraping",
            "Web API",
            "Secondary Data Analysis",
            "Machine Annotation",
        ],
        data_collection_raw_data: "The raw pages, search responses and report files are not in the version; \
            the tables keep their URLs, source paths and fetch times.",
        annotations_per_item: "Mostly machine annotation: each item gets one stored label, which for \
            claim-document stances may combine several model calls (stance prompts, exam votes; kept in the \
            `labels` table). A label's `label_source` says whether a model set it or it came from human reviewers; \
            the dataset card gives the share of human labels.",
        machine_annotation_tools,
        data_annotation_analysis: request.quality.as_ref().map(annotation_analysis),
        data_limitations: format!(
            "{}{}",
            "Verdicts are fact-checkers' ratings mapped to two classes, which loses nuance. \
            Documents are what the search backends returned at build time; the web changes and a rebuild may differ. \
            Labels, questions and perturbations made by language models or by the offline rule backend are not gold \
            labels. Dropped items are counted by reason in the dataset card, not included.",
            request
                .quality
                .as_ref()
                .map(quality_limitations)
                .unwrap_or_default()
        ),
        data_biases: "Claims reflect which statements the configured fact-checkers chose to review, in \
            their languages and countries (the dataset card lists fact-checkers and countries); report-based questions \
            reflect the report files chosen as input. Documents reflect the ranking of the search backends used. \
            Machine labels, questions and perturbations carry the biases of the models that made them.",
        personal_sensitive_information: "Claims name public speakers; documents are public web pages and may \
            contain names of people, and social posts keep their author handle. No other personal data is \
            collected, and nothing was anonymised.",
    }
}

/// The Croissant 1.1 document of a version.
pub(crate) fn render_croissant(input: &CroissantInput<'_>) -> Result<Value, String> {
    let request = input.request;
    let manifest = input.manifest;
    let name = if request.title.is_empty() {
        manifest.dataset.clone()
    } else {
        request.title.clone()
    };
    let description = if request.description.trim().is_empty() {
        format!("The `{}` dataset built by noisebench.", manifest.dataset)
    } else {
        request.description.trim().to_string()
    };
    let (distribution, split_sets) = distribution(manifest);
    let live = live_sources(manifest);
    let dataset = Dataset {
        context: context(),
        kind: "sc:Dataset",
        conforms_to: CONFORMS_TO,
        cite_as: format!(
            "{name}, version {}, built with noisebench ({}).",
            manifest.version, manifest.code_version
        ),
        name,
        alternate_name: vec![manifest.dataset.clone()],
        description,
        license: request
            .license
            .clone()
            .unwrap_or_else(|| "unspecified".into()),
        url: HOMEPAGE,
        version: manifest.version.clone(),
        date_published: manifest.created_at.clone(),
        date_modified: manifest.created_at.clone(),
        creator: Organization {
            kind: "sc:Organization",
            name: "noisebench",
            url: HOMEPAGE,
        },
        keywords: vec![
            "noisebench",
            "retrieval-augmented generation",
            "robustness",
            "fact-checking",
        ],
        is_live_dataset: !live.is_empty(),
        was_derived_from: derived_from(manifest, input.dir)?,
        was_generated_by: Entity {
            kind: "prov:Activity",
            id: "build".into(),
            name: None,
            description: format!(
                "`noisebench build-snapshot {}`, code version {}.",
                manifest.pipeline, manifest.code_version
            ),
        },
        rai: rai(request, manifest, &live),
        distribution,
        record_set: record_sets(manifest, &split_sets)?,
    };
    serde_json::to_value(&dataset).map_err(|e| format!("croissant.json: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{SplitEntry, TableEntry};
    use std::path::PathBuf;

    fn request() -> PublishRequest {
        PublishRequest {
            snapshots_dir: PathBuf::from("snapshots"),
            dataset: "toy".into(),
            title: "Toy".into(),
            description: "A toy.".into(),
            license: Some("cc-by-4.0".into()),
            pipeline: "toy".into(),
            config_hash: "abc".into(),
            code_version: "0.1.0".into(),
            tables: vec![],
            exports: vec![],
            stages: vec![],
            provenance: BTreeMap::new(),
            checks: vec![],
            quality: None,
        }
    }

    fn entry(kind: TableKind, file: &str) -> TableEntry {
        TableEntry {
            file: file.into(),
            kind: kind.name().into(),
            sha256: "00".into(),
            rows: 3,
            bytes: 100,
            schema_version: 1,
            schema_fingerprint: "ff".into(),
        }
    }

    #[test]
    fn the_document_has_files_record_sets_fields_and_splits() {
        let mut provenance = BTreeMap::new();
        provenance.insert("live_sources".into(), json!(["search"]));
        provenance.insert(
            "llm".into(),
            json!({"backend": "offline", "embedder": "hash-64", "tasks": {"label": {"model": "m1"}}}),
        );
        let mut splits = BTreeMap::new();
        splits.insert(
            "questions".to_string(),
            [("test", 1), ("train", 2)]
                .into_iter()
                .map(|(s, rows)| {
                    (
                        s.to_string(),
                        SplitEntry {
                            file: format!("data/questions/{s}.parquet"),
                            sha256: "11".into(),
                            rows,
                            bytes: 10,
                        },
                    )
                })
                .collect(),
        );
        let manifest = Manifest {
            dataset: "toy".into(),
            version: "1.2.0".into(),
            parent: None,
            created_at: "2026-01-01T00:00:00+00:00".into(),
            pipeline: "toy".into(),
            config_hash: "abc".into(),
            code_version: "0.1.0".into(),
            tables: [
                (
                    "questions".to_string(),
                    entry(TableKind::Questions, "data/questions.parquet"),
                ),
                (
                    "question_splits".to_string(),
                    entry(TableKind::QuestionSplits, "data/question_splits.parquet"),
                ),
            ]
            .into_iter()
            .collect(),
            exports: BTreeMap::new(),
            provenance,
            splits,
            metadata: BTreeMap::new(),
            checks: vec![],
            stages: vec![],
        };
        let request = request();
        let doc = render_croissant(&CroissantInput {
            request: &request,
            manifest: &manifest,
            dir: Path::new("."),
        })
        .unwrap();
        assert_eq!(doc["@type"], "sc:Dataset");
        assert_eq!(doc["conformsTo"], CONFORMS_TO);
        assert_eq!(doc["@context"]["isArray"], "cr:isArray");
        assert_eq!(doc["version"], "1.2.0");
        assert_eq!(doc["isLiveDataset"], true);
        assert_eq!(doc["license"], "cc-by-4.0");
        assert_eq!(
            doc["rai:machineAnnotationTools"],
            json!([
                "label: m1 (LLM backend `offline`)",
                "embeddings: hash-64 (LLM backend `offline`)"
            ])
        );
        let files: Vec<(&str, &str)> = doc["distribution"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["@type"].as_str().unwrap(), d["@id"].as_str().unwrap()))
            .collect();
        assert_eq!(
            files,
            [
                ("cr:FileObject", "data/question_splits.parquet"),
                ("cr:FileObject", "data/questions.parquet"),
                ("cr:FileObject", "data/questions/test.parquet"),
                ("cr:FileObject", "data/questions/train.parquet"),
                ("cr:FileSet", "data/questions/"),
            ]
        );
        let first = &doc["distribution"][0];
        assert_eq!(first["contentUrl"], "data/question_splits.parquet");
        assert_eq!(first["encodingFormat"], "application/x-parquet");
        assert_eq!(first["sha256"], "00");
        assert_eq!(first["contentSize"], "100 B");
        let sets: Vec<&str> = doc["recordSet"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["@id"].as_str().unwrap())
            .collect();
        assert_eq!(sets, ["splits", "question_splits", "questions"]);
        assert_eq!(doc["recordSet"][0]["dataType"], "cr:Split");
        assert_eq!(
            doc["recordSet"][0]["data"],
            json!([{"splits/name": "test"}, {"splits/name": "train"}])
        );
        let questions = &doc["recordSet"][2]["field"];
        let by_id = |id: &str| {
            questions
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["@id"] == id)
                .unwrap()
                .clone()
        };
        assert_eq!(by_id("questions/answer_chunk_ids")["isArray"], true);
        assert_eq!(by_id("questions/answer_chunk_ids")["dataType"], "sc:Text");
        assert_eq!(
            by_id("questions/id")["source"]["fileSet"]["@id"],
            "data/questions/"
        );
        assert_eq!(by_id("questions/id")["source"]["extract"]["column"], "id");
        assert_eq!(
            by_id("questions/split")["references"]["field"]["@id"],
            "splits/name"
        );
        let splits_fields = &doc["recordSet"][1]["field"];
        assert_eq!(
            splits_fields[0]["source"]["fileObject"]["@id"],
            "data/question_splits.parquet"
        );
        for key in [
            "rai:dataCollection",
            "rai:dataCollectionType",
            "rai:annotationsPerItem",
            "rai:dataLimitations",
            "rai:dataBiases",
            "rai:personalSensitiveInformation",
            "datePublished",
            "dateModified",
            "creator",
            "url",
            "description",
        ] {
            assert!(!doc[key].is_null(), "{key}");
        }
    }
}
