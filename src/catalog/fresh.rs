//! When a catalog read is current (Part II §5.4, §6.4): a tenant's mapped
//! engine catalog and a principal's promoted programs are confirmed by an
//! engine (or store) answer that began after the call arrived.
//!
//! Concurrent calls of one tenant share one confirmation, the way a group
//! commit shares one fsync ([`Confirmations`]): confirmations are numbered
//! when they begin, and a call accepts one whose number is above the count
//! it read on arrival, so it never accepts an answer that was already on its
//! way before it arrived.
//!
//! [`Currency::MayReuse`] is for read-only calls (validate, catalog pages)
//! under the opt-in `cache.read_only_catalog_staleness_ms`, a documented
//! departure from Part II §6.4 (docs/decisions.md, "Current means current"):
//! such a call may be answered from a catalog confirmed up to that long
//! ago. Execute always asks for [`Currency::Confirmed`]; no setting changes
//! that, so no run starts against a catalog nobody confirmed.

use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How current a catalog read must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Currency {
    /// Confirmed by an answer that began after the call arrived (execute;
    /// every call when no staleness is configured).
    Confirmed,
    /// A read-only call: may reuse what was confirmed within the configured
    /// staleness bound (0, the default: exactly [`Currency::Confirmed`]).
    MayReuse,
}

/// The staleness bound of read-only calls and the clock it is read on.
pub struct Staleness {
    max_ms: u64,
    epoch: Instant,
}

impl Staleness {
    pub fn new(max: Duration) -> Self {
        Self {
            max_ms: u64::try_from(max.as_millis()).unwrap_or(u64::MAX),
            epoch: Instant::now(),
        }
    }

    /// Whether anything is ever reused.
    pub fn enabled(&self) -> bool {
        self.max_ms > 0
    }

    /// Milliseconds on this clock, never 0 (0 marks "never confirmed").
    pub fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(1)
    }

    /// Whether a call of `currency` may take what began to be confirmed at
    /// `confirmed` (from [`Self::now`]) without asking again.
    pub fn reusable(&self, currency: Currency, confirmed: u64) -> bool {
        currency == Currency::MayReuse
            && self.max_ms > 0
            && confirmed > 0
            && self.now().saturating_sub(confirmed) < self.max_ms
    }
}

/// One tenant's cached value and the confirmations that keep it current.
pub struct Slot<T> {
    current: std::sync::RwLock<Option<(Option<String>, Arc<T>)>>,
    /// One confirmation at a time: the calls that wait share the next one.
    gate: tokio::sync::Mutex<()>,
    /// Confirmations begun so far.
    begun: AtomicU64,
    /// The number of the last confirmation that completed (0: none).
    completed: AtomicU64,
    /// When the last completed confirmation began (0: never).
    confirmed_at: AtomicU64,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self {
            current: std::sync::RwLock::new(None),
            gate: tokio::sync::Mutex::new(()),
            begun: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            confirmed_at: AtomicU64::new(0),
        }
    }
}

/// What a call holds while it confirms: the gate, and the confirmation's number.
pub struct Confirming<'a> {
    _gate: tokio::sync::MutexGuard<'a, ()>,
    number: u64,
}

/// What a call waiting for a confirmation is answered.
pub enum Turn<'a, T> {
    /// A confirmation that began after the call arrived completed meanwhile.
    Shared(Arc<T>),
    /// This call confirms; the cached value (with its ETag) is the baseline.
    Confirm(Confirming<'a>, Option<(Option<String>, Arc<T>)>),
}

impl<T> Slot<T> {
    /// The cached value with its ETag.
    pub fn current(&self) -> Option<(Option<String>, Arc<T>)> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The cached value, when a call of `currency` may take it unconfirmed.
    pub fn reusable(&self, staleness: &Staleness, currency: Currency) -> Option<Arc<T>> {
        let at = self.confirmed_at.load(Ordering::Acquire);
        if !staleness.reusable(currency, at) {
            return None;
        }
        self.current().map(|(_, value)| value)
    }

    /// Waits for this call's turn: a confirmation that began after it
    /// arrived, or the gate to make one itself.
    pub async fn turn(&self) -> Turn<'_, T> {
        let arrived = self.begun.load(Ordering::Acquire);
        let gate = self.gate.lock().await;
        let cached = self.current();
        if self.completed.load(Ordering::Acquire) > arrived
            && let Some((_, value)) = &cached
        {
            return Turn::Shared(value.clone());
        }
        // Numbered before the engine is asked, so a call that read a lower
        // count arrived before this confirmation began.
        let number = self.begun.fetch_add(1, Ordering::AcqRel) + 1;
        Turn::Confirm(
            Confirming {
                _gate: gate,
                number,
            },
            cached,
        )
    }

    /// Keeps `value` as confirmed by the confirmation `done`, which began at
    /// `began` (from [`Staleness::now`]).
    pub fn confirmed(
        &self,
        done: Confirming<'_>,
        began: u64,
        value: Option<(Option<String>, Arc<T>)>,
    ) {
        if let Some(value) = value {
            *self
                .current
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(value);
        }
        self.confirmed_at.store(began, Ordering::Release);
        self.completed.store(done.number, Ordering::Release);
    }
}

/// A principal's promoted programs as the store listed them, and when.
pub struct Listed {
    pub at: u64,
    pub programs: Arc<Vec<Value>>,
}

/// Principals' promoted programs, bounded by their estimated bytes; kept
/// only while read-only staleness is configured.
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

    /// The listing of `scope`, when a call of `currency` may take it.
    pub fn reusable(
        &self,
        staleness: &Staleness,
        currency: Currency,
        scope: &str,
    ) -> Option<Arc<Vec<Value>>> {
        let listed = self.lists.get(scope)?;
        staleness
            .reusable(currency, listed.at)
            .then(|| listed.programs.clone())
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

#[cfg(test)]
mod tests {
    use super::{Currency, Slot, Staleness, Turn};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn only_a_read_only_call_under_a_bound_reuses() {
        let none = Staleness::new(Duration::ZERO);
        let hour = Staleness::new(Duration::from_secs(3600));
        let at = hour.now();
        assert!(hour.reusable(Currency::MayReuse, at));
        assert!(!hour.reusable(Currency::Confirmed, at));
        assert!(!hour.reusable(Currency::MayReuse, 0), "never confirmed");
        assert!(!none.reusable(Currency::MayReuse, none.now()));
    }

    /// A confirmation already under way when a call arrives is not that
    /// call's: it confirms again once the gate is free.
    #[tokio::test]
    async fn a_confirmation_that_began_before_a_call_is_not_shared_with_it() {
        let slot: Arc<Slot<u32>> = Arc::new(Slot::default());
        let Turn::Confirm(first, _) = slot.turn().await else {
            panic!("nothing confirmed yet");
        };
        // A call arrives while the first confirmation is under way.
        let waiting = {
            let slot = slot.clone();
            tokio::spawn(async move {
                match slot.turn().await {
                    Turn::Shared(v) => Some(*v),
                    Turn::Confirm(..) => None,
                }
            })
        };
        tokio::task::yield_now().await;
        slot.confirmed(first, 1, Some((None, Arc::new(1))));
        assert_eq!(waiting.await.unwrap(), None, "it confirms for itself");
    }

    /// Calls that arrived while one confirmation was under way share the
    /// next one, which began after all of them.
    #[tokio::test]
    async fn calls_that_arrived_before_a_confirmation_began_share_it() {
        let slot: Arc<Slot<u32>> = Arc::new(Slot::default());
        let Turn::Confirm(first, _) = slot.turn().await else {
            panic!("nothing confirmed yet");
        };
        let (tx, mut rx) = tokio::sync::mpsc::channel(2);
        for _ in 0..2 {
            let (slot, tx) = (slot.clone(), tx.clone());
            tokio::spawn(async move {
                match slot.turn().await {
                    Turn::Shared(v) => tx.send(Some(*v)).await.unwrap(),
                    Turn::Confirm(done, _) => {
                        tx.send(None).await.unwrap();
                        slot.confirmed(done, 2, Some((None, Arc::new(2))));
                    }
                }
            });
        }
        tokio::task::yield_now().await;
        slot.confirmed(first, 1, Some((None, Arc::new(1))));
        assert_eq!(rx.recv().await.unwrap(), None, "one confirms");
        assert_eq!(rx.recv().await.unwrap(), Some(2), "the other shares it");
    }
}
