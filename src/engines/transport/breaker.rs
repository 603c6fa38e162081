//! The circuit breaker of one engine. Closed, it lets every call through
//! and counts failures; after `consecutive_failures` in a row, or a
//! `failure_ratio` of the calls over `window_ms`, it opens: calls fail fast,
//! without reaching the engine, for `open_ms`. Then it is half-open: one
//! probe call goes through while every other still fails fast; the probe's
//! success closes it, its failure opens it again.

use super::settings::BreakerSettings;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What `/metrics` and `/readyz` show of a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    HalfOpen,
    Open,
}

impl BreakerState {
    /// The gauge value: 0 closed, 1 half-open, 2 open.
    pub fn gauge(self) -> i64 {
        match self {
            Self::Closed => 0,
            Self::HalfOpen => 1,
            Self::Open => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::HalfOpen => "half_open",
            Self::Open => "open",
        }
    }
}

/// A call the breaker let through; report how it ended with
/// [`Breaker::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Normal,
    /// The one call that decides whether an open breaker closes.
    Probe,
}

#[derive(Debug)]
enum Phase {
    Closed,
    Open {
        until: Instant,
    },
    /// A probe is out; it was let through at `since`.
    Probing {
        since: Instant,
    },
}

#[derive(Debug)]
struct Inner {
    phase: Phase,
    in_a_row: u32,
    window_start: Instant,
    calls: u32,
    failures: u32,
}

pub struct Breaker {
    settings: BreakerSettings,
    inner: Mutex<Inner>,
}

impl Breaker {
    pub fn new(settings: &BreakerSettings) -> Self {
        Self {
            settings: settings.clone(),
            inner: Mutex::new(Inner {
                phase: Phase::Closed,
                in_a_row: 0,
                window_start: Instant::now(),
                calls: 0,
                failures: 0,
            }),
        }
    }

    /// Lets a call through, or says how long until one may try again.
    pub fn admit(&self, bound: Duration) -> Result<Pass, Duration> {
        let now = Instant::now();
        let mut inner = self.lock();
        match inner.phase {
            Phase::Closed => Ok(Pass::Normal),
            Phase::Open { until } if now < until => Err(until - now),
            Phase::Open { .. } => {
                inner.phase = Phase::Probing { since: now };
                Ok(Pass::Probe)
            }
            // A probe that never reported (its caller was cancelled) is
            // given up after its own bound, so the breaker cannot stick.
            Phase::Probing { since } if now.duration_since(since) > bound => {
                inner.phase = Phase::Probing { since: now };
                Ok(Pass::Probe)
            }
            Phase::Probing { since } => Err(bound.saturating_sub(now.duration_since(since))),
        }
    }

    /// How a call let through ended.
    pub fn record(&self, pass: Pass, failed: bool) {
        let now = Instant::now();
        let mut inner = self.lock();
        let s = &self.settings;
        if now.duration_since(inner.window_start) > Duration::from_millis(s.window_ms) {
            inner.window_start = now;
            inner.calls = 0;
            inner.failures = 0;
        }
        inner.calls += 1;
        if failed {
            inner.failures += 1;
            inner.in_a_row += 1;
        } else {
            inner.in_a_row = 0;
        }
        let open_for = Duration::from_millis(s.open_ms);
        match (pass, &inner.phase) {
            (Pass::Probe, _) if failed => {
                inner.phase = Phase::Open {
                    until: now + open_for,
                }
            }
            (Pass::Probe, _) => {
                inner.phase = Phase::Closed;
                inner.window_start = now;
                inner.calls = 0;
                inner.failures = 0;
            }
            (Pass::Normal, Phase::Closed) if failed => {
                let by_count =
                    s.consecutive_failures > 0 && inner.in_a_row >= s.consecutive_failures;
                let by_ratio = inner.calls >= s.min_calls.max(1)
                    && f64::from(inner.failures) >= s.failure_ratio * f64::from(inner.calls);
                if by_count || by_ratio {
                    inner.phase = Phase::Open {
                        until: now + open_for,
                    };
                }
            }
            _ => {}
        }
    }

    /// A call let through that got no verdict from the engine (it never
    /// reached it): a probe hands its turn to the next call.
    pub fn release(&self, pass: Pass) {
        let mut inner = self.lock();
        if pass == Pass::Probe {
            inner.phase = Phase::Open {
                until: Instant::now(),
            };
        }
    }

    pub fn state(&self) -> BreakerState {
        match self.lock().phase {
            Phase::Closed => BreakerState::Closed,
            Phase::Open { until } if Instant::now() < until => BreakerState::Open,
            Phase::Open { .. } | Phase::Probing { .. } => BreakerState::HalfOpen,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUND: Duration = Duration::from_secs(1);

    fn breaker(open_ms: u64) -> Breaker {
        Breaker::new(&BreakerSettings {
            consecutive_failures: 3,
            failure_ratio: 0.5,
            min_calls: 10,
            window_ms: 10_000,
            open_ms,
        })
    }

    #[test]
    fn failures_in_a_row_open_it_and_a_probe_closes_it() {
        let b = breaker(30);
        for _ in 0..3 {
            let pass = b.admit(BOUND).expect("closed");
            b.record(pass, true);
        }
        assert_eq!(b.state(), BreakerState::Open);
        let wait = b.admit(BOUND).expect_err("fails fast");
        assert!(wait <= Duration::from_millis(30));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(b.admit(BOUND), Ok(Pass::Probe));
        assert!(b.admit(BOUND).is_err(), "one probe at a time");
        b.record(Pass::Probe, false);
        assert_eq!(b.state(), BreakerState::Closed);
    }

    #[test]
    fn a_failed_probe_opens_it_again() {
        let b = breaker(20);
        for _ in 0..3 {
            b.record(Pass::Normal, true);
        }
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(b.admit(BOUND), Ok(Pass::Probe));
        b.record(Pass::Probe, true);
        assert_eq!(b.state(), BreakerState::Open);
    }

    #[test]
    fn a_failure_ratio_opens_it_when_no_run_of_failures_does() {
        let b = breaker(1000);
        for i in 0..10 {
            b.record(Pass::Normal, i % 2 == 1);
        }
        assert_eq!(b.state(), BreakerState::Open);
        let fine = breaker(1000);
        for i in 0..10 {
            fine.record(Pass::Normal, i % 3 == 0);
        }
        assert_eq!(fine.state(), BreakerState::Closed);
    }
}
