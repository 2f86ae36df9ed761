//! The `reports` stage: input files (EDGAR JSON, MinerU content lists, HTML, Markdown, text) and
//! filings fetched from SEC EDGAR ([`edgar_live`], through the web layer) to the `reports` table,
//! one row per report, with domain metadata. Broken files, failed fetches and broken tables are
//! counted drops; the rest proceed.

pub mod annual;
pub mod edgar_live;
pub mod exhibit13;
pub mod items;
pub mod submission;
pub mod text_filing;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use noisebench_core::{
    Block, ConfigError, Drops, InputSpec, Inputs, OutputSpec, Report, StageContext, StageError,
    StageOutput, StageReport, TableKind, TypedStage, stable_id,
};
use noisebench_web::{Mode, Web};
use regex::Regex;
use serde::Deserialize;

use self::edgar_live::EdgarSource;

use crate::edgar::read_filing;
use crate::html::html_blocks;
use crate::markdown::markdown_blocks;
use crate::mineru::mineru_blocks;
use crate::preset::Domain;
use crate::table::TableError;
use crate::text_layout::{Layout, text_blocks};

/// An input file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// edgar-crawler 10-K JSON.
    Edgar,
    /// MinerU `content_list.json`.
    Mineru,
    /// An HTML page (tables become Markdown tables); a 10-K is cut into `items`.
    Html,
    /// A Markdown file.
    Markdown,
    /// Plain text: paragraphs separated by blank lines; pipe and aligned tables recognised. An
    /// EDGAR submission (`.txt`) or a 10-K is read as a filing and cut into `items`.
    Text,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Edgar => "edgar",
            Format::Mineru => "mineru",
            Format::Html => "html",
            Format::Markdown => "markdown",
            Format::Text => "text",
        }
    }

    /// The format a file's extension (and, for JSON, its first character) suggests.
    pub(crate) fn infer(path: &Path, content: &str) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "json" => match content.trim_start().chars().next() {
                Some('[') => Some(Format::Mineru),
                _ => Some(Format::Edgar),
            },
            "html" | "htm" | "xhtml" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Markdown),
            "txt" | "text" => Some(Format::Text),
            _ => None,
        }
    }
}

fn default_items() -> Vec<String> {
    vec!["item_7".into()]
}

/// One group of input files (`path`), or of filings fetched from SEC EDGAR (`edgar`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// A file, or a pattern with `*` / `?` in its file name (`fixtures/reports/edgar/*.json`),
    /// relative to the repository root. Leave out with `edgar`.
    #[serde(default)]
    pub path: String,
    /// Filings fetched from SEC EDGAR instead of files: companies, forms, dates, the declared
    /// User-Agent (see the EDGAR source's fields).
    #[serde(default)]
    pub edgar: Option<EdgarSource>,
    /// Inferred from the extension when absent (`.json` is edgar, or mineru for a JSON array).
    /// Not used with `edgar`.
    #[serde(default)]
    pub format: Option<Format>,
    /// The domain preset: finance, economics, policy or general (default).
    #[serde(default)]
    pub domain: Domain,
    /// EDGAR items to read, in order (default `["item_7"]`, the MD&A, as RARE); with `edgar`, and
    /// for an HTML or text file of the 10-K family, also `"7"`, `"item_1A"`, cut from the filing
    /// by their headings.
    #[serde(default = "default_items")]
    pub items: Vec<String>,
    /// Metadata added to every report of this source (for example `country`, `year`,
    /// `grantee`, `state`); it overrides values read from the file.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

/// Configuration of the `reports` stage.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportsConfig {
    /// Groups of input files, or of filings fetched from SEC EDGAR, read in order; each file or
    /// filing becomes one report.
    pub sources: Vec<Source>,
}

/// The `reports` stage. Build with the run's [`Web`] ([`ReportsStage::new`]) to read EDGAR
/// sources; without one ([`ReportsStage::default`]) it reads files only and refuses `edgar`.
#[derive(Debug, Default, Clone)]
pub struct ReportsStage {
    web: Option<Arc<Web>>,
}

impl ReportsStage {
    /// The stage with the run's web layer, which EDGAR sources fetch through.
    pub fn new(web: Arc<Web>) -> Self {
        Self { web: Some(web) }
    }

    fn has_edgar(config: &ReportsConfig) -> bool {
        config.sources.iter().any(|s| s.edgar.is_some())
    }
}

/// Files matching `pattern` (wildcards `*` and `?` in the file name only), sorted.
pub fn expand(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let full = if Path::new(pattern).is_absolute() {
        PathBuf::from(pattern)
    } else {
        root.join(pattern)
    };
    let name = full
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| "has no file name".to_string())?
        .to_string();
    if !name.contains(['*', '?']) {
        return if full.is_file() {
            Ok(vec![full])
        } else {
            Err(format!("{} is not a file", full.display()))
        };
    }
    let dir = full.parent().unwrap_or(Path::new("."));
    if dir.to_string_lossy().contains(['*', '?']) {
        return Err("wildcards are allowed in the file name only".into());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| wildcard_match(&name, n))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// `*` and `?` matching on one file name; a glob crate would be a dependency for ten lines.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// A file-level failure: the reason code and its detail.
struct FileError {
    reason: &'static str,
    detail: String,
}

impl FileError {
    fn new(reason: &'static str, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

/// A file read: its report, the tables that could not be kept, the items asked for that a
/// 10-K-family file lacks.
struct ReadReport {
    report: Report,
    bad_tables: Vec<(String, TableError)>,
    missing_items: Vec<String>,
}

/// An HTML or text file as a filing document (see [`annual`]), and whether it is read as one: an
/// EDGAR submission or of the 10-K family. Other files are read as before (an HTML page's blocks
/// are those of this reading).
fn filing_document(format: Format, content: &str) -> Option<(annual::FilingDocument, bool)> {
    if !matches!(format, Format::Html | Format::Text) {
        return None;
    }
    let doc = annual::read_document(content, format == Format::Html);
    let filing = doc.annual_form.is_some() || submission::is_submission(content);
    Some((doc, filing))
}

/// A filing's report parts: blocks, metadata, title, and the items asked for that it lacks.
type FilingParts = (Vec<Block>, BTreeMap<String, String>, String, Vec<String>);

/// A filing document's report parts: its items cut when it is of the 10-K family (the blocks,
/// metadata, title, id parts and missing items), its main document whole otherwise.
fn filing_parts(
    doc: annual::FilingDocument,
    source: &Source,
    source_path: &str,
) -> Result<FilingParts, FileError> {
    let mut metadata = doc.metadata.clone();
    if !doc.exhibits.is_empty() {
        metadata.insert("exhibits".into(), doc.exhibit_types());
    }
    let m = |k: &str| metadata.get(k).cloned().unwrap_or_default();
    let title = format!(
        "{} {} {}",
        m("company"),
        m("filing_type"),
        if m("filing_date").is_empty() {
            m("period_of_report")
        } else {
            m("filing_date")
        }
    )
    .split_whitespace()
    .collect::<Vec<_>>()
    .join(" ");
    let Some(form) = &doc.annual_form else {
        return Ok((doc.blocks, metadata, title, Vec::new()));
    };
    let mut cut = items::cut_items(doc.blocks, &source.items);
    annual::follow_pointers(&mut cut, &doc.exhibits, &mut metadata);
    if cut.blocks.is_empty() {
        return Err(FileError::new(
            "empty_item",
            format!(
                "items {:?} not found in {source_path} (a {form} read as {})",
                source.items, doc.layout
            ),
        ));
    }
    metadata.insert("items".into(), source.items.join(","));
    Ok((cut.blocks, metadata, title, cut.missing))
}

/// Reads one file into a report, naming tables that could not be kept.
fn read_report(source: &Source, path: &Path, source_path: &str) -> Result<ReadReport, FileError> {
    let bytes = std::fs::read(path).map_err(|e| FileError::new("unreadable", e.to_string()))?;
    let content = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(path = source_path, "not UTF-8; decoding lossily");
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let format = match source.format {
        Some(f) => f,
        None => Format::infer(path, &content).ok_or_else(|| {
            FileError::new("unknown_format", "set `format` for this file's extension")
        })?,
    };
    let domain = source.domain;
    let mut metadata = BTreeMap::new();
    let mut title = None;
    let named = |bad: Vec<(usize, TableError)>| {
        bad.into_iter()
            .map(|(i, e)| (format!("table{i}"), e))
            .collect::<Vec<_>>()
    };
    let mut missing_items = Vec::new();
    let document = filing_document(format, &content);
    let (blocks, bad, id) = match (format, document) {
        (_, Some((doc, true))) => {
            let cut = doc.annual_form.is_some();
            let (blocks, m, t, missing) = filing_parts(doc, source, source_path)?;
            metadata = m;
            title = (!t.is_empty()).then_some(t);
            missing_items = missing;
            let id = if cut {
                stable_id(
                    "report",
                    &[
                        domain.name(),
                        format.name(),
                        source_path,
                        &source.items.join(","),
                    ],
                )
            } else {
                String::new()
            };
            (blocks, Vec::new(), id)
        }
        (Format::Edgar, _) => {
            let filing = read_filing(&content, &source.items)
                .map_err(|e| FileError::new(e.reason(), e.to_string()))?;
            // Invariant: `read_filing` always sets every METADATA_FIELDS key.
            let m = &filing.metadata;
            title = Some(
                format!("{} {} {}", m["company"], m["filing_type"], m["filing_date"])
                    .trim()
                    .to_string(),
            );
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let identity = filing.filename.clone().unwrap_or(stem);
            let id = stable_id(
                "report",
                &[
                    domain.name(),
                    "edgar",
                    &m["cik"],
                    &identity,
                    &source.items.join(","),
                ],
            );
            metadata = filing.metadata;
            (filing.blocks, filing.bad_tables, id)
        }
        (Format::Mineru, _) => {
            let r = mineru_blocks(&content)
                .map_err(|e| FileError::new("invalid_json", e.to_string()))?;
            if !r.notes.is_empty() {
                metadata.insert("notes".into(), r.notes.join("; "));
            }
            (r.blocks, named(r.bad_tables), String::new())
        }
        (Format::Html, Some((doc, false))) => {
            // No table of a page is dropped: every one with text becomes a table or paragraphs.
            title = doc.title;
            (doc.blocks, Vec::new(), String::new())
        }
        (Format::Html, None) => {
            let r = html_blocks(&content);
            title = r.title;
            (r.blocks, Vec::new(), String::new())
        }
        (Format::Markdown, _) => {
            let (blocks, t, bad) = markdown_blocks(&content);
            title = t;
            (blocks, named(bad), String::new())
        }
        (Format::Text, _) => {
            let (blocks, bad) = text_blocks(&content, Layout::BlankLineSeparated);
            (blocks, named(bad), String::new())
        }
    };
    let mut blocks = blocks;
    if domain == Domain::Policy {
        trim_attachments(&mut blocks, &mut metadata);
    }
    if !blocks.iter().any(has_text) {
        return Err(FileError::new("empty_report", "no text after parsing"));
    }
    if title.is_none() {
        title = blocks.iter().find_map(|b| match b {
            Block::Heading { text, .. } => Some(text.clone()),
            _ => None,
        });
    }
    if domain == Domain::Economics {
        infer_country_year(&blocks, &mut metadata);
    }
    for key in domain.metadata_keys() {
        metadata.entry((*key).to_string()).or_default();
    }
    metadata.extend(source.metadata.clone());
    let id = if id.is_empty() {
        stable_id("report", &[domain.name(), format.name(), source_path])
    } else {
        id
    };
    Ok(ReadReport {
        report: Report {
            id,
            domain: domain.name().into(),
            format: format.name().into(),
            source_path: source_path.into(),
            title,
            metadata,
            blocks,
        },
        bad_tables: bad,
        missing_items,
    })
}

fn has_text(block: &Block) -> bool {
    match block {
        Block::Heading { .. } => false,
        Block::Paragraph { text, .. } => !text.trim().is_empty(),
        Block::Table { markdown, .. } => !markdown.trim().is_empty(),
    }
}

/// RARE's policy reports end in attachments (forms, budgets) that are not the plan's text.
fn trim_attachments(blocks: &mut Vec<Block>, metadata: &mut BTreeMap<String, String>) {
    let cut = blocks.iter().position(|b| {
        matches!(b, Block::Heading { text, .. } if text.trim().to_lowercase().starts_with("attachment"))
    });
    if let Some(cut) = cut {
        let removed = blocks.len() - cut;
        blocks.truncate(cut);
        metadata.insert(
            "notes".into(),
            format!("trimmed {removed} block(s) from the first Attachment heading"),
        );
    }
}

/// Country and year from an "OECD Economic Surveys: <Country> <Year>" line, as RARE does.
fn infer_country_year(blocks: &[Block], metadata: &mut BTreeMap<String, String>) {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| {
        Regex::new(r"Economic Surveys?\s*:\s*(.+?)\s+((?:19|20)\d{2})\b").expect("constant pattern")
    });
    for block in blocks.iter().take(30) {
        let text = match block {
            Block::Heading { text, .. } | Block::Paragraph { text, .. } => text,
            Block::Table { .. } => continue,
        };
        if let Some(c) = re.captures(text) {
            metadata.insert("country".into(), c[1].trim().to_string());
            metadata.insert("year".into(), c[2].to_string());
            return;
        }
    }
}

/// Reads every configured file. Pure apart from reading the files; the stage's `run` wraps it.
/// EDGAR sources need a web layer (`ingest_with`); here they are recorded as failures.
pub fn ingest(config: &ReportsConfig, root: &Path, stage: &str) -> (Vec<Report>, Drops, u64) {
    // Invariant: without a web layer nothing is set up, so nothing can fail to be.
    ingest_with(config, root, stage, None).expect("no web layer to set up")
}

/// A report from a filing fetched from EDGAR, with the source's domain and metadata.
fn edgar_report(source: &EdgarSource, files: &Source, f: &edgar_live::FetchedFiling) -> Report {
    let domain = files.domain;
    let mut metadata = edgar_live::filing_metadata(f, &files.items);
    for key in domain.metadata_keys() {
        metadata.entry((*key).to_string()).or_default();
    }
    metadata.extend(files.metadata.clone());
    let l = &f.listed;
    Report {
        id: edgar_live::report_id(domain.name(), f, source.amendments, &files.items),
        domain: domain.name().into(),
        format: Format::Edgar.name().into(),
        source_path: f.url.clone(),
        title: Some(
            format!("{} {} {}", l.company, l.form, l.filing_date)
                .trim()
                .to_string(),
        ),
        metadata,
        blocks: f.blocks.clone(),
    }
}

/// [`ingest`], with the web layer EDGAR sources fetch through (each source through a [`Web`]
/// derived from it: its User-Agent, the SEC's rate). A source whose web layer cannot be set up
/// fails the whole run (`Err`, naming the source): no result is made of it, so none is kept.
pub(crate) fn ingest_with(
    config: &ReportsConfig,
    root: &Path,
    stage: &str,
    web: Option<&Web>,
) -> Result<(Vec<Report>, Drops, u64), String> {
    let mut drops = Drops::new(stage);
    let mut reports: BTreeMap<String, Report> = BTreeMap::new();
    let mut files_in = 0u64;
    // Each file source is expanded once, and its files read and parsed on every core; the loop
    // below takes the results in source and file order, so which of two reports with one id is
    // kept does not depend on threads.
    let mut expanded: Vec<Option<Result<Vec<PathBuf>, String>>> = config
        .sources
        .iter()
        .map(|s| s.edgar.is_none().then(|| expand(root, &s.path)))
        .collect();
    let files: Vec<(&Source, &PathBuf)> = config
        .sources
        .iter()
        .zip(&expanded)
        .filter_map(|(s, e)| Some((s, e.as_ref()?.as_ref().ok()?)))
        .flat_map(|(s, paths)| paths.iter().map(move |p| (s, p)))
        .collect();
    let mut read =
        noisebench_core::parallel_map(&files, noisebench_core::default_threads(), |(s, path)| {
            read_report(s, path, &relative(root, path))
        })
        .into_iter();
    for (i, source) in config.sources.iter().enumerate() {
        if let Some(edgar) = &source.edgar {
            let sec = match web.map(|w| edgar.web(w)) {
                Some(Ok(sec)) => sec,
                Some(Err(e)) => {
                    return Err(format!(
                        "sources[{i}].edgar: its web layer could not be set up: {e}"
                    ));
                }
                None => {
                    drops.add_failure(
                        format!("sources[{i}]"),
                        "no_web",
                        "no web layer to fetch EDGAR through",
                    );
                    continue;
                }
            };
            let harvest = edgar_live::harvest(edgar, &sec, &source.items);
            files_in += harvest.items_in;
            edgar_live::record_drops(&mut drops, harvest.drops);
            for f in &harvest.filings {
                for item in &f.missing {
                    drops.add_failure(
                        format!("{}#{item}", f.url),
                        "missing_item",
                        "no heading of this item in the filing; the report keeps the others",
                    );
                }
                let report = edgar_report(edgar, source, f);
                if reports.contains_key(&report.id) {
                    drops.add(f.url.clone(), "duplicate_report", report.id.clone());
                } else {
                    reports.insert(report.id.clone(), report);
                }
            }
            continue;
        }
        let files = match expanded[i].take().expect("expanded for every file source") {
            Ok(f) => f,
            Err(e) => {
                // A source, not a file: no item was read, so it is recorded, not counted.
                drops.add_failure(format!("sources[{i}]"), "no_files", e);
                continue;
            }
        };
        for path in files {
            files_in += 1;
            let source_path = relative(root, &path);
            let result = read.next().expect("read for every expanded file");
            match result {
                Ok(ReadReport {
                    report,
                    bad_tables,
                    missing_items,
                }) => {
                    for item in missing_items {
                        drops.add_failure(
                            format!("{source_path}#{item}"),
                            "missing_item",
                            "no heading of this item in the filing; the report keeps the others",
                        );
                    }
                    for (table, e) in bad_tables {
                        drops.add_failure(
                            format!("{source_path}#{table}"),
                            e.reason(),
                            format!("{e}; the table was left out, the report kept"),
                        );
                    }
                    if reports.contains_key(&report.id) {
                        drops.add(source_path, "duplicate_report", report.id.clone());
                    } else {
                        reports.insert(report.id.clone(), report);
                    }
                }
                Err(e) => {
                    tracing::warn!(path = %source_path, reason = e.reason, "report dropped: {}", e.detail);
                    drops.add(source_path, e.reason, e.detail);
                }
            }
        }
    }
    // Deterministic output: reports ordered by source path.
    let mut ordered: Vec<Report> = reports.into_values().collect();
    ordered.sort_by(|a, b| a.source_path.cmp(&b.source_path).then(a.id.cmp(&b.id)));
    Ok((ordered, drops, files_in))
}

impl TypedStage for ReportsStage {
    type Config = ReportsConfig;
    const KIND: &'static str = "reports";
    // 2: only rendered content is read, tables laid out by the table model and dense, bold
    // sub-headings.
    const VERSION: u32 = 2;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        Vec::new()
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("reports", TableKind::Reports)]
    }

    fn validate(&self, config: &ReportsConfig, root: &Path) -> Result<(), ConfigError> {
        if config.sources.is_empty() {
            return Err(ConfigError::new("sources", "at least one source is needed"));
        }
        for (i, source) in config.sources.iter().enumerate() {
            if source.items.is_empty() {
                return Err(ConfigError::new(
                    format!("sources[{i}].items"),
                    "name at least one item",
                ));
            }
            if let Some(edgar) = &source.edgar {
                if !source.path.is_empty() || source.format.is_some() {
                    return Err(ConfigError::new(
                        format!("sources[{i}]"),
                        "an `edgar` source takes no `path` or `format`",
                    ));
                }
                edgar.validate(&format!("sources[{i}].edgar"), &source.items)?;
                if self.web.is_none() {
                    return Err(ConfigError::new(
                        format!("sources[{i}].edgar"),
                        "this reports stage was built without a web layer",
                    ));
                }
                continue;
            }
            if source.path.is_empty() {
                return Err(ConfigError::new(
                    format!("sources[{i}]"),
                    "set `path` (files) or `edgar` (filings fetched from SEC EDGAR)",
                ));
            }
            match expand(root, &source.path) {
                Ok(files) if files.is_empty() => {
                    return Err(ConfigError::new(
                        format!("sources[{i}].path"),
                        format!("`{}` matches no file", source.path),
                    ));
                }
                Ok(_) => {}
                Err(e) => return Err(ConfigError::new(format!("sources[{i}].path"), e)),
            }
        }
        Ok(())
    }

    fn environment(&self) -> serde_json::Value {
        match &self.web {
            Some(web) => serde_json::json!({ "web_mode": web.config().mode }),
            None => serde_json::Value::Null,
        }
    }

    /// EDGAR sources list new filings without any input changing, so `refresh` reruns the stage
    /// (unless the web layer replays).
    fn reads_live_sources(&self, config: &ReportsConfig) -> bool {
        Self::has_edgar(config)
            && self
                .web
                .as_ref()
                .is_some_and(|w| w.config().mode == Mode::Live)
    }

    fn external_files(&self, config: &ReportsConfig, root: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = config
            .sources
            .iter()
            .filter(|s| s.edgar.is_none())
            .filter_map(|s| expand(root, &s.path).ok())
            .flatten()
            .collect();
        if Self::has_edgar(config)
            && let Some(web) = &self.web
        {
            files.extend(web.config().replay_inputs(root));
        }
        files.sort();
        files.dedup();
        files
    }

    fn run(
        &self,
        config: &ReportsConfig,
        _inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        // Checked again here: the SEC's fair-access rules are not optional, whoever calls.
        for (i, source) in config.sources.iter().enumerate() {
            if let Some(edgar) = &source.edgar {
                edgar.validate(&format!("sources[{i}].edgar"), &source.items)?;
            }
        }
        let (reports, drops, files_in) =
            ingest_with(config, &ctx.root, &ctx.stage_id, self.web.as_deref())
                .map_err(StageError::Other)?;
        tracing::info!(
            files = files_in,
            reports = reports.len(),
            drops = drops.len(),
            "reports ingested"
        );
        let report = StageReport {
            items_in: files_in,
            items_out: reports.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput::new(report).with_table("reports", reports))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*.json", "a.json"));
        assert!(wildcard_match("1*_10K_*.json", "100_10K_x.json"));
        assert!(!wildcard_match("*.json", "a.jsonl"));
        assert!(wildcard_match("a?c", "abc"));
        assert!(!wildcard_match("a?c", "ac"));
    }
}
