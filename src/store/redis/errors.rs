//! How a Redis failure becomes a [`StoreError`], and URLs shown without
//! their credentials.

use crate::store::StoreError;
use ::redis::{ErrorKind, RedisError};

/// Either failure an operation body can hit, so `?` works on both.
pub(super) enum OpError {
    Redis(RedisError),
    Store(StoreError),
}

impl From<RedisError> for OpError {
    fn from(err: RedisError) -> Self {
        OpError::Redis(err)
    }
}

impl From<StoreError> for OpError {
    fn from(err: StoreError) -> Self {
        OpError::Store(err)
    }
}

/// Whether a failure means the connection is gone (and a new one is coming).
pub(super) fn connection_lost(err: &RedisError) -> bool {
    err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal()
}

/// Classifies a Redis failure: data we cannot read is `Corrupt`, a write
/// refused at `maxmemory` is `Full`, anything else (connection, timeout,
/// server state) is `Unavailable`.
pub(super) fn map_redis_error(op: &str, err: &RedisError) -> StoreError {
    let wrong_data =
        err.kind() == ErrorKind::UnexpectedReturnType || err.code() == Some("WRONGTYPE");
    if wrong_data {
        StoreError::Corrupt(format!("redis {op}: {err}"))
    } else if err.code() == Some("OOM") {
        StoreError::Full {
            detail: format!("redis {op}: {err}"),
            retry_after_ms: super::headroom::RETRY_AFTER_MS,
        }
    } else {
        StoreError::Unavailable(format!("redis {op}: {err}"))
    }
}

/// The URL without credentials, for messages and logs.
pub(crate) fn redact_url(url: &str) -> String {
    let mut shown = url.to_owned();
    // `redis://user:secret@host`: hide the user info. First, so that a `?` or
    // `#` inside a password cannot cut it in half below. Over-hides at worst.
    if let (Some(scheme_end), Some(at)) = (shown.find("://"), shown.rfind('@'))
        && at > scheme_end
    {
        shown.replace_range(scheme_end + 3..at, "***");
    }
    // `redis+unix:///path?pass=secret`: drop the query.
    if let Some(query) = shown.find('?') {
        shown.truncate(query);
        shown.push_str("?…");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            redact_url("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(
            redact_url("redis://user:secret@redis:6379/1"),
            "redis://***@redis:6379/1"
        );
        assert_eq!(
            redact_url("redis://:pa?ss@redis:6379"),
            "redis://***@redis:6379"
        );
        assert_eq!(
            redact_url("redis+unix:///run/redis.sock?db=1&pass=secret"),
            "redis+unix:///run/redis.sock?…"
        );
    }
}
