//! Entity alignment: which surface forms name the same entity.
//!
//! Three rules, tried in order for each surface form of a report: the filer rule ("the Company",
//! "we", "our" in a filing name the filer in the report's metadata), the abbreviation rule ("IBM"
//! where the report wrote "International Business Machines (IBM)"), and normalisation (case,
//! punctuation, corporate suffixes such as Inc., Corp., Ltd., LLC, plc). Two surface forms are one
//! entity when they reach the same key.

use std::collections::BTreeMap;

use noisebench_text::words::words;

/// How a surface form reached its canonical form: the `aliases` table's `rule` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// Case and punctuation only.
    Normalised,
    /// A corporate suffix removed (and perhaps case and punctuation).
    Suffix,
    /// A company reference ("we") resolved to the report's filer.
    Filer,
    /// An abbreviation resolved to the long form the report defines.
    Abbreviation,
    /// A relation merged into a canonical relation by embedding similarity.
    Embedding,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Normalised => "normalised",
            Rule::Suffix => "suffix",
            Rule::Filer => "filer",
            Rule::Abbreviation => "abbreviation",
            Rule::Embedding => "embedding",
        }
    }
}

/// Lowercase words joined by single spaces (case and punctuation removed).
pub(crate) fn basic_key(surface: &str) -> String {
    words(surface).join(" ")
}

/// The entity key of a surface form: [`basic_key`] with trailing corporate suffixes removed
/// (`suffixes` as written in configuration, compared by their words: "Inc." is `inc`), and
/// whether a suffix was removed. A name that is nothing but a suffix keeps it.
pub(crate) fn entity_key(surface: &str, suffixes: &[Vec<String>]) -> (String, bool) {
    let mut w = words(surface);
    let mut stripped = false;
    'outer: loop {
        for s in suffixes {
            if !s.is_empty() && w.len() > s.len() && w.ends_with(s) {
                w.truncate(w.len() - s.len());
                stripped = true;
                continue 'outer;
            }
        }
        break;
    }
    (w.join(" "), stripped)
}

/// Suffixes as configured, turned into word lists for [`entity_key`].
pub(crate) fn suffix_words(suffixes: &[String]) -> Vec<Vec<String>> {
    suffixes
        .iter()
        .map(|s| words(s))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Abbreviations a text defines as `Long Form (ABBR)` (also `("ABBR")`), by their
/// [`basic_key`], mapped to the long form as written. The long form is found the way Schwartz
/// and Hearst's algorithm does: the shortest run of preceding words whose letters, read right to
/// left, contain the abbreviation's, its first letter starting a word. Hand-written: no
/// maintained Rust crate does abbreviation definitions.
pub fn abbreviations(text: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut rest = text;
    let mut offset = 0;
    while let Some(open) = rest.find('(') {
        let start = offset + open;
        let Some(close) = text[start..].find(')').map(|c| start + c) else {
            break;
        };
        let inner = text[start + 1..close]
            .trim()
            .trim_matches(|c: char| matches!(c, '"' | '\'' | '“' | '”' | '‘' | '’'))
            .trim();
        if is_abbreviation(inner)
            && let Some(long) = long_form(&text[..start], inner)
        {
            found.entry(basic_key(inner)).or_insert(long);
        }
        offset = start + 1;
        rest = &text[offset..];
    }
    found
}

/// Two to ten characters, no spaces, starting with a letter, at least two capitals.
fn is_abbreviation(s: &str) -> bool {
    let n = s.chars().count();
    (2..=10).contains(&n)
        && s.chars().next().is_some_and(char::is_alphabetic)
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '&' | '.' | '-'))
        && s.chars().filter(|c| c.is_uppercase()).count() >= 2
}

fn long_form(before: &str, abbr: &str) -> Option<String> {
    let letters: Vec<char> = abbr
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    let max_words = (letters.len() + 5).min(letters.len() * 2);
    let candidate: Vec<&str> = before.split_whitespace().collect();
    let take = candidate.len().min(max_words);
    let window = &candidate[candidate.len() - take..];
    // The shortest suffix of the window that spells the abbreviation.
    for n in 1..=window.len() {
        let words = &window[window.len() - n..];
        if spells(words, &letters) {
            let long = words
                .join(" ")
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_string();
            return (!long.is_empty()).then_some(long);
        }
    }
    None
}

/// Whether the abbreviation's letters occur right to left in `words`, the first one at the
/// start of the first word.
fn spells(words: &[&str], letters: &[char]) -> bool {
    let text: Vec<char> = words
        .join(" ")
        .chars()
        .flat_map(char::to_lowercase)
        .collect();
    let Some((first, rest)) = letters.split_first() else {
        return false;
    };
    let mut i = text.len();
    for c in rest.iter().rev() {
        match text[..i].iter().rposition(|t| t == c) {
            Some(p) if p > 0 => i = p,
            _ => return false,
        }
    }
    // The first letter must begin the first word.
    text.first().is_some_and(|t| t == first)
}

/// What a report says about its own entities: its filer and its abbreviations.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportContext {
    /// The filer's name from the report's metadata, when the filer rule applies.
    pub filer: Option<String>,
    /// Abbreviation key ([`basic_key`]) -> long form, from the report's text.
    pub abbreviations: BTreeMap<String, String>,
    /// The corporate suffixes of the report's domain, as word lists.
    pub suffixes: Vec<Vec<String>>,
}

/// Where a surface form of a report leads: the entity key, the rule, and (filer and
/// abbreviation) the name it stood for.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub key: String,
    pub rule: Rule,
    /// The filer's or the long form's name, for filer and abbreviation resolutions.
    pub resolved_to: Option<String>,
}

/// Resolve one surface form within its report. `filer_phrases` are [`basic_key`]s ("we",
/// "the company").
pub fn resolve(surface: &str, ctx: &ReportContext, filer_phrases: &[String]) -> Resolution {
    let basic = basic_key(surface);
    if let Some(filer) = &ctx.filer
        && filer_phrases.contains(&basic)
    {
        let (key, _) = entity_key(filer, &ctx.suffixes);
        if !key.is_empty() {
            return Resolution {
                key,
                rule: Rule::Filer,
                resolved_to: Some(filer.clone()),
            };
        }
    }
    if let Some(long) = ctx.abbreviations.get(&basic) {
        let (key, _) = entity_key(long, &ctx.suffixes);
        if !key.is_empty() {
            return Resolution {
                key,
                rule: Rule::Abbreviation,
                resolved_to: Some(long.clone()),
            };
        }
    }
    let (key, stripped) = entity_key(surface, &ctx.suffixes);
    Resolution {
        key,
        rule: if stripped {
            Rule::Suffix
        } else {
            Rule::Normalised
        },
        resolved_to: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corporate() -> Vec<Vec<String>> {
        suffix_words(&[
            "Inc.".into(),
            "Corp.".into(),
            "Corporation".into(),
            "Ltd.".into(),
            "LLC".into(),
            "plc".into(),
        ])
    }

    #[test]
    fn normalisation_removes_case_punctuation_and_suffixes() {
        let s = corporate();
        assert_eq!(entity_key("Apple Inc.", &s), ("apple".into(), true));
        assert_eq!(entity_key("APPLE, INC", &s), ("apple".into(), true));
        assert_eq!(entity_key("apple", &s), ("apple".into(), false));
        assert!(!entity_key("Acme Holdings, L.L.C.", &s).1);
        assert_eq!(
            entity_key("Acme Holdings LLC", &s),
            ("acme holdings".into(), true)
        );
        assert_eq!(
            entity_key("Vodafone Group Plc", &s),
            ("vodafone group".into(), true)
        );
        assert_eq!(entity_key("Widget Corp. Ltd.", &s), ("widget".into(), true));
        // A name that is only a suffix keeps it; punctuation alone is empty.
        assert_eq!(entity_key("Inc.", &s), ("inc".into(), false));
        assert_eq!(entity_key(" -- ", &s), ("".into(), false));
        // Without a suffix list, nothing is removed.
        assert_eq!(entity_key("Apple Inc.", &[]), ("apple inc".into(), false));
    }

    #[test]
    fn the_filer_rule_resolves_company_references_in_its_report_only() {
        let ctx = ReportContext {
            filer: Some("ACME CORP".into()),
            suffixes: corporate(),
            ..Default::default()
        };
        let phrases: Vec<String> = ["we", "our", "the company"].map(String::from).to_vec();
        for surface in ["We", "our", "the Company", "The Company."] {
            let r = resolve(surface, &ctx, &phrases);
            assert_eq!(r.key, "acme", "{surface}");
            assert_eq!(r.rule, Rule::Filer);
            assert_eq!(r.resolved_to.as_deref(), Some("ACME CORP"));
        }
        // Not a company reference.
        assert_eq!(
            resolve("the companies", &ctx, &phrases).rule,
            Rule::Normalised
        );
        // A report without a filer leaves "we" alone.
        let none = ReportContext {
            suffixes: corporate(),
            ..Default::default()
        };
        let r = resolve("we", &none, &phrases);
        assert_eq!((r.key.as_str(), r.rule), ("we", Rule::Normalised));
    }

    #[test]
    fn abbreviations_resolve_to_the_long_form_the_report_defines() {
        let text = "International Business Machines (IBM) and the Federal Reserve Board (\"FRB\") \
                    met. Revenue (net) rose; the U.S. Securities and Exchange Commission (SEC) \
                    agreed. A random (XYZ) stays.";
        let found = abbreviations(text);
        assert_eq!(
            found.get("ibm").map(String::as_str),
            Some("International Business Machines")
        );
        assert_eq!(
            found.get("frb").map(String::as_str),
            Some("Federal Reserve Board")
        );
        assert_eq!(
            found.get("sec").map(String::as_str),
            Some("Securities and Exchange Commission")
        );
        assert!(!found.contains_key("net"));
        assert!(!found.contains_key("xyz"));

        let ctx = ReportContext {
            abbreviations: found,
            suffixes: corporate(),
            ..Default::default()
        };
        let r = resolve("IBM", &ctx, &[]);
        assert_eq!(r.key, "international business machines");
        assert_eq!(r.rule, Rule::Abbreviation);
        // Without the definition, "IBM" is its own entity.
        let r = resolve("IBM", &ReportContext::default(), &[]);
        assert_eq!((r.key.as_str(), r.rule), ("ibm", Rule::Normalised));
    }
}
