//! `confact_ensemble`: SBA_ens's second stage (CONF-FACT 4.3, eq. 4). Each top-K passage has been
//! answered on its own, with its source's background and reasons (eq. 3); this task reads the
//! candidate answers, their reasons and their sources' backgrounds and settles the question.
//! Prompt: `pipelines/prompts/confact_ensemble.md`.

use noisebench_llm::Task;
use serde::{Deserialize, Serialize};

use crate::answers::parse_binary;
use crate::generate::AnswerOutput;

/// One passage's candidate answer as the ensemble sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The passage's source (a domain), when known.
    pub source: Option<String>,
    /// What is known of the source.
    pub background: String,
    /// The candidate's answer as given.
    pub answer: String,
    /// Its reasons, when the reply had them.
    pub reasoning: Option<String>,
}

/// The input of `confact_ensemble`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct EnsembleInput {
    pub question: String,
    /// The two allowed answers.
    pub yes: String,
    pub no: String,
    /// The candidates in passage rank order.
    pub candidates: Vec<Candidate>,
}

/// `confact_ensemble`; answers `{"reasoning": string|null, "answer": string}`.
pub(crate) struct ConfactEnsemble;

impl Task for ConfactEnsemble {
    const NAME: &'static str = "confact_ensemble";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = EnsembleInput;
    type Output = AnswerOutput;
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<EnsembleInput> {
        serde_json::from_str(
            r#"{"question":"Is lemon water a cure for cancer?","yes":"true","no":"false","candidates":[{"source":"who.int","background":"A health agency.","answer":"false","reasoning":"No evidence."}]}"#,
        )
        .ok()
    }

    fn offline(input: &EnsembleInput) -> AnswerOutput {
        offline_ensemble(input)
    }
}

/// Whether a background says the source is of low credibility: the word `low` in it (any case,
/// as a whole word, so `Rated credibility: low.` and `Low factual reporting` count and
/// `lowell.com` does not).
pub(crate) fn says_low_credibility(background: &str) -> bool {
    background
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("low"))
}

/// The offline rule: the majority of the candidate answers that parse as yes or no and whose
/// background does not say low credibility ([`says_low_credibility`]); when no such candidate,
/// the majority of all that parse; a tie, or no candidate that parses, gives `no` (the same
/// default as `eval_answer`'s offline tie). Reasoning: the counts behind the answer.
pub(crate) fn offline_ensemble(input: &EnsembleInput) -> AnswerOutput {
    let votes = |credible_only: bool| -> (usize, usize) {
        let mut yes_no = (0, 0);
        for c in &input.candidates {
            if credible_only && says_low_credibility(&c.background) {
                continue;
            }
            match parse_binary(&c.answer, &input.yes, &input.no) {
                Some(true) => yes_no.0 += 1,
                Some(false) => yes_no.1 += 1,
                None => {}
            }
        }
        yes_no
    };
    let (mut pool, (mut yes, mut no)) = ("credible", votes(true));
    if yes + no == 0 {
        (pool, (yes, no)) = ("all", votes(false));
    }
    let answer = if yes > no { &input.yes } else { &input.no };
    AnswerOutput {
        reasoning: Some(format!(
            "Counted {pool} candidates: {yes} {}, {no} {}.",
            input.yes, input.no
        )),
        answer: answer.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(answer: &str, background: &str) -> Candidate {
        Candidate {
            source: Some("example.com".into()),
            background: background.into(),
            answer: answer.into(),
            reasoning: Some("Because.".into()),
        }
    }

    fn input(candidates: Vec<Candidate>) -> EnsembleInput {
        EnsembleInput {
            question: "Is it true that the bridge closed in 2020?".into(),
            yes: "yes".into(),
            no: "no".into(),
            candidates,
        }
    }

    #[test]
    fn credible_candidates_outvote_low_ones() {
        let i = input(vec![
            cand("yes", "Rated credibility: low."),
            cand("yes", "A tabloid with LOW factual reporting."),
            cand("no", "A national broadcaster, highly rated."),
        ]);
        assert_eq!(offline_ensemble(&i).answer, "no");
        // Only low sources: all of them vote.
        let i = input(vec![
            cand("yes", "low"),
            cand("no.", "low"),
            cand("yes", "low"),
        ]);
        assert_eq!(offline_ensemble(&i).answer, "yes");
        // A tie or nothing valid: no.
        let i = input(vec![cand("yes", "fine"), cand("no", "fine")]);
        assert_eq!(offline_ensemble(&i).answer, "no");
        assert_eq!(offline_ensemble(&input(vec![])).answer, "no");
        assert!(!says_low_credibility("Source: lowell.com."));
    }

    #[test]
    fn the_prompt_renders_and_the_offline_answer_is_stable() {
        use noisebench_llm::prompt::Prompts;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        let json = noisebench_llm::task::offline_self_check::<ConfactEnsemble>(
            &prompts,
            input(vec![
                cand("yes", "Rated credibility: high."),
                Candidate {
                    source: None,
                    background: "No background information about this source is available.".into(),
                    answer: "no".into(),
                    reasoning: None,
                },
                cand("yes", "Rated credibility: low."),
            ]),
        )
        .unwrap();
        assert_eq!(
            json,
            r#"{"reasoning":"Counted credible candidates: 1 yes, 1 no.","answer":"no"}"#
        );
    }
}
