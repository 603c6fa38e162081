//! Failures of what the gateway depends on, its engine and its own store,
//! before anything was executed: `internal` request errors (Part III §7.2)
//! that name the failing part and keep its details in the log. Every
//! operation answers them alike, so they live beside the request errors
//! rather than in one operation.

//!
//! The caller never reads the engine's address, its answer's text or a
//! library's error text: those name internal hosts and say nothing a caller
//! can act on. The log keeps them whole. What the transport itself says
//! (no answer within the timeout, a refused connection, an open circuit
//! breaker) is the gateway's own wording and reaches the caller.

use super::RequestError;
use crate::engines::EngineError;
use crate::store::StoreError;
use serde_json::json;

/// An engine failure before execution is an `internal` request error that
/// says what happened and what to do, the details in the log; when the
/// gateway knows when to try again (an open circuit breaker), it says so in
/// `retry_after_ms`.
pub fn internal(e: &EngineError) -> RequestError {
    tracing::warn!(source = "engine", error = %e, "engine failure before execution");
    let error = RequestError::internal(match e {
        EngineError::Unreachable(m)
        | EngineError::NoAnswer(m)
        | EngineError::Unavailable { message: m, .. } => {
            format!("the workflow engine failed: {m}; nothing was executed: retry later")
        }
        EngineError::NotStarted(_) => {
            "the workflow engine refused to start the run; nothing was executed: retry later, and report it to the operator if it persists".to_string()
        }
        EngineError::Failed(m) | EngineError::RunBroken { message: m, .. } => format!(
            "the workflow engine failed{} (the cause is in the gateway's log); nothing was executed: retry later, and report it to the operator if it persists",
            answered_status(m)
                .map(|status| format!(": the engine answered HTTP {status}"))
                .unwrap_or_default()
        ),
    });
    match e.retry_after() {
        // Whole milliseconds, rounded up, as every `retry_after_ms`.
        Some(wait) => error.with(
            "retry_after_ms",
            json!((wait.as_micros().div_ceil(1000) as u64).max(1)),
        ),
        None => error,
    }
}

/// A failure of the gateway's own store before execution: an `internal`
/// request error that names the store, never the engine; `consequence`
/// tells the caller what happened (or did not) and what to do.
pub fn store_internal(e: &StoreError, consequence: &str) -> RequestError {
    tracing::warn!(source = "store", error = %e, "store failure before execution");
    match e {
        // The gateway's own words about its own budget: what the caller can act on.
        StoreError::Full { detail, .. } => RequestError::internal(format!(
            "the gateway's store failed: {detail}; {consequence}"
        )),
        // A backend's text names hosts and libraries: it stays in the log.
        StoreError::Unavailable(_) | StoreError::Corrupt(_) => RequestError::internal(format!(
            "the gateway's store failed (the cause is in its log); {consequence}"
        )),
    }
}

/// The HTTP status in the adapters' own "answered HTTP NNN" wording: the
/// one part of an engine's failed answer a caller can act on (a 401 or 403
/// says the gateway's credentials, a 503 that the engine sheds load).
fn answered_status(message: &str) -> Option<&str> {
    let (_, after) = message.split_once("answered HTTP ")?;
    let status = after.get(..3)?;
    status.bytes().all(|b| b.is_ascii_digit()).then_some(status)
}
