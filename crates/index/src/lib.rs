//! noisebench's shared retrieval, below every stage crate: BM25 over a collection of documents
//! ([`Bm25`], tantivy, in RAM or on disk; [`Impacts`], its scored postings in memory for many
//! short queries) and exact cosine top-k over vectors in memory ([`VectorIndex`]), and the
//! ranking metrics both the `retrieval` stage and the evaluation score rankings with
//! ([`ranking`]: precision, recall, reciprocal rank, DCG and NDCG at k).
//!
//! The Reddit dump search backend indexes posts with it, the `retrieval` stage searches chunks
//! with both (BM25 through [`Impacts`], embeddings through [`VectorIndex`]), and the evaluation
//! ranks documents and passages with it. Results are deterministic: the same documents added in
//! the same order give the same ranking on every run, ties broken by id.
//!
//! What this crate is not: it reads no dumps or tables and knows no noisebench row type (callers
//! turn theirs into [`Doc`]s and vectors), embeds nothing (vectors come from `noisebench-llm`),
//! and does no approximate nearest-neighbour search: collections here are small enough (chunks of
//! one benchmark) for an exact scan.

pub mod bm25;
pub mod impact;
pub mod ranking;
pub mod vector;

pub use bm25::{Bm25, Bm25Builder, Doc, Hit, IndexError, Location, Query, Spec, TextField, terms};
pub use impact::{Impacts, Scratch};
pub use vector::{VectorError, VectorHit, VectorIndex, cosine};
