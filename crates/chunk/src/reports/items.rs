//! The item cutter: a 10-K's items (`Item 7.`, `ITEM 1A -`, ...) cut from its blocks, each under
//! its heading, for EDGAR filings and local files alike. Pure: blocks in, blocks out; the golden
//! cases beside it, real filings in `tests/it/fixtures.rs` and `tests/it/edgar_live.rs`.
//!
//! Every occurrence of an item's heading is a candidate (the table of contents names each item
//! too); running page heads and footers, page numbers and item headings nested in a later item
//! are furniture, not boundaries.

use std::sync::OnceLock;

use noisebench_core::Block;
use regex::Regex;

use crate::html::html_blocks;
use crate::table::{is_zero_width, squash};

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

    /// Item 4 ends where the unnumbered executive-officers section starts, and that section follows
    /// it as a section of its own; item 1 keeps the same heading inside it (Amazon's layout). Item 16
    /// ends likewise at the financial statements and exhibit index printed after it.
    #[test]
    fn items_4_and_16_end_at_the_unnumbered_sections_that_follow_as_their_own() {
        let page = r##"<p>Item 1. Business</p><p>We sell books.</p>
<p>Information About Our Executive Officers</p><p>Ann Lee is our chief executive.</p>
<p>Item 3. Legal Proceedings</p><p>None.</p>
<p>Item 4. Mine Safety Disclosures</p><p>Not applicable.</p><p>31</p>
<p>ITEM X.  INFORMATION ABOUT OUR EXECUTIVE OFFICERS</p><p>Bo Chen, 58, treasurer.</p>
<p>PART II</p><p>Item 5. Market</p><p>Listed on the NYSE.</p>"##;
        let texts = |blocks: &[Block]| -> Vec<String> {
            blocks
                .iter()
                .map(|b| match b {
                    Block::Heading { level, text } => format!("h{level}:{text}"),
                    Block::Paragraph { text, .. } => format!("p:{text}"),
                    Block::Table { .. } => "t".into(),
                })
                .collect()
        };
        let cut = filing_items(page, &["1".into(), "4".into(), "5".into()]);
        assert!(cut.missing.is_empty());
        assert_eq!(
            texts(&cut.blocks),
            vec![
                "h2:Item 1. Business",
                "p:We sell books.",
                "p:Information About Our Executive Officers",
                "p:Ann Lee is our chief executive.",
                "h2:Item 4. Mine Safety Disclosures",
                "p:Not applicable.",
                "h2:ITEM X. INFORMATION ABOUT OUR EXECUTIVE OFFICERS",
                "p:Bo Chen, 58, treasurer.",
                "h2:Item 5. Market",
                "p:Listed on the NYSE.",
            ]
        );
        // Item 16 ends at the financial statements and the exhibit index printed after it, each a
        // section of its own up to the signatures; item 8 keeps its own index.
        let back = filing_items(
            "<p>Item 8. Financial Statements</p><p>Index to Financial Statements</p>\
             <p>See the F-pages.</p><p>Item 16. Form 10-K Summary</p><p>None.</p>\
             <p>INDEX TO FINANCIAL STATEMENTS</p><p>Net income rose.</p>\
             <p>Exhibit Index</p><p>3.1 Bylaws</p><p>SIGNATURES</p><p>Jane Roe</p>",
            &["8".into(), "16".into()],
        );
        assert_eq!(
            texts(&back.blocks),
            vec![
                "h2:Item 8. Financial Statements",
                "p:Index to Financial Statements",
                "p:See the F-pages.",
                "h2:Item 16. Form 10-K Summary",
                "p:None.",
                "h2:INDEX TO FINANCIAL STATEMENTS",
                "p:Net income rose.",
                "h2:Exhibit Index",
                "p:3.1 Bylaws",
            ]
        );
        // An item 4 whose answer is on its heading line still brings the officers along.
        let terse = filing_items(
            "<p>Item 4. Mine Safety Disclosures - None</p>\
             <p>Executive officers of the registrant</p><p>Bo Chen, 58.</p><p>Part II</p>",
            &["4".into()],
        );
        assert!(terse.missing.is_empty());
        assert_eq!(
            texts(&terse.blocks),
            vec![
                "h2:Item 4. Mine Safety Disclosures - None",
                "h2:Executive officers of the registrant",
                "p:Bo Chen, 58.",
            ]
        );
    }
}
