//! Where a tool call meets its caller's budget: the caller is named from
//! the request (an identified principal; else the verified MCP session; else
//! the client address, read through trusted proxies), and the call is
//! admitted or refused (the handler runs an admitted call as that caller,
//! so the run cap counts it the same way). A refusal that says when to
//! retry (`retry_after_ms`) also gives the HTTP answer a `Retry-After`
//! header, in whole seconds rounded up; the answer itself stays the tool
//! result on HTTP 200, the Pilotage value an MCP client reads.

use super::answer::Answer;
use super::call_request::CallRequest;
use crate::auth::Principal;
use crate::gateway::Gateway;
use crate::limits::{Caller, client_address};
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

/// The caller a tool call is counted as.
pub fn caller_of(gw: &Gateway, request: &CallRequest<'_>) -> Caller {
    let session = request.session.map(|s| s.id.as_str());
    let client = client_address(request.peer, request.headers, gw.limits.trusted_proxies());
    Caller::of(request.principal, session, client)
}

/// The refusal, as the call's answer (a tool result), when `caller`'s
/// budget does not admit a call now.
pub fn refusal(gw: &Gateway, principal: &Principal, caller: &Caller) -> Option<Answer> {
    let refused = gw.limits.admit_call(principal, caller).err()?;
    Some(super::tools::envelope(Err(refused)))
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
