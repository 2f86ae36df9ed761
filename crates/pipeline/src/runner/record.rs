//! What a finished stage leaves on disk: its record (`stage.json`) and the file names a run uses.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::{CheckResult, DropRecord, StageFacts, StageSummary};
use serde::{Deserialize, Serialize};

/// File name of the LLM calls a stage made (in its stage directory), and of the run's whole call
/// log (in the run directory).
pub const LLM_CALLS: &str = "llm_calls.parquet";

/// The folder of a stage's shard parts, in its stage directory: `shards/<i>-of-<n>/`.
pub const SHARDS_DIR: &str = "shards";

/// File name of a stage's record, written last: its presence with a matching fingerprint means the
/// stage's outputs are complete.
pub const STAGE_RECORD: &str = "stage.json";

/// One output table file of a stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFile {
    pub kind: String,
    pub file: String,
    pub sha256: String,
    pub rows: u64,
    pub bytes: u64,
}

/// What a finished stage leaves in `work/<pipeline>/<stage>/stage.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    pub id: String,
    pub kind: String,
    pub version: u32,
    pub fingerprint: String,
    pub tables: BTreeMap<String, TableFile>,
    pub items_in: u64,
    pub items_out: u64,
    pub items_dropped: u64,
    pub drop_reasons: BTreeMap<String, i64>,
    /// Items that failed for a transient cause (network, 429, 5xx, timeout, budget): not done.
    /// A record with any is never reused, so the next run reruns the stage and, with finished
    /// LLM answers cached, pays only for these items again.
    #[serde(default)]
    pub retry_items: u64,
    /// The reasons behind `retry_items` and their counts, from the drops' own `retry` flag
    /// (`DropReason`). A record written before this field was kept has none: [`read_record`]
    /// counts them from the stage's `drops.parquet`, whose `retry` column it always had.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retry_reasons: BTreeMap<String, i64>,
    /// Files the stage declared and wrote (not tables), by name in the stage directory.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, SideFileRecord>,
    /// What the stage reported about its run (see core's `StageFacts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<StageFacts>,
    /// The checks of the tables it wrote, run when it wrote them (a record from before checks
    /// existed has none: they are run when the record is reused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<CheckResult>>,
    /// Tasks whose categorical answers never changed over the stage's run
    /// (`CallLog::constant_answers`): the gate `constant_answers` fails on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constant_answers: Vec<String>,
    /// Failures that did not cost their item, per reason (`StageReport::failure_reasons`): the
    /// run summary shows them apart from the drops.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failures: BTreeMap<String, i64>,
}

/// A side file of a stage: its hash and size, and whether snapshots publish it as an export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideFileRecord {
    pub sha256: String,
    pub bytes: u64,
    /// `exports/<format>/` in a snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<String>,
}

impl StageRecord {
    /// `partial` when items are left to retry, else `ran` (for a record this run made).
    pub(super) fn status(&self) -> &'static str {
        if self.retry_items > 0 {
            "partial"
        } else {
            "ran"
        }
    }

    /// The run summary's row for this record, under `id`.
    pub(super) fn summary(&self, id: String, status: &str, seconds: f64) -> StageSummary {
        StageSummary {
            id,
            kind: self.kind.clone(),
            status: status.into(),
            fingerprint: self.fingerprint.clone(),
            items_in: self.items_in as i64,
            items_out: self.items_out as i64,
            items_dropped: self.items_dropped as i64,
            drop_reasons: self.drop_reasons.clone(),
            seconds,
        }
    }

    /// The transient drop reasons and their counts (those behind `retry_items`).
    pub fn retry_reasons(&self) -> BTreeMap<String, i64> {
        self.retry_reasons.clone()
    }
}

/// The record of a finished stage, if there is a readable one. A record from before
/// `retry_reasons` was kept, with items to retry, gets them from its `drops.parquet`.
pub fn read_record(stage_dir: &Path) -> Option<StageRecord> {
    let bytes = std::fs::read(stage_dir.join(STAGE_RECORD)).ok()?;
    let mut record: StageRecord = serde_json::from_slice(&bytes).ok()?;
    if record.retry_items > 0 && record.retry_reasons.is_empty() {
        let drops = crate::table_io::read_rows::<DropRecord>(&stage_dir.join("drops.parquet"));
        record.retry_reasons = retry_reasons(drops.as_deref().unwrap_or_default());
    }
    Some(record)
}

/// Drop records with the `retry` flag per reason code.
pub fn retry_reasons(drops: &[DropRecord]) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for d in drops.iter().filter(|d| d.retry) {
        *counts.entry(d.reason.clone()).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use noisebench_core::{DropRecord, Rows};

    use super::{STAGE_RECORD, read_record};

    fn drop(item: &str, reason: &str, retry: bool) -> DropRecord {
        DropRecord {
            id: format!("drop-{item}"),
            stage: "labels".into(),
            item: item.into(),
            reason: reason.into(),
            detail: String::new(),
            dropped: true,
            retry,
        }
    }

    #[test]
    fn a_record_from_before_retry_reasons_counts_them_from_its_drops() {
        let dir = tempfile::tempdir().unwrap();
        // A stage.json as written before `retry_reasons`: two items to retry.
        let old = serde_json::json!({
            "id": "labels", "kind": "labels", "version": 1, "fingerprint": "f",
            "tables": {}, "items_in": 3, "items_out": 0, "items_dropped": 3,
            "drop_reasons": {"llm_retries_exhausted": 2, "llm_unparseable_output": 1},
            "retry_items": 2
        });
        std::fs::write(dir.path().join(STAGE_RECORD), old.to_string()).unwrap();
        let drops = vec![
            drop("a", "llm_retries_exhausted", true),
            drop("b", "llm_retries_exhausted", true),
            drop("c", "llm_unparseable_output", false),
        ];
        crate::table_io::write_table(&dir.path().join("drops.parquet"), &Rows::Drops(drops))
            .unwrap();
        let record = read_record(dir.path()).unwrap();
        assert_eq!(record.retry_items, 2);
        assert_eq!(
            record.retry_reasons(),
            [("llm_retries_exhausted".to_string(), 2)].into()
        );
        // A record that keeps them is read as written; one with nothing to retry reads nothing.
        let mut kept = record.clone();
        kept.retry_reasons = [("http_503".to_string(), 2)].into();
        std::fs::write(
            dir.path().join(STAGE_RECORD),
            serde_json::to_vec(&kept).unwrap(),
        )
        .unwrap();
        assert_eq!(read_record(dir.path()).unwrap(), kept);
        let mut done = kept;
        done.retry_items = 0;
        done.retry_reasons.clear();
        std::fs::write(
            dir.path().join(STAGE_RECORD),
            serde_json::to_vec(&done).unwrap(),
        )
        .unwrap();
        assert!(read_record(dir.path()).unwrap().retry_reasons.is_empty());
    }
}
