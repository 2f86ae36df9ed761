//! The `queries` stage: search queries per claim.
//!
//! Kinds: `keywords` (LLM task `keywords`, RAGuard 3.2), `question` (LLM task
//! `claim_to_question`, CONF-FACT 3.2), `claim` (the claim text itself). With `counter = true`,
//! counter-evidence queries follow CounterRefine 3.3: the LLM drafts a verdict for the claim with
//! no documents (task `exam_verdict` with no document), and a query conditioned on that draft is
//! added to surface documents arguing the other way: the claim's keywords plus terms that look
//! for refutations of a `true` draft, or confirmations of a `false` draft (both when undecided).

use std::collections::BTreeSet;

use noisebench_core::vocab::{Verdict, exam};
use noisebench_core::{
    Claim, ConfigError, Drops, InputSpec, Inputs, OutputSpec, Query, ShardKey, StageContext,
    StageError, StageOutput, StageReport, TableKind, TypedStage, stable_id,
};
use noisebench_llm::{Answer, Llm, LlmError, StageTasks, Task, TaskInfo};

use crate::query_tasks::{
    ClaimToQuestion, ClaimToQuestionInput, ClaimToQuestionOutput, ExamVerdict, Keywords,
    KeywordsInput, TASKS,
};
use schemars::JsonSchema;
use serde::Deserialize;

pub const KINDS: &[&str] = &["keywords", "question", "claim"];

/// Configuration of the `queries` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueriesConfig {
    /// Query kinds per claim, in order: `keywords`, `question`, `claim`.
    #[serde(default = "default_kinds")]
    pub kinds: Vec<String>,
    /// At most this many keywords in a `keywords` query.
    #[serde(default = "default_max_keywords")]
    pub max_keywords: usize,
    /// Add CounterRefine-style counter-evidence queries (kind `counter`).
    #[serde(default)]
    pub counter: bool,
    /// Terms added to look for refutations when the draft verdict is `true`.
    #[serde(default = "default_refute_terms")]
    pub refute_terms: String,
    /// Terms added to look for confirmations when the draft verdict is `false`.
    #[serde(default = "default_support_terms")]
    pub support_terms: String,
    /// What an undecided draft gives: `both` directions or `none`.
    #[serde(default = "default_undecided")]
    pub undecided: String,
}

fn default_kinds() -> Vec<String> {
    vec!["keywords".into()]
}
fn default_max_keywords() -> usize {
    5
}
fn default_refute_terms() -> String {
    "false debunked".into()
}
fn default_support_terms() -> String {
    "true confirmed".into()
}
fn default_undecided() -> String {
    "both".into()
}

impl Default for QueriesConfig {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({}))
            .unwrap_or_else(|_| unreachable!("all fields have defaults"))
    }
}

/// The `queries` stage. Build with the run's [`Llm`].
#[derive(Debug, Clone)]
pub struct QueriesStage {
    llm: Llm,
    tasks: StageTasks,
}

impl QueriesStage {
    pub fn new(llm: Llm) -> Self {
        Self {
            tasks: StageTasks::new(llm.clone(), TASKS),
            llm,
        }
    }
}

fn query_row(
    claim_id: &str,
    kind: &str,
    text: &str,
    provenance: String,
    llm_request: Option<String>,
) -> Query {
    Query {
        id: stable_id("q", &[claim_id, kind, text]),
        claim_id: claim_id.to_string(),
        kind: kind.to_string(),
        text: text.to_string(),
        provenance,
        llm_request,
    }
}

impl TypedStage for QueriesStage {
    type Config = QueriesConfig;
    const KIND: &'static str = "queries";
    const VERSION: u32 = 1;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("claims", TableKind::Claims)]
    }

    /// One claim is one item: its queries come from it alone.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![ShardKey::new("claims", "id")]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("queries", TableKind::Queries)]
    }

    fn validate(&self, c: &QueriesConfig, _root: &std::path::Path) -> Result<(), ConfigError> {
        if c.kinds.is_empty() && !c.counter {
            return Err(ConfigError::new(
                "kinds",
                "at least one kind, or counter = true",
            ));
        }
        for (i, k) in c.kinds.iter().enumerate() {
            if !KINDS.contains(&k.as_str()) {
                return Err(ConfigError::new(
                    format!("kinds[{i}]"),
                    format!("unknown kind `{k}` (known: {})", KINDS.join(", ")),
                ));
            }
        }
        if c.max_keywords == 0 {
            return Err(ConfigError::new("max_keywords", "must be at least 1"));
        }
        if !matches!(c.undecided.as_str(), "both" | "none") {
            return Err(ConfigError::new("undecided", "`both` or `none`"));
        }
        // The prompts of the tasks this configuration calls must be there before any work.
        let kinds: BTreeSet<&str> = c.kinds.iter().map(String::as_str).collect();
        let mut used = Vec::new();
        if kinds.contains("keywords") || c.counter {
            used.push(TaskInfo::of::<Keywords>());
        }
        if kinds.contains("question") {
            used.push(TaskInfo::of::<ClaimToQuestion>());
        }
        if c.counter {
            used.push(TaskInfo::of::<ExamVerdict>());
        }
        self.tasks.require_only(&used)
    }

    fn environment(&self) -> serde_json::Value {
        self.tasks.fingerprint()
    }

    fn tasks(&self) -> Vec<&'static str> {
        self.tasks.names()
    }

    fn run(
        &self,
        c: &QueriesConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let claims: Vec<Claim> = inputs.take("claims")?;
        let stage = ctx.stage_id.as_str();
        let mut drops = Drops::new(stage);
        let usable: Vec<&Claim> = claims
            .iter()
            .filter(|cl| {
                let empty = cl.text.trim().is_empty();
                if empty {
                    drops.add(&cl.id, "empty_claim", "the claim has no text");
                }
                !empty
            })
            .collect();
        let kinds: BTreeSet<&str> = c.kinds.iter().map(String::as_str).collect();
        let need_keywords = kinds.contains("keywords") || c.counter;
        let keywords = self.ask::<Keywords>(ctx, "keywords", need_keywords, &usable, |cl| {
            KeywordsInput {
                claim: cl.text.clone(),
                max_keywords: c.max_keywords,
            }
        });
        let questions = self.ask::<ClaimToQuestion>(
            ctx,
            "questions",
            kinds.contains("question"),
            &usable,
            |cl| ClaimToQuestionInput {
                claim: cl.text.clone(),
                claim_date: cl.claim_date.clone(),
                speaker: cl.speaker.clone(),
            },
        );
        let drafts = self.ask::<ExamVerdict>(ctx, "counter drafts", c.counter, &usable, |cl| {
            exam::Input::zero_context(&cl.text, cl.claim_date.as_deref())
        });

        let mut rows = Vec::new();
        for (i, cl) in usable.iter().enumerate() {
            let kw_text = keywords.get(i).map(|r| match r {
                Ok(a) => {
                    let text = a
                        .value
                        .keywords
                        .iter()
                        .map(|k| k.trim())
                        .filter(|k| !k.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ");
                    Ok((text, a.provenance.clone(), a.request_hash.clone()))
                }
                Err(e) => Err(e.clone()),
            });
            for kind in &c.kinds {
                kind_row(cl, kind, &kw_text, questions.get(i), &mut rows, &mut drops);
            }
            if c.counter {
                let base = match &kw_text {
                    Some(Ok((text, _, _))) if !text.is_empty() => text.clone(),
                    _ => cl.text.trim().to_string(),
                };
                counter_rows(c, cl, &base, drafts.get(i), &mut rows, &mut drops);
            }
        }
        // One row per id (the same kind and text for one claim is one query).
        let mut seen = BTreeSet::new();
        rows.retain(|q: &Query| seen.insert(q.id.clone()));
        let report = StageReport {
            items_in: claims.len() as u64,
            items_out: rows.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput {
            report,
            ..StageOutput::default()
        }
        .with_table("queries", rows))
    }
}

impl QueriesStage {
    /// Task `T` asked for every usable claim when `wanted`, with a progress bar; else nothing.
    fn ask<T: Task>(
        &self,
        ctx: &StageContext,
        label: &str,
        wanted: bool,
        claims: &[&Claim],
        input: impl Fn(&Claim) -> T::Input,
    ) -> Vec<Result<Answer<T::Output>, LlmError>> {
        if !wanted {
            return Vec::new();
        }
        let bar = ctx
            .progress
            .bar(&format!("queries: {label}"), Some(claims.len() as u64));
        let answers = self.llm.run_batch_with_progress::<T>(
            ctx.stage_id.as_str(),
            claims.iter().map(|cl| input(cl)).collect(),
            bar.as_ref(),
        );
        bar.finish();
        answers
    }
}

/// A claim's keywords joined, with their provenance and request hash, or why they failed.
type KeywordText = Option<Result<(String, String, String), LlmError>>;

/// The query of one `kind` for a claim (`keywords`, `question`, or the claim itself), or the
/// drop of an empty or failed answer.
fn kind_row(
    cl: &Claim,
    kind: &str,
    kw_text: &KeywordText,
    question: Option<&Result<Answer<ClaimToQuestionOutput>, LlmError>>,
    rows: &mut Vec<Query>,
    drops: &mut Drops,
) {
    let item = |kind: &str| format!("{}:{kind}", cl.id);
    match kind {
        "keywords" => match kw_text {
            Some(Ok((text, prov, hash))) if !text.is_empty() => rows.push(query_row(
                &cl.id,
                "keywords",
                text,
                prov.clone(),
                Some(hash.clone()),
            )),
            Some(Ok(_)) => drops.add(item("keywords"), "empty_query", "no keywords"),
            Some(Err(e)) => drops.add(item("keywords"), e.as_drop_reason(), e.to_string()),
            None => {}
        },
        "question" => match question {
            Some(Ok(a)) if !a.value.question.trim().is_empty() => rows.push(query_row(
                &cl.id,
                "question",
                a.value.question.trim(),
                a.provenance.clone(),
                Some(a.request_hash.clone()),
            )),
            Some(Ok(_)) => drops.add(item("question"), "empty_query", "empty question"),
            Some(Err(e)) => drops.add(item("question"), e.as_drop_reason(), e.to_string()),
            None => {}
        },
        _ => rows.push(query_row(
            &cl.id,
            "claim",
            cl.text.trim(),
            "rule".into(),
            None,
        )),
    }
}

/// The counter queries of a claim: `base` with the terms that argue against its draft verdict
/// (both sets for an undecided draft when so configured, else a drop).
fn counter_rows(
    c: &QueriesConfig,
    cl: &Claim,
    base: &str,
    draft: Option<&Result<Answer<serde_json::Value>, LlmError>>,
    rows: &mut Vec<Query>,
    drops: &mut Drops,
) {
    let item = format!("{}:counter", cl.id);
    match draft {
        // The engine checked that the reply holds a verdict.
        Some(Ok(draft)) => {
            let verdict = Verdict::in_reply(&draft.value).unwrap_or(Verdict::Undecided);
            let terms: Vec<&str> = match verdict {
                Verdict::True => vec![&c.refute_terms],
                Verdict::False => vec![&c.support_terms],
                Verdict::Undecided if c.undecided == "both" => {
                    vec![&c.refute_terms, &c.support_terms]
                }
                Verdict::Undecided => Vec::new(),
            };
            if terms.is_empty() {
                drops.add(item, "undecided_draft", "the draft verdict is undecided");
            }
            for t in terms {
                let text = format!("{base} {}", t.trim());
                rows.push(query_row(
                    &cl.id,
                    "counter",
                    text.trim(),
                    format!("{} (draft {verdict})", draft.provenance),
                    Some(draft.request_hash.clone()),
                ));
            }
        }
        Some(Err(e)) => drops.add(item, e.as_drop_reason(), e.to_string()),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// An `openai` layer over a prompts directory holding only `keywords.md`.
    fn llm_with_keywords_prompt_only(dir: &Path) -> Llm {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        std::fs::copy(repo.join("keywords.md"), dir.join("keywords.md")).unwrap();
        Llm::from_value(
            &serde_json::json!({"backend": "openai", "model": "m", "prompts_dir": dir,
                "cache": {"mode": "off"}, "embeddings": {"backend": "hashed"},
                "models": {"m": {"endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}}}),
            Path::new("/"),
        )
        .unwrap()
    }

    #[test]
    fn the_configuration_check_needs_the_prompts_of_the_tasks_it_uses_only() {
        let dir = tempfile::tempdir().unwrap();
        let stage = QueriesStage::new(llm_with_keywords_prompt_only(dir.path()));
        let config = |v: serde_json::Value| -> QueriesConfig { serde_json::from_value(v).unwrap() };
        stage
            .validate(
                &config(serde_json::json!({"kinds": ["keywords", "claim"]})),
                dir.path(),
            )
            .unwrap();
        let e = stage
            .validate(
                &config(serde_json::json!({"kinds": ["keywords"], "counter": true})),
                dir.path(),
            )
            .unwrap_err();
        assert_eq!(e.field, "llm");
        assert!(
            e.message.contains("no template for exam_verdict"),
            "{}",
            e.message
        );
        // The fingerprint covers every task the stage may call, whatever the configuration.
        let fp = stage.environment();
        let tasks: Vec<&String> = fp["tasks"].as_object().unwrap().keys().collect();
        assert_eq!(tasks, ["claim_to_question", "exam_verdict", "keywords"]);
    }
}
