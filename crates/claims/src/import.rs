//! The `claims-import` stage: claims from CSV or JSONL files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_core::{
    Claim, ConfigError, Drops, InputSpec, Inputs, OutputSpec, StageContext, StageError,
    StageOutput, TableKind, TypedStage,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::dates::parse_date;
use crate::identity::claim_id;
use crate::politifact;
use crate::verdict::{Mapped, PRESETS, VerdictMap, normalise_rating};

/// `claims-import` configuration: one or more source files.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportConfig {
    /// The files to read, in order (at least one). A claim found twice is merged into the first
    /// seen, which takes the fields it lacks from the later one.
    pub sources: Vec<SourceConfig>,
}

/// One input file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    /// CSV or JSONL file, relative to the repository root.
    pub path: PathBuf,
    /// `csv` or `jsonl`; by default from the file extension (`.csv`, `.jsonl`, `.ndjson`).
    pub format: Option<Format>,
    /// Column set: `averitec`, `factcheckqa` or `politifact`. Individual `columns` override it.
    pub preset: Option<ColumnPreset>,
    /// Which column holds each claim field, overriding the preset's column for that field.
    #[serde(default)]
    pub columns: ColumnMap,
    /// Verdict preset: `raguard`, `strict`, `averitec`, `factcheckqa`. Defaults from the column
    /// preset (`politifact` -> `raguard`).
    pub verdicts: Option<String>,
    /// Extra or overriding rating entries: rating = "true" | "false" | "exclude". The key is the
    /// file's own rating word ("Unproven", "truth!") or the normalised one
    /// ("not-enough-evidence"); a key one or two letters off a known word is refused, and so is a
    /// key no known word that no row of the file has as its rating.
    #[serde(default)]
    pub verdict_map: BTreeMap<String, String>,
    /// Fact-checker name for rows that carry none.
    pub fact_checker: Option<String>,
}

/// The fields a row cannot become a claim without; every other column is optional, whatever the
/// preset, so a file that lacks one (AVeriTeC-derived files without `speaker`) still imports.
const REQUIRED: [&str; 2] = ["claim", "rating"];

/// A source file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Csv,
    Jsonl,
}

/// A known file layout: the column each claim field is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColumnPreset {
    /// AVeriTeC: claim, label, claim_date, speaker, original_claim_url, fact_checking_article, location_ISO_code.
    Averitec,
    /// FactCheckQA: claim_text, review_date, remapped_verdict_class, url, publisher_country_code.
    Factcheckqa,
    /// PolitiFact-style exports: statement, rating, speaker, statement_date, venue, url.
    Politifact,
}

/// Which input column holds each claim field. Unset fields are absent.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ColumnMap {
    /// Column of the claim's text (required: here or from the preset).
    pub claim: Option<String>,
    /// Column of the fact-checker's rating (required: here or from the preset).
    pub rating: Option<String>,
    /// Column of who made the claim.
    pub speaker: Option<String>,
    /// Column of the date the claim was made.
    pub claim_date: Option<String>,
    /// Column of the date the fact-check was published.
    pub review_date: Option<String>,
    /// Column of the fact-check article's URL.
    pub url: Option<String>,
    /// Column of the URL where the claim itself appeared.
    pub original_url: Option<String>,
    /// Column of the ISO country code of the claim or publisher.
    pub country: Option<String>,
    /// Column of where the claim was made (a speech, a post, an ad).
    pub venue: Option<String>,
    /// Column of the fact-checker's name (else the source's `fact_checker`).
    pub fact_checker: Option<String>,
    /// A column of topics separated by `;` or `,`.
    pub topics: Option<String>,
}

impl ColumnMap {
    /// The column each field is read from, in the order of [`ColumnMap::fields_mut`].
    fn fields(&self) -> [&Option<String>; 11] {
        [
            &self.claim,
            &self.rating,
            &self.speaker,
            &self.claim_date,
            &self.review_date,
            &self.url,
            &self.original_url,
            &self.country,
            &self.venue,
            &self.fact_checker,
            &self.topics,
        ]
    }

    /// Each field's configuration name and column.
    fn fields_mut(&mut self) -> [(&'static str, &mut Option<String>); 11] {
        [
            ("claim", &mut self.claim),
            ("rating", &mut self.rating),
            ("speaker", &mut self.speaker),
            ("claim_date", &mut self.claim_date),
            ("review_date", &mut self.review_date),
            ("url", &mut self.url),
            ("original_url", &mut self.original_url),
            ("country", &mut self.country),
            ("venue", &mut self.venue),
            ("fact_checker", &mut self.fact_checker),
            ("topics", &mut self.topics),
        ]
    }
}

impl ColumnPreset {
    fn columns(self) -> ColumnMap {
        let s = |v: &str| Some(v.to_string());
        match self {
            ColumnPreset::Averitec => ColumnMap {
                claim: s("claim"),
                rating: s("label"),
                speaker: s("speaker"),
                claim_date: s("claim_date"),
                url: s("fact_checking_article"),
                original_url: s("original_claim_url"),
                country: s("location_ISO_code"),
                ..ColumnMap::default()
            },
            ColumnPreset::Factcheckqa => ColumnMap {
                claim: s("claim_text"),
                rating: s("remapped_verdict_class"),
                review_date: s("review_date"),
                url: s("url"),
                country: s("publisher_country_code"),
                fact_checker: s("publisher"),
                ..ColumnMap::default()
            },
            ColumnPreset::Politifact => ColumnMap {
                claim: s("statement"),
                rating: s("rating"),
                speaker: s("speaker"),
                claim_date: s("statement_date"),
                venue: s("venue"),
                url: s("url"),
                ..ColumnMap::default()
            },
        }
    }

    fn verdicts(self) -> &'static str {
        match self {
            ColumnPreset::Averitec => "averitec",
            ColumnPreset::Factcheckqa => "factcheckqa",
            ColumnPreset::Politifact => "raguard",
        }
    }

    fn name(self) -> &'static str {
        match self {
            ColumnPreset::Averitec => "averitec",
            ColumnPreset::Factcheckqa => "factcheckqa",
            ColumnPreset::Politifact => "politifact",
        }
    }

    fn default_fact_checker(self) -> Option<&'static str> {
        matches!(self, ColumnPreset::Politifact).then_some(politifact::FACT_CHECKER)
    }

    fn default_country(self) -> Option<&'static str> {
        matches!(self, ColumnPreset::Politifact).then_some(politifact::COUNTRY)
    }
}

/// A source with presets applied and everything checked.
struct Resolved {
    path: PathBuf,
    display: String,
    format: Format,
    columns: ColumnMap,
    verdicts: VerdictMap,
    label: String,
    fact_checker: Option<String>,
    country: Option<String>,
}

impl SourceConfig {
    fn resolve(&self, index: usize, root: &Path) -> Result<Resolved, ConfigError> {
        let field = |name: &str| format!("sources[{index}].{name}");
        let path = if self.path.is_absolute() {
            self.path.clone()
        } else {
            root.join(&self.path)
        };
        if !path.is_file() {
            return Err(ConfigError::new(
                field("path"),
                format!("{} does not exist", path.display()),
            ));
        }
        let format = match self.format {
            Some(f) => f,
            None => match self.path.extension().and_then(|e| e.to_str()) {
                Some("csv") => Format::Csv,
                Some("jsonl" | "ndjson") => Format::Jsonl,
                _ => {
                    return Err(ConfigError::new(
                        field("format"),
                        "cannot tell from the extension; set csv or jsonl",
                    ));
                }
            },
        };
        let mut columns = self.preset.map(ColumnPreset::columns).unwrap_or_default();
        let mut explicit = Vec::new();
        for ((name, slot), value) in columns.fields_mut().into_iter().zip(self.columns.fields()) {
            if value.is_some() {
                slot.clone_from(value);
                explicit.push(name);
            }
        }
        if columns.claim.is_none() {
            return Err(ConfigError::new(
                field("columns.claim"),
                "no claim column: set a preset or columns.claim",
            ));
        }
        if columns.rating.is_none() {
            return Err(ConfigError::new(
                field("columns.rating"),
                "no rating column: set a preset or columns.rating",
            ));
        }
        let verdict_name = match (&self.verdicts, self.preset) {
            (Some(name), _) => name.clone(),
            (None, Some(preset)) => preset.verdicts().to_string(),
            (None, None) => {
                return Err(ConfigError::new(
                    field("verdicts"),
                    "no verdict preset: set one",
                ));
            }
        };
        let mut verdicts = VerdictMap::preset(&verdict_name).ok_or_else(|| {
            ConfigError::new(
                field("verdicts"),
                format!(
                    "unknown preset `{verdict_name}` (known: {})",
                    PRESETS.join(", ")
                ),
            )
        })?;
        for (rating, to) in &self.verdict_map {
            verdicts = verdicts
                .with_entry(rating, to)
                .map_err(|m| ConfigError::new(field(&format!("verdict_map.{rating}")), m))?;
        }
        let display = self.path.display().to_string();
        if format == Format::Csv {
            let mut reader = csv::Reader::from_path(&path)
                .map_err(|e| ConfigError::new(field("path"), format!("{display}: {e}")))?;
            let headers = reader
                .headers()
                .map_err(|e| ConfigError::new(field("path"), format!("{display}: {e}")))?
                .clone();
            for (name, slot) in columns.fields_mut() {
                let Some(column) = slot.as_deref() else {
                    continue;
                };
                if headers.iter().any(|h| h == column) {
                    continue;
                }
                // A required column, or one the configuration names itself, must be there; a
                // preset's optional column may be missing, and its field stays empty.
                let need = if REQUIRED.contains(&name) {
                    "a required column"
                } else if explicit.contains(&name) {
                    "named in the configuration"
                } else {
                    tracing::debug!(file = %self.path.display(), column, "optional column absent; `{name}` stays empty");
                    *slot = None;
                    continue;
                };
                return Err(ConfigError::new(
                    field(&format!("columns.{name}")),
                    format!(
                        "{display} has no column `{column}` ({need}; it has: {})",
                        headers.iter().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        let label = self
            .preset
            .map(ColumnPreset::name)
            .unwrap_or("custom")
            .to_string();
        let fact_checker = self.fact_checker.clone().or_else(|| {
            self.preset
                .and_then(ColumnPreset::default_fact_checker)
                .map(String::from)
        });
        let country = self
            .preset
            .and_then(ColumnPreset::default_country)
            .map(String::from);
        Ok(Resolved {
            path,
            display,
            format,
            columns,
            verdicts,
            label,
            fact_checker,
            country,
        })
    }
}

/// The `claims-import` stage.
#[derive(Debug, Default, Clone, Copy)]
pub struct ImportStage;

impl TypedStage for ImportStage {
    type Config = ImportConfig;
    const KIND: &'static str = "claims-import";
    const VERSION: u32 = 3;
    const ONE_TO_ONE: bool = true;

    /// Optional `claims`: another stage's claims (e.g. `claims-scrape`), merged after the files
    /// by id, so one table holds imported and scraped claims.
    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::optional("claims", TableKind::Claims)]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("claims", TableKind::Claims)]
    }

    fn validate(&self, config: &ImportConfig, root: &Path) -> Result<(), ConfigError> {
        if config.sources.is_empty() {
            return Err(ConfigError::new("sources", "at least one source is needed"));
        }
        for (i, source) in config.sources.iter().enumerate() {
            let resolved = source.resolve(i, root)?;
            own_words_rated(&resolved, i)?;
        }
        Ok(())
    }

    fn external_files(&self, config: &ImportConfig, root: &Path) -> Vec<PathBuf> {
        config
            .sources
            .iter()
            .map(|s| {
                if s.path.is_absolute() {
                    s.path.clone()
                } else {
                    root.join(&s.path)
                }
            })
            .collect()
    }

    fn run(
        &self,
        config: &ImportConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let upstream: Option<Vec<Claim>> = inputs.take_optional("claims")?;
        let mut drops = Drops::new(&ctx.stage_id);
        let mut merged = Merged::default();
        let mut items_in = 0u64;
        for (i, source) in config.sources.iter().enumerate() {
            let resolved = source.resolve(i, &ctx.root)?;
            let rows = read_rows(&resolved)?;
            let bar = ctx.progress.bar(
                &format!("import {}", resolved.label),
                Some(rows.len() as u64),
            );
            for row in rows {
                items_in += 1;
                bar.inc(1);
                let item = format!("{}:{}", resolved.display, row.line);
                let fields = match row.fields {
                    Ok(fields) => fields,
                    Err(message) => {
                        drops.add(item, "invalid_row", message);
                        continue;
                    }
                };
                match to_claim(&resolved, &fields) {
                    Ok(claim) => {
                        if let Some(detail) = merged.add(claim) {
                            drops.add(item, "merged_duplicate", detail);
                        }
                    }
                    Err((reason, detail)) => drops.add(item, reason, detail),
                }
            }
            bar.finish();
        }
        for claim in upstream.unwrap_or_default() {
            items_in += 1;
            let item = format!("input:{}", claim.id);
            if let Some(detail) = merged.add(claim) {
                drops.add(item, "merged_duplicate", detail);
            }
        }
        let claims = merged.into_claims();
        let items_out = claims.len() as u64;
        let mut output = StageOutput::default().with_table("claims", claims);
        output.report.items_in = items_in;
        output.report.items_out = items_out;
        output.report.drops = drops.into_records();
        Ok(output)
    }
}

/// Every `verdict_map` key noisebench knows no rating word for must be a rating some row of the
/// file has (compared normalised): a key that matches nothing is a typo or a leftover, refused
/// with the file's ratings named.
fn own_words_rated(source: &Resolved, index: usize) -> Result<(), ConfigError> {
    let own = source.verdicts.own_words();
    if own.is_empty() {
        return Ok(());
    }
    let field = |name: &str| format!("sources[{index}].{name}");
    let rows = read_rows(source).map_err(|e| ConfigError::new(field("path"), e.to_string()))?;
    let Some(column) = &source.columns.rating else {
        return Ok(());
    };
    let mut ratings: BTreeMap<String, &str> = BTreeMap::new();
    for row in &rows {
        if let Ok(Some(r)) = row.fields.as_ref().map(|f| f.get(column)) {
            ratings.entry(normalise_rating(r)).or_insert(r);
        }
    }
    for word in own {
        if !ratings.contains_key(&normalise_rating(word)) {
            let seen: Vec<&str> = ratings.values().copied().take(12).collect();
            return Err(ConfigError::new(
                field(&format!("verdict_map.{word}")),
                format!(
                    "`{word}` is no rating word noisebench knows, and no row of {} has it as its \
                     rating (its ratings: {}{})",
                    source.display,
                    seen.join(", "),
                    if ratings.len() > seen.len() {
                        ", ..."
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    Ok(())
}

struct RawRow {
    line: u64,
    fields: Result<BTreeMap<String, String>, String>,
}

fn read_rows(source: &Resolved) -> Result<Vec<RawRow>, StageError> {
    let io = |e: std::io::Error| StageError::Io {
        path: source.path.clone(),
        source: e,
    };
    let bytes = std::fs::read(&source.path).map_err(io)?;
    let rows = match source.format {
        Format::Csv => {
            let mut reader = csv::ReaderBuilder::new()
                .flexible(false)
                .from_reader(bytes.as_slice());
            let headers = reader
                .headers()
                .map_err(|e| StageError::Other(format!("{}: {e}", source.display)))?
                .clone();
            let mut rows = Vec::new();
            for record in reader.records() {
                rows.push(match record {
                    Ok(r) => RawRow {
                        line: r.position().map_or(0, |p| record_line(&bytes, p)),
                        fields: Ok(headers
                            .iter()
                            .zip(r.iter())
                            .map(|(h, v)| (h.to_string(), v.to_string()))
                            .collect()),
                    },
                    Err(e) => RawRow {
                        line: e.position().map_or(0, |p| record_line(&bytes, p)),
                        fields: Err(e.to_string()),
                    },
                });
            }
            rows
        }
        Format::Jsonl => {
            let text = String::from_utf8(bytes).map_err(|e| {
                StageError::Other(format!("{}: not UTF-8 text: {e}", source.display))
            })?;
            // `lines` ends lines at `\n` and strips a `\r` before it, so CRLF and LF number alike.
            text.strip_prefix('\u{feff}')
                .unwrap_or(&text)
                .lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, line)| RawRow {
                    line: i as u64 + 1,
                    fields: json_fields(line),
                })
                .collect()
        }
    };
    required_columns_present(source, &rows)?;
    Ok(rows)
}

/// The 1-based line a record starts on. The csv reader positions a record where the previous one
/// ended, before the line breaks it skips (the `\n` of a CRLF, blank lines), and counts a line only
/// at its `\n`; so step over those bytes, counting each `\n`.
fn record_line(bytes: &[u8], position: &csv::Position) -> u64 {
    let start = usize::try_from(position.byte()).unwrap_or(usize::MAX);
    let skipped = bytes
        .get(start..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| matches!(b, b'\r' | b'\n'))
        .filter(|b| **b == b'\n')
        .count();
    position.line() + skipped as u64
}

/// A required column that no record of a JSONL file has is a mapping mistake, not bad rows: fail,
/// naming the file and the column, rather than drop every row. (For CSV the header is checked
/// before any work.)
fn required_columns_present(source: &Resolved, rows: &[RawRow]) -> Result<(), StageError> {
    if source.format != Format::Jsonl {
        return Ok(());
    }
    let records: Vec<&BTreeMap<String, String>> =
        rows.iter().filter_map(|r| r.fields.as_ref().ok()).collect();
    if records.is_empty() {
        return Ok(());
    }
    for (field, column) in [
        ("claim", &source.columns.claim),
        ("rating", &source.columns.rating),
    ] {
        let Some(column) = column else { continue };
        if !records.iter().any(|r| r.contains_key(column)) {
            return Err(StageError::Other(format!(
                "{}: no record has the field `{column}`, a required column (set `columns.{field}` \
                 to the name this file uses)",
                source.display
            )));
        }
    }
    Ok(())
}

fn json_fields(line: &str) -> Result<BTreeMap<String, String>, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not valid JSON: {e}"))?;
    let object = value.as_object().ok_or("not a JSON object")?;
    Ok(object
        .iter()
        .filter_map(|(k, v)| {
            let text = match v {
                serde_json::Value::Null => return None,
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(";"),
                other => other.to_string(),
            };
            Some((k.clone(), text))
        })
        .collect())
}

fn to_claim(
    source: &Resolved,
    fields: &BTreeMap<String, String>,
) -> Result<Claim, (&'static str, String)> {
    let get = |column: &Option<String>| -> Option<String> {
        column
            .as_ref()
            .and_then(|c| fields.get(c))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    // Says whether a required field was empty or absent from this record (JSONL records, unlike
    // CSV rows, need not all carry the same fields).
    let missing = |column: &Option<String>| {
        let column = column.as_deref().unwrap_or("");
        if fields.contains_key(column) {
            format!("column `{column}` is empty")
        } else {
            format!("no column `{column}` in this record")
        }
    };
    let text = get(&source.columns.claim)
        .ok_or_else(|| ("empty_claim", missing(&source.columns.claim)))?;
    let rating_raw = get(&source.columns.rating)
        .ok_or_else(|| ("missing_rating", missing(&source.columns.rating)))?;
    let verdict = match source.verdicts.map(&rating_raw) {
        Mapped::Verdict(v) => v,
        Mapped::Excluded(why) => {
            return Err(("rating_excluded", format!("rating `{rating_raw}`: {why}")));
        }
        Mapped::Unknown => {
            return Err((
                "unknown_rating",
                format!(
                    "rating `{rating_raw}` is not in the `{}` verdict preset",
                    source.verdicts.name
                ),
            ));
        }
    };
    let date = |column: &Option<String>| -> Result<Option<String>, (&'static str, String)> {
        match get(column) {
            None => Ok(None),
            Some(raw) => parse_date(&raw).map_err(|m| {
                (
                    "bad_date",
                    format!("column `{}`: {m}", column.as_deref().unwrap_or("")),
                )
            }),
        }
    };
    let claim_date = date(&source.columns.claim_date)?;
    let review_date = date(&source.columns.review_date)?;
    let url = get(&source.columns.url);
    let topics = get(&source.columns.topics)
        .map(|t| {
            t.split([';', ','])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Ok(Claim {
        id: claim_id(url.as_deref(), &text),
        text,
        verdict: verdict.as_str().into(),
        original_rating: normalise_rating(&rating_raw),
        speaker: get(&source.columns.speaker),
        claim_date,
        venue: get(&source.columns.venue),
        fact_checker: get(&source.columns.fact_checker).or_else(|| source.fact_checker.clone()),
        review_date,
        url,
        original_url: get(&source.columns.original_url),
        country: get(&source.columns.country).or_else(|| source.country.clone()),
        topics,
        source: format!("{}:{}", source.label, source.display),
        fetched_at: None,
        archive_ref: None,
    })
}

/// Claims merged by id, in first-seen order.
#[derive(Default)]
struct Merged {
    order: Vec<String>,
    by_id: BTreeMap<String, Claim>,
}

impl Merged {
    /// Add a claim; if its id was seen, fill the first claim's missing fields and say so.
    fn add(&mut self, claim: Claim) -> Option<String> {
        let Some(first) = self.by_id.get_mut(&claim.id) else {
            self.order.push(claim.id.clone());
            self.by_id.insert(claim.id.clone(), claim);
            return None;
        };
        let mut filled = Vec::new();
        for (name, slot, value) in [
            ("speaker", &mut first.speaker, claim.speaker),
            ("claim_date", &mut first.claim_date, claim.claim_date),
            ("venue", &mut first.venue, claim.venue),
            ("fact_checker", &mut first.fact_checker, claim.fact_checker),
            ("review_date", &mut first.review_date, claim.review_date),
            ("url", &mut first.url, claim.url),
            ("original_url", &mut first.original_url, claim.original_url),
            ("country", &mut first.country, claim.country),
        ] {
            if slot.is_none() && value.is_some() {
                *slot = value;
                filled.push(name);
            }
        }
        for topic in claim.topics {
            if !first.topics.contains(&topic) {
                first.topics.push(topic);
            }
        }
        let mut detail = format!("duplicate of {}", first.id);
        if !filled.is_empty() {
            detail.push_str(&format!("; filled {}", filled.join(", ")));
        }
        if first.verdict != claim.verdict {
            detail.push_str(&format!(
                "; its verdict `{}` differs, the first row's `{}` is kept",
                claim.verdict, first.verdict
            ));
        }
        Some(detail)
    }

    fn into_claims(mut self) -> Vec<Claim> {
        self.order
            .iter()
            .filter_map(|id| self.by_id.remove(id))
            .collect()
    }
}
