//! Decoding a body to text: BOM, then the HTTP `charset`, then a `<meta>` charset, then UTF-8 if it
//! is valid, else windows-1252 (what browsers assume for unlabelled legacy pages).

use std::sync::LazyLock;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use regex::bytes::Regex;

/// How far into the body a `<meta>` charset is looked for (the HTML spec's prescan uses 1024 bytes;
/// real pages put long `<script>`s first, so we look further).
const META_SCAN_BYTES: usize = 8192;

static META_CHARSET: LazyLock<Regex> = LazyLock::new(|| {
    // <meta charset="x"> and <meta http-equiv="Content-Type" content="text/html; charset=x">
    Regex::new(r#"(?i)<meta\s[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)"#)
        .expect("static regex compiles")
});

/// The charset label in a `Content-Type` header value, if any.
pub(crate) fn header_charset(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        if k.trim().eq_ignore_ascii_case("charset") {
            Encoding::for_label(v.trim().trim_matches(['"', '\'']).as_bytes())
        } else {
            None
        }
    })
}

/// The charset a `<meta>` tag near the start of `body` declares, if any.
pub fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(META_SCAN_BYTES)];
    let caps = META_CHARSET.captures(head)?;
    Encoding::for_label(caps.get(1)?.as_bytes())
}

/// Decode `body`; returns the text and the encoding's name.
pub fn decode(body: &[u8], content_type: Option<&str>) -> (String, &'static str) {
    let encoding = Encoding::for_bom(body)
        .map(|(e, _)| e)
        .or_else(|| content_type.and_then(header_charset))
        // A meta tag claiming UTF-16 sits in ASCII-compatible bytes: the HTML spec says use UTF-8.
        .or_else(|| meta_charset(body).map(Encoding::output_encoding))
        .unwrap_or_else(|| {
            if std::str::from_utf8(body).is_ok() {
                UTF_8
            } else {
                WINDOWS_1252
            }
        });
    let (text, used, _had_errors) = encoding.decode(body);
    (text.into_owned(), used.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_then_meta_then_sniff() {
        let latin1 = b"<html><head><meta charset=\"iso-8859-1\"></head><body>caf\xe9</body></html>";
        let (text, enc) = decode(latin1, Some("text/html"));
        assert!(text.contains("café"), "{text}");
        assert_eq!(enc, "windows-1252");
        // The header wins over the meta tag.
        let (text, enc) = decode("café".as_bytes(), Some("text/html; charset=UTF-8"));
        assert_eq!((text.as_str(), enc), ("café", "UTF-8"));
        // http-equiv form.
        let sjis = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\">\x93\xfa\x96\x7b";
        let (text, enc) = decode(sjis, None);
        assert!(text.ends_with("日本"), "{text}");
        assert_eq!(enc, "Shift_JIS");
        // No label, invalid UTF-8: windows-1252.
        let (text, _) = decode(b"na\xefve", None);
        assert_eq!(text, "naïve");
        // BOM beats everything.
        let (text, enc) = decode(b"\xef\xbb\xbfok", Some("text/html; charset=iso-8859-1"));
        assert_eq!((text.as_str(), enc), ("ok", "UTF-8"));
    }
}
