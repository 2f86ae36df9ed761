//! The seed papers' release formats, one home per format: each format's typed records, the
//! writer our exports use and the reader `eval` uses, side by side, so that what we write and
//! what we read cannot drift apart.
//!
//! - [`raguard`]: RAGuard's `claims.csv` and `documents.csv` (`UCSC-IRKM/RAGuard`): typed rows
//!   ([`raguard::ClaimRow`], [`raguard::DocumentRow`]), their CSV reader and writer, and the
//!   export from the claims track's tables ([`raguard::export`]).
//! - [`confact`]: CONF-FACT's instances (`zoeyyes/CONFACT`): the typed instance we write
//!   (`confact::Instance`) and its strict reader, the decoding of the release's gzip'd pickles
//!   and JSON ([`confact::decode`]), the lenient reading of one instance as the authors' files
//!   hold it ([`confact::ReadInstance::from_value`]), the credibility tables keyed by domain,
//!   and the export ([`confact::export`]).
//! - [`rare`]: RARE's QA records (`LeiLiLab/RARE`): the two JSON lists `export-rare` writes
//!   ([`rare::RareRecord`], `rare::write_records`), the same records read back strictly
//!   ([`rare::read_records`]), and the lenient reading of one record as RARE's own code writes
//!   it ([`rare::ReadRecord::from_value`]); its corpus (`chunks.json`, [`rare::ChunkRow`]) and
//!   its retrieval results ([`rare::RetrievalEntry`]).
//! - [`rare_export`]: RARE records made from the report track's tables ([`rare_export::export_rare`]).
//! - [`format`](mod@format): the one shape of a release format ([`ReleaseFormat`]: the tables it reads, the
//!   files it writes, the export from any [`TableSource`] and the strict read back); the one list
//!   of formats ([`formats`], here at the root) is what `noisebench export`, the export stages
//!   and the docs use.
//! - [`stage`](mod@stage): the one export stage, `export-<name>` for every format ([`ExportStage`]).
//! - [`summary`]: what the claims-track exports wrote and left out ([`ExportSummary`]).
//!
//! What this crate is not for: evaluation data types or bad-row accounting (that is `eval`'s;
//! the readers here report problems as [`Problem`]s or `(reason, detail)` pairs the caller
//! counts), or reading snapshot files (the caller hands tables in). It depends on no stage
//! crate and never on polars (`crates/cli/tests/it/architecture.rs`).
//!
//! # Modules
//!
//! One home per seed-release format, the typed records with their writer and reader side by side.
//! `raguard.rs` (`ClaimRow`, `DocumentRow`, the CSV reader with line numbers, the writer, `export`
//! from claims/documents/labels), `confact.rs` (`Instance` written and read back strictly; `decode`
//! of gzip'd pickles or JSON, `ReadInstance::from_value` for the authors' files, the credibility
//! tables; `export`), `rare.rs` (`RareRecord`, `write_records`, `read_records`,
//! `ReadRecord::from_value`, the corpus's `ChunkRow` and `run_retrievals.py`'s `RetrievalEntry`),
//! `rare_export.rs` (records from the report track's tables), `format.rs` (the one shape,
//! `ReleaseFormat`: the table of its items, the tables it reads, its files, its export from any
//! object-safe `TableSource`, its strict read back), `lib.rs` (the one list, `formats()`, that
//! `noisebench export`, the registry and the docs read), `stage.rs` (`ExportStage`: the one export
//! stage, `export-<name>` for every format, each item written or a drop with the format's reason),
//! `summary.rs` (`ExportSummary`, drops with reasons). `eval`'s loaders read through it and keep
//! only joins and bad-row accounting. Invariant: depends only on `core` and `text` of ours (stage
//! crates and `eval` may depend on it), never on polars; every format in `formats()` passes the
//! same round trip (`tests/it/formats.rs`: every item written or left out with a reason, the files
//! read back with as many items as were written).

pub mod confact;
pub mod format;
pub mod raguard;
pub mod rare;
pub mod rare_export;
pub mod stage;
pub mod summary;

use std::path::Path;

pub use format::{BoxError, Exported, MemoryTables, ReleaseFormat, TableSource};
pub use stage::{ExportConfig, ExportStage, export_stages};
pub use summary::{ExportError, ExportSummary, SkippedPair};

/// A row a reader could not type: where (`line 4`, `record 2 evidence 1`), a reason code, a
/// detail naming the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub row: String,
    pub reason: &'static str,
    pub detail: String,
}

impl Problem {
    pub fn new(row: impl Into<String>, reason: &'static str, detail: impl Into<String>) -> Self {
        Problem {
            row: row.into(),
            reason,
            detail: detail.into(),
        }
    }
}

/// A path's file name, as problems and notes name files (independent of where a release was
/// unpacked).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Tables shared by the format modules' round-trip tests.
/// Every release format, in the order the command line lists them.
pub fn formats() -> &'static [&'static dyn ReleaseFormat] {
    &[
        &crate::raguard::Raguard,
        &crate::confact::Confact,
        &crate::rare_export::Rare,
    ]
}

/// The format called `name`, if any.
pub fn format(name: &str) -> Option<&'static dyn ReleaseFormat> {
    formats().iter().copied().find(|f| f.name() == name)
}

/// Every format's name, in [`formats`]' order.
pub fn format_names() -> Vec<&'static str> {
    formats().iter().map(|f| f.name()).collect()
}

/// Export `tables` in the format called `name` into the folder `out`.
pub fn export(tables: &dyn TableSource, name: &str, out: &Path) -> Result<Exported, BoxError> {
    let format = format(name).ok_or_else(|| -> BoxError {
        format!(
            "no release format `{name}` (formats: {})",
            format_names().join(", ")
        )
        .into()
    })?;
    format.export(tables, out)
}

#[cfg(test)]
pub(crate) mod test_tables {
    use noisebench_core::{Claim, ClaimDocumentLabel, Document, DocumentCredibility};

    /// A small claims-track snapshot: two true/false claims (one with a quote, a comma and a
    /// newline in its documents), one half-true claim, and label rows of every kind.
    pub(crate) fn tables() -> (
        Vec<Claim>,
        Vec<Document>,
        Vec<ClaimDocumentLabel>,
        Vec<DocumentCredibility>,
    ) {
        let claim = |id: &str, text: &str, verdict: &str, rating: &str| Claim {
            id: id.into(),
            text: text.into(),
            verdict: verdict.into(),
            original_rating: rating.into(),
            ..Claim::default()
        };
        let doc = |id: &str, url: &str, title: Option<&str>, text: &str| Document {
            id: id.into(),
            url: url.into(),
            title: title.map(str::to_string),
            text: text.into(),
            source_type: "news".into(),
            ..Document::default()
        };
        let label = |c: &str, d: &str, l: Option<&str>| ClaimDocumentLabel {
            id: format!("label_{c}_{d}"),
            claim_id: c.into(),
            document_id: d.into(),
            label: l.map(str::to_string),
            stance: Some("support".into()),
            label_source: "model".into(),
            ..ClaimDocumentLabel::default()
        };
        let claims = vec![
            claim(
                "c1",
                "Says \"we cut taxes\", and it's true.",
                "true",
                "half-true",
            ),
            claim("c2", "Crime rose 50%.", "False", "barely-true"),
            claim("c3", "Half of it.", "half-true", "half-true"),
        ];
        let mut docs = vec![
            doc(
                "d1",
                "https://www.reddit.com/r/p/1",
                Some("Taxes, \"cut\""),
                "Body one,\nwith a newline.",
            ),
            doc(
                "d2",
                "https://www.reddit.com/r/p/2",
                Some("A link post"),
                "",
            ),
            doc("d3", "https://example.org/3", None, "Body three"),
        ];
        // A Reddit link post: a title and no body.
        docs[1].is_link_post = true;
        let labels = vec![
            label("c1", "d1", Some("supporting")),
            label("c1", "d2", Some("irrelevant")),
            label("c2", "d3", Some("misleading")),
            label("c2", "d1", Some("supporting")),
            label("c2", "d2", None),
            label("c3", "d3", Some("misleading")),
            label("c9", "d3", Some("misleading")),
            label("c1", "d9", Some("misleading")),
        ];
        // d1 rated from the domain table, which also gives its source type; d2, d3 unrated.
        let credibility = vec![DocumentCredibility {
            id: "cred_d1".into(),
            document_id: "d1".into(),
            domain: "reddit.com".into(),
            credibility: Some("low".into()),
            credibility_source: Some("table".into()),
            source_type: "social media".into(),
            source_type_source: "table".into(),
        }];
        (claims, docs, labels, credibility)
    }
}
