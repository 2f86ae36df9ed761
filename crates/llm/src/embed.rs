//! Sentence embeddings: an OpenAI-compatible `/v1/embeddings` client (same limits, retries and
//! cache as chat), a local all-MiniLM-L6-v2 run in-process through candle (feature
//! `local-embeddings`), and a deterministic fallback of hashed character n-grams.
//!
//! Every result names its embedder ([`Embeddings::provenance`]); vectors are L2-normalised, so a
//! dot product is a cosine.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::Llm;
use crate::config::{CacheMode, EmbeddingBackend, EmbeddingsConfig};
use crate::error::LlmError;
use crate::openai::{Effort, OpenAiModel};

/// Vectors for a batch of texts, in order, and who made them.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    pub vectors: Vec<Vec<f32>>,
    /// `hashed-ngrams:<dim>`, `local:all-MiniLM-L6-v2` or `openai:<model>`.
    pub provenance: String,
}

pub(crate) enum Embedder {
    Hashed {
        dim: usize,
    },
    #[cfg(feature = "local-embeddings")]
    Local(Arc<local::MiniLm>),
    Openai {
        model: Arc<OpenAiModel>,
        batch: usize,
    },
}

impl Llm {
    /// Embed texts (sync). One vector per text, in order, from the configured embedder.
    /// Borrowed texts are fine: the offline embedder reads them where they are (a stage
    /// embedding every chunk and its perturbations need not copy them).
    pub fn embed<T: AsRef<str> + Sync>(
        &self,
        stage: &str,
        texts: &[T],
    ) -> Result<Embeddings, LlmError> {
        embed(self, stage, texts)
    }

    /// Which embedder makes vectors: `hashed-ngrams:<dim>`, `local:all-MiniLM-L6-v2`,
    /// `openai:<model>`.
    pub fn embedder_name(&self) -> String {
        self.inner.embedder.name()
    }
}

/// The files a local model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

impl Embedder {
    pub(crate) fn new(
        cfg: &EmbeddingsConfig,
        models: &BTreeMap<String, Arc<OpenAiModel>>,
        root: &Path,
    ) -> Result<Self, LlmError> {
        let dir = if cfg.model_dir.is_absolute() {
            cfg.model_dir.clone()
        } else {
            root.join(&cfg.model_dir)
        };
        let present = MODEL_FILES.iter().all(|f| dir.join(f).is_file());
        match cfg.backend {
            EmbeddingBackend::Hashed => Ok(Embedder::Hashed { dim: cfg.dim }),
            EmbeddingBackend::Openai => {
                let name = cfg.model.as_deref().unwrap_or_default();
                let model = models.get(name).cloned().ok_or_else(|| {
                    LlmError::Config(format!("llm.embeddings.model: `{name}` is not configured"))
                })?;
                Ok(Embedder::Openai {
                    model,
                    batch: cfg.batch_size,
                })
            }
            EmbeddingBackend::Local => {
                if !present {
                    return Err(LlmError::Config(format!(
                        "llm.embeddings.model_dir: {} lacks one of {MODEL_FILES:?}",
                        dir.display()
                    )));
                }
                local_or_err(&dir, cfg.batch_size)
            }
            EmbeddingBackend::Auto => {
                if present && cfg!(feature = "local-embeddings") {
                    local_or_err(&dir, cfg.batch_size)
                } else {
                    Ok(Embedder::Hashed { dim: cfg.dim })
                }
            }
        }
    }

    pub(crate) fn name(&self) -> String {
        match self {
            Embedder::Hashed { dim } => format!("hashed-ngrams:{dim}"),
            #[cfg(feature = "local-embeddings")]
            Embedder::Local(_) => "local:all-MiniLM-L6-v2".into(),
            Embedder::Openai { model, .. } => format!("openai:{}", model.model_id),
        }
    }
}

#[cfg(feature = "local-embeddings")]
fn local_or_err(dir: &Path, batch: usize) -> Result<Embedder, LlmError> {
    Ok(Embedder::Local(Arc::new(local::MiniLm::load(dir, batch)?)))
}

#[cfg(not(feature = "local-embeddings"))]
fn local_or_err(_dir: &Path, _batch: usize) -> Result<Embedder, LlmError> {
    Err(LlmError::Config(
        "llm.embeddings.backend = \"local\" needs the `local-embeddings` feature".into(),
    ))
}

/// Hashed character n-grams (3 to 5, over the lowercased text padded with spaces), each adding
/// ±1 to one of `dim` buckets by FNV-1a; L2-normalised. Similar spellings give similar vectors;
/// there is no semantics beyond that.
pub fn hashed(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim.max(1)];
    let modulo = FastMod::new(v.len() as u64);
    // The words of the lowercased text, each followed by a space, after one: " a b " (two
    // spaces for no words). An ASCII text is lowercased and hashed a byte at a time (its
    // characters are its bytes; `char::is_whitespace` splits it as it splits any text).
    if text.is_ascii() {
        let mut bytes: Vec<u8> = Vec::with_capacity(text.len() + 2);
        bytes.push(b' ');
        for w in text
            .as_bytes()
            .split(|b| char::from(*b).is_whitespace())
            .filter(|w| !w.is_empty())
        {
            bytes.extend(w.iter().map(u8::to_ascii_lowercase));
            bytes.push(b' ');
        }
        if bytes.len() == 1 {
            bytes.push(b' ');
        }
        add_ngrams(&bytes, &mut v, modulo);
    } else {
        let lower = text.to_lowercase();
        let mut chars: Vec<char> = Vec::with_capacity(lower.len() + 2);
        chars.push(' ');
        for w in lower.split_whitespace() {
            chars.extend(w.chars());
            chars.push(' ');
        }
        if chars.len() == 1 {
            chars.push(' ');
        }
        add_ngrams(&chars, &mut v, modulo);
    }
    normalise(&mut v);
    v
}

/// Add ±1 for each 3-, 4- and 5-gram of `chars` (characters or the bytes of ASCII text).
/// FNV-1a is sequential, so the 3-, 4- and 5-gram starting at one place share their prefix's
/// hash: one pass per place instead of one per n-gram. The buckets only ever gain or lose
/// whole units, which f32 adds exactly in any order, so the vector is the same as hashing each
/// n-gram on its own.
fn add_ngrams<C: Copy + Into<u32>>(chars: &[C], v: &mut [f32], modulo: FastMod) {
    for start in 0..chars.len() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for (k, c) in chars[start..chars.len().min(start + 5)].iter().enumerate() {
            h = fnv_char(h, (*c).into());
            if k >= 2 {
                let idx = modulo.rem(h) as usize;
                v[idx] += if h >> 63 == 0 { 1.0 } else { -1.0 };
            }
        }
    }
}

const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a over the four little-endian bytes of character `c`. A character below U+0100 has
/// three zero bytes, whose steps (xor 0, multiply) are one multiply by the prime's fourth power.
#[inline]
fn fnv_char(h: u64, c: u32) -> u64 {
    const PRIME4: u64 = FNV_PRIME
        .wrapping_mul(FNV_PRIME)
        .wrapping_mul(FNV_PRIME)
        .wrapping_mul(FNV_PRIME);
    if c < 0x100 {
        return (h ^ u64::from(c)).wrapping_mul(PRIME4);
    }
    c.to_le_bytes()
        .iter()
        .fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME))
}

/// `n % d` for a fixed d without a division (Lemire, Kaser and Kurz, "Faster remainder by
/// direct computation", 2019: m = ⌊(2¹²⁸ − 1) / d⌋ + 1, then the high 64 bits of
/// (m·n mod 2¹²⁸)·d), exact for every 64-bit n.
#[derive(Debug, Clone, Copy)]
struct FastMod {
    d: u64,
    m: u128,
    /// d = odd << shift: n % d is ((n >> shift) % odd) << shift plus n's low shift bits, and
    /// for an odd part of 1 or 3 (dimensions such as 256, 384, 768, 1024, 1536) that takes a
    /// mask, or one multiply by a constant, instead of the 128-bit products.
    shift: u32,
    odd: u64,
}

impl FastMod {
    fn new(d: u64) -> Self {
        let d = d.max(1);
        let shift = d.trailing_zeros();
        Self {
            d,
            m: (u128::MAX / u128::from(d)).wrapping_add(1),
            shift,
            odd: d >> shift,
        }
    }

    #[inline]
    fn rem(self, n: u64) -> u64 {
        if self.d <= 1 {
            return 0;
        }
        let low_bits = n & ((1u64 << self.shift) - 1);
        match self.odd {
            1 => return low_bits,
            3 => return (((n >> self.shift) % 3) << self.shift) | low_bits,
            _ => {}
        }
        let low = self.m.wrapping_mul(u128::from(n));
        let d = u128::from(self.d);
        let bottom = ((low & u128::from(u64::MAX)) * d) >> 64;
        let top = (low >> 64) * d;
        ((bottom + top) >> 64) as u64
    }
}

/// [`hashed`] for every text, in order, on every core for a large batch.
fn hashed_all<T: AsRef<str> + Sync>(texts: &[T], dim: usize) -> Vec<Vec<f32>> {
    let threads = if texts.len() < 64 {
        1
    } else {
        noisebench_core::default_threads()
    };
    noisebench_core::parallel_map(texts, threads, |t| hashed(t.as_ref(), dim))
}

pub(crate) fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Cosine of two vectors (any norm).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    cosine_with_norms(a, b, norm(a), norm(b))
}

/// The L2 norm of `v`, as [`cosine`] computes it.
pub fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// [`cosine`] of vectors whose [`norm`]s are known (the same value, bit for bit): comparing one
/// vector with many need not add up its squares each time.
pub fn cosine_with_norms(a: &[f32], b: &[f32], na: f32, nb: f32) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

fn embedding_key(model: &str, text: &str) -> String {
    let v = serde_json::json!(["openai", model, "embedding", text]);
    crate::sha256_hex_bytes(v.to_string().as_bytes())
}

fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Option<Vec<f32>> {
    if !b.len().is_multiple_of(4) || b.is_empty() {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

pub(crate) fn embed<T: AsRef<str> + Sync>(
    llm: &Llm,
    stage: &str,
    texts: &[T],
) -> Result<Embeddings, LlmError> {
    let embedder = &llm.inner.embedder;
    let provenance = embedder.name();
    match embedder {
        Embedder::Hashed { dim } => Ok(Embeddings {
            vectors: hashed_all(texts, *dim),
            provenance,
        }),
        #[cfg(feature = "local-embeddings")]
        Embedder::Local(m) => Ok(Embeddings {
            vectors: m.embed(
                &texts
                    .iter()
                    .map(|t| t.as_ref().to_string())
                    .collect::<Vec<_>>(),
            )?,
            provenance,
        }),
        Embedder::Openai { model, batch } => {
            let vectors = embed_openai(llm, stage, model, *batch, texts)?;
            Ok(Embeddings {
                vectors,
                provenance,
            })
        }
    }
}

/// The vectors of `texts` the cache holds, into `out` (each hit logged); returns the indices
/// of the rest. A miss in a cache-only run fails the whole call.
fn cached_embeddings(
    llm: &Llm,
    stage: &str,
    model: &Arc<OpenAiModel>,
    texts: &[impl AsRef<str>],
    out: &mut [Option<Vec<f32>>],
) -> Result<Vec<usize>, LlmError> {
    let mut missing: Vec<usize> = Vec::new();
    let cache = llm.inner.local.cache();
    for (i, t) in texts.iter().enumerate() {
        let start = Instant::now();
        let key = embedding_key(&model.model_id, t.as_ref());
        let hit = cache.and_then(|c| c.get(&key)).and_then(|b| from_bytes(&b));
        match hit {
            Some(v) => {
                llm.inner.log.log_embedding(
                    stage,
                    "openai",
                    &model.model_id,
                    &key,
                    String::new(),
                    0,
                    crate::call_log::answered_locally(start),
                    true,
                    model.config.price.map(|_| 0.0),
                    None,
                );
                out[i] = Some(v);
            }
            None => {
                if cache.is_some() {
                    llm.inner.log.bump(|s| s.cache_misses += 1);
                    if llm.inner.local.mode() == CacheMode::CacheOnly {
                        let e = LlmError::CacheMiss {
                            request_hash: key.clone(),
                        };
                        llm.inner.log.log_embedding(
                            stage,
                            "openai",
                            &model.model_id,
                            &key,
                            String::new(),
                            0,
                            crate::call_log::answered_locally(start),
                            false,
                            None,
                            Some(&e),
                        );
                        return Err(e);
                    }
                }
                missing.push(i);
            }
        }
    }
    Ok(missing)
}

fn embed_openai(
    llm: &Llm,
    stage: &str,
    model: &Arc<OpenAiModel>,
    batch: usize,
    texts: &[impl AsRef<str>],
) -> Result<Vec<Vec<f32>>, LlmError> {
    let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
    let missing = cached_embeddings(llm, stage, model, texts, &mut out)?;
    let cache = llm.inner.local.cache();
    // Identical texts are sent once.
    let mut unique: Vec<usize> = Vec::new();
    let mut seen = BTreeMap::new();
    for &i in &missing {
        seen.entry(texts[i].as_ref()).or_insert_with(|| {
            unique.push(i);
            i
        });
    }
    let groups: Vec<Vec<usize>> = unique.chunks(batch.max(1)).map(<[_]>::to_vec).collect();
    // Quote mode: the requests are counted, not sent; hashed vectors of the cached vectors'
    // size (else 256) stand in, so the stages downstream run.
    let texts_of: Vec<Vec<&str>> = groups
        .iter()
        .map(|g| g.iter().map(|&i| texts[i].as_ref()).collect())
        .collect();
    if llm.quote_embeddings(stage, &model.key, &texts_of) {
        let dim = out.iter().flatten().map(Vec::len).next().unwrap_or(256);
        return Ok(out
            .into_iter()
            .zip(texts)
            .map(|(v, t)| v.unwrap_or_else(|| hashed(t.as_ref(), dim)))
            .collect());
    }
    let llm2 = llm.clone();
    let stage2 = stage.to_string();
    let texts2: Vec<String> = texts.iter().map(|t| t.as_ref().to_string()).collect();
    let model2 = Arc::clone(model);
    let results = llm.inner.transport.block_on(async move {
        let mut handles = Vec::new();
        for g in groups {
            let llm = llm2.clone();
            let model = Arc::clone(&model2);
            let stage = stage2.clone();
            let batch_texts: Vec<String> = g.iter().map(|&i| texts2[i].clone()).collect();
            handles.push(tokio::spawn(async move {
                let key = crate::sha256_hex_bytes(
                    serde_json::json!(["openai", model.model_id, "embedding-batch", batch_texts])
                        .to_string()
                        .as_bytes(),
                );
                let salt = u64::from_str_radix(&key[..16], 16).unwrap_or(0);
                let mut effort = Effort::default();
                let r = model.embed(&batch_texts, salt, &mut effort).await;
                match &r {
                    Ok(reply) => {
                        let cost = model.config.price.map(|p| p.cost(reply.tokens_in, 0));
                        llm.inner.log.log_embedding(
                            &stage,
                            "openai",
                            &model.model_id,
                            &key,
                            reply.endpoint.clone(),
                            reply.tokens_in,
                            effort,
                            false,
                            cost,
                            None,
                        );
                    }
                    Err(e) => llm.inner.log.log_embedding(
                        &stage,
                        "openai",
                        &model.model_id,
                        &key,
                        String::new(),
                        0,
                        effort,
                        false,
                        None,
                        Some(e),
                    ),
                }
                (g, r.map(|reply| reply.value))
            }));
        }
        let mut done = Vec::new();
        for h in handles {
            match h.await {
                Ok(x) => done.push(x),
                Err(e) => return Err(LlmError::Internal(format!("task: {e}"))),
            }
        }
        Ok(done)
    })?;
    for (group, r) in results {
        let vectors = r?;
        for (i, mut v) in group.into_iter().zip(vectors) {
            normalise(&mut v);
            if let Some(c) = cache
                && llm.inner.local.mode() == CacheMode::ReadWrite
                && let Err(e) = c.put(
                    &embedding_key(&model.model_id, texts[i].as_ref()),
                    &to_bytes(&v),
                )
            {
                tracing::warn!(error = %e, "embedding cache write failed");
            }
            out[i] = Some(v);
        }
    }
    // Duplicates take the vector of their first occurrence.
    for &i in &missing {
        if out[i].is_none() {
            let first = seen.get(texts[i].as_ref()).copied();
            out[i] = first.and_then(|f| out[f].clone());
        }
    }
    out.into_iter()
        .map(|v| v.ok_or_else(|| LlmError::Embedding("a text got no vector".into())))
        .collect()
}

#[cfg(feature = "local-embeddings")]
pub mod local {
    //! all-MiniLM-L6-v2 through candle: BERT encoder, mean pooling over the attention mask,
    //! L2 normalisation (what sentence-transformers does for this model).

    use std::path::Path;

    use candle_core::{DType, Device, Tensor};
    use candle_nn::VarBuilder;
    use candle_transformers::models::bert::{BertModel, Config};
    use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

    use crate::error::LlmError;

    /// The model and its tokenizer, loaded once.
    pub(crate) struct MiniLm {
        model: BertModel,
        tokenizer: Tokenizer,
        batch: usize,
    }

    fn err(e: impl std::fmt::Display) -> LlmError {
        LlmError::Embedding(e.to_string())
    }

    impl MiniLm {
        /// Load `model.safetensors`, `tokenizer.json` and `config.json` from `dir`.
        pub fn load(dir: &Path, batch: usize) -> Result<Self, LlmError> {
            let device = Device::Cpu;
            let config: Config = serde_json::from_str(
                &std::fs::read_to_string(dir.join("config.json")).map_err(err)?,
            )
            .map_err(err)?;
            let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(err)?;
            // The shipped tokenizer pads every input to a fixed 128; pad to the batch's longest.
            tokenizer.with_padding(Some(PaddingParams {
                strategy: PaddingStrategy::BatchLongest,
                ..Default::default()
            }));
            tokenizer
                .with_truncation(Some(TruncationParams {
                    max_length: 256,
                    ..Default::default()
                }))
                .map_err(err)?;
            let weights = std::fs::read(dir.join("model.safetensors")).map_err(err)?;
            let vb =
                VarBuilder::from_buffered_safetensors(weights, DType::F32, &device).map_err(err)?;
            let model = BertModel::load(vb, &config).map_err(err)?;
            Ok(Self {
                model,
                tokenizer,
                batch: batch.max(1),
            })
        }

        /// One L2-normalised 384-dimensional vector per text.
        pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
            let mut out = Vec::with_capacity(texts.len());
            for group in texts.chunks(self.batch) {
                let enc = self
                    .tokenizer
                    .encode_batch(group.to_vec(), true)
                    .map_err(err)?;
                let ids: Vec<Tensor> = enc
                    .iter()
                    .map(|e| Tensor::new(e.get_ids(), &Device::Cpu))
                    .collect::<Result<_, _>>()
                    .map_err(err)?;
                let mask: Vec<Tensor> = enc
                    .iter()
                    .map(|e| Tensor::new(e.get_attention_mask(), &Device::Cpu))
                    .collect::<Result<_, _>>()
                    .map_err(err)?;
                let ids = Tensor::stack(&ids, 0).map_err(err)?;
                let mask = Tensor::stack(&mask, 0).map_err(err)?;
                let types = ids.zeros_like().map_err(err)?;
                let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(err)?;
                // Mean over real tokens only.
                let m = mask
                    .to_dtype(DType::F32)
                    .map_err(err)?
                    .unsqueeze(2)
                    .map_err(err)?;
                let summed = hidden.broadcast_mul(&m).map_err(err)?.sum(1).map_err(err)?;
                let counts = m.sum(1).map_err(err)?;
                let pooled = summed.broadcast_div(&counts).map_err(err)?;
                for mut v in pooled.to_vec2::<f32>().map_err(err)? {
                    super::normalise(&mut v);
                    out.push(v);
                }
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The n-gram hashing as first written, one n-gram at a time.
    fn hashed_per_ngram(text: &str, dim: usize) -> Vec<f32> {
        let mut v = vec![0f32; dim.max(1)];
        let joined = text
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let chars: Vec<char> = format!(" {joined} ").chars().collect();
        for n in 3..=5 {
            for w in chars.windows(n) {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for c in w {
                    for b in (*c as u32).to_le_bytes() {
                        h ^= b as u64;
                        h = h.wrapping_mul(0x0100_0000_01b3);
                    }
                }
                let idx = (h % v.len() as u64) as usize;
                v[idx] += if h >> 63 == 0 { 1.0 } else { -1.0 };
            }
        }
        normalise(&mut v);
        v
    }

    proptest::proptest! {
        #[test]
        fn fast_remainders_are_remainders(n in proptest::num::u64::ANY, d in 1u64..5000, big in proptest::num::u64::ANY) {
            proptest::prop_assert_eq!(FastMod::new(d).rem(n), n % d);
            proptest::prop_assert_eq!(FastMod::new(big.max(1)).rem(n), n % big.max(1));
            // Powers of two and three times them, whatever the power.
            for shift in 0..63 {
                proptest::prop_assert_eq!(FastMod::new(1 << shift).rem(n), n % (1 << shift));
                if shift < 62 {
                    proptest::prop_assert_eq!(FastMod::new(3 << shift).rem(n), n % (3 << shift));
                }
            }
        }

        #[test]
        fn hashing_any_text_gives_the_per_ngram_vector(text in "\\PC{0,40}", dim in 1usize..400) {
            proptest::prop_assert_eq!(hashed(&text, dim), hashed_per_ngram(&text, dim));
        }

        /// The byte path of ASCII texts, whitespace of every kind included.
        #[test]
        fn hashing_any_ascii_text_gives_the_per_ngram_vector(
            text in "[ -~\\t\\n\\r\\x0B\\x0C]{0,60}",
            dim in proptest::prop_oneof![
                proptest::strategy::Just(384usize),
                proptest::strategy::Just(256),
                proptest::strategy::Just(768),
                1usize..400
            ],
        ) {
            proptest::prop_assert_eq!(hashed(&text, dim), hashed_per_ngram(&text, dim));
        }
    }

    #[test]
    fn shared_prefix_hashing_gives_the_same_vectors() {
        for text in [
            "",
            "a",
            "ab",
            "Revenue rose 5% in 2022.",
            "Ünïcode — façade, naïve café ✓ 東京",
            &"Calder Port Authority operates Eastgate Terminal. ".repeat(80),
        ] {
            for dim in [1, 8, 384] {
                assert_eq!(
                    hashed(text, dim),
                    hashed_per_ngram(text, dim),
                    "{text:?} {dim}"
                );
            }
        }
    }

    #[test]
    fn hashed_vectors_are_deterministic_and_normalised() {
        let a = hashed("Revenue rose 5% in 2022.", 384);
        let b = hashed("Revenue rose 5% in 2022.", 384);
        assert_eq!(a, b);
        let n: f32 = a.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-5);
        let near = hashed("revenue rose 5 % in 2022", 384);
        let far = hashed("The cat sat on the mat", 384);
        assert!(cosine(&a, &near) > cosine(&a, &far) + 0.3);
        assert!(hashed("", 8).iter().all(|x| *x == 0.0) || hashed("", 8).len() == 8);
    }
}
