//! The EDGAR source's configuration: which companies, forms, dates and amendments, the SEC's
//! User-Agent and rate, and the URLs it reads; checked before any fetch
//! ([`EdgarSource::validate`]).

use noisebench_core::ConfigError;
use noisebench_web::Url;
use serde::Deserialize;

use crate::reports::annual;
use crate::reports::items::item_key;
use crate::reports::submission::normal_form;

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

    pub(super) fn submissions_url(&self, name: &str) -> String {
        format!("{}/submissions/{name}", self.base_url.trim_end_matches('/'))
    }

    /// Whether a filing's form is taken, and whether it is an amendment of one. A form named
    /// takes itself and, when it names a family of the annual report, the family's other forms:
    /// `10-K` takes `10-K405`, `10-KSB` takes `10-KSB40`, `10-KT` takes `10-KT405`.
    pub(super) fn form_match(&self, form: &str) -> Option<bool> {
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

    pub(super) fn in_dates(&self, date: &str) -> bool {
        self.from.as_deref().is_none_or(|f| date >= f)
            && self.to.as_deref().is_none_or(|t| date <= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
