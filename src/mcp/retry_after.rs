//! A refusal that says when to retry (`retry_after_ms`) also gives the HTTP
//! answer a `Retry-After` header, in whole seconds rounded up; the answer
//! itself stays the tool result on HTTP 200, the Pilotage value an MCP
//! client reads.

use super::answer::Answer;
use axum::body::Body;
use axum::http::{HeaderValue, Response, header};
use rmcp::ErrorData as McpError;
use std::sync::{Arc, Mutex, PoisonError};

/// Filled while a request is served when its answer asks the caller to wait;
/// the front turns it into the `Retry-After` header.
#[derive(Clone, Default)]
pub struct RetryAfter(Arc<Mutex<Option<u64>>>);

impl RetryAfter {
    fn ask(&self, ms: u64) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = Some(slot.map_or(ms, |held| held.max(ms)));
    }

    /// Sets `Retry-After` on `response` when the answer asked for a wait.
    pub fn apply(&self, response: &mut Response<Body>) {
        let asked = *self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ms) = asked {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(ms.div_ceil(1000)));
        }
    }
}

/// Asks for `Retry-After` when the answer says when to retry.
pub fn ask_retry(retry_after: Option<&RetryAfter>, result: &Result<Answer, McpError>) {
    if let (Some(slot), Ok(answer)) = (retry_after, result)
        && answer.is_error()
        && let Some(ms) = answer
            .structured()
            .and_then(|s| s.get("retry_after_ms"))
            .and_then(serde_json::Value::as_u64)
    {
        slot.ask(ms);
    }
}
