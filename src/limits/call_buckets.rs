//! Token buckets of tool calls, one per caller, held in a cache bounded in
//! entries (`limits.max_tracked_callers`). A bucket left alone until it has
//! refilled is dropped: a full bucket and a fresh one admit the same calls,
//! so forgetting it changes no answer. Only when more callers are active at
//! once than the cap holds is a bucket forgotten early, and then its caller
//! starts again with a full burst (it never loses one).

use super::Caller;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use moka::sync::Cache;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// The shortest time a bucket is kept after its last use, so a caller
/// calling steadily below its rate is not forgotten and remade each call.
const MIN_IDLE: Duration = Duration::from_secs(1);

/// The buckets of every caller of one budget.
pub struct CallBuckets {
    quota: Quota,
    buckets: Cache<Caller, Arc<DefaultDirectRateLimiter>>,
}

/// Whether a new caller's bucket was made by this call.
pub struct Admitted {
    pub new_caller: bool,
}

impl CallBuckets {
    /// Buckets of `rate` calls per second with `burst` at once, for at most
    /// `max_callers` callers.
    pub fn new(rate: f64, burst: u32, max_callers: u64) -> CallBuckets {
        let period = Duration::from_secs_f64(1.0 / rate);
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        // An idle bucket is full again after burst × period.
        let refill = period.saturating_mul(burst.get());
        CallBuckets {
            quota,
            buckets: Cache::builder()
                .max_capacity(max_callers)
                .time_to_idle(refill.max(MIN_IDLE))
                .build(),
        }
    }

    /// Takes one call from `caller`'s bucket, or says how long until one is
    /// there. A refused call takes nothing.
    pub fn admit(&self, caller: &Caller) -> Result<Admitted, Duration> {
        let entry = self
            .buckets
            .entry_by_ref(caller)
            .or_insert_with(|| Arc::new(RateLimiter::direct(self.quota)));
        let new_caller = entry.is_fresh();
        entry
            .value()
            .check()
            .map(|()| Admitted { new_caller })
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// Callers whose bucket is kept now, after dropping the ones due.
    pub fn callers(&self) -> u64 {
        self.buckets.run_pending_tasks();
        self.buckets.entry_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_have_buckets_of_their_own_and_the_cache_is_bounded() {
        let buckets = CallBuckets::new(1.0 / 60.0, 2, 10);
        let (a, b) = (Caller::Session("a".into()), Caller::Session("b".into()));
        assert!(buckets.admit(&a).unwrap().new_caller);
        assert!(!buckets.admit(&a).unwrap().new_caller);
        let wait = buckets.admit(&a).err().expect("a's burst is spent");
        assert!(wait > Duration::from_secs(50), "{wait:?}");
        // a's refusal cost b nothing.
        assert!(buckets.admit(&b).is_ok());
        assert!(buckets.admit(&b).is_ok());
        for i in 0..100u32 {
            let _ = buckets.admit(&Caller::Address(std::net::IpAddr::from(i.to_be_bytes())));
        }
        assert!(buckets.callers() <= 10, "{}", buckets.callers());
    }

    #[test]
    fn a_refilled_bucket_is_forgotten() {
        // Refilled after 2 ms; kept for MIN_IDLE.
        let buckets = CallBuckets::new(1000.0, 2, 10);
        buckets.admit(&Caller::Unaddressed).unwrap();
        assert_eq!(buckets.callers(), 1);
        std::thread::sleep(MIN_IDLE + Duration::from_millis(200));
        assert_eq!(buckets.callers(), 0);
    }
}
