//! How long a catalog read stays current without asking again
//! (`cache.catalog_max_age_ms`): a tenant's mapped engine catalog and a
//! principal's promoted programs are reused for that long after the engine
//! (or the store) last confirmed them; 0 asks on every request.
//!
//! Why a bounded age rather than a conditional request per call: the
//! conditional request was a round trip to the engine (and one to the
//! store for the promoted programs) on every validate, catalog page and
//! execute, and an engine whose listing carries usage counters (the
//! reference engine's does) answers it with the whole listing after every
//! run. A promotion through this instance is seen at once (its scope is
//! forgotten here); a change of the engine's catalog, or a promotion
//! through another instance, within the age. docs/performance.md,
//! "Catalog freshness", gives the decision.

use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The age bound and the clock it is read on.
pub struct Freshness {
    max_age_ms: u64,
    epoch: Instant,
}

impl Freshness {
    pub fn new(max_age: Duration) -> Self {
        Self {
            max_age_ms: u64::try_from(max_age.as_millis()).unwrap_or(u64::MAX),
            epoch: Instant::now(),
        }
    }

    /// Whether anything is reused at all.
    pub fn enabled(&self) -> bool {
        self.max_age_ms > 0
    }

    /// Milliseconds on this clock, never 0 (0 marks "never confirmed").
    pub fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(1)
    }

    /// Whether something confirmed at `confirmed` (from [`Self::now`]) is still current.
    pub fn current(&self, confirmed: u64) -> bool {
        self.max_age_ms > 0
            && confirmed > 0
            && self.now().saturating_sub(confirmed) < self.max_age_ms
    }
}

/// When the engine last confirmed a tenant's catalog.
#[derive(Default)]
pub struct Confirmed(AtomicU64);

impl Confirmed {
    pub fn at(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
    pub fn set(&self, at: u64) {
        self.0.store(at, Ordering::Release);
    }
}

/// A principal's promoted programs as the store listed them, and when.
pub struct Listed {
    pub at: u64,
    pub programs: Arc<Vec<Value>>,
}

/// Principals' promoted programs, bounded by their estimated bytes.
pub struct ProgramLists {
    lists: moka::sync::Cache<String, Arc<Listed>>,
}

impl ProgramLists {
    pub fn new(max_bytes: u64) -> Self {
        Self {
            lists: moka::sync::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|scope: &String, listed: &Arc<Listed>| {
                    let programs: u64 = listed.programs.iter().map(crate::weigh::json).sum();
                    crate::weigh::as_weight(crate::weigh::text(scope) + programs + 128)
                })
                .build(),
        }
    }

    /// The listing of `scope` when it is still current.
    pub fn current(&self, fresh: &Freshness, scope: &str) -> Option<Arc<Vec<Value>>> {
        let listed = self.lists.get(scope)?;
        fresh.current(listed.at).then(|| listed.programs.clone())
    }

    pub fn keep(&self, scope: &str, at: u64, programs: Arc<Vec<Value>>) {
        self.lists
            .insert(scope.to_string(), Arc::new(Listed { at, programs }));
    }

    /// Drops `scope`'s listing (it just promoted a program).
    pub fn forget(&self, scope: &str) {
        self.lists.invalidate(scope);
    }
}
