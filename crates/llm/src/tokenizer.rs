//! Counting a model's tokens the way its provider bills them, for quotes: tiktoken's encoding
//! for an OpenAI model name (`gpt-4o-mini` -> o200k_base), the `tokenizers` crate over a
//! `tokenizer.json` configured for a local model (`llm.models.<name>.tokenizer`), else
//! cl100k_base as a stated approximation. Chat framing follows OpenAI's count: 3 tokens per
//! message plus its role, and 3 priming the reply.
//!
//! Limits and budgets keep their cl100k estimate ([`crate::count_tokens`]): they must not
//! depend on a file being present.

use std::path::Path;
use std::sync::Arc;

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::Tokenizer as Encoding;

use crate::error::LlmError;
use crate::prompt::Message;

/// A model's tokenizer, or the approximation that stands in for it.
#[derive(Clone)]
pub enum ModelTokenizer {
    /// One of tiktoken's encodings, known from the model's name.
    Tiktoken {
        encoding: &'static str,
        bpe: &'static CoreBPE,
    },
    /// A Hugging Face `tokenizer.json`.
    File {
        path: String,
        tokenizer: Arc<tokenizers::Tokenizer>,
    },
    /// cl100k_base for a model whose tokenizer is not known.
    Approximation,
}

impl std::fmt::Debug for ModelTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

fn encoding_of(model_id: &str) -> Option<(&'static str, &'static CoreBPE)> {
    // Names served under a prefix (`openai/gpt-4o-mini` through a router) count as the model.
    let name = model_id.rsplit('/').next().unwrap_or(model_id);
    Some(match tiktoken_rs::tokenizer::get_tokenizer(name)? {
        Encoding::O200kBase => ("o200k_base", tiktoken_rs::o200k_base_singleton()),
        Encoding::O200kHarmony => ("o200k_harmony", tiktoken_rs::o200k_harmony_singleton()),
        Encoding::Cl100kBase => ("cl100k_base", tiktoken_rs::cl100k_base_singleton()),
        Encoding::P50kBase => ("p50k_base", tiktoken_rs::p50k_base_singleton()),
        Encoding::P50kEdit => ("p50k_edit", tiktoken_rs::p50k_edit_singleton()),
        Encoding::R50kBase | Encoding::Gpt2 => ("r50k_base", tiktoken_rs::r50k_base_singleton()),
    })
}

impl ModelTokenizer {
    /// The tokenizer of `model_id`: the `tokenizer.json` at `file` when given, else tiktoken's
    /// encoding for the name, else the approximation. A file that cannot be read is an error
    /// naming it.
    pub fn for_model(model_id: &str, file: Option<&Path>) -> Result<Self, LlmError> {
        if let Some(path) = file {
            let tokenizer = tokenizers::Tokenizer::from_file(path)
                .map_err(|e| LlmError::Config(format!("tokenizer {}: {e}", path.display())))?;
            return Ok(ModelTokenizer::File {
                path: path.display().to_string(),
                tokenizer: Arc::new(tokenizer),
            });
        }
        Ok(match encoding_of(model_id) {
            Some((encoding, bpe)) => ModelTokenizer::Tiktoken { encoding, bpe },
            None => ModelTokenizer::Approximation,
        })
    }

    /// Whether counts are the model's own (not the approximation).
    pub fn exact(&self) -> bool {
        !matches!(self, ModelTokenizer::Approximation)
    }

    /// What counts the tokens, for the quote's notes.
    pub fn describe(&self) -> String {
        match self {
            ModelTokenizer::Tiktoken { encoding, .. } => format!("tiktoken {encoding}"),
            ModelTokenizer::File { path, .. } => format!("tokenizer.json at {path}"),
            ModelTokenizer::Approximation => {
                "cl100k_base, an approximation (the model's tokenizer is not known: set llm.models.<name>.tokenizer to its tokenizer.json)".into()
            }
        }
    }

    /// The token ids of a text, without special tokens.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            ModelTokenizer::Tiktoken { bpe, .. } => bpe.encode_ordinary(text),
            ModelTokenizer::File { tokenizer, .. } => tokenizer
                .encode(text, false)
                .map(|e| e.get_ids().to_vec())
                // Invariant-free fallback: a text the tokenizer refuses is counted by cl100k.
                .unwrap_or_else(|_| tiktoken_rs::cl100k_base_singleton().encode_ordinary(text)),
            ModelTokenizer::Approximation => {
                tiktoken_rs::cl100k_base_singleton().encode_ordinary(text)
            }
        }
    }

    /// A chat request's messages as one token stream, in the order a server's prompt cache
    /// sees them (each message's role, then its content, behind a mark no text produces), and
    /// its prompt tokens as OpenAI counts them: each message's content plus 4, plus 3.
    pub fn chat_stream(&self, messages: &[Message]) -> (Vec<u32>, u64) {
        let mut stream = Vec::new();
        let mut prompt = 3u64;
        for m in messages {
            let content = self.encode(&m.content);
            prompt += content.len() as u64 + 4;
            stream.push(u32::MAX);
            stream.extend(self.encode(&m.role));
            stream.extend(content);
        }
        (stream, prompt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_names_get_their_encoding_and_others_the_stated_approximation() {
        let t = |m: &str| ModelTokenizer::for_model(m, None).unwrap().describe();
        assert_eq!(t("gpt-4o-mini"), "tiktoken o200k_base");
        assert_eq!(t("openai/gpt-4o-mini"), "tiktoken o200k_base");
        assert_eq!(t("gpt-4-turbo"), "tiktoken cl100k_base");
        assert!(t("Qwen/Qwen2.5-7B-Instruct").starts_with("cl100k_base, an approximation"));
        assert!(!ModelTokenizer::for_model("smollm2", None).unwrap().exact());
    }

    #[test]
    fn a_missing_tokenizer_file_is_an_error_naming_it() {
        let e = ModelTokenizer::for_model("local", Some(Path::new("/no/such/tokenizer.json")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/no/such/tokenizer.json"), "{e}");
    }

    #[test]
    fn a_tokenizer_json_counts_a_local_models_tokens() {
        // A word-level tokenizer in the Hugging Face format: three words of the vocabulary and
        // one unknown word are four tokens.
        let json = r#"{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null,
            "decoder": null, "model": {"type": "WordLevel",
            "vocab": {"[UNK]": 0, "the": 1, "moon": 2, "landing": 3}, "unk_token": "[UNK]"}}"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, json).unwrap();
        let t = ModelTokenizer::for_model("local", Some(&path)).unwrap();
        assert!(t.exact());
        assert!(t.describe().starts_with("tokenizer.json at "));
        assert_eq!(t.encode("the moon landing hoax"), vec![1, 2, 3, 0]);
    }

    #[test]
    fn chat_prompts_are_counted_with_openais_framing() {
        let t = ModelTokenizer::for_model("gpt-4o", None).unwrap();
        let m = |role: &str, content: &str| Message {
            role: role.into(),
            content: content.into(),
        };
        let (stream, prompt) = t.chat_stream(&[m("system", "Be brief."), m("user", "Hello")]);
        let words = t.encode("Be brief.").len() + t.encode("Hello").len();
        assert_eq!(prompt, words as u64 + 8 + 3);
        assert!(stream.len() > words);
    }
}
