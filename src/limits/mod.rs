//! Budgets (`[limits]`): a token bucket of tool calls and a cap on executes
//! in progress, per caller ([`Caller`]). A refused call is an `internal`
//! request error (the closed set of Part III §7.2 has no kind of its own for
//! it) whose message says when to retry, with the same in `retry_after_ms`
//! beside the error.
//!
//! A named API key with a `[[limits.key]]` entry has that budget; every other
//! identified principal has a `[limits.default]` budget of its own; every
//! anonymous caller (each MCP session, each client address without one) has
//! a `[limits.anonymous]` budget of its own. A refused call takes nothing
//! from any budget, so one caller's flood never costs another a call.
//! Budgets are counted per gateway instance.

mod call_buckets;
mod caller;
mod client_address;
mod run_counts;

pub use caller::{Caller, is_anonymous};
pub use client_address::client_address;

use crate::auth::Principal;
use crate::config::limits::{AddressBlock, Limit, LimitsConfig};
use crate::metrics::Metrics;
use crate::pilotage::RequestError;
use call_buckets::CallBuckets;
use run_counts::{CountedRun, RunCounts};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a caller refused for concurrent runs is told to wait: runs end
/// at their deadline at the latest, most much sooner.
const RUN_SLOT_RETRY: Duration = Duration::from_secs(1);

/// The `pilotage_cache_entries` series of the callers whose budget is kept.
const TRACKED_CALLERS_SERIES: &str = "limiter_callers";

/// One budget shared by every call of its owner (a `[[limits.key]]` key).
struct OwnBudget {
    calls: Option<CallBuckets>,
    runs: Option<(u32, Arc<Semaphore>)>,
}

/// One budget rule applied to each caller separately.
struct PerCallerBudget {
    calls: Option<CallBuckets>,
    runs: Option<u32>,
    in_progress: RunCounts,
}

fn buckets(limit: &Limit, max_callers: u64) -> Option<CallBuckets> {
    limit.requests_per_second.map(|rps| {
        let burst = limit.burst.unwrap_or_else(|| rps.ceil() as u32).max(1);
        CallBuckets::new(rps, burst, max_callers)
    })
}

impl OwnBudget {
    fn new(limit: &Limit) -> OwnBudget {
        OwnBudget {
            // One caller: the bucket is never forgotten.
            calls: buckets(limit, 1),
            runs: limit
                .concurrent_runs
                .map(|n| (n, Arc::new(Semaphore::new(n as usize)))),
        }
    }
}

impl PerCallerBudget {
    fn new(limit: &Limit, max_callers: u64) -> PerCallerBudget {
        PerCallerBudget {
            calls: buckets(limit, max_callers),
            runs: limit.concurrent_runs,
            in_progress: RunCounts::default(),
        }
    }

    fn callers(&self) -> u64 {
        self.calls.as_ref().map_or(0, CallBuckets::callers) + self.in_progress.callers() as u64
    }
}

/// Which budget a call is counted against.
enum Counted<'a> {
    Own(&'a OwnBudget),
    PerCaller(&'a PerCallerBudget, Caller),
}

/// Every budget of this instance.
pub struct Limits {
    anonymous: PerCallerBudget,
    /// By API key name.
    keys: HashMap<String, OwnBudget>,
    /// Every identified principal without an entry of its own.
    default: PerCallerBudget,
    trusted_proxies: Vec<AddressBlock>,
    metrics: Arc<Metrics>,
}

/// A held run slot; the slot frees when it drops.
pub struct RunSlot(#[allow(dead_code)] Option<Held>);

/// Held only to be dropped: dropping frees the slot.
#[allow(dead_code)]
enum Held {
    Permit(OwnedSemaphorePermit),
    Counted(CountedRun),
}

impl Limits {
    pub fn new(config: &LimitsConfig, metrics: Arc<Metrics>) -> Limits {
        let cap = config.max_tracked_callers.max(1);
        Limits {
            anonymous: PerCallerBudget::new(&config.anonymous, cap),
            keys: config
                .keys
                .iter()
                .map(|k| (k.name.clone(), OwnBudget::new(&k.limit)))
                .collect(),
            default: PerCallerBudget::new(&config.default, cap),
            trusted_proxies: config.trusted_proxy_blocks(),
            metrics,
        }
    }

    /// The proxies whose `X-Forwarded-For` is believed.
    pub fn trusted_proxies(&self) -> &[AddressBlock] {
        &self.trusted_proxies
    }

    /// Admits one tool call of `principal` as `caller`, or says when to retry.
    pub fn admit_call(&self, principal: &Principal, caller: &Caller) -> Result<(), RequestError> {
        let (buckets, caller) = match self.counted(principal, caller.clone()) {
            Counted::Own(b) => (b.calls.as_ref(), caller.clone()),
            Counted::PerCaller(b, c) => (b.calls.as_ref(), c),
        };
        let Some(buckets) = buckets else {
            return Ok(());
        };
        match buckets.admit(&caller) {
            Ok(admitted) => {
                if admitted.new_caller {
                    self.publish_tracked_callers();
                }
                Ok(())
            }
            Err(wait) => Err(self.refused(
                "requests",
                wait,
                "too many tool calls: this caller's rate limit is reached",
            )),
        }
    }

    /// A slot for one execute of `principal`, held until the slot drops. The
    /// caller is the one whose tool call is being served
    /// ([`Caller::serving`]).
    pub fn run_slot(&self, principal: &Principal) -> Result<RunSlot, RequestError> {
        let refused = |n: u32| {
            self.refused(
                "concurrent_runs",
                RUN_SLOT_RETRY,
                &format!("this caller already has {n} runs in progress, its limit"),
            )
        };
        match self.counted(principal, Caller::current_or(principal)) {
            Counted::Own(budget) => {
                let Some((n, slots)) = &budget.runs else {
                    return Ok(RunSlot(None));
                };
                slots
                    .clone()
                    .try_acquire_owned()
                    .map(|p| RunSlot(Some(Held::Permit(p))))
                    .map_err(|_| refused(*n))
            }
            Counted::PerCaller(budget, caller) => {
                let Some(n) = budget.runs else {
                    return Ok(RunSlot(None));
                };
                budget
                    .in_progress
                    .try_start(&caller, n)
                    .map(|run| RunSlot(Some(Held::Counted(run))))
                    .ok_or_else(|| refused(n))
            }
        }
    }

    /// Callers whose budget state this instance keeps now (bounded by
    /// `limits.max_tracked_callers` per budget rule).
    pub fn tracked_callers(&self) -> u64 {
        self.anonymous.callers() + self.default.callers()
    }

    fn publish_tracked_callers(&self) {
        self.metrics
            .cache_entries
            .with_label_values(&[TRACKED_CALLERS_SERIES])
            .set(i64::try_from(self.tracked_callers()).unwrap_or(i64::MAX));
    }

    fn counted(&self, principal: &Principal, caller: Caller) -> Counted<'_> {
        if is_anonymous(principal) {
            return Counted::PerCaller(&self.anonymous, caller);
        }
        if let Some(b) = key_name(principal).and_then(|name| self.keys.get(name)) {
            return Counted::Own(b);
        }
        // Every other identified caller (a key without an entry of its own,
        // an access token's subject) gets a default budget of its own.
        Counted::PerCaller(&self.default, Caller::Principal(principal.scope.clone()))
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
            approve_above: None,
        }
    }

    #[test]
    fn each_anonymous_session_has_its_own_burst_and_is_told_when_to_retry() {
        let config = LimitsConfig {
            anonymous: Limit {
                requests_per_second: Some(1.0),
                burst: Some(2),
                concurrent_runs: None,
            },
            ..Default::default()
        };
        let metrics = Arc::new(Metrics::new());
        let limits = Limits::new(&config, metrics.clone());
        // One principal (anonymous_scope = "tenant"), two sessions.
        let anon = principal("anon:acme:tenant");
        let (s1, s2) = (Caller::Session("s1".into()), Caller::Session("s2".into()));
        assert!(limits.admit_call(&anon, &s1).is_ok());
        assert!(limits.admit_call(&anon, &s1).is_ok());
        let refused = limits.admit_call(&anon, &s1).unwrap_err();
        assert_eq!(refused.kind.as_str(), "internal");
        let ms = refused.siblings["retry_after_ms"].as_u64().unwrap();
        assert!((1..=1000).contains(&ms), "{ms}");
        assert!(refused.message.contains(&format!("retry in {ms} ms")));
        // s1's refusals cost s2 nothing.
        assert!(limits.admit_call(&anon, &s2).is_ok());
        assert!(limits.admit_call(&anon, &s2).is_ok());
        assert_eq!(
            metrics.rate_limited.with_label_values(&["requests"]).get(),
            1
        );
        assert_eq!(limits.tracked_callers(), 2);
        // A key without an entry of its own is not limited by default.
        for _ in 0..100 {
            let ops = principal("key:acme:ops");
            assert!(
                limits
                    .admit_call(&ops, &Caller::of(&ops, None, None))
                    .is_ok()
            );
        }
    }

    #[tokio::test]
    async fn run_slots_are_per_key_and_per_anonymous_caller_and_free_on_drop() {
        let config = LimitsConfig {
            keys: vec![KeyLimit {
                name: "ops".into(),
                limit: Limit {
                    concurrent_runs: Some(1),
                    ..Default::default()
                },
            }],
            anonymous: Limit {
                concurrent_runs: Some(1),
                ..Default::default()
            },
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

        let anon = principal("anon:acme:tenant");
        let here = Caller::Address("127.0.0.1".parse().unwrap());
        let there = Caller::Address("127.0.0.2".parse().unwrap());
        let (limits, anon2) = (Arc::new(limits), anon.clone());
        let l = limits.clone();
        let held = here
            .clone()
            .serving(async move { l.run_slot(&anon2) })
            .await
            .expect("first anonymous slot");
        let l = limits.clone();
        let a = anon.clone();
        assert!(here.serving(async move { l.run_slot(&a).is_err() }).await);
        let l = limits.clone();
        assert!(
            there
                .serving(async move { l.run_slot(&anon).is_ok() })
                .await
        );
        drop(held);
        assert_eq!(limits.tracked_callers(), 0, "no run is in progress");
    }
}
