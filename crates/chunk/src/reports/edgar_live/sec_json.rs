//! The SEC's JSON, parsed: a company's submissions index (`filings.recent` as parallel arrays,
//! older pages listed in `filings.files`) into [`Listed`] filings, and the ticker map
//! (`company_tickers.json`). Pure: text in, values out.

use std::collections::BTreeMap;

use serde_json::Value;

use super::config::Cik;
use crate::reports::annual;
use crate::reports::submission::normal_form;

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
    pub(super) fn base_form(&self) -> String {
        let form = normal_form(&self.form);
        match annual::family(&form) {
            Some(f) => f.to_string(),
            None => form.strip_suffix("/A").unwrap_or(&form).to_string(),
        }
    }

    pub(super) fn is_amendment(&self) -> bool {
        self.form.ends_with("/A")
    }

    /// The period the report is about: the report date, else the filing date.
    pub(super) fn period(&self) -> &str {
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
    pub(super) fn item(&self) -> String {
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
