//! Versioned, immutable snapshots of a dataset's tables.
//!
//! [`publish()`] copies the chosen tables into `snapshots/<dataset>/<version>/data/<table>.parquet`
//! with a `manifest.json` (per-file sha256, rows, bytes, schema fingerprint; pipeline, configuration
//! hash, code version, creation time, parent), a Hugging Face dataset card (`README.md`) and the
//! changes against the parent (`CHANGES.md`, `changes.json`). The version is bumped from the diff the
//! way Croissant 1.1 defines it: rows only added -> minor; rows changed or removed -> major; the same
//! rows re-serialised -> patch; nothing changed -> no new version. A version is never overwritten, and
//! a publish is staged in a hidden folder and renamed into place, so a crash leaves no partial version.
//! One publisher of a dataset at a time: a publish holds a lock on `snapshots/.locks/<dataset>/`
//! from choosing the parent to the rename, so two refreshes of one dataset never both publish.
//! The pipeline's exports (RAGuard CSVs, CONF-FACT JSON) go in as `exports/<format>/...`, hashed
//! in the manifest, so a downloaded version holds the files the papers' loaders read.
//! Every version also holds `croissant.json` (Croissant 1.1 metadata: files, record sets typed from
//! the schemas, splits, provenance and Responsible AI fields), and the tables whose rows belong to
//! a question (`questions`, the perturbations) cut by `question_splits` into
//! `data/<table>/<split>.parquet`, so Hugging Face `datasets` offers real `test`/`train` splits;
//! both are hashed in the manifest.
//! [`verify()`] rechecks hashes, sizes, row counts and schemas (and the exports', split files' and
//! `croissant.json`'s hashes); [`diff`] compares two versions. [`PublishedVersion`] reads a
//! version's tables typed (`PublishedVersion::open(path)?.read::<Question>()`), finding each
//! by kind, for every command that reads a published version.
//!
//! What this crate is not: it runs no stages; it reads and writes tables only through
//! `noisebench-pipeline`'s table I/O.
//!
//! # Modules
//!
//! `publish.rs` (diff against the parent, semver bump, staging folder, the tables under `data/` and
//! the export stages' files under `exports/<format>/`, rename), `changes.rs` (row diff by id and
//! content hash; export files by sha256, `diff_exports`; rows that differ only in core's
//! `FETCH_COLUMNS`, `fetched_at` and `archive_ref`, are "refetched", not changed; `report_changes`
//! attributes the report track's row changes to reports by their `report_id`/`report_ids`),
//! `card.rs` (Hugging Face card, one config per table, `test`/`train` splits for the question
//! tables: typed values rendered by minijinja through the template `card/card.md.j2`, which holds
//! all the card's text), `croissant.rs` (`croissant.json`, Croissant 1.1 metadata written before
//! the manifest and hashed in it, built from the typed JSON-LD nodes of `croissant/types.rs` with
//! serde), `splits.rs` (per-split copies of the question tables, cut by `question_splits`, for
//! Hugging Face splits), `manifest.rs` (with every gate and check of the build, `checks`, and the
//! run's stage counts, `stages`), `verify.rs`, `request.rs` (what a caller asks to publish; a leaf,
//! so `card`, `croissant` and `publish` import no circle), `version.rs` (`PublishedVersion`: typed
//! reads of a published version, each table found by kind, for `eval`, `export`, `report` and
//! `validate`); `publish::parent_checks` fails a table that had rows in the parent version and has
//! none now. Invariant: a published version is never modified, and a publish leaves a whole version
//! or none.

pub mod card;
pub mod changes;
pub mod croissant;
pub mod manifest;
pub mod publish;
pub mod request;
pub mod splits;
pub mod verify;
pub mod version;

pub use changes::{Changes, ReportChange, RowDelta, TableChanges, diff};
pub use manifest::{
    CROISSANT, ExportEntry, MANIFEST, Manifest, MetadataEntry, SplitEntry, StageCounts, TableEntry,
};
pub use publish::{
    PublishError, PublishOptions, PublishOutcome, PublishRequest, SourceExport, SourceTable,
    latest_version, list_versions, parent_checks, publish,
};
pub use verify::{VerifyReport, verify};
pub use version::{PublishedVersion, VersionError, VersionTable};
