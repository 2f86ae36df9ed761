//! The EDGAR source of the `reports` stage: 10-K filings (or other forms) fetched from the SEC's
//! public JSON and archives through the web layer, their items cut from the filing HTML.
//!
//! What it reads: the company submissions index (`<base_url>/submissions/CIK##########.json`,
//! `filings.recent` as parallel arrays, older pages listed in `filings.files`), the ticker map
//! (`company_tickers.json`) when tickers are given, and each filing's primary document
//! (`<archives_url>/Archives/edgar/data/<cik>/<accession without dashes>/<primaryDocument>`).
//! Every request goes through a [`Web`] derived from the run's (same archive, replay, guard,
//! retries and body cap) whose User-Agent is the source's declared one and whose rate to each SEC
//! host is at most the source's `rate_per_second` (never above `SEC_MAX_RATE`, the SEC's
//! fair-access limit); the source also spaces its own fetches by that rate, so the limit holds
//! for the SEC's hosts together.
//!
//! What it is not: a crawler of EDGAR full-text search or XBRL facts, or a parser of the filing's
//! inline XBRL; item cutting works on the text the HTML path ([`crate::html`]) reads.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use noisebench_core::{Block, ConfigError, DropReason, Drops, stable_id};
use noisebench_web::{HostConfig, Mode, Page, Url, Web, host_key};
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use super::annual;
use super::submission::{SubmissionDocument, normal_form};
use crate::html::html_blocks;
use crate::table::{is_zero_width, squash};

/// The SEC's fair-access ceiling: requests per second to its hosts, all of them together per
/// host as the web layer paces.
pub(crate) const SEC_MAX_RATE: f64 = 10.0;

/// What happens to an amended filing (`10-K/A`) of a form taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Amendments {
    /// The latest amendment of a period replaces its original (same report id); an amendment
    /// without the items asked for (a Part III-only 10-K/A) falls back to the filing before it.
    #[default]
    Replace,
    /// Amendments are reports of their own, beside their originals.
    KeepBoth,
    /// Amendments are not fetched (counted as `amendment_ignored` drops).
    Ignore,
}

/// A CIK as the pipeline file writes it: a number or a string of digits.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Cik {
    Number(u64),
    Text(String),
}

impl Cik {
    /// The ten-digit zero-padded form, or `None` when it is not 1 to 10 digits.
    pub fn padded(&self) -> Option<String> {
        let digits = match self {
            Cik::Number(n) => n.to_string(),
            Cik::Text(s) => s.trim().to_string(),
        };
        (!digits.is_empty() && digits.len() <= 10 && digits.chars().all(|c| c.is_ascii_digit()))
            .then(|| format!("{digits:0>10}"))
    }
}

fn default_forms() -> Vec<String> {
    vec!["10-K".into()]
}
fn default_rate() -> f64 {
    SEC_MAX_RATE
}
fn default_base_url() -> String {
    "https://data.sec.gov".into()
}
fn default_archives_url() -> String {
    "https://www.sec.gov".into()
}
fn default_tickers_url() -> String {
    "https://www.sec.gov/files/company_tickers.json".into()
}

/// Filings fetched from SEC EDGAR: `edgar = { ciks = ["320193"], forms = ["10-K"], from =
/// "2023-01-01", user_agent = "Jane Doe jane@example.org" }`. The source's `domain`, `items` and
/// `metadata` apply as to files.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgarSource {
    /// Companies by Central Index Key (`"320193"`, `"0000320193"` or `320193`).
    #[serde(default)]
    pub ciks: Vec<Cik>,
    /// Companies by ticker (`"AAPL"`), mapped to CIKs through the SEC's `company_tickers.json`
    /// (`tickers_url`); an unknown ticker is an `unknown_ticker` drop.
    #[serde(default)]
    pub tickers: Vec<String>,
    /// Forms taken (default `["10-K"]`); their amendments (`10-K/A`) follow `amendments`. `10-K`
    /// takes the 10-K405 too; 10-KSB and 10-KT are taken when named. A listed filing of these
    /// annual forms that is not taken is a `form_not_taken` drop.
    #[serde(default = "default_forms")]
    pub forms: Vec<String>,
    /// Earliest filing date taken, `YYYY-MM-DD`, inclusive. Older filings than the index's
    /// `recent` list holds are read from its further pages only when `from` reaches back to them.
    #[serde(default)]
    pub from: Option<String>,
    /// Latest filing date taken, `YYYY-MM-DD`, inclusive (default: no limit).
    #[serde(default)]
    pub to: Option<String>,
    /// Keep only the most recent N periods per company and form (after the date filter); unset
    /// keeps all.
    #[serde(default)]
    pub latest: Option<usize>,
    /// Required: the User-Agent the SEC asks of automated access, your name or organisation and a
    /// contact e-mail (`"Jane Doe jane@example.org"`). Sent instead of `[web] user_agent` on every
    /// request of this source; the stage refuses to run without one.
    #[serde(default)]
    pub user_agent: Option<String>,
    /// What an amended filing does: `replace` (default) its original, `keep_both`, or `ignore`.
    #[serde(default)]
    pub amendments: Amendments,
    /// Requests per second to each SEC host, at most 10 (the SEC's fair-access limit) and never
    /// above `[web]`'s rate for that host (default 10).
    #[serde(default = "default_rate")]
    pub rate_per_second: f64,
    /// Where the submissions JSON is served (default `https://data.sec.gov`); tests point it at a
    /// fake server.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// Where filing documents are served, before `/Archives/edgar/data/...` (default
    /// `https://www.sec.gov`).
    #[serde(default = "default_archives_url")]
    pub archives_url: String,
    /// The ticker-to-CIK map (default `https://www.sec.gov/files/company_tickers.json`).
    #[serde(default = "default_tickers_url")]
    pub tickers_url: String,
}

/// `YYYY-MM-DD` and nothing else.
fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

/// An item name as configured (`item_7`, `7`, `Item 7A`) to its key (`7`, `7A`).
pub(crate) fn item_key(name: &str) -> Option<String> {
    let lower = name.trim().to_ascii_lowercase();
    let rest = lower
        .strip_prefix("item")
        .map(|r| r.trim_start_matches(['_', ' ']))
        .unwrap_or(&lower);
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let tail = &rest[digits.len()..];
    let ok = (1..=2).contains(&digits.len())
        && (tail.is_empty() || (tail.len() == 1 && tail.chars().all(|c| c.is_ascii_alphabetic())));
    ok.then(|| format!("{digits}{}", tail.to_ascii_uppercase()))
}

impl EdgarSource {
    /// Checks beyond the types; `field` is the source's path in the configuration
    /// (`sources[0].edgar`).
    pub fn validate(&self, field: &str, items: &[String]) -> Result<(), ConfigError> {
        let f = |name: &str| format!("{field}.{name}");
        match self.user_agent.as_deref().map(str::trim) {
            None | Some("") => {
                return Err(ConfigError::new(
                    f("user_agent"),
                    "the SEC requires a declared User-Agent with a contact for automated access \
                     (e.g. \"Jane Doe jane@example.org\"); the EDGAR source does not fetch without one",
                ));
            }
            Some(ua) if !ua.contains('@') => {
                return Err(ConfigError::new(
                    f("user_agent"),
                    "must name a contact e-mail (e.g. \"Jane Doe jane@example.org\"), as the SEC asks",
                ));
            }
            Some(_) => {}
        }
        if self.ciks.is_empty() && self.tickers.is_empty() {
            return Err(ConfigError::new(
                f("ciks"),
                "name at least one CIK or ticker",
            ));
        }
        for (i, cik) in self.ciks.iter().enumerate() {
            if cik.padded().is_none() {
                return Err(ConfigError::new(
                    format!("{field}.ciks[{i}]"),
                    "a CIK is 1 to 10 digits",
                ));
            }
        }
        if self.forms.is_empty() || self.forms.iter().any(|s| s.trim().is_empty()) {
            return Err(ConfigError::new(
                f("forms"),
                "name at least one form, e.g. \"10-K\"",
            ));
        }
        for (name, value) in [("from", &self.from), ("to", &self.to)] {
            if let Some(d) = value
                && !is_iso_date(d)
            {
                return Err(ConfigError::new(
                    f(name),
                    format!("`{d}` is not YYYY-MM-DD"),
                ));
            }
        }
        if let (Some(from), Some(to)) = (&self.from, &self.to)
            && from > to
        {
            return Err(ConfigError::new(f("to"), "is before `from`"));
        }
        if self.latest == Some(0) {
            return Err(ConfigError::new(f("latest"), "must be >= 1 (or unset)"));
        }
        if !(self.rate_per_second.is_finite()
            && self.rate_per_second > 0.0
            && self.rate_per_second <= SEC_MAX_RATE)
        {
            return Err(ConfigError::new(
                f("rate_per_second"),
                "must be > 0 and at most 10 (the SEC's fair-access limit)",
            ));
        }
        for (name, url) in [
            ("base_url", &self.base_url),
            ("archives_url", &self.archives_url),
            ("tickers_url", &self.tickers_url),
        ] {
            match Url::parse(url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
                _ => {
                    return Err(ConfigError::new(
                        f(name),
                        format!("`{url}` is not an http(s) URL"),
                    ));
                }
            }
        }
        for (i, item) in items.iter().enumerate() {
            if item_key(item).is_none() {
                return Err(ConfigError::new(
                    format!("{}.items[{i}]", field.trim_end_matches(".edgar")),
                    format!("`{item}` is not an item name (`item_7`, `7`, `item_1A`)"),
                ));
            }
        }
        Ok(())
    }

    /// The web layer this source fetches through: the run's, with this source's User-Agent and
    /// each SEC host's rate capped at `rate_per_second` (and at the run's own rate for it).
    pub fn web(&self, run_web: &Web) -> Result<Web, String> {
        let mut config = run_web.config().clone();
        if let Some(ua) = &self.user_agent {
            config.user_agent = ua.trim().to_string();
        }
        for url in [&self.base_url, &self.archives_url, &self.tickers_url] {
            let Ok(url) = Url::parse(url) else { continue };
            let host = host_key(&url);
            let rate = config.rate_for(&host).min(self.rate_per_second);
            config.hosts.insert(
                host,
                HostConfig {
                    rate_per_second: rate,
                },
            );
        }
        // The run's `Web::new` resolved its paths against the workspace root, which may itself be
        // relative (`--root ws`): made absolute here, against the directory the run started in,
        // they name the same folders whatever root this layer is built with.
        for p in [&mut config.archive_dir, &mut config.replay_archive]
            .into_iter()
            .flatten()
            .chain(config.replay_fixtures.iter_mut())
        {
            *p = std::path::absolute(&*p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        Web::new(config, std::path::Path::new("/")).map_err(|e| e.to_string())
    }

    fn submissions_url(&self, name: &str) -> String {
        format!("{}/submissions/{name}", self.base_url.trim_end_matches('/'))
    }

    /// Whether a filing's form is taken, and whether it is an amendment of one. A form named
    /// takes itself and, when it names a family of the annual report, the family's other forms:
    /// `10-K` takes `10-K405`, `10-KSB` takes `10-KSB40`, `10-KT` takes `10-KT405`.
    fn form_match(&self, form: &str) -> Option<bool> {
        let form = normal_form(form);
        let takes = |filed: &str| {
            self.forms.iter().any(|f| {
                let named = normal_form(f);
                named == filed || annual::family(filed) == Some(named.as_str())
            })
        };
        if takes(&form) && !form.ends_with("/A") {
            return Some(false);
        }
        takes(form.strip_suffix("/A")?).then_some(true)
    }

    fn in_dates(&self, date: &str) -> bool {
        self.from.as_deref().is_none_or(|f| date >= f)
            && self.to.as_deref().is_none_or(|t| date <= t)
    }
}

/// One filing listed in a company's submissions index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub cik: String,
    pub company: String,
    pub accession: String,
    pub filing_date: String,
    pub report_date: String,
    pub form: String,
    pub primary_document: String,
}

impl Listed {
    /// The form without its `/A`, and of the annual report its family's (`10-K405` is `10-K`): an
    /// amendment replaces the original of its period whichever of the family it was.
    fn base_form(&self) -> String {
        let form = normal_form(&self.form);
        match annual::family(&form) {
            Some(f) => f.to_string(),
            None => form.strip_suffix("/A").unwrap_or(&form).to_string(),
        }
    }

    fn is_amendment(&self) -> bool {
        self.form.ends_with("/A")
    }

    /// The period the report is about: the report date, else the filing date.
    fn period(&self) -> &str {
        if self.report_date.is_empty() {
            &self.filing_date
        } else {
            &self.report_date
        }
    }

    /// `<archives_url>/Archives/edgar/data/<cik>/<accession without dashes>/<primaryDocument>`.
    pub fn document_url(&self, archives_url: &str) -> String {
        format!(
            "{}/Archives/edgar/data/{}/{}/{}",
            archives_url.trim_end_matches('/'),
            self.cik,
            self.accession.replace('-', ""),
            self.primary_document
        )
    }

    /// The drop item naming this filing.
    fn item(&self) -> String {
        format!("edgar:{}/{}", self.cik, self.accession)
    }
}

/// The submissions index of one company, parsed: its name and the filings of one page.
#[derive(Debug, Default)]
pub struct Submissions {
    pub cik: String,
    pub company: String,
    pub filings: Vec<Listed>,
    /// Further pages: (file name, first filing date, last filing date).
    pub pages: Vec<(String, String, String)>,
}

/// Parse a submissions index (`CIK##########.json`) or one of its further pages (the same
/// parallel arrays at the top level). `cik` and `company` fill what a page does not say.
pub fn parse_submissions(json: &str, cik: &str, company: &str) -> Result<Submissions, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let cik = match text(value.get("cik")) {
        c if c.is_empty() => cik.to_string(),
        c => c.trim_start_matches('0').to_string(),
    };
    let company = match text(value.get("name")) {
        c if c.is_empty() => company.to_string(),
        c => c,
    };
    let filings_obj = value.get("filings");
    let recent = filings_obj
        .and_then(|f| f.get("recent"))
        .or(if filings_obj.is_none() {
            Some(&value)
        } else {
            None
        })
        .ok_or("no `filings.recent`")?;
    let column = |name: &str| -> Vec<String> {
        recent
            .get(name)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|v| text(Some(v))).collect())
            .unwrap_or_default()
    };
    let accession = column("accessionNumber");
    if recent
        .get("accessionNumber")
        .and_then(Value::as_array)
        .is_none()
    {
        return Err("no `accessionNumber` array".into());
    }
    let (filing_date, report_date, form, primary) = (
        column("filingDate"),
        column("reportDate"),
        column("form"),
        column("primaryDocument"),
    );
    let at = |v: &[String], i: usize| v.get(i).cloned().unwrap_or_default();
    let filings = (0..accession.len())
        .map(|i| Listed {
            cik: cik.clone(),
            company: company.clone(),
            accession: at(&accession, i),
            filing_date: at(&filing_date, i),
            report_date: at(&report_date, i),
            form: at(&form, i),
            primary_document: at(&primary, i),
        })
        .collect();
    let pages = filings_obj
        .and_then(|f| f.get("files"))
        .and_then(Value::as_array)
        .map(|files| {
            files
                .iter()
                .map(|f| {
                    (
                        text(f.get("name")),
                        text(f.get("filingFrom")),
                        text(f.get("filingTo")),
                    )
                })
                .filter(|(n, _, _)| !n.is_empty())
                .collect()
        })
        .unwrap_or_default();
    Ok(Submissions {
        cik,
        company,
        filings,
        pages,
    })
}

/// The ticker map (`company_tickers.json`: `{"0": {"cik_str": 320193, "ticker": "AAPL", ...}}`),
/// upper-case tickers to ten-digit CIKs.
pub fn parse_tickers(json: &str) -> Result<BTreeMap<String, String>, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let entries: Vec<&Value> = match &value {
        Value::Object(m) => m.values().collect(),
        Value::Array(a) => a.iter().collect(),
        _ => return Err("not an object of companies".into()),
    };
    let mut map = BTreeMap::new();
    for e in entries {
        let ticker = e.get("ticker").and_then(Value::as_str);
        let cik = match e.get("cik_str").or_else(|| e.get("cik")) {
            Some(Value::Number(n)) => n.as_u64().and_then(|n| Cik::Number(n).padded()),
            Some(Value::String(s)) => Cik::Text(s.clone()).padded(),
            _ => None,
        };
        if let (Some(t), Some(c)) = (ticker, cik) {
            map.insert(t.trim().to_ascii_uppercase(), c);
        }
    }
    Ok(map)
}

/// The items cut from a filing document.
pub struct FilingItems {
    pub blocks: Vec<Block>,
    /// Items asked for and not found.
    pub missing: Vec<String>,
    /// Items found that only point to the annual report to shareholders (exhibit 13): "Refer to
    /// pages 40 through 49 of IBM's 1997 Annual Report to Stockholders which are incorporated
    /// herein by reference."
    pub pointers: Vec<String>,
}

/// `Item 7.`, `ITEM 7A -`, `Item 7 Management's...`: the item key of a heading line, if it is one.
pub(crate) fn heading_key(text: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)^item\s*(\d{1,2})([a-d])?\b\s*(.?)").expect("constant pattern")
    });
    if text.chars().count() > 300 {
        return None;
    }
    // A line that closes a parenthesis it never opened continues a sentence from the line
    // before (filings laid out one `<p>` per printed line: "(see" / "ITEM 1A. Risk Factors ...).").
    if text.matches(')').count() > text.matches('(').count() {
        return None;
    }
    static SUB: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let sub = SUB.get_or_init(|| {
        Regex::new(r"^(?i:item)\s*\d{1,2}[a-dA-D]?\s*\([a-z]\)").expect("constant pattern")
    });
    // "ITEM 14(d)" heads a part of item 14 (its schedule), not an item; "ITEM 8A(T)" (10-KSB) is
    // one. A line that ends in leader dots and a page number is a table of contents' entry.
    let t = text.trim();
    let leader = t.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end();
    if sub.is_match(t) || (leader.len() < t.len() && leader.ends_with("...")) {
        return None;
    }
    let c = re.captures(text.trim())?;
    let next = c.get(3).map(|m| m.as_str()).unwrap_or("");
    // "Item 7 of this report ..." is a reference, not a heading.
    let heading = next
        .chars()
        .next()
        .is_none_or(|ch| ".:-–—(".contains(ch) || ch.is_uppercase() || ch == '\'' || ch == '’');
    heading.then(|| {
        format!(
            "{}{}",
            &c[1],
            c.get(2)
                .map(|m| m.as_str().to_ascii_uppercase())
                .unwrap_or_default()
        )
    })
}

/// Item headings inside a later item ("Item 7. Financial Statements and Exhibits" in item 14's
/// list of the 8-K reports filed): the item heading before it, in its part, is of a later item,
/// and what follows it is not a later item's heading. A table of contents' last entry followed
/// by the body's "Item 1" is not nested: item 1A or 2 follows it.
fn nested_keys(keys: &[Option<String>], heads: &[bool]) -> Vec<bool> {
    (0..keys.len())
        .map(|i| {
            let Some(key) = keys[i].as_deref() else {
                return false;
            };
            let prev = (0..i)
                .rev()
                .find(|&j| heads[j] && keys[j].as_deref() != Some(key))
                .and_then(|j| keys[j].as_deref());
            let next = (i + 1..keys.len())
                .find(|&j| heads[j] && keys[j].as_deref() != Some(key))
                .and_then(|j| keys[j].as_deref());
            prev.is_some_and(|p| key_order(p) > key_order(key))
                && next.is_none_or(|n| key_order(n) <= key_order(key))
        })
        .collect()
}

/// An item key's place in a filing: `7A` after `7`, before `8`.
fn key_order(key: &str) -> (u32, String) {
    let digits: String = key.chars().take_while(char::is_ascii_digit).collect();
    (digits.parse().unwrap_or(0), key[digits.len()..].to_string())
}

/// `PART II`, `SIGNATURES`, the signature page's `POWER OF ATTORNEY`, the `Supplemental Information to
/// be Furnished With Reports Filed Pursuant to Section 15(d) ...` of issuers without registered
/// securities: lines that end an item without starting another.
fn is_boundary(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)^(part\s+(i{1,3}|iv)\b.{0,80}|part\s+[1-4]|signatures?|power\s+of\s+attorney|supplemental\s+information\s+to\s+be\s+furnished\s+with\s+reports\b.{0,200})$",
        )
        .expect("constant pattern")
    });
    re.is_match(text.trim())
}

/// The item whose end an unnumbered section's heading marks, when it follows that item: many
/// filings print their executive officers after item 4, before Part II (Regulation S-K lets item
/// 401(b)'s officers sit in Part I: "ITEM X. INFORMATION ABOUT OUR EXECUTIVE OFFICERS",
/// "Executive officers of the registrant"), and their exhibit index or financial statements
/// (the F-pages Item 8 points to) after item 16 ("Index to Exhibits", "INDEX TO FINANCIAL
/// STATEMENTS"), headed but unnumbered. Only that item ends there: item 1 may hold the officers'
/// heading as a part of it (Amazon), and item 8 its own index to the financial statements.
fn unnumbered_after(text: &str) -> Option<&'static str> {
    static RES: OnceLock<[(Regex, &'static str); 2]> = OnceLock::new();
    // Invariant: constant patterns.
    let res = RES.get_or_init(|| {
        let re = |pattern: &str| Regex::new(pattern).expect("constant pattern");
        [
            (
                re(
                    r"(?i)^(item\s+x\s*[.:\-–—]?\s*)?(information\s+(about|regarding|concerning|on)\s+(our\s+|the\s+)?executive\s+officers(\s+of\s+the\s+(registrant|company))?|executive\s+officers\s+of\s+(the\s+)?(registrant|company))\s*[.:]?\s*(\([^()]{0,60}\))?$",
                ),
                "4",
            ),
            (
                re(
                    r"(?i)^(index\s+to\s+exhibits|exhibit\s+index|index\s+to\s+(the\s+)?(consolidated\s+)?financial\s+statements(\s+and\s+(financial\s+statement\s+)?schedules?)?)\s*[.:]?$",
                ),
                "16",
            ),
        ]
    });
    let text = text.trim();
    res.iter()
        .find(|(re, _)| re.is_match(text))
        .map(|(_, item)| *item)
}

/// Page furniture between the items: page numbers of any length (`29`, `- 29 -`, `F-1`, `II-4`),
/// "Table of Contents" back-links, and paragraphs of nothing but zero-width characters.
fn is_furniture(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| {
        Regex::new(r"^(?:[-–—\s]*\d{1,4}[-–—\s]*|[A-Z]{1,3}\s?[-–—]\s?\d{1,3})$")
            .expect("constant pattern")
    });
    let t = text.trim_matches(|c: char| c.is_whitespace() || is_zero_width(c));
    t.is_empty()
        || re.is_match(t)
        || t.eq_ignore_ascii_case("table of contents")
        || t.eq_ignore_ascii_case("index")
}

/// Running page heads: a part line and an item line right after it ("PART I" / "Item 1" at the
/// top of every page of Microsoft's 2013 10-K), the pair at least three times alike. Neither line
/// heads or ends an item; both are furniture.
fn running_heads(lines: &[Option<String>]) -> Vec<bool> {
    let norm = |i: usize| lines.get(i).and_then(|l| l.as_deref()).map(squash);
    let pair = |i: usize| -> Option<(String, String)> {
        let part = norm(i)?;
        let item = norm(i + 1)?;
        (part.to_ascii_lowercase().starts_with("part ")
            && is_boundary(&part)
            && heading_key(&item).is_some())
        .then_some((part, item))
    };
    let pairs: Vec<Option<(String, String)>> = (0..lines.len()).map(pair).collect();
    let mut counts: std::collections::HashMap<&(String, String), usize> =
        std::collections::HashMap::new();
    for p in pairs.iter().flatten() {
        *counts.entry(p).or_default() += 1;
    }
    let mut out = vec![false; lines.len()];
    for (i, p) in pairs.iter().enumerate() {
        if p.as_ref().is_some_and(|p| counts[p] >= 3) {
            out[i] = true;
            out[i + 1] = true;
        }
    }
    out
}

/// Running page footers: a short paragraph (or one-row table) ending in a page number whose text
/// before that number comes back at least five times ("Apple Inc. | 2024 Form 10-K | 20").
fn running_footers(blocks: &[Block], lines: &[Option<String>]) -> Vec<bool> {
    let stem = |i: usize| -> Option<String> {
        let one_row = match &blocks[i] {
            Block::Paragraph { .. } => true,
            Block::Table { markdown, .. } => markdown.lines().count() <= 3,
            Block::Heading { .. } => false,
        };
        let line = lines[i].as_deref().filter(|_| one_row)?.trim();
        let stem = line
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .trim_end();
        (stem.len() < line.len() && !stem.is_empty() && line.chars().count() <= 100)
            .then(|| stem.to_string())
    };
    let stems: Vec<Option<String>> = (0..blocks.len()).map(stem).collect();
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for s in stems.iter().flatten() {
        *counts.entry(s.as_str()).or_default() += 1;
    }
    stems
        .iter()
        .map(|s| s.as_deref().is_some_and(|s| counts[s] >= 5))
        .collect()
}

/// A block's text as a heading line: a heading or paragraph, or a table of at most two rows (some
/// filings lay `Item 7.` | `Management's Discussion...` out as a one-row table).
fn line_of(block: &Block) -> Option<String> {
    match block {
        Block::Heading { text, .. } | Block::Paragraph { text, .. } => Some(text.clone()),
        Block::Table { markdown, .. } => {
            let rows: Vec<&str> = markdown
                .lines()
                .filter(|l| !l.trim().trim_matches(['|', '-', ':', ' ']).is_empty())
                .collect();
            (rows.len() <= 2).then(|| {
                squash(
                    &rows
                        .iter()
                        .map(|r| r.replace('|', " "))
                        .collect::<Vec<_>>()
                        .join(" "),
                )
            })
        }
    }
}

fn text_len(block: &Block) -> usize {
    match block {
        Block::Heading { text, .. } | Block::Paragraph { text, .. } => text.len(),
        Block::Table { markdown, .. } => markdown.len(),
    }
}

/// Cut the `items` (configured names) from a filing's HTML, in the order asked, each starting with
/// its heading as a level-2 heading. Every occurrence of an item's heading is a candidate (the
/// table of contents names each item too); the one with the most text before the next item or
/// part heading wins, the last on a tie. Items 4 and 16 also end at the unnumbered sections that
/// follow them (`unnumbered_after`: the executive officers; the exhibit index and the financial
/// statements), each kept as a level-2 section of its own after the item, so their words reach
/// chunks under their own heading, not the item's.
pub fn filing_items(html: &str, items: &[String]) -> FilingItems {
    cut_items(html_blocks(html).blocks, items)
}

/// [`filing_items`] over a filing's blocks, however they were read (HTML, or a plain-text
/// filing through the `text_filing` reader).
pub fn cut_items(blocks: Vec<Block>, items: &[String]) -> FilingItems {
    let lines: Vec<Option<String>> = blocks.iter().map(line_of).collect();
    let running = running_heads(&lines);
    let keys: Vec<Option<String>> = lines
        .iter()
        .zip(&running)
        .map(|(l, r)| l.as_deref().filter(|_| !r).and_then(heading_key))
        .collect();
    let heads: Vec<bool> = lines
        .iter()
        .zip(&keys)
        .zip(&running)
        .map(|((l, k), r)| !r && (k.is_some() || l.as_deref().is_some_and(is_boundary)))
        .collect();
    let nested = nested_keys(&keys, &heads);
    // A nested item heading neither ends the item it sits in nor leaves it.
    let stops: Vec<bool> = heads.iter().zip(&nested).map(|(h, n)| *h && !n).collect();
    let unnumbered: Vec<Option<&str>> = lines
        .iter()
        .map(|l| l.as_deref().and_then(unnumbered_after))
        .collect();
    let mut footers = running_footers(&blocks, &lines);
    for (f, r) in footers.iter_mut().zip(&running) {
        *f |= *r;
    }
    // What an item (or section) keeps of the blocks under its heading.
    let body = |from: usize, to: usize| {
        let (nested, footers) = (&nested, &footers);
        blocks[from..to].iter().enumerate().filter(move |(k, b)| {
            (nested[from + k] || keys_free(b))
                && !footers[from + k]
                && !matches!(b, Block::Paragraph { text, .. } | Block::Heading { text, .. } if is_furniture(text))
        }).map(|(_, b)| b)
    };
    let mut out = Vec::new();
    let mut missing = Vec::new();
    let mut pointers = Vec::new();
    for name in items {
        let Some(want) = item_key(name) else {
            missing.push(name.clone());
            continue;
        };
        let followed = |j: usize| unnumbered[j] == Some(want.as_str());
        // (in sequence, start, end, size)
        let mut best: Option<(bool, usize, usize, usize)> = None;
        for (i, key) in keys.iter().enumerate() {
            if key.as_deref() != Some(want.as_str()) {
                continue;
            }
            // A page header repeating the item's own heading does not end it.
            let end = (i + 1..blocks.len())
                .find(|&j| (stops[j] && keys[j].as_deref() != Some(want.as_str())) || followed(j))
                .unwrap_or(blocks.len());
            let size: usize = blocks[i + 1..end].iter().map(text_len).sum();
            let in_sequence = !nested[i];
            if best.is_none_or(|(q, _, _, s)| (in_sequence, size) >= (q, s)) {
                best = Some((in_sequence, i, end, size));
            }
        }
        let best = best.map(|(_, i, end, size)| (i, end, size));
        let sections_follow = |end: usize| end < blocks.len() && followed(end);
        match best {
            // "Item 4. Mine Safety Disclosures. Not applicable." may be all on its heading line.
            // "Item 6. [Reserved]" is there, its text that word.
            Some((start, end, size))
                if size > 0 || sections_follow(end) || reserved(&lines[start]).is_some() =>
            {
                let heading = lines[start].clone().unwrap_or_default();
                out.push(Block::Heading {
                    level: 2,
                    text: heading,
                });
                let before = out.len();
                out.extend(body(start + 1, end).cloned());
                if points_to_annual_report(&out[before..]) {
                    pointers.push(name.clone());
                }
                if out.len() == before
                    && let Some(word) = reserved(&lines[start])
                {
                    out.push(Block::Paragraph {
                        text: word,
                        page: None,
                    });
                }
                // The unnumbered sections after it, each to the next stop or the next of them.
                let mut at = end;
                while sections_follow(at) {
                    let to = (at + 1..blocks.len())
                        .find(|&j| stops[j] || followed(j))
                        .unwrap_or(blocks.len());
                    out.push(Block::Heading {
                        level: 2,
                        text: lines[at].clone().unwrap_or_default(),
                    });
                    out.extend(body(at + 1, to).cloned());
                    at = to;
                }
            }
            _ => missing.push(name.clone()),
        }
    }
    FilingItems {
        blocks: out,
        missing,
        pointers,
    }
}

/// An item's text that only points to the annual report to shareholders: short, naming that
/// report (to share owners, shareholders, stockholders or security holders, or exhibit 13) and
/// the pages or the incorporation by reference.
fn points_to_annual_report(body: &[Block]) -> bool {
    static RES: OnceLock<[Regex; 2]> = OnceLock::new();
    // Invariant: constant patterns.
    let [report, pointer] = RES.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("constant pattern");
        [
            re(r"(?i)annual\s+report\s+to\s+(share\s*owners|shareholders|stockholders|security\s+holders)|exhibit\s+13\b"),
            re(r"(?i)incorporated\s+(herein\s+|in\s+this\s+\w+\s+|into\s+this\s+[\w\s-]{1,40}?)?by\s+reference|\bpages?\s+\d"),
        ]
    });
    let text = body
        .iter()
        .map(crate::block_text)
        .collect::<Vec<_>>()
        .join(" ");
    !text.is_empty() && text.len() <= 800 && report.is_match(&text) && pointer.is_match(&text)
}

/// The "[Reserved]" (or "Reserved.") an item heading ends with, as printed.
fn reserved(line: &Option<String>) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)(\[\s*reserved\s*\]|\breserved)\.?\s*$").expect("constant pattern")
    });
    re.find(line.as_deref()?)
        .map(|m| m.as_str().trim().to_string())
}

/// Blocks inside an item are kept, repeated headings of the item itself aside.
fn keys_free(block: &Block) -> bool {
    !matches!(block, Block::Paragraph { text, .. } | Block::Heading { text, .. } if heading_key(text).is_some())
}

/// A filing turned into a report's parts.
pub struct FetchedFiling {
    pub listed: Listed,
    pub url: String,
    pub blocks: Vec<Block>,
    /// Items asked for and not found in the document (the others were).
    pub missing: Vec<String>,
    /// The other documents of a full submission (`EX-13`, the annual report, ...), unread.
    pub exhibits: Vec<SubmissionDocument>,
    /// `incorporated_by_reference` and `annual_report_exhibit` metadata, when items point to
    /// the annual report ([`annual::follow_pointers`]).
    pub followed: BTreeMap<String, String>,
}

/// A per-filing or per-company failure: the drop item, reason code and detail.
pub(crate) struct EdgarDrop {
    pub item: String,
    pub reason: DropReason,
    pub detail: String,
}

/// What one EDGAR source gave: the filings read (in listing order) and the drops; every item
/// read is one of the two.
#[derive(Default)]
pub(crate) struct EdgarHarvest {
    pub filings: Vec<FetchedFiling>,
    pub drops: Vec<EdgarDrop>,
    /// Items read: filings listed (after the form and date filters), plus companies and tickers
    /// that failed before any filing was known.
    pub items_in: u64,
}

impl EdgarHarvest {
    fn drop(&mut self, item: String, reason: impl Into<DropReason>, detail: impl Into<String>) {
        self.drops.push(EdgarDrop {
            item,
            reason: reason.into(),
            detail: detail.into(),
        });
    }
}

/// The SEC's limit holds for all its hosts together, while the web layer paces each host on
/// its own; the source fetches one page at a time, so spacing its fetches bounds the total.
struct Fetcher<'a> {
    web: &'a Web,
    interval: Duration,
    last: Option<Instant>,
}

impl<'a> Fetcher<'a> {
    fn new(web: &'a Web, rate_per_second: f64) -> Self {
        let interval = match web.config().mode {
            // Replay sends nothing.
            Mode::Replay => Duration::ZERO,
            Mode::Live => Duration::from_secs_f64(1.0 / rate_per_second),
        };
        Self {
            web,
            interval,
            last: None,
        }
    }

    fn fetch(&mut self, url: &str) -> Result<Page, (DropReason, String)> {
        if let Some(last) = self.last {
            let due = last + self.interval;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        self.last = Some(Instant::now());
        self.web
            .fetch(url)
            .map_err(|e| (e.drop_reason(), e.to_string()))
    }
}

/// The companies of a source, ten-digit CIKs in order (tickers after CIKs), each once.
fn companies(
    source: &EdgarSource,
    web: &mut Fetcher<'_>,
    harvest: &mut EdgarHarvest,
) -> Vec<String> {
    let mut ciks: Vec<String> = source.ciks.iter().filter_map(Cik::padded).collect();
    if !source.tickers.is_empty() {
        let map = web
            .fetch(&source.tickers_url)
            .and_then(|p| parse_tickers(&p.text).map_err(|e| ("invalid_json".into(), e)));
        for ticker in &source.tickers {
            let item = format!("edgar:ticker:{ticker}");
            match &map {
                Ok(m) => match m.get(&ticker.trim().to_ascii_uppercase()) {
                    Some(cik) => ciks.push(cik.clone()),
                    None => {
                        harvest.items_in += 1;
                        harvest.drop(
                            item,
                            "unknown_ticker",
                            format!("`{ticker}` is not in {}", source.tickers_url),
                        );
                    }
                },
                Err((code, detail)) => {
                    harvest.items_in += 1;
                    harvest.drop(item, code.clone(), detail.clone());
                }
            }
        }
    }
    let mut seen = BTreeSet::new();
    ciks.retain(|c| seen.insert(c.clone()));
    ciks
}

/// The filings a company lists that the source takes (forms, dates), with its further index
/// pages read when `from` reaches back to them; and those of the annual report's forms in the
/// dates that `forms` does not take (`10-KSB` under `forms = ["10-K"]`), each a counted drop.
fn listed(
    source: &EdgarSource,
    web: &mut Fetcher<'_>,
    cik10: &str,
) -> Result<(Vec<Listed>, Vec<Listed>), EdgarDrop> {
    let item = format!("edgar:CIK{cik10}");
    let fail = |(reason, detail): (DropReason, String)| EdgarDrop {
        item: item.clone(),
        reason,
        detail,
    };
    let page = web
        .fetch(&source.submissions_url(&format!("CIK{cik10}.json")))
        .map_err(fail)?;
    let cik = cik10.trim_start_matches('0');
    let index =
        parse_submissions(&page.text, cik, "").map_err(|e| fail(("invalid_json".into(), e)))?;
    let mut filings = index.filings;
    if let Some(from) = &source.from {
        for (name, first, last) in &index.pages {
            let overlaps = last.as_str() >= from.as_str()
                && source.to.as_deref().is_none_or(|t| first.as_str() <= t);
            if !overlaps {
                continue;
            }
            let more = web.fetch(&source.submissions_url(name)).map_err(fail)?;
            let more = parse_submissions(&more.text, &index.cik, &index.company)
                .map_err(|e| fail(("invalid_json".into(), format!("{name}: {e}"))))?;
            filings.extend(more.filings);
        }
    }
    let mut seen = BTreeSet::new();
    filings.retain(|f| {
        source.in_dates(&f.filing_date)
            && !f.primary_document.is_empty()
            && seen.insert(f.accession.clone())
    });
    let (mut filings, others): (Vec<Listed>, Vec<Listed>) = filings
        .into_iter()
        .partition(|f| source.form_match(&f.form).is_some());
    let not_taken: Vec<Listed> = others
        .into_iter()
        .filter(|f| annual::family(&f.form).is_some())
        .collect();
    // Newest first, so `latest` and amendments read in filing order.
    filings.sort_by(|a, b| {
        b.filing_date
            .cmp(&a.filing_date)
            .then(b.accession.cmp(&a.accession))
    });
    if let Some(n) = source.latest {
        let mut periods: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in &filings {
            periods
                .entry(f.base_form())
                .or_default()
                .insert(f.period().to_string());
        }
        let keep: BTreeSet<(String, String)> = periods
            .into_iter()
            .flat_map(|(form, ps)| ps.into_iter().rev().take(n).map(move |p| (form.clone(), p)))
            .collect();
        filings.retain(|f| keep.contains(&(f.base_form(), f.period().to_string())));
    }
    Ok((filings, not_taken))
}

/// Fetch one filing's document and cut its items.
fn read_one(
    source: &EdgarSource,
    web: &mut Fetcher<'_>,
    listed: &Listed,
    items: &[String],
) -> Result<FetchedFiling, (DropReason, String)> {
    let url = listed.document_url(&source.archives_url);
    let page = web.fetch(&url)?;
    // A plain-text submission (every filing before about 2001) is read as text, a wrapped HTML
    // one as its main document's HTML.
    let named_html = [".htm", ".html", ".xhtml"]
        .iter()
        .any(|e| listed.primary_document.to_ascii_lowercase().ends_with(e));
    let doc = annual::read_document(&page.text, named_html);
    let layout = doc.layout;
    let mut cut = cut_items(doc.blocks, items);
    let mut followed = BTreeMap::new();
    annual::follow_pointers(&mut cut, &doc.exhibits, &mut followed);
    if cut.blocks.is_empty() {
        return Err((
            "empty_item".into(),
            format!("items {items:?} not found in {url} (read as {layout})"),
        ));
    }
    Ok(FetchedFiling {
        listed: listed.clone(),
        url,
        blocks: cut.blocks,
        missing: cut.missing,
        exhibits: doc.exhibits,
        followed,
    })
}

/// Read one EDGAR source: companies, their listed filings, each taken filing's items, under the
/// amendment rule. Every failure is a drop with the web layer's reason code (or `invalid_json`,
/// `unknown_ticker`, `empty_item`, `amendment_ignored`, `superseded`).
pub(crate) fn harvest(source: &EdgarSource, web: &Web, items: &[String]) -> EdgarHarvest {
    let mut harvest = EdgarHarvest::default();
    let web = &mut Fetcher::new(web, source.rate_per_second);
    for cik10 in companies(source, web, &mut harvest) {
        let (filings, not_taken) = match listed(source, web, &cik10) {
            Ok(f) => f,
            Err(d) => {
                harvest.items_in += 1;
                harvest.drops.push(d);
                continue;
            }
        };
        harvest.items_in += (filings.len() + not_taken.len()) as u64;
        for f in not_taken {
            harvest.drop(
                f.item(),
                "form_not_taken",
                format!(
                    "{} is not among `forms` {:?}; name it there to take it",
                    f.form, source.forms
                ),
            );
        }
        // Groups of one period and form, newest filing first (`listed` sorted them).
        let mut groups: BTreeMap<(String, String), Vec<Listed>> = BTreeMap::new();
        for f in filings {
            let key = (f.base_form(), f.period().to_string());
            groups.entry(key).or_default().push(f);
        }
        for group in groups.into_values() {
            match source.amendments {
                Amendments::Ignore | Amendments::KeepBoth => {
                    for f in group {
                        if source.amendments == Amendments::Ignore && f.is_amendment() {
                            harvest.drop(
                                f.item(),
                                "amendment_ignored",
                                format!("{} ignored (`amendments = \"ignore\"`)", f.form),
                            );
                            continue;
                        }
                        match read_one(source, web, &f, items) {
                            Ok(r) => harvest.filings.push(r),
                            Err((reason, detail)) => harvest.drop(f.item(), reason, detail),
                        }
                    }
                }
                Amendments::Replace => {
                    let mut taken: Option<String> = None;
                    for f in group {
                        if let Some(by) = &taken {
                            harvest.drop(
                                f.item(),
                                "superseded",
                                format!("replaced by the later {by}"),
                            );
                            continue;
                        }
                        match read_one(source, web, &f, items) {
                            Ok(r) => {
                                taken = Some(format!("{} {}", f.form, f.accession));
                                harvest.filings.push(r);
                            }
                            // The next older filing of the period is tried instead.
                            Err((reason, detail)) => harvest.drop(f.item(), reason, detail),
                        }
                    }
                }
            }
        }
    }
    harvest
}

/// The metadata of a fetched filing, the edgar-crawler fields and where it came from.
pub(crate) fn filing_metadata(f: &FetchedFiling, items: &[String]) -> BTreeMap<String, String> {
    let l = &f.listed;
    let mut m = BTreeMap::from([
        ("cik".to_string(), l.cik.clone()),
        ("company".to_string(), l.company.clone()),
        ("filing_type".to_string(), l.form.clone()),
        ("filing_date".to_string(), l.filing_date.clone()),
        ("period_of_report".to_string(), l.report_date.clone()),
        ("items".to_string(), items.join(",")),
        ("accession_number".to_string(), l.accession.clone()),
    ]);
    m.extend(f.followed.clone());
    if !f.exhibits.is_empty() {
        m.insert(
            "exhibits".into(),
            f.exhibits
                .iter()
                .map(|d| d.kind.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    m
}

/// The report id of a filing: stable by company, form (the original's under `replace`, so an
/// amendment replaces it) and period, whatever accession or fetch brought it.
pub fn report_id(
    domain: &str,
    f: &FetchedFiling,
    amendments: Amendments,
    items: &[String],
) -> String {
    let l = &f.listed;
    let form = match amendments {
        Amendments::Replace => l.base_form(),
        Amendments::KeepBoth | Amendments::Ignore => l.form.clone(),
    };
    // `7` and `item_7` name the same item, so they give the same id.
    let keys: Vec<String> = items
        .iter()
        .map(|i| item_key(i).unwrap_or_else(|| i.clone()))
        .collect();
    stable_id(
        "report",
        &[domain, "edgar", &l.cik, &form, l.period(), &keys.join(",")],
    )
}

/// Record a harvest's drops.
pub(crate) fn record_drops(drops: &mut Drops, harvest_drops: Vec<EdgarDrop>) {
    for d in harvest_drops {
        tracing::warn!(item = %d.item, reason = %d.reason, "EDGAR filing dropped: {}", d.detail);
        drops.add(d.item, d.reason, d.detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_names_and_headings() {
        assert_eq!(item_key("item_7").as_deref(), Some("7"));
        assert_eq!(item_key("7a").as_deref(), Some("7A"));
        assert_eq!(item_key("Item 1A").as_deref(), Some("1A"));
        assert_eq!(item_key("mdna"), None);
        assert_eq!(heading_key("Item 7.").as_deref(), Some("7"));
        assert_eq!(heading_key("ITEM 7A - QUANTITATIVE").as_deref(), Some("7A"));
        assert_eq!(
            heading_key("Item\u{a0}7 Management’s").as_deref(),
            Some("7")
        );
        assert_eq!(heading_key("Item 7 of this report discusses"), None);
        assert_eq!(heading_key("Items 7 and 8"), None);
        assert_eq!(
            heading_key("ITEM 1A. Risk Factors – “Litigation may adversely affect us”)."),
            None
        );
        assert!(is_boundary("PART II"));
        assert!(is_boundary("Signatures"));
        assert!(!is_boundary("Part of our strategy is growth."));
        // Medicis 1999: the power of attorney before the signatures; CarMax Auto Owner Trust
        // 2023: the Section 15(d) supplemental information after item 16.
        assert!(is_boundary("POWER OF ATTORNEY"));
        assert!(is_boundary(
            "Supplemental Information to be Furnished With Reports Filed Pursuant to Section 15(d) \
             of the Act by Registrants Which Have Not Registered Securities Pursuant to Section 12 \
             of the Act"
        ));
        assert!(!is_boundary(
            "Power of Attorney (included on the signature page)"
        ));
    }

    #[test]
    fn cik_padding() {
        assert_eq!(Cik::Number(320193).padded().as_deref(), Some("0000320193"));
        assert_eq!(
            Cik::Text("0000320193".into()).padded().as_deref(),
            Some("0000320193")
        );
        assert_eq!(Cik::Text("12345678901".into()).padded(), None);
        assert_eq!(Cik::Text("AAPL".into()).padded(), None);
    }
}
