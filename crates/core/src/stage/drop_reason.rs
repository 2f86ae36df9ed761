//! Why an item was dropped, typed: a stable code and whether the failure is transient, said by
//! the layer that knows (the web layer of a fetch, the LLM layer of a call, the stage of its own
//! rules). The `retry` column of `drops.parquet` is the flag, never read back out of the code.
//!
//! What this is not: the list of a stage's own codes (they are the stage's, documented beside
//! it); only the layers' codes are listed here as data ([`DropCode`]), for the generated
//! reference of drop reasons.

use std::fmt;

/// A drop's reason: its code (`http_503`, `llm_unparseable_output`, `empty_claim`) and whether a
/// later run may well not meet it (the network, a rate limit, a server error, a timeout, a spent
/// budget, a cache-only run's miss): such an item is not done, and the next run retries it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DropReason {
    code: String,
    transient: bool,
}

impl DropReason {
    /// A permanent failure: bad input, a 4xx other than 408/429, output still unusable after
    /// re-asks. Counted, never retried.
    pub fn permanent(code: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            transient: false,
        }
    }

    /// A transient failure: the item is left to the next run.
    pub fn transient(code: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            transient: true,
        }
    }

    /// The same failure under a layer's prefix (`search_http_503`, `credibility_llm_...`): the
    /// code gains `<layer>_` in front, the flag is kept.
    pub fn prefixed(&self, layer: &str) -> Self {
        Self {
            code: format!("{layer}_{}", self.code),
            transient: self.transient,
        }
    }

    /// The reason code, as written to `drops.parquet`'s `reason`.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// Whether the next run retries the item (`drops.parquet`'s `retry`).
    pub fn is_transient(&self) -> bool {
        self.transient
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code)
    }
}

/// A stage's own code, written where it drops (`drops.add(item, "empty_claim", detail)`): a
/// stage's rule is permanent; a transient failure comes typed from the layer that met it.
impl From<&'static str> for DropReason {
    fn from(code: &'static str) -> Self {
        Self::permanent(code)
    }
}

impl From<&DropReason> for DropReason {
    fn from(reason: &DropReason) -> Self {
        reason.clone()
    }
}

/// One code a layer drops with, for the generated reference (`docs/drop-reasons.md`): its code
/// (a `<status>` placeholder for a family), whether it is retried, and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropCode {
    pub code: &'static str,
    pub transient: bool,
    pub meaning: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_keeps_the_flag_and_a_stage_code_is_permanent() {
        let r = DropReason::transient("http_503").prefixed("search");
        assert_eq!((r.code(), r.is_transient()), ("search_http_503", true));
        let p = DropReason::permanent("http_404").prefixed("search");
        assert_eq!((p.code(), p.is_transient()), ("search_http_404", false));
        let own: DropReason = "empty_claim".into();
        assert!(!own.is_transient());
        assert_eq!(own.to_string(), "empty_claim");
        assert_eq!(DropReason::from(&r), r);
    }
}
