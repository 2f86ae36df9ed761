//! Loaders: each input format into one [`EvalData`](crate::EvalData). The seed releases
//! ([`raguard`]: RAGuard's `claims.csv` + `documents.csv`; [`confact`]: CONF-FACT's pickles or
//! JSON with its credibility tables; [`rare`]: RARE's record files, corpus and retrieval
//! results) and our own snapshots ([`snapshot`]). The release files are typed by
//! `noisebench_releases` (each format's one home, beside the writer our exports use); the
//! loaders here join them and count every problem as a bad row.
//!
//! Release files are large and hand-made data has flaws, so a bad row never stops a run: it is
//! skipped and counted in `EvalData.bad_rows` with a short reason and a detail naming the
//! column or field. A missing required column makes every row of that file a `missing_column`
//! bad row (the run goes on with no items from it). Only a file that cannot be read at all is a
//! [`LoadError`]: an I/O error, text that is not UTF-8 (more than 1% of its bytes invalid, or
//! any NUL byte: a binary file), JSON that does not parse, or JSON whose top level is not a
//! list. A few invalid bytes in otherwise valid UTF-8 are replaced and counted as one bad row
//! (`invalid_utf8`), since one stray byte in a 16,000-row scrape should not cost the run.

pub mod confact;
pub mod raguard;
pub mod rare;
pub mod snapshot;

use std::path::{Path, PathBuf};

pub use confact::{credibility_beside, load_confact, load_confact_with};
pub use raguard::{load_raguard, load_raguard_files};
pub use rare::{RareInputs, load_rare, load_rare_inputs};

use crate::data::BadRow;

/// A file that cannot be read at all. Each message names the file and says everything once (no
/// `source` chain repeating it: the CLI prints a chain with `{:#}`).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path} is empty")]
    Empty { path: PathBuf },
    #[error("{path} is not UTF-8 text ({detail})")]
    NotUtf8 { path: PathBuf, detail: String },
    #[error("{path} is not valid JSON: {error}")]
    Json {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error("{path}: expected a JSON list at the top level, found {found}")]
    NotAList { path: PathBuf, found: &'static str },
    #[error("{path}: {detail}")]
    Pickle { path: PathBuf, detail: String },
    #[error("{path}: no usable record ({detail})")]
    NoRecords { path: PathBuf, detail: String },
    #[error("{path}: {detail}")]
    Layout { path: PathBuf, detail: String },
}

/// What a binary file looks like, by its first bytes: `gzip`, `a Python pickle`, `Parquet`,
/// `zip`, ... `None` when nothing is recognised.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let starts = |m: &[u8]| bytes.starts_with(m);
    if starts(&[0x1f, 0x8b]) {
        Some(
            "gzip-compressed data (a `.gz` file; CONF-FACT's `.pkl.gz` pickles are read with --format confact)",
        )
    } else if bytes.len() >= 2 && bytes[0] == 0x80 && (2..=5).contains(&bytes[1]) {
        Some("a Python pickle (protocol 2-5)")
    } else if starts(b"PAR1") {
        Some("a Parquet file (a snapshot's table: give the snapshot folder)")
    } else if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") {
        Some("a zip archive (unpack it first)")
    } else if starts(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("zstd-compressed data")
    } else if starts(b"BZh") {
        Some("bzip2-compressed data")
    } else if starts(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Some("xz-compressed data")
    } else if starts(b"%PDF") {
        Some("a PDF document")
    } else if starts(b"SQLite format 3") {
        Some("an SQLite database")
    } else if starts(&[0xff, 0xfe]) || starts(&[0xfe, 0xff]) {
        Some("UTF-16 text (save it as UTF-8)")
    } else {
        None
    }
}

/// A file's bytes; an empty file (or one of whitespace only) is [`LoadError::Empty`].
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, LoadError> {
    let bytes = std::fs::read(path).map_err(|error| LoadError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(bytes)
}

/// How a file is named in bad rows: its file name, so reports do not depend on where the
/// release was unpacked.
pub(crate) fn file_label(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

pub(crate) fn bad(
    file: &str,
    row: impl Into<String>,
    reason: &str,
    detail: impl Into<String>,
) -> BadRow {
    BadRow {
        file: file.to_string(),
        row: row.into(),
        reason: reason.into(),
        detail: detail.into(),
    }
}

/// A file's text: UTF-8 with any byte-order mark removed. A few invalid sequences are replaced
/// (one `invalid_utf8` bad row says how many); a binary file is an error.
pub(crate) fn read_text(path: &Path, bad_rows: &mut Vec<BadRow>) -> Result<String, LoadError> {
    let bytes = read_bytes(path)?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let bytes = e.into_bytes();
            if let Some(kind) = sniff(&bytes) {
                return Err(LoadError::NotUtf8 {
                    path: path.to_path_buf(),
                    detail: format!("it looks like {kind}"),
                });
            }
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            let replaced = lossy.matches('\u{fffd}').count();
            if bytes.contains(&0) || replaced * 100 > bytes.len() {
                return Err(LoadError::NotUtf8 {
                    path: path.to_path_buf(),
                    detail: format!(
                        "{replaced} invalid sequences in {} bytes; a binary file of no known kind",
                        bytes.len()
                    ),
                });
            }
            bad_rows.push(bad(
                &file_label(path),
                "all",
                "invalid_utf8",
                format!("{replaced} invalid UTF-8 sequences replaced by U+FFFD"),
            ));
            lossy
        }
    };
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// The items of a text holding one JSON list.
pub(crate) fn parse_json_list(
    path: &Path,
    text: &str,
) -> Result<Vec<serde_json::Value>, LoadError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|error| LoadError::Json {
        path: path.to_path_buf(),
        error,
    })?;
    match value {
        serde_json::Value::Array(items) => Ok(items),
        other => Err(LoadError::NotAList {
            path: path.to_path_buf(),
            found: json_kind(&other),
        }),
    }
}

pub(crate) fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The host of a URL, lowercased, without `www.`, port or credentials (`https://www.reddit.com/r/x`
/// -> `reddit.com`); `None` when there is none. By hand rather than with `url`: only the host is
/// needed, and release links are often scheme-less or slightly malformed.
pub(crate) fn domain_of(link: &str) -> Option<String> {
    let s = link.trim();
    let rest = match s.find("://") {
        Some(i) => &s[i + 3..],
        None if s.starts_with("//") => &s[2..],
        None => s,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = if host.starts_with('[') {
        host
    } else {
        host.split(':').next().unwrap_or("")
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    let plausible = host.contains('.')
        && !host.contains(char::is_whitespace)
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':'));
    plausible.then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains() {
        assert_eq!(
            domain_of("https://www.reddit.com/r/politics/comments/abc/"),
            Some("reddit.com".into())
        );
        assert_eq!(
            domain_of("http://user:pw@News.Example.co.uk:8080/a?b"),
            Some("news.example.co.uk".into())
        );
        assert_eq!(domain_of("nytimes.com/2020/x"), Some("nytimes.com".into()));
        assert_eq!(domain_of(""), None);
        assert_eq!(domain_of("not a link"), None);
    }

    #[test]
    fn text_with_a_bom_or_a_stray_byte() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        std::fs::write(&p, b"\xef\xbb\xbfa,b\n").unwrap();
        let mut bad_rows = Vec::new();
        assert_eq!(read_text(&p, &mut bad_rows).unwrap(), "a,b\n");
        let mut long = b"x".repeat(200);
        long.push(0xff);
        std::fs::write(&p, &long).unwrap();
        assert!(read_text(&p, &mut bad_rows).unwrap().ends_with('\u{fffd}'));
        assert_eq!(bad_rows[0].reason, "invalid_utf8");
        std::fs::write(&p, b"\xff\xfe\x00\x01").unwrap();
        assert!(matches!(
            read_text(&p, &mut bad_rows),
            Err(LoadError::NotUtf8 { .. })
        ));
        let missing = dir.path().join("missing.csv");
        let err = read_text(&missing, &mut bad_rows).unwrap_err();
        assert!(err.to_string().contains("missing.csv"), "{err}");
    }
}
