//! What every engine adapter's transport shares: a slot under the
//! adapter's in-flight bound, why a call got no answer, whether it surely
//! never reached the engine, and the repetition of calls that are safe to
//! repeat.

use super::EngineError;
use reqwest::StatusCode;
use std::future::Future;
use std::time::Duration;

/// Why a call got no answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("{0}")]
    Transport(#[from] reqwest::Error),
    /// Every `max_in_flight` slot stayed taken for the call's whole
    /// timeout: nothing was sent.
    #[error("no free {engine} call slot within {timeout:?} (engine.max_in_flight)")]
    Saturated {
        engine: &'static str,
        timeout: Duration,
    },
    /// The engine's credentials could not be had (an OAuth token
    /// endpoint failed): nothing was sent.
    #[error("{0}")]
    Credentials(#[from] crate::engines::credentials::CredentialError),
}

impl CallError {
    /// Whether the request surely never reached the engine.
    pub fn never_sent(&self) -> bool {
        match self {
            CallError::Transport(e) => e.is_connect(),
            CallError::Saturated { .. } | CallError::Credentials(_) => true,
        }
    }
}

/// A call that got no answer, before anything could have started.
impl From<CallError> for EngineError {
    fn from(e: CallError) -> Self {
        if let CallError::Credentials(_) = e {
            EngineError::Failed(e.to_string())
        } else if e.never_sent() {
            EngineError::Unreachable(e.to_string())
        } else {
            EngineError::Failed(e.to_string())
        }
    }
}

/// Waits for one of `slots`, at most `timeout`: waiting counts against the
/// call's deadline, so a saturated engine answers `internal` instead of
/// hanging the caller. `engine` names it in the error.
pub async fn slot<'s>(
    slots: &'s tokio::sync::Semaphore,
    timeout: Duration,
    engine: &'static str,
) -> Result<Option<tokio::sync::SemaphorePermit<'s>>, CallError> {
    // The semaphore is never closed: acquiring fails only by timing out.
    tokio::time::timeout(timeout, slots.acquire())
        .await
        .map(Result::ok)
        .map_err(|_| CallError::Saturated { engine, timeout })
}

/// How often, and after what first wait (doubled each time), a safe call
/// is repeated.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub retries: u32,
    pub backoff: Duration,
}

/// Runs `attempt`; when the call is `safe`, repeats it with backoff after a
/// transport failure or an answer saying "try again" (429, 502, 503, 504).
/// `engine` and `path` name the call in the warning.
pub async fn repeat_if_safe<A, F, Fut>(
    safe: bool,
    retry: Retry,
    engine: &'static str,
    path: &str,
    status: impl Fn(&A) -> StatusCode,
    mut attempt: F,
) -> Result<A, CallError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<A, CallError>>,
{
    let mut delay = retry.backoff;
    let mut tries = 0;
    loop {
        let result = attempt().await;
        let again = safe
            && tries < retry.retries
            && match &result {
                Err(_) => true,
                Ok(a) => matches!(status(a).as_u16(), 429 | 502 | 503 | 504),
            };
        if !again {
            return result;
        }
        tries += 1;
        tracing::warn!(%path, attempt = tries, "{engine} call failed; retrying");
        tokio::time::sleep(delay).await;
        delay *= 2;
    }
}
