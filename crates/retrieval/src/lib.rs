//! The `retrieval` stage: real retrievers over every chunk of the snapshot (RARE 5.2's
//! real-world retrieval, D_ret), for each question's original query and each of its perturbed
//! queries, scored against the question's answer chunks.
//!
//! Retrievers (`search`): BM25 through `noisebench-index` (tantivy), exact nearest neighbours
//! over the LLM layer's embedder, an optional reranker behind an OpenAI-compatible `/v1/rerank`
//! endpoint that reorders the first stage's candidates, and the user's own retriever (`user`: a
//! TREC or Parquet run, or an HTTP endpoint, generic JSON or Elasticsearch `_search`) as
//! `user:<name>`. Each keeps its top k (RARE: 3) per query as `retrievals` rows, and Recall@k,
//! MRR@k and NDCG@k (`metrics`) per retriever, overall, per pattern kind and per query kind, as
//! `retrieval_metrics` rows and in the stage facts.
//!
//! A question without answer chunks, or whose answer chunks are none of the chunks, is a counted
//! drop, and so is a perturbation of a question not kept. A failing reranker costs only its
//! own rows: the first-stage results stay, and the failure is recorded (`rerank_failed`, and
//! `rerank_abandoned` when it keeps failing and the rest is not sent); so does a failing user
//! endpoint, and every run row or hit of the user's retriever left out is a counted record with
//! its reason.
//!
//! What this crate is not: a perturbation (it reads the `query_perturbations` the `perturb`
//! crate writes, and perturbs nothing), an index (BM25 and vector search are `noisebench-index`'s,
//! and so are the ranking metrics' definitions, [`noisebench_index::ranking`], which the
//! evaluation uses too), or an evaluator of answers (that is `noisebench-eval`).
//!
//! # Modules
//!
//! The `retrieval` stage (`RetrievalStage::new(llm)`, in `lib.rs`): real retrievers over every
//! chunk for each question's query and its perturbed queries. `search.rs` (BM25 through
//! `noisebench-index`'s `Impacts`, identical term sets searched once and a question's family
//! together; exact vector search through its `VectorIndex`; an optional reranker) and `metrics.rs`
//! (Recall, MRR, NDCG at k per query by `noisebench_index::ranking`'s definitions, and their means
//! per retriever, pattern kind and query kind), and `user.rs` (the user's retriever: a run read by
//! `noisebench_index::run`, or an endpoint called through `noisebench_web::retriever`; its top k
//! per query as chunk positions, and a record per row, hit or query left out).
//! `benches/retrieval.rs` measures BM25 against Python's `rank_bm25`. Invariant: every question
//! and perturbation read becomes its retrievers' rows or a counted drop; a failing reranker or
//! user endpoint costs only its own rows.

mod metrics;
mod search;
mod user;

pub use noisebench_web::retriever::{HttpRetrieverConfig, Shape as UserRetrieverShape};
pub use search::{Bm25Chunks, Scored};
pub use user::UserRetrieverConfig;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use noisebench_core::{
    Chunk, ConfigError, Drops, InputSpec, Inputs, Metric, OutputSpec, QueryPerturbation, Question,
    Retrieval, StageContext, StageError, StageFacts, StageOutput, StageReport, TableKind,
    TypedStage, stable_id,
};
use noisebench_llm::{Llm, RerankConfig, Reranker};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use metrics::Means;
use search::VectorSearch;

/// Configuration of the `retrieval` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Chunks kept per query and retriever, and the k of every metric (RARE: 3).
    #[serde(default = "default_top_k")]
    pub top_k: usize,
    /// Run BM25 (tantivy, English analyser) over the chunk texts.
    #[serde(default = "default_true")]
    pub bm25: bool,
    /// Run nearest-neighbour search over the LLM layer's embedder (`llm.embeddings`).
    #[serde(default = "default_true")]
    pub embedding: bool,
    /// Texts per embedding request batch (one progress step each).
    #[serde(default = "default_embed_batch")]
    pub embed_batch: usize,
    /// An optional reranker (OpenAI-compatible `/v1/rerank`, as vLLM or TEI serve it); its
    /// results are the retriever `rerank:<model>`.
    #[serde(default)]
    pub rerank: Option<RerankConfig>,
    /// Which first-stage retriever's candidates the reranker reorders: `embedding` or `bm25`.
    #[serde(default)]
    pub rerank_source: RerankSource,
    /// First-stage candidates sent to the reranker per query (at least `top_k`).
    #[serde(default = "default_rerank_candidates")]
    pub rerank_candidates: usize,
    /// After this many failed rerank calls in a row, the rest of the queries are not sent
    /// (one `rerank_abandoned` record): a server that is down costs one timeout per query.
    #[serde(default = "default_rerank_max_failures")]
    pub rerank_max_consecutive_failures: usize,
    /// Threads for BM25 and nearest-neighbour queries (0: every core).
    #[serde(default)]
    pub threads: usize,
    /// The user's own retriever, scored beside BM25 and dense as the retriever `user:<name>`:
    /// `{ name, run = "<TREC or Parquet run>" }` or `{ name, http = { endpoint, shape, ... } }`.
    #[serde(default)]
    pub user: Option<UserRetrieverConfig>,
}

/// The first-stage retriever whose candidates are reranked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RerankSource {
    #[default]
    Embedding,
    Bm25,
}

fn default_top_k() -> usize {
    3
}
fn default_true() -> bool {
    true
}
fn default_embed_batch() -> usize {
    256
}
fn default_rerank_candidates() -> usize {
    20
}
fn default_rerank_max_failures() -> usize {
    5
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({}))
            .unwrap_or_else(|_| unreachable!("all fields have defaults"))
    }
}

/// The `retrieval` stage. Build with the run's [`Llm`] (its embedder).
#[derive(Debug, Clone)]
pub struct RetrievalStage {
    llm: Llm,
}

impl RetrievalStage {
    pub fn new(llm: Llm) -> Self {
        Self { llm }
    }
}

/// One query to run: a question's own text or one of its perturbations.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryItem {
    /// The question id (original query) or the perturbation id.
    pub query_id: String,
    pub question_id: String,
    pub text: String,
    /// `original` or the perturbation kind.
    pub query_kind: String,
    /// The question's pattern kind (`single_hop`, ...).
    pub pattern_kind: String,
    /// The question's answer chunks present among the chunks.
    pub relevant: BTreeSet<String>,
}

/// The queries of the kept questions and their perturbations, in a stable order (by query id);
/// every question or perturbation left out is a drop.
pub fn queries(
    questions: &[Question],
    perturbations: &[QueryPerturbation],
    chunk_ids: &BTreeSet<&str>,
    drops: &mut Drops,
) -> Vec<QueryItem> {
    let mut kept: BTreeMap<&str, (&Question, BTreeSet<String>)> = BTreeMap::new();
    let asked: BTreeSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    for q in questions {
        if q.answer_chunk_ids.is_empty() {
            drops.add(
                &q.id,
                "no_ground_truth",
                "question has no answer chunk to score retrieval against",
            );
            continue;
        }
        let relevant: BTreeSet<String> = q
            .answer_chunk_ids
            .iter()
            .filter(|c| chunk_ids.contains(c.as_str()))
            .cloned()
            .collect();
        if relevant.is_empty() {
            drops.add(
                &q.id,
                "unknown_answer_chunks",
                format!(
                    "none of its answer chunks is among the chunks: {}",
                    q.answer_chunk_ids.join(", ")
                ),
            );
            continue;
        }
        kept.insert(q.id.as_str(), (q, relevant));
    }
    let mut out: Vec<QueryItem> = kept
        .values()
        .map(|(q, relevant)| QueryItem {
            query_id: q.id.clone(),
            question_id: q.id.clone(),
            text: q.question.clone(),
            query_kind: "original".into(),
            pattern_kind: q.kind.clone(),
            relevant: relevant.clone(),
        })
        .collect();
    for p in perturbations {
        match kept.get(p.question_id.as_str()) {
            Some((q, relevant)) => out.push(QueryItem {
                query_id: p.id.clone(),
                question_id: q.id.clone(),
                text: p.perturbed_query.clone(),
                query_kind: p.kind.clone(),
                pattern_kind: q.kind.clone(),
                relevant: relevant.clone(),
            }),
            None if asked.contains(p.question_id.as_str()) => drops.add(
                &p.id,
                "question_dropped",
                format!("its question `{}` was dropped", p.question_id),
            ),
            None => drops.add(
                &p.id,
                "unknown_question",
                format!("perturbs question `{}`, not in questions", p.question_id),
            ),
        }
    }
    noisebench_core::sort_by_key_str(&mut out, |q| q.query_id.as_str());
    out
}

/// One retriever's results: per query (in [`queries`] order) its ranked chunks, or `None` when
/// the query was not run (a failed rerank call).
pub struct Ranked {
    pub retriever: String,
    pub results: Vec<Option<Vec<Scored>>>,
}

/// Rows and metric sums of every retriever's results.
pub fn assemble(
    queries: &[QueryItem],
    chunks: &[Chunk],
    ranked: &[Ranked],
    k: usize,
) -> (Vec<Retrieval>, BTreeMap<String, Means>) {
    let mut rows = Vec::new();
    let mut means: BTreeMap<String, Means> = BTreeMap::new();
    let threads = noisebench_core::default_threads();
    for r in ranked {
        let m = means.entry(r.retriever.clone()).or_default();
        let pairs: Vec<(&QueryItem, &Option<Vec<Scored>>)> =
            queries.iter().zip(&r.results).collect();
        // Each query's scores and rows on every core; the sums are added in query order, so
        // they are the same to the last bit.
        let per_query = noisebench_core::parallel_map(&pairs, threads, |&(q, result)| {
            let hits = result.as_ref()?;
            let ids: Vec<&str> = hits.iter().map(|h| chunks[h.chunk].id.as_str()).collect();
            let relevant: BTreeSet<&str> = q.relevant.iter().map(String::as_str).collect();
            let s = metrics::score(&ids, &relevant, k);
            let rows: Vec<Retrieval> = hits
                .iter()
                .zip(&ids)
                .enumerate()
                .take(k)
                .map(|(rank, (h, id))| Retrieval {
                    id: stable_id("retrieval", &[&q.query_id, &r.retriever, id]),
                    question_id: q.question_id.clone(),
                    query_id: q.query_id.clone(),
                    retriever: r.retriever.clone(),
                    chunk_id: id.to_string(),
                    rank: rank as i64 + 1,
                    score: h.score,
                    ground_truth: relevant.contains(id),
                })
                .collect();
            Some((s, rows))
        });
        for ((q, _), out) in pairs.iter().zip(per_query) {
            let Some((s, mut query_rows)) = out else {
                continue;
            };
            m.add("all", s);
            m.add(&q.pattern_kind, s);
            m.add(&format!("query:{}", q.query_kind), s);
            rows.append(&mut query_rows);
        }
    }
    // Ids are distinct (a query's hits are distinct chunks): any sort gives this order.
    noisebench_core::sort_by_id(&mut rows);
    (rows, means)
}

/// The metric rows of [`assemble`]'s sums, sorted by id.
pub(crate) fn metric_rows(means: &BTreeMap<String, Means>, k: usize) -> Vec<Metric> {
    let mut rows = Vec::new();
    for (retriever, m) in means {
        for (group, (s, n)) in m.means() {
            for (metric, value) in [("recall", s.recall), ("mrr", s.rr), ("ndcg", s.ndcg)] {
                rows.push(Metric {
                    id: stable_id(
                        "metric",
                        &[retriever, "retrieval", metric, group, &k.to_string()],
                    ),
                    scope: retriever.clone(),
                    task: "retrieval".into(),
                    metric: metric.into(),
                    group: group.into(),
                    k: Some(k as i64),
                    value,
                    ci_low: None,
                    ci_high: None,
                    n: n as i64,
                });
            }
        }
    }
    noisebench_core::sort_by_id(&mut rows);
    rows
}

/// What a run found: the stage's facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct RetrievalSummary {
    pub chunks: usize,
    pub queries: usize,
    pub top_k: usize,
    /// `exact` when the embedding retriever ran (the only vector search there is).
    pub vector_search: Option<String>,
    /// Per retriever: queries scored, Recall@k, MRR@k, NDCG@k over all of them.
    pub overall: BTreeMap<String, SummaryScores>,
    /// Per retriever and pattern kind: Recall@k.
    pub recall_by_pattern: BTreeMap<String, BTreeMap<String, f64>>,
    pub drops: BTreeMap<String, usize>,
    /// Rerank calls that failed (their queries keep the first-stage results only).
    pub rerank_failed: usize,
    /// Queries never sent to the reranker after it kept failing.
    pub rerank_skipped: usize,
    /// The user's retriever, when configured: what it left out.
    pub user: Option<user::UserSummary>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct SummaryScores {
    pub n: usize,
    pub recall: f64,
    pub mrr: f64,
    pub ndcg: f64,
}

impl RetrievalSummary {
    fn record(&mut self, means: &BTreeMap<String, Means>) {
        for (retriever, m) in means {
            for (group, (s, n)) in m.means() {
                if group == "all" {
                    self.overall.insert(
                        retriever.clone(),
                        SummaryScores {
                            n,
                            recall: s.recall,
                            mrr: s.rr,
                            ndcg: s.ndcg,
                        },
                    );
                } else if !group.starts_with("query:") {
                    self.recall_by_pattern
                        .entry(retriever.clone())
                        .or_default()
                        .insert(group.to_string(), s.recall);
                }
            }
        }
    }

    fn facts(&self) -> StageFacts {
        let k = self.top_k;
        let mut lines = vec![format!(
            "{} queries over {} chunks, top {k} per retriever{}.",
            self.queries,
            self.chunks,
            self.vector_search
                .as_ref()
                .map(|v| format!(" (vector search: {v})"))
                .unwrap_or_default()
        )];
        for (r, s) in &self.overall {
            let by: Vec<String> = self
                .recall_by_pattern
                .get(r)
                .into_iter()
                .flatten()
                .map(|(p, v)| format!("{p} {v:.3}"))
                .collect();
            lines.push(format!(
                "{r}: Recall@{k} {:.3}, MRR@{k} {:.3}, NDCG@{k} {:.3} over {} queries; Recall@{k} by pattern: {}.",
                s.recall,
                s.mrr,
                s.ndcg,
                s.n,
                if by.is_empty() { "none".into() } else { by.join(", ") }
            ));
        }
        if self.rerank_failed + self.rerank_skipped > 0 {
            lines.push(format!(
                "Reranker: {} calls failed, {} queries not sent; those queries keep first-stage results only.",
                self.rerank_failed, self.rerank_skipped
            ));
        }
        if let Some(u) = &self.user {
            lines.push(format!(
                "{}: {} queries without a ranking, {} rows or hits left out, {} run queries naming no query.",
                u.retriever, u.queries_without_results, u.rows_left_out, u.run_queries_unused
            ));
        }
        if !self.drops.is_empty() {
            let reasons: Vec<String> = self.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
            lines.push(format!("Dropped: {}.", reasons.join(", ")));
        }
        StageFacts::new("Retrieval", lines, self)
    }
}

impl TypedStage for RetrievalStage {
    type Config = RetrievalConfig;
    const KIND: &'static str = "retrieval";
    const VERSION: u32 = 1;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec::required("questions", TableKind::Questions),
            InputSpec::optional("query_perturbations", TableKind::QueryPerturbations),
            InputSpec::required("chunks", TableKind::Chunks),
        ]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec::new("retrievals", TableKind::Retrievals),
            OutputSpec::new("retrieval_metrics", TableKind::Metrics),
        ]
    }

    fn validate(&self, c: &RetrievalConfig, root: &std::path::Path) -> Result<(), ConfigError> {
        if c.top_k == 0 {
            return Err(ConfigError::new("top_k", "must be at least 1"));
        }
        if !c.bm25 && !c.embedding && c.user.is_none() {
            return Err(ConfigError::new(
                "bm25",
                "at least one of bm25, embedding and user must be on",
            ));
        }
        if c.embed_batch == 0 {
            return Err(ConfigError::new("embed_batch", "must be at least 1"));
        }
        if let Some(r) = &c.rerank {
            if c.rerank_candidates < c.top_k {
                return Err(ConfigError::new(
                    "rerank_candidates",
                    format!("must be at least top_k ({})", c.top_k),
                ));
            }
            let source_on = match c.rerank_source {
                RerankSource::Embedding => c.embedding,
                RerankSource::Bm25 => c.bm25,
            };
            if !source_on {
                return Err(ConfigError::new(
                    "rerank_source",
                    "names a retriever that is off",
                ));
            }
            if c.rerank_max_consecutive_failures == 0 {
                return Err(ConfigError::new(
                    "rerank_max_consecutive_failures",
                    "must be at least 1",
                ));
            }
            Reranker::new(r).map_err(|e| ConfigError::new("rerank", e.to_string()))?;
        }
        if let Some(u) = &c.user {
            u.validate(root)?;
        }
        Ok(())
    }

    fn secret_variables(&self, c: &RetrievalConfig) -> Vec<(String, String)> {
        c.user
            .iter()
            .filter_map(|u| u.http.as_ref()?.api_key_env.clone())
            .map(|var| ("user.http.api_key_env".to_string(), var))
            .collect()
    }

    fn external_files(&self, c: &RetrievalConfig, root: &std::path::Path) -> Vec<PathBuf> {
        c.user
            .iter()
            .filter_map(|u| u.run.as_ref())
            .map(|p| root.join(p))
            .collect()
    }

    fn reads_live_sources(&self, c: &RetrievalConfig) -> bool {
        c.user.as_ref().is_some_and(|u| u.http.is_some())
    }

    fn environment(&self) -> serde_json::Value {
        serde_json::json!({ "embedder": self.llm.embedder_name() })
    }

    fn run(
        &self,
        c: &RetrievalConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let questions: Vec<Question> = inputs.take("questions")?;
        let perturbations: Vec<QueryPerturbation> = inputs
            .take_optional("query_perturbations")?
            .unwrap_or_default();
        let mut chunks: Vec<Chunk> = inputs.take("chunks")?;
        noisebench_core::sort_by_id(&mut chunks);
        chunks.dedup_by(|a, b| a.id == b.id);
        let stage = ctx.stage_id.as_str();
        let mut drops = Drops::new(stage);
        let chunk_ids: BTreeSet<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
        let items = queries(&questions, &perturbations, &chunk_ids, &mut drops);
        let k = c.top_k;
        let mut summary = RetrievalSummary {
            chunks: chunks.len(),
            queries: items.len(),
            top_k: k,
            ..RetrievalSummary::default()
        };
        let threads = if c.threads == 0 {
            noisebench_core::default_threads()
        } else {
            c.threads
        };
        let texts: Vec<&str> = items.iter().map(|q| q.text.as_str()).collect();
        // First-stage depth: enough for the reranker when it reads this retriever.
        let depth = |source: RerankSource| {
            if c.rerank.is_some() && c.rerank_source == source {
                c.rerank_candidates
            } else {
                k
            }
        };
        let mut ranked: Vec<Ranked> = Vec::new();
        let mut first_stage: HashMap<RerankSource, Vec<Option<Vec<Scored>>>> = HashMap::new();

        if c.bm25 && !items.is_empty() {
            let out = bm25_results(
                &chunks,
                &items,
                &texts,
                depth(RerankSource::Bm25),
                threads,
                ctx,
                &mut drops,
            )?;
            first_stage.insert(RerankSource::Bm25, out);
            ranked.push(Ranked {
                retriever: "bm25".into(),
                results: Vec::new(),
            });
        }

        if c.embedding && !items.is_empty() {
            let retriever = format!("embedding:{}", self.llm.embedder_name());
            match self.embedding_results(
                c,
                stage,
                ctx,
                &chunks,
                &texts,
                depth(RerankSource::Embedding),
            ) {
                Ok(results) => {
                    summary.vector_search = Some("exact".into());
                    first_stage.insert(RerankSource::Embedding, results);
                    ranked.push(Ranked {
                        retriever,
                        results: Vec::new(),
                    });
                }
                Err((what, reason, detail)) => {
                    // The vectors could not be made: no embedding rows this run; a transient
                    // reason makes the stage partial, so the next run tries again.
                    drops.add_failure(what, reason, detail);
                }
            }
        }

        // Each first-stage retriever keeps its top k; the reranker reads its candidates.
        for r in &mut ranked {
            let source = if r.retriever == "bm25" {
                RerankSource::Bm25
            } else {
                RerankSource::Embedding
            };
            if let Some(results) = first_stage.get(&source) {
                r.results = results
                    .iter()
                    .map(|x| x.as_ref().map(|h| h.iter().take(k).copied().collect()))
                    .collect();
            }
        }
        if let Some(rc) = &c.rerank
            && let Some(candidates) = first_stage.get(&c.rerank_source)
        {
            let reranker = Reranker::new(rc).map_err(|e| StageError::Other(e.to_string()))?;
            let results = rerank_all(
                &reranker,
                &items,
                &chunks,
                candidates,
                k,
                c.rerank_max_consecutive_failures,
                ctx,
                &mut drops,
                &mut summary,
            );
            ranked.push(Ranked {
                retriever: format!("rerank:{}", reranker.model()),
                results,
            });
        }

        if let Some(u) = &c.user
            && !items.is_empty()
        {
            let ids: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
            let (results, user_summary) =
                user::user_results(u, &ctx.root, &items, &ids, k, &mut drops)?;
            summary.user = Some(user_summary);
            ranked.push(Ranked {
                retriever: u.retriever(),
                results,
            });
        }

        let (rows, means) = assemble(&items, &chunks, &ranked, k);
        let metric_rows = metric_rows(&means, k);
        summary.record(&means);
        let report_drops = drops.into_records();
        for d in &report_drops {
            *summary.drops.entry(d.reason.clone()).or_default() += 1;
        }
        let report = StageReport {
            items_in: (questions.len() + perturbations.len()) as u64,
            items_out: rows.len() as u64,
            drops: report_drops,
        };
        Ok(StageOutput::new(report)
            .with_table("retrievals", rows)
            .with_table("retrieval_metrics", metric_rows)
            .with_facts(summary.facts()))
    }
}

/// BM25's hits for every query (a question and its perturbations searched together as one
/// family), `depth` deep; a query the index failed on has none and a counted failure.
fn bm25_results(
    chunks: &[Chunk],
    items: &[QueryItem],
    texts: &[&str],
    depth: usize,
    threads: usize,
    ctx: &StageContext,
    drops: &mut Drops,
) -> Result<Vec<Option<Vec<Scored>>>, StageError> {
    // The index numbers the chunks report by report (ties by id): a report's chunks share its
    // rarer words (names, figures), so those words' postings fall in a few of the index's
    // blocks and a search passes over the rest (`Impacts::search`). Scores and ties do not
    // depend on the numbering; hits are mapped back to places in `chunks`.
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    order.sort_by(|&a, &b| {
        (chunks[a].report_id.as_str(), chunks[a].id.as_str())
            .cmp(&(chunks[b].report_id.as_str(), chunks[b].id.as_str()))
    });
    let index = Bm25Chunks::build(
        order
            .iter()
            .map(|&i| (chunks[i].id.as_str(), chunks[i].text.as_str())),
    )
    .map_err(|e| StageError::Other(format!("bm25 index: {e}")))?;
    let bar = ctx
        .progress
        .bar("retrieval: bm25", Some(items.len() as u64));
    let tick = || bar.inc(1);
    // A question and its perturbations: one family, searched together.
    let mut family_of: HashMap<&str, u32> = HashMap::new();
    let families: Vec<u32> = items
        .iter()
        .map(|q| {
            let n = family_of.len() as u32;
            *family_of.entry(q.question_id.as_str()).or_insert(n)
        })
        .collect();
    let results = index.search_all(texts, &families, depth, threads, &tick);
    bar.finish();
    let mut out = Vec::with_capacity(results.len());
    for (q, r) in items.iter().zip(results) {
        match r {
            Ok(hits) => out.push(Some(
                hits.into_iter()
                    .map(|h| Scored {
                        chunk: order[h.chunk],
                        score: h.score,
                    })
                    .collect(),
            )),
            Err(e) => {
                drops.add_failure(format!("{}/bm25", q.query_id), "bm25_error", e.to_string());
                out.push(None);
            }
        }
    }
    Ok(out)
}

/// An embedding failure: (item, reason, detail) of its drop record.
type EmbedFailure = (String, noisebench_core::DropReason, String);

/// Per query its ranked chunks (`None`: not run).
pub(crate) type PerQuery = Vec<Option<Vec<Scored>>>;

impl RetrievalStage {
    /// Embed chunks and queries in batches, build the vector search and run every query.
    fn embedding_results(
        &self,
        c: &RetrievalConfig,
        stage: &str,
        ctx: &StageContext,
        chunks: &[Chunk],
        texts: &[&str],
        depth: usize,
    ) -> Result<PerQuery, EmbedFailure> {
        let chunk_texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        let chunk_vectors = self.embed_all(
            c,
            stage,
            ctx,
            "retrieval: embed chunks",
            &chunk_texts,
            "chunks",
        )?;
        let query_vectors =
            self.embed_all(c, stage, ctx, "retrieval: embed queries", texts, "queries")?;
        let ids: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
        let index = VectorSearch::build(&ids, &chunk_vectors).map_err(|e| {
            (
                "embedding:chunks".to_string(),
                "embedding_invalid".into(),
                e.to_string(),
            )
        })?;
        let bar = ctx
            .progress
            .bar("retrieval: nearest neighbours", Some(texts.len() as u64));
        let threads = if c.threads == 0 {
            noisebench_core::default_threads()
        } else {
            c.threads
        };
        let tick = |n: u64| bar.inc(n);
        let results = index
            .search_all(&query_vectors, depth, threads, &tick)
            .into_iter()
            .map(Result::ok)
            .collect();
        bar.finish();
        Ok(results)
    }

    fn embed_all(
        &self,
        c: &RetrievalConfig,
        stage: &str,
        ctx: &StageContext,
        label: &str,
        texts: &[&str],
        what: &str,
    ) -> Result<Vec<Vec<f32>>, EmbedFailure> {
        let bar = ctx.progress.bar(label, Some(texts.len() as u64));
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(c.embed_batch) {
            let e = self.llm.embed(stage, batch).map_err(|e| {
                (
                    format!("embedding:{what}"),
                    e.as_drop_reason(),
                    e.to_string(),
                )
            })?;
            out.extend(e.vectors);
            bar.inc(batch.len() as u64);
        }
        bar.finish();
        Ok(out)
    }
}

/// Rerank each query's first-stage candidates; `None` for a query whose call failed or was not
/// sent. After `max_failures` failures in a row the rest are not sent.
#[allow(clippy::too_many_arguments)]
fn rerank_all(
    reranker: &Reranker,
    items: &[QueryItem],
    chunks: &[Chunk],
    candidates: &[Option<Vec<Scored>>],
    k: usize,
    max_failures: usize,
    ctx: &StageContext,
    drops: &mut Drops,
    summary: &mut RetrievalSummary,
) -> Vec<Option<Vec<Scored>>> {
    let bar = ctx
        .progress
        .bar("retrieval: rerank", Some(items.len() as u64));
    let in_a_row = AtomicUsize::new(0);
    let mut out = Vec::with_capacity(items.len());
    for (q, cands) in items.iter().zip(candidates) {
        bar.inc(1);
        let Some(cands) = cands else {
            out.push(None);
            continue;
        };
        if in_a_row.load(Ordering::Relaxed) >= max_failures {
            summary.rerank_skipped += 1;
            out.push(None);
            continue;
        }
        if cands.is_empty() {
            out.push(Some(Vec::new()));
            continue;
        }
        let docs: Vec<String> = cands.iter().map(|s| chunks[s.chunk].text.clone()).collect();
        match reranker.rerank(&q.text, &docs, k) {
            Ok(hits) => {
                in_a_row.store(0, Ordering::Relaxed);
                let mut scored: Vec<Scored> = hits
                    .iter()
                    .map(|h| Scored {
                        chunk: cands[h.index].chunk,
                        score: h.relevance_score,
                    })
                    .collect();
                scored.sort_by(|a, b| {
                    b.score
                        .total_cmp(&a.score)
                        .then_with(|| chunks[a.chunk].id.cmp(&chunks[b.chunk].id))
                });
                out.push(Some(scored));
            }
            Err(e) => {
                in_a_row.fetch_add(1, Ordering::Relaxed);
                summary.rerank_failed += 1;
                drops.add_failure(
                    format!("{}/rerank", q.query_id),
                    "rerank_failed",
                    format!("{}: {e}", e.reason()),
                );
                out.push(None);
            }
        }
    }
    bar.finish();
    if summary.rerank_skipped > 0 {
        drops.add_failure(
            "rerank",
            "rerank_abandoned",
            format!(
                "{} failed calls in a row; {} queries not sent, kept with first-stage results only",
                max_failures, summary.rerank_skipped
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_unknown_fields() {
        let c = RetrievalConfig::default();
        assert_eq!(c.top_k, 3);
        assert!(
            serde_json::from_value::<RetrievalConfig>(serde_json::json!({"exact_max": 10}))
                .unwrap_err()
                .to_string()
                .contains("unknown field"),
            "the HNSW options are gone"
        );
        assert!(c.bm25 && c.embedding && c.rerank.is_none());
        assert!(
            serde_json::from_value::<RetrievalConfig>(serde_json::json!({"topk": 3}))
                .unwrap_err()
                .to_string()
                .contains("unknown field")
        );
    }

    #[test]
    fn queries_drop_questions_without_ground_truth_and_orphan_perturbations() {
        let q = |id: &str, chunks: &[&str]| Question {
            id: id.into(),
            kind: "single_hop".into(),
            question: format!("question {id}"),
            answer_chunk_ids: chunks.iter().map(|c| c.to_string()).collect(),
            ..Question::default()
        };
        let p = |id: &str, question: &str| QueryPerturbation {
            id: id.into(),
            question_id: question.into(),
            kind: "character_level".into(),
            perturbed_query: "qeustion".into(),
            ..QueryPerturbation::default()
        };
        let chunk_ids: BTreeSet<&str> = ["c1", "c2"].into_iter().collect();
        let mut drops = Drops::new("retrieval");
        let items = queries(
            &[q("q1", &["c1", "c9"]), q("q2", &[]), q("q3", &["c9"])],
            &[p("p1", "q1"), p("p2", "q2"), p("p3", "q7")],
            &chunk_ids,
            &mut drops,
        );
        let ids: Vec<&str> = items.iter().map(|i| i.query_id.as_str()).collect();
        assert_eq!(ids, ["p1", "q1"]);
        assert_eq!(items[0].question_id, "q1");
        assert_eq!(items[0].relevant, ["c1".to_string()].into_iter().collect());
        let reasons: Vec<String> = drops.into_records().into_iter().map(|d| d.reason).collect();
        assert_eq!(
            reasons,
            [
                "no_ground_truth",
                "unknown_answer_chunks",
                "question_dropped",
                "unknown_question"
            ]
        );
    }

    #[test]
    fn metric_rows_cover_every_group() {
        let items = vec![QueryItem {
            query_id: "q1".into(),
            question_id: "q1".into(),
            text: "x".into(),
            query_kind: "original".into(),
            pattern_kind: "single_hop".into(),
            relevant: ["c1".to_string()].into_iter().collect(),
        }];
        let chunks: Vec<Chunk> = ["c0", "c1"]
            .iter()
            .map(|id| Chunk {
                id: id.to_string(),
                ..Chunk::default()
            })
            .collect();
        let ranked = [Ranked {
            retriever: "bm25".into(),
            results: vec![Some(vec![
                Scored {
                    chunk: 0,
                    score: 2.0,
                },
                Scored {
                    chunk: 1,
                    score: 1.0,
                },
            ])],
        }];
        let (rows, means) = assemble(&items, &chunks, &ranked, 3);
        assert_eq!(rows.len(), 2);
        assert!(
            rows.iter()
                .any(|r| r.chunk_id == "c1" && r.rank == 2 && r.ground_truth)
        );
        let metrics = metric_rows(&means, 3);
        assert_eq!(metrics.len(), 9, "3 groups x 3 metrics");
        let mrr = metrics
            .iter()
            .find(|m| m.metric == "mrr" && m.group == "all")
            .unwrap();
        assert_eq!((mrr.value, mrr.n, mrr.k), (0.5, 1, Some(3)));
    }
}
