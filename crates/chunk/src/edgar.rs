//! edgar-crawler 10-K JSON: one object per filing, metadata fields and one field per item.
//!
//! Items are laid out one paragraph per line ([`Layout::LinePerParagraph`]); tables that
//! edgar-crawler flattened to one cell per line come back as table blocks
//! ([`crate::flat_table`]), never as bare-number paragraphs or column-label headings.

use std::collections::BTreeMap;

use noisebench_core::Block;
use serde_json::Value;

use crate::table::TableError;
use crate::text_layout::{Layout, text_blocks};

/// The metadata fields carried into every report (RARE's finance metadata).
pub(crate) const METADATA_FIELDS: &[&str] = &[
    "cik",
    "company",
    "filing_type",
    "filing_date",
    "period_of_report",
];

/// Why a filing could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EdgarError {
    #[error("invalid JSON: {0}")]
    InvalidJson(#[from] serde_json::Error),
    #[error("not an edgar-crawler filing: {0}")]
    NotAFiling(String),
    #[error("items {0:?} are empty or missing")]
    EmptyItems(Vec<String>),
}

impl EdgarError {
    pub fn reason(&self) -> &'static str {
        match self {
            EdgarError::InvalidJson(_) => "invalid_json",
            EdgarError::NotAFiling(_) => "not_a_filing",
            EdgarError::EmptyItems(_) => "empty_item",
        }
    }
}

/// One filing's chosen items as blocks, with its metadata.
pub struct Filing {
    pub metadata: BTreeMap<String, String>,
    /// The accession-based file name (`320193_10K_2022_0000320193-22-000108.htm`), if given.
    pub filename: Option<String>,
    pub blocks: Vec<Block>,
    /// Tables that could not be kept, named `<item>#table<n>`.
    pub bad_tables: Vec<(String, TableError)>,
}

/// Read the chosen `items` of a filing, in the order given.
pub fn read_filing(json: &str, items: &[String]) -> Result<Filing, EdgarError> {
    let value: Value = serde_json::from_str(json)?;
    let Value::Object(map) = value else {
        return Err(EdgarError::NotAFiling("top level is not an object".into()));
    };
    if !map.contains_key("cik") {
        return Err(EdgarError::NotAFiling("no `cik` field".into()));
    }
    let field = |k: &str| match map.get(k) {
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut metadata = BTreeMap::new();
    for k in METADATA_FIELDS {
        metadata.insert((*k).to_string(), field(k).unwrap_or_default());
    }
    metadata.insert("items".into(), items.join(","));
    let mut blocks = Vec::new();
    let mut bad_tables = Vec::new();
    for item in items {
        let text = field(item).unwrap_or_default();
        if text.is_empty() {
            continue;
        }
        let (b, bad) = text_blocks(&text, Layout::LinePerParagraph);
        bad_tables.extend(
            bad.into_iter()
                .map(|(i, e)| (format!("{item}#table{i}"), e)),
        );
        blocks.extend(b);
    }
    if blocks.is_empty() {
        return Err(EdgarError::EmptyItems(items.to_vec()));
    }
    Ok(Filing {
        metadata,
        filename: field("filename"),
        blocks,
        bad_tables,
    })
}
