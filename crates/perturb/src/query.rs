//! The `query-perturbations` stage (RARE 5.1, Appendix C.1): four perturbed versions of every
//! question's query.
//!
//! - `character_level`: QWERTY typos and deletions on about `rate` of the letters ([`typos`]);
//! - `word_level`: WordNet synonyms for about `rate` of the words ([`synonyms`]);
//! - `grammar_perturbation`: the LLM task `query_grammar` ([`tasks`]);
//! - `irrelevant_info`: the LLM task `query_irrelevant`.
//!
//! Numbers, years, the entity names of the question's triplets and names the question writes are
//! never altered ([`protect`]); an LLM rewrite that loses one is not a candidate. Each kind has
//! several candidates; the one kept is the first whose embedding similarity to the original is
//! at least `min_similarity`, else the most similar ([`select_candidate`]). The rules' randomness
//! is seeded from the configured seed, the question id, the kind and the candidate index, so a
//! rebuild writes the same bytes and one question's perturbations do not depend on any other.
//!
//! [`typos`]: crate::typos
//! [`synonyms`]: crate::synonyms
//! [`tasks`]: crate::tasks
//! [`protect`]: crate::protect

use noisebench_index::vector::dot;
use std::collections::BTreeMap;

use noisebench_core::{
    ConfigError, DropReason, Drops, InputSpec, Inputs, OutputSpec, QueryPerturbation, Question,
    ShardKey, StageContext, StageError, StageFacts, StageOutput, StageReport, TableKind,
    TypedStage, stable_id,
};
use noisebench_llm::{Answer, Llm, LlmError, StageTasks, Task};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::protect::{keeps_protected, protected_mask, question_phrases};
use crate::similarity::{Distribution, round_similarity, select_candidate};
use crate::synonyms::{Synonyms, word_level};
use crate::tasks::{
    GRAMMAR_FIDELITY, IRRELEVANT_FIDELITY, QUERY_TASKS, QueryGrammar, QueryIrrelevant,
    RewriteInput, Rewrites,
};
use crate::typos::character_level;
use noisebench_llm::sense::Fidelity;

/// The four kinds, in RARE's order.
pub const KINDS: [&str; 4] = [
    "character_level",
    "word_level",
    "grammar_perturbation",
    "irrelevant_info",
];

/// Configuration of the `query-perturbations` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryPerturbationsConfig {
    /// The kinds to make: any of `character_level`, `word_level`, `grammar_perturbation`,
    /// `irrelevant_info` (RARE: all four).
    #[serde(default = "default_kinds")]
    pub kinds: Vec<String>,
    /// Share of the unprotected letters (`character_level`) or words (`word_level`) changed
    /// (RARE: 0.10). At least one is changed when any can be.
    #[serde(default = "default_rate")]
    pub rate: f64,
    /// Candidates made per question by each rule kind (RARE: up to 5).
    #[serde(default = "default_candidates")]
    pub candidates: usize,
    /// Rewrites asked of the LLM per question for each LLM kind (RARE: 3).
    #[serde(default = "default_llm_candidates")]
    pub llm_candidates: usize,
    /// The kept candidate is the first whose embedding cosine similarity to the original query
    /// is at least this (RARE: 0.85); when none is, the most similar.
    #[serde(default = "default_min_similarity")]
    pub min_similarity: f64,
    /// Seed of the rule kinds' randomness, combined with each question id, kind and candidate
    /// index.
    #[serde(default)]
    pub seed: u64,
}

fn default_kinds() -> Vec<String> {
    KINDS.iter().map(|k| k.to_string()).collect()
}
fn default_rate() -> f64 {
    0.10
}
fn default_candidates() -> usize {
    5
}
fn default_llm_candidates() -> usize {
    3
}
fn default_min_similarity() -> f64 {
    0.85
}

impl Default for QueryPerturbationsConfig {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({}))
            .unwrap_or_else(|_| unreachable!("all fields have defaults"))
    }
}

impl QueryPerturbationsConfig {
    fn wants(&self, kind: &str) -> bool {
        self.kinds.iter().any(|k| k == kind)
    }
}

/// The `query-perturbations` stage. Build with the run's [`Llm`].
#[derive(Debug, Clone)]
pub struct QueryPerturbationsStage {
    llm: Llm,
    tasks: StageTasks,
}

impl QueryPerturbationsStage {
    pub fn new(llm: Llm) -> Self {
        Self {
            tasks: StageTasks::new(llm.clone(), QUERY_TASKS),
            llm,
        }
    }
}

/// The random source of one candidate: a function of the seed, the question, the kind and the
/// candidate's index only.
pub(crate) fn candidate_rng(seed: u64, question_id: &str, kind: &str, index: usize) -> ChaCha8Rng {
    let id = stable_id(
        "seed",
        &[&seed.to_string(), question_id, kind, &index.to_string()],
    );
    let hex = id.rsplit('_').next().unwrap_or("0");
    ChaCha8Rng::seed_from_u64(u64::from_str_radix(hex, 16).unwrap_or(seed))
}

/// The candidates a rule kind makes for one query (distinct, each different from the query):
/// `candidates` seeded attempts of `character_level` or `word_level`.
pub fn rule_candidates(
    c: &QueryPerturbationsConfig,
    question_id: &str,
    query: &str,
    mask: &[bool],
    kind: &str,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in 0..c.candidates {
        let mut rng = candidate_rng(c.seed, question_id, kind, i);
        let p = match kind {
            "character_level" => character_level(query, mask, c.rate, &mut rng),
            _ => word_level(query, mask, c.rate, Synonyms::wordnet(), &mut rng),
        };
        if p.text != query && !out.contains(&p.text) {
            out.push(p.text);
        }
    }
    out
}

/// An LLM answer's usable rewrites: trimmed, non-empty, not the query itself, keeping every
/// protected piece of the query and its length and words as `fidelity` asks
/// ([`crate::tasks::faithful_rewrite`]), distinct, at most `n`.
pub(crate) fn usable_rewrites(
    query: &str,
    mask: &[bool],
    answer: &Rewrites,
    n: usize,
    fidelity: Fidelity,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &answer.rewrites {
        let r = r.trim();
        if r.is_empty() || r == query.trim() || out.iter().any(|o| o == r) {
            continue;
        }
        if keeps_protected(query, mask, r)
            && crate::tasks::faithful_rewrite(fidelity, query, r).is_ok()
        {
            out.push(r.to_string());
        }
        if out.len() == n {
            break;
        }
    }
    out
}

/// Items whose texts are embedded together (see [`distinct_texts`]).
const EMBED_SLICE: usize = 4096;

/// Per item, the place of its question's text and of each of its candidates among the texts.
type Places = Vec<(usize, Vec<usize>)>;

/// The distinct texts of `items` (each question's text, then its candidates), and their
/// [`Places`].
fn distinct_texts<'a>(items: &'a [Pending<'a>]) -> (Vec<&'a str>, Places) {
    let mut distinct = noisebench_core::DistinctTexts::default();
    let places = items
        .iter()
        .map(|p| {
            let original = distinct.place(&p.question.question);
            (
                original,
                p.candidates.iter().map(|c| distinct.place(c)).collect(),
            )
        })
        .collect();
    (distinct.into_texts(), places)
}

/// One question's candidates of one kind, waiting for their similarities.
struct Pending<'a> {
    question: &'a Question,
    kind: &'static str,
    candidates: Vec<String>,
    /// Who made them (rule and parameters, or model and prompt version).
    made_by: String,
}

/// What a run found, beyond its rows: the stage's facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct QueryPerturbationsSummary {
    pub questions: usize,
    /// Rows per kind.
    pub kept: BTreeMap<String, usize>,
    /// Similarity of the kept candidates, per kind.
    pub similarity: BTreeMap<String, Distribution>,
    /// Kept candidates below `min_similarity` (none of their kind passed), per kind.
    pub below_threshold: BTreeMap<String, usize>,
    /// Dropped (question, kind) items per reason.
    pub drops: BTreeMap<String, usize>,
    pub embedder: String,
}

impl QueryPerturbationsSummary {
    fn facts(&self) -> StageFacts {
        let per_kind: Vec<String> = self
            .kept
            .iter()
            .map(|(k, n)| {
                let s = &self.similarity[k];
                format!(
                    "{k} {n} (similarity median {:.3}, min {:.3}; {} below the threshold)",
                    s.median,
                    s.min,
                    self.below_threshold.get(k).copied().unwrap_or(0)
                )
            })
            .collect();
        let mut lines = vec![format!(
            "{} questions perturbed; kept per kind: {}; similarity by {}.",
            self.questions,
            if per_kind.is_empty() {
                "none".to_string()
            } else {
                per_kind.join(", ")
            },
            self.embedder
        )];
        if !self.drops.is_empty() {
            let reasons: Vec<String> = self.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
            lines.push(format!("Dropped: {}.", reasons.join(", ")));
        }
        StageFacts::new("Query perturbations", lines, self)
    }
}

fn drop_item(
    drops: &mut Drops,
    summary: &mut QueryPerturbationsSummary,
    question: &str,
    kind: &str,
    reason: impl Into<DropReason>,
    detail: impl Into<String>,
) {
    let reason = reason.into();
    *summary.drops.entry(reason.code().to_string()).or_default() += 1;
    drops.add(format!("{question}/{kind}"), reason, detail);
}

impl TypedStage for QueryPerturbationsStage {
    type Config = QueryPerturbationsConfig;
    const KIND: &'static str = "query-perturbations";
    const VERSION: u32 = 1;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("questions", TableKind::Questions)]
    }

    /// One question is one item.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![ShardKey::new("questions", "id")]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new(
            "query_perturbations",
            TableKind::QueryPerturbations,
        )]
    }

    fn validate(
        &self,
        c: &QueryPerturbationsConfig,
        _root: &std::path::Path,
    ) -> Result<(), ConfigError> {
        if c.kinds.is_empty() {
            return Err(ConfigError::new("kinds", "name at least one kind"));
        }
        if let Some(k) = c.kinds.iter().find(|k| !KINDS.contains(&k.as_str())) {
            return Err(ConfigError::new(
                "kinds",
                format!("unknown kind `{k}`; known: {}", KINDS.join(", ")),
            ));
        }
        if !(c.rate > 0.0 && c.rate <= 1.0) {
            return Err(ConfigError::new("rate", "must be in (0, 1]"));
        }
        if !(1..=20).contains(&c.candidates) {
            return Err(ConfigError::new("candidates", "must be between 1 and 20"));
        }
        if !(1..=10).contains(&c.llm_candidates) {
            return Err(ConfigError::new(
                "llm_candidates",
                "must be between 1 and 10",
            ));
        }
        if !(-1.0..=1.0).contains(&c.min_similarity) {
            return Err(ConfigError::new("min_similarity", "must be in [-1, 1]"));
        }
        self.tasks.require()
    }

    fn environment(&self) -> serde_json::Value {
        self.tasks.fingerprint()
    }

    fn tasks(&self) -> Vec<&'static str> {
        self.tasks.names()
    }

    fn run(
        &self,
        c: &QueryPerturbationsConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let mut questions: Vec<Question> = inputs.take("questions")?;
        noisebench_core::sort_by_id(&mut questions);
        let stage = ctx.stage_id.as_str();
        let mut drops = Drops::new(stage);
        let mut summary = QueryPerturbationsSummary {
            questions: questions.len(),
            embedder: self.llm.embedder_name(),
            ..QueryPerturbationsSummary::default()
        };
        // Masks and rule candidates are pure per question: worked out on every core.
        let threads = noisebench_core::default_threads();
        let masks: Vec<Vec<bool>> = noisebench_core::parallel_map(&questions, threads, |q| {
            protected_mask(&q.question, &question_phrases(q))
        });
        let pairs: Vec<(&Question, &Vec<bool>)> = questions.iter().zip(&masks).collect();

        let mut pending: Vec<Pending<'_>> = Vec::new();
        for kind in ["character_level", "word_level"] {
            if !c.wants(kind) {
                continue;
            }
            let bar = ctx.progress.bar(kind, Some(questions.len() as u64));
            let all = noisebench_core::parallel_map(&pairs, threads, |(q, mask)| {
                rule_candidates(c, &q.id, &q.question, mask, kind)
            });
            for ((q, _), candidates) in pairs.iter().zip(all) {
                if candidates.is_empty() {
                    drop_item(
                        &mut drops,
                        &mut summary,
                        &q.id,
                        kind,
                        "nothing_to_perturb",
                        "every letter or word of the query is protected or has no substitute",
                    );
                } else {
                    pending.push(Pending {
                        question: q,
                        kind,
                        made_by: format!(
                            "rule:{kind} (rate {}, seed {}, {} candidates)",
                            c.rate, c.seed, c.candidates
                        ),
                        candidates,
                    });
                }
                bar.inc(1);
            }
            bar.finish();
        }
        if c.wants("grammar_perturbation") {
            let answers = self.ask::<QueryGrammar>(stage, ctx, c, &questions);
            self.collect(
                c,
                "grammar_perturbation",
                &questions,
                &masks,
                answers,
                &mut pending,
                &mut drops,
                &mut summary,
            );
        }
        if c.wants("irrelevant_info") {
            let answers = self.ask::<QueryIrrelevant>(stage, ctx, c, &questions);
            self.collect(
                c,
                "irrelevant_info",
                &questions,
                &masks,
                answers,
                &mut pending,
                &mut drops,
                &mut summary,
            );
        }

        let mut rows = self.scored_rows(c, stage, &pending, &mut drops, &mut summary);
        noisebench_core::sort_by_id(&mut rows);
        let mut by_kind: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in &rows {
            by_kind
                .entry(r.kind.clone())
                .or_default()
                .push(r.similarity);
        }
        for (k, sims) in by_kind {
            summary.kept.insert(k.clone(), sims.len());
            summary.similarity.insert(k, Distribution::of(&sims));
        }
        // An item is one (question, kind): each becomes a row or a counted drop, so the funnel adds up
        // (a question's item count depends on its kinds and chunks, not one per question).
        let report = StageReport {
            items_in: (rows.len() + drops.dropped()) as u64,
            items_out: rows.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput::new(report)
            .with_table("query_perturbations", rows)
            .with_facts(summary.facts()))
    }
}

impl QueryPerturbationsStage {
    /// Each pending item's candidate most similar to its question (above `min_similarity` if
    /// any is) as a row; a failed embedding drops the items of its slice.
    fn scored_rows(
        &self,
        c: &QueryPerturbationsConfig,
        stage: &str,
        pending: &[Pending<'_>],
        drops: &mut Drops,
        summary: &mut QueryPerturbationsSummary,
    ) -> Vec<QueryPerturbation> {
        let mut rows = Vec::new();
        // A slice of items at a time, each distinct text of it embedded once (a question's text
        // serves all its kinds): every candidate's vector at once would be gigabytes at RARE's
        // scale.
        for slice in pending.chunks(EMBED_SLICE) {
            let (texts, places) = distinct_texts(slice);
            match self.llm.embed(stage, &texts) {
                Ok(e) => {
                    for (p, (original, candidates)) in slice.iter().zip(&places) {
                        let original = &e.vectors[*original];
                        let sims: Vec<f32> = candidates
                            .iter()
                            .map(|&i| dot(original, &e.vectors[i]))
                            .collect();
                        let pick = select_candidate(&sims, c.min_similarity);
                        let similarity = round_similarity(sims[pick]);
                        if similarity < c.min_similarity {
                            *summary.below_threshold.entry(p.kind.into()).or_default() += 1;
                        }
                        let text = &p.candidates[pick];
                        rows.push(QueryPerturbation {
                            id: stable_id("qpert", &[&p.question.id, p.kind, text]),
                            question_id: p.question.id.clone(),
                            kind: p.kind.to_string(),
                            perturbed_query: text.clone(),
                            similarity,
                            provenance: format!(
                                "{}; candidate {} of {}; similarity by {}",
                                p.made_by,
                                pick + 1,
                                p.candidates.len(),
                                e.provenance
                            ),
                        });
                    }
                }
                Err(e) => {
                    for p in slice {
                        drop_item(
                            drops,
                            summary,
                            &p.question.id,
                            p.kind,
                            e.as_drop_reason(),
                            e.to_string(),
                        );
                    }
                }
            }
        }
        rows
    }

    fn ask<T: Task<Input = RewriteInput, Output = Rewrites>>(
        &self,
        stage: &str,
        ctx: &StageContext,
        c: &QueryPerturbationsConfig,
        questions: &[Question],
    ) -> Vec<Result<Answer<Rewrites>, LlmError>> {
        let inputs: Vec<RewriteInput> = questions
            .iter()
            .map(|q| RewriteInput {
                query: q.question.clone(),
                candidates: c.llm_candidates,
            })
            .collect();
        let bar = ctx.progress.bar(T::NAME, Some(inputs.len() as u64));
        let answers = self
            .llm
            .run_batch_with_progress::<T>(stage, inputs, bar.as_ref());
        bar.finish();
        answers
    }

    /// The LLM kind's usable rewrites per question, as pending candidates; failures and answers
    /// with nothing usable as drops.
    #[allow(clippy::too_many_arguments)]
    fn collect<'a>(
        &self,
        c: &QueryPerturbationsConfig,
        kind: &'static str,
        questions: &'a [Question],
        masks: &[Vec<bool>],
        answers: Vec<Result<Answer<Rewrites>, LlmError>>,
        pending: &mut Vec<Pending<'a>>,
        drops: &mut Drops,
        summary: &mut QueryPerturbationsSummary,
    ) {
        for ((q, mask), answer) in questions.iter().zip(masks).zip(answers) {
            match answer {
                Err(e) => drop_item(
                    drops,
                    summary,
                    &q.id,
                    kind,
                    e.as_drop_reason(),
                    e.to_string(),
                ),
                Ok(a) => {
                    let fidelity = if kind == "irrelevant_info" {
                        IRRELEVANT_FIDELITY
                    } else {
                        GRAMMAR_FIDELITY
                    };
                    let candidates =
                        usable_rewrites(&q.question, mask, &a.value, c.llm_candidates, fidelity);
                    if candidates.is_empty() {
                        let shown: Vec<String> = a
                            .value
                            .rewrites
                            .iter()
                            .take(3)
                            .map(|r| r.chars().take(160).collect())
                            .collect();
                        drop_item(
                            drops,
                            summary,
                            &q.id,
                            kind,
                            "no_usable_rewrite",
                            format!(
                                "every rewrite was empty, the query itself, lost a name or number, or much of the query's length or words: {shown:?}"
                            ),
                        );
                    } else {
                        pending.push(Pending {
                            question: q,
                            kind,
                            made_by: format!("{} (prompt {})", a.provenance, a.prompt_version),
                            candidates,
                        });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_distinct_text_of_a_slice_is_embedded_once() {
        let q = |id: &str, text: &str| Question {
            id: id.into(),
            question: text.into(),
            ..Question::default()
        };
        let (a, b) = (q("q1", "What rose?"), q("q2", "What fell?"));
        let item = |question, kind, candidates: &[&str]| Pending {
            question,
            kind,
            candidates: candidates.iter().map(|c| c.to_string()).collect(),
            made_by: String::new(),
        };
        let items = [
            item(&a, "character_level", &["Wht rose?", "What rse?"]),
            item(&b, "character_level", &["What fel?"]),
            item(&a, "word_level", &["What climbed?", "Wht rose?"]),
        ];
        let (texts, places) = distinct_texts(&items);
        assert_eq!(
            texts,
            [
                "What rose?",
                "Wht rose?",
                "What rse?",
                "What fell?",
                "What fel?",
                "What climbed?"
            ]
        );
        assert_eq!(places, [(0, vec![1, 2]), (3, vec![4]), (0, vec![5, 1])]);
        // Every item's texts are where its places say.
        for (p, (original, candidates)) in items.iter().zip(&places) {
            assert_eq!(texts[*original], p.question.question);
            for (c, &at) in p.candidates.iter().zip(candidates) {
                assert_eq!(texts[at], c);
            }
        }
    }

    #[test]
    fn defaults_follow_rare_and_unknown_fields_are_refused() {
        let c = QueryPerturbationsConfig::default();
        assert_eq!(
            (c.rate, c.candidates, c.llm_candidates, c.min_similarity),
            (0.10, 5, 3, 0.85)
        );
        assert_eq!(c.kinds.len(), 4);
        assert!(
            serde_json::from_value::<QueryPerturbationsConfig>(serde_json::json!({"ratio": 0.1}))
                .is_err()
        );
        let stage = QueryPerturbationsStage::new(Llm::offline());
        let bad = QueryPerturbationsConfig {
            kinds: vec!["typos".into()],
            ..QueryPerturbationsConfig::default()
        };
        assert_eq!(
            stage
                .validate(&bad, std::path::Path::new("."))
                .unwrap_err()
                .field,
            "kinds"
        );
        let bad = QueryPerturbationsConfig {
            rate: 0.0,
            ..QueryPerturbationsConfig::default()
        };
        assert_eq!(
            stage
                .validate(&bad, std::path::Path::new("."))
                .unwrap_err()
                .field,
            "rate"
        );
    }

    #[test]
    fn candidates_are_seeded_per_question_kind_and_index() {
        let c = QueryPerturbationsConfig::default();
        let q =
            "Which company did Northwind Logistics acquire in 2021 to expand its freight network?";
        let mask = protected_mask(q, &["Northwind Logistics"]);
        let a = rule_candidates(&c, "q1", q, &mask, "character_level");
        assert_eq!(a, rule_candidates(&c, "q1", q, &mask, "character_level"));
        assert_ne!(a, rule_candidates(&c, "q2", q, &mask, "character_level"));
        assert!(a.len() >= 4, "{a:?}");
        for cand in a
            .iter()
            .chain(&rule_candidates(&c, "q1", q, &mask, "word_level"))
        {
            assert!(
                cand.contains("Northwind Logistics") && cand.contains("2021"),
                "{cand}"
            );
        }
    }

    #[test]
    fn rewrites_losing_names_or_repeating_the_query_are_not_candidates() {
        let q = "What did Northwind Logistics pay in 2021?";
        let mask = protected_mask(q, &["Northwind Logistics"]);
        let answer = Rewrites {
            rewrites: vec![
                q.into(),
                " ".into(),
                "What did Northwind pay in 2021?".into(),
                "In 2021, what did Northwind Logistics pay?".into(),
                "In 2021, what did Northwind Logistics pay?".into(),
                "What was paid by Northwind Logistics in 2021?".into(),
            ],
        };
        assert_eq!(
            usable_rewrites(q, &mask, &answer, 5, GRAMMAR_FIDELITY),
            [
                "In 2021, what did Northwind Logistics pay?",
                "What was paid by Northwind Logistics in 2021?"
            ]
        );
        assert_eq!(
            usable_rewrites(q, &mask, &answer, 1, GRAMMAR_FIDELITY).len(),
            1
        );
        // A one-word rewrite keeps nothing of the question.
        let short = Rewrites {
            rewrites: vec!["Northwind Logistics 2021".into()],
        };
        assert!(usable_rewrites(q, &mask, &short, 5, GRAMMAR_FIDELITY).is_empty());
    }
}
