//! The Croissant 1.1 document as typed pieces: each struct serialises to one JSON-LD node, its
//! fields in the order the document lists them (`serde_json` keeps insertion order here).

use serde::Serialize;
use serde_json::Value;

/// A reference to another node: `{"@id": ...}`.
#[derive(Serialize, Clone)]
pub(crate) struct Ref {
    #[serde(rename = "@id")]
    pub id: String,
}

impl Ref {
    pub fn to(id: impl Into<String>) -> Self {
        Self { id: id.into() }
    }
}

/// The top-level `sc:Dataset`.
#[derive(Serialize)]
pub(crate) struct Dataset {
    #[serde(rename = "@context")]
    pub context: Value,
    #[serde(rename = "@type")]
    pub kind: &'static str,
    #[serde(rename = "conformsTo")]
    pub conforms_to: &'static str,
    pub name: String,
    #[serde(rename = "alternateName")]
    pub alternate_name: Vec<String>,
    pub description: String,
    pub license: String,
    pub url: &'static str,
    pub version: String,
    #[serde(rename = "datePublished")]
    pub date_published: String,
    #[serde(rename = "dateModified")]
    pub date_modified: String,
    pub creator: Organization,
    #[serde(rename = "citeAs")]
    pub cite_as: String,
    pub keywords: Vec<&'static str>,
    #[serde(rename = "isLiveDataset")]
    pub is_live_dataset: bool,
    #[serde(rename = "prov:wasDerivedFrom")]
    pub was_derived_from: Vec<Entity>,
    #[serde(rename = "prov:wasGeneratedBy")]
    pub was_generated_by: Entity,
    #[serde(flatten)]
    pub rai: Rai,
    pub distribution: Vec<Distribution>,
    #[serde(rename = "recordSet")]
    pub record_set: Vec<RecordSet>,
}

#[derive(Serialize)]
pub struct Organization {
    #[serde(rename = "@type")]
    pub kind: &'static str,
    pub name: &'static str,
    pub url: &'static str,
}

/// A `prov:Entity` (a source the rows came from) or `prov:Activity` (the build); an activity has
/// no name.
#[derive(Serialize)]
pub struct Entity {
    #[serde(rename = "@type")]
    pub kind: &'static str,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub description: String,
}

/// The Responsible AI (`rai:`) facts.
#[derive(Serialize)]
pub(crate) struct Rai {
    #[serde(rename = "rai:dataCollection")]
    pub data_collection: String,
    #[serde(rename = "rai:dataCollectionType")]
    pub data_collection_type: Vec<&'static str>,
    #[serde(rename = "rai:dataCollectionRawData")]
    pub data_collection_raw_data: &'static str,
    #[serde(rename = "rai:annotationsPerItem")]
    pub annotations_per_item: &'static str,
    #[serde(rename = "rai:machineAnnotationTools")]
    pub machine_annotation_tools: Vec<String>,
    /// What the quality card measured of the labels and questions (agreement of two labelling
    /// methods, grounding), when the version has one.
    #[serde(
        rename = "rai:dataAnnotationAnalysis",
        skip_serializing_if = "Option::is_none"
    )]
    pub data_annotation_analysis: Option<String>,
    #[serde(rename = "rai:dataLimitations")]
    pub data_limitations: String,
    #[serde(rename = "rai:dataBiases")]
    pub data_biases: &'static str,
    #[serde(rename = "rai:personalSensitiveInformation")]
    pub personal_sensitive_information: &'static str,
}

/// One entry of `distribution`: a file or a set of files.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Distribution {
    File(FileObject),
    Set(FileSet),
}

/// A `cr:FileObject`: one Parquet file of the version.
#[derive(Serialize)]
pub struct FileObject {
    #[serde(rename = "@type")]
    pub kind: &'static str,
    #[serde(rename = "@id")]
    pub id: String,
    pub name: String,
    #[serde(rename = "contentUrl")]
    pub content_url: String,
    #[serde(rename = "encodingFormat")]
    pub encoding_format: &'static str,
    pub sha256: String,
    #[serde(rename = "contentSize")]
    pub content_size: String,
}

impl FileObject {
    pub fn parquet(file: &str, sha256: &str, bytes: u64) -> Self {
        Self {
            kind: "cr:FileObject",
            id: file.into(),
            name: file.into(),
            content_url: file.into(),
            encoding_format: PARQUET,
            sha256: sha256.into(),
            content_size: format!("{bytes} B"),
        }
    }
}

/// A `cr:FileSet`: the split files of one table, read together.
#[derive(Serialize, Clone)]
pub(crate) struct FileSet {
    #[serde(rename = "@type")]
    pub kind: &'static str,
    #[serde(rename = "@id")]
    pub id: String,
    pub name: String,
    pub description: String,
    #[serde(rename = "encodingFormat")]
    pub encoding_format: &'static str,
    pub includes: String,
}

pub(crate) const PARQUET: &str = "application/x-parquet";

/// A `cr:RecordSet`: a table (its fields read from its file or file set), or the splits (their
/// names given inline as `data`).
#[derive(Serialize)]
pub(crate) struct RecordSet {
    #[serde(rename = "@type")]
    pub kind: &'static str,
    #[serde(rename = "@id")]
    pub id: String,
    pub name: String,
    pub description: String,
    #[serde(rename = "dataType", skip_serializing_if = "Option::is_none")]
    pub data_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<Ref>,
    pub field: Vec<Field>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<Value>>,
}

/// A `cr:Field` of a record set.
#[derive(Serialize)]
pub struct Field {
    #[serde(rename = "@type")]
    pub kind: &'static str,
    #[serde(rename = "@id")]
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(rename = "dataType")]
    pub data_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references: Option<References>,
    /// Croissant 1.1 replaced 1.0's `repeated` with `isArray` (+ `arrayShape`, -1: any length).
    #[serde(rename = "isArray", skip_serializing_if = "Option::is_none")]
    pub is_array: Option<bool>,
    #[serde(rename = "arrayShape", skip_serializing_if = "Option::is_none")]
    pub array_shape: Option<&'static str>,
}

/// Where a field's values come from: a file or a file set, what to extract, how to transform it.
#[derive(Serialize)]
pub struct Source {
    #[serde(rename = "fileObject", skip_serializing_if = "Option::is_none")]
    pub file_object: Option<Ref>,
    #[serde(rename = "fileSet", skip_serializing_if = "Option::is_none")]
    pub file_set: Option<Ref>,
    pub extract: Extract,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
}

#[derive(Serialize)]
pub struct Extract {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    #[serde(rename = "fileProperty", skip_serializing_if = "Option::is_none")]
    pub file_property: Option<&'static str>,
}

#[derive(Serialize)]
pub(crate) struct Transform {
    pub regex: &'static str,
}

#[derive(Serialize)]
pub struct References {
    pub field: Ref,
}
