//! Step 3, the gate: `counterrefine_refine` reads the question, `a0` and `R1` (passages beyond
//! `R0` marked new) and says KEEP or REVISE; a revision replaces the draft only when the
//! validator accepts it. The offline rule revises only from new evidence.

use std::collections::BTreeSet;

use noisebench_llm::Task;
use noisebench_text::stopwords::is_stopword;
use noisebench_text::words::{content_words, normalize, words};
use serde::{Deserialize, Serialize};

use super::CounterRefineConfig;
use super::draft::{answer_input, form_fields, view};
use super::qtype::QType;
use super::validate::validate_revision;
use crate::generate::{AnswerForm, Ask, Passage, PassageView, offline_answer};

/// A passage of `R1` as the refine prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RefinePassage {
    pub text: String,
    pub source: Option<String>,
    pub background: Option<String>,
    /// Retrieved by the answer-conditioned queries (not in `R0`).
    pub new: bool,
}

/// `counterrefine_refine`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RefineInput {
    pub question: String,
    pub form: String,
    pub yes: Option<String>,
    pub no: Option<String>,
    /// `a0`.
    pub draft: String,
    /// `R1`.
    pub passages: Vec<RefinePassage>,
}

/// The gate's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Decision {
    #[serde(rename = "KEEP", alias = "keep", alias = "Keep")]
    Keep,
    #[serde(rename = "REVISE", alias = "revise", alias = "Revise")]
    Revise,
}

/// `counterrefine_refine`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RefineOutput {
    pub decision: Decision,
    pub answer: String,
    /// One short snippet of the passages that supports the answer.
    pub evidence: Option<String>,
}

/// `counterrefine_refine`: keep the draft or revise it from the wider evidence (3.4).
pub(crate) struct CounterRefineRefine;
impl Task for CounterRefineRefine {
    const NAME: &'static str = "counterrefine_refine";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = RefineInput;
    type Output = RefineOutput;
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<RefineInput> {
        serde_json::from_str(
            r#"{"question":"Is lemon water a cure for cancer?","form":"yes_no","yes":"true","no":"false","draft":"false","passages":[{"text":"No study shows lemon water cures cancer.","source":"who.int","background":null,"new":true}]}"#,
        )
        .ok()
    }
    fn offline(input: &RefineInput) -> RefineOutput {
        offline_refine(input)
    }
}

fn offline_refine(input: &RefineInput) -> RefineOutput {
    let keep = || RefineOutput {
        decision: Decision::Keep,
        answer: input.draft.clone(),
        evidence: None,
    };
    let new: Vec<&RefinePassage> = input.passages.iter().filter(|p| p.new).collect();
    if new.is_empty() {
        return keep();
    }
    let question = content_words(&input.question);
    // The new passages' sentence sharing the most content words with the question (first wins).
    let mut best: Option<(usize, String)> = None;
    for p in &new {
        for sentence in noisebench_text::sentences::sentences(&p.text) {
            let shared = content_words(&sentence).intersection(&question).count();
            if best.as_ref().is_none_or(|(n, _)| shared > *n) {
                best = Some((shared, sentence));
            }
        }
    }
    if input.form == "binary" {
        let view = |p: &RefinePassage| PassageView {
            text: p.text.clone(),
            source: p.source.clone(),
            background: p.background.clone(),
        };
        let vote = offline_answer(&answer_input(
            &input.question,
            &input.form,
            &input.yes,
            &input.no,
            input.passages.iter().map(view).collect(),
        ))
        .answer;
        if normalize(&vote) == normalize(&input.draft) {
            return keep();
        }
        return RefineOutput {
            decision: Decision::Revise,
            answer: vote,
            evidence: best.map(|(_, s)| s),
        };
    }
    let draft_shared = content_words(&input.draft).intersection(&question).count();
    match best {
        Some((n, sentence)) if n >= 2 && n > draft_shared => RefineOutput {
            decision: Decision::Revise,
            answer: shortest_entity_span(&sentence, &input.question)
                .unwrap_or_else(|| sentence.clone()),
            evidence: Some(sentence),
        },
        _ => keep(),
    }
}

/// The shortest run of capitalised or numeric tokens of `sentence` whose words are neither in
/// the question nor stopwords (the first of equals), punctuation trimmed. The sentence's first
/// word counts only when the next one is capitalised too (`Ostrava Sawmill`, not `Since 2001`).
fn shortest_entity_span(sentence: &str, question: &str) -> Option<String> {
    let asked: BTreeSet<String> = words(question).into_iter().collect();
    let mut runs: Vec<Vec<&str>> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    let capitalised = |t: &str| t.chars().next().is_some_and(char::is_uppercase);
    for (i, token) in tokens.iter().enumerate() {
        let t = token.trim_matches(|c: char| !c.is_alphanumeric());
        let lower = t.to_lowercase();
        // Every sentence opens with a capital: its first word counts only inside a longer name.
        let opening_word = i == 0 && !tokens.get(1).is_some_and(|n| capitalised(n));
        let entity_like = t
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
            && !opening_word
            && !asked.contains(&lower)
            && !is_stopword(&lower);
        if entity_like {
            run.push(t);
        }
        // A token with trailing punctuation ends the run (`Paris, France`: two runs).
        let ends = !entity_like || token.ends_with(|c: char| !c.is_alphanumeric());
        if ends && !run.is_empty() {
            runs.push(std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs.into_iter()
        .min_by_key(|r| r.len())
        .map(|r| r.join(" "))
}

/// The refine prompt's input: the question, `a0` and `R1`, each passage not in `R0` marked new.
pub(super) fn refine_input(ask: &Ask, r0: &[Passage], r1: &[Passage], draft: &str) -> RefineInput {
    let (form, yes, no) = form_fields(&ask.form);
    let in_r0: BTreeSet<&str> = r0.iter().map(|p| p.id.as_str()).collect();
    RefineInput {
        question: ask.question.clone(),
        form,
        yes,
        no,
        draft: draft.to_string(),
        passages: r1
            .iter()
            .map(|p| {
                let v = view(ask, p);
                RefinePassage {
                    text: v.text,
                    source: v.source,
                    background: v.background,
                    new: !in_r0.contains(p.id.as_str()),
                }
            })
            .collect(),
    }
}

/// The gate's answer: the draft on KEEP; on REVISE the validated revision, or the draft when the
/// validator rejects it. Each outcome goes into `steps`.
pub(super) fn gate(
    out: &RefineOutput,
    kind: QType,
    form: &AnswerForm,
    draft: &str,
    config: &CounterRefineConfig,
    steps: &mut Vec<String>,
) -> String {
    match out.decision {
        Decision::Keep => {
            steps.push("refine:keep".into());
            draft.to_string()
        }
        Decision::Revise => {
            steps.push("refine:revise".into());
            match validate_revision(
                kind,
                form,
                draft,
                &out.answer,
                out.evidence.as_deref(),
                config,
            ) {
                Ok(canonical) => {
                    steps.push("revision_accepted".into());
                    canonical
                }
                Err(why) => {
                    steps.push(format!("revision_rejected:{}", why.as_str()));
                    draft.to_string()
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offline_refiner_revises_only_from_new_evidence() {
        let input = |passages: Vec<RefinePassage>| RefineInput {
            question: "Which company leases Westgate Basin?".into(),
            form: "open".into(),
            yes: None,
            no: None,
            draft: "I don't know: the passages do not say.".into(),
            passages,
        };
        let p = |text: &str, new: bool| RefinePassage {
            text: text.into(),
            source: None,
            background: None,
            new,
        };
        let fact = "Rain fell. Since 2001, Ostrava Sawmill Group leases Westgate Basin.";
        let out = offline_refine(&input(vec![p(fact, false)]));
        assert_eq!(out.decision, Decision::Keep);
        let out = offline_refine(&input(vec![p("Nothing here.", false), p(fact, true)]));
        assert_eq!(out.decision, Decision::Revise);
        assert_eq!(out.answer, "2001");
        assert_eq!(
            out.evidence.as_deref(),
            Some("Since 2001, Ostrava Sawmill Group leases Westgate Basin.")
        );
        assert_eq!(
            shortest_entity_span(
                "Ostrava Sawmill Group leases Westgate Basin.",
                "Which company leases Westgate Basin?"
            )
            .as_deref(),
            Some("Ostrava Sawmill Group")
        );
    }
}
