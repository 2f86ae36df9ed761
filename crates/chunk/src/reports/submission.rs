//! EDGAR submissions in SGML: the full `.txt` submission EDGAR serves for every filing (a
//! `<SEC-DOCUMENT>` with its `<SEC-HEADER>`, or before 1996 an `<IMS-DOCUMENT>` with its
//! `<IMS-HEADER>`, wrapped in a privacy-enhanced-message block), and a lone `<DOCUMENT>` block.
//!
//! What is read: the header's fields (submission type, company, CIK, period of report, filing
//! date, accession number) and each `<DOCUMENT>` (`<TYPE>`, `<SEQUENCE>`, `<FILENAME>`,
//! `<DESCRIPTION>` and the `<TEXT>` it holds, plain text or HTML as filed). What is not: the text
//! itself ([`crate::reports::text_filing`] lays plain text out; HTML goes to [`crate::html`]),
//! uuencoded binaries (kept as a document's text, never read).

use std::collections::BTreeMap;

/// One `<DOCUMENT>` of a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionDocument {
    /// `<TYPE>`: `10-K`, `10-K405`, `EX-13`, ...
    pub kind: String,
    pub sequence: String,
    pub filename: String,
    pub description: String,
    /// What `<TEXT>` holds (the whole block when it has no `<TEXT>`), markup of the text kept.
    pub text: String,
}

impl SubmissionDocument {
    /// Whether the text is HTML (modern submissions wrap each HTML document in `<TEXT>`).
    pub fn is_html(&self) -> bool {
        looks_like_html(&self.text)
    }
}

/// A parsed submission: header fields and documents in filing order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Submission {
    /// The header's fields as named there (`CONFORMED SUBMISSION TYPE`, `COMPANY CONFORMED
    /// NAME`, ...), the first value of each (the filer's, before any subject company's).
    pub header: BTreeMap<String, String>,
    pub documents: Vec<SubmissionDocument>,
}

impl Submission {
    /// The submission type: the header's, else the first document's `<TYPE>`.
    pub fn form(&self) -> String {
        self.header
            .get("CONFORMED SUBMISSION TYPE")
            .cloned()
            .or_else(|| self.documents.first().map(|d| d.kind.clone()))
            .unwrap_or_default()
    }

    /// The first document of a type (`EX-13` also finds `EX-13.1`).
    pub fn document(&self, kind: &str) -> Option<&SubmissionDocument> {
        self.documents.iter().find(|d| {
            d.kind.eq_ignore_ascii_case(kind)
                || d.kind
                    .to_ascii_uppercase()
                    .strip_prefix(&kind.to_ascii_uppercase())
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    }

    /// The report's metadata the header gives: `filing_type`, `company`, `cik` (without its
    /// leading zeros), `period_of_report` and `filing_date` (`YYYY-MM-DD`), `accession_number`.
    pub fn metadata(&self) -> BTreeMap<String, String> {
        let get = |k: &str| self.header.get(k).cloned().unwrap_or_default();
        let mut m = BTreeMap::new();
        m.insert("filing_type".into(), normal_form(&self.form()));
        m.insert("company".into(), get("COMPANY CONFORMED NAME"));
        m.insert(
            "cik".into(),
            get("CENTRAL INDEX KEY").trim_start_matches('0').to_string(),
        );
        m.insert(
            "period_of_report".into(),
            iso_date(&get("CONFORMED PERIOD OF REPORT")),
        );
        m.insert("filing_date".into(), iso_date(&get("FILED AS OF DATE")));
        m.insert("accession_number".into(), get("ACCESSION NUMBER"));
        m.retain(|_, v| !v.is_empty());
        m
    }
}

/// A form as EDGAR's index writes it: `10KSB` in old headers is `10-KSB`.
pub fn normal_form(form: &str) -> String {
    let f = form.trim().to_ascii_uppercase();
    match f.strip_prefix("10K") {
        Some(rest) if !rest.starts_with('-') => format!("10-K{rest}"),
        _ => f,
    }
}

/// `19931231` to `1993-12-31`; anything else unchanged.
fn iso_date(s: &str) -> String {
    let s = s.trim();
    if s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit()) {
        format!("{}-{}-{}", &s[..4], &s[4..6], &s[6..])
    } else {
        s.to_string()
    }
}

/// Whether text reads as HTML: an `<html>`, `<body>` or a run of block tags near its start.
pub(crate) fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(4000)
        .collect::<String>()
        .to_ascii_lowercase();
    head.contains("<html")
        || head.contains("<body")
        || head.contains("<!doctype html")
        || ["<p>", "<p ", "<div", "<br>", "<font", "<td"]
            .iter()
            .map(|t| head.matches(t).count())
            .sum::<usize>()
            >= 3
}

/// Whether text is an SGML submission or document block: it opens (after a privacy-enhanced
/// message block, if any) with `<SEC-DOCUMENT>`, `<IMS-DOCUMENT>`, `<SEC-HEADER>`,
/// `<IMS-HEADER>` or `<DOCUMENT>` followed by `<TYPE>`.
pub fn is_submission(text: &str) -> bool {
    let head: String = text.chars().take(3000).collect();
    let start = head
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !is_pem_line(l));
    let Some(first) = start else { return false };
    let upper = first.to_ascii_uppercase();
    [
        "<SEC-DOCUMENT>",
        "<IMS-DOCUMENT>",
        "<SEC-HEADER>",
        "<IMS-HEADER>",
    ]
    .iter()
    .any(|t| upper.starts_with(t))
        || (upper.starts_with("<DOCUMENT>") && head.to_ascii_uppercase().contains("<TYPE>"))
        || head.starts_with("-----BEGIN PRIVACY-ENHANCED MESSAGE-----")
}

/// A line of the privacy-enhanced-message wrapper: its BEGIN line and the fields and key lines
/// before the first blank line.
fn is_pem_line(line: &str) -> bool {
    line.starts_with("-----BEGIN PRIVACY-ENHANCED MESSAGE")
        || line.starts_with("-----END PRIVACY-ENHANCED MESSAGE")
        || [
            "Proc-Type:",
            "Originator-Name:",
            "Originator-Key-Asymmetric:",
            "MIC-Info:",
        ]
        .iter()
        .any(|p| line.starts_with(p))
}

/// The value of a one-line SGML tag (`<TYPE>10-K`), if the line is that tag.
fn tag_value<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    let t = line.trim_start();
    let open = format!("<{tag}>");
    (t.len() >= open.len() && t[..open.len()].eq_ignore_ascii_case(&open))
        .then(|| t[open.len()..].trim())
}

/// Parse a submission (see `is_submission`); `None` when the text is not one or holds no
/// `<DOCUMENT>`.
pub fn parse_submission(text: &str) -> Option<Submission> {
    if !is_submission(text) {
        return None;
    }
    let mut sub = Submission::default();
    let mut in_header = false;
    let mut doc: Option<(SubmissionDocument, Vec<&str>, bool)> = None;
    for line in text.lines() {
        let upper_start: String = line
            .trim_start()
            .chars()
            .take(12)
            .collect::<String>()
            .to_ascii_uppercase();
        if let Some((d, body, in_text)) = doc.as_mut() {
            if upper_start.starts_with("</DOCUMENT>") {
                let (mut d, body, _) = doc.take().expect("inside a document");
                d.text = body.join("\n");
                sub.documents.push(d);
                continue;
            }
            if *in_text {
                if upper_start.starts_with("</TEXT>") {
                    *in_text = false;
                } else {
                    body.push(line);
                }
                continue;
            }
            if upper_start.starts_with("<TEXT>") {
                *in_text = true;
                body.clear();
                let rest = tag_value(line, "TEXT").unwrap_or("");
                if !rest.is_empty() {
                    body.push(rest);
                }
                continue;
            }
            let field = [
                ("TYPE", &mut d.kind),
                ("SEQUENCE", &mut d.sequence),
                ("FILENAME", &mut d.filename),
                ("DESCRIPTION", &mut d.description),
            ]
            .into_iter()
            .find_map(|(tag, slot)| tag_value(line, tag).map(|v| (slot, v)));
            match field {
                Some((slot, v)) if slot.is_empty() => *slot = v.to_string(),
                Some(_) => {}
                None => body.push(line),
            }
            continue;
        }
        if upper_start.starts_with("<DOCUMENT>") {
            in_header = false;
            doc = Some((
                SubmissionDocument {
                    kind: String::new(),
                    sequence: String::new(),
                    filename: String::new(),
                    description: String::new(),
                    text: String::new(),
                },
                Vec::new(),
                false,
            ));
            continue;
        }
        if upper_start.starts_with("<SEC-HEADER>") || upper_start.starts_with("<IMS-HEADER>") {
            in_header = true;
            continue;
        }
        if upper_start.starts_with("</SEC-HEADER") || upper_start.starts_with("</IMS-HEADER") {
            in_header = false;
            continue;
        }
        if in_header && let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim().to_ascii_uppercase(), v.trim());
            if !v.is_empty() && !k.starts_with('<') {
                sub.header.entry(k).or_insert_with(|| v.to_string());
            }
        }
    }
    // A document cut off before its `</DOCUMENT>` (a truncated download) keeps what it had.
    if let Some((mut d, body, _)) = doc {
        d.text = body.join("\n");
        sub.documents.push(d);
    }
    (!sub.documents.is_empty()).then_some(sub)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUB: &str = "-----BEGIN PRIVACY-ENHANCED MESSAGE-----\nProc-Type: 2001,MIC-CLEAR\n\n\
<SEC-DOCUMENT>0000000001-98-000001.txt : 19980310\n<SEC-HEADER>0000000001-98-000001.hdr.sgml : 19980310\n\
ACCESSION NUMBER:\t\t0000000001-98-000001\nCONFORMED SUBMISSION TYPE:\t10KSB\n\
CONFORMED PERIOD OF REPORT:\t19971231\nFILED AS OF DATE:\t\t19980309\n\nFILER:\n\n\tCOMPANY DATA:\t\n\
\t\tCOMPANY CONFORMED NAME:\t\t\tACME CO\n\t\tCENTRAL INDEX KEY:\t\t\t0000000001\n</SEC-HEADER>\n\
<DOCUMENT>\n<TYPE>10KSB\n<SEQUENCE>1\n<DESCRIPTION>ANNUAL REPORT\n<TEXT>\n<PAGE>\nITEM 1. BUSINESS\n</TEXT>\n</DOCUMENT>\n\
<DOCUMENT>\n<TYPE>EX-13.1\n<SEQUENCE>2\n<TEXT>\n<HTML><BODY><P>Annual report</P></BODY></HTML>\n</TEXT>\n</DOCUMENT>\n\
</SEC-DOCUMENT>\n-----END PRIVACY-ENHANCED MESSAGE-----\n";

    #[test]
    fn header_and_documents() {
        let s = parse_submission(SUB).unwrap();
        let m = s.metadata();
        assert_eq!(m["filing_type"], "10-KSB");
        assert_eq!(m["company"], "ACME CO");
        assert_eq!(m["cik"], "1");
        assert_eq!(m["period_of_report"], "1997-12-31");
        assert_eq!(m["filing_date"], "1998-03-09");
        assert_eq!(s.documents.len(), 2);
        assert_eq!(s.documents[0].kind, "10KSB");
        assert_eq!(s.documents[0].description, "ANNUAL REPORT");
        assert_eq!(s.documents[0].text, "<PAGE>\nITEM 1. BUSINESS");
        assert!(!s.documents[0].is_html());
        assert!(s.document("EX-13").unwrap().is_html());
        assert!(s.document("EX-1").is_none());
    }

    #[test]
    fn not_a_submission() {
        assert!(parse_submission("<html><body><p>10-K</p></body></html>").is_none());
        assert!(parse_submission("Plain text\n<DOCUMENT> later").is_none());
        assert_eq!(normal_form("10-K405"), "10-K405");
        assert_eq!(normal_form("10KSB40"), "10-KSB40");
    }
}
