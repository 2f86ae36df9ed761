//! The claims track: claims, queries, search hits, documents, claim-document labels.

use serde::{Deserialize, Serialize};

use crate::schema::Record;
use crate::schema::{Column, DType::*, TableSchema};

/// A binary verdict, the gold label of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    True,
    False,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::True => "true",
            Verdict::False => "false",
        }
    }
}

/// A fact-checked claim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub id: String,
    pub text: String,
    pub verdict: String,
    pub original_rating: String,
    pub speaker: Option<String>,
    pub claim_date: Option<String>,
    pub venue: Option<String>,
    pub fact_checker: Option<String>,
    pub review_date: Option<String>,
    pub url: Option<String>,
    pub original_url: Option<String>,
    pub country: Option<String>,
    pub topics: Vec<String>,
    pub source: String,
    pub fetched_at: Option<String>,
    pub archive_ref: Option<String>,
}

impl Record for Claim {
    fn schema() -> TableSchema {
        TableSchema {
            table: "claims".into(),
            version: 1,
            description:
                "Fact-checked claims with a binary verdict mapped from the fact-checker's rating."
                    .into(),
            columns: vec![
                Column::new(
                    "id",
                    Str,
                    "Stable id: from the canonical fact-check URL, else from source and claim text.",
                ),
                Column::new("text", Str, "The claim as the fact-checker quotes it."),
                Column::new(
                    "verdict",
                    Str,
                    "Binary gold verdict: `true` or `false`, mapped by the configured verdict preset.",
                ),
                Column::new(
                    "original_rating",
                    Str,
                    "The fact-checker's rating, normalised to a slug (e.g. `half-true`, `supported`).",
                ),
                Column::nullable("speaker", Str, "Who made the claim."),
                Column::nullable("claim_date", Str, "When the claim was made (YYYY-MM-DD)."),
                Column::nullable(
                    "venue",
                    Str,
                    "Where the claim was made (a speech, a post, an ad).",
                ),
                Column::nullable("fact_checker", Str, "The publisher of the fact-check."),
                Column::nullable(
                    "review_date",
                    Str,
                    "When the fact-check was published (YYYY-MM-DD).",
                ),
                Column::nullable("url", Str, "The fact-check article's URL."),
                Column::nullable(
                    "original_url",
                    Str,
                    "The URL where the claim itself appeared.",
                ),
                Column::nullable(
                    "country",
                    Str,
                    "ISO country code of the claim or publisher.",
                ),
                Column::new("topics", StrList, "Topic tags from the fact-checker."),
                Column::new(
                    "source",
                    Str,
                    "Where the row came from: `<preset>:<file>` for imports, the site for scrapes.",
                ),
                Column::nullable(
                    "fetched_at",
                    Str,
                    "When the fact-check page was fetched (RFC 3339).",
                ),
                Column::nullable("archive_ref", Str, "sha256 of the archived raw page."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A search query made for a claim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Query {
    pub id: String,
    pub claim_id: String,
    pub kind: String,
    pub text: String,
    pub provenance: String,
    pub llm_request: Option<String>,
}

impl Record for Query {
    fn schema() -> TableSchema {
        TableSchema {
            table: "queries".into(),
            version: 1,
            description: "Search queries made from claims (keywords, yes/no question, the claim itself, counter-evidence).".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from claim id, kind and text."),
                Column::new("claim_id", Str, "The claim the query is for."),
                Column::new("kind", Str, "`keywords`, `question`, `claim` or `counter`."),
                Column::new("text", Str, "The query text."),
                Column::new("provenance", Str, "Who wrote the query: `rule`, `offline`, `openai:<model>`."),
                Column::nullable("llm_request", Str, "Request hash of the LLM call that made it (joins llm_calls)."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// One ranked result of one query from one search backend.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub id: String,
    pub query_id: String,
    pub claim_id: String,
    pub backend: String,
    pub rank: i64,
    pub url: String,
    pub title: Option<String>,
    pub snippet: Option<String>,
    pub published: Option<String>,
    pub corpus_id: Option<String>,
    pub text: Option<String>,
    pub retrieved_by: Option<String>,
}

impl Record for SearchHit {
    fn schema() -> TableSchema {
        TableSchema {
            table: "search_hits".into(),
            version: 3,
            description: "Ranked search results per query and backend.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from query id, backend and URL."),
                Column::new("query_id", Str, "The query that returned the hit."),
                Column::new("claim_id", Str, "The claim the query was made for."),
                Column::new(
                    "backend",
                    Str,
                    "Search backend (`google`, `brave`, `searxng`, `reddit`, `reddit-dump`, `corpus`, `fixture`).",
                ),
                Column::new("rank", Int, "1-based rank in the backend's answer."),
                Column::new(
                    "url",
                    Str,
                    "The result's URL as returned (a corpus document: `corpus://<corpus name>/<its id>`).",
                ),
                Column::nullable("title", Str, "Result title."),
                Column::nullable("snippet", Str, "Result snippet."),
                Column::nullable(
                    "published",
                    Str,
                    "Publication date if the backend gives one.",
                ),
                Column::nullable(
                    "corpus_id",
                    Str,
                    "A corpus document: its id in the user's corpus.",
                ),
                Column::nullable(
                    "text",
                    Str,
                    "A corpus document: its whole text, so the documents stage fetches nothing.",
                ),
                Column::nullable(
                    "retrieved_by",
                    Str,
                    "A corpus backend's `dense` or `hybrid` hit: each retriever that found it and its rank there (`bm25:2 dense:1`).",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A fetched document (a web page or a Reddit post), deduplicated by canonical URL and content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub id: String,
    pub url: String,
    pub canonical_url: String,
    pub domain: String,
    pub source_type: String,
    pub source_type_source: String,
    pub title: Option<String>,
    pub text: String,
    pub published: Option<String>,
    pub language: Option<String>,
    pub content_hash: String,
    pub fetched_at: Option<String>,
    pub archive_ref: Option<String>,
    pub subreddit: Option<String>,
    pub author: Option<String>,
    pub score: Option<i64>,
    pub is_link_post: bool,
    pub body_removed: bool,
    pub corpus_id: Option<String>,
}

impl Record for Document {
    fn schema() -> TableSchema {
        TableSchema {
            table: "documents".into(),
            version: 4,
            description: "Fetched documents with extracted text and source type (their credibility, as the labels stage rates it, is the `document_credibility` table)."
                .into(),
            columns: vec![
                Column::new("id", Str, "Stable id from the canonical URL."),
                Column::new("url", Str, "URL as first found."),
                Column::new(
                    "canonical_url",
                    Str,
                    "URL without tracking parameters, fragment, mobile or old Reddit host (a corpus document: `corpus://<corpus name>/<its id>`).",
                ),
                Column::new("domain", Str, "Registrable host of the canonical URL."),
                Column::new(
                    "source_type",
                    Str,
                    "mainstream news, government, non-profit, academic, social media or other.",
                ),
                Column::new(
                    "source_type_source",
                    Str,
                    "Where source_type came from: `rules` (built-in domain rules) or `config` (the documents stage's `source_types`). The labels stage's override, if any, is in `document_credibility`.",
                ),
                Column::nullable("title", Str, "Title."),
                Column::new("text", Str, "Main text (Reddit: the post body)."),
                Column::nullable("published", Str, "Publication date from metadata."),
                Column::nullable("language", Str, "Detected language (ISO 639-3)."),
                Column::new(
                    "content_hash",
                    Str,
                    "sha256 of the normalised text; duplicates merge on it.",
                ),
                Column::nullable("fetched_at", Str, "When the page was fetched (RFC 3339)."),
                Column::nullable("archive_ref", Str, "sha256 of the archived raw response."),
                Column::nullable("subreddit", Str, "Reddit: the subreddit."),
                Column::nullable("author", Str, "Author or Reddit user."),
                Column::nullable("score", Int, "Reddit: the post's score."),
                Column::new(
                    "is_link_post",
                    Bool,
                    "Reddit: a link post with no self text.",
                ),
                Column::new(
                    "body_removed",
                    Bool,
                    "Reddit: the body was deleted or removed.",
                ),
                Column::nullable(
                    "corpus_id",
                    Str,
                    "A document of the user's corpus (`corpus` search backend): its id there.",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A link from a claim to a document its searches found (all of a claim's hits on one document).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimDocument {
    pub id: String,
    pub claim_id: String,
    pub document_id: String,
    pub hit_ids: Vec<String>,
    pub best_rank: i64,
    pub query_kinds: Vec<String>,
}

impl Record for ClaimDocument {
    fn schema() -> TableSchema {
        TableSchema {
            table: "claim_documents".into(),
            version: 1,
            description:
                "Links from claims to the deduplicated documents their search hits point to.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from claim id and document id."),
                Column::new("claim_id", Str, "The claim."),
                Column::new("document_id", Str, "The document."),
                Column::new(
                    "hit_ids",
                    StrList,
                    "Every search hit of this claim that resolved to the document.",
                ),
                Column::new("best_rank", Int, "The best (lowest) rank among those hits."),
                Column::new(
                    "query_kinds",
                    StrList,
                    "Kinds of the queries that found it (keywords, question, claim, counter).",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// A passage of a document: at most 256 words, never breaking a sentence (CONF-FACT's ranking unit).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Passage {
    pub id: String,
    pub document_id: String,
    pub index: i64,
    pub text: String,
    pub word_count: i64,
}

impl Record for Passage {
    fn schema() -> TableSchema {
        TableSchema {
            table: "passages".into(),
            version: 1,
            description: "Document passages of at most 256 words that keep sentences whole.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from document id and index."),
                Column::new("document_id", Str, "The document."),
                Column::new("index", Int, "0-based position in the document."),
                Column::new("text", Str, "Passage text."),
                Column::new("word_count", Int, "Words in the passage."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// The label of one claim-document pair: the exam verdict and the stance votes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimDocumentLabel {
    pub id: String,
    pub claim_id: String,
    pub document_id: String,
    pub label: Option<String>,
    pub model_label: Option<String>,
    pub exam_verdict: Option<String>,
    pub exam_votes: Vec<String>,
    pub zero_context_verdict: Option<String>,
    pub flipped: Option<bool>,
    pub stance_url: Option<String>,
    pub stance_text: Option<String>,
    pub stance_reasoned: Option<String>,
    pub stance_majority: Option<String>,
    pub stance: Option<String>,
    pub label_source: String,
    pub provenance: String,
}

impl Record for ClaimDocumentLabel {
    fn schema() -> TableSchema {
        TableSchema {
            table: "labels".into(),
            version: 2,
            description: "Per claim-document pair: exam label (supporting, misleading, irrelevant) and stance votes, with human review where imported.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from claim id and document id."),
                Column::new("claim_id", Str, "The claim."),
                Column::new("document_id", Str, "The document."),
                Column::nullable("label", Str, "Final label: the reviewer's when reviewed, else the model's. supporting, misleading or irrelevant (RAGuard preset: unrelated)."),
                Column::nullable("model_label", Str, "The exam's label, kept when a reviewer overrides `label`."),
                Column::nullable("exam_verdict", Str, "The model's verdict from this document alone (majority of `exam_votes`): true, false, undecided."),
                Column::new("exam_votes", StrList, "One verdict per exam prompt variant, in configured order (`variant=verdict`)."),
                Column::nullable("zero_context_verdict", Str, "The model's verdict with no document."),
                Column::nullable("flipped", Bool, "Whether the document changed the model's zero-context verdict (both decided and different)."),
                Column::nullable("stance_url", Str, "Stance vote from the URL only: support, reject, not enough evidence."),
                Column::nullable("stance_text", Str, "Stance vote from the text (null for an empty page)."),
                Column::nullable("stance_reasoned", Str, "Stance vote from the text with reasoning (null for an empty page)."),
                Column::nullable("stance_majority", Str, "Majority of the model's votes (a tie is not enough evidence)."),
                Column::nullable("stance", Str, "Final stance: the reviewer's when reviewed, else `stance_majority`."),
                Column::new("label_source", Str, "`model`, `offline` or `human`."),
                Column::new("provenance", Str, "Backend and model, prompt versions; `human:<sheet>` for reviewed rows."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// Per claim: how its documents' stances and labels split, and whether its evidence conflicts
/// (CONF-FACT 3.3-3.4: a claim with both a supporting and a rejecting document).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conflict {
    pub id: String,
    pub claim_id: String,
    pub verdict: String,
    pub documents: i64,
    pub support_documents: Vec<String>,
    pub reject_documents: Vec<String>,
    pub not_enough_evidence: i64,
    pub supporting: i64,
    pub misleading: i64,
    pub irrelevant: i64,
    pub model_conflict: bool,
    pub human_conflict: Option<bool>,
    pub exam_conflict: bool,
}

impl Record for Conflict {
    fn schema() -> TableSchema {
        TableSchema {
            table: "conflicts".into(),
            version: 1,
            description: "Per claim: stance and label counts over its documents, and the model and human conflict flags (CONF-FACT ModC/HumC splits).".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from the claim id."),
                Column::new("claim_id", Str, "The claim."),
                Column::new("verdict", Str, "The claim's gold verdict (true or false)."),
                Column::new("documents", Int, "Labelled documents of the claim."),
                Column::new("support_documents", StrList, "Documents whose final stance is support."),
                Column::new("reject_documents", StrList, "Documents whose final stance is reject."),
                Column::new("not_enough_evidence", Int, "Documents whose final stance is not enough evidence."),
                Column::new("supporting", Int, "Documents labelled supporting."),
                Column::new("misleading", Int, "Documents labelled misleading."),
                Column::new("irrelevant", Int, "Documents labelled irrelevant (or unrelated)."),
                Column::new("model_conflict", Bool, "The model's majority stances hold both a support and a reject (ModC)."),
                Column::nullable("human_conflict", Bool, "Reviewed stances hold both a support and a reject (HumC); null when no document of the claim was reviewed."),
                Column::new("exam_conflict", Bool, "The claim has both a supporting and a misleading document."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// How credible one document's source is, as the labels stage rates it (CONF-FACT 4.3): from the
/// user's domain table, else generated by a model. One row per document of the labels stage's
/// input; the document's own columns stay in `documents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocumentCredibility {
    pub id: String,
    pub document_id: String,
    pub domain: String,
    pub credibility: Option<String>,
    pub credibility_source: Option<String>,
    pub source_type: String,
    pub source_type_source: String,
}

impl Record for DocumentCredibility {
    fn schema() -> TableSchema {
        TableSchema {
            table: "document_credibility".into(),
            version: 1,
            description: "Per document: the credibility of its source (from the domain table or generated) and the source type the labels stage settled on.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from the document id."),
                Column::new("document_id", Str, "The document."),
                Column::new("domain", Str, "The domain rated: the document's domain (else its URL's host), lower case, without `www.`."),
                Column::nullable("credibility", Str, "high, medium or low; null when the table does not list the domain and no rating was generated."),
                Column::nullable("credibility_source", Str, "`table` (the user's domain table) or `generated` (LLM fallback); null with `credibility`."),
                Column::new("source_type", Str, "The source type the labels stage uses: the domain table's when it gives one, a generated one when the document's was empty or `other`, else the document's own (`documents.source_type`)."),
                Column::new("source_type_source", Str, "Where source_type came from: `table` or `generated` (an override of the labels stage), else the document's own `documents.source_type_source` (`rules` or `config`)."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}
