//! Source credibility (CONF-FACT 4.3, Appendix G): a user table of domains, with an LLM fallback
//! for domains it does not list.
//!
//! The table is a CSV with a header: `domain, name, credibility, source_type, notes` (`name`,
//! `source_type` and `notes` may be blank or absent). A domain also covers its subdomains
//! (`bbc.co.uk` covers `news.bbc.co.uk`); the longest listed match wins. Each document gets a
//! `document_credibility` row: `credibility` and `credibility_source = "table"` from the table,
//! or `"generated"` from the `credibility` task; a table's source type replaces the document's,
//! a generated one only when the document has none (or `other`), else the row keeps the
//! document's own. The `documents` table itself is the `documents` stage's and is not rewritten.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::tasks::{
    Credibility, CredibilityInput, CredibilityLevel, CredibilityOutput, SourceType,
};
use noisebench_core::{
    ConfigError, Document, DocumentCredibility, Drops, StageContext, StageError, stable_id,
};
use noisebench_llm::Llm;
use serde::Deserialize;

/// Where credibility comes from when the table has no entry.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// Ask the `credibility` task; rows are marked `generated`.
    #[default]
    Llm,
    /// Leave credibility empty.
    None,
}

/// `[stages.<id>.config.credibility]`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CredibilityConfig {
    /// The domain table (CSV), relative to the repository root. None: every domain falls back.
    pub table: Option<PathBuf>,
    /// Where credibility comes from for a domain the table does not list.
    pub fallback: Fallback,
}

/// One row of the domain table.
#[derive(Debug, Clone, PartialEq)]
pub struct DomainEntry {
    pub domain: String,
    pub name: Option<String>,
    pub credibility: CredibilityLevel,
    pub source_type: Option<SourceType>,
    pub notes: Option<String>,
}

/// Why a domain table cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: line {line}: {message}")]
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: {message}")]
    Header { path: PathBuf, message: String },
}

#[derive(Debug, Deserialize)]
struct RawRow {
    domain: String,
    #[serde(default)]
    name: Option<String>,
    credibility: String,
    #[serde(default)]
    source_type: Option<String>,
    #[serde(default)]
    notes: Option<String>,
}

/// The user's domain table.
#[derive(Debug, Clone, Default)]
pub struct DomainTable {
    entries: BTreeMap<String, DomainEntry>,
}

/// A domain as keys are compared: lower case, no scheme, no `www.`, no path or port.
pub(crate) fn normalise_domain(domain: &str) -> String {
    let d = domain.trim().to_lowercase();
    let d = d.split("://").last().unwrap_or("").to_string();
    let d = d.split(['/', '?', '#']).next().unwrap_or("");
    let d = d.rsplit_once(':').map_or(d, |(h, p)| {
        if p.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            d
        }
    });
    d.trim_start_matches("www.")
        .trim_end_matches('.')
        .to_string()
}

impl DomainTable {
    pub fn load(path: &Path) -> Result<DomainTable, TableError> {
        let bytes = std::fs::read(path).map_err(|source| TableError::Read {
            path: path.into(),
            source,
        })?;
        Self::parse(&bytes, path)
    }

    /// Parse CSV bytes; `path` only names the source in errors.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<DomainTable, TableError> {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(bytes);
        let headers = reader.headers().map_err(|e| TableError::Header {
            path: path.into(),
            message: e.to_string(),
        })?;
        for needed in ["domain", "credibility"] {
            if !headers.iter().any(|h| h == needed) {
                return Err(TableError::Header {
                    path: path.into(),
                    message: format!(
                        "missing column `{needed}` (columns: domain, name, credibility, source_type, notes)"
                    ),
                });
            }
        }
        let mut entries = BTreeMap::new();
        for row in reader.deserialize::<RawRow>() {
            let row_err = |line: u64, message: String| TableError::Row {
                path: path.into(),
                line,
                message,
            };
            let row = row.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                row_err(line, e.to_string())
            })?;
            let line = entries.len() as u64 + 2;
            let domain = normalise_domain(&row.domain);
            if domain.is_empty() {
                return Err(row_err(line, "`domain` is empty".into()));
            }
            let credibility = CredibilityLevel::parse(&row.credibility).ok_or_else(|| {
                row_err(
                    line,
                    format!(
                        "`credibility` is `{}`, expected high, medium or low",
                        row.credibility
                    ),
                )
            })?;
            let source_type = match row.source_type.as_deref().map(str::trim) {
                None | Some("") => None,
                Some(s) => Some(SourceType::parse(s).ok_or_else(|| {
                    row_err(
                        line,
                        format!(
                            "`source_type` is `{s}`, expected mainstream news, government, non-profit, academic, social media or other"
                        ),
                    )
                })?),
            };
            let blank = |s: Option<String>| s.filter(|v| !v.trim().is_empty());
            let entry = DomainEntry {
                domain: domain.clone(),
                name: blank(row.name),
                credibility,
                source_type,
                notes: blank(row.notes),
            };
            if entries.insert(domain.clone(), entry).is_some() {
                return Err(row_err(line, format!("domain `{domain}` is listed twice")));
            }
        }
        Ok(DomainTable { entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry for `domain` or its closest listed parent domain.
    pub fn lookup(&self, domain: &str) -> Option<&DomainEntry> {
        let mut d = normalise_domain(domain);
        loop {
            if let Some(e) = self.entries.get(&d) {
                return Some(e);
            }
            let (_, parent) = d.split_once('.')?;
            if !parent.contains('.') && !self.entries.contains_key(parent) {
                return None;
            }
            d = parent.to_string();
        }
    }
}

/// The labels stage's credibility step: load the configured domain table and [`rate`] every
/// document.
pub(crate) fn rate_documents(
    llm: &Llm,
    config: &CredibilityConfig,
    documents: &[Document],
    ctx: &StageContext,
    drops: &mut Drops,
) -> Result<Vec<DocumentCredibility>, StageError> {
    let table = config
        .table
        .as_ref()
        .map(|p| DomainTable::load(&ctx.resolve(p)))
        .transpose()
        .map_err(|e| ConfigError::new("credibility.table", e.to_string()))?;
    let rows = rate(
        llm,
        &ctx.stage_id,
        documents,
        table.as_ref(),
        config.fallback,
        drops,
    );
    let from = |source: Option<&str>| {
        rows.iter()
            .filter(|r| r.credibility_source.as_deref() == source)
            .count()
    };
    tracing::info!(
        table = from(Some("table")),
        generated = from(Some("generated")),
        unknown = from(None),
        "credibility"
    );
    Ok(rows)
}

/// One `document_credibility` row per document, in input order: from `table`, else from the
/// `credibility` task for each distinct unknown domain (one call per domain). A failed call
/// leaves the documents of that domain unrated and is recorded in `drops` (item
/// `domain:<domain>`).
pub fn rate(
    llm: &Llm,
    stage: &str,
    documents: &[Document],
    table: Option<&DomainTable>,
    fallback: Fallback,
    drops: &mut Drops,
) -> Vec<DocumentCredibility> {
    let unknown: BTreeSet<String> = documents
        .iter()
        .map(document_domain)
        .filter(|d| !d.is_empty() && table.and_then(|t| t.lookup(d)).is_none())
        .collect();
    let generated = if fallback == Fallback::Llm {
        generate(llm, stage, unknown, drops)
    } else {
        BTreeMap::new()
    };
    documents
        .iter()
        .map(|d| {
            let domain = document_domain(d);
            let entry = table.and_then(|t| t.lookup(&domain));
            let answer = generated.get(&domain);
            rating(d, domain, entry, answer)
        })
        .collect()
}

/// The `credibility` task's answer for each domain; a failed call is recorded in `drops`.
fn generate(
    llm: &Llm,
    stage: &str,
    domains: BTreeSet<String>,
    drops: &mut Drops,
) -> BTreeMap<String, CredibilityOutput> {
    let domains: Vec<String> = domains.into_iter().collect();
    let inputs = domains
        .iter()
        .map(|d| CredibilityInput {
            domain: d.clone(),
            description: None,
        })
        .collect();
    let answers = llm.run_batch::<Credibility>(stage, inputs);
    domains
        .into_iter()
        .zip(answers)
        .filter_map(|(d, a)| match a {
            Ok(a) => Some((d, a.value)),
            Err(e) => {
                // The domain's documents are still output, without a credibility.
                drops.add_failure(format!("domain:{d}"), e.as_drop_reason(), e.to_string());
                None
            }
        })
        .collect()
}

/// One document's row: the table's `entry` first, else the `generated` answer, else unrated
/// with the document's own source type.
pub fn rating(
    document: &Document,
    domain: String,
    entry: Option<&DomainEntry>,
    generated: Option<&CredibilityOutput>,
) -> DocumentCredibility {
    let mut row = DocumentCredibility {
        id: stable_id("cred", &[&document.id]),
        document_id: document.id.clone(),
        domain,
        credibility: None,
        credibility_source: None,
        source_type: document.source_type.clone(),
        source_type_source: document.source_type_source.clone(),
    };
    if let Some(e) = entry {
        row.credibility = Some(e.credibility.as_str().to_string());
        row.credibility_source = Some("table".into());
        if let Some(t) = e.source_type {
            row.source_type = t.as_str().to_string();
            row.source_type_source = "table".into();
        }
    } else if let Some(g) = generated {
        row.credibility = Some(g.credibility.as_str().to_string());
        row.credibility_source = Some("generated".into());
        if row.source_type.trim().is_empty() || row.source_type == "other" {
            row.source_type = g.source_type.as_str().to_string();
            row.source_type_source = "generated".into();
        }
    }
    row
}

/// A document's domain: its `domain` column, else the host of its URL.
pub(crate) fn document_domain(d: &Document) -> String {
    let domain = normalise_domain(&d.domain);
    if domain.is_empty() {
        normalise_domain(&d.url)
    } else {
        domain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "domain,name,credibility,source_type,notes\n\
        bbc.co.uk,BBC,high,mainstream news,\n\
        www.Reddit.com,Reddit,low,social media,user posts\n\
        example.org,,Medium,,\n";

    #[test]
    fn loads_and_looks_up_subdomains() {
        let t = DomainTable::parse(CSV.as_bytes(), Path::new("t.csv")).unwrap();
        assert_eq!(t.len(), 3);
        let e = t.lookup("news.bbc.co.uk").unwrap();
        assert_eq!(e.domain, "bbc.co.uk");
        assert_eq!(e.source_type, Some(SourceType::MainstreamNews));
        assert_eq!(
            t.lookup("old.reddit.com").unwrap().credibility,
            CredibilityLevel::Low
        );
        assert_eq!(
            t.lookup("https://www.reddit.com/r/x")
                .unwrap()
                .name
                .as_deref(),
            Some("Reddit")
        );
        let org = t.lookup("example.org").unwrap();
        assert_eq!(
            (org.credibility, org.source_type, org.name.clone()),
            (CredibilityLevel::Medium, None, None)
        );
        assert!(t.lookup("co.uk").is_none());
        assert!(t.lookup("unknown.net").is_none());
    }

    #[test]
    fn a_rating_keeps_the_documents_own_source_type_unless_overridden() {
        let table = DomainTable::parse(CSV.as_bytes(), Path::new("t.csv")).unwrap();
        let doc = |id: &str, source_type: &str| Document {
            id: id.into(),
            source_type: source_type.into(),
            source_type_source: "rules".into(),
            ..Document::default()
        };
        let generated = CredibilityOutput {
            credibility: CredibilityLevel::Medium,
            source_type: SourceType::Academic,
        };
        // The table's source type replaces the document's.
        let bbc = table.lookup("news.bbc.co.uk");
        let r = rating(&doc("a", "other"), "news.bbc.co.uk".into(), bbc, None);
        assert_eq!(r.id, stable_id("cred", &["a"]));
        assert_eq!(
            (r.credibility.as_deref(), r.credibility_source.as_deref()),
            (Some("high"), Some("table"))
        );
        assert_eq!(
            (r.source_type.as_str(), r.source_type_source.as_str()),
            ("mainstream news", "table")
        );
        // A table entry without a source type keeps the document's.
        let org = table.lookup("example.org");
        let r = rating(&doc("b", "non-profit"), "example.org".into(), org, None);
        assert_eq!(
            (r.source_type.as_str(), r.source_type_source.as_str()),
            ("non-profit", "rules")
        );
        // A generated source type fills only `other` (or nothing).
        let r = rating(&doc("c", "other"), "x.net".into(), None, Some(&generated));
        assert_eq!(r.credibility_source.as_deref(), Some("generated"));
        assert_eq!(
            (r.source_type.as_str(), r.source_type_source.as_str()),
            ("academic", "generated")
        );
        let r = rating(
            &doc("d", "government"),
            "x.gov".into(),
            None,
            Some(&generated),
        );
        assert_eq!(
            (r.source_type.as_str(), r.source_type_source.as_str()),
            ("government", "rules")
        );
        // Unrated: no credibility, the document's own source type.
        let r = rating(&doc("e", "other"), "y.net".into(), None, None);
        assert_eq!((r.credibility, r.credibility_source), (None, None));
        assert_eq!(
            (r.source_type.as_str(), r.domain.as_str()),
            ("other", "y.net")
        );
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let bad = "domain,credibility\nfoo.com,very high\n";
        let e = DomainTable::parse(bad.as_bytes(), Path::new("t.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("credibility"), "{e}");
        let e = DomainTable::parse(b"site,credibility\n", Path::new("t.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing column `domain`"), "{e}");
        let dup = "domain,credibility\na.com,high\nwww.a.com,low\n";
        let e = DomainTable::parse(dup.as_bytes(), Path::new("t.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("listed twice"), "{e}");
        assert_eq!(normalise_domain("HTTP://WWW.Foo.com:8080/a"), "foo.com");
    }
}
