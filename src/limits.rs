//! Per-principal limits (`[limits]`): a token bucket of tool calls and a cap
//! on executes in progress. A refused call is an `internal` request error (the
//! closed set of Part III §7.2 has no kind of its own for it) whose message
//! says when to retry, with the same in `retry_after_ms` beside the error.
//!
//! Budgets are kept per API key, and once for all anonymous callers together:
//! an anonymous session is free to create, so a per-session budget would bound
//! nothing. They are counted per gateway instance.

use crate::auth::Principal;
use crate::config::limits::{Limit, LimitsConfig};
use crate::metrics::Metrics;
use crate::pilotage::RequestError;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde_json::json;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a caller refused for concurrent runs is told to wait: runs end
/// at their deadline at the latest, most much sooner.
const RUN_SLOT_RETRY: Duration = Duration::from_secs(1);

/// The live budget of one principal (or of all anonymous callers).
struct Budget {
    calls: Option<DefaultDirectRateLimiter>,
    runs: Option<(u32, Arc<Semaphore>)>,
}

impl Budget {
    fn new(limit: &Limit) -> Budget {
        let calls = limit.requests_per_second.map(|rps| {
            let period = Duration::from_secs_f64(1.0 / rps);
            let burst = limit.burst.unwrap_or_else(|| rps.ceil() as u32).max(1);
            let quota = Quota::with_period(period)
                .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
                .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
            RateLimiter::direct(quota)
        });
        let runs = limit
            .concurrent_runs
            .map(|n| (n, Arc::new(Semaphore::new(n as usize))));
        Budget { calls, runs }
    }
}

/// Every budget of this instance.
pub struct Limits {
    anonymous: Budget,
    /// By API key name; keys without an entry share nothing: each gets its
    /// own budget from `[limits.default]`, made on first use.
    keys: HashMap<String, Budget>,
    default: Limit,
    defaulted: std::sync::Mutex<HashMap<String, Arc<Budget>>>,
    metrics: Arc<Metrics>,
}

/// A held run slot; the slot frees when it drops.
pub struct RunSlot(#[allow(dead_code)] Option<OwnedSemaphorePermit>);

impl Limits {
    pub fn new(config: &LimitsConfig, metrics: Arc<Metrics>) -> Limits {
        Limits {
            anonymous: Budget::new(&config.anonymous),
            keys: config
                .keys
                .iter()
                .map(|k| (k.name.clone(), Budget::new(&k.limit)))
                .collect(),
            default: config.default.clone(),
            defaulted: Default::default(),
            metrics,
        }
    }

    /// Admits one tool call of `principal`, or says when to retry.
    pub fn admit_call(&self, principal: &Principal) -> Result<(), RequestError> {
        self.with_budget(principal, |budget| {
            let Some(limiter) = &budget.calls else {
                return Ok(());
            };
            limiter.check().map_err(|not_until| {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                self.refused(
                    "requests",
                    wait,
                    "too many tool calls: this caller's rate limit is reached",
                )
            })
        })
    }

    /// A slot for one execute of `principal`, held until the slot drops.
    pub fn run_slot(&self, principal: &Principal) -> Result<RunSlot, RequestError> {
        self.with_budget(principal, |budget| {
            let Some((n, slots)) = &budget.runs else {
                return Ok(RunSlot(None));
            };
            slots
                .clone()
                .try_acquire_owned()
                .map(|p| RunSlot(Some(p)))
                .map_err(|_| {
                    self.refused(
                        "concurrent_runs",
                        RUN_SLOT_RETRY,
                        &format!("this caller already has {n} runs in progress, its limit"),
                    )
                })
        })
    }

    fn with_budget<T>(&self, principal: &Principal, f: impl FnOnce(&Budget) -> T) -> T {
        if principal.scope.starts_with("anon:") {
            return f(&self.anonymous);
        }
        if let Some(b) = key_name(principal).and_then(|name| self.keys.get(name)) {
            return f(b);
        }
        // Every other identified caller (a key without an entry of its own,
        // an access token's subject) gets a default budget of its own.
        let budget = self
            .defaulted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(principal.scope.clone())
            .or_insert_with(|| Arc::new(Budget::new(&self.default)))
            .clone();
        f(&budget)
    }

    fn refused(&self, limit: &str, wait: Duration, why: &str) -> RequestError {
        self.metrics.rate_limited.with_label_values(&[limit]).inc();
        // Whole milliseconds, rounded up: retrying at the stated time succeeds.
        let ms = wait.as_micros().div_ceil(1000).max(1) as u64;
        RequestError::internal(format!(
            "{why}; retry in {ms} ms (nothing was done for this call)"
        ))
        .with("retry_after_ms", json!(ms))
    }
}

/// The API key name of a key principal (`key:<tenant>:<name>`).
fn key_name(principal: &Principal) -> Option<&str> {
    let rest = principal.scope.strip_prefix("key:")?;
    rest.split_once(':').map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::limits::KeyLimit;

    fn principal(scope: &str) -> Principal {
        Principal {
            scope: scope.into(),
            tenant: "acme".into(),
            lasting: true,
            permissions: crate::auth::policy::Permissions::ALL,
            ceiling: Default::default(),
        }
    }

    #[test]
    fn a_burst_is_admitted_then_refused_with_a_retry_time() {
        let config = LimitsConfig {
            anonymous: Limit {
                requests_per_second: Some(1.0),
                burst: Some(3),
                concurrent_runs: None,
            },
            ..Default::default()
        };
        let metrics = Arc::new(Metrics::new());
        let limits = Limits::new(&config, metrics.clone());
        // Two sessions share the anonymous budget.
        let (a, b) = (principal("anon:acme:s1"), principal("anon:acme:s2"));
        assert!(limits.admit_call(&a).is_ok());
        assert!(limits.admit_call(&b).is_ok());
        assert!(limits.admit_call(&a).is_ok());
        let refused = limits.admit_call(&b).unwrap_err();
        assert_eq!(refused.kind.as_str(), "internal");
        let ms = refused.siblings["retry_after_ms"].as_u64().unwrap();
        assert!((1..=1000).contains(&ms), "{ms}");
        assert!(refused.message.contains(&format!("retry in {ms} ms")));
        assert_eq!(
            metrics.rate_limited.with_label_values(&["requests"]).get(),
            1
        );
        // A key without an entry of its own is not limited by default.
        for _ in 0..100 {
            assert!(limits.admit_call(&principal("key:acme:ops")).is_ok());
        }
    }

    #[test]
    fn run_slots_are_per_key_and_free_on_drop() {
        let config = LimitsConfig {
            keys: vec![KeyLimit {
                name: "ops".into(),
                limit: Limit {
                    concurrent_runs: Some(1),
                    ..Default::default()
                },
            }],
            ..Default::default()
        };
        let limits = Limits::new(&config, Arc::new(Metrics::new()));
        let ops = principal("key:acme:ops");
        let held = limits.run_slot(&ops).expect("first slot");
        let refused = limits.run_slot(&ops).err().expect("second refused");
        assert!(refused.message.contains("1 runs in progress"));
        assert!(limits.run_slot(&principal("key:acme:audit")).is_ok());
        drop(held);
        assert!(limits.run_slot(&ops).is_ok());
    }
}
