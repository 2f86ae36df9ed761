//! The `character_level` query perturbation (RARE C.1, after TextAttack's QWERTY swap and
//! random character deletion): about `rate` of the query's unprotected ASCII letters are each
//! replaced by a neighbouring key of a QWERTY keyboard or deleted. Written here rather than
//! taken from a crate: no Rust crate does seeded keyboard typos with a protection mask.

use rand::Rng;
use rand::seq::index::sample;

/// A perturbed text and how much of it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Perturbed {
    pub text: String,
    /// Characters (or words) changed.
    pub changed: usize,
    /// Characters (or words) the rate is counted over: the unprotected ones.
    pub counted: usize,
}

/// The keys next to each letter on a QWERTY keyboard (same row and the rows above and below).
fn neighbours(c: u8) -> &'static [u8] {
    match c {
        b'q' => b"wa",
        b'w' => b"qeas",
        b'e' => b"wrsd",
        b'r' => b"etdf",
        b't' => b"ryfg",
        b'y' => b"tugh",
        b'u' => b"yihj",
        b'i' => b"uojk",
        b'o' => b"ipkl",
        b'p' => b"ol",
        b'a' => b"qwsz",
        b's' => b"weadzx",
        b'd' => b"erfsxc",
        b'f' => b"rtdgcv",
        b'g' => b"tyfhvb",
        b'h' => b"yugjbn",
        b'j' => b"uihknm",
        b'k' => b"iojlm",
        b'l' => b"opk",
        b'z' => b"asx",
        b'x' => b"zsdc",
        b'c' => b"xdfv",
        b'v' => b"cfgb",
        b'b' => b"vghn",
        b'n' => b"bhjm",
        b'm' => b"njk",
        _ => b"",
    }
}

/// How many of `counted` items a `rate` changes: the nearest whole number, at least one when
/// there is anything to change (a short query still gets a perturbation).
pub(crate) fn changes_for(rate: f64, counted: usize) -> usize {
    if counted == 0 || rate <= 0.0 {
        return 0;
    }
    ((rate * counted as f64).round() as usize).clamp(1, counted)
}

/// Typos in about `rate` of `text`'s unprotected ASCII letters (`mask[byte]` = protected): each
/// chosen letter is swapped for a QWERTY neighbour (case kept) or, half of the time and only in
/// words of at least three letters, deleted.
pub fn character_level(text: &str, mask: &[bool], rate: f64, rng: &mut impl Rng) -> Perturbed {
    let bytes = text.as_bytes();
    // Eligible letters, with the length of the letter run they are in.
    let mut eligible: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            for at in start..i {
                if !mask.get(at).copied().unwrap_or(true) {
                    eligible.push((at, i - start));
                }
            }
        } else {
            i += 1;
        }
    }
    let k = changes_for(rate, eligible.len());
    let mut picked: Vec<usize> = sample(rng, eligible.len(), k).into_vec();
    picked.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for p in picked {
        let (at, run) = eligible[p];
        out.push_str(&text[from..at]);
        from = at + 1;
        let c = bytes[at];
        if run >= 3 && rng.random_bool(0.5) {
            continue; // deleted
        }
        let near = neighbours(c.to_ascii_lowercase());
        let n = near[rng.random_range(0..near.len())];
        out.push(if c.is_ascii_uppercase() {
            n.to_ascii_uppercase() as char
        } else {
            n as char
        });
    }
    out.push_str(&text[from..]);
    Perturbed {
        text: out,
        changed: k,
        counted: eligible.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn every_letter_has_neighbours_and_protected_bytes_stay() {
        for c in b'a'..=b'z' {
            assert!(!neighbours(c).is_empty(), "{}", c as char);
        }
        let text = "Did Acme pay 2022 dividends";
        let mut mask = vec![false; text.len()];
        mask[4..8].iter_mut().for_each(|b| *b = true);
        mask[13..17].iter_mut().for_each(|b| *b = true);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let out = character_level(text, &mask, 1.0, &mut rng);
        assert_eq!(out.changed, 15);
        assert!(
            out.text.contains("Acme") && out.text.contains("2022"),
            "{}",
            out.text
        );
        assert_eq!(changes_for(0.1, 3), 1);
        assert_eq!(changes_for(0.1, 0), 0);
        assert_eq!(changes_for(0.1, 44), 4);
    }
}
