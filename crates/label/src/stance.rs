//! CONF-FACT's stance vote (section 3.3, Appendix A): three prompt variants (the URL alone, the
//! page text, the text with reasoning first) each answer support, reject or not enough evidence;
//! the majority wins and a tie is not enough evidence. An empty page leaves only the URL vote.
//! The labels stage asks it through `ask`, the one place its calls are made.

use noisebench_core::StageContext;
use noisebench_core::vocab::Stance;
use noisebench_llm::{Answer, Llm, LlmError};
use serde::Deserialize;

use crate::exam::truncate_chars;
use crate::failures::CallFailures;
use crate::pairs::Pair;
use crate::tasks::{StanceReasoned, StanceText, StanceTextInput, StanceUrl, StanceUrlInput};

/// `[stages.<id>.config.stance]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
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

/// A stance from any accepted spelling (trimmed, any case), or `None`.
pub(crate) fn parse_stance(s: &str) -> Option<Stance> {
    noisebench_core::vocab::final_answer(s.trim(), noisebench_core::vocab::STANCE_ALIASES)
        .filter(|_| s.split_whitespace().count() <= 3)
}

/// Each pair's three votes (by its index among the pairs): `None` where the call failed, was
/// not made (no text), or the stance vote is disabled.
pub(crate) struct StanceVotes {
    pub url: Vec<Option<Stance>>,
    pub text: Vec<Option<Stance>>,
    pub reasoned: Vec<Option<Stance>>,
}

impl StanceVotes {
    /// The votes cast for pair `i`.
    pub fn cast(&self, i: usize) -> Vec<Stance> {
        [self.url[i], self.text[i], self.reasoned[i]]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Ask the stance vote, when enabled: the URL prompt for every pair, the two text prompts for
/// the pairs with text. Failed calls go to `failures`.
pub(crate) fn ask(
    llm: &Llm,
    config: &StanceConfig,
    pairs: &[Pair],
    ctx: &StageContext,
    failures: &mut CallFailures,
) -> StanceVotes {
    let mut votes = StanceVotes {
        url: vec![None; pairs.len()],
        text: vec![None; pairs.len()],
        reasoned: vec![None; pairs.len()],
    };
    if !config.enabled {
        return votes;
    }
    let stage = ctx.stage_id.as_str();
    let bar = ctx.progress.bar("stance", Some(pairs.len() as u64 * 3));
    let url_calls = pairs
        .iter()
        .map(|p| StanceUrlInput {
            claim: p.claim.text.clone(),
            claim_date: p.claim.claim_date.clone(),
            url: p.doc.url.clone(),
        })
        .collect();
    let answers = llm.run_batch_with_progress::<StanceUrl>(stage, url_calls, bar.as_ref());
    let all: Vec<usize> = (0..pairs.len()).collect();
    record(&mut votes.url, &all, answers, pairs, "stance_url", failures);

    let with_text: Vec<usize> = (0..pairs.len())
        .filter(|i| !pairs[*i].text.trim().is_empty())
        .collect();
    let text_input = |i: &usize| StanceTextInput {
        claim: pairs[*i].claim.text.clone(),
        claim_date: pairs[*i].claim.claim_date.clone(),
        text: truncate_chars(&pairs[*i].text, config.max_document_chars),
    };
    let calls = with_text.iter().map(text_input).collect();
    let answers = llm.run_batch_with_progress::<StanceText>(stage, calls, bar.as_ref());
    record(
        &mut votes.text,
        &with_text,
        answers,
        pairs,
        "stance_text",
        failures,
    );
    let calls = with_text.iter().map(text_input).collect();
    let answers = llm.run_batch_with_progress::<StanceReasoned>(stage, calls, bar.as_ref());
    record(
        &mut votes.reasoned,
        &with_text,
        answers,
        pairs,
        "stance_reasoned",
        failures,
    );
    bar.finish();
    votes
}

/// The stance each answer gives, into `votes` at the pair indices `asked`; failures by `call`.
fn record(
    votes: &mut [Option<Stance>],
    asked: &[usize],
    answers: Vec<Result<Answer<serde_json::Value>, LlmError>>,
    pairs: &[Pair],
    call: &str,
    failures: &mut CallFailures,
) {
    for (i, a) in asked.iter().zip(answers) {
        match a {
            Ok(a) => votes[*i] = Stance::in_reply(&a.value),
            Err(e) => failures.pair(&pairs[*i].id, call, &e),
        }
    }
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
        assert_eq!(NotEnoughEvidence.as_str(), "not enough evidence");
    }
}
