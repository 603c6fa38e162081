//! Where a tool call meets its caller's budget: the caller is named from
//! the request (an identified principal; else the verified MCP session; else
//! the client address, read through trusted proxies), and the call is
//! admitted or refused (the handler runs an admitted call as that caller,
//! so the run cap counts it the same way). A refusal that says when to
//! retry also gives the HTTP answer a `Retry-After` (`retry_after.rs`).

use super::answer::Answer;
use super::call_request::CallRequest;
use crate::auth::Principal;
use crate::gateway::Gateway;
use crate::limits::{Caller, client_address};

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
