//! How a per-item stage splits into shards.

/// How a per-item stage splits into shards: the input tables whose rows are dealt out, each by
/// the column holding the item key. A row goes to shard `i` of `n` when the key's hash is `i`
/// modulo `n` ([`Shard::owns`]), so all rows of one item (a report's chunks, a document's
/// claim links) land in the same shard. Inputs not listed are given whole to every shard.
#[derive(Debug, Clone, Copy)]
pub struct ShardKey {
    /// The input role.
    pub role: &'static str,
    /// The column of that input whose value is the item key (a string column).
    pub column: &'static str,
    /// Maps the column's value to the item key when they differ (two URLs of one page).
    pub map: Option<fn(&str) -> String>,
}

impl ShardKey {
    pub const fn new(role: &'static str, column: &'static str) -> Self {
        Self {
            role,
            column,
            map: None,
        }
    }

    /// The item key is `map` of the column's value: rows whose values map alike are one item.
    pub const fn mapped(role: &'static str, column: &'static str, map: fn(&str) -> String) -> Self {
        Self {
            role,
            column,
            map: Some(map),
        }
    }

    /// The item key of a row whose `column` holds `value`.
    pub fn key(&self, value: &str) -> String {
        match self.map {
            Some(map) => map(value),
            None => value.to_string(),
        }
    }
}

/// Shard `index` of `count` (`--shard 2/8`: index 2, count 8; indices from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parse `i/n` with `0 <= i < n`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}`: a shard is written i/n, e.g. 0/4"))?;
        let index: u32 = i
            .trim()
            .parse()
            .map_err(|_| format!("`{text}`: `{i}` is not a shard index"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("`{text}`: `{n}` is not a shard count"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "`{text}`: the index must be below the count (0/{count} to {}/{count})",
                count.saturating_sub(1)
            ));
        }
        Ok(Shard { index, count })
    }

    /// The shard an item key belongs to: the first 8 bytes of its sha256, modulo the count
    /// (stable across machines, platforms and releases).
    pub(crate) fn of_key(key: &str, count: u32) -> u32 {
        let digest = <sha2::Sha256 as sha2::Digest>::digest(key.as_bytes());
        let mut head = [0u8; 8];
        head.copy_from_slice(&digest[..8]);
        (u64::from_be_bytes(head) % u64::from(count.max(1))) as u32
    }

    pub fn owns(&self, key: &str) -> bool {
        Self::of_key(key, self.count) == self.index
    }

    /// The shard's folder name under its stage's `shards/`: `2-of-8`.
    pub fn dir_name(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
