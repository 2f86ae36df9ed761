//! The annual report to shareholders (exhibit 13) cut into the sections a 10-K's pointer items
//! name: item 7 "incorporated by reference" to the report's "Management's Discussion and
//! Analysis" gets that section, item 8 the auditors' report, the statements and their notes,
//! item 7A the "Market Risk" part of the MD&A, item 6 the selected financial data, item 5 the
//! stock prices and stockholder information. Pure: the exhibit's blocks and the pointer items'
//! texts in, block ranges out; [`super::annual::follow_pointers`] places them.
//!
//! A section starts at a heading-like block (a heading, or a short line without closing
//! punctuation) that reads as one of the annual report's usual section titles, and runs to the
//! next such heading of another item. A report's running heads (the section title atop each
//! page) repeat the title and keep the section going. Headings of items that are not pointers
//! (the letter to shareholders, a glossary, the quarterly data an item 8 does not name) end a
//! section; what follows them up to the next section is left over. The market-risk section is
//! part of the MD&A: it ends at the next heading of any kind and the MD&A resumes.
//!
//! What it is not: a reader of page references ("pages 40 through 49"; page numbers are
//! furniture gone from the blocks), or of section titles a report invents; a section it cannot
//! find stays in the left-over blocks, never lost.

use std::ops::Range;
use std::sync::LazyLock;

use noisebench_core::Block;
use regex::Regex;

/// One kind of annual-report section: the item it serves and the titles it goes by.
struct Kind {
    item: &'static str,
    title: Regex,
    /// Part of another section (the MD&A's market-risk part): ends at the next heading.
    nested: bool,
    /// Taken only when the item's own text names it (item 8 and the quarterly data).
    named_by: Option<Regex>,
}

static KINDS: LazyLock<Vec<Kind>> = LazyLock::new(|| {
    let re = |p: &str| Regex::new(p).expect("constant pattern");
    let kind = |item, p: &str, nested| Kind {
        item,
        title: re(p),
        nested,
        named_by: None,
    };
    vec![
        kind(
            "7",
            r"^(financial review|management'?s? discussion|management discussion)",
            false,
        ),
        kind(
            "7A",
            r"^((quantitative and qualitative )?disclosures? about )?market risks?\b|^financial risk management\b",
            true,
        ),
        kind(
            "8",
            r"^(report of (management|independent)|(management'?s?|independent (auditors?|accountants?))'? (report|responsibility)|consolidated (balance sheets?|statements?|statement)\b|notes to (the )?consolidated)",
            false,
        ),
        Kind {
            named_by: Some(re(r"(?i)quarterly")),
            ..kind(
                "8",
                r"^(selected )?quarterly (data|financial|results|information)",
                false,
            )
        },
        kind(
            "6",
            r"^(selected (consolidated )?financial data|(five|six|ten|eleven)[- ]year (comparison|summary|selected|financial)|financial summary)",
            false,
        ),
        kind(
            "5",
            r"^((stock|share)[- ]?(holder|owner)s?'? information|shareholder information|investor information|stock (prices|market|data|exchange)|market (price|prices|for|information))",
            false,
        ),
        // Sections no item points to: they end the section before them.
        kind(
            "",
            r"^(glossary|letter to|to (our )?(share|stock)[- ]?(holders|owners)|financial highlights|corporate (officers|information|directory)|directors and officers)",
            false,
        ),
    ]
});

/// An exhibit cut by the pointer items: per item, the block ranges of its sections in exhibit
/// order; every block of the exhibit is in exactly one range of one item or in `rest`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExhibitCut {
    /// (item key, ranges), in the order the items were given; items with no section omitted.
    pub sections: Vec<(String, Vec<Range<usize>>)>,
    /// Indices of the blocks no pointer item took, in order.
    pub rest: Vec<usize>,
}

/// A block's text as a heading, lower-cased with curly apostrophes straightened, when the block
/// reads as one: a heading, a short line (at most 16 words) without closing punctuation, or a
/// table's caption (a statement printed as a table under its title).
pub fn heading_text(block: &Block) -> Option<String> {
    let text = match block {
        Block::Heading { text, .. } => text.as_str(),
        Block::Table {
            caption: Some(c), ..
        } => c.as_str(),
        Block::Paragraph { text, .. } => {
            let t = text.trim();
            let words = t.split_whitespace().count();
            let closed = t.ends_with(['.', ',', ';', ':', '?', '!']);
            if words == 0 || words > 16 || t.len() > 140 || closed {
                return None;
            }
            t
        }
        Block::Table { caption: None, .. } => return None,
    };
    let t = text.trim();
    t.chars()
        .next()
        .filter(|c| c.is_alphabetic())
        .map(|_| t.replace(['’', '‘'], "'").to_lowercase())
}

/// The item a heading's section serves (`""` for none: a section that ends the one before it,
/// such as quarterly data item 8 does not name) and whether it is nested, or `None` for a heading
/// of no known kind (a sub-heading).
fn kind_of(heading: &str, wanted: &[(String, String)]) -> Option<(&'static str, bool)> {
    let k = KINDS.iter().find(|k| k.title.is_match(heading))?;
    let named = k.named_by.as_ref().is_none_or(|named| {
        wanted
            .iter()
            .any(|(key, text)| key == k.item && named.is_match(text))
    });
    Some((if named { k.item } else { "" }, k.nested))
}

/// Cut the exhibit's blocks into the sections `pointers` name: (item key such as `7` or `7A`,
/// the item's own text in the 10-K). See the module documentation.
pub fn cut_exhibit(blocks: &[Block], pointers: &[(String, String)]) -> ExhibitCut {
    let wanted = |item: &str| pointers.iter().any(|(k, _)| k == item);
    // The item each block goes to, if any.
    let mut owner: Vec<Option<&str>> = vec![None; blocks.len()];
    let mut current: Option<&'static str> = None;
    // The section a nested one interrupted, to resume at its end.
    let mut resume: Option<Option<&'static str>> = None;
    for (i, b) in blocks.iter().enumerate() {
        if let Some(h) = heading_text(b) {
            match kind_of(&h, pointers) {
                Some((item, true)) => {
                    if wanted(item) {
                        resume.get_or_insert(current);
                        current = Some(item);
                    }
                    // A nested section of an item not pointed to stays in what holds it.
                }
                Some((item, false)) => {
                    resume = None;
                    current = (!item.is_empty() && wanted(item)).then_some(item);
                }
                // A sub-heading ends a nested section; others go on.
                None => {
                    if let Some(outer) = resume
                        && is_capitalised(b)
                    {
                        current = outer;
                        resume = None;
                    }
                }
            }
        }
        owner[i] = current;
    }
    let mut sections: Vec<(String, Vec<Range<usize>>)> = Vec::new();
    for (key, _) in pointers {
        if sections.iter().any(|(k, _)| k == key) {
            continue;
        }
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for (i, o) in owner.iter().enumerate() {
            if *o != Some(key.as_str()) {
                continue;
            }
            match ranges.last_mut() {
                Some(r) if r.end == i => r.end = i + 1,
                _ => ranges.push(i..i + 1),
            }
        }
        if !ranges.is_empty() {
            sections.push((key.clone(), ranges));
        }
    }
    let rest = (0..blocks.len()).filter(|&i| owner[i].is_none()).collect();
    ExhibitCut { sections, rest }
}

/// A sub-heading as printed starts with a capital ("Financing Risks", "PERFORMANCE TOOLS"); a
/// lower-case short line is a fragment of text, not a heading.
fn is_capitalised(block: &Block) -> bool {
    let text = match block {
        Block::Heading { .. } => return true,
        Block::Paragraph { text, .. } => text,
        Block::Table { caption, .. } => match caption {
            Some(c) => c,
            None => return false,
        },
    };
    text.trim().chars().next().is_some_and(char::is_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: &str) -> Block {
        Block::Paragraph {
            text: t.into(),
            page: None,
        }
    }

    fn ptr(k: &str, t: &str) -> (String, String) {
        (k.into(), t.into())
    }

    /// The sections as (item, [(start, end)]).
    fn spans(cut: &ExhibitCut) -> Vec<(&str, Vec<(usize, usize)>)> {
        cut.sections
            .iter()
            .map(|(k, rs)| (k.as_str(), rs.iter().map(|r| (r.start, r.end)).collect()))
            .collect()
    }

    #[test]
    fn headings_are_short_lines_without_closing_punctuation() {
        assert_eq!(
            heading_text(&p("Management’s Discussion")).as_deref(),
            Some("management's discussion")
        );
        assert_eq!(
            heading_text(&p("QUARTERLY DATA (UNAUDITED)")).as_deref(),
            Some("quarterly data (unaudited)")
        );
        assert_eq!(heading_text(&p("Sales rose 4% on demand.")), None);
        assert_eq!(
            heading_text(&p("Foreign Currency Exchange Rate Risk:")),
            None
        );
        assert_eq!(heading_text(&p("1997 1996")), None);
    }

    #[test]
    fn items_take_their_sections_and_the_rest_is_kept() {
        let blocks = [
            p("Letter to Shareholders"),
            p("We had a good year."),
            p("Management's Discussion and Analysis"),
            p("Overview"),
            p("Sales rose."),
            p("Market Risk"),
            p("Rates moved."),
            p("Liquidity"),
            p("Cash grew."),
            p("Report of Independent Auditors"),
            p("In our opinion, fine."),
            p("Consolidated Statements of Income"),
            p("Quarterly Data"),
            p("Q1 was good."),
            p("Stockholder Information"),
            p("Listed on the NYSE."),
        ];
        let pointers = [
            ptr("7", "Refer to pages 10 through 20."),
            ptr("7A", "Refer to \"Market Risk\" on page 15."),
            ptr("8", "Refer to pages 21 through 40."),
        ];
        let cut = cut_exhibit(&blocks, &pointers);
        assert_eq!(
            spans(&cut),
            [
                ("7", vec![(2, 5), (7, 9)]),
                ("7A", vec![(5, 7)]),
                ("8", vec![(9, 12)]),
            ]
        );
        // The letter, the quarterly data item 8 does not name, the stockholder information no
        // item 5 points to.
        assert_eq!(cut.rest, vec![0, 1, 12, 13, 14, 15]);
        let named = [ptr("8", "\"Quarterly Data\" on page 41 is incorporated.")];
        let cut = cut_exhibit(&blocks, &named);
        assert_eq!(spans(&cut), [("8", vec![(9, 14)])]);
    }

    #[test]
    fn without_a_market_risk_pointer_the_mdna_keeps_its_part() {
        let blocks = [
            p("management discussion"),
            p("Sales rose."),
            p("Market Risk"),
            p("Rates moved."),
        ];
        let cut = cut_exhibit(&blocks, &[ptr("7", "pages 1-2")]);
        assert_eq!(spans(&cut), [("7", vec![(0, 4)])]);
        assert!(cut.rest.is_empty());
    }
}
