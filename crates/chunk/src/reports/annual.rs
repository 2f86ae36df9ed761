//! Filing documents of the 10-K family, however they come: a full EDGAR submission (SGML header
//! and `<DOCUMENT>` blocks, [`super::submission`]) whose main document is plain text
//! ([`super::text_filing`]) or HTML, a lone `<DOCUMENT>` block, a bare HTML page or a plain-text
//! file. Both the EDGAR source and files read by the `reports` stage come through here, so both
//! cut items with the same cutter ([`super::items::cut_items`]).
//!
//! A document is of the 10-K family when its `<TYPE>` (or the header's submission type) says so,
//! or, without one, when its cover page reads "FORM 10-K" (10-K405, 10-KSB, 10-KT, with `/A` for
//! an amendment) and "ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d)". The form, company, CIK,
//! period and filing date come from the submission header, else from inline XBRL's `dei:` facts,
//! else from the cover page.
//!
//! What it is not: a judge of forms taken (the EDGAR source's `forms` decides), or a reader of the
//! exhibits it keeps apart, exhibit 13 aside: when items point to that annual report to
//! shareholders, [`follow_pointers`] cuts it into their sections ([`super::exhibit13`]).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use noisebench_core::Block;
use regex::Regex;

use super::exhibit13::cut_exhibit;
use super::items::{FilingItems, heading_key, item_key};
use super::submission::{
    Submission, SubmissionDocument, looks_like_html, normal_form, parse_submission,
};
use super::text_filing::{text_exhibit_blocks, text_filing_blocks};
use crate::chunker::block_text;
use crate::html::html_blocks;

/// The family a form belongs to (`10-K405` and `10-K/A` are of `10-K`; `10-KSB40` of `10-KSB`;
/// `10-KT405` of `10-KT`), or `None` outside the annual-report forms.
pub fn family(form: &str) -> Option<&'static str> {
    let f = normal_form(form);
    let base = f.strip_suffix("/A").unwrap_or(&f);
    match base {
        "10-K" | "10-K405" => Some("10-K"),
        "10-KSB" | "10-KSB40" => Some("10-KSB"),
        "10-KT" | "10-KT405" => Some("10-KT"),
        _ => None,
    }
}

/// One filing document read: its main document's blocks, what it says of itself, the other
/// documents of its submission.
#[derive(Debug, Clone, Default)]
pub struct FilingDocument {
    pub blocks: Vec<Block>,
    /// An HTML page's `<title>`.
    pub title: Option<String>,
    /// `filing_type`, `company`, `cik`, `period_of_report`, `filing_date`,
    /// `accession_number`: those the document states.
    pub metadata: BTreeMap<String, String>,
    /// The form (`10-K405`, `10-K/A`) when the document is of the 10-K family.
    pub annual_form: Option<String>,
    /// `text` or `html`: how the main document was read.
    pub layout: &'static str,
    /// The submission's other documents (exhibits: `EX-13` the annual report, ...), unread.
    pub exhibits: Vec<SubmissionDocument>,
}

impl FilingDocument {
    /// The exhibits' types in filing order (`EX-13,EX-21`), for a report's metadata.
    pub fn exhibit_types(&self) -> String {
        self.exhibits
            .iter()
            .map(|d| d.kind.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Read a filing document as served (see the module documentation). `html_hint`: a file named
/// `.htm` whose content does not say.
pub fn read_document(text: &str, html_hint: bool) -> FilingDocument {
    if let Some(sub) = parse_submission(text) {
        return from_submission(sub);
    }
    let html = looks_like_html(text) || html_hint;
    let (blocks, title) = if html {
        let page = html_blocks(text);
        (page.blocks, page.title)
    } else {
        (text_filing_blocks(text), None)
    };
    let mut metadata = if html {
        xbrl_facts(text)
    } else {
        BTreeMap::new()
    };
    let cover = cover_facts(&blocks);
    for (k, v) in cover.metadata {
        metadata.entry(k).or_insert(v);
    }
    let annual_form = metadata
        .get("filing_type")
        .filter(|f| family(f).is_some())
        .cloned()
        .or(cover.form);
    if let Some(f) = &annual_form {
        metadata.insert("filing_type".into(), f.clone());
    }
    FilingDocument {
        blocks,
        title,
        metadata,
        annual_form,
        layout: if html { "html" } else { "text" },
        exhibits: Vec::new(),
    }
}

fn from_submission(sub: Submission) -> FilingDocument {
    let mut metadata = sub.metadata();
    let main_at = sub
        .documents
        .iter()
        .position(|d| family(&d.kind).is_some())
        .unwrap_or(0);
    let mut documents = sub.documents.clone();
    let main = documents.remove(main_at);
    let html = main.is_html();
    let (blocks, title) = if html {
        let page = html_blocks(&main.text);
        (page.blocks, page.title)
    } else {
        (text_filing_blocks(&main.text), None)
    };
    let cover = cover_facts(&blocks);
    let header_form = metadata
        .get("filing_type")
        .cloned()
        .unwrap_or_else(|| normal_form(&main.kind));
    let mut facts = if html {
        xbrl_facts(&main.text)
    } else {
        BTreeMap::new()
    };
    facts.extend(cover.metadata);
    for (k, v) in facts {
        metadata.entry(k).or_insert(v);
    }
    metadata.insert("filing_type".into(), header_form.clone());
    let annual_form = family(&header_form).map(|_| header_form);
    FilingDocument {
        blocks,
        title,
        metadata,
        annual_form,
        layout: if html { "html" } else { "text" },
        exhibits: documents,
    }
}

/// Follow the items that point to the annual report to shareholders: the report's
/// `incorporated_by_reference` metadata names them and, when the submission holds that report
/// (exhibit 13, `EX-13` or `EX-13.1`), it is read (as text or HTML) and cut into the sections the
/// pointers name ([`exhibit13::cut_exhibit`]): each pointer item gets its section after its own
/// text, under a level-3 heading naming the exhibit, and `item_<key>_source` (`item_7_source =
/// "EX-13"`) in the metadata. What no pointer takes follows the items as a level-2 section of its
/// own headed by the exhibit's type and description (the whole exhibit when no section is
/// found); its type is in `annual_report_exhibit`, the count of its blocks no item took in
/// `annual_report_rest_blocks`.
pub fn follow_pointers(
    cut: &mut FilingItems,
    exhibits: &[SubmissionDocument],
    metadata: &mut BTreeMap<String, String>,
) {
    if cut.pointers.is_empty() {
        return;
    }
    metadata.insert("incorporated_by_reference".into(), cut.pointers.join(","));
    let exhibit = exhibits.iter().find(|d| {
        let kind = d.kind.to_ascii_uppercase();
        kind == "EX-13" || kind.starts_with("EX-13.")
    });
    let Some(exhibit) = exhibit else { return };
    let blocks: Vec<Block> = if exhibit.is_html() {
        html_blocks(&exhibit.text).blocks
    } else {
        text_exhibit_blocks(&exhibit.text)
    }
    .into_iter()
    .map(|b| match b {
        // The items' headings are level 2: the exhibit's sit under them.
        Block::Heading { level, text } => Block::Heading {
            level: level.max(3),
            text,
        },
        other => other,
    })
    .collect();
    if blocks.is_empty() {
        return;
    }
    let title = if exhibit.description.eq_ignore_ascii_case(&exhibit.kind) {
        exhibit.kind.clone()
    } else {
        format!("{} {}", exhibit.kind, exhibit.description)
    };
    let title = title.trim().to_string();
    // Each pointer item's key and its own text; where its body ends in the cut blocks.
    let items = item_bodies(&cut.blocks);
    let pointers: Vec<(String, String)> = cut
        .pointers
        .iter()
        .filter_map(|name| item_key(name))
        .filter_map(|key| {
            let (_, range) = items.iter().find(|(k, _)| *k == key)?;
            let text = cut.blocks[range.clone()]
                .iter()
                .map(block_text)
                .collect::<Vec<_>>()
                .join(" ");
            Some((key, text))
        })
        .collect();
    let sections = cut_exhibit(&blocks, &pointers);
    // Insert each item's sections after its body, the last item first so ranges hold.
    let mut placed: Vec<(usize, Vec<Block>)> = Vec::new();
    for (key, ranges) in &sections.sections {
        let Some((_, range)) = items.iter().find(|(k, _)| k == key) else {
            continue;
        };
        let mut add = vec![Block::Heading {
            level: 3,
            text: title.clone(),
        }];
        for r in ranges {
            add.extend(blocks[r.clone()].iter().cloned());
        }
        metadata.insert(
            format!("item_{}_source", key.to_ascii_lowercase()),
            exhibit.kind.clone(),
        );
        placed.push((range.end, add));
    }
    placed.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    for (at, add) in placed {
        cut.blocks.splice(at..at, add);
    }
    if !sections.rest.is_empty() {
        cut.blocks.push(Block::Heading {
            level: 2,
            text: title,
        });
        cut.blocks
            .extend(sections.rest.iter().map(|&i| blocks[i].clone()));
    }
    metadata.insert("annual_report_exhibit".into(), exhibit.kind.clone());
    metadata.insert(
        "annual_report_rest_blocks".into(),
        sections.rest.len().to_string(),
    );
}

/// The items cut: each level-2 item heading's key and the range of its body (the blocks to the
/// next level-2 heading).
fn item_bodies(blocks: &[Block]) -> Vec<(String, std::ops::Range<usize>)> {
    let heads: Vec<(usize, Option<String>)> = blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match b {
            Block::Heading { level: 2, text } => Some((i, heading_key(text))),
            _ => None,
        })
        .collect();
    heads
        .iter()
        .enumerate()
        .filter_map(|(n, (i, key))| {
            let end = heads.get(n + 1).map_or(blocks.len(), |(j, _)| *j);
            key.clone().map(|k| (k, i + 1..end))
        })
        .collect()
}

/// What a cover page says: the form, when it is an annual report of the 10-K family, and the
/// company and period.
struct Cover {
    form: Option<String>,
    metadata: BTreeMap<String, String>,
}

/// The cover page's facts, read from the first blocks of a document.
fn cover_facts(blocks: &[Block]) -> Cover {
    static RES: OnceLock<[Regex; 5]> = OnceLock::new();
    // Invariant: constant patterns.
    let [form_re, annual_re, amend_re, period_re, name_re] = RES.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("constant pattern");
        [
            re(r"(?i)\bFORM\s+(10-?K(?:405|SB40|SB|T405|T)?)\s*(/\s*A\b)?"),
            re(r"(?i)ANNUAL\s+REPORT\s+PURSUANT\s+TO\s+SECTIONS?\s+13\s+OR\s+15\s*\(\s*d\s*\)"),
            re(r"(?i)\(?\bAmendment\s+No\.?\s*\d+\)?"),
            re(
                r"(?i)for\s+the\s+(?:fiscal\s+)?year\s+ended:?\s*([A-Z][a-z]+\.?)\s+(\d{1,2})\s*,?\s*(\d{4})",
            ),
            re(r"(?i)\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant"),
        ]
    });
    let texts: Vec<String> = blocks.iter().take(80).map(block_text).collect();
    let cover: String = texts.join("\n");
    let mut metadata = BTreeMap::new();
    let form = match (form_re.captures(&cover), annual_re.is_match(&cover)) {
        (Some(c), true) => {
            let amended = c.get(2).is_some()
                || amend_re
                    .find(&cover)
                    .is_some_and(|m| m.start().abs_diff(c.get(0).map_or(0, |m| m.start())) < 400);
            let base = normal_form(&c[1].replace(' ', ""));
            Some(if amended { format!("{base}/A") } else { base })
        }
        _ => None,
    };
    if let Some(c) = period_re.captures(&cover)
        && let Some(month) = month_number(&c[1])
    {
        let day: u32 = c[2].parse().unwrap_or(0);
        if (1..=31).contains(&day) {
            metadata.insert(
                "period_of_report".into(),
                format!("{}-{month:02}-{day:02}", &c[3]),
            );
        }
    }
    for (i, t) in texts.iter().enumerate() {
        let Some(m) = name_re.find(t) else { continue };
        let before = t[..m.start()].trim();
        let name = if before.is_empty() {
            i.checked_sub(1).map(|j| texts[j].trim()).unwrap_or("")
        } else {
            // The last line before the label, in a paragraph that joined several.
            before
        };
        let name = name.trim_end_matches(['|', ' ']).trim();
        if !name.is_empty() && name.len() <= 120 {
            metadata.insert("company".into(), squash(name));
        }
        break;
    }
    Cover { form, metadata }
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn month_number(name: &str) -> Option<u32> {
    let n = name.trim_end_matches('.').to_ascii_lowercase();
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let key = n.get(..3)?;
    MONTHS.iter().position(|m| *m == key).map(|i| i as u32 + 1)
}

/// Inline XBRL's cover facts (`dei:DocumentType`, `dei:EntityRegistrantName`,
/// `dei:EntityCentralIndexKey`, `dei:DocumentPeriodEndDate`, `dei:AmendmentFlag`) as metadata.
fn xbrl_facts(html: &str) -> BTreeMap<String, String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    static TAG: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant patterns.
    let re = RE.get_or_init(|| {
        Regex::new(r#"(?is)<ix:nonNumeric[^>]*\bname\s*=\s*"dei:(DocumentType|EntityRegistrantName|EntityCentralIndexKey|DocumentPeriodEndDate|AmendmentFlag)"[^>]*>"#)
            .expect("constant pattern")
    });
    let tag = TAG.get_or_init(|| Regex::new(r"<[^>]*>").expect("constant pattern"));
    let mut facts: BTreeMap<&str, String> = BTreeMap::new();
    for c in re.captures_iter(html) {
        let (Some(open), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        // The fact's content to its own closing tag: facts nest (a period end date holds the
        // fiscal year's end day).
        let rest = &html[open.end()..];
        let lower = rest
            .get(..rest.len().min(20_000))
            .unwrap_or(rest)
            .to_ascii_lowercase();
        let (mut depth, mut at, mut end) = (1usize, 0usize, None);
        while let Some(i) = lower[at..].find("ix:nonnumeric") {
            let pos = at + i;
            at = pos + 1;
            match pos.checked_sub(1).map(|b| lower.as_bytes()[b]) {
                Some(b'<') => depth += 1,
                Some(b'/') => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(pos.saturating_sub(2));
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        let Some(inner) = rest.get(..end) else {
            continue;
        };
        let text = squash(&decode_entities(&tag.replace_all(inner, " ")));
        if !text.is_empty() {
            facts.entry(name.as_str()).or_insert(text);
        }
    }
    let mut m = BTreeMap::new();
    if let Some(t) = facts.get("DocumentType") {
        let amended = facts
            .get("AmendmentFlag")
            .is_some_and(|a| a.eq_ignore_ascii_case("true"));
        let form = normal_form(t);
        let form = if amended && !form.ends_with("/A") {
            format!("{form}/A")
        } else {
            form
        };
        m.insert("filing_type".to_string(), form);
    }
    if let Some(t) = facts.get("EntityRegistrantName") {
        m.insert("company".into(), t.clone());
    }
    if let Some(t) = facts.get("EntityCentralIndexKey") {
        m.insert("cik".into(), t.trim_start_matches('0').to_string());
    }
    if let Some(t) = facts.get("DocumentPeriodEndDate") {
        let d = iso_from_words(t).unwrap_or_else(|| t.clone());
        m.insert("period_of_report".into(), d);
    }
    m
}

/// `September 28, 2024` to `2024-09-28`.
fn iso_from_words(text: &str) -> Option<String> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let [month, day, year] = words.as_slice() else {
        return None;
    };
    let month = month_number(month)?;
    let day: u32 = day.parse().ok()?;
    (year.len() == 4 && year.chars().all(|c| c.is_ascii_digit()))
        .then(|| format!("{year}-{month:02}-{day:02}"))
}

fn decode_entities(s: &str) -> String {
    s.replace("&amp;", "&")
        .replace("&#160;", " ")
        .replace("&nbsp;", " ")
        .replace("&#8217;", "’")
        .replace("&#39;", "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert_eq!(family("10-K405"), Some("10-K"));
        assert_eq!(family("10-K/A"), Some("10-K"));
        assert_eq!(family("10KSB"), Some("10-KSB"));
        assert_eq!(family("10-KT405/A"), Some("10-KT"));
        assert_eq!(family("10-Q"), None);
        assert_eq!(family("10-K12B"), None);
    }

    #[test]
    fn a_cover_page_says_form_company_and_period() {
        let text = "                 FORM 10-K/A\n\n(Amendment No. 1)\n\n[X] ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF\n    THE SECURITIES EXCHANGE ACT OF 1934\n\n    For the fiscal year ended December 29, 2001\n\n                TEXTRON INC.\n     (Exact name of registrant as specified in charter)\n\nPART I\n";
        let d = read_document(text, false);
        assert_eq!(d.annual_form.as_deref(), Some("10-K/A"));
        assert_eq!(d.metadata["filing_type"], "10-K/A");
        assert_eq!(d.metadata["company"], "TEXTRON INC.");
        assert_eq!(d.metadata["period_of_report"], "2001-12-29");
        assert_eq!(d.layout, "text");
        let news = read_document("The company filed its Form 10-K today.\n", false);
        assert_eq!(news.annual_form, None);
    }

    #[test]
    fn inline_xbrl_facts() {
        let html = r#"<html><body><ix:nonNumeric name="dei:DocumentType" contextRef="c">10-K</ix:nonNumeric>
<ix:nonNumeric name="dei:EntityRegistrantName" contextRef="c"><span>Apple Inc.</span></ix:nonNumeric>
<ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="c">0000320193</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentPeriodEndDate" contextRef="c"><ix:nonNumeric name="dei:CurrentFiscalYearEndDate">September&#160;28</ix:nonNumeric>, 2024</ix:nonNumeric>
<p>x</p></body></html>"#;
        let d = read_document(html, true);
        assert_eq!(d.annual_form.as_deref(), Some("10-K"));
        assert_eq!(d.metadata["company"], "Apple Inc.");
        assert_eq!(d.metadata["cik"], "320193");
        assert_eq!(d.metadata["period_of_report"], "2024-09-28");
    }

    /// An HTML exhibit 13 (a 2000s submission): its headings are cut as a text one's, sit under
    /// the item's level-2 heading at level 3, and the part no pointer takes follows the items.
    #[test]
    fn an_html_exhibit_13_is_cut_under_the_items() {
        let sub = "<SEC-DOCUMENT>0000000001-05-000001.txt\n<SEC-HEADER>\nCONFORMED SUBMISSION TYPE:\t10-K\n</SEC-HEADER>\n<DOCUMENT>\n<TYPE>10-K\n<TEXT>\nITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS\n\nThe information on pages 10 through 20 of the Annual Report to Shareholders is incorporated herein by reference.\n\nITEM 8. FINANCIAL STATEMENTS\n\nThe statements on pages 21 through 40 of the Annual Report to Shareholders are incorporated herein by reference.\n\nITEM 9. CHANGES IN ACCOUNTANTS\n\nNone.\n</TEXT>\n</DOCUMENT>\n<DOCUMENT>\n<TYPE>EX-13\n<DESCRIPTION>ANNUAL REPORT\n<TEXT>\n<html><body><h1>Letter to Shareholders</h1><p>A good year.</p><h2>Management&#8217;s Discussion and Analysis</h2><p>Sales rose 4 percent.</p><h3>Liquidity</h3><p>Cash grew.</p><h2>Consolidated Statements of Income</h2><table><tr><td>Sales</td><td>10</td></tr></table><h2>Report of Independent Auditors</h2><p>In our opinion, fine.</p></body></html>\n</TEXT>\n</DOCUMENT>\n</SEC-DOCUMENT>\n";
        let doc = read_document(sub, false);
        assert_eq!(doc.exhibit_types(), "EX-13");
        let items = ["7".to_string(), "8".to_string(), "9".to_string()];
        let mut cut = super::super::items::cut_items(doc.blocks, &items);
        let mut metadata = BTreeMap::new();
        follow_pointers(&mut cut, &doc.exhibits, &mut metadata);
        assert_eq!(metadata["incorporated_by_reference"], "7,8");
        assert_eq!(metadata["item_7_source"], "EX-13");
        assert_eq!(metadata["item_8_source"], "EX-13");
        let texts: Vec<String> = cut
            .blocks
            .iter()
            .map(|b| match b {
                Block::Heading { level, text } => format!("h{level}:{text}"),
                other => block_text(other),
            })
            .collect();
        let at = |t: &str| {
            texts
                .iter()
                .position(|x| x.starts_with(t))
                .unwrap_or_else(|| panic!("{t} not in {texts:?}"))
        };
        assert!(at("h2:ITEM 7") < at("h3:EX-13 ANNUAL REPORT"));
        assert!(at("h3:Management") < at("Sales rose") && at("Cash grew.") < at("h2:ITEM 8"));
        assert!(at("h2:ITEM 8") < at("h3:Consolidated") && at("In our opinion") < at("h2:ITEM 9"));
        // The letter no item points to follows the items.
        assert!(at("h2:EX-13 ANNUAL REPORT") > at("h2:ITEM 9"));
        assert!(at("A good year.") > at("h2:EX-13 ANNUAL REPORT"));
        assert_eq!(metadata["annual_report_rest_blocks"], "2");
        assert!(cut.blocks.iter().all(|b| !matches!(b,
            Block::Heading { level, text } if *level < 2 || (*level == 2 && text.starts_with("Management")))));
    }
}
