//! The model calls that failed, kept per pair (and per claim for the zero-context probe) until
//! the pair's row is assembled ([`crate::assemble`]); a leaf module, so the exam, the stance vote
//! and the assembly all use it without importing each other.

use std::collections::BTreeMap;

use noisebench_core::DropReason;
use noisebench_llm::LlmError;

/// One failed call: (call, reason, detail).
pub(crate) type Failure = (String, DropReason, String);

/// The model calls that failed for each pair, and each claim's zero-context probe.
#[derive(Default)]
pub(crate) struct CallFailures {
    /// pair id -> failed calls
    pairs: BTreeMap<String, Vec<Failure>>,
    /// claim id -> (reason, detail) of the zero-context probe
    claims: BTreeMap<String, (DropReason, String)>,
}

impl CallFailures {
    pub fn pair(&mut self, pair: &str, call: &str, e: &LlmError) {
        self.pair_reason(pair, call, e.as_drop_reason(), e.to_string());
    }

    pub fn pair_reason(&mut self, pair: &str, call: &str, reason: DropReason, detail: String) {
        self.pairs
            .entry(pair.to_string())
            .or_default()
            .push((call.to_string(), reason, detail));
    }

    /// The zero-context probe of `claim` failed.
    pub fn claim(&mut self, claim: &str, e: &LlmError) {
        self.claims
            .insert(claim.to_string(), (e.as_drop_reason(), e.to_string()));
    }

    /// A pair's failures, its claim's probe first.
    pub(crate) fn of(&self, pair: &str, claim: &str) -> Vec<Failure> {
        let mut all: Vec<Failure> = self
            .claims
            .get(claim)
            .map(|(r, d)| ("zero_context".to_string(), r.clone(), d.clone()))
            .into_iter()
            .collect();
        all.extend(self.pairs.get(pair).cloned().unwrap_or_default());
        all
    }
}

pub(crate) fn describe(failures: &[Failure]) -> String {
    failures
        .iter()
        .map(|(call, reason, detail)| format!("{call}: {reason} ({detail})"))
        .collect::<Vec<_>>()
        .join("; ")
}
