//! noisebench's shared text functions, below every stage crate: exact cl100k token counts
//! ([`TokenCounter`]), words and normalisation for containment and overlap checks ([`words()`]),
//! an English stopword list ([`stopwords`]), a rule sentence splitter ([`sentences()`]) and the
//! refutation/confirmation cue lexicon of the offline exam and stance rules ([`cues`]).
//!
//! Stage crates never depend on each other, so what two of them (or a stage and an offline LLM
//! rule) need to agree on, such as what counts as a word, a stopword or a sentence, lives here.
//! Every function is deterministic: same input, same output, no I/O, no randomness.
//!
//! What this crate is not: a tokenizer for models other than cl100k, a language detector, a
//! stemmer or a full sentence segmenter (it splits at `.`/`!`/`?` followed by a capital, which is
//! what the offline rules and their tests assume). Retrieval (BM25, vectors) is `noisebench-index`.
//!
//! # Modules
//!
//! Text functions the stage crates must agree on, pure and below them all. `tokens.rs`
//! (`TokenCounter`: exact cl100k counts; tiktoken-rs pre-tokenizes with `fancy-regex` at about 6
//! MB/s, so this splits the same pieces with the `regex` crate and caches per-piece counts, held
//! equal to tiktoken-rs by unit and property tests), `words.rs` (words, normalisation, whole-word
//! phrase containment and counts, content-word overlap; in an ASCII text a phrase is looked for
//! where its first word's first byte is, by `memchr`, and checked word by word from there, held
//! equal to the normalised-words definition by property tests), `stopwords.rs`, `sentences.rs` (a
//! rule splitter), `cues.rs` (the refutation/confirmation cues the offline exam and stance rules
//! read). Not a model tokenizer beyond cl100k, a stemmer or a language detector. Invariant: pure
//! functions, no I/O; the crates that count or compare text use these, so they agree.

pub mod cues;
pub mod sentences;
pub mod stopwords;
pub mod tokens;
pub mod words;

pub use sentences::sentences;
pub use stopwords::{STOPWORDS, is_stopword};
pub use tokens::TokenCounter;
pub use words::{
    CARDINALS, MONTHS, Phrase, contains_phrase, content_of, content_words, is_month,
    is_number_word, normalize, share_found, upper_first, words,
};
