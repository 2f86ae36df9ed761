//! Domain presets: which metadata a report carries and how large its chunks are.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A report's domain. It picks the metadata keys a report carries and the default chunk sizes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// 10-K filings: cik, company, filing_type, filing_date, period_of_report.
    Finance,
    /// Economic surveys: country, year.
    Economics,
    /// Grant and policy plans: grantee, state, year.
    Policy,
    /// Anything else: no required metadata.
    #[default]
    General,
}

impl Domain {
    pub fn name(self) -> &'static str {
        match self {
            Domain::Finance => "finance",
            Domain::Economics => "economics",
            Domain::Policy => "policy",
            Domain::General => "general",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "finance" => Some(Domain::Finance),
            "economics" => Some(Domain::Economics),
            "policy" => Some(Domain::Policy),
            "general" => Some(Domain::General),
            _ => None,
        }
    }

    /// Metadata keys every report of this domain carries (empty when unknown).
    pub fn metadata_keys(self) -> &'static [&'static str] {
        match self {
            Domain::Finance => &[
                "cik",
                "company",
                "filing_type",
                "filing_date",
                "period_of_report",
            ],
            Domain::Economics => &["country", "year"],
            Domain::Policy => &["grantee", "state", "year"],
            Domain::General => &[],
        }
    }

    /// Default chunk sizes. Finance follows RARE's code (800 cl100k tokens, 100 overlap); the
    /// others follow the paper's "about 600 tokens" with no overlap.
    pub(crate) fn chunk_sizes(self) -> ChunkSizes {
        match self {
            Domain::Finance => ChunkSizes {
                max_tokens: 800,
                overlap_tokens: 100,
            },
            _ => ChunkSizes {
                max_tokens: 600,
                overlap_tokens: 0,
            },
        }
    }
}

/// Token limit and overlap of a chunk preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkSizes {
    pub max_tokens: usize,
    pub overlap_tokens: usize,
}
