//! When to try a request again and how long to wait first: the one Retry-After parser and the one
//! backoff schedule every HTTP client in noisebench uses (page fetches, search APIs, the LLM
//! endpoints).

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};

/// What to do with a Retry-After longer than [`RetryPolicy::max_delay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongRetryAfter {
    /// Stop retrying: the failed response is the outcome (a web page that asks for two hours is
    /// a drop, not a stalled stage).
    GiveUp,
    /// Wait `max_delay` and try again (an API that paces its clients coarsely).
    WaitMax,
}

/// How failed attempts are retried.
///
/// An attempt is retried when it timed out, when it could not connect (only if
/// `retry_connect_errors`), or when the server answered 408, 429 or 5xx
/// ([`RetryPolicy::retries_status`]). Delay `n` (from 1) is drawn between half and all of
/// `min(first_delay * 2^(n-1), max_delay)` ("equal jitter", so clients that failed together do
/// not retry together), and never shorter than the server's Retry-After.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub first_delay: Duration,
    /// Longest backoff delay, and longest Retry-After honoured as asked.
    pub max_delay: Duration,
    pub long_retry_after: LongRetryAfter,
    /// Whether a refused or failed connection is worth another attempt: yes for an API the
    /// operator configured (it may be restarting), no for a web page (its host is likely gone).
    pub retry_connect_errors: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            first_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
            long_retry_after: LongRetryAfter::GiveUp,
            retry_connect_errors: false,
        }
    }
}

impl RetryPolicy {
    /// Statuses worth another attempt: 408 (Request Timeout), 429 (Too Many Requests), 5xx.
    pub fn retries_status(status: u16) -> bool {
        status == 408 || status == 429 || (500..600).contains(&status)
    }

    /// A fresh schedule for one request's retries.
    pub fn schedule(&self) -> RetrySchedule {
        let first = self.first_delay.min(self.max_delay);
        // backon's jitter adds up to one more delay, so halving both ends gives equal jitter:
        // [d/2, d) with d = min(first * 2^(n-1), max).
        let backoff = ExponentialBuilder::default()
            .with_min_delay(first / 2)
            .with_max_delay(self.max_delay / 2)
            .with_max_times(self.max_retries as usize)
            .with_jitter()
            .build();
        RetrySchedule {
            backoff,
            max_delay: self.max_delay,
            long_retry_after: self.long_retry_after,
        }
    }
}

/// The delays of one request's retries, in order.
#[derive(Debug)]
pub struct RetrySchedule {
    backoff: ExponentialBackoff,
    max_delay: Duration,
    long_retry_after: LongRetryAfter,
}

impl RetrySchedule {
    /// The wait before the next retry, given the failed attempt's Retry-After; `None`: give up
    /// (retries used up, or a Retry-After too long under [`LongRetryAfter::GiveUp`]).
    pub fn next_delay(&mut self, retry_after: Option<Duration>) -> Option<Duration> {
        let backoff = self.backoff.next()?;
        match retry_after {
            None => Some(backoff),
            Some(asked) if asked <= self.max_delay => Some(asked.max(backoff)),
            Some(_) => match self.long_retry_after {
                LongRetryAfter::GiveUp => None,
                LongRetryAfter::WaitMax => Some(self.max_delay),
            },
        }
    }
}

/// A Retry-After value: delay seconds (fractions accepted, as some APIs send them) or an HTTP
/// date (a date in the past is no wait). `None` when it is neither.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let later = (chrono::Utc::now() + chrono::Duration::seconds(30)).to_rfc2822();
        let d = parse_retry_after(&later).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn delays_double_with_equal_jitter_and_stop() {
        let policy = RetryPolicy {
            max_retries: 4,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            ..RetryPolicy::default()
        };
        for _ in 0..50 {
            let mut s = policy.schedule();
            for full in [100u64, 200, 300, 300] {
                let d = s.next_delay(None).unwrap();
                assert!(
                    d >= Duration::from_millis(full / 2) && d <= Duration::from_millis(full),
                    "{d:?} for {full}"
                );
            }
            assert_eq!(s.next_delay(None), None, "four retries, then give up");
        }
    }

    #[test]
    fn retry_after_is_a_floor_and_long_ones_follow_the_policy() {
        let mut policy = RetryPolicy {
            first_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(60),
            ..RetryPolicy::default()
        };
        let mut s = policy.schedule();
        assert_eq!(
            s.next_delay(Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(s.next_delay(Some(Duration::from_secs(120))), None);
        policy.long_retry_after = LongRetryAfter::WaitMax;
        let mut s = policy.schedule();
        assert_eq!(
            s.next_delay(Some(Duration::from_secs(120))),
            Some(Duration::from_secs(60))
        );
    }

    #[test]
    fn statuses() {
        for s in [408, 429, 500, 503, 599] {
            assert!(RetryPolicy::retries_status(s), "{s}");
        }
        for s in [200, 301, 400, 401, 404, 600] {
            assert!(!RetryPolicy::retries_status(s), "{s}");
        }
    }
}
