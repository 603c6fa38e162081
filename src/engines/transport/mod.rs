//! What every engine adapter's transport shares: one deadline for a whole
//! engine operation (retries included), a slot under the adapter's
//! in-flight bound, retries of safe calls with jittered backoff or the
//! engine's `Retry-After` within a per-engine retry budget, a per-engine
//! circuit breaker, and why a call got no answer in words a caller can
//! read (the HTTP client's own error, with the engine's URL, goes to the
//! log only).
//!
//! - `link`: what each adapter holds to reach its engine (its calls are
//!   `engines::http_client`'s).
//! - `deadline`: the operation's budget. `pause`: backoff and `Retry-After`.
//! - `retry_budget`, `breaker`: the two per-engine guards.
//! - `settings`: `[engine.breaker]` and `[engine.retry_budget]`.

pub mod breaker;
pub mod deadline;
mod link;
mod pause;
pub mod retry_budget;
pub mod settings;

use super::EngineError;
use crate::config::EngineConfig;
use breaker::{Breaker, BreakerState};
pub use deadline::Deadline;
pub use link::{Link, LinkSpec};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use retry_budget::RetryBudget;
use std::future::Future;
use std::time::{Duration, Instant};

/// The shortest attempt worth a retry: below it the attempt could not
/// even connect.
const MIN_ATTEMPT: Duration = Duration::from_millis(20);

/// Why a call got no answer. The texts are what a caller reads.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The operation's deadline passed; `sent` when the request may have
    /// reached the engine.
    #[error("the engine did not answer within {} ms", after.as_millis())]
    TimedOut { after: Duration, sent: bool },
    #[error("the engine refused the connection")]
    Refused,
    /// DNS, TLS or another failure before the request left.
    #[error("the engine could not be reached")]
    Unreachable,
    /// The request was sent and the connection failed before the answer.
    #[error("the engine's connection broke off before it answered")]
    BrokeOff,
    /// Every `max_in_flight` slot stayed taken for the call's whole
    /// timeout: nothing was sent.
    #[error("no free {engine} call slot within {timeout:?} (engine.max_in_flight)")]
    Saturated {
        engine: &'static str,
        timeout: Duration,
    },
    /// The engine's circuit breaker is open: nothing was sent.
    #[error(
        "the engine failed repeatedly; calls to it pause for {} ms (its circuit breaker is open)",
        retry_after.as_millis().max(1)
    )]
    Open { retry_after: Duration },
    /// The engine's credentials could not be had (an OAuth token
    /// endpoint failed): nothing was sent.
    #[error("{0}")]
    Credentials(#[from] crate::engines::credentials::CredentialError),
}

impl CallError {
    /// The caller's reading of an HTTP client error (logged whole, with
    /// the engine's URL, here and only here).
    pub fn transport(e: reqwest::Error, deadline: &Deadline, engine: &'static str) -> Self {
        tracing::warn!(engine, error = %e, "engine call failed");
        if e.is_timeout() {
            return CallError::TimedOut {
                after: deadline.total(),
                sent: !e.is_connect(),
            };
        }
        if e.is_connect() {
            let refused =
                std::iter::successors(Some(&e as &(dyn std::error::Error + 'static)), |s| {
                    s.source()
                })
                .filter_map(|s| s.downcast_ref::<std::io::Error>())
                .any(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
            return if refused {
                CallError::Refused
            } else {
                CallError::Unreachable
            };
        }
        CallError::BrokeOff
    }

    /// Whether the request surely never reached the engine.
    pub fn never_sent(&self) -> bool {
        match self {
            CallError::TimedOut { sent, .. } => !sent,
            CallError::BrokeOff => false,
            CallError::Refused
            | CallError::Unreachable
            | CallError::Saturated { .. }
            | CallError::Open { .. }
            | CallError::Credentials(_) => true,
        }
    }

    /// When the caller may try again, when the gateway knows.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            CallError::Open { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// Whether the engine itself failed (what the breaker counts): our own
    /// slot bound is not the engine's fault.
    fn engine_failed(&self) -> bool {
        !matches!(self, CallError::Saturated { .. } | CallError::Open { .. })
    }
}

/// A call that got no answer, before anything could have started.
impl From<CallError> for EngineError {
    fn from(e: CallError) -> Self {
        match e.retry_after() {
            Some(retry_after) => EngineError::Unavailable {
                message: e.to_string(),
                retry_after,
            },
            // A token endpoint's failure is the credentials', not the engine's reach.
            None if matches!(e, CallError::Credentials(_)) => EngineError::Failed(e.to_string()),
            None if e.never_sent() => EngineError::Unreachable(e.to_string()),
            None => EngineError::NoAnswer(e.to_string()),
        }
    }
}

/// An engine answer as the retry loop reads it.
pub trait Reply {
    fn status(&self) -> StatusCode;
    /// The answer's `Retry-After`, as a wait.
    fn retry_after(&self) -> Option<Duration>;
}

/// The `Retry-After` of an answer's headers.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    pause::retry_after(headers)
}

/// Waits for one of `slots` until `deadline`: waiting counts against the
/// call's deadline, so a saturated engine answers `internal` instead of
/// hanging the caller. `engine` names it in the error.
pub async fn slot<'s>(
    slots: &'s tokio::sync::Semaphore,
    deadline: &Deadline,
    engine: &'static str,
) -> Result<Option<tokio::sync::SemaphorePermit<'s>>, CallError> {
    // The semaphore is never closed: acquiring fails only by timing out.
    tokio::time::timeout(deadline.remaining(), slots.acquire())
        .await
        .map(Result::ok)
        .map_err(|_| CallError::Saturated {
            engine,
            timeout: deadline.total(),
        })
}

/// The guards of one engine: its breaker, its retry budget and how often
/// and after what first wait a safe call is repeated.
pub struct Resilience {
    engine: &'static str,
    breaker: Breaker,
    budget: RetryBudget,
    retries: u32,
    backoff: Duration,
}

impl Resilience {
    /// The guards `config` sets; `engine` names the adapter in logs.
    pub fn new(config: &EngineConfig, engine: &'static str) -> Self {
        Self {
            engine,
            breaker: Breaker::new(&config.breaker),
            budget: RetryBudget::new(&config.retry_budget),
            retries: config.retries,
            backoff: Duration::from_millis(config.retry_backoff_ms),
        }
    }

    /// Takes one retry from the engine's budget, for an adapter that
    /// repeats a call itself (a start resent under the same id).
    pub fn may_retry(&self) -> bool {
        self.budget.try_retry()
    }

    pub fn breaker_state(&self) -> BreakerState {
        self.breaker.state()
    }

    /// Runs `attempt` until one answer, all under one deadline of
    /// `timeout`. A `safe` call is repeated after a transport failure or an
    /// answer saying "try again" (429, 502, 503, 504), only while the
    /// deadline can hold the pause and another attempt like the last one,
    /// and only while the retry budget allows. `path` names it in logs.
    pub async fn call<A, F, Fut>(
        &self,
        safe: bool,
        timeout: Duration,
        path: &str,
        mut attempt: F,
    ) -> Result<A, CallError>
    where
        A: Reply,
        F: FnMut(Deadline) -> Fut,
        Fut: Future<Output = Result<A, CallError>>,
    {
        let deadline = Deadline::after(timeout);
        self.budget.called();
        let mut retries = 0;
        loop {
            let pass = self
                .breaker
                .admit(timeout)
                .map_err(|retry_after| CallError::Open { retry_after })?;
            let started = Instant::now();
            let result = match tokio::time::timeout(deadline.remaining(), attempt(deadline)).await {
                Ok(r) => r,
                Err(_) => {
                    tracing::warn!(engine = self.engine, %path, "engine call timed out");
                    Err(CallError::TimedOut {
                        after: timeout,
                        sent: true,
                    })
                }
            };
            let failed = match &result {
                Ok(a) => a.status().is_server_error(),
                Err(e) => e.engine_failed(),
            };
            match &result {
                Err(e) if !e.engine_failed() => self.breaker.release(pass),
                _ => self.breaker.record(pass, failed),
            }
            let pause = match &result {
                Ok(a) if matches!(a.status().as_u16(), 429 | 502 | 503 | 504) => a
                    .retry_after()
                    .unwrap_or_else(|| pause::backoff(self.backoff, retries + 1)),
                Err(CallError::Refused | CallError::Unreachable | CallError::BrokeOff) => {
                    pause::backoff(self.backoff, retries + 1)
                }
                _ => return result,
            };
            if !safe || retries >= self.retries {
                return result;
            }
            if !deadline.holds(pause, started.elapsed().max(MIN_ATTEMPT)) {
                tracing::info!(engine = self.engine, %path, pause_ms = pause.as_millis() as u64,
                    "not retried: the call's deadline cannot hold another attempt");
                return result;
            }
            if !self.budget.try_retry() {
                tracing::warn!(engine = self.engine, %path,
                    "not retried: the engine's retry budget is spent (engine.retry_budget)");
                return result;
            }
            retries += 1;
            tracing::warn!(engine = self.engine, %path, attempt = retries, "engine call failed; retrying");
            tokio::time::sleep(pause).await;
        }
    }
}
