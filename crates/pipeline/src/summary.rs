//! The run summary as text: one row per stage, its items in, out and dropped, the reasons of
//! the items it dropped and, apart from them, the failures that did not cost their item (a
//! cut-off answer re-asked, one failed vote of several, a triplet not found in its window):
//! a stage that dropped nothing shows no reason beside its `0`.

use noisebench_core::StageSummary;
use std::collections::BTreeMap;

/// Failures of kept items per stage id and reason code.
pub(crate) type KeptFailures = BTreeMap<String, BTreeMap<String, i64>>;

/// A run summary as an aligned text table. `drop_reasons` of a row counts every drop record;
/// `failures` says which of them did not cost their item, so the reasons column shows the
/// dropped items' reasons, then `kept: ...` for the rest.
pub fn render(summary: &[StageSummary], failures: &KeptFailures) -> String {
    let mut out = format!(
        "{:<18} {:<16} {:<8} {:>9} {:>9} {:>8}  {}\n",
        "stage", "kind", "status", "in", "out", "dropped", "drop reasons"
    );
    let none = BTreeMap::new();
    for s in summary {
        let kept = failures.get(&s.id).unwrap_or(&none);
        let (dropped, kept) = split_reasons(&s.drop_reasons, kept);
        let mut reasons = join(&dropped);
        if !kept.is_empty() {
            if !reasons.is_empty() {
                reasons.push_str("; ");
            }
            reasons.push_str("kept despite: ");
            reasons.push_str(&join(&kept));
        }
        out.push_str(
            format!(
                "{:<18} {:<16} {:<8} {:>9} {:>9} {:>8}  {}",
                s.id, s.kind, s.status, s.items_in, s.items_out, s.items_dropped, reasons
            )
            .trim_end(),
        );
        out.push('\n');
    }
    out
}

/// The records per reason split into dropped items and failures of kept items.
fn split_reasons(
    all: &BTreeMap<String, i64>,
    kept: &BTreeMap<String, i64>,
) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
    let mut dropped = BTreeMap::new();
    let mut failures = BTreeMap::new();
    for (reason, n) in all {
        let k = kept.get(reason).copied().unwrap_or(0).min(*n);
        if n - k > 0 {
            dropped.insert(reason.clone(), n - k);
        }
        if k > 0 {
            failures.insert(reason.clone(), k);
        }
    }
    (dropped, failures)
}

fn join(reasons: &BTreeMap<String, i64>) -> String {
    reasons
        .iter()
        .map(|(r, n)| format!("{r}={n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, dropped: i64, reasons: &[(&str, i64)]) -> StageSummary {
        StageSummary {
            id: id.into(),
            kind: id.into(),
            status: "ran".into(),
            items_in: 4,
            items_out: 4 - dropped,
            items_dropped: dropped,
            drop_reasons: reasons.iter().map(|(r, n)| (r.to_string(), *n)).collect(),
            ..StageSummary::default()
        }
    }

    #[test]
    fn failures_of_kept_items_are_not_shown_as_drops() {
        let summary = [
            row("labels", 0, &[("llm_truncated", 3)]),
            row(
                "triplets",
                1,
                &[("llm_http_error", 1), ("llm_truncated", 2)],
            ),
            row("chunks", 0, &[]),
        ];
        let failures: KeptFailures = [
            (
                "labels".to_string(),
                [("llm_truncated".to_string(), 3)].into(),
            ),
            (
                "triplets".to_string(),
                [("llm_truncated".to_string(), 2)].into(),
            ),
        ]
        .into();
        let text = render(&summary, &failures);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].ends_with("0  kept despite: llm_truncated=3"),
            "{text}"
        );
        assert!(
            lines[2].ends_with("1  llm_http_error=1; kept despite: llm_truncated=2"),
            "{text}"
        );
        assert!(lines[3].ends_with(" 0"), "{text}");
        // Without the records, every record is shown as it was counted.
        let plain = render(&summary, &KeptFailures::new());
        assert!(
            plain
                .lines()
                .nth(1)
                .unwrap()
                .ends_with("0  llm_truncated=3")
        );
    }
}
