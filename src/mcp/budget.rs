//! Where a tool call meets its caller's budget: the caller is named from
//! the request (an identified principal; else the verified MCP session; else
//! the client address, read through trusted proxies), the call is admitted
//! or refused, and the call runs as that caller so the run cap counts it
//! the same way. A refusal that says when to retry (`retry_after_ms`) also
//! gives the HTTP answer a `Retry-After` header, in whole seconds rounded
//! up; the answer itself stays the tool result on HTTP 200, the Pilotage
//! value an MCP client reads.

use super::answer::Answer;
use super::session::Session;
use crate::auth::Principal;
use crate::gateway::Gateway;
use crate::limits::{Caller, client_address};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{HeaderValue, Response, header};
use rmcp::ErrorData as McpError;
use std::future::Future;
use std::net::SocketAddr;
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

/// The caller a request of `principal` is counted as.
pub fn caller_of(gw: &Gateway, principal: &Principal, parts: Option<&Parts>) -> Caller {
    let session = parts
        .and_then(|p| p.extensions.get::<Session>())
        .map(|s| s.id.as_str());
    let peer = parts
        .and_then(|p| p.extensions.get::<ConnectInfo<SocketAddr>>())
        .map(|c| c.0);
    let client = parts.and_then(|p| client_address(peer, &p.headers, gw.limits.trusted_proxies()));
    Caller::of(principal, session, client)
}

/// Runs `call` if `caller`'s budget admits it, as that caller; otherwise
/// answers the refusal as a tool result.
pub async fn within_budget(
    gw: &Gateway,
    principal: &Principal,
    caller: Caller,
    retry_after: Option<&RetryAfter>,
    call: impl Future<Output = Result<Answer, McpError>>,
) -> Result<Answer, McpError> {
    let result = match gw.limits.admit_call(principal, &caller) {
        Err(refused) => Ok(super::tools::envelope(Err(refused))),
        Ok(()) => caller.serving(call).await,
    };
    if let (Some(slot), Ok(answer)) = (retry_after, &result)
        && answer.is_error()
        && let Some(ms) = answer
            .structured()
            .and_then(|s| s.get("retry_after_ms"))
            .and_then(serde_json::Value::as_u64)
    {
        slot.ask(ms);
    }
    result
}
