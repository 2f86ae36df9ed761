//! Where a folder lives: a local path or `s3://bucket/prefix`.

use std::fmt;
use std::path::PathBuf;

use crate::StoreError;

/// A folder: on this machine, or under a prefix of an S3-compatible bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Local(PathBuf),
    S3 {
        bucket: String,
        /// Slash-separated, no leading or trailing slash; empty for the bucket's root.
        prefix: String,
    },
}

impl Location {
    /// `s3://bucket/prefix` (prefix optional) or a local path. Any other `scheme://` is an error,
    /// so a typo such as `s4://` never becomes a local folder named `s4:`.
    pub fn parse(text: &str) -> Result<Location, StoreError> {
        let bad = |why: &str| StoreError::Location {
            location: text.to_string(),
            reason: why.to_string(),
        };
        let Some((scheme, rest)) = text.split_once("://") else {
            if text.is_empty() {
                return Err(bad("empty"));
            }
            return Ok(Location::Local(PathBuf::from(text)));
        };
        if scheme != "s3" {
            return Err(bad(&format!(
                "unsupported scheme `{scheme}://`: use s3://bucket/prefix or a local path"
            )));
        }
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket: expected s3://bucket/prefix"));
        }
        if !valid_bucket(bucket) {
            return Err(bad(&format!(
                "`{bucket}` is not a bucket name (3 to 63 characters: a-z, 0-9, `.`, `-`)"
            )));
        }
        let prefix = prefix.trim_end_matches('/');
        if prefix
            .split('/')
            .any(|s| s.is_empty() && !prefix.is_empty())
        {
            return Err(bad("empty path segment (`//`) in the prefix"));
        }
        if prefix.split('/').any(|s| s == "." || s == "..") {
            return Err(bad("`.` and `..` are not allowed in the prefix"));
        }
        Ok(Location::S3 {
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// This location with `segment` (one or more `/`-separated names) appended.
    pub fn join(&self, segment: &str) -> Location {
        match self {
            Location::Local(p) => Location::Local(p.join(segment)),
            Location::S3 { bucket, prefix } => {
                let segment = segment.trim_matches('/');
                Location::S3 {
                    bucket: bucket.clone(),
                    prefix: match (prefix.is_empty(), segment.is_empty()) {
                        (_, true) => prefix.clone(),
                        (true, false) => segment.to_string(),
                        (false, false) => format!("{prefix}/{segment}"),
                    },
                }
            }
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Local(p) => write!(f, "{}", p.display()),
            Location::S3 { bucket, prefix } if prefix.is_empty() => write!(f, "s3://{bucket}"),
            Location::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

impl std::str::FromStr for Location {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Location::parse(s)
    }
}

/// S3's bucket naming rules, the parts a typo breaks.
fn valid_bucket(b: &str) -> bool {
    (3..=63).contains(&b.len())
        && b.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'.' || c == b'-')
        && b.as_bytes()[0].is_ascii_alphanumeric()
        && b.as_bytes()[b.len() - 1].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_s3_and_local_and_rejects_the_rest() {
        assert_eq!(
            Location::parse("s3://my-bucket/runs/a/").unwrap(),
            Location::S3 {
                bucket: "my-bucket".into(),
                prefix: "runs/a".into()
            }
        );
        assert_eq!(
            Location::parse("s3://my-bucket").unwrap(),
            Location::S3 {
                bucket: "my-bucket".into(),
                prefix: "".into()
            }
        );
        assert_eq!(
            Location::parse("work/cache").unwrap(),
            Location::Local("work/cache".into())
        );
        for (bad, says) in [
            ("s3://", "no bucket"),
            ("s3:///x", "no bucket"),
            ("s3://My_Bucket/x", "not a bucket name"),
            ("s3://ab/x", "not a bucket name"),
            ("s3://bucket/a//b", "empty path segment"),
            ("s3://bucket/a/../b", "not allowed"),
            ("gs://bucket/x", "unsupported scheme `gs://`"),
            ("", "empty"),
        ] {
            let e = Location::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(e.contains(bad), "the error names the location: {e}");
        }
    }

    #[test]
    fn join_appends_segments() {
        let l = Location::parse("s3://bucket").unwrap();
        assert_eq!(l.join("a/b").to_string(), "s3://bucket/a/b");
        assert_eq!(l.join("a").join("b/").to_string(), "s3://bucket/a/b");
        assert_eq!(l.join("").to_string(), "s3://bucket");
    }

    proptest! {
        #[test]
        fn display_parses_back(
            bucket in "[a-z0-9][a-z0-9.-]{1,30}[a-z0-9]",
            segments in proptest::collection::vec("[A-Za-z0-9_=-][A-Za-z0-9_.=-]{0,10}", 0..4),
        ) {
            let prefix = segments.join("/");
            let l = Location::S3 { bucket, prefix };
            prop_assert_eq!(Location::parse(&l.to_string()).unwrap(), l);
        }
    }
}
