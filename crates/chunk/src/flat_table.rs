//! Tables that edgar-crawler flattened to one cell per line, found and rebuilt.
//!
//! edgar-crawler writes every table cell of a 10-K on its own line: a row label, then `$`,
//! `4,101.1`, `$`, `3,796.3`, and a negative as `(2.1` then `)`. Read line by line, those cells
//! become number-only paragraphs and the column labels ("Fiscal", "Change", "March 31") become
//! section headings. This module finds such runs and turns each into ONE table block:
//!
//! - a **run** is a stretch of short label lines and value lines (numbers, `$`, `)`, `%`, dashes)
//!   holding at least `MIN_VALUES` value lines with digits, value lines making at least a third
//!   of its lines (a quarter from twice that many on); it ends at its last value line, so a
//!   title after the table stays a heading, and before a footnote marker that opens a note;
//! - it is **rebuilt as Markdown** when the column count is certain: every row label is followed
//!   by 0 or a multiple of `k` values (`k` the most common count; a multiple means unlabeled
//!   total rows), and either two rows hold exactly `k` or the header fits. The header is the
//!   leading labels when, after unit and period lines (`(In millions)`, `Year Ended June 30`),
//!   `k` or `k + 1` of them are left, or else a first row of years; leading labels not used as
//!   the header become the caption. Every row has `k + 1` cells, so a rebuilt table is never
//!   ragged;
//! - otherwise the run is kept as a table block of its original lines.
//!
//! What this is not: a reader of whitespace-aligned tables (see `text_layout`) or of pipe tables.
//! Lines with words only (prose) are never values, so prose alone never makes a table.

use noisebench_core::Block;

/// Value lines a run needs to be read as a table.
pub(crate) const MIN_VALUES: usize = 3;

/// Longest label line, in characters and words: longer lines are prose and end a run.
const MAX_LABEL_CHARS: usize = 80;
const MAX_LABEL_WORDS: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Value,
    Label,
    Other,
}

/// Whether `t` (trimmed) is a table value or a fragment of one: digits with currency, sign,
/// parenthesis, percent and separator characters, or such a character alone (`$`, `)`, `%`, `—`).
pub fn is_value(t: &str) -> bool {
    let t = t.trim();
    if t.is_empty() || t.chars().count() > 30 {
        return false;
    }
    t.chars().all(|c| {
        c.is_ascii_digit()
            || c.is_whitespace()
            || matches!(
                c,
                '$' | '€' | '£' | '¥' | '(' | ')' | '%' | ',' | '.' | '-' | '—' | '–' | '+' | '*'
            )
    }) && !t.chars().all(|c| matches!(c, '.' | '*' | ' '))
}

/// A page number line (`- 25 -`, `F-12`): it ends a table rather than filling a cell.
fn is_page_number(t: &str) -> bool {
    let t = t.trim();
    let core = t.strip_prefix("F").unwrap_or(t).trim();
    let inner = core.trim_matches(|c: char| c == '-' || c == '–' || c == '—' || c == ' ');
    !inner.is_empty()
        && inner.len() <= 4
        && inner.chars().all(|c| c.is_ascii_digit())
        && ((core.starts_with(['-', '–', '—']) && core.ends_with(['-', '–', '—']))
            || t.starts_with('F'))
}

fn classify(line: &str) -> Line {
    let t = line.trim();
    if t.is_empty() || t.contains('|') || is_page_number(t) {
        return Line::Other;
    }
    if is_value(t) {
        return Line::Value;
    }
    let words = t.split_whitespace().count();
    let item = t.to_lowercase().starts_with("item ")
        && t.split_whitespace()
            .nth(1)
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()));
    if item || words > MAX_LABEL_WORDS || t.chars().count() > MAX_LABEL_CHARS || t == "•" {
        return Line::Other;
    }
    // A sentence ("Sales rose 5%.", "Borrowings were as follows:") is prose, not a row label.
    if (words > 3 && t.ends_with(['.', '!', '?'])) || (words > 6 && t.ends_with(':')) {
        return Line::Other;
    }
    Line::Label
}

/// Whether `t` is a footnote or exhibit number on its own line: `(1)`, `4.1`, `12.`.
pub(crate) fn is_marker(t: &str) -> bool {
    let t = t.trim();
    t.len() <= 8
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '(' | ')'))
}

/// Whether `line` is prose: a line with words that is too long, or too sentence-like, to be a
/// table's row label.
pub(crate) fn is_prose(line: &str) -> bool {
    classify(line) == Line::Other && !line.trim().is_empty() && !line.contains('|')
}

/// The end (exclusive) of a flattened table starting at `start`, if one starts there.
pub(crate) fn run_end(lines: &[&str], start: usize) -> Option<usize> {
    if classify(lines[start]) == Line::Other {
        return None;
    }
    let mut last_value = None;
    let mut i = start;
    while i < lines.len() {
        match classify(lines[i]) {
            Line::Value => last_value = Some(i),
            Line::Label => {}
            Line::Other => break,
        }
        i += 1;
    }
    let mut end = last_value? + 1;
    // A footnote marker closing the run opens the note after it, not a cell.
    while end > start && is_marker(lines[end - 1]) && lines.get(end).is_some_and(|l| is_prose(l)) {
        end -= 1;
        while end > start && classify(lines[end - 1]) != Line::Value {
            end -= 1;
        }
    }
    // Value lines with digits (the minimum), and all value lines (the density). A dash alone is
    // an empty cell or a list bullet: it extends a run, it does not make one.
    let run = &lines[start..end];
    let cells = run.iter().filter(|l| classify(l) == Line::Value).count();
    let values = run
        .iter()
        .filter(|l| classify(l) == Line::Value && l.chars().any(|c| c.is_ascii_digit()))
        .count();
    // Text-heavy tables (a property list: city, owned/leased, use, area) hold one value in four
    // lines; a longer run of them is still a table.
    let density = if cells >= 2 * MIN_VALUES { 4 } else { 3 };
    (values >= MIN_VALUES && cells * density >= end - start).then_some(end)
}

#[derive(Debug, Clone, PartialEq)]
enum Item {
    Label(String),
    Value(String),
}

/// The run's cells: currency signs joined to the value after them, `)` and `%` to the value
/// before, a lower-case label line to the label it continues.
fn items(lines: &[&str]) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut pending_sign: Option<String> = None;
    for line in lines {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if is_value(t) {
            let closes = t.chars().all(|c| matches!(c, ')' | '%' | ' '));
            let sign = t.chars().all(|c| matches!(c, '$' | '€' | '£' | '¥' | ' '));
            if closes
                && pending_sign.is_none()
                && let Some(Item::Value(prev)) = out.last_mut()
            {
                prev.push_str(t);
                continue;
            }
            if sign {
                let s = pending_sign.get_or_insert_with(String::new);
                if !s.is_empty() {
                    s.push(' ');
                }
                s.push_str(t);
                continue;
            }
            let text = match pending_sign.take() {
                Some(s) => format!("{s} {t}"),
                None => t.to_string(),
            };
            out.push(Item::Value(text));
            continue;
        }
        if let Some(s) = pending_sign.take() {
            out.push(Item::Value(s));
        }
        if t.starts_with(char::is_lowercase)
            && let Some(Item::Label(prev)) = out.last_mut()
        {
            prev.push(' ');
            prev.push_str(t);
            continue;
        }
        out.push(Item::Label(t.to_string()));
    }
    if let Some(s) = pending_sign.take() {
        out.push(Item::Value(s));
    }
    out
}

fn is_year(v: &str) -> bool {
    v.len() == 4
        && v.chars().all(|c| c.is_ascii_digit())
        && (v.starts_with("19") || v.starts_with("20"))
}

/// A unit or period line above a table's column labels.
fn caption_like(label: &str) -> bool {
    let lower = label.to_lowercase();
    label.starts_with('(')
        || ["ended", "millions", "thousands", "as of", "at "]
            .iter()
            .any(|w| lower.contains(w))
}

/// A row of the rebuilt table: a label (maybe empty) and its values.
type Row = (String, Vec<String>);

/// Values before the first label, and the rows: each label with the values after it.
fn segments(items: &[Item]) -> (Vec<String>, Vec<Row>) {
    let mut lead = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    for item in items {
        match item {
            Item::Label(l) => rows.push((l.clone(), Vec::new())),
            Item::Value(v) => match rows.last_mut() {
                Some((_, vals)) => vals.push(v.clone()),
                None => lead.push(v.clone()),
            },
        }
    }
    (lead, rows)
}

fn md_row(cells: &[String]) -> String {
    let mut s = String::from("|");
    for c in cells {
        s.push(' ');
        s.push_str(c);
        s.push_str(" |");
    }
    s
}

/// A Markdown table and caption for the run, when its column count is certain.
pub fn rebuild(lines: &[&str]) -> Option<(String, Option<String>)> {
    let items = items(lines);
    let (lead_values, mut rows) = segments(&items);
    if !lead_values.is_empty() {
        return None;
    }
    // Leading labels: rows before the first one with values.
    let first = rows.iter().position(|(_, v)| !v.is_empty())?;
    let mut lead: Vec<String> = rows.drain(..first).map(|(l, _)| l).collect();
    // k: the most common value count among rows with values (ties: the larger).
    let mut counts = std::collections::BTreeMap::<usize, usize>::new();
    for (_, v) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        *counts.entry(v.len()).or_default() += 1;
    }
    let (&k, &full) = counts.iter().max_by_key(|(k, n)| (**n, **k))?;
    if rows.iter().any(|(_, v)| v.len() % k != 0) {
        return None;
    }
    // Units and periods ("(In millions)", "Year Ended June 30, 2012") open a table's lead; the
    // column labels come after them.
    let titles = lead.iter().take_while(|l| caption_like(l)).count();
    let columns = lead.len() - titles;
    let header_fits = columns == k || columns == k + 1;
    if full < 2 && !header_fits {
        return None;
    }
    let width = k + 1;
    let mut header: Vec<String> = Vec::new();
    if header_fits {
        let mut cols = lead.split_off(titles);
        if cols.len() == k {
            header.push(String::new());
        }
        header.append(&mut cols);
    } else if rows[0].1.iter().all(|v| is_year(v)) && rows[0].1.len() == k {
        let (label, years) = rows.remove(0);
        header.push(label);
        header.extend(years);
    } else {
        header = vec![String::new(); width];
    }
    let caption = (!lead.is_empty()).then(|| lead.join(" "));
    let mut out = vec![md_row(&header), md_row(&vec!["---".to_string(); width])];
    for (label, values) in rows {
        if values.is_empty() {
            let mut cells = vec![label];
            cells.extend(std::iter::repeat_n(String::new(), k));
            out.push(md_row(&cells));
            continue;
        }
        for (n, chunk) in values.chunks(k).enumerate() {
            let mut cells = vec![if n == 0 { label.clone() } else { String::new() }];
            cells.extend(chunk.iter().cloned());
            out.push(md_row(&cells));
        }
    }
    Some((out.join("\n"), caption))
}

/// The run `lines` as one table block: rebuilt as Markdown when possible, else its lines.
pub fn table_block(lines: &[&str]) -> Block {
    let (markdown, caption) = rebuild(lines).unwrap_or_else(|| {
        let kept: Vec<&str> = lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        (kept.join("\n"), None)
    });
    Block::Table {
        markdown,
        caption,
        footnotes: Vec::new(),
        page: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_labels() {
        for v in [
            "$",
            "4,101.1",
            "(2.1",
            ")",
            "%",
            "—",
            "$ 84,263,900",
            "(825,600 )",
            "2012",
        ] {
            assert!(is_value(v), "{v}");
        }
        for v in ["Net sales", "Fiscal", "2007 vs", "n/a", "...", ""] {
            assert!(!is_value(v), "{v}");
        }
    }

    #[test]
    fn rebuilds_a_year_table() {
        let lines = [
            "(In millions)",
            "Year Ended June 30",
            "2012",
            "2011",
            "Net sales",
            "$",
            "4,101.1",
            "$",
            "3,796.3",
            "Returns",
            "(2.1",
            ")",
            "(4.6",
            ")",
            "By Region:",
            "Asia",
            "2.0",
            "1.0",
            "3.0",
            "4.0",
        ];
        let end = run_end(&lines, 0).unwrap();
        assert_eq!(end, lines.len());
        let (md, caption) = rebuild(&lines).unwrap();
        assert_eq!(caption.as_deref(), Some("(In millions)"));
        assert_eq!(
            md,
            "| Year Ended June 30 | 2012 | 2011 |\n| --- | --- | --- |\n\
             | Net sales | $ 4,101.1 | $ 3,796.3 |\n| Returns | (2.1) | (4.6) |\n\
             | By Region: |  |  |\n| Asia | 2.0 | 1.0 |\n|  | 3.0 | 4.0 |"
        );
    }

    #[test]
    fn uncertain_columns_keep_the_lines() {
        let lines = [
            "Fiscal", "Change", "Sales", "1", "2", "3", "Costs", "4", "5",
        ];
        assert_eq!(rebuild(&lines), None);
        match table_block(&lines) {
            Block::Table { markdown, .. } => assert_eq!(markdown, lines.join("\n")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn runs_end_at_the_last_value_and_need_enough_values() {
        let lines = [
            "Sales",
            "1",
            "2",
            "3",
            "4",
            "Fiscal 2007 Compared to Fiscal 2006",
            "Prose follows here and it is a long sentence about sales.",
        ];
        assert_eq!(run_end(&lines, 0), Some(5));
        assert_eq!(run_end(&["Sales", "1", "2"], 0), None);
        assert_eq!(
            run_end(
                &["Prose follows here and it is a long sentence about sales, many words."],
                0
            ),
            None
        );
    }
}
