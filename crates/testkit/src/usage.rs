//! Token usage the way OpenAI reports it, for fake endpoints whose tests measure cost: prompt
//! tokens counted on the request's messages (tiktoken's encoding for the request's model name,
//! else cl100k_base; 3 tokens of framing per message plus its role, and 3 priming the reply),
//! completion tokens on the reply's content, and `prompt_tokens_details.cached_tokens` from a
//! prompt cache that behaves like OpenAI's documented one: a request reuses the longest prefix
//! of an earlier request's tokens that is at least 1,024 tokens long, in steps of 128 tokens.
//!
//! Written from OpenAI's documentation of usage and prompt caching, not from the engine's code.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;
use tiktoken_rs::CoreBPE;

/// The shortest prefix a provider caches, and the step cached prefixes grow by.
pub const CACHE_MIN: usize = 1024;
pub const CACHE_STEP: usize = 128;

/// What one request cost, as `usage` says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
}

/// Counts usage over a server's life; remembers prefixes for the prompt cache.
#[derive(Default)]
pub struct UsageCounter {
    seen: HashSet<u64>,
}

fn bpe_for(model: &str) -> &'static CoreBPE {
    if model.starts_with("gpt-4o") || model.starts_with("o1") || model.starts_with("gpt-4.1") {
        tiktoken_rs::o200k_base_singleton()
    } else {
        tiktoken_rs::cl100k_base_singleton()
    }
}

impl UsageCounter {
    /// The usage of answering `request` (a chat-completions body) with `content`.
    pub fn count(&mut self, request: &Value, content: &str) -> Usage {
        let bpe = bpe_for(request["model"].as_str().unwrap_or(""));
        // The token stream the cache sees: per message a start mark, its role, its content.
        let mut stream: Vec<u32> = Vec::new();
        let mut prompt = 3u64;
        for m in request["messages"].as_array().into_iter().flatten() {
            let role = m["role"].as_str().unwrap_or("");
            let text = m["content"].as_str().unwrap_or("");
            let tokens = bpe.encode_ordinary(text);
            prompt += 3 + 1 + tokens.len() as u64;
            stream.push(u32::MAX);
            stream.extend(bpe.encode_ordinary(role));
            stream.extend(tokens);
        }
        let completion = bpe.encode_ordinary(content).len() as u64;
        // The hash of each prefix of 1,024 + k·128 tokens, fed once through a running hasher.
        let mut running = DefaultHasher::new();
        let mut hashes = Vec::new();
        for (i, t) in stream.iter().enumerate() {
            t.hash(&mut running);
            let len = i + 1;
            if len >= CACHE_MIN && (len - CACHE_MIN).is_multiple_of(CACHE_STEP) {
                hashes.push(running.clone().finish());
            }
        }
        // The cached prefix: the longest run of those prefixes, from the first, seen before.
        let hit = hashes.iter().take_while(|h| self.seen.contains(h)).count();
        let cached = if hit == 0 {
            0
        } else {
            CACHE_MIN + (hit - 1) * CACHE_STEP
        };
        self.seen.extend(hashes);
        Usage {
            prompt,
            completion,
            cached: (cached as u64).min(prompt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(system: &str, user: &str) -> Value {
        json!({"model": "gpt-4o-mini", "messages": [
            {"role": "system", "content": system}, {"role": "user", "content": user}]})
    }

    #[test]
    fn a_long_shared_prefix_is_cached_the_second_time_and_a_short_one_never() {
        let mut c = UsageCounter::default();
        let long = "word ".repeat(3000);
        let first = c.count(&request(&long, "question one?"), "{}");
        assert_eq!(first.cached, 0);
        assert!(first.prompt > 3000);
        let second = c.count(&request(&long, "another question?"), "{}");
        // The whole system message (3000+ tokens) is shared, cut to a 128-token step.
        assert!(
            second.cached >= 2944 && second.cached.is_multiple_of(128),
            "{second:?}"
        );
        let short = c.count(&request("be brief", "q"), "{}");
        let again = c.count(&request("be brief", "q"), "{}");
        assert_eq!((short.cached, again.cached), (0, 0));
    }

    #[test]
    fn prompt_tokens_follow_openais_chat_framing() {
        let mut c = UsageCounter::default();
        let u = c.count(&request("a b", "c"), "yes");
        let bpe = tiktoken_rs::o200k_base_singleton();
        let content = bpe.encode_ordinary("a b").len() + bpe.encode_ordinary("c").len();
        assert_eq!(u.prompt, content as u64 + 2 * 4 + 3);
        assert_eq!(u.completion, bpe.encode_ordinary("yes").len() as u64);
    }
}
