//! RARE-Met (RARE 5, 6; Tables 3 and 4): how robust a generator is when the query, the documents
//! or both are perturbed, judged against what it knows without retrieval.
//!
//! Per question:
//! - the no-context probe g(q, ∅): the question asked with no passage and judged; 1 when correct
//!   (task `rare_probe`, whose accuracy is the share the model answers from memory);
//! - queries Q = the original q and its perturbations Q' (the question's `query_perturbations`);
//! - documents D = the ground-truth chunks (`ground_truth`), the same with back-translated chunks
//!   in place (`back_translation`: lexically different, answer kept), with answer-deleted chunks in
//!   place (`regex_delete`: lexically similar, answer gone), and the top `retrieval_k` chunks
//!   each real retriever returns for that query (`retrieval`, D_ret): by default all of them
//!   together as one context, as RARE's evaluator does (`retrieval_context = "joint"`), or each
//!   chunk alone (`"each"`). A document kind the question has no perturbation for is left out of
//!   its cells. Retrieved chunks are the input's own when it has them for that query form (our
//!   `retrievals` table, for the original query; RARE's `<domain>_retrieval_results.json`, for
//!   every query form and retriever), else BM25 over every chunk with the query (retriever
//!   `bm25`). Retrieved ids the corpus lacks are left out (as RARE does), counted as problem
//!   `retrieved_chunk_missing`; a retriever none of whose chunks is in the corpus gives no cell;
//! - every (q, d) cell is asked once and judged by the two-stage judge
//!   ([`crate::answers::judge_answers`]: refusal, normalised exact or inclusive match, then the
//!   `answer_judge` task); refusal detection is deterministic ([`crate::answers::RefusalDetector`]);
//! - the cell is robust by Table 3's rule: ground-truth and back-translated documents need the
//!   correct answer; answer-deleted documents need a correct answer or a refusal when the probe
//!   was 1, a refusal when it was 0; retrieved documents need a correct answer or a refusal.
//!
//! Table 4's scores are means of the robust cells (`robustness`): overall over every cell, query
//! robustness over (q' ∈ Q', ground truth), document robustness over (q, d' ∈ {back translation,
//! regex delete}), real-retrieval robustness over (q, d ∈ D_ret); each overall and per pattern kind,
//! domain and probe value, and the retrieval score also per retriever. Cells are the predictions of task `rare_met`; the four scores are its
//! metrics under tasks `rare_overall`, `rare_query`, `rare_document` and `rare_retrieval`.

use std::collections::BTreeMap;

use noisebench_index::bm25::{Bm25, Doc, Query, Spec, TextField};
use noisebench_llm::Llm;
use serde::{Deserialize, Serialize};

use crate::answers::{JudgeItem, Judgement, RefusalDetector, judge_answers};
use crate::data::{BACK_TRANSLATION, EvalChunk, EvalData, EvalQuestion, REGEX_DELETE};
use crate::generate::{AnswerForm, Ask, Generated, Generator, Passage, Retriever};
use crate::metrics::{self, Bootstrap};
use crate::outcome::{MetricValue, Scored, TaskOutcome};

pub(crate) const PROBE: &str = "rare_probe";
pub(crate) const CELLS: &str = "rare_met";

/// The document kinds of a cell.
pub(crate) const GROUND_TRUTH: &str = "ground_truth";
pub(crate) const RETRIEVAL: &str = "retrieval";
/// The query of a cell that is not perturbed.
pub(crate) const ORIGINAL: &str = "original";

/// How a retriever's top chunks make cells.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RetrievalContext {
    /// The top `retrieval_k` chunks together, one cell per retriever and query (RARE's
    /// evaluator).
    #[default]
    Joint,
    /// Each of the top `retrieval_k` chunks alone, one cell each.
    Each,
}

/// RARE-Met settings (`[eval.rare]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RareConfig {
    /// Chunks of real retrieval per query (RARE evaluates the top 3).
    pub retrieval_k: usize,
    /// How a retriever's top chunks make cells.
    pub retrieval_context: RetrievalContext,
    /// Evaluate only questions of this split (`test`); `None`: every question.
    pub split: Option<String>,
}

impl Default for RareConfig {
    fn default() -> Self {
        RareConfig {
            retrieval_k: 3,
            retrieval_context: RetrievalContext::Joint,
            split: None,
        }
    }
}

/// The retriever name of BM25 cells (no input retrieval for the query form).
pub const BM25: &str = "bm25";

/// What the RARE-Met run shares besides its configuration.
pub struct RareRun<'a> {
    pub llm: &'a Llm,
    pub generator: &'a dyn Generator,
    pub refusal: &'a RefusalDetector,
    pub boot: Bootstrap,
    pub limit: Option<usize>,
    pub stage: &'a str,
}

/// Table 4's scores, as metric task names.
pub(crate) const SCORES: [&str; 4] = [
    "rare_overall",
    "rare_query",
    "rare_document",
    "rare_retrieval",
];

/// Whether a cell (by its groups) counts in one of Table 4's scores ([`SCORES`]).
pub(crate) fn in_score(score: &str, groups: &BTreeMap<String, String>) -> bool {
    let query = groups.get("query").map(String::as_str);
    let document = groups.get("document").map(String::as_str);
    match score {
        "rare_overall" => true,
        "rare_query" => query.is_some_and(|q| q != ORIGINAL) && document == Some(GROUND_TRUTH),
        "rare_document" => {
            query == Some(ORIGINAL)
                && document.is_some_and(|d| d == BACK_TRANSLATION || d == REGEX_DELETE)
        }
        "rare_retrieval" => query == Some(ORIGINAL) && document == Some(RETRIEVAL),
        _ => false,
    }
}

/// Table 3: whether a cell is robust, from the probe, the document kind, and the judgement.
pub fn robust(probe: bool, document: &str, correct: bool, refused: bool) -> bool {
    match document {
        GROUND_TRUTH | BACK_TRANSLATION => correct,
        REGEX_DELETE => {
            if probe {
                correct || refused
            } else {
                refused
            }
        }
        // Real retrieval, and any document kind a later perturbation adds: correct or refuse.
        _ => correct || refused,
    }
}

/// BM25 over every chunk, for real retrieval and for systems that retrieve more.
pub(crate) struct ChunkRetriever {
    index: Option<Bm25>,
    texts: BTreeMap<String, String>,
}

impl ChunkRetriever {
    pub fn new(chunks: &[EvalChunk]) -> ChunkRetriever {
        let spec = Spec {
            text: vec![TextField {
                name: "text",
                stored: false,
            }],
            stored: vec![],
            time: None,
        };
        let docs = chunks.iter().map(|c| Doc {
            id: c.id.clone(),
            text: vec![c.text.clone()],
            stored: vec![],
            time: None,
        });
        let index = match Bm25::in_ram(&spec, docs) {
            Ok(i) => Some(i),
            Err(e) => {
                tracing::warn!("BM25 over the chunks failed, real retrieval finds nothing: {e}");
                None
            }
        };
        ChunkRetriever {
            index,
            texts: chunks
                .iter()
                .map(|c| (c.id.clone(), c.text.clone()))
                .collect(),
        }
    }

    fn ids(&self, query: &str, k: usize) -> Vec<String> {
        let Some(index) = &self.index else {
            return Vec::new();
        };
        index
            .search(&Query::new(query, k))
            .map(|hits| hits.into_iter().map(|h| h.id).collect())
            .unwrap_or_default()
    }
}

impl Retriever for ChunkRetriever {
    fn retrieve(&self, query: &str, k: usize) -> Vec<Passage> {
        self.ids(query, k)
            .into_iter()
            .filter_map(|id| {
                self.texts.get(&id).map(|t| Passage {
                    id: id.clone(),
                    text: t.clone(),
                    source: Some("retrieved".into()),
                    background: None,
                })
            })
            .collect()
    }
}

/// One (q, d) cell before it is asked.
struct Cell<'a> {
    question: &'a EvalQuestion,
    query_kind: String,
    query: String,
    document: String,
    retriever: Option<String>,
    item_id: String,
    passages: Vec<Passage>,
}

/// A document setting of a cell.
struct Setting {
    document: String,
    /// Item id suffix (`@e5-large`, `@bm25#2`).
    suffix: String,
    retriever: Option<String>,
    passages: Vec<Passage>,
}

/// The document settings of a question for one query form; retrieved ids the corpus lacks are
/// counted in `missing`.
fn documents(
    q: &EvalQuestion,
    (query_kind, query): (&str, &str),
    chunks: &BTreeMap<&str, &EvalChunk>,
    retriever: &ChunkRetriever,
    config: &RareConfig,
    missing: &mut usize,
) -> Vec<Setting> {
    let gt: Vec<Passage> = q
        .answer_chunk_ids
        .iter()
        .filter_map(|id| chunks.get(id.as_str()))
        .map(|c| Passage {
            id: c.id.clone(),
            text: c.text.clone(),
            source: None,
            background: None,
        })
        .collect();
    let setting = |document: &str, passages: Vec<Passage>| Setting {
        document: document.to_string(),
        suffix: String::new(),
        retriever: None,
        passages,
    };
    let mut out = vec![setting(GROUND_TRUTH, gt.clone())];
    for kind in [BACK_TRANSLATION, REGEX_DELETE] {
        let variants: BTreeMap<&str, &str> = q
            .document_perturbations
            .iter()
            .filter(|v| v.kind == kind)
            .map(|v| (v.chunk_id.as_str(), v.text.as_str()))
            .collect();
        if variants.is_empty() {
            continue;
        }
        let passages = gt
            .iter()
            .map(|p| Passage {
                text: variants
                    .get(p.id.as_str())
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| p.text.clone()),
                ..p.clone()
            })
            .collect();
        out.push(setting(kind, passages));
    }
    let k = config.retrieval_k;
    let mut lists: Vec<(String, Vec<String>)> = q
        .retrievals
        .iter()
        .filter(|r| r.query == query_kind)
        .map(|r| {
            (
                r.retriever.clone(),
                r.chunk_ids.iter().take(k).cloned().collect(),
            )
        })
        .collect();
    if lists.is_empty() {
        lists.push((BM25.to_string(), retriever.ids(query, k)));
    }
    for (name, ids) in lists {
        let mut passages = Vec::new();
        for id in &ids {
            match chunks.get(id.as_str()) {
                Some(c) => passages.push(Passage {
                    id: c.id.clone(),
                    text: c.text.clone(),
                    source: Some("retrieved".into()),
                    background: None,
                }),
                None => *missing += 1,
            }
        }
        match config.retrieval_context {
            RetrievalContext::Joint => {
                if !passages.is_empty() {
                    out.push(Setting {
                        document: RETRIEVAL.to_string(),
                        suffix: format!("@{name}"),
                        retriever: Some(name.clone()),
                        passages,
                    });
                }
            }
            RetrievalContext::Each => {
                for (i, p) in passages.into_iter().enumerate() {
                    out.push(Setting {
                        document: RETRIEVAL.to_string(),
                        suffix: format!("@{name}#{}", i + 1),
                        retriever: Some(name.clone()),
                        passages: vec![p],
                    });
                }
            }
        }
    }
    out
}

/// Ask every asks' generator, then judge every answer in one batch.
fn ask_and_judge(
    run: &RareRun<'_>,
    items: &[(String, &EvalQuestion)],
    asks: &[Ask],
) -> Vec<(
    Result<Generated, noisebench_llm::LlmError>,
    Option<Judgement>,
)> {
    let generated = run.generator.generate(run.llm, run.stage, asks);
    let mut judge_items = Vec::new();
    let mut judged_index = Vec::new();
    for (i, ((_, q), g)) in items.iter().zip(&generated).enumerate() {
        if let Ok(g) = g {
            judged_index.push(i);
            judge_items.push(JudgeItem {
                question: q.question.clone(),
                gold: q.answer.clone(),
                prediction: g.answer.clone(),
            });
        }
    }
    let judgements = judge_answers(run.llm, run.stage, &judge_items, run.refusal);
    let mut by_item: BTreeMap<usize, Judgement> =
        judged_index.into_iter().zip(judgements).collect();
    generated
        .into_iter()
        .enumerate()
        .map(|(i, g)| (g, by_item.remove(&i)))
        .collect()
}

fn scored(
    task: &str,
    item_id: &str,
    q: &EvalQuestion,
    result: Result<Generated, noisebench_llm::LlmError>,
    judgement: Option<Judgement>,
    outcome: &mut TaskOutcome,
) -> (Scored, Option<(bool, bool)>) {
    let mut s = match &result {
        Err(e) => Scored::failed(task, item_id, &q.answer, e),
        Ok(g) => Scored::answered(task, item_id, &q.answer, g),
    };
    s = s
        .with_group("kind", q.kind.clone())
        .with_group("domain", q.domain.clone());
    let judged = match (result, judgement) {
        (Err(_), _) => {
            outcome.problem(s.failure.as_deref().unwrap_or("llm_failed"));
            None
        }
        (Ok(_), None) => None,
        (Ok(g), Some(j)) => {
            s.judged_by = j.judged_by.clone();
            if let Some(f) = &j.failure {
                s.failure = Some(f.clone());
                outcome.problem(f);
            }
            if j.refusal {
                outcome.problem("refusal");
            } else if g.answer.trim().is_empty() {
                outcome.problem("empty_answer");
            } else {
                s.parsed_answer = Some(g.answer.trim().to_string());
            }
            j.correct.map(|c| (c, j.refusal))
        }
    };
    (s, judged)
}

/// Run RARE-Met on `data`'s questions.
pub fn run_rare(data: &EvalData, config: &RareConfig, run: &RareRun<'_>) -> Vec<TaskOutcome> {
    let mut questions: Vec<&EvalQuestion> = data
        .questions
        .iter()
        .filter(|q| config.split.is_none() || q.split == config.split)
        .collect();
    if let Some(n) = run.limit {
        questions.truncate(n);
    }
    let chunks = data.chunks_by_id();
    let retriever = std::sync::Arc::new(ChunkRetriever::new(&data.chunks));

    // The probe: g(q, ∅).
    let mut probe = TaskOutcome::new(PROBE);
    if questions.is_empty() {
        probe.problem("no_items");
    }
    let items: Vec<(String, &EvalQuestion)> =
        questions.iter().map(|q| (q.id.clone(), *q)).collect();
    let asks: Vec<Ask> = questions
        .iter()
        .map(|q| Ask::new(q.id.clone(), q.question.clone(), AnswerForm::Open))
        .collect();
    let mut probes: BTreeMap<String, bool> = BTreeMap::new();
    for ((id, q), (g, j)) in items.iter().zip(ask_and_judge(run, &items, &asks)) {
        let (mut s, judged) = scored(PROBE, id, q, g, j, &mut probe);
        s.correct = judged.map(|(c, _)| c);
        if let Some(c) = s.correct {
            probes.insert(id.clone(), c);
        }
        probe.scored.push(s);
    }
    probe.add_accuracy(&["kind", "domain"], run.boot);

    // The cells: every query against every document setting.
    let mut cells: Vec<Cell<'_>> = Vec::new();
    let mut missing = 0usize;
    for q in &questions {
        if !probes.contains_key(&q.id) {
            // No probe, no rule: the question's cells cannot be scored (its probe failure is
            // already counted).
            continue;
        }
        let mut queries = vec![(ORIGINAL.to_string(), q.question.clone())];
        queries.extend(
            q.query_perturbations
                .iter()
                .map(|v| (v.kind.clone(), v.text.clone())),
        );
        for (query_kind, query) in queries {
            for d in documents(
                q,
                (&query_kind, &query),
                &chunks,
                &retriever,
                config,
                &mut missing,
            ) {
                cells.push(Cell {
                    question: q,
                    item_id: format!("{}|{}|{}{}", q.id, query_kind, d.document, d.suffix),
                    query_kind: query_kind.clone(),
                    query: query.clone(),
                    document: d.document,
                    retriever: d.retriever,
                    passages: d.passages,
                });
            }
        }
    }
    let mut met = TaskOutcome::new(CELLS);
    if missing > 0 {
        met.problems
            .insert("retrieved_chunk_missing".into(), missing);
    }
    if cells.is_empty() {
        met.problem("no_items");
    }
    let items: Vec<(String, &EvalQuestion)> = cells
        .iter()
        .map(|c| (c.item_id.clone(), c.question))
        .collect();
    let asks: Vec<Ask> = cells
        .iter()
        .map(|c| {
            let mut a = Ask::new(c.item_id.clone(), c.query.clone(), AnswerForm::Open);
            a.passages = c.passages.clone();
            let r: std::sync::Arc<dyn Retriever> = retriever.clone();
            a.retriever = Some(r);
            a
        })
        .collect();
    for (c, (g, j)) in cells.iter().zip(ask_and_judge(run, &items, &asks)) {
        let p = probes.get(&c.question.id).copied().unwrap_or(false);
        let (mut s, judged) = scored(CELLS, &c.item_id, c.question, g, j, &mut met);
        s = s
            .with_group("probe", if p { "1" } else { "0" })
            .with_group("query", c.query_kind.clone())
            .with_group("document", c.document.clone());
        if let Some(r) = &c.retriever {
            s = s.with_group("retriever", r.clone());
        }
        s.correct = judged.map(|(correct, refused)| robust(p, &c.document, correct, refused));
        met.scored.push(s);
    }
    for task in SCORES {
        let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for s in met.scored.iter().filter(|s| in_score(task, &s.groups)) {
            groups.entry("all".into()).or_default().push(s.score());
            for key in ["kind", "domain", "probe", "retriever"] {
                if key == "retriever" && task != "rare_retrieval" {
                    continue;
                }
                if let Some(v) = s.groups.get(key) {
                    groups
                        .entry(format!("{key}={v}"))
                        .or_default()
                        .push(s.score());
                }
            }
        }
        for (group, values) in groups {
            met.metrics.push(MetricValue {
                task: task.into(),
                metric: "robustness".into(),
                group,
                k: None,
                value: metrics::mean(&values),
                ci: metrics::mean_ci(&values, run.boot),
                n: values.len(),
            });
        }
    }
    vec![probe, met]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_3_rules() {
        // Ground truth and back translation: only a correct answer.
        for d in [GROUND_TRUTH, BACK_TRANSLATION] {
            for p in [true, false] {
                assert!(robust(p, d, true, false));
                assert!(!robust(p, d, false, true));
                assert!(!robust(p, d, false, false));
            }
        }
        // Answer deleted: probe 1, correct or refuse; probe 0, refuse only.
        assert!(robust(true, REGEX_DELETE, true, false));
        assert!(robust(true, REGEX_DELETE, false, true));
        assert!(!robust(true, REGEX_DELETE, false, false));
        assert!(!robust(false, REGEX_DELETE, true, false));
        assert!(robust(false, REGEX_DELETE, false, true));
        // Real retrieval: correct or refuse, whatever the probe.
        for p in [true, false] {
            assert!(robust(p, RETRIEVAL, true, false));
            assert!(robust(p, RETRIEVAL, false, true));
            assert!(!robust(p, RETRIEVAL, false, false));
        }
    }
}
