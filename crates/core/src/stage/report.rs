//! What a stage reports: counts, drops (each with its typed reason, [`DropReason`]) and facts.

use std::collections::BTreeMap;

use super::DropReason;
use crate::model::DropRecord;

/// Items in, out and dropped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageReport {
    pub items_in: u64,
    pub items_out: u64,
    pub drops: Vec<DropRecord>,
}

impl StageReport {
    /// Records whose failure is transient ([`DropReason::is_transient`]): what the next run
    /// retries.
    pub fn transient_drops(&self) -> usize {
        self.drops.iter().filter(|d| d.retry).count()
    }

    /// Items dropped: records with `dropped` set (failures of kept items are not counted).
    pub fn items_dropped(&self) -> u64 {
        self.drops.iter().filter(|d| d.dropped).count() as u64
    }

    /// Drop records per reason code, ordered (failures of kept items included: see
    /// [`StageReport::failure_reasons`]).
    pub fn drop_reasons(&self) -> BTreeMap<String, i64> {
        let mut counts = BTreeMap::new();
        for d in &self.drops {
            *counts.entry(d.reason.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// Failures that did not cost their item (`dropped` false) per reason code: a summary shows
    /// them apart from the items dropped.
    pub fn failure_reasons(&self) -> BTreeMap<String, i64> {
        let mut counts = BTreeMap::new();
        for d in self.drops.iter().filter(|d| !d.dropped) {
            *counts.entry(d.reason.clone()).or_insert(0) += 1;
        }
        counts
    }
}

/// Collects drops for a stage so that every dropped item carries stage, item, reason and detail.
#[derive(Debug, Default)]
pub struct Drops {
    stage: String,
    records: Vec<DropRecord>,
}

impl Drops {
    pub fn new(stage: &str) -> Self {
        Self {
            stage: stage.into(),
            records: Vec::new(),
        }
    }

    /// The item produced no output row. `reason` is a stage's own code (`"empty_claim"`,
    /// permanent) or the [`DropReason`] a layer gave its failure.
    pub fn add(
        &mut self,
        item: impl Into<String>,
        reason: impl Into<DropReason>,
        detail: impl Into<String>,
    ) {
        self.push(item.into(), reason.into(), detail.into(), true);
    }

    /// A failure on the way to an item the stage still outputs (one failed vote among several,
    /// a review-sheet row that could not be applied): recorded, not counted as a dropped item.
    pub fn add_failure(
        &mut self,
        item: impl Into<String>,
        reason: impl Into<DropReason>,
        detail: impl Into<String>,
    ) {
        self.push(item.into(), reason.into(), detail.into(), false);
    }

    /// The record: `retry` is the reason's own flag.
    fn push(&mut self, item: String, reason: DropReason, detail: String, dropped: bool) {
        let id = crate::stable_id("drop", &[&self.stage, &item, reason.code()]);
        self.records.push(DropRecord {
            id,
            stage: self.stage.clone(),
            item,
            reason: reason.code().to_string(),
            detail,
            dropped,
            retry: reason.is_transient(),
        });
    }

    /// Items dropped (not failures of kept items).
    pub fn dropped(&self) -> usize {
        self.records.iter().filter(|r| r.dropped).count()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn into_records(self) -> Vec<DropRecord> {
        self.records
    }
}

/// What a stage reports about its run beyond counts (a labelling run's label distribution, a
/// retrieval's recall): kept in its `stage.json`, put in the snapshot manifest's provenance as
/// `facts:<stage>` and rendered in the dataset card under `title`, one bullet per line. The stage
/// phrases its own facts; the card renders every stage's the same way.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StageFacts {
    /// The card's heading for these facts.
    pub title: String,
    /// The facts as sentences, for the card.
    pub lines: Vec<String>,
    /// The facts as data, for the manifest and for programs.
    pub data: serde_json::Value,
}

impl StageFacts {
    pub fn new(title: impl Into<String>, lines: Vec<String>, data: &impl serde::Serialize) -> Self {
        Self {
            title: title.into(),
            lines,
            data: serde_json::to_value(data).unwrap_or(serde_json::Value::Null),
        }
    }
}
