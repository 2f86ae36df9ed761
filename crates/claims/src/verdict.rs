//! Ratings to binary verdicts.
//!
//! A fact-checker's rating is first normalised to a slug (`"Pants on Fire!"` -> `pants-fire`,
//! `"Not Enough Evidence"` -> `not-enough-evidence`), then mapped by a preset:
//!
//! | preset        | true                            | false                                         | excluded |
//! |---------------|---------------------------------|-----------------------------------------------|----------|
//! | `raguard`     | true, mostly-true, half-true    | mostly-false, barely-true, false, pants-fire  | Flip-O-Meter rulings |
//! | `strict`      | true, mostly-true               | mostly-false, barely-true, false, pants-fire  | half-true, Flip-O-Meter |
//! | `averitec`    | supported                       | refuted                                       | not-enough-evidence, conflicting-evidence/cherrypicking |
//! | `factcheckqa` | true                            | false                                         | other |
//!
//! `raguard` reproduces the RAGuard release, which counts half-true as true (1,333 "True" claims =
//! true + mostly-true + half-true). A rating no preset entry names is unknown, and the row is dropped.

use std::collections::BTreeMap;

use noisebench_core::Verdict;

/// What a rating maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapped {
    Verdict(Verdict),
    /// A known rating that is not a truth verdict under this preset (the reason says why).
    Excluded(String),
    Unknown,
}

/// A rating -> verdict table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictMap {
    pub name: String,
    entries: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Verdict(Verdict),
    Excluded(String),
}

/// Flip-O-Meter rulings judge consistency, not truth.
const FLIP_O_METER: [&str; 3] = ["full-flop", "half-flip", "no-flip"];

/// The preset names [`VerdictMap::preset`] accepts.
pub const PRESETS: [&str; 4] = ["raguard", "strict", "averitec", "factcheckqa"];

impl VerdictMap {
    pub fn preset(name: &str) -> Option<VerdictMap> {
        use Verdict::{False, True};
        let mut map = VerdictMap {
            name: name.into(),
            entries: BTreeMap::new(),
        };
        match name {
            "raguard" | "strict" => {
                for slug in ["true", "mostly-true"] {
                    map.set(slug, True);
                }
                for slug in ["mostly-false", "barely-true", "false", "pants-fire"] {
                    map.set(slug, False);
                }
                if name == "raguard" {
                    map.set("half-true", True);
                } else {
                    map.exclude(
                        "half-true",
                        "half-true is neither true nor false under the strict preset",
                    );
                }
                for slug in FLIP_O_METER {
                    map.exclude(slug, "a Flip-O-Meter ruling is not a truth rating");
                }
            }
            "averitec" => {
                map.set("supported", True);
                map.set("refuted", False);
                map.exclude("not-enough-evidence", "not a binary verdict");
                map.exclude("conflicting-evidence/cherrypicking", "not a binary verdict");
            }
            "factcheckqa" => {
                map.set("true", True);
                map.set("false", False);
                map.exclude("other", "not a binary verdict");
            }
            _ => return None,
        }
        Some(map)
    }

    fn set(&mut self, slug: &str, verdict: Verdict) {
        self.entries.insert(slug.into(), Entry::Verdict(verdict));
    }

    fn exclude(&mut self, slug: &str, why: &str) {
        self.entries
            .insert(slug.into(), Entry::Excluded(why.into()));
    }

    /// Add or override an entry: `to` is `true`, `false` or `exclude`.
    pub fn with_entry(mut self, rating: &str, to: &str) -> Result<Self, String> {
        let slug = normalise_rating(rating);
        match to {
            "true" => self.set(&slug, Verdict::True),
            "false" => self.set(&slug, Verdict::False),
            "exclude" => self.exclude(&slug, "excluded by the verdict_map configuration"),
            other => return Err(format!("`{other}` is not one of true, false, exclude")),
        }
        Ok(self)
    }

    /// Map a raw rating (normalised first).
    pub fn map(&self, rating: &str) -> Mapped {
        match self.entries.get(&normalise_rating(rating)) {
            Some(Entry::Verdict(v)) => Mapped::Verdict(*v),
            Some(Entry::Excluded(why)) => Mapped::Excluded(why.clone()),
            None => Mapped::Unknown,
        }
    }
}

/// Normalise a rating to a slug: lower case, trimmed, trailing `!`/`.` removed, spaces and
/// underscores to hyphens; PolitiFact's spellings of Pants on Fire become `pants-fire`.
pub fn normalise_rating(raw: &str) -> String {
    let lowered = raw
        .trim()
        .trim_end_matches(['!', '.'])
        .trim()
        .to_lowercase();
    let slug: String = lowered
        .split(|c: char| c.is_whitespace() || c == '_')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    match slug.as_str() {
        "pants-on-fire" | "pants-fire" | "pof" => "pants-fire".into(),
        _ => slug,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raguard_counts_half_true_as_true_and_strict_excludes_it() {
        let raguard = VerdictMap::preset("raguard").unwrap();
        let strict = VerdictMap::preset("strict").unwrap();
        assert_eq!(raguard.map("half-true"), Mapped::Verdict(Verdict::True));
        assert!(matches!(strict.map("Half True"), Mapped::Excluded(_)));
        for map in [&raguard, &strict] {
            assert_eq!(map.map("Pants on Fire!"), Mapped::Verdict(Verdict::False));
            assert_eq!(map.map("barely-true"), Mapped::Verdict(Verdict::False));
            assert_eq!(map.map("Mostly True"), Mapped::Verdict(Verdict::True));
            assert!(matches!(map.map("full-flop"), Mapped::Excluded(_)));
            assert_eq!(map.map("sort-of-true"), Mapped::Unknown);
        }
    }

    #[test]
    fn averitec_and_factcheckqa() {
        let a = VerdictMap::preset("averitec").unwrap();
        assert_eq!(a.map("Supported"), Mapped::Verdict(Verdict::True));
        assert_eq!(a.map("Refuted "), Mapped::Verdict(Verdict::False));
        assert!(matches!(
            a.map("Conflicting Evidence/Cherrypicking"),
            Mapped::Excluded(_)
        ));
        let f = VerdictMap::preset("factcheckqa").unwrap();
        assert!(matches!(f.map("other"), Mapped::Excluded(_)));
        assert_eq!(f.map("maybe"), Mapped::Unknown);
        assert!(VerdictMap::preset("nope").is_none());
    }

    #[test]
    fn overrides() {
        let m = VerdictMap::preset("strict")
            .unwrap()
            .with_entry("Half True", "true")
            .unwrap();
        assert_eq!(m.map("half-true"), Mapped::Verdict(Verdict::True));
        assert!(
            VerdictMap::preset("strict")
                .unwrap()
                .with_entry("x", "maybe")
                .is_err()
        );
    }
}
