//! A plain-text EDGAR document (what a submission's `<TEXT>` holds for every filing before about
//! 2001 and many after) to blocks: SGML markup gone (`<PAGE>`, `<R>`, `<F1>`, privacy-enhanced
//! message lines, the PEM dash escapes `- ---`), page furniture dropped (the page number at the
//! foot or head of each page, in any form: `5`, `(20)`, `- 29 -`, `F-1`, `ii`; a line that heads
//! or foots most pages), a paragraph a page break cut joined again, and each `<TABLE>` laid out
//! as a table whose columns the `<S>`/`<C>` marker line gives.
//!
//! What it is not: a reader of the submission around the text ([`super::submission`]), or of
//! HTML inside `<TEXT>` (that goes to [`crate::html`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use noisebench_core::Block;
use regex::Regex;

use super::items::heading_key;
use crate::table::{dense_grid, pipe_table};
use crate::text_layout::{Layout, text_blocks};

/// Blocks of a plain-text filing document.
pub fn text_filing_blocks(text: &str) -> Vec<Block> {
    blocks_of(text, false)
}

/// Blocks of a plain-text exhibit such as the annual report to shareholders (exhibit 13): as
/// [`text_filing_blocks`], and a short all-capital line the text follows without a blank line
/// ("FINANCIAL RISK MANAGEMENT" / "Our Company uses ...") is a paragraph of its own, so that
/// section headings can be found ([`super::exhibit13`]); a table's title printed above its
/// `<CAPTION>` ("CONSOLIDATED BALANCE SHEETS") is its caption, not a header row.
pub fn text_exhibit_blocks(text: &str) -> Vec<Block> {
    blocks_of(text, true)
}

fn blocks_of(text: &str, exhibit: bool) -> Vec<Block> {
    let lines: Vec<String> = clean_lines(text);
    let pages = split_pages(&lines);
    let joined = join_pages(drop_furniture(pages, exhibit), exhibit);
    let mut blocks = Vec::new();
    let mut prose: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < joined.len() {
        if is_tag(&joined[i], "TABLE") {
            let end = (i + 1..joined.len())
                .find(|&j| is_tag(&joined[j], "/TABLE"))
                .unwrap_or(joined.len());
            flush_prose(&mut prose, &mut blocks, exhibit);
            if let Some(t) = sgml_table(&joined[i + 1..end], exhibit) {
                blocks.push(t);
            }
            i = end + 1;
            continue;
        }
        prose.push(&joined[i]);
        i += 1;
    }
    flush_prose(&mut prose, &mut blocks, exhibit);
    blocks
}

fn flush_prose(prose: &mut Vec<&str>, blocks: &mut Vec<Block>, caps_headings: bool) {
    if prose.is_empty() {
        return;
    }
    let lines: Vec<String> = prose
        .iter()
        .map(|l| strip_tags(l))
        .filter(|l| !is_rule(l))
        .collect();
    let text = with_heading_breaks(&lines, caps_headings).join("\n");
    prose.clear();
    let (b, _) = text_blocks(&text, Layout::BlankLineSeparated);
    blocks.extend(b.into_iter().filter(|b| !is_bare_furniture(b)).map(tidy));
}

/// Lines with a paragraph break before each item heading and `PART` line, and after a `PART`
/// line or an all-capital item heading the text under it follows without a blank line ("PART I"
/// / "ITEM 1. BUSINESS." / "Merck & Co., Inc. is ..."); with `caps_headings`, after any short
/// all-capital line too.
fn with_heading_breaks(lines: &[String], caps_headings: bool) -> Vec<String> {
    static PART: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let part =
        PART.get_or_init(|| Regex::new(r"^(?i:part)\s+(I{1,3}|IV)\.?$").expect("constant pattern"));
    let caps = |l: &str| {
        let letters: Vec<char> = l.chars().filter(|c| c.is_alphabetic()).collect();
        letters.len() >= 3 && letters.iter().all(|c| c.is_uppercase())
    };
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut after_heading = false;
    for line in lines {
        let t = line.trim();
        let is_part = part.is_match(t);
        let is_item = !is_part && heading_key(t).is_some();
        let blank_before = out.last().is_some_and(|l| !l.trim().is_empty())
            && (is_part || is_item || (after_heading && !t.is_empty() && !caps(t)));
        if blank_before {
            out.push(String::new());
        }
        let caps_heading = caps_headings
            && caps(t)
            && t.split_whitespace().count() <= 10
            && !t.ends_with(['.', ',', ';', ':']);
        after_heading =
            (is_part || (is_item && caps(t))) || (after_heading && caps(t)) || caps_heading;
        out.push(line.clone());
    }
    out
}

/// Whitespace squashed, a word a line break hyphenated joined (`defense- related`), and every
/// heading a sub-heading (level 3): the item cutter gives items their level-2 headings.
fn tidy(block: Block) -> Block {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| Regex::new(r"([a-z])- ([a-z])").expect("constant pattern"));
    let clean = |t: &str| {
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
        re.replace_all(&t, "$1-$2").into_owned()
    };
    match block {
        Block::Heading { text, .. } => Block::Heading {
            level: 3,
            text: clean(&text),
        },
        Block::Paragraph { text, page } => Block::Paragraph {
            text: clean(&text),
            page,
        },
        table => table,
    }
}

/// A paragraph that is only a page number or a rule left over mid-page.
fn is_bare_furniture(block: &Block) -> bool {
    match block {
        Block::Paragraph { text, .. } | Block::Heading { text, .. } => {
            is_page_number(text) || is_rule(text)
        }
        Block::Table { .. } => false,
    }
}

/// Whether a line is the one-line SGML tag `<NAME>` (any case, text after it allowed).
fn is_tag(line: &str, name: &str) -> bool {
    let t = line.trim_start();
    let open = format!("<{name}>");
    t.len() >= open.len() && t[..open.len()].eq_ignore_ascii_case(&open)
}

/// Lines with the privacy-enhanced-message wrapper and PEM dash escapes undone, tabs expanded.
fn clean_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_pem = false;
    for line in text.lines() {
        if line.starts_with("-----BEGIN PRIVACY-ENHANCED MESSAGE") {
            in_pem = true;
            continue;
        }
        if in_pem {
            in_pem = !line.trim().is_empty();
            continue;
        }
        if line.starts_with("-----END PRIVACY-ENHANCED MESSAGE") {
            continue;
        }
        let line = line
            .strip_prefix("- -")
            .map_or(line.to_string(), |r| format!("-{r}"));
        out.push(expand_tabs(line.trim_end()));
    }
    out
}

fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_string();
    }
    let mut out = String::new();
    for c in line.chars() {
        if c == '\t' {
            let n = 8 - out.chars().count() % 8;
            out.extend(std::iter::repeat_n(' ', n));
        } else {
            out.push(c);
        }
    }
    out
}

/// Pages at each `<PAGE>` line (the line itself dropped).
fn split_pages(lines: &[String]) -> Vec<Vec<String>> {
    let mut pages = vec![Vec::new()];
    for line in lines {
        if is_tag(line, "PAGE") {
            pages.push(Vec::new());
        } else if let Some(p) = pages.last_mut() {
            p.push(line.clone());
        }
    }
    pages.retain(|p| p.iter().any(|l| !l.trim().is_empty()));
    pages
}

/// A page number as printed at a page's foot or head: `5`, `(20)`, `- 29 -`, `F-1`, `S-1`,
/// `II-4`, `ii`, `Page 7`.
pub(crate) fn is_page_number(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| {
        Regex::new(
            r"^(?:(?i:page)\s+)?[-–—(\[]?\s*(?:[A-Z]{1,3}\s?[-–]\s?)?(?:\d{1,4}|[ivxlc]{1,7}|[IVXLC]{1,7})\s*[-–—)\]]?$",
        )
        .expect("constant pattern")
    });
    let t = text.trim();
    !t.is_empty() && t.len() <= 16 && re.is_match(t)
}

/// A rule line: dashes, equals signs or underscores only.
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3 && t.chars().all(|c| matches!(c, '-' | '=' | '_' | ' '))
}

/// Each page without its page number and the lines that head or foot most pages; with
/// `exhibit`, a running head stays where it changes (an annual report's section title atop each
/// of its pages heads the section once).
fn drop_furniture(mut pages: Vec<Vec<String>>, exhibit: bool) -> Vec<Vec<String>> {
    let squash = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = |p: &Vec<String>| p.iter().position(|l| !l.trim().is_empty());
    let last = |p: &Vec<String>| p.iter().rposition(|l| !l.trim().is_empty());
    for page in &mut pages {
        for _ in 0..2 {
            if let Some(i) = last(page)
                && is_page_number(&page[i])
            {
                page.truncate(i);
            }
        }
        if let Some(i) = first(page)
            && is_page_number(&page[i])
        {
            page.remove(i);
        }
    }
    // Running heads and feet: a short line at the same end of at least three pages and a fifth.
    let mut counts: HashMap<(bool, String), usize> = HashMap::new();
    for page in &pages {
        for (top, at) in [(true, first(page)), (false, last(page))] {
            if let Some(i) = at {
                let s = squash(&page[i]);
                if s.len() <= 80 && !is_tag(&s, "TABLE") && !is_tag(&s, "/TABLE") {
                    *counts.entry((top, s)).or_default() += 1;
                }
            }
        }
    }
    let total = pages.len();
    let running = |top: bool, s: &str| {
        counts
            .get(&(top, s.to_string()))
            .is_some_and(|&n| n >= 3 && n * 5 >= total)
    };
    let tops: Vec<Option<String>> = pages
        .iter()
        .map(|p| first(p).map(|i| squash(&p[i])))
        .collect();
    for (n, page) in pages.iter_mut().enumerate() {
        let repeated = n > 0 && tops[n - 1] == tops[n];
        if let Some(i) = first(page)
            && running(true, &squash(&page[i]))
            && (!exhibit || repeated)
        {
            page.remove(i);
        }
        if let Some(i) = last(page)
            && running(false, &squash(&page[i]))
        {
            page.truncate(i);
        }
    }
    pages
}

/// The pages as one run of lines: a blank line between two pages, none when the last line of a
/// page ends mid-sentence and the next page goes on in lower case (with `exhibit`, not when that
/// line stands alone: a lower-case title such as "report of independent accountants").
fn join_pages(pages: Vec<Vec<String>>, exhibit: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for page in pages {
        let body: Vec<String> = {
            let start = page.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
            page[start..].to_vec()
        };
        while out.last().is_some_and(|l| l.trim().is_empty()) {
            out.pop();
        }
        let goes_on = out.last().is_some_and(|l| {
            let t = l.trim_end();
            !t.ends_with(['.', ':', ';', '?', '!', '"']) && !is_tag(t, "/TABLE")
        }) && body
            .first()
            .and_then(|l| l.trim_start().chars().next())
            .is_some_and(char::is_lowercase)
            && (!exhibit || body.get(1).is_some_and(|l| !l.trim().is_empty()));
        if !out.is_empty() && !goes_on {
            out.push(String::new());
        }
        out.extend(body);
    }
    out
}

/// Inline SGML tags of plain-text filings (`<R>`, `</R>`, `<F1>`, `<CAPTION>`, `<S>`, `<C>`,
/// `<FN>`) removed from a line.
fn strip_tags(line: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Invariant: constant pattern.
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)</?(?:R|F\d{1,2}|CAPTION|S|C|FN|PAGE|TEXT|PRE|DOCUMENT|TABLE)>")
            .expect("constant pattern")
    });
    if line.contains('<') {
        re.replace_all(line, "").trim_end().to_string()
    } else {
        line.to_string()
    }
}

/// A field of a table line: its text and the character columns it spans.
struct Field {
    text: String,
    start: usize,
    end: usize,
}

/// Text runs of a line separated by two spaces or more; a lone `$` or `(` joins the run after
/// it, a lone `)` or `%` the run before.
fn fields(line: &str) -> Vec<Field> {
    let chars: Vec<char> = line.chars().collect();
    let mut out: Vec<Field> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ' ' {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !(chars[i] == ' ' && chars.get(i + 1).is_none_or(|c| *c == ' ')) {
            i += 1;
        }
        let text: String = chars[start..i].iter().collect();
        let glue_after = out.last().is_some_and(|f| f.text == "$" || f.text == "(");
        let glue_before = text == ")" || text == "%";
        match out.last_mut() {
            Some(prev) if glue_after || glue_before => {
                prev.text.push_str(&text);
                prev.end = i;
            }
            _ => out.push(Field {
                text,
                start,
                end: i,
            }),
        }
    }
    out
}

/// The columns of a marker line (`<S>` and each `<C>`): their start positions, or `None` when the
/// line is not one.
fn markers(line: &str) -> Option<Vec<usize>> {
    let upper = line.to_ascii_uppercase();
    let rest = upper.replace("<S>", "").replace("<C>", "");
    if !rest.trim().is_empty() || !upper.contains("<C>") && !upper.contains("<S>") {
        return None;
    }
    let mut starts: Vec<usize> = Vec::new();
    let chars: Vec<char> = upper.chars().collect();
    for i in 0..chars.len().saturating_sub(2) {
        if chars[i] == '<' && (chars[i + 1] == 'S' || chars[i + 1] == 'C') && chars[i + 2] == '>' {
            starts.push(i);
        }
    }
    if !upper.contains("<S>") {
        starts.insert(0, 0);
    }
    starts[0] = 0;
    Some(starts)
}

/// Each field of a line with its column: the one whose span (`bounds`) it overlaps most (the
/// nearest when none), never left of the field before it, the last when it runs past it.
fn assign(line: &str, bounds: &[(usize, usize)]) -> Vec<(usize, Field)> {
    let n = bounds.len();
    let mut out: Vec<(usize, Field)> = Vec::new();
    // Rules under header words (`---------`) are not cells.
    let cells = fields(line)
        .into_iter()
        .filter(|f| !(f.text.len() >= 3 && is_rule(&f.text)));
    for f in cells {
        let overlap = |j: usize| {
            let (a, b) = bounds[j];
            f.end.min(b).saturating_sub(f.start.max(a))
        };
        let mut best = (0..n)
            .max_by_key(|&j| (overlap(j), usize::MAX - j))
            .unwrap_or(0);
        if overlap(best) == 0 {
            let centre = (f.start + f.end) / 2;
            best = (0..n)
                .min_by_key(|&j| {
                    bounds[j]
                        .0
                        .abs_diff(centre)
                        .min(bounds[j].1.abs_diff(centre))
                })
                .unwrap_or(0);
        }
        let col = match out.last() {
            Some((p, _)) if best <= *p => (p + 1).min(n - 1),
            _ => best,
        };
        out.push((col, f));
    }
    out
}

/// A row of cells from assigned fields; leader dots (`Trade accounts receivable......`) are not
/// the label's.
fn row_of(assigned: Vec<(usize, Field)>, n: usize) -> Vec<String> {
    let mut row = vec![String::new(); n];
    for (col, f) in assigned {
        let cell = &mut row[col];
        if !cell.is_empty() {
            cell.push(' ');
        }
        let text = if f.text.ends_with("..") {
            f.text.trim_end_matches(['.', ' '])
        } else {
            f.text.as_str()
        };
        cell.push_str(text);
    }
    row
}

/// A `<TABLE>` block's lines (between `<TABLE>` and `</TABLE>`) as a table: the lines before the
/// marker line are the header (joined per column), the lines after it the rows, `<FN>` and what
/// follows the footnotes. Without a marker line the columns come from the first data line.
fn sgml_table(lines: &[String], titled: bool) -> Option<Block> {
    let marker = lines.iter().position(|l| markers(l).is_some());
    // With `titled`, the lines above `<CAPTION>` are the table's title.
    let caption_at = lines
        .iter()
        .position(|l| is_tag(l, "CAPTION"))
        .filter(|&c| titled && marker.is_some_and(|m| c < m));
    let title = caption_at.map(|c| {
        lines[..c]
            .iter()
            .filter(|l| !is_rule(l))
            .flat_map(|l| {
                strip_tags(l)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
            .join(" ")
    });
    let head_from = caption_at.map_or(0, |c| c + 1);
    let fn_at = lines
        .iter()
        .position(|l| is_tag(l, "FN"))
        .unwrap_or(lines.len());
    let (head, body, starts) = match marker {
        Some(m) if m < fn_at => (
            &lines[head_from..m],
            &lines[m + 1..fn_at],
            markers(&lines[m]).unwrap_or_default(),
        ),
        _ => {
            let widest = lines[..fn_at]
                .iter()
                .filter(|l| !is_rule(l) && !l.trim().is_empty())
                .max_by_key(|l| fields(l).len())?;
            let starts: Vec<usize> = fields(widest).iter().map(|f| f.start).collect();
            (&lines[..0], &lines[..fn_at], starts)
        }
    };
    let keep = |l: &&String| !l.trim().is_empty() && !is_rule(l) && !is_tag(l, "CAPTION");
    let n = starts.len();
    // Rows by the marker line's columns; the header by where the rows' cells fell (header words
    // are centred over their column, not at its marker).
    let marked: Vec<(usize, usize)> = (0..n)
        .map(|j| (starts[j], starts.get(j + 1).copied().unwrap_or(usize::MAX)))
        .collect();
    let rows: Vec<Vec<(usize, Field)>> = body
        .iter()
        .filter(keep)
        .map(|l| assign(&strip_tags(l), &marked))
        .collect();
    let mut seen: Vec<Option<(usize, usize)>> = vec![None; n];
    for (c, f) in rows.iter().flatten() {
        let span = seen[*c].get_or_insert((f.start, f.end));
        *span = (span.0.min(f.start), span.1.max(f.end));
    }
    let spans: Vec<(usize, usize)> = (0..n).map(|j| seen[j].unwrap_or(marked[j])).collect();
    let mut header = vec![String::new(); n];
    for line in head.iter().filter(keep) {
        for (c, text) in row_of(assign(&strip_tags(line), &spans), n)
            .into_iter()
            .enumerate()
        {
            if !text.is_empty() {
                if !header[c].is_empty() {
                    header[c].push(' ');
                }
                header[c].push_str(&text);
            }
        }
    }
    let mut grid = vec![header];
    grid.extend(rows.into_iter().map(|r| row_of(r, n)));
    let footnotes: Vec<String> = lines
        .get(fn_at + 1..)
        .unwrap_or(&[])
        .split(|l| l.trim().is_empty())
        .map(|p| {
            p.iter()
                .map(|l| strip_tags(l).trim().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|p| !p.trim().is_empty())
        .collect();
    // Without header lines the empty header row goes and the first row leads.
    let grid = dense_grid(grid);
    if grid.is_empty() || grid.iter().all(|r| r.iter().all(String::is_empty)) {
        return None;
    }
    Some(Block::Table {
        markdown: pipe_table(&grid),
        caption: title.filter(|t| !t.is_empty()),
        footnotes,
        page: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers() {
        for p in [
            "5", "(20)", "- 29 -", "F-1", "F-47", "S-1", "II-4", "ii", "Page 7", "-3-",
        ] {
            assert!(is_page_number(p), "{p}");
        }
        assert!(!is_page_number("Item 7"));
        assert!(!is_page_number("Not applicable."));
        assert!(!is_page_number("PART II"));
    }

    #[test]
    fn a_table_by_its_markers() {
        let text = [
            "Trading follows:",
            "",
            "<TABLE>",
            "<CAPTION>",
            "- ------------------------------------------------------------------------",
            "                                   Common stock market price",
            "                                   -------------------------   Dividends",
            "(In dollars)                          High            Low       declared",
            "- ------------------------------------------------------------------------",
            "<S>                                    <C>            <C>           <C>",
            "1993",
            "      Fourth quarter              $107            $92 3/4           $.72",
            "      Third quarter                100 7/8         94 1/2            .63",
            "</TABLE>",
            "",
            "As of December 31, 1993, there were about 457,000 accounts.",
        ]
        .join("\n");
        let text = text.as_str();
        let blocks = text_filing_blocks(text);
        let Block::Table { markdown, .. } = &blocks[1] else {
            panic!("{blocks:?}")
        };
        let rows: Vec<&str> = markdown.lines().collect();
        assert_eq!(rows.len(), 5, "{markdown}");
        assert!(
            rows[0].contains("High") && rows[0].contains("Dividends declared"),
            "{markdown}"
        );
        assert_eq!(rows[3], "| Fourth quarter | $107 | $92 3/4 | $.72 |");
        assert_eq!(rows[4], "| Third quarter | 100 7/8 | 94 1/2 | .63 |");
    }

    #[test]
    fn pages_lose_their_numbers_and_join_cut_paragraphs() {
        let text = "The contract may be ended in the event\nof default which\n\n                 3\n<PAGE>\n<PAGE>\n\nmay vary from contract to contract.\n\n   - 4 -\n<PAGE>\nNext paragraph.\n";
        let blocks = text_filing_blocks(text);
        let texts: Vec<String> = blocks.iter().map(crate::block_text).collect();
        assert_eq!(
            texts,
            [
                "The contract may be ended in the event of default which may vary from contract to contract.",
                "Next paragraph."
            ]
        );
    }

    /// An annual report read as an exhibit: a section title atop each of its pages heads it once,
    /// a lower-case title after a page break is not glued to the page before, a capital title
    /// the text follows without a blank line stands alone, a table's title is its caption. The
    /// same text read as a filing document loses the running title and glues the lower-case one.
    #[test]
    fn an_exhibit_keeps_its_section_titles() {
        let page = |head: &str, body: &str, n: usize| {
            format!("{head}\n\nInternational Widgets Inc.\n\n{body}\n\n{n:>40}\n<PAGE>\n")
        };
        let mut text = String::new();
        text.push_str(&page("management discussion", "Sales rose.", 1));
        text.push_str(&page("management discussion", "Costs fell.", 2));
        text.push_str(&page(
            "management discussion",
            "FINANCIAL RISK MANAGEMENT\nWe hedge rates.\n\nChairman and Chief Executive Officer",
            3,
        ));
        text.push_str(&page(
            "report of independent accountants",
            "In our opinion, fine.",
            4,
        ));
        text.push_str(
            "<TABLE>\nCONSOLIDATED BALANCE SHEETS\n<CAPTION>\n                 1997     1996\n<S>              <C>      <C>\nCash             5        4\n</TABLE>\n",
        );
        let texts =
            |blocks: Vec<Block>| -> Vec<String> { blocks.iter().map(crate::block_text).collect() };
        let exhibit = texts(text_exhibit_blocks(&text));
        let mdna: Vec<&String> = exhibit
            .iter()
            .filter(|t| *t == "management discussion")
            .collect();
        assert_eq!(mdna.len(), 1, "{exhibit:?}");
        assert!(
            exhibit.contains(&"FINANCIAL RISK MANAGEMENT".to_string()),
            "{exhibit:?}"
        );
        assert!(
            exhibit.contains(&"We hedge rates.".to_string()),
            "{exhibit:?}"
        );
        assert!(
            exhibit.contains(&"report of independent accountants".to_string()),
            "{exhibit:?}"
        );
        let table = exhibit.last().expect("the table");
        assert!(
            table.starts_with("CONSOLIDATED BALANCE SHEETS\n|"),
            "{table}"
        );
        let filing = texts(text_filing_blocks(&text));
        assert!(
            !filing.iter().any(|t| t == "management discussion"),
            "{filing:?}"
        );
        assert!(
            filing
                .iter()
                .any(|t| t.ends_with("Officer report of independent accountants")),
            "{filing:?}"
        );
    }
}
