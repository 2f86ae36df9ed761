//! HTML character references in text that arrives from outside, decoded once where it enters.
//!
//! Three shapes reach the search crate:
//! - **HTML fragments given as text**: Brave's result `description` carries `<strong>` around the
//!   query's words and escapes quotes and apostrophes (`It&#x27;s`, `&quot;The 1&quot;`). Tags
//!   are dropped, then references decoded: an escaped `&lt;b&gt;` stays the text `<b>`.
//! - **Reddit text**: Reddit's JSON escapes `&`, `<` and `>` in titles and self texts (`&amp;`,
//!   `&lt;`, `&gt;`) unless asked with `raw_json=1`, and Pushshift-style dumps keep that escaping;
//!   some bodies hold line breaks as `&lt;br/&gt;`. References are decoded once and a `<br>` that
//!   decoding reveals becomes a line break; any other `<` is the author's own character (`x < y`).
//! - Plain text (Google's `title` and `snippet`, SearxNG's `content`) is taken as it is.
//!
//! Decoding is a single pass (`&amp;lt;` becomes `&lt;`, not `<`), so text that was escaped once
//! reads as its author wrote it and nothing is unescaped twice.

/// `s` with every HTML character reference (named, `&#39;`, `&#x27;`) decoded, in one pass.
pub(crate) fn decode_once(s: &str) -> String {
    html_escape::decode_html_entities(s).into_owned()
}

/// The text of an HTML fragment: tags dropped, references decoded once, runs of whitespace
/// collapsed. A `<` that does not open a tag (`a < b`) is kept.
pub(crate) fn fragment_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match tag_len(tail) {
            Some(n) => {
                // A tag separates words only when it is a break or a block; `<strong>` does not.
                if is_breaking_tag(&tail[..n]) {
                    out.push(' ');
                }
                rest = &tail[n..];
            }
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    collapse(&decode_once(&out))
}

/// Reddit text (a title or a self text as the API or a dump gives it): references decoded once,
/// `<br>`, `<br/>` and `<br />` (any case) turned into line breaks.
pub(crate) fn reddit_text(s: &str) -> String {
    let decoded = decode_once(s);
    if !decoded.contains('<') {
        return decoded;
    }
    let mut out = String::with_capacity(decoded.len());
    let mut rest = decoded.as_str();
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match tag_len(tail).filter(|&n| tag_name(&tail[..n]).eq_ignore_ascii_case("br")) {
            Some(n) => {
                out.push('\n');
                rest = &tail[n..];
            }
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The length of the tag `s` starts with (`<x ...>` or `</x>`, x a letter), if it starts with one.
fn tag_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let first = usize::from(b.get(1) == Some(&b'/')) + 1;
    if !b.get(first)?.is_ascii_alphabetic() {
        return None;
    }
    let close = s.find('>')?;
    // A stray `<` followed by prose far later closed by an unrelated `>` is not a tag.
    (close < 200 && !s[1..close].contains('<')).then_some(close + 1)
}

/// The element name of a tag (`<br/>` -> `br`, `</p>` -> `p`).
fn tag_name(tag: &str) -> &str {
    let inner = tag.trim_start_matches('<').trim_start_matches('/');
    let end = inner
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(inner.len());
    &inner[..end]
}

fn is_breaking_tag(tag: &str) -> bool {
    const BREAKING: &[&str] = &[
        "br", "p", "div", "li", "ul", "ol", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
    ];
    let name = tag_name(tag);
    BREAKING.iter().any(|b| b.eq_ignore_ascii_case(name))
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_decoded_once() {
        assert_eq!(decode_once("It&#x27;s &amp; &#39;x&#39;"), "It's & 'x'");
        assert_eq!(decode_once("AT&amp;amp;T"), "AT&amp;T");
        assert_eq!(decode_once("no references & none"), "no references & none");
    }

    #[test]
    fn fragments_lose_their_tags_not_their_text() {
        assert_eq!(
            fragment_text("&quot;The <strong>1</strong>&quot; is a song"),
            "\"The 1\" is a song"
        );
        assert_eq!(fragment_text("a < b and c>d"), "a < b and c>d");
        assert_eq!(
            fragment_text("escaped &lt;b&gt; stays"),
            "escaped <b> stays"
        );
        assert_eq!(fragment_text("one<br>two</p><p>three"), "one two three");
    }

    #[test]
    fn reddit_breaks_become_lines() {
        assert_eq!(
            reddit_text("first&lt;br/&gt;second&lt;BR /&gt;third &amp; x &lt; y"),
            "first\nsecond\nthird & x < y"
        );
        assert_eq!(reddit_text("plain"), "plain");
    }
}
