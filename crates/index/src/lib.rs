//! noisebench's shared retrieval, below every stage crate: BM25 over a collection of documents
//! ([`Bm25`], tantivy, in RAM or on disk; [`Impacts`], its scored postings in memory for many
//! short queries) and exact cosine top-k over vectors in memory ([`VectorIndex`]), and the
//! ranking metrics both the `retrieval` stage and the evaluation score rankings with
//! ([`ranking`]: precision, recall, reciprocal rank, DCG and NDCG at k), and a user's retriever's
//! run read and put in order ([`run`]: TREC or Parquet), for the `run` search backend and the
//! `retrieval` stage alike.
//!
//! The Reddit dump search backend indexes posts with it, the `retrieval` stage searches chunks
//! with both (BM25 through [`Impacts`], embeddings through [`VectorIndex`]), and the evaluation
//! ranks documents and passages with it. Results are deterministic: the same documents added in
//! the same order give the same ranking on every run, ties broken by id.
//!
//! What this crate is not: it reads no dumps or tables (only a run, [`run`]) and knows no
//! noisebench row type (callers turn theirs into [`Doc`]s and vectors), embeds nothing (vectors
//! come from `noisebench-llm`), and does no approximate nearest-neighbour search: collections
//! here are small enough (chunks of one benchmark) for an exact scan.
//!
//! # Modules
//!
//! Retrieval over in-memory or on-disk collections. `bm25.rs` (`Bm25`: tantivy with one English
//! analyser, a `Spec` of text, stored and time fields, field boosts, inclusive time bounds, one
//! indexing thread and ties broken by id, so rankings are the same on every run), `vector.rs`
//! (`VectorIndex`: exact cosine top-k over normalised vectors, ties by id; `search_many` first
//! scores every row from int8 codes, `vector/quantized.rs`, with a proven error bound, then scores
//! exactly only the rows the bound cannot rule out; `dot` runs 32 fused multiply-add lanes on
//! AVX-512, AVX2+FMA or portable code with the same bits on each), `impact.rs` (`Impacts`: BM25
//! postings with tantivy's scores held in memory, read from a built index or scored straight from
//! texts analysed by `bm25::analyse` (`from_analysed`, bit for bit the same, no index built; the
//! analyser keeps each word's stem per thread), for many short queries, pruned block-max
//! MaxScore-style: 64-document blocks whose lists' highest scores there cannot reach the k-th best
//! score are passed over, and in the others new documents are admitted only while they could
//! still reach it, the bound seeded from hints such as a related query's hits, with the same hits
//! as adding every list; documents numbered so that related ones sit together, such as a
//! report's chunks, make the blocks' bounds tight). The first pass takes 32 queries x 32 rows per step on AMX's int8 tiles where the
//! CPU and the OS allow them (`vector/amx.rs`: inline assembly, the same integer sums, a filter
//! that passes at least what the exact bound test keeps), else 4 queries x 4 rows (`scan4x4`:
//! AVX-512 VNNI's kernel, else the portable or AVX2 integer dot product). `ranking.rs`: the ranking metrics (precision,
//! recall, reciprocal rank, DCG, NDCG at k; binary or graded), defined once for the `retrieval`
//! stage and the evaluation, with property tests against their definitions. `run.rs`: a
//! retriever's run (TREC `qid Q0 docid rank score tag`, or Parquet `query_id`, `doc_id`, `rank`,
//! `score`) read strictly or leniently (malformed lines returned, each naming file and line), one
//! query's rows ordered (rank, score, doc id) with unknown and repeated docs left out and ties
//! noted. `vector/cpu.rs` is the
//! one choice of vector unit for both kinds of vector work (the f32 dot product and the int8 first
//! pass): cumulative levels (portable, AVX2 with FMA, AVX-512 F, AVX-512 VNNI), each requiring
//! every feature its kernels enable, detected once; tests run every kernel the CPU reaches against
//! the portable code. It knows no row type, embeds nothing and holds no approximate index. Users:
//! the Reddit dump backend (`Bm25`), the `retrieval` stage (`Impacts` and `VectorIndex`), query
//! perturbations (`dot`), and the evaluation (`VectorIndex` for RAGuard's retrieval, BM25 over
//! CONF-FACT's passages). Invariant: results are exact and deterministic (ties by id); every SIMD
//! path gives the portable path's bits.

pub mod bm25;
pub mod impact;
pub mod ranking;
pub mod run;
pub mod vector;

pub use bm25::{Bm25, Bm25Builder, Doc, Hit, IndexError, Location, Query, Spec, TextField, terms};
pub use impact::{Impacts, Scratch};
pub use vector::{VectorError, VectorHit, VectorIndex, cosine};
