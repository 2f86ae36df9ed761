//! A guard for HTML nested far past any real page: elements opened beyond [`MAX_DEPTH`] lose
//! their tags (their text stays), before an HTML parser sees the page.
//!
//! Why: html5ever's tree builder checks element scopes by walking the stack of open elements, so
//! a page of 100,000 nested `<div>`s costs it about 5 billion steps (minutes), and code that walks
//! the tree recursively would overflow its stack. A page within the limit is returned as is
//! (borrowed, byte for byte), so outputs built from real pages do not change.
//!
//! What this is not: an HTML parser or sanitiser. It is one linear scan that counts start and end
//! tags (comments, `<!...>` and `<?...>` declarations, raw text of `script`/`style`/`textarea`/
//! `title`, void elements, self-closing tags and elements whose end tag HTML lets a page omit
//! (`p`, `li`, `td`, ...) do not count), so it can only under-count real nesting, never break a
//! page it leaves alone.

use std::borrow::Cow;

/// The deepest nesting kept. Real pages nest a few dozen elements deep, rarely a few hundred.
pub const MAX_DEPTH: usize = 512;

/// `html` with tags nested deeper than [`MAX_DEPTH`] removed; borrowed when none are.
pub fn limit_nesting(html: &str) -> Cow<'_, str> {
    limit_nesting_to(html, MAX_DEPTH)
}

/// [`limit_nesting`] with another limit.
pub(crate) fn limit_nesting_to(html: &str, max: usize) -> Cow<'_, str> {
    if !scan(html, max, None) {
        return Cow::Borrowed(html);
    }
    let mut out = String::with_capacity(html.len());
    scan(html, max, Some(&mut out));
    Cow::Owned(out)
}

const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "basefont", "bgsound", "frame",
];

/// Elements whose end tag may be left out: they close implicitly, so a page need not balance them.
const IMPLIED_END: &[&str] = &[
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "rb", "rt", "rtc", "rp",
    "tbody", "thead", "tfoot", "colgroup", "caption", "html", "head", "body",
];

const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "plaintext"];

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| from + p)
}

/// The `>` ending the tag whose name ends at `from`, skipping quoted attribute values.
fn tag_end(b: &[u8], from: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, &c) in b.iter().enumerate().skip(from) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None if c == b'>' => return Some(i),
            None => {}
        }
    }
    None
}

/// Walk the tags; returns whether any went past `max`. With `out`, writes the page without
/// those tags (and without the end tags matching them).
fn scan(html: &str, max: usize, mut out: Option<&mut String>) -> bool {
    let b = html.as_bytes();
    let mut i = 0;
    let mut depth = 0usize;
    let mut skipped = 0usize;
    let mut exceeded = false;
    let mut copied = 0usize;
    while let Some(off) = b[i..].iter().position(|&c| c == b'<') {
        let lt = i + off;
        if b[lt..].starts_with(b"<!--") {
            i = find(b, lt + 4, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        if matches!(b.get(lt + 1), Some(b'!' | b'?')) {
            i = b[lt..]
                .iter()
                .position(|&c| c == b'>')
                .map_or(b.len(), |e| lt + e + 1);
            continue;
        }
        let close = b.get(lt + 1) == Some(&b'/');
        let name_start = lt + 1 + close as usize;
        let name_len = b[name_start..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
            .count();
        if name_len == 0 || !b[name_start].is_ascii_alphabetic() {
            i = lt + 1;
            continue;
        }
        let Some(gt) = tag_end(b, name_start + name_len) else {
            break;
        };
        let name = html[name_start..name_start + name_len].to_ascii_lowercase();
        let self_closing = !close && gt > lt && b[gt - 1] == b'/';
        i = gt + 1;
        if !close && RAW_TEXT.contains(&name.as_str()) {
            // Its text may hold anything, `<` included: jump to its end tag.
            let end = format!("</{name}");
            i = find(b, i, end.as_bytes()).unwrap_or(b.len());
            continue;
        }
        if VOID.contains(&name.as_str())
            || IMPLIED_END.contains(&name.as_str())
            || RAW_TEXT.contains(&name.as_str())
            || self_closing
        {
            continue;
        }
        let drop_tag = if close {
            if skipped > 0 {
                skipped -= 1;
                true
            } else {
                depth = depth.saturating_sub(1);
                false
            }
        } else if depth >= max {
            exceeded = true;
            skipped += 1;
            true
        } else {
            depth += 1;
            false
        };
        if drop_tag && let Some(out) = out.as_deref_mut() {
            out.push_str(&html[copied..lt]);
            copied = gt + 1;
        }
        if exceeded && out.is_none() {
            return true;
        }
    }
    if let Some(out) = out {
        out.push_str(&html[copied..]);
    }
    exceeded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_within_the_limit_are_untouched() {
        let page = r#"<html><head><title>a < b</title><script>if (a<b) {}</script></head>
<body><!-- <div> --><div class="x>y"><p>one<p>two<ul><li>a<li>b</ul><br><img src=x /></div></body></html>"#;
        assert!(matches!(limit_nesting_to(page, 3), Cow::Borrowed(_)));
    }

    #[test]
    fn deep_nesting_keeps_the_text_and_loses_the_extra_tags() {
        let page = format!(
            "<body>{}text{}</body>",
            "<div>".repeat(10),
            "</div>".repeat(10)
        );
        let limited = limit_nesting_to(&page, 4);
        assert_eq!(
            limited,
            format!(
                "<body>{}text{}</body>",
                "<div>".repeat(4),
                "</div>".repeat(4)
            )
        );
        assert!(matches!(limit_nesting_to(&limited, 4), Cow::Borrowed(_)));
    }

    #[test]
    fn a_hundred_thousand_levels_take_one_pass() {
        let page = format!("{}x{}", "<span>".repeat(100_000), "</span>".repeat(100_000));
        let start = std::time::Instant::now();
        let limited = limit_nesting(&page);
        assert_eq!(limited.matches("<span>").count(), MAX_DEPTH);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn broken_markup_never_panics() {
        for page in [
            "<",
            "<div",
            "<div class=\"",
            "</",
            "<!--",
            "<a\u{e9}>",
            "<\u{e9}",
            "<1>",
            "<div/>",
        ] {
            let _ = limit_nesting_to(page, 0);
        }
    }
}
