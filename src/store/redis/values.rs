//! Records as Redis holds them: JSON strings with whole-millisecond expiries.

use crate::store::{StoreError, effective_ttl};
use std::time::Duration;

pub(super) fn decode<T: serde::de::DeserializeOwned>(
    key: &str,
    bytes: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::Corrupt(format!("value at {key} is not a valid record: {e}")))
}

pub(super) fn encode<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    // Cannot fail for `Value` or our own records; mapped rather than unwrapped anyway.
    serde_json::to_string(value)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode record: {e}")))
}

/// Expiry in whole milliseconds for `PX` (see [`effective_ttl`]).
pub(super) fn ttl_ms(ttl: Duration) -> u64 {
    u64::try_from(effective_ttl(ttl).as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_is_whole_milliseconds_at_least_one() {
        assert_eq!(ttl_ms(Duration::ZERO), 1);
        assert_eq!(ttl_ms(Duration::from_micros(2500)), 3);
        assert_eq!(ttl_ms(Duration::from_secs(86_400)), 86_400_000);
    }
}
