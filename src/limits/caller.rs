//! Who a budget belongs to. An identified principal (an API key, an access
//! token's subject) is one caller wherever it connects from. An anonymous
//! caller is its MCP session when it has one (the signed id every instance
//! verifies), and its client address when it has none: anonymous callers
//! never share one budget.
//!
//! The caller of the tool call being served rides along in a task-local, so
//! an operation deep inside (an execute taking its run slot) is counted
//! against the same caller its tool call was admitted for.

use crate::auth::Principal;
use std::future::Future;
use std::net::IpAddr;

/// The owner of one budget.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Caller {
    /// An identified principal, by its scope.
    Principal(String),
    /// An anonymous MCP session, by its session id.
    Session(String),
    /// An anonymous request without a session, by client address.
    Address(IpAddr),
    /// An anonymous request without a session served without a socket
    /// (in process): nothing tells two of them apart.
    Unaddressed,
}

tokio::task_local! {
    static SERVING: Caller;
}

impl Caller {
    /// The caller of a request of `principal`, in `session` (verified), from
    /// `client` (see [`super::client_address`]).
    pub fn of(principal: &Principal, session: Option<&str>, client: Option<IpAddr>) -> Caller {
        if !is_anonymous(principal) {
            return Caller::Principal(principal.scope.clone());
        }
        match (session, client) {
            (Some(id), _) => Caller::Session(id.to_string()),
            (None, Some(address)) => Caller::Address(address),
            (None, None) => Caller::Unaddressed,
        }
    }

    /// Runs `work` with `self` as the caller being served.
    pub async fn serving<F: Future>(self, work: F) -> F::Output {
        SERVING.scope(self, work).await
    }

    /// The caller being served on this task, when a tool call set one;
    /// otherwise the one `principal` alone names.
    pub fn current_or(principal: &Principal) -> Caller {
        SERVING
            .try_with(Caller::clone)
            .unwrap_or_else(|_| Caller::of(principal, None, None))
    }
}

/// Whether `principal` is an anonymous caller (scope `anon:<tenant>:…`).
pub fn is_anonymous(principal: &Principal) -> bool {
    principal.scope.starts_with("anon:")
}
