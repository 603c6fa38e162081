//! What a tool call knows of the HTTP request that carries it: what the
//! front resolved (the principal, the session, the lifted arguments, the
//! client's address and headers) and where the answer reports back (the
//! `Retry-After` wait, the request's log fields).
//!
//! The front's direct path lends these from its own locals; rmcp's path
//! reads them from the request's extensions, where the front put them
//! before handing the request over.

use super::arguments::{LiftedArguments, Received};
use super::retry_after::RetryAfter;
use super::session::Session;
use crate::auth::Principal;
use crate::execute::RunTerms;
use crate::telemetry::request_log::RequestFields;
use crate::telemetry::trace_context::TraceContext;
use axum::extract::ConnectInfo;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use serde_json::{Map, Value};
use std::net::SocketAddr;

/// One tool call's view of its request.
pub struct CallRequest<'a> {
    pub principal: &'a Principal,
    /// The verified MCP session, if the request named one.
    pub session: Option<&'a Session>,
    /// The call's arguments when the front lifted them out of the message
    /// and read them.
    pub arguments: Option<Map<String, Value>>,
    /// The text of the lifted arguments (a plain call's, still to be read).
    pub received: Option<Received>,
    /// The connected peer (the client, or the last proxy).
    pub peer: Option<SocketAddr>,
    pub headers: &'a HeaderMap,
    pub retry_after: Option<&'a RetryAfter>,
    pub fields: Option<&'a RequestFields>,
    /// The request's trace context, for a call served on another task.
    pub trace: Option<&'a TraceContext>,
    /// How an execute call's run is held (a task's deadline and stop).
    pub terms: RunTerms,
}

impl<'a> CallRequest<'a> {
    /// The view of a request handed to rmcp; `None` without a principal
    /// (the front attaches one to every request it hands over).
    pub fn from_parts(parts: &'a Parts) -> Option<Self> {
        let extensions = &parts.extensions;
        let (arguments, received) = extensions
            .get::<LiftedArguments>()
            .and_then(LiftedArguments::take)
            .unzip();
        let arguments = arguments.flatten();
        Some(Self {
            principal: extensions.get::<Principal>()?,
            session: extensions.get::<Session>(),
            arguments,
            received,
            peer: peer(parts),
            headers: &parts.headers,
            retry_after: extensions.get::<RetryAfter>(),
            fields: extensions.get::<RequestFields>(),
            trace: extensions.get::<TraceContext>(),
            terms: RunTerms::default(),
        })
    }
}

/// The connected peer of a request, as axum's server recorded it.
pub fn peer(parts: &Parts) -> Option<SocketAddr> {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0)
}
