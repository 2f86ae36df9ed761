//! CONF-FACT's evaluation (sections 4.1-4.3, Appendix C and G): fact-checking with retrieved
//! evidence from sources of varying credibility, as yes/no questions answered from the top-K
//! ranked passages, by eleven methods.
//!
//! Every claim of [`EvalData::claims`] is an item. Its question is the claim's own
//! (`claim.question`), else `Is it true that <claim text without its final punctuation>?`; gold
//! is `yes` when the verdict is true, else `no`. Its evidence: the claim's documents (those of
//! `claim.documents`, in that order, then any other document whose `claim_id` is the claim's)
//! split into passages of at most `passage_words` words ([`split_passages`]), each with its
//! source's background (`background_of`). Passages are ranked by BM25 with the question as
//! query, over the claim's passages only (one in-RAM index per claim); every passage ranks, those
//! sharing no term with the question last, ties by passage id.
//!
//! | method | passages | how the model is asked |
//! |---|---|---|
//! | `direct`, `cot`, `discern` | BM25 top-K | one ask: `Style::Direct`, `ChainOfThought`, `Discern` |
//! | `majority_vote` | BM25 top-K | one `Direct` ask per passage; the majority of the votes |
//! | `source_filtering` | documents rated `low` (or with no level, scored below `gamma`) dropped, the rest re-indexed, top-K | as `direct` |
//! | `cw_soft`, `cw_hard` | all passages by eq. 2, top-K | as `direct` |
//! | `sba_direct`, `sba_cot`, `sba_exp` | BM25 top-K, backgrounds shown | `Direct`, `ChainOfThought`, `Discern` |
//! | `sba_ensemble` | BM25 top-K, backgrounds shown | one `ChainOfThought` ask per passage, then one `confact_ensemble` call |
//!
//! Credibility weighting ranks by `s = s_rel + beta * s_cred` where `s_rel` is the passage's
//! BM25 score min-max normalised over the claim's passages: eq. 2 adds `beta * s_cred`, a number
//! in (0, 1), to relevance, and raw BM25 scores (often 5 to 20) would swamp it, so both terms
//! are brought to the same scale. `s_cred` is the document's score, else the score of its level
//! ([`ConfactConfig::level_scores`]), else [`ConfactConfig::missing_score`]; CW_hard maps it to
//! 1 when at least `gamma`, else 0.
//!
//! Majority vote: votes that do not parse as yes or no do not vote; the majority wins; a tie goes
//! to the vote of the best-ranked passage; no valid vote leaves the item without an answer
//! (out of scope, wrong). Its `raw_answer` is the JSON list of the votes' answers, its
//! `prompt_hash` the sha256 of the votes' request hashes joined by newlines. In majority vote and
//! the ensemble, an item any of whose calls failed is failed (a missing vote could change the
//! outcome).
//!
//! Source credibility: the seven methods of [`CREDIBILITY_METHODS`] read it. When no document of
//! the claims has any (no level, score or background), [`crate::evaluate`] does not run them and
//! says why in `skipped`; when some lack it, each of their outcomes counts those documents as
//! problem `no_credibility` (they take `missing_score` and the missing-background sentence).
//!
//! A claim with no passages (no documents, or only empty ones) is asked with no passages (the
//! model answers from memory; majority vote and the ensemble make that one ask and take its
//! answer) and counted as `no_evidence` in every outcome; a claim whose documents source
//! filtering drops entirely is asked with none and counted as `filtered_all`. Other problems:
//! `out_of_scope`, `empty_answer`, `llm_<reason>`, `missing_document` (a listed document not in
//! the data), `index_error`, `unknown_method`, `no_items`. Items are grouped by `conflict`
//! (`yes` when the claim's documents are labelled both supporting and misleading, `no` when they
//! are labelled otherwise, no group without labels). Metrics: accuracy (overall and per
//! `conflict`) and macro-F1, with bootstrap intervals.

mod ensemble;
mod passages;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use noisebench_llm::{Llm, LlmError, TaskInfo};
use serde::{Deserialize, Serialize};

pub use ensemble::Candidate;
pub(crate) use ensemble::{ConfactEnsemble, EnsembleInput};
pub use passages::{
    ClaimIndex, Weighted, credibility_score, min_max, split_passages, weighted_order,
};
pub(crate) use passages::{MISSING_BACKGROUND, filtered_out};

use crate::answers::parse_binary;
use crate::data::{DocLabel, EvalClaim, EvalData, EvalDocument};
use crate::generate::{
    AnswerForm, AnswerOutput, Ask, Generated, Generator, Passage, Retriever, Style,
};
use crate::metrics::Bootstrap;
use crate::outcome::{Scored, TaskOutcome};

/// The methods, in the paper's order (Table 2).
pub const METHODS: [&str; 11] = [
    "direct",
    "majority_vote",
    "discern",
    "cot",
    "source_filtering",
    "cw_soft",
    "cw_hard",
    "sba_direct",
    "sba_cot",
    "sba_exp",
    "sba_ensemble",
];

/// The methods that use source credibility: they are not run when no document has any, and
/// count the documents without any as problem `no_credibility`.
pub const CREDIBILITY_METHODS: [&str; 7] = [
    "source_filtering",
    "cw_soft",
    "cw_hard",
    "sba_direct",
    "sba_cot",
    "sba_exp",
    "sba_ensemble",
];

/// (with credibility, without) among the distinct documents of `data`'s claims.
pub(crate) fn claim_documents_with_credibility(data: &EvalData) -> (usize, usize) {
    let claims: BTreeSet<&str> = data.claims.iter().map(|c| c.id.as_str()).collect();
    let listed: BTreeSet<&str> = data
        .claims
        .iter()
        .flat_map(|c| c.documents.iter().map(String::as_str))
        .collect();
    let (mut with, mut without) = (0, 0);
    for d in &data.documents {
        let of_claim = listed.contains(d.id.as_str())
            || d.claim_id.as_deref().is_some_and(|c| claims.contains(c));
        if of_claim {
            if d.credibility.is_known() {
                with += 1;
            } else {
                without += 1;
            }
        }
    }
    (with, without)
}

const YES: &str = "yes";
const NO: &str = "no";

/// The CONF-FACT evaluation's settings (defaults: the paper's, Appendix C).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ConfactConfig {
    /// Most words in a passage.
    pub passage_words: usize,
    /// Passages shown to the model (K).
    pub top_k: usize,
    /// Weight of credibility against relevance in eq. 2.
    pub beta: f64,
    /// CW_hard's credibility threshold; also source filtering's, for documents with a score
    /// but no level.
    pub gamma: f64,
    /// `s_cred` of a document with a level (`high`, `medium`, `low`) but no score.
    pub level_scores: BTreeMap<String, f64>,
    /// `s_cred` of a document with neither score nor level.
    pub missing_score: f64,
    /// The methods to run, in output order ([`METHODS`]).
    pub methods: Vec<String>,
}

impl Default for ConfactConfig {
    fn default() -> Self {
        ConfactConfig {
            passage_words: 256,
            top_k: 5,
            beta: 0.8,
            gamma: 0.3,
            level_scores: [("high", 0.9), ("medium", 0.5), ("low", 0.1)]
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            missing_score: 0.5,
            methods: METHODS.iter().map(|m| m.to_string()).collect(),
        }
    }
}

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfactError {
    #[error("confact.methods: unknown method `{0}` (known: {known})", known = METHODS.join(", "))]
    UnknownMethod(String),
    #[error("confact.methods: `{0}` is listed twice")]
    DuplicateMethod(String),
    #[error("confact.{field}: {message}")]
    BadValue {
        field: &'static str,
        message: String,
    },
}

impl ConfactConfig {
    /// Check the settings before any work: known methods, each once; positive sizes; finite
    /// weights; scores within [0, 1].
    pub fn validate(&self) -> Result<(), ConfactError> {
        let mut seen = BTreeSet::new();
        for m in &self.methods {
            if !METHODS.contains(&m.as_str()) {
                return Err(ConfactError::UnknownMethod(m.clone()));
            }
            if !seen.insert(m.as_str()) {
                return Err(ConfactError::DuplicateMethod(m.clone()));
            }
        }
        let bad = |field, message: &str| ConfactError::BadValue {
            field,
            message: message.into(),
        };
        if self.passage_words == 0 {
            return Err(bad("passage_words", "must be at least 1"));
        }
        if self.top_k == 0 {
            return Err(bad("top_k", "must be at least 1"));
        }
        if !self.beta.is_finite() || self.beta < 0.0 {
            return Err(bad("beta", "must be a finite number, at least 0"));
        }
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        if !unit(self.gamma) {
            return Err(bad("gamma", "must be within [0, 1]"));
        }
        if !unit(self.missing_score) {
            return Err(bad("missing_score", "must be within [0, 1]"));
        }
        if let Some((level, _)) = self.level_scores.iter().find(|(_, v)| !unit(**v)) {
            return Err(ConfactError::BadValue {
                field: "level_scores",
                message: format!("the score of `{level}` must be within [0, 1]"),
            });
        }
        Ok(())
    }
}

/// The LLM tasks this module calls itself (the generator declares its own).
pub fn tasks() -> Vec<TaskInfo> {
    vec![TaskInfo::of::<ConfactEnsemble>()]
}

/// The yes/no question of a claim: its own, else `Is it true that <claim>?`.
pub fn question_of(claim: &EvalClaim) -> String {
    if let Some(q) = claim
        .question
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
    {
        return q.to_string();
    }
    let text = claim
        .text
        .trim()
        .trim_end_matches(['.', '!', '?', ' '])
        .trim();
    format!("Is it true that {text}?")
}

/// A claim's documents: those listed in `claim.documents` in that order, then the others whose
/// `claim_id` is the claim's, in data order; and how many listed ids are not in the data.
fn claim_documents<'a>(
    claim: &EvalClaim,
    by_id: &BTreeMap<&str, &'a EvalDocument>,
    data: &'a EvalData,
) -> (Vec<&'a EvalDocument>, usize) {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut missing = 0;
    for id in &claim.documents {
        match by_id.get(id.as_str()) {
            Some(d) if seen.insert(d.id.as_str()) => out.push(*d),
            Some(_) => {}
            None => missing += 1,
        }
    }
    for d in &data.documents {
        if d.claim_id.as_deref() == Some(claim.id.as_str()) && seen.insert(d.id.as_str()) {
            out.push(d);
        }
    }
    (out, missing)
}

/// One claim, ready to ask: its question, gold answer and the passages each method shows.
struct Item<'a> {
    claim: &'a EvalClaim,
    question: String,
    gold: &'static str,
    conflict: Option<&'static str>,
    /// Whether the claim has any passage at all.
    has_evidence: bool,
    index: Arc<ClaimIndex>,
    /// BM25 top-K over all passages.
    top: Vec<Passage>,
    /// Source filtering's index and top-K (`None`: not run).
    filtered: Option<(Arc<ClaimIndex>, Vec<Passage>)>,
    cw_soft: Vec<Passage>,
    cw_hard: Vec<Passage>,
}

fn conflict_of(docs: &[&EvalDocument]) -> Option<&'static str> {
    let labels: BTreeSet<DocLabel> = docs.iter().filter_map(|d| d.label).collect();
    if labels.is_empty() {
        return None;
    }
    let both = labels.contains(&DocLabel::Supporting) && labels.contains(&DocLabel::Misleading);
    Some(if both { "yes" } else { "no" })
}

/// Counted once per claim, then copied into every outcome.
#[derive(Default)]
struct Preparation {
    problems: BTreeMap<String, usize>,
}

fn prepare<'a>(
    data: &'a EvalData,
    config: &ConfactConfig,
    prep: &mut Preparation,
) -> Vec<Item<'a>> {
    let by_id = data.documents_by_id();
    let wants = |m: &str| config.methods.iter().any(|x| x == m);
    let k = config.top_k;
    let mut count = |reason: &str| *prep.problems.entry(reason.into()).or_insert(0) += 1;
    let mut items = Vec::with_capacity(data.claims.len());
    for claim in &data.claims {
        let question = question_of(claim);
        let (docs, missing) = claim_documents(claim, &by_id, data);
        for _ in 0..missing {
            count("missing_document");
        }
        let split = |d: &EvalDocument| split_passages(d, config.passage_words);
        let passages: Vec<Passage> = docs.iter().flat_map(|d| split(d)).collect();
        let has_evidence = !passages.is_empty();
        if !has_evidence {
            count("no_evidence");
        }
        // Which document each passage comes from, for its credibility.
        let doc_of: BTreeMap<String, &EvalDocument> = docs
            .iter()
            .flat_map(|d| split(d).into_iter().map(move |p| (p.id, *d)))
            .collect();
        let index = Arc::new(ClaimIndex::new(passages));
        if index.error.is_some() {
            count("index_error");
        }
        let ranked = index.ranked(&question);
        let top: Vec<Passage> = ranked.iter().take(k).map(|(p, _)| (*p).clone()).collect();

        let filtered = if wants("source_filtering") {
            let kept: Vec<&EvalDocument> = docs
                .iter()
                .copied()
                .filter(|d| !filtered_out(d, config.gamma))
                .collect();
            if kept.len() == docs.len() {
                Some((Arc::clone(&index), top.clone()))
            } else {
                // The rest is re-indexed: BM25's term statistics are those of what remains.
                let kept_passages: Vec<Passage> = kept.iter().flat_map(|d| split(d)).collect();
                if has_evidence && kept_passages.is_empty() {
                    count("filtered_all");
                }
                let sf = Arc::new(ClaimIndex::new(kept_passages));
                if sf.error.is_some() {
                    count("index_error");
                }
                let sf_top = sf.retrieve(&question, k);
                Some((sf, sf_top))
            }
        } else {
            None
        };

        let relevance = min_max(&ranked.iter().map(|(_, s)| *s).collect::<Vec<f64>>());
        let weighted: Vec<Weighted> = ranked
            .iter()
            .zip(relevance)
            .map(|((p, _), relevance)| Weighted {
                id: p.id.clone(),
                relevance,
                credibility: doc_of.get(&p.id).map_or(config.missing_score, |d| {
                    credibility_score(d, &config.level_scores, config.missing_score)
                }),
            })
            .collect();
        let pick = |order: Vec<String>| -> Vec<Passage> {
            order
                .iter()
                .take(k)
                .filter_map(|id| index.passages().iter().find(|p| &p.id == id).cloned())
                .collect()
        };
        let cw_soft = pick(weighted_order(&weighted, config.beta, None));
        let cw_hard = pick(weighted_order(&weighted, config.beta, Some(config.gamma)));

        items.push(Item {
            claim,
            question,
            gold: if claim.verdict { YES } else { NO },
            conflict: conflict_of(&docs),
            has_evidence,
            index,
            top,
            filtered,
            cw_soft,
            cw_hard,
        });
    }
    items
}

fn binary() -> AnswerForm {
    AnswerForm::Binary {
        yes: YES.into(),
        no: NO.into(),
    }
}

fn ask_of(
    item_id: String,
    question: &str,
    passages: Vec<Passage>,
    style: Style,
    show_background: bool,
    retriever: Arc<dyn Retriever>,
) -> Ask {
    let mut ask = Ask::new(item_id, question, binary());
    ask.passages = passages;
    ask.style = style;
    ask.show_background = show_background;
    ask.retriever = Some(retriever);
    ask
}

/// Run the configured methods on every claim; one outcome per method (`confact_<method>`), in
/// the configuration's order. Call [`ConfactConfig::validate`] first: an unknown method here
/// gives an outcome with only the problem `unknown_method`.
pub fn run_confact(
    data: &EvalData,
    llm: &Llm,
    generator: &dyn Generator,
    config: &ConfactConfig,
    boot: Bootstrap,
    stage: &str,
) -> Vec<TaskOutcome> {
    let mut prep = Preparation::default();
    let items = prepare(data, config, &mut prep);
    let (_, no_credibility) = claim_documents_with_credibility(data);
    let mut outcomes = Vec::new();
    for method in &config.methods {
        let mut outcome = TaskOutcome::new(&format!("confact_{method}"));
        if !METHODS.contains(&method.as_str()) {
            outcome.problem("unknown_method");
            outcomes.push(outcome);
            continue;
        }
        for (reason, n) in &prep.problems {
            // SF's own drops only concern SF.
            if reason == "filtered_all" && method != "source_filtering" {
                continue;
            }
            *outcome.problems.entry(reason.clone()).or_insert(0) += n;
        }
        if items.is_empty() {
            outcome.problem("no_items");
        }
        if no_credibility > 0 && CREDIBILITY_METHODS.contains(&method.as_str()) {
            outcome
                .problems
                .insert("no_credibility".into(), no_credibility);
        }
        let run = Run {
            items: &items,
            llm,
            generator,
            stage,
        };
        match method.as_str() {
            "majority_vote" => run.majority(&mut outcome),
            "sba_ensemble" => run.ensemble(&mut outcome),
            m => match Single::of(m) {
                Some(setting) => run.single(setting, &mut outcome),
                None => outcome.problem("unknown_method"),
            },
        }
        outcome.add_accuracy(&["conflict"], boot);
        outcome.add_macro_f1(YES, boot);
        outcomes.push(outcome);
    }
    outcomes
}

/// Which passages a one-ask method shows.
#[derive(Debug, Clone, Copy)]
enum Shown {
    /// BM25 top-K.
    Top,
    /// Source filtering's top-K.
    Filtered,
    CwSoft,
    CwHard,
}

/// A method with one ask per claim: what it shows and how it asks.
#[derive(Debug, Clone, Copy)]
struct Single {
    shown: Shown,
    style: Style,
    background: bool,
}

impl Single {
    fn of(method: &str) -> Option<Single> {
        let (shown, style, background) = match method {
            "direct" => (Shown::Top, Style::Direct, false),
            "cot" => (Shown::Top, Style::ChainOfThought, false),
            "discern" => (Shown::Top, Style::Discern, false),
            "source_filtering" => (Shown::Filtered, Style::Direct, false),
            "cw_soft" => (Shown::CwSoft, Style::Direct, false),
            "cw_hard" => (Shown::CwHard, Style::Direct, false),
            "sba_direct" => (Shown::Top, Style::Direct, true),
            "sba_cot" => (Shown::Top, Style::ChainOfThought, true),
            // Backgrounds and the instruction to set unreliable passages aside.
            "sba_exp" => (Shown::Top, Style::Discern, true),
            _ => return None,
        };
        Some(Single {
            shown,
            style,
            background,
        })
    }
}

/// One per-passage answer: the passage (`None` for a claim asked with none) and the result.
type PassageAnswer = (Option<Passage>, Result<Generated, LlmError>);

struct Run<'a, 'b> {
    items: &'b [Item<'a>],
    llm: &'b Llm,
    generator: &'b dyn Generator,
    stage: &'b str,
}

impl Run<'_, '_> {
    /// A scored item with `parsed` as its answer.
    fn scored(&self, task: &str, item: &Item<'_>, g: &Generated, parsed: Option<bool>) -> Scored {
        let mut s = Scored::answered(task, &item.claim.id, item.gold, g);
        s.parsed_answer = parsed.map(|p| if p { YES } else { NO }.to_string());
        s.correct = Some(s.parsed_answer.as_deref() == Some(item.gold));
        s.judged_by = "rule:binary".into();
        self.grouped(s, item)
    }

    fn failed(&self, task: &str, item: &Item<'_>, e: &LlmError, outcome: &mut TaskOutcome) {
        let s = Scored::failed(task, &item.claim.id, item.gold, e);
        outcome.problem(&format!("llm_{}", e.reason()));
        let s = self.grouped(s, item);
        outcome.scored.push(s);
    }

    fn grouped(&self, s: Scored, item: &Item<'_>) -> Scored {
        match item.conflict {
            Some(c) => s.with_group("conflict", c),
            None => s,
        }
    }

    /// Score one generator answer: parse it, count what is wrong with it.
    fn answered(&self, task: &str, item: &Item<'_>, g: &Generated, outcome: &mut TaskOutcome) {
        let parsed = parse_binary(&g.answer, YES, NO);
        if parsed.is_none() {
            outcome.problem(if g.answer.trim().is_empty() {
                "empty_answer"
            } else {
                "out_of_scope"
            });
        }
        let s = self.scored(task, item, g, parsed);
        outcome.scored.push(s);
    }

    /// The methods with one ask per claim.
    fn single(&self, setting: Single, outcome: &mut TaskOutcome) {
        let task = outcome.task.clone();
        let Single {
            shown,
            style,
            background,
        } = setting;
        let asks: Vec<Ask> = self
            .items
            .iter()
            .map(|item| {
                let all: Arc<dyn Retriever> = item.index.clone();
                let (passages, retriever) = match (shown, &item.filtered) {
                    (Shown::Top, _) | (Shown::Filtered, None) => (item.top.clone(), all),
                    (Shown::Filtered, Some((index, top))) => {
                        let r: Arc<dyn Retriever> = index.clone();
                        (top.clone(), r)
                    }
                    (Shown::CwSoft, _) => (item.cw_soft.clone(), all),
                    (Shown::CwHard, _) => (item.cw_hard.clone(), all),
                };
                ask_of(
                    item.claim.id.clone(),
                    &item.question,
                    passages,
                    style,
                    background,
                    retriever,
                )
            })
            .collect();
        let results = self.generator.generate(self.llm, self.stage, &asks);
        for (item, r) in self.items.iter().zip(results) {
            match r {
                Ok(g) => self.answered(&task, item, &g, outcome),
                Err(e) => self.failed(&task, item, &e, outcome),
            }
        }
    }

    /// One ask per top-K passage of every claim (one ask with no passage for a claim without
    /// evidence), all in one generator call; the results grouped back by claim, in rank order.
    fn per_passage(&self, style: Style, show_background: bool) -> Vec<Vec<PassageAnswer>> {
        let mut asks = Vec::new();
        let mut owners: Vec<(usize, Option<Passage>)> = Vec::new();
        for (i, item) in self.items.iter().enumerate() {
            let retriever: Arc<dyn Retriever> = item.index.clone();
            if item.top.is_empty() {
                asks.push(ask_of(
                    item.claim.id.clone(),
                    &item.question,
                    Vec::new(),
                    style,
                    show_background,
                    retriever,
                ));
                owners.push((i, None));
                continue;
            }
            for p in &item.top {
                asks.push(ask_of(
                    format!("{}:{}", item.claim.id, p.id),
                    &item.question,
                    vec![p.clone()],
                    style,
                    show_background,
                    Arc::clone(&retriever),
                ));
                owners.push((i, Some(p.clone())));
            }
        }
        let results = self.generator.generate(self.llm, self.stage, &asks);
        let mut out: Vec<Vec<_>> = self.items.iter().map(|_| Vec::new()).collect();
        for ((i, p), r) in owners.into_iter().zip(results) {
            out[i].push((p, r));
        }
        out
    }

    fn majority(&self, outcome: &mut TaskOutcome) {
        let task = outcome.task.clone();
        let per_item = self.per_passage(Style::Direct, false);
        for (item, votes) in self.items.iter().zip(per_item) {
            let mut generated = Vec::new();
            let mut error = None;
            for (p, r) in votes {
                match r {
                    Ok(g) => generated.push((p, g)),
                    Err(e) => {
                        error.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = error {
                self.failed(&task, item, &e, outcome);
                continue;
            }
            let parsed: Vec<Option<bool>> = generated
                .iter()
                .map(|(_, g)| parse_binary(&g.answer, YES, NO))
                .collect();
            let answer = majority(&parsed);
            if answer.is_none() {
                let all_empty = generated.iter().all(|(_, g)| g.answer.trim().is_empty());
                outcome.problem(if all_empty {
                    "empty_answer"
                } else {
                    "out_of_scope"
                });
            }
            let answers: Vec<&str> = generated.iter().map(|(_, g)| g.answer.as_str()).collect();
            let hashes: Vec<&str> = generated
                .iter()
                .map(|(_, g)| g.prompt_hash.as_str())
                .collect();
            let steps = generated
                .iter()
                .zip(&parsed)
                .map(|((p, _), v)| {
                    let id = p.as_ref().map_or("none", |p| p.id.as_str());
                    let vote = match v {
                        Some(true) => YES,
                        Some(false) => NO,
                        None => "none",
                    };
                    format!("vote:{id}:{vote}")
                })
                .collect();
            let combined = Generated {
                raw: serde_json::to_string(&answers).unwrap_or_default(),
                answer: answer.map_or("", |a| if a { YES } else { NO }).into(),
                prompt_hash: noisebench_core::id::sha256_hex(hashes.join("\n").as_bytes()),
                calls: generated.iter().map(|(_, g)| g.calls).sum(),
                steps,
            };
            let s = self.scored(&task, item, &combined, answer);
            outcome.scored.push(s);
        }
    }

    fn ensemble(&self, outcome: &mut TaskOutcome) {
        let task = outcome.task.clone();
        let per_item = self.per_passage(Style::ChainOfThought, true);
        // Per item: the candidates, or the failure; and the ensemble inputs to send.
        enum Stage1 {
            Failed(LlmError),
            /// No evidence: the one memory answer is final.
            Alone(Generated),
            Candidates(Vec<(Passage, Generated)>, usize),
        }
        let mut stage1 = Vec::new();
        let mut inputs = Vec::new();
        for (item, results) in self.items.iter().zip(per_item) {
            let mut ok = Vec::new();
            let mut error = None;
            for (p, r) in results {
                match r {
                    Ok(g) => ok.push((p, g)),
                    Err(e) => {
                        error.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = error {
                stage1.push(Stage1::Failed(e));
                continue;
            }
            if !item.has_evidence || ok.iter().any(|(p, _)| p.is_none()) {
                match ok.into_iter().next() {
                    Some((_, g)) => stage1.push(Stage1::Alone(g)),
                    None => stage1.push(Stage1::Failed(LlmError::Internal(
                        "no answer for a claim without evidence".into(),
                    ))),
                }
                continue;
            }
            let candidates: Vec<(Passage, Generated)> = ok
                .into_iter()
                .filter_map(|(p, g)| p.map(|p| (p, g)))
                .collect();
            inputs.push(EnsembleInput {
                question: item.question.clone(),
                yes: YES.into(),
                no: NO.into(),
                candidates: candidates
                    .iter()
                    .map(|(p, g)| Candidate {
                        source: p.source.clone(),
                        background: p
                            .background
                            .clone()
                            .unwrap_or_else(|| MISSING_BACKGROUND.into()),
                        answer: g.answer.clone(),
                        reasoning: serde_json::from_str::<AnswerOutput>(&g.raw)
                            .ok()
                            .and_then(|o| o.reasoning),
                    })
                    .collect(),
            });
            stage1.push(Stage1::Candidates(candidates, inputs.len() - 1));
        }
        let mut finals: Vec<Option<Result<_, LlmError>>> = self
            .llm
            .run_batch::<ConfactEnsemble>(self.stage, inputs)
            .into_iter()
            .map(Some)
            .collect();
        for (item, s1) in self.items.iter().zip(stage1) {
            match s1 {
                Stage1::Failed(e) => self.failed(&task, item, &e, outcome),
                Stage1::Alone(mut g) => {
                    g.steps.push("no_evidence".into());
                    self.answered(&task, item, &g, outcome);
                }
                Stage1::Candidates(candidates, slot) => {
                    let result = finals
                        .get_mut(slot)
                        .and_then(Option::take)
                        .unwrap_or_else(|| {
                            Err(LlmError::Internal("missing ensemble answer".into()))
                        });
                    match result {
                        Err(e) => self.failed(&task, item, &e, outcome),
                        Ok(a) => {
                            let mut steps: Vec<String> = candidates
                                .iter()
                                .map(|(p, g)| {
                                    let v = match parse_binary(&g.answer, YES, NO) {
                                        Some(true) => YES,
                                        Some(false) => NO,
                                        None => "none",
                                    };
                                    format!("candidate:{}:{v}", p.id)
                                })
                                .collect();
                            steps.push("ensemble".into());
                            let g = Generated {
                                raw: serde_json::to_string(&a.value).unwrap_or_default(),
                                answer: a.value.answer.clone(),
                                prompt_hash: a.request_hash.clone(),
                                calls: candidates.iter().map(|(_, g)| g.calls).sum::<usize>() + 1,
                                steps,
                            };
                            self.answered(&task, item, &g, outcome);
                        }
                    }
                }
            }
        }
    }
}

/// Majority of `votes` (`None` does not vote); a tie goes to the first valid vote (the
/// best-ranked passage's); no valid vote: `None`.
pub fn majority(votes: &[Option<bool>]) -> Option<bool> {
    let yes = votes.iter().filter(|v| **v == Some(true)).count();
    let no = votes.iter().filter(|v| **v == Some(false)).count();
    match yes.cmp(&no) {
        std::cmp::Ordering::Greater => Some(true),
        std::cmp::Ordering::Less => Some(false),
        std::cmp::Ordering::Equal => votes.iter().flatten().next().copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majority_ties_go_to_the_best_ranked_valid_vote() {
        assert_eq!(
            majority(&[Some(true), Some(false), Some(false)]),
            Some(false)
        );
        assert_eq!(majority(&[None, Some(false), Some(true)]), Some(false));
        assert_eq!(majority(&[Some(true), None, Some(false)]), Some(true));
        assert_eq!(majority(&[None, None]), None);
        assert_eq!(majority(&[]), None);
    }

    #[test]
    fn questions_come_from_the_claim_when_it_has_none() {
        let mut c = EvalClaim {
            id: "c".into(),
            text: "The bridge closed in 2020.".into(),
            question: None,
            verdict: true,
            original_verdict: None,
            documents: vec![],
            claim_date: None,
        };
        assert_eq!(
            question_of(&c),
            "Is it true that The bridge closed in 2020?"
        );
        c.question = Some("Did the bridge close in 2020?".into());
        assert_eq!(question_of(&c), "Did the bridge close in 2020?");
    }

    #[test]
    fn the_default_configuration_is_valid_and_bad_ones_are_refused() {
        let c = ConfactConfig::default();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.methods.len(), 11);
        let mut bad = c.clone();
        bad.methods.push("oracle".into());
        assert_eq!(
            bad.validate(),
            Err(ConfactError::UnknownMethod("oracle".into()))
        );
        let mut bad = c.clone();
        bad.methods.push("cot".into());
        assert!(matches!(
            bad.validate(),
            Err(ConfactError::DuplicateMethod(_))
        ));
        let mut bad = c;
        bad.gamma = 1.5;
        assert!(bad.validate().is_err());
        let parsed: ConfactConfig = serde_json::from_str(r#"{"top_k": 3}"#).unwrap();
        assert_eq!(parsed.top_k, 3);
        assert!(serde_json::from_str::<ConfactConfig>(r#"{"topk": 3}"#).is_err());
    }
}
