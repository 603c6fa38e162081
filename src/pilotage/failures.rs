//! Failures of what the gateway depends on, its engine and its own store,
//! before anything was executed: `internal` request errors (Part III §7.2)
//! that name the failing part and keep its details in the log. Every
//! operation answers them alike, so they live beside the request errors
//! rather than in one operation.

use super::RequestError;
use crate::engines::EngineError;
use serde_json::json;
use std::fmt::Display;

/// An engine failure before execution is an `internal` request error; when
/// the gateway knows when to try again (an open circuit breaker), it says
/// so in `retry_after_ms`.
pub fn internal(e: &EngineError) -> RequestError {
    tracing::warn!(source = "engine", error = %e, "engine failure before execution");
    let error = RequestError::internal(format!("the workflow engine failed: {e}"));
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
pub fn store_internal(e: &impl Display, consequence: &str) -> RequestError {
    tracing::warn!(source = "store", error = %e, "store failure before execution");
    RequestError::internal(format!("the gateway's store failed: {e}; {consequence}"))
}
