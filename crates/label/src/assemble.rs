//! One label row per pair from what the exam and the stance vote answered, or a drop. The model
//! calls that failed are kept per pair until then: a transient failure leaves the pair undone
//! (dropped now, retried by the next run), a permanent one is recorded against a pair that
//! still gets its row, and a pair with no answer at all is dropped as `no_answer`.

use noisebench_core::vocab::{Stance, Verdict};
use noisebench_core::{ClaimDocumentLabel, Drops};

use crate::LabelConfig;
use crate::exam::{self, ExamAnswers};
use crate::failures::{CallFailures, describe};
use crate::pairs::Pair;
use crate::stance::{StanceVotes, majority_stance};

/// Who made the model's rows: their `label_source` and `provenance`.
pub(crate) struct Provenance {
    all_offline: bool,
    text: String,
}

impl Provenance {
    /// From `(task, provenance, prompt version)` of each task used; credibility rates
    /// documents, not pairs, so it is left out.
    pub fn of_tasks(tasks: &[(String, String, String)]) -> Provenance {
        let model_tasks: Vec<&(String, String, String)> = tasks
            .iter()
            .filter(|(t, _, _)| t != "credibility")
            .collect();
        Provenance {
            all_offline: model_tasks.iter().all(|(_, p, _)| p == "offline"),
            text: model_tasks
                .iter()
                .map(|(t, p, v)| format!("{t}={p}@{v}"))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// One row per pair that got an answer and has no transient failure; every other pair is
/// recorded in `drops`, and every permanent failure of a pair that keeps its row too.
pub(crate) fn label_rows(
    config: &LabelConfig,
    pairs: &[Pair],
    exam: &ExamAnswers,
    stance: &StanceVotes,
    failures: &CallFailures,
    provenance: &Provenance,
    drops: &mut Drops,
) -> Vec<ClaimDocumentLabel> {
    let mut labels = Vec::with_capacity(pairs.len());
    for (i, p) in pairs.iter().enumerate() {
        let exam_verdict = exam_verdict(config, p, &exam.votes[i]);
        let stance_majority = majority_stance(&stance.cast(i));
        let failed = failures.of(&p.id, &p.claim.id);
        if let Some((_, reason, _)) = failed.iter().find(|(_, r, _)| r.is_transient()) {
            // Not done: a row without this vote would be published as final.
            drops.add(p.id.clone(), reason, describe(&failed));
            continue;
        }
        if exam_verdict.is_none() && stance_majority.is_none() {
            let detail = if failed.is_empty() {
                "no model answer for this pair".to_string()
            } else {
                format!(
                    "every model call for this pair failed: {}",
                    describe(&failed)
                )
            };
            drops.add(p.id.clone(), "no_answer", detail);
            continue;
        }
        for (call, reason, detail) in &failed {
            drops.add_failure(format!("{}/{call}", p.id), reason, detail.clone());
        }
        let zero_context = exam.zero_context.get(p.claim.id.as_str()).copied();
        let model_label = match (exam_verdict, p.gold) {
            (Some(v), Some(g)) => Some(exam::label_for(v, g, config.preset).to_string()),
            _ => None,
        };
        let stance_str = |s: Option<Stance>| s.map(|s| s.as_str().to_string());
        labels.push(ClaimDocumentLabel {
            id: p.id.clone(),
            claim_id: p.claim.id.clone(),
            document_id: p.doc.id.clone(),
            label: model_label.clone(),
            model_label,
            exam_verdict: exam_verdict.map(|v| v.as_str().to_string()),
            exam_votes: exam.votes[i]
                .iter()
                .map(|(var, v)| format!("{}={}", var.as_str(), v.as_str()))
                .collect(),
            zero_context_verdict: zero_context.map(|v| v.as_str().to_string()),
            flipped: match (zero_context, exam_verdict) {
                (Some(z), Some(e)) => Some(exam::flipped(z, e)),
                _ => None,
            },
            stance_url: stance_str(stance.url[i]),
            stance_text: stance_str(stance.text[i]),
            stance_reasoned: stance_str(stance.reasoned[i]),
            stance_majority: stance_str(stance_majority),
            stance: stance_str(stance_majority),
            label_source: if provenance.all_offline {
                "offline"
            } else {
                "model"
            }
            .into(),
            provenance: if p.skip_exam && config.exam.enabled {
                format!("{} exam=skipped:empty-document", provenance.text)
            } else {
                provenance.text.clone()
            },
        });
    }
    labels
}

/// The pair's exam verdict: undecided when the exam skipped it, else the majority of its votes
/// (none without votes or with the exam disabled).
fn exam_verdict(
    config: &LabelConfig,
    pair: &Pair,
    votes: &[(exam::ExamVariant, Verdict)],
) -> Option<Verdict> {
    if !config.exam.enabled {
        None
    } else if pair.skip_exam {
        Some(Verdict::Undecided)
    } else if votes.is_empty() {
        None
    } else {
        let verdicts: Vec<Verdict> = votes.iter().map(|(_, v)| *v).collect();
        Some(exam::majority_verdict(&verdicts))
    }
}
