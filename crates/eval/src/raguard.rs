//! RAGuard's three tasks (RAGuard 2.4, 4.1, 5): a claim judged true or false with no context,
//! with the top 1 and top 5 documents an embedding retriever finds for it in the whole corpus,
//! and with each associated document alone (over all of them, and over the misleading ones only).
//!
//! - Claims are split once, seeded: a claim is on the test side when the first 8 bytes of
//!   sha256(`<seed>:<claim id>`) / 2^64 fall below `test_share`; the rest is the train side.
//!   Tasks run on the test side; each prompt shows two examples drawn from the train side, one
//!   true and one false claim (the first of each in the seeded order), as RAGuard 4.1 does.
//!   With no true or no false claim on the train side the prompt has fewer examples, counted as
//!   problem `missing_example`.
//! - Answers are parsed strictly (`crate::answers::parse_binary`): anything but `true` or
//!   `false` is out of scope and wrong (RAGuard 4.1), counted as `out_of_scope`, `empty_answer`,
//!   `refusal` or `rambling`.
//! - Accuracy per task, with the absolute and relative drop against zero-context (Table 4's
//!   layout: `absolute_drop` = accuracy - zero-context accuracy, `relative_drop` = that over the
//!   zero-context accuracy); their intervals resample both tasks' items independently.
//! - Retrieval (RAGuard 5, Figure 6) for the standard-RAG retriever at k = 1..`max_k`: precision,
//!   recall and NDCG with binary relevance (a document is relevant when it is associated with the
//!   claim) and graded NDCG (`ndcg_graded`: gains by label, supporting 2, misleading 1, irrelevant
//!   0, configurable), plus the misleading retrieval recall: the share of claims with at least one
//!   of their own misleading documents in the top k, for every k and for the oracle tasks (by
//!   construction 100% for misleading-only).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use noisebench_index::vector::VectorIndex;
use noisebench_llm::Llm;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::answers::{RefusalDetector, answer_problem, parse_binary};
use crate::data::{DocLabel, EvalClaim, EvalData, EvalDocument};
use crate::generate::{AnswerForm, Ask, Example, Generator, Passage, Retriever};
use crate::metrics::{self, Bootstrap};
use crate::outcome::{MetricValue, Scored, TaskOutcome};

/// RAGuard's task names.
pub(crate) const ZERO_CONTEXT: &str = "raguard_zero_context";
pub(crate) const ORACLE_ALL: &str = "raguard_oracle_all";
pub(crate) const ORACLE_MISLEADING: &str = "raguard_oracle_misleading";
/// `raguard_rag_top<k>`.
pub(crate) fn rag_task(k: usize) -> String {
    format!("raguard_rag_top{k}")
}

/// RAGuard settings (`[eval.raguard]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RaguardConfig {
    /// Share of claims on the test side (the rest give the two-shot examples).
    pub test_share: f64,
    /// Show one true and one false train claim before each question.
    pub two_shot: bool,
    /// The standard-RAG settings: how many retrieved documents the model reads.
    pub rag_k: Vec<usize>,
    /// Retrieval metrics at k = 1..=max_k.
    pub max_k: usize,
    /// A document's text is cut to this many characters in prompts and embeddings.
    pub max_document_chars: usize,
    /// Gains of graded NDCG by label of a document associated with the claim.
    pub gains: BTreeMap<String, f64>,
}

impl Default for RaguardConfig {
    fn default() -> Self {
        RaguardConfig {
            test_share: 0.8,
            two_shot: true,
            rag_k: vec![1, 5],
            max_k: 10,
            max_document_chars: 4000,
            gains: [
                ("supporting", 2.0),
                ("misleading", 1.0),
                ("irrelevant", 0.0),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        }
    }
}

/// What the RAGuard tasks share besides their configuration.
pub struct RaguardRun<'a> {
    pub llm: &'a Llm,
    pub generator: &'a dyn Generator,
    pub refusal: &'a RefusalDetector,
    pub max_answer_words: usize,
    pub boot: Bootstrap,
    pub seed: u64,
    /// Run only the first this many test claims.
    pub limit: Option<usize>,
    pub stage: &'a str,
}

/// Whether a claim is on the test side for `seed` and `share`.
pub fn is_test(seed: u64, id: &str, share: f64) -> bool {
    let h = noisebench_core::id::sha256_hex(format!("{seed}:{id}").as_bytes());
    let x = u64::from_str_radix(&h[..16], 16).unwrap_or(0) as f64 / 2f64.powi(64);
    x < share
}

fn verdict_word(v: bool) -> &'static str {
    if v { "true" } else { "false" }
}

fn form() -> AnswerForm {
    AnswerForm::Binary {
        yes: "true".into(),
        no: "false".into(),
    }
}

/// The two-shot examples: the first true and the first false train claim in seeded order.
fn examples(train: &[&EvalClaim], seed: u64) -> Vec<Example> {
    let mut ordered: Vec<(String, &EvalClaim)> = train
        .iter()
        .map(|c| {
            (
                noisebench_core::id::sha256_hex(format!("{seed}:example:{}", c.id).as_bytes()),
                *c,
            )
        })
        .collect();
    ordered.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for want in [true, false] {
        if let Some((_, c)) = ordered.iter().find(|(_, c)| c.verdict == want) {
            out.push(Example {
                question: claim_question(c),
                answer: verdict_word(want).into(),
            });
        }
    }
    out
}

fn claim_question(c: &EvalClaim) -> String {
    format!("Is this claim true or false? Claim: {}", c.text)
}

fn passage(doc: &EvalDocument, max_chars: usize) -> Passage {
    let text = if doc.title.trim().is_empty() || doc.text.starts_with(doc.title.trim()) {
        doc.text.clone()
    } else {
        format!("{}\n{}", doc.title.trim(), doc.text)
    };
    Passage {
        id: doc.id.clone(),
        text: text.chars().take(max_chars).collect(),
        source: doc.domain.clone(),
        background: doc.credibility.background.clone(),
    }
}

/// Score one generated answer of a binary task into `outcome`.
fn score(
    outcome: &mut TaskOutcome,
    item_id: &str,
    gold: bool,
    result: Result<crate::Generated, noisebench_llm::LlmError>,
    run: &RaguardRun<'_>,
    groups: &[(&str, String)],
) {
    let gold = verdict_word(gold);
    let mut s = match result {
        Err(e) => {
            let s = Scored::failed(&outcome.task, item_id, gold, &e);
            outcome.problem(s.failure.as_deref().unwrap_or("llm_failed"));
            s
        }
        Ok(g) => {
            let mut s = Scored::answered(&outcome.task, item_id, gold, &g);
            let parsed = parse_binary(&g.answer, "true", "false");
            s.parsed_answer = parsed.map(|p| verdict_word(p).to_string());
            s.correct = Some(s.parsed_answer.as_deref() == Some(gold));
            s.judged_by = "rule:binary".into();
            if parsed.is_none() {
                let why = answer_problem(&g.answer, run.refusal, run.max_answer_words)
                    .unwrap_or("out_of_scope");
                outcome.problem(why);
            }
            s
        }
    };
    for (k, v) in groups {
        s.groups.insert((*k).into(), v.clone());
    }
    outcome.scored.push(s);
}

/// What every RAGuard task of one run shares: the test claims, the two-shot examples, the
/// documents.
struct Setting<'a> {
    data: &'a EvalData,
    config: &'a RaguardConfig,
    run: &'a RaguardRun<'a>,
    test: Vec<&'a EvalClaim>,
    shots: Vec<Example>,
    missing_shots: usize,
    docs: BTreeMap<&'a str, &'a EvalDocument>,
}

impl<'a> Setting<'a> {
    /// A claim's documents: those it lists, else those naming it.
    fn docs_of(&self, c: &EvalClaim) -> Vec<&'a EvalDocument> {
        let mut ids: Vec<&str> = c.documents.iter().map(String::as_str).collect();
        if ids.is_empty() {
            ids = self
                .data
                .documents
                .iter()
                .filter(|d| d.claim_id.as_deref() == Some(c.id.as_str()))
                .map(|d| d.id.as_str())
                .collect();
        }
        ids.iter()
            .filter_map(|id| self.docs.get(id).copied())
            .collect()
    }

    /// The question about claim `c` over `passages`, with the examples.
    fn ask(&self, c: &EvalClaim, passages: Vec<Passage>) -> Ask {
        let mut a = Ask::new(c.id.clone(), claim_question(c), form());
        a.passages = passages;
        a.examples = self.shots.clone();
        a
    }

    /// An empty outcome of `task`, noting missing examples and an empty test set.
    fn new_outcome(&self, task: &str) -> TaskOutcome {
        let mut o = TaskOutcome::new(task);
        if self.missing_shots > 0 {
            o.problems
                .insert("missing_example".into(), self.missing_shots);
        }
        if self.test.is_empty() {
            o.problem("no_items");
        }
        o
    }

    /// Task 1: zero-context.
    fn zero_context(&self) -> TaskOutcome {
        let run = self.run;
        let mut zero = self.new_outcome(ZERO_CONTEXT);
        let asks: Vec<Ask> = self.test.iter().map(|c| self.ask(c, Vec::new())).collect();
        for (c, r) in self
            .test
            .iter()
            .zip(run.generator.generate(run.llm, run.stage, &asks))
        {
            score(&mut zero, &c.id, c.verdict, r, run, &[]);
        }
        zero.add_accuracy(&[], run.boot);
        zero.metrics.push(MetricValue {
            task: ZERO_CONTEXT.into(),
            metric: "misleading_retrieval_recall".into(),
            group: "all".into(),
            k: None,
            value: 0.0,
            ci: Some((0.0, 0.0)),
            n: self.test.len(),
        });
        zero
    }

    /// Task 2: standard RAG over the whole corpus with an embedding retriever, one outcome per
    /// `rag_k`; the first also carries the retrieval metrics.
    fn standard_rag(&self, zero_scores: &[f64]) -> Vec<TaskOutcome> {
        let (config, run) = (self.config, self.run);
        let mut outcomes = Vec::new();
        let max_rag = config.rag_k.iter().copied().max().unwrap_or(0);
        let depth = max_rag.max(config.max_k);
        let queries: Vec<String> = self.test.iter().map(|c| c.text.clone()).collect();
        let corpus = CorpusRetriever::new(
            run.llm,
            run.stage,
            &self.data.documents,
            config.max_document_chars,
        )
        .map(Arc::new);
        let ranked = corpus
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|c| c.rank(&queries, depth));
        let ranked = match ranked {
            Err(reason) => {
                for &k in &config.rag_k {
                    let mut o = self.new_outcome(&rag_task(k));
                    o.problem(&reason);
                    outcomes.push(o);
                }
                return outcomes;
            }
            Ok(ranked) => ranked,
        };
        for &k in &config.rag_k {
            let mut o = self.new_outcome(&rag_task(k));
            let asks: Vec<Ask> = self
                .test
                .iter()
                .zip(&ranked)
                .map(|(c, hits)| {
                    let passages = hits
                        .iter()
                        .take(k)
                        .filter_map(|id| self.docs.get(id.as_str()))
                        .map(|d| passage(d, config.max_document_chars))
                        .collect();
                    let mut a = self.ask(c, passages);
                    if let Ok(corpus) = &corpus {
                        let r: Arc<dyn Retriever> = corpus.clone();
                        a.retriever = Some(r);
                    }
                    a
                })
                .collect();
            for (c, r) in self
                .test
                .iter()
                .zip(run.generator.generate(run.llm, run.stage, &asks))
            {
                score(&mut o, &c.id, c.verdict, r, run, &[]);
            }
            o.add_accuracy(&[], run.boot);
            add_drops(&mut o, zero_scores, run.boot);
            outcomes.push(o);
        }
        let docs_of = |c: &EvalClaim| self.docs_of(c);
        let retrieval = retrieval_metrics(&self.test, &ranked, &docs_of, config, run.boot);
        if let Some(first) = outcomes
            .iter_mut()
            .find(|o| o.task.starts_with("raguard_rag_top"))
        {
            first.metrics.extend(retrieval);
        }
        outcomes
    }

    /// Task 3: oracle, each associated document (or each misleading one) alone.
    fn oracle(&self, task: &str, only_misleading: bool, zero_scores: &[f64]) -> TaskOutcome {
        let (config, run) = (self.config, self.run);
        let mut o = self.new_outcome(task);
        let mut items: Vec<(&EvalClaim, &EvalDocument)> = Vec::new();
        for c in &self.test {
            for d in self.docs_of(c) {
                if !only_misleading || d.label == Some(DocLabel::Misleading) {
                    items.push((c, d));
                }
            }
        }
        if items.is_empty() {
            o.problem("no_items");
        }
        let asks: Vec<Ask> = items
            .iter()
            .map(|(c, d)| {
                let mut a = self.ask(c, vec![passage(d, config.max_document_chars)]);
                a.item_id = format!("{}:{}", c.id, d.id);
                a
            })
            .collect();
        for ((c, d), r) in items
            .iter()
            .zip(run.generator.generate(run.llm, run.stage, &asks))
        {
            let label = d.label.map(DocLabel::as_str).unwrap_or("unlabelled");
            score(
                &mut o,
                &format!("{}:{}", c.id, d.id),
                c.verdict,
                r,
                run,
                &[("label", label.to_string())],
            );
        }
        o.add_accuracy(&["label"], run.boot);
        add_drops(&mut o, zero_scores, run.boot);
        // Every claim with a misleading document reads one in misleading-only; in the
        // all-documents setting, the share of claims that have one.
        let claims: BTreeSet<&str> = items.iter().map(|(c, _)| c.id.as_str()).collect();
        let with_misleading: BTreeSet<&str> = items
            .iter()
            .filter(|(_, d)| d.label == Some(DocLabel::Misleading))
            .map(|(c, _)| c.id.as_str())
            .collect();
        let values: Vec<f64> = claims
            .iter()
            .map(|c| f64::from(u8::from(with_misleading.contains(c))))
            .collect();
        o.metrics.push(MetricValue {
            task: task.into(),
            metric: "misleading_retrieval_recall".into(),
            group: "all".into(),
            k: None,
            value: metrics::mean(&values),
            ci: metrics::mean_ci(&values, run.boot),
            n: values.len(),
        });
        o
    }
}

/// Run every RAGuard task on `data`'s claims: zero-context, standard RAG at each `rag_k`, oracle
/// over all associated documents and over misleading ones. Claims need documents with labels
/// for the oracle tasks; a claim without is still in zero-context and RAG.
pub fn run_raguard(
    data: &EvalData,
    config: &RaguardConfig,
    run: &RaguardRun<'_>,
) -> Vec<TaskOutcome> {
    let (test, train): (Vec<&EvalClaim>, Vec<&EvalClaim>) = data
        .claims
        .iter()
        .partition(|c| is_test(run.seed, &c.id, config.test_share));
    let mut test = test;
    if let Some(n) = run.limit {
        test.truncate(n);
    }
    let shots = if config.two_shot {
        examples(&train, run.seed)
    } else {
        Vec::new()
    };
    let setting = Setting {
        data,
        config,
        run,
        test,
        missing_shots: if config.two_shot { 2 - shots.len() } else { 0 },
        shots,
        docs: data.documents_by_id(),
    };
    let zero = setting.zero_context();
    let zero_scores: Vec<f64> = zero.scored.iter().map(Scored::score).collect();
    let mut outcomes = vec![zero];
    if data.documents.is_empty() {
        // claims.csv alone: nothing to retrieve or show; `evaluate` says so.
        return outcomes;
    }
    outcomes.extend(setting.standard_rag(&zero_scores));
    for (task, only_misleading) in [(ORACLE_ALL, false), (ORACLE_MISLEADING, true)] {
        outcomes.push(setting.oracle(task, only_misleading, &zero_scores));
    }
    outcomes
}

/// The corpus under the LLM layer's embeddings: what standard RAG retrieves from, and what a
/// reference system asks for more evidence (CounterRefine's extra queries).
pub(crate) struct CorpusRetriever {
    llm: Llm,
    stage: String,
    index: VectorIndex,
    passages: BTreeMap<String, Passage>,
}

impl CorpusRetriever {
    /// Embed every document (title and text, cut to `max_chars`). An embedding failure is
    /// `llm_<reason>`.
    pub fn new(
        llm: &Llm,
        stage: &str,
        documents: &[EvalDocument],
        max_chars: usize,
    ) -> Result<CorpusRetriever, String> {
        let passages: Vec<Passage> = documents.iter().map(|d| passage(d, max_chars)).collect();
        let texts: Vec<String> = passages.iter().map(|p| p.text.clone()).collect();
        let vectors = if texts.is_empty() {
            Vec::new()
        } else {
            llm.embed(stage, &texts)
                .map_err(|e| format!("llm_{}", e.reason()))?
                .vectors
        };
        let dim = vectors.first().map(Vec::len).unwrap_or(0);
        let mut index = VectorIndex::new(dim);
        for (p, v) in passages.iter().zip(&vectors) {
            index
                .add(p.id.clone(), v)
                .map_err(|_| "bad_embedding".to_string())?;
        }
        Ok(CorpusRetriever {
            llm: llm.clone(),
            stage: stage.to_string(),
            index,
            passages: passages.into_iter().map(|p| (p.id.clone(), p)).collect(),
        })
    }

    /// The `depth` best document ids for each query, best first.
    pub fn rank(&self, queries: &[String], depth: usize) -> Result<Vec<Vec<String>>, String> {
        if self.passages.is_empty() || queries.is_empty() {
            return Ok(vec![Vec::new(); queries.len()]);
        }
        let vectors = self
            .llm
            .embed(&self.stage, queries)
            .map_err(|e| format!("llm_{}", e.reason()))?
            .vectors;
        vectors
            .iter()
            .map(|q| {
                self.index
                    .search(q, depth)
                    .map(|hits| hits.into_iter().map(|h| h.id).collect())
                    .map_err(|_| "bad_embedding".to_string())
            })
            .collect()
    }

    fn passage(&self, id: &str) -> Option<Passage> {
        self.passages.get(id).cloned()
    }
}

impl Retriever for CorpusRetriever {
    fn retrieve(&self, query: &str, k: usize) -> Vec<Passage> {
        match self.rank(&[query.to_string()], k) {
            Ok(mut ranked) => ranked
                .pop()
                .unwrap_or_default()
                .iter()
                .filter_map(|id| self.passage(id))
                .collect(),
            Err(reason) => {
                tracing::warn!("retrieval for `{query}` failed: {reason}");
                Vec::new()
            }
        }
    }
}

/// Precision, recall, NDCG (binary and graded) at k = 1..=max_k and the misleading retrieval
/// recall at every k, averaged over claims with intervals.
fn retrieval_metrics<'d>(
    test: &[&EvalClaim],
    ranked: &[Vec<String>],
    docs_of: &dyn Fn(&EvalClaim) -> Vec<&'d EvalDocument>,
    config: &RaguardConfig,
    boot: Bootstrap,
) -> Vec<MetricValue> {
    let gain = |d: &EvalDocument| {
        d.label
            .and_then(|l| config.gains.get(l.as_str()).copied())
            .unwrap_or(0.0)
    };
    let mut per_metric: BTreeMap<(String, usize), Vec<f64>> = BTreeMap::new();
    for (c, hits) in test.iter().zip(ranked) {
        let own: BTreeMap<&str, &EvalDocument> =
            docs_of(c).into_iter().map(|d| (d.id.as_str(), d)).collect();
        let relevant: Vec<bool> = hits.iter().map(|h| own.contains_key(h.as_str())).collect();
        let binary: Vec<f64> = relevant.iter().map(|r| f64::from(u8::from(*r))).collect();
        let graded: Vec<f64> = hits
            .iter()
            .map(|h| own.get(h.as_str()).map(|d| gain(d)).unwrap_or(0.0))
            .collect();
        let all_binary = vec![1.0; own.len()];
        let all_graded: Vec<f64> = own.values().map(|d| gain(d)).collect();
        let misleading: Vec<bool> = hits
            .iter()
            .map(|h| {
                own.get(h.as_str())
                    .is_some_and(|d| d.label == Some(DocLabel::Misleading))
            })
            .collect();
        for k in 1..=config.max_k {
            let mut push =
                |name: &str, v: f64| per_metric.entry((name.to_string(), k)).or_default().push(v);
            push("precision", metrics::precision_at_k(&relevant, k));
            push("recall", metrics::recall_at_k(&relevant, k, own.len()));
            push("ndcg", metrics::ndcg_at_k(&binary, &all_binary, k));
            push("ndcg_graded", metrics::ndcg_at_k(&graded, &all_graded, k));
            push(
                "misleading_retrieval_recall",
                f64::from(u8::from(misleading.iter().take(k).any(|m| *m))),
            );
        }
    }
    per_metric
        .into_iter()
        .map(|((metric, k), values)| MetricValue {
            task: "raguard_retrieval".into(),
            metric,
            group: "all".into(),
            k: Some(k),
            value: metrics::mean(&values),
            ci: metrics::mean_ci(&values, boot),
            n: values.len(),
        })
        .collect()
}

/// Table 4's drops against zero-context: absolute (points of accuracy) and relative (share of
/// the zero-context accuracy), with intervals from independent resamples of both tasks.
fn add_drops(outcome: &mut TaskOutcome, zero: &[f64], boot: Bootstrap) {
    let scores: Vec<f64> = outcome.scored.iter().map(Scored::score).collect();
    if scores.is_empty() || zero.is_empty() {
        return;
    }
    let (acc, base) = (metrics::mean(&scores), metrics::mean(zero));
    // Independent resamples of the two tasks' items (they are different items: claims, or
    // claim-document pairs), one pair of means per bootstrap sample.
    let mut ra = rand_chacha::ChaCha8Rng::seed_from_u64(boot.seed);
    let mut rz = rand_chacha::ChaCha8Rng::seed_from_u64(boot.seed.wrapping_add(1));
    let mean_of = |values: &[f64], rng: &mut rand_chacha::ChaCha8Rng| {
        let n = values.len();
        (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64
    };
    let pairs: Vec<(f64, f64)> = (0..boot.samples)
        .map(|_| (mean_of(&scores, &mut ra), mean_of(zero, &mut rz)))
        .collect();
    let mut abs: Vec<f64> = pairs.iter().map(|(a, z)| a - z).collect();
    let mut rel: Vec<f64> = pairs
        .iter()
        .filter(|(_, z)| *z > 0.0)
        .map(|(a, z)| (a - z) / z)
        .collect();
    let task = outcome.task.clone();
    outcome.metrics.push(MetricValue {
        task: task.clone(),
        metric: "absolute_drop".into(),
        group: "all".into(),
        k: None,
        value: acc - base,
        ci: metrics::percentile_interval(&mut abs),
        n: scores.len(),
    });
    if base > 0.0 {
        outcome.metrics.push(MetricValue {
            task,
            metric: "relative_drop".into(),
            group: "all".into(),
            k: None,
            value: (acc - base) / base,
            ci: metrics::percentile_interval(&mut rel),
            n: scores.len(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_seeded_and_near_its_share() {
        let ids: Vec<String> = (0..2000).map(|i| format!("claim_{i}")).collect();
        let test = ids.iter().filter(|id| is_test(7, id, 0.8)).count();
        assert!((1500..1700).contains(&test), "{test}");
        let again = ids.iter().filter(|id| is_test(7, id, 0.8)).count();
        assert_eq!(test, again);
        assert_ne!(
            ids.iter().map(|id| is_test(7, id, 0.5)).collect::<Vec<_>>(),
            ids.iter().map(|id| is_test(8, id, 0.5)).collect::<Vec<_>>()
        );
    }
}
