//! What every conformance check shares: expiries sized for a loaded
//! machine, and a scope of its own.

use crate::store::now_ms;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Expiry used by the TTL checks: long enough that "still there right after
/// the write" holds on a loaded machine, short enough to keep the suite quick.
pub(super) const SHORT_TTL: Duration = Duration::from_millis(300);
/// How long the TTL checks wait before expecting a record to be gone.
pub(super) const PAST_SHORT_TTL: Duration = Duration::from_millis(700);
/// Expiry for records that must outlive the check.
pub(super) const LONG_TTL: Duration = Duration::from_secs(600);
/// Concurrent claimers in the race check.
pub(super) const CLAIMERS: usize = 50;

/// A scope no other check (or earlier run against the same Redis) uses.
pub(super) fn fresh_scope(check: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("tenant:{check}:{}:{n}", now_ms())
}
