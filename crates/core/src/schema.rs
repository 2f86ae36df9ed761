//! Column schemas. Each table's schema is declared once, beside its row type, and written to
//! `schemas/<table>.json`; tests hold every emitted Parquet file to it.

use serde::{Deserialize, Serialize};

/// The logical type of a column, as stored in Parquet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DType {
    /// UTF-8 string.
    Str,
    /// 64-bit signed integer.
    Int,
    /// 64-bit float.
    Float,
    /// Boolean.
    Bool,
    /// List of UTF-8 strings.
    StrList,
    /// Any nested value, stored as a JSON string (maps of metadata, vote records).
    Json,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub dtype: DType,
    pub nullable: bool,
    pub description: String,
}

impl Column {
    pub fn new(name: &str, dtype: DType, description: &str) -> Self {
        Self {
            name: name.into(),
            dtype,
            nullable: false,
            description: description.into(),
        }
    }
    pub fn nullable(name: &str, dtype: DType, description: &str) -> Self {
        Self {
            name: name.into(),
            dtype,
            nullable: true,
            description: description.into(),
        }
    }
}

/// A table's schema: what `schemas/<table>.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSchema {
    pub table: String,
    pub version: u32,
    pub description: String,
    pub columns: Vec<Column>,
}

impl TableSchema {
    /// sha256 over the canonical JSON of the schema; recorded in manifests.
    pub fn fingerprint(&self) -> String {
        let json = serde_json::to_vec(self).expect("a schema always serialises");
        crate::sha256_hex(&json)
    }
}

/// A row type of one table: its schema and its stable id. (Here, below `model` and `rows`, so
/// the row types and the closed set of tables do not import each other.)
pub trait Record:
    serde::Serialize + serde::de::DeserializeOwned + Clone + Send + Sync + 'static
{
    /// The table's schema. Column names equal the serde field names (a test checks it).
    fn schema() -> TableSchema;
    /// The row's stable id (the `id` column).
    fn id(&self) -> &str;
}
