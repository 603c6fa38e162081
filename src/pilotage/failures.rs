//! Failures of what the gateway depends on, its engine and its own store,
//! before anything was executed: `internal` request errors (Part III §7.2)
//! that name the failing part and keep its details in the log. Every
//! operation answers them alike, so they live beside the request errors
//! rather than in one operation.

//!
//! The caller never reads the engine's address, its answer's text or a
//! library's error text: those name internal hosts and say nothing a caller
//! can act on. The log keeps them whole.

use super::RequestError;
use crate::engines::EngineError;
use crate::store::StoreError;

/// An engine failure before execution is an `internal` request error that
/// says what happened and what to do, the details in the log.
pub fn internal(e: &EngineError) -> RequestError {
    tracing::warn!(source = "engine", error = %e, "engine failure before execution");
    RequestError::internal(match e {
        EngineError::Unreachable(_) => {
            "the workflow engine did not answer; nothing was executed: retry later"
        }
        EngineError::NotStarted(_) => {
            "the workflow engine refused to start the run; nothing was executed: retry later, and report it to the operator if it persists"
        }
        EngineError::Failed(_) | EngineError::RunBroken { .. } => {
            "the workflow engine failed (the cause is in the gateway's log); nothing was executed: retry later, and report it to the operator if it persists"
        }
    })
}

/// A failure of the gateway's own store before execution: an `internal`
/// request error that names the store, never the engine; `consequence`
/// tells the caller what happened (or did not) and what to do.
pub fn store_internal(e: &StoreError, consequence: &str) -> RequestError {
    tracing::warn!(source = "store", error = %e, "store failure before execution");
    match e {
        // The gateway's own words about its own budget: what the caller can act on.
        StoreError::Full(detail) => RequestError::internal(format!(
            "the gateway's store failed: {detail}; {consequence}"
        )),
        // A backend's text names hosts and libraries: it stays in the log.
        StoreError::Unavailable(_) | StoreError::Corrupt(_) => RequestError::internal(format!(
            "the gateway's store failed (the cause is in its log); {consequence}"
        )),
    }
}
