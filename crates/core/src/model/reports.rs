//! The report track: reports, chunks, triplets, questions (with judgements and splits) and their
//! perturbations. The graph between triplets and questions is in `graph.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::Record;
use crate::schema::{Column, DType::*, TableSchema};

/// A structural block of an ingested report, in reading order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Heading {
        level: u8,
        text: String,
    },
    Paragraph {
        text: String,
        page: Option<u32>,
    },
    Table {
        /// The table as Markdown (or as the original whitespace-aligned text).
        markdown: String,
        caption: Option<String>,
        footnotes: Vec<String>,
        page: Option<u32>,
    },
}

/// A long report (a 10-K section, a parsed PDF, an HTML page) split into blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub id: String,
    pub domain: String,
    pub format: String,
    pub source_path: String,
    pub title: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub blocks: Vec<Block>,
}

impl Record for Report {
    fn schema() -> TableSchema {
        TableSchema {
            table: "reports".into(),
            version: 1,
            description:
                "Ingested reports as ordered blocks (headings, paragraphs, tables) with metadata."
                    .into(),
            columns: vec![
                Column::new(
                    "id",
                    Str,
                    "Stable id from domain and source identity (e.g. cik and accession).",
                ),
                Column::new("domain", Str, "finance, economics, policy or general."),
                Column::new("format", Str, "edgar, mineru, html, markdown or text."),
                Column::new(
                    "source_path",
                    Str,
                    "Input file, relative to the repository root.",
                ),
                Column::nullable("title", Str, "Report title."),
                Column::new(
                    "metadata",
                    Json,
                    "Domain metadata (finance: cik, company, filing_type, filing_date, period...).",
                ),
                Column::new(
                    "blocks",
                    Json,
                    "Ordered blocks: heading, paragraph, table (Markdown, caption, footnotes, page).",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A retrieval-sized piece of a report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub id: String,
    pub report_id: String,
    pub index: i64,
    pub text: String,
    pub token_count: i64,
    pub contains_table: bool,
    pub oversize_table: bool,
    pub section: Option<String>,
    pub page: Option<i64>,
    pub metadata: BTreeMap<String, String>,
}

impl Record for Chunk {
    fn schema() -> TableSchema {
        TableSchema {
            table: "chunks".into(),
            version: 1,
            description: "Report chunks of about a configured token count, never splitting a table or short paragraph.".into(),
            columns: vec![
                Column::new("id", Str, "Stable unique id from report id, index and text."),
                Column::new("report_id", Str, "The report."),
                Column::new("index", Int, "0-based position in the report."),
                Column::new("text", Str, "Chunk text (tables as Markdown)."),
                Column::new("token_count", Int, "cl100k tokens in text."),
                Column::new("contains_table", Bool, "Whether the chunk holds a table."),
                Column::new("oversize_table", Bool, "A single table larger than the limit, kept whole."),
                Column::nullable("section", Str, "Section title the chunk belongs to."),
                Column::nullable("page", Int, "Page of the chunk's first block, if known."),
                Column::new("metadata", Json, "The report's metadata."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// An (entity, relation, entity) fact grounded in one chunk's sentence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Triplet {
    pub id: String,
    pub report_id: String,
    pub chunk_id: String,
    pub entity_1: String,
    pub relation: String,
    pub entity_2: String,
    pub source_sentence: String,
    pub provenance: String,
}

impl Record for Triplet {
    fn schema() -> TableSchema {
        TableSchema {
            table: "triplets".into(),
            version: 1,
            description:
                "Knowledge-graph triplets, each grounded in a sentence of the chunk it names."
                    .into(),
            columns: vec![
                Column::new(
                    "id",
                    Str,
                    "Stable id from the report, the normalised triplet and its sentence (an edit elsewhere in the chunk keeps it).",
                ),
                Column::new("report_id", Str, "The report."),
                Column::new(
                    "chunk_id",
                    Str,
                    "The chunk whose text contains the source sentence.",
                ),
                Column::new("entity_1", Str, "Head entity."),
                Column::new("relation", Str, "Relation."),
                Column::new("entity_2", Str, "Tail entity."),
                Column::new(
                    "source_sentence",
                    Str,
                    "The sentence the triplet comes from, verbatim.",
                ),
                Column::new(
                    "provenance",
                    Str,
                    "`offline` or `openai:<model>` and prompt version.",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A question-answer pair generated from a graph pattern, as generated: what later stages
/// decide about it (judge scores, split) lives in their own tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub pattern_id: String,
    pub kind: String,
    pub question: String,
    pub answer: String,
    pub answer_chunk_ids: Vec<String>,
    pub source_sentences: Vec<String>,
    pub triplet_ids: Vec<String>,
    pub entity_1: Vec<String>,
    pub relation: Vec<String>,
    pub entity_2: Vec<String>,
    pub pivot_entities: Vec<String>,
    pub report_ids: Vec<String>,
    pub metadata: BTreeMap<String, String>,
    pub provenance: String,
}

impl Record for Question {
    fn schema() -> TableSchema {
        TableSchema {
            table: "questions".into(),
            version: 3,
            description:
                "Single- and multi-hop questions with answers and source chunks, as generated."
                    .into(),
            columns: vec![
                Column::new(
                    "id",
                    Str,
                    "Stable id from the pattern id: one question per pattern, the same id when a refresh rewords it.",
                ),
                Column::new(
                    "pattern_id",
                    Str,
                    "The `patterns` group it was generated from.",
                ),
                Column::new(
                    "kind",
                    Str,
                    "single_hop, chained_multi_hop, star_shaped or inverted_star_shaped.",
                ),
                Column::new("question", Str, "The question."),
                Column::new("answer", Str, "The answer."),
                Column::new(
                    "answer_chunk_ids",
                    StrList,
                    "Chunks holding the answer's evidence.",
                ),
                Column::new("source_sentences", StrList, "Evidence sentences."),
                Column::new("triplet_ids", StrList, "Triplets of the pattern."),
                Column::new("entity_1", StrList, "Head entities, one per triplet."),
                Column::new("relation", StrList, "Relations, one per triplet."),
                Column::new("entity_2", StrList, "Tail entities, one per triplet."),
                Column::new(
                    "pivot_entities",
                    StrList,
                    "Entities the question names only indirectly (multi-hop); empty for single-hop.",
                ),
                Column::new("report_ids", StrList, "Reports of the answer chunks."),
                Column::new(
                    "metadata",
                    Json,
                    "Report metadata the question is specific to (company, filing year, country, grantee...), with `domain`.",
                ),
                Column::new("provenance", Str, "Backend, model and prompt versions."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A question the judge scored at or below the threshold in some dimension: kept for review,
/// out of the benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RejectedQuestion {
    pub id: String,
    pub pattern_id: String,
    pub kind: String,
    pub question: String,
    pub answer: String,
    pub answer_chunk_ids: Vec<String>,
    pub clarity: i64,
    pub correctness: i64,
    pub reasonableness: Option<i64>,
    pub threshold: i64,
    pub reason: String,
    pub provenance: String,
}

impl Record for RejectedQuestion {
    fn schema() -> TableSchema {
        TableSchema {
            table: "rejected_questions".into(),
            version: 1,
            description: "Questions the judge rejected, with their scores and why.".into(),
            columns: vec![
                Column::new("id", Str, "The question's id (as in `questions`)."),
                Column::new("pattern_id", Str, "The pattern it was generated from."),
                Column::new("kind", Str, "The question's pattern kind."),
                Column::new("question", Str, "The question."),
                Column::new("answer", Str, "The answer."),
                Column::new("answer_chunk_ids", StrList, "Its answer chunks."),
                Column::new("clarity", Int, "Score 1-5."),
                Column::new("correctness", Int, "Score 1-5."),
                Column::nullable("reasonableness", Int, "Score 1-5 (multi-hop only)."),
                Column::new(
                    "threshold",
                    Int,
                    "A question is kept only when every score is above this.",
                ),
                Column::new(
                    "reason",
                    Str,
                    "The dimensions at or below the threshold, e.g. `clarity 3`.",
                ),
                Column::new(
                    "provenance",
                    Str,
                    "The judge's backend, model and prompt version.",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A judge's scores for one question.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionJudgement {
    pub id: String,
    pub question_id: String,
    pub clarity: i64,
    pub correctness: i64,
    pub reasonableness: Option<i64>,
    pub kept: bool,
    pub provenance: String,
}

impl Record for QuestionJudgement {
    fn schema() -> TableSchema {
        TableSchema {
            table: "question_judgements".into(),
            version: 1,
            description: "Judge scores per question and whether it passed the threshold.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from the question id and the judge."),
                Column::new("question_id", Str, "The question judged."),
                Column::new("clarity", Int, "Score 1-5."),
                Column::new("correctness", Int, "Score 1-5."),
                Column::nullable("reasonableness", Int, "Score 1-5 (multi-hop only)."),
                Column::new("kept", Bool, "Every score is above the threshold."),
                Column::new(
                    "provenance",
                    Str,
                    "The judge's backend, model and prompt version.",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// The split a question was assigned to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionSplit {
    pub id: String,
    pub question_id: String,
    pub kind: String,
    pub split: String,
}

impl Record for QuestionSplit {
    fn schema() -> TableSchema {
        TableSchema {
            table: "question_splits".into(),
            version: 1,
            description: "Train/test assignment per question, by a seeded hash of its id.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from the question id."),
                Column::new("question_id", Str, "The question."),
                Column::new(
                    "kind",
                    Str,
                    "The question's pattern kind (splits are per kind).",
                ),
                Column::new("split", Str, "`train` or `test`."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A perturbed version of a question's query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryPerturbation {
    pub id: String,
    pub question_id: String,
    pub kind: String,
    pub perturbed_query: String,
    pub similarity: f64,
    pub provenance: String,
}

impl Record for QueryPerturbation {
    fn schema() -> TableSchema {
        TableSchema {
            table: "query_perturbations".into(),
            version: 1,
            description: "Query perturbations: character noise, word swaps, grammar rewrite, irrelevant detail.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from question id, kind and text."),
                Column::new("question_id", Str, "The question."),
                Column::new("kind", Str, "character_level, word_level, grammar_perturbation or irrelevant_info."),
                Column::new("perturbed_query", Str, "The perturbed query."),
                Column::new("similarity", Float, "Embedding cosine similarity to the original query."),
                Column::new("provenance", Str, "Rule or model that made it."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// An altered version of a question's evidence chunk (retrieval results are `retrievals` rows).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocumentPerturbation {
    pub id: String,
    pub question_id: String,
    pub chunk_id: String,
    pub kind: String,
    pub text: String,
    pub similarity: Option<f64>,
    pub provenance: String,
}

impl Record for DocumentPerturbation {
    fn schema() -> TableSchema {
        TableSchema {
            table: "document_perturbations".into(),
            version: 2,
            description: "Document perturbations: the answer's sentences deleted, back-translated."
                .into(),
            columns: vec![
                Column::new("id", Str, "Stable id from question id, chunk id and kind."),
                Column::new("question_id", Str, "The question."),
                Column::new("chunk_id", Str, "The chunk perturbed."),
                Column::new("kind", Str, "regex_delete or back_translation."),
                Column::new("text", Str, "The perturbed text."),
                Column::nullable("similarity", Float, "Similarity to the original chunk."),
                Column::new("provenance", Str, "Rule or model that made it."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}
