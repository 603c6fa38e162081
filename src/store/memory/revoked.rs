//! Revoked session ids: not a principal's records, so a byte-bounded cache
//! of their own, each marker living for its own ttl.

use moka::Expiry;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub(super) struct Revoked {
    pub(super) ttl: Duration,
    pub(super) weight: u32,
}

/// Each revocation lives for its own ttl, counted from its write.
pub(super) struct RevocationTtl;

impl Expiry<String, Revoked> for RevocationTtl {
    fn expire_after_create(&self, _key: &String, v: &Revoked, _at: Instant) -> Option<Duration> {
        Some(v.ttl)
    }
    fn expire_after_update(
        &self,
        _key: &String,
        v: &Revoked,
        _at: Instant,
        _remaining: Option<Duration>,
    ) -> Option<Duration> {
        Some(v.ttl)
    }
}
