//! Stable ids: the same content gives the same id on every run and every machine.

use sha2::{Digest, Sha256};

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A readable stable id: `<prefix>_<first 16 hex digits of sha256 over the parts>`.
///
/// Parts are joined with a 0x1f separator so that `("ab", "c")` and `("a", "bc")` differ.
/// 64 bits make an accidental collision negligible for datasets of millions of rows.
pub fn stable_id(prefix: &str, parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prefix.as_bytes());
    for part in parts {
        hasher.update([0x1f]);
        hasher.update(part.as_bytes());
    }
    let digest = hex::encode(hasher.finalize());
    format!("{prefix}_{}", &digest[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_separated() {
        assert_eq!(stable_id("cl", &["a", "bc"]), stable_id("cl", &["a", "bc"]));
        assert_ne!(stable_id("cl", &["ab", "c"]), stable_id("cl", &["a", "bc"]));
        assert_ne!(stable_id("cl", &["x"]), stable_id("doc", &["x"]));
        let id = stable_id("cl", &["https://example.org/a"]);
        assert!(id.starts_with("cl_") && id.len() == 3 + 16, "{id}");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
