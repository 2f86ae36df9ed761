//! CONF-FACT's stance vote (section 3.3, Appendix A): three prompt variants (the URL alone, the
//! page text, the text with reasoning first) each answer support, reject or not enough evidence;
//! the majority wins and a tie is not enough evidence. An empty page leaves only the URL vote.

use noisebench_core::vocab::Stance;
use serde::Deserialize;

/// `[stages.<id>.config.stance]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StanceConfig {
    /// Run the stance vote at all.
    pub enabled: bool,
    /// Page text sent to the text variants is cut to this many characters.
    pub max_document_chars: usize,
}

impl Default for StanceConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_document_chars: 12_000,
        }
    }
}

/// The majority of the votes that were cast. One stance with more votes than any other wins;
/// a tie at the top is not enough evidence; no vote at all is `None`.
///
/// With three votes this is CONF-FACT's rule (2 or 3 alike win, 1-1-1 is not enough evidence);
/// with the URL vote alone (an empty page) the URL vote decides.
pub fn majority_stance(votes: &[Stance]) -> Option<Stance> {
    if votes.is_empty() {
        return None;
    }
    let all = [Stance::Support, Stance::Reject, Stance::NotEnoughEvidence];
    let counts: Vec<(Stance, usize)> = all
        .iter()
        .map(|s| (*s, votes.iter().filter(|v| *v == s).count()))
        .collect();
    let top = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let winners: Vec<Stance> = counts
        .iter()
        .filter(|(_, n)| *n == top)
        .map(|(s, _)| *s)
        .collect();
    Some(match winners.as_slice() {
        [one] => *one,
        _ => Stance::NotEnoughEvidence,
    })
}

/// A stance as written in tables: `support`, `reject`, `not enough evidence`.
pub fn stance_str(s: Stance) -> &'static str {
    s.as_str()
}

/// A stance from any accepted spelling (trimmed, any case), or `None`.
pub fn parse_stance(s: &str) -> Option<Stance> {
    noisebench_core::vocab::final_answer(s.trim(), noisebench_core::vocab::STANCE_ALIASES)
        .filter(|_| s.split_whitespace().count() <= 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Stance::*;

    #[test]
    fn majority_of_three_and_ties() {
        assert_eq!(majority_stance(&[Support, Support, Reject]), Some(Support));
        assert_eq!(
            majority_stance(&[Reject, NotEnoughEvidence, Reject]),
            Some(Reject)
        );
        assert_eq!(
            majority_stance(&[Support, Reject, NotEnoughEvidence]),
            Some(NotEnoughEvidence)
        );
        assert_eq!(majority_stance(&[Support, Reject]), Some(NotEnoughEvidence));
        assert_eq!(
            majority_stance(&[Reject]),
            Some(Reject),
            "empty page: the URL vote decides"
        );
        assert_eq!(majority_stance(&[]), None);
    }

    #[test]
    fn stances_parse_from_sheet_spellings() {
        assert_eq!(parse_stance(" Support "), Some(Support));
        assert_eq!(parse_stance("Not enough evidence"), Some(NotEnoughEvidence));
        assert_eq!(parse_stance("REFUTES"), Some(Reject));
        assert_eq!(parse_stance("maybe"), None);
        assert_eq!(stance_str(NotEnoughEvidence), "not enough evidence");
    }
}
