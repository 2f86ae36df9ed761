//! Claim text as it enters: HTML character references decoded once, and the outer quotation
//! marks a fact-checker wraps a statement in stripped only when they enclose all of it.

use scraper::Html;

/// HTML character references (`&#039;`, `&amp;`, `&rsquo;`, `&#x27;`) decoded once, as a browser
/// decodes them in text: `&amp;lt;` becomes `&lt;`, not `<`. For strings that reach us undecoded,
/// such as JSON-LD values (a `<script>` holds raw text, so the HTML parser leaves them as written).
/// Markup is not interpreted: `<br>` stays as written.
pub(crate) fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    // A <textarea> holds "escapable raw text": the HTML parser decodes character references there
    // (with the full HTML entity table) and reads nothing else as markup, except its own end tag.
    let guarded = s.replace("</", "&lt;/");
    let doc = Html::parse_fragment(&format!("<textarea>{guarded}</textarea>"));
    let decoded: String = doc.root_element().text().collect();
    // The parser drops one newline right after <textarea>: put back what the input had.
    if s.starts_with('\n') && !decoded.starts_with('\n') {
        format!("\n{decoded}")
    } else {
        decoded
    }
}

/// Double quotation marks: those that may open a quotation, and those that may close one.
const DOUBLE_OPEN: [char; 4] = ['\u{201c}', '"', '\u{201e}', '\u{00ab}']; // “ " „ «
const DOUBLE_CLOSE: [char; 4] = ['\u{201d}', '"', '\u{201c}', '\u{00bb}']; // ” " “ »
/// Single quotation marks, likewise (the closing ones double as apostrophes).
const SINGLE_OPEN: [char; 2] = ['\u{2018}', '\''];
const SINGLE_CLOSE: [char; 2] = ['\u{2019}', '\''];

/// The statement without the quotation marks that enclose the whole of it (`“Under federal law,
/// ...”` loses them, and so does `“... they need."`, opened curly and closed straight as
/// PolitiFact sometimes writes it); a statement that merely starts or ends with a quoted part keeps
/// every mark (`"Tuck-friendly" bathing suits ... "are available in kids' sizes."`,
/// `... questioning 'what the heck is in our water supply.'`). Whitespace is trimmed.
pub(crate) fn strip_outer_quotes(s: &str) -> String {
    let t = s.trim();
    let chars: Vec<char> = t.chars().collect();
    if chars.len() < 2 {
        return t.to_string();
    }
    let (first, last) = (chars[0], chars[chars.len() - 1]);
    let encloses = if DOUBLE_OPEN.contains(&first) && DOUBLE_CLOSE.contains(&last) {
        encloses_all(&chars, &DOUBLE_OPEN, &DOUBLE_CLOSE, false)
    } else if SINGLE_OPEN.contains(&first) && SINGLE_CLOSE.contains(&last) {
        encloses_all(&chars, &SINGLE_OPEN, &SINGLE_CLOSE, true)
    } else {
        false
    };
    if encloses {
        let inner: String = chars[1..chars.len() - 1].iter().collect();
        inner.trim().to_string()
    } else {
        t.to_string()
    }
}

/// Whether the mark at 0 is closed by the last one and by none before it. Curly marks inside
/// nest (`“`, `„`, `«`, `‘` open; `”`, `»`, `’` close); a straight mark inside cannot be told
/// opening from closing, so the outer pair is left. With `apostrophes`, marks with a letter or
/// digit on both sides (`it's`, `Maine’s`) are not quotation marks.
fn encloses_all(chars: &[char], open: &[char], close: &[char], apostrophes: bool) -> bool {
    let last = chars.len() - 1;
    let mut depth = 1usize;
    for i in 1..last {
        let c = chars[i];
        if !open.contains(&c) && !close.contains(&c) {
            continue;
        }
        if apostrophes && chars[i - 1].is_alphanumeric() && chars[i + 1].is_alphanumeric() {
            continue;
        }
        match c {
            '"' | '\'' => return false,
            '\u{201d}' | '\u{00bb}' | '\u{2019}' => {
                depth -= 1;
                if depth == 0 {
                    return false;
                }
            }
            _ => depth += 1,
        }
    }
    depth == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_are_decoded_once() {
        assert_eq!(
            decode_entities("Manmohan Singh&#039;s economy"),
            "Manmohan Singh's economy"
        );
        assert_eq!(
            decode_entities("It&#x27;s &amp;lt;br/&amp;gt;"),
            "It's &lt;br/&gt;"
        );
        assert_eq!(
            decode_entities("&ldquo;a&rdquo; &amp; b"),
            "\u{201c}a\u{201d} & b"
        );
        assert_eq!(
            decode_entities("a <br/> </textarea> b"),
            "a <br/> </textarea> b"
        );
        assert_eq!(decode_entities("no refs"), "no refs");
        assert_eq!(decode_entities("AT&T"), "AT&T");
    }

    #[test]
    fn only_a_pair_around_the_whole_statement_is_stripped() {
        let cases = [
            (
                "\u{201c}Under federal law, you cannot engage in partisan gerrymandering.\u{201d}",
                "Under federal law, you cannot engage in partisan gerrymandering.",
            ),
            (
                "Video shows a woman questioning 'what the heck is in our water supply.'",
                "Video shows a woman questioning 'what the heck is in our water supply.'",
            ),
            (
                "\"Tuck-friendly\" bathing suits for kids \"are available in kids' sizes.\"",
                "\"Tuck-friendly\" bathing suits for kids \"are available in kids' sizes.\"",
            ),
            (
                "\u{201c}Tuck-friendly\u{201d} suits \u{201c}are available in kids\u{2019} sizes.\u{201d}",
                "\u{201c}Tuck-friendly\u{201d} suits \u{201c}are available in kids\u{2019} sizes.\u{201d}",
            ),
            (
                "\u{201c}He said \u{201c}no\u{201d} twice.\u{201d}",
                "He said \u{201c}no\u{201d} twice.",
            ),
            ("'It's fine.'", "It's fine."),
            // PolitiFact's 2026 listing: opened curly, closed straight (and the reverse).
            (
                "\u{201c}As a result of the 'Big Beautiful Bill' 15 million Americans have been thrown off the healthcare that they need.\"",
                "As a result of the 'Big Beautiful Bill' 15 million Americans have been thrown off the healthcare that they need.",
            ),
            (
                "\"Bombing civilian power infrastructure is a war crime.\u{201d}",
                "Bombing civilian power infrastructure is a war crime.",
            ),
            (
                "\"There's two ways of calculating percentage\" decreases. \u{201c}If you have a $600 drug and you reduce it to $10, that's a 600% reduction.\"",
                "\"There's two ways of calculating percentage\" decreases. \u{201c}If you have a $600 drug and you reduce it to $10, that's a 600% reduction.\"",
            ),
            (
                "\u{201c}Tras el atentado a Trump\u{201d}, en la cena \u{201c}Ir\u{e1}n lanza un mensaje fuerte: \u{2018}no le crean nada, miente\u{2019}\u{201d}",
                "\u{201c}Tras el atentado a Trump\u{201d}, en la cena \u{201c}Ir\u{e1}n lanza un mensaje fuerte: \u{2018}no le crean nada, miente\u{2019}\u{201d}",
            ),
            ("\"A plain quote.\"", "A plain quote."),
            ("  no quotes  ", "no quotes"),
            ("\u{201c}", "\u{201c}"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_outer_quotes(input), want, "{input}");
        }
    }
}
