//! How much of a build's input a provider's prompt cache can serve: OpenAI (and DeepSeek, vLLM
//! and llama.cpp with prefix caching) reuse the longest prefix of a request that an earlier
//! request already sent, counted in whole blocks: at least 1,024 tokens, then steps of 128.
//! [`PrefixCache`] replays a build's requests in order and says, per request, how many of its
//! prompt tokens lie in such a prefix: the quote prices them at the cached-input rate and
//! reports the cacheable share per stage.

use std::collections::HashSet;

/// The shortest prefix a provider caches.
pub const MIN_PREFIX: usize = 1024;
/// The step cached prefixes grow by past [`MIN_PREFIX`].
pub const PREFIX_STEP: usize = 128;

/// The prefixes sent so far, as hashes of their tokens at each block boundary.
#[derive(Debug, Default)]
pub struct PrefixCache {
    boundaries: HashSet<u64>,
}

/// FNV-1a over token ids: a prefix's hash extends the shorter prefix's, so one pass gives
/// every boundary's hash (a collision only overstates one request's cached tokens).
fn extend(hash: u64, token: u32) -> u64 {
    token.to_le_bytes().iter().fold(hash, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl PrefixCache {
    /// The tokens of `stream` (a request's prompt as its token stream) that an earlier
    /// request's prefix covers, in whole blocks; then remember this request's prefixes.
    pub fn observe(&mut self, stream: &[u32]) -> u64 {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let mut cached = 0usize;
        let mut still_cached = true;
        for (i, token) in stream.iter().enumerate() {
            hash = extend(hash, *token);
            let len = i + 1;
            if len >= MIN_PREFIX && (len - MIN_PREFIX).is_multiple_of(PREFIX_STEP) {
                // Every boundary is remembered; only an unbroken run from the first counts.
                let seen = !self.boundaries.insert(hash);
                still_cached &= seen;
                if still_cached {
                    cached = len;
                }
            }
        }
        cached as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_repeated_long_prefix_is_cached_in_whole_blocks() {
        let mut c = PrefixCache::default();
        let shared: Vec<u32> = (0..2000).collect();
        let mut a = shared.clone();
        a.extend([7, 8, 9]);
        let mut b = shared.clone();
        b.extend([1, 2]);
        assert_eq!(c.observe(&a), 0);
        // 2000 shared tokens: the largest boundary within them is 1024 + 7·128 = 1920.
        assert_eq!(c.observe(&b), 1920);
        // Short requests are never cached, however often they repeat.
        let short: Vec<u32> = (0..1000).collect();
        assert_eq!((c.observe(&short), c.observe(&short)), (0, 0));
    }

    #[test]
    fn a_prefix_that_differs_early_is_not_cached() {
        let mut c = PrefixCache::default();
        let a: Vec<u32> = (0..3000).collect();
        let mut b = a.clone();
        b[10] = 99_999;
        c.observe(&a);
        assert_eq!(c.observe(&b), 0);
    }

    proptest! {
        #[test]
        fn cached_tokens_are_whole_blocks_within_the_request(
            reqs in proptest::collection::vec((0u32..3, 0usize..3000), 1..8)
        ) {
            let mut c = PrefixCache::default();
            for (seed, len) in reqs {
                let s: Vec<u32> = (0..len as u32).map(|i| i % 50 + seed).collect();
                let cached = c.observe(&s) as usize;
                prop_assert!(cached <= s.len());
                prop_assert!(cached == 0 || (cached >= MIN_PREFIX && (cached - MIN_PREFIX).is_multiple_of(PREFIX_STEP)));
            }
        }

        #[test]
        fn the_same_request_twice_is_cached_up_to_its_last_block(len in 0usize..4000) {
            let mut c = PrefixCache::default();
            let s: Vec<u32> = (0..len as u32).collect();
            c.observe(&s);
            let want = if len < MIN_PREFIX { 0 } else { MIN_PREFIX + (len - MIN_PREFIX) / PREFIX_STEP * PREFIX_STEP };
            prop_assert_eq!(c.observe(&s) as usize, want);
        }
    }
}
