//! Dense retrieval for the `corpus` backend: the documents' embeddings, made once per corpus
//! content and embedder and kept beside the BM25 index, searched exactly (`noisebench-index`'s
//! [`VectorIndex`]); and reciprocal rank fusion of two ranked lists (`hybrid`).
//!
//! Files, in the corpus's index folder (`<index_dir>/<fingerprint>-<format>/`, so a changed
//! corpus gets new ones): `vectors-<tag>.f32` (little-endian f32, one row per document, in corpus
//! order), `vectors-<tag>.ids` (one JSON string a line) and `vectors-<tag>.done`, the marker
//! written last (`<corpus fingerprint>\t<embedder>\t<dimensions>\t<documents>`); `<tag>` is the
//! first 16 hex of sha256 over the embedder's name (`hashed-ngrams:384`, `openai:<model>`), so a
//! changed embedder, or changed dimensions, gets new vectors and the old ones stay for a switch
//! back. Vectors are reused while the marker matches and the files have its sizes.
//!
//! Not for chunk-level retrieval: that is the `retrieval` stage's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_index::VectorIndex;
use noisebench_llm::Llm;
use sha2::{Digest, Sha256};

use super::corpus_doc::{CorpusDoc, CorpusError};

/// The reciprocal rank fusion constant (Cormack, Clarke and Büttcher, 2009).
pub const RRF_K: f64 = 60.0;

/// The stage name embedding requests are logged under.
const STAGE: &str = "search";

/// Documents' vectors for one corpus and one embedder.
pub struct CorpusVectors {
    index: VectorIndex,
    /// The embedder's name (`hashed-ngrams:384`).
    pub embedder: String,
    /// Whether this call embedded the documents (false: reused).
    pub built: bool,
    /// Where the vectors are.
    pub path: PathBuf,
}

/// The text a document is embedded as: its title, a blank line, its text.
pub(crate) fn doc_text(d: &CorpusDoc) -> String {
    match &d.title {
        Some(t) => format!("{t}\n\n{}", d.text),
        None => d.text.clone(),
    }
}

fn embed_err(message: String) -> CorpusError {
    CorpusError::Embed { message }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError + '_ {
    move |source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl CorpusVectors {
    /// The vectors of `docs` (the corpus whose fingerprint is `fingerprint`) under `dir` (its
    /// index folder), read if the marker matches, else embedded `batch` documents a request
    /// through `llm`'s embedder and written, the marker last.
    pub fn open_or_build(
        docs: &[CorpusDoc],
        dir: &Path,
        fingerprint: &str,
        llm: &Llm,
        batch: usize,
    ) -> Result<CorpusVectors, CorpusError> {
        let embedder = llm.embedder_name();
        let tag = &hex::encode(Sha256::digest(embedder.as_bytes()))[..16];
        let base = dir.join(format!("vectors-{tag}"));
        let (f32_path, ids_path, marker) = (
            base.with_extension("f32"),
            base.with_extension("ids"),
            base.with_extension("done"),
        );
        if let Some(index) = read(&f32_path, &ids_path, &marker, fingerprint, &embedder) {
            tracing::info!(vectors = %f32_path.display(), documents = index.len(), "corpus vectors reused");
            return Ok(CorpusVectors {
                index,
                embedder,
                built: false,
                path: f32_path,
            });
        }
        let texts: Vec<String> = docs.iter().map(doc_text).collect();
        let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(batch.max(1)) {
            let e = llm
                .embed(STAGE, chunk)
                .map_err(|e| embed_err(format!("embedding the documents: {e}")))?;
            if e.vectors.len() != chunk.len() {
                return Err(embed_err(format!(
                    "the embedder returned {} vectors for {} documents",
                    e.vectors.len(),
                    chunk.len()
                )));
            }
            vectors.extend(e.vectors);
        }
        let dim = vectors.first().map_or(0, Vec::len);
        let mut index = VectorIndex::new(dim);
        let mut bytes = Vec::with_capacity(dim * vectors.len() * 4);
        let mut ids = String::new();
        for (d, v) in docs.iter().zip(&vectors) {
            index
                .add(d.id.clone(), v)
                .map_err(|e| embed_err(format!("document `{}`: {e}", d.id)))?;
            bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
            ids.push_str(&serde_json::Value::String(d.id.clone()).to_string());
            ids.push('\n');
        }
        let _ = std::fs::remove_file(&marker);
        std::fs::write(&f32_path, &bytes).map_err(io(&f32_path))?;
        std::fs::write(&ids_path, ids).map_err(io(&ids_path))?;
        std::fs::write(
            &marker,
            marker_text(fingerprint, &embedder, dim, vectors.len()),
        )
        .map_err(io(&marker))?;
        tracing::info!(vectors = %f32_path.display(), documents = vectors.len(), dim, "corpus vectors built");
        Ok(CorpusVectors {
            index,
            embedder,
            built: true,
            path: f32_path,
        })
    }

    /// Documents in the index.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The `k` documents nearest `query` by cosine, best first, ties by id: (id, score).
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<(String, f32)>, String> {
        self.index
            .search(query, k)
            .map(|hits| hits.into_iter().map(|h| (h.id, h.score)).collect())
            .map_err(|e| e.to_string())
    }

    /// The query's vector from `llm`'s embedder.
    pub fn embed_query(llm: &Llm, text: &str) -> Result<Vec<f32>, noisebench_llm::LlmError> {
        let mut e = llm.embed(STAGE, &[text])?;
        Ok(e.vectors.pop().unwrap_or_default())
    }
}

fn marker_text(fingerprint: &str, embedder: &str, dim: usize, n: usize) -> String {
    format!("{fingerprint}\t{embedder}\t{dim}\t{n}")
}

/// The stored vectors, if the marker names this corpus and embedder and the files match it.
fn read(
    f32_path: &Path,
    ids_path: &Path,
    marker: &Path,
    fingerprint: &str,
    embedder: &str,
) -> Option<VectorIndex> {
    let m = std::fs::read_to_string(marker).ok()?;
    let mut parts = m.trim().split('\t');
    let (fp, name) = (parts.next()?, parts.next()?);
    let dim: usize = parts.next()?.parse().ok()?;
    let n: usize = parts.next()?.parse().ok()?;
    if fp != fingerprint || name != embedder {
        return None;
    }
    let bytes = std::fs::read(f32_path).ok()?;
    let ids: Vec<String> = std::fs::read_to_string(ids_path)
        .ok()?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .ok()?;
    if bytes.len() != dim * n * 4 || ids.len() != n {
        return None;
    }
    let mut index = VectorIndex::new(dim);
    let floats: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (id, row) in ids.into_iter().zip(floats.chunks(dim.max(1))) {
        index.add(id, row).ok()?;
    }
    Some(index)
}

/// One document of a fused list: its id, fused score and, per retriever that ranked it, that
/// retriever's name and its 1-based rank there (in the order the lists were given).
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub id: String,
    pub score: f64,
    pub ranks: Vec<(String, usize)>,
}

/// Reciprocal rank fusion: each document's score is the sum, over the lists `(retriever, ids
/// best first)` that hold it, of `1 / (RRF_K + rank)`; best first, ties by id; the first `top_k`.
pub fn rrf(lists: &[(&str, Vec<String>)], top_k: usize) -> Vec<Fused> {
    let mut by_id: BTreeMap<&str, Fused> = BTreeMap::new();
    for (name, ids) in lists {
        for (i, id) in ids.iter().enumerate() {
            let rank = i + 1;
            let f = by_id.entry(id.as_str()).or_insert_with(|| Fused {
                id: id.clone(),
                score: 0.0,
                ranks: Vec::new(),
            });
            // A list naming one id twice counts it at its best rank.
            if f.ranks.iter().any(|(n, _)| n == name) {
                continue;
            }
            f.score += 1.0 / (RRF_K + rank as f64);
            f.ranks.push((name.to_string(), rank));
        }
    }
    let mut fused: Vec<Fused> = by_id.into_values().collect();
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    fused.truncate(top_k);
    fused
}

/// How a hit says where it was found: `bm25:2 dense:1`.
pub fn ranks_note(ranks: &[(String, usize)]) -> String {
    ranks
        .iter()
        .map(|(n, r)| format!("{n}:{r}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rrf_sums_reciprocal_ranks_and_breaks_ties_by_id() {
        let fused = rrf(
            &[("bm25", ids(&["a", "b", "c"])), ("dense", ids(&["c", "d"]))],
            10,
        );
        let order: Vec<&str> = fused.iter().map(|f| f.id.as_str()).collect();
        // c: 1/63 + 1/61; a: 1/61; d: 1/62; b: 1/62 (b before d by id).
        assert_eq!(order, ["c", "a", "b", "d"]);
        assert_eq!(fused[0].score, 1.0 / 63.0 + 1.0 / 61.0);
        assert_eq!(ranks_note(&fused[0].ranks), "bm25:3 dense:1");
        assert_eq!(ranks_note(&fused[3].ranks), "dense:2");
        assert_eq!(rrf(&[("bm25", ids(&["a", "b"]))], 1).len(), 1);
    }

    proptest::proptest! {
        /// Every id of the lists is fused once, scores never rise down the list, and the
        /// order of the lists changes no id's place.
        #[test]
        fn rrf_is_a_ranking_of_the_union(
            a in proptest::collection::vec("[a-f]", 0..6),
            b in proptest::collection::vec("[a-f]", 0..6),
        ) {
            let one = rrf(&[("x", a.clone()), ("y", b.clone())], 100);
            let two = rrf(&[("y", b.clone()), ("x", a.clone())], 100);
            let mut union: Vec<&String> = a.iter().chain(&b).collect();
            union.sort();
            union.dedup();
            proptest::prop_assert_eq!(one.len(), union.len());
            proptest::prop_assert!(one.windows(2).all(|w| w[0].score >= w[1].score));
            let ids = |f: &[Fused]| f.iter().map(|x| x.id.clone()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(ids(&one), ids(&two));
        }
    }
}
