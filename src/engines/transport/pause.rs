//! How long to wait before a retry: jittered exponential backoff ("full
//! jitter": a random share of the doubled wait, so callers that failed
//! together do not retry together), or the engine's own `Retry-After`
//! (seconds or an HTTP date) when it sent one.

use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::time::{Duration, SystemTime};

/// The wait before retry number `retry` (1 for the first), from a first
/// wait of `base`.
pub fn backoff(base: Duration, retry: u32) -> Duration {
    let ceiling = base.saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)));
    // Half fixed, half random: never zero, never more than the ceiling.
    let half = ceiling / 2;
    half + half.mul_f64(rand::random::<f64>())
}

/// The engine's `Retry-After`, as a wait from now (a date in the past is no
/// wait at all).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(text).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_with_jitter_inside_its_ceiling() {
        let base = Duration::from_millis(100);
        for retry in 1..=4 {
            let ceiling = base * 2u32.pow(retry - 1);
            for _ in 0..50 {
                let wait = backoff(base, retry);
                assert!(
                    wait >= ceiling / 2 && wait <= ceiling,
                    "{wait:?} {ceiling:?}"
                );
            }
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
        h.insert(RETRY_AFTER, HeaderValue::from_str(&later).unwrap());
        let wait = retry_after(&h).expect("a date");
        assert!(wait > Duration::from_secs(100) && wait <= Duration::from_secs(120));
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }
}
