//! The HTTP front of `/mcp`, in front of rmcp's Streamable HTTP service:
//! - a foreign `Host` or `Origin` is refused first ([`origin`]);
//! - carrier faults (method, size, `Accept`, `Content-Type`, a body that is
//!   not a JSON-RPC message) are answered as JSON-RPC error objects by
//!   [`carrier`], before rmcp sees the request, and any non-JSON error rmcp
//!   still gives is rewritten the same way;
//! - the caller's principal is resolved from the bearer key or access token
//!   and the signed session id, and attached to the request for the tools;
//!   refused credentials get 401/403 with a `WWW-Authenticate` challenge;
//! - `initialize` answers carry a signed `Mcp-Session-Id`; later requests with
//!   an unknown, forged, expired or revoked id get HTTP 404; DELETE revokes.

use super::arguments::{self, LiftedArguments};
use super::call_request::{self, CallRequest};
use super::carrier::{self, INTERNAL_ERROR, INVALID_REQUEST, Message, SESSION_ERROR, rpc_error};
use super::direct;
use super::origin::{self, BrowserGuard, Screened};
use super::retry_after::RetryAfter;
use super::server::PilotageServer;
use super::session::{Session, SessionSigner};
use super::tasks;
use crate::auth::{AuthError, Principal, bearer};
use crate::gateway::Gateway;
use crate::telemetry::request_log::RequestFields;
use crate::telemetry::trace_context::TraceContext;
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde_json::Value;
use std::convert::Infallible;
use std::sync::Arc;
use tower::Service;

const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// rmcp's service as a boxed, cloneable tower service.
pub type McpService = tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;

/// State of the `/mcp` front, shared by every request (never cloned per
/// request: rmcp's service inside is not cheap to clone).
pub struct Front {
    pub gw: Arc<Gateway>,
    pub signer: SessionSigner,
    pub mcp: McpService,
    /// The handler, for the tool calls the front answers itself.
    pub server: PilotageServer,
    pub guard: BrowserGuard,
}

/// The `/mcp` handler for every method.
pub async fn handle(front: &Front, req: Request<Body>) -> Response<Body> {
    let cors = match front.guard.screen(req.headers(), req.uri()) {
        Screened::Pass => None,
        Screened::Cors(allowed) => Some(allowed),
        Screened::Refused { reject, response } => {
            if let Some(fields) = req.extensions().get::<RequestFields>() {
                fields.set_reject(reject);
            }
            return response;
        }
    };
    if let Some(allowed) = &cors
        && req.method() == Method::OPTIONS
    {
        return origin::preflight(allowed, req.headers());
    }
    let mut response = answer(front, req).await;
    if let Some(allowed) = cors {
        origin::allow(&mut response, allowed);
    }
    response
}

/// Everything after the browser checks.
async fn answer(front: &Front, req: Request<Body>) -> Response<Body> {
    let (mut parts, body) = req.into_parts();
    let fields = parts
        .extensions
        .get::<RequestFields>()
        .cloned()
        .unwrap_or_default();
    if parts.method != Method::POST && parts.method != Method::DELETE {
        fields.set_reject("method_not_allowed");
        return carrier::method_not_allowed();
    }
    let limit = front.gw.config.server.max_body_bytes;
    let mut bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(e) if carrier::over_limit(&e) => {
            fields.set_reject("too_large");
            return carrier::too_large(limit);
        }
        // The caller went away (or the connection failed) mid-body: not a
        // size problem. The 400 reaches whoever still listens.
        Err(_) => {
            fields.set_reject("body_incomplete");
            return carrier::body_incomplete();
        }
    };
    let mut is_initialize = false;
    // A tool call the front answers itself (`direct`), when rmcp would
    // hand it to the handler unchanged.
    let mut direct = None;
    let mut lifted_arguments = None;
    if parts.method == Method::POST {
        if !carrier::accepts_json(&parts.headers) {
            fields.set_reject("not_acceptable");
            return carrier::not_acceptable(carrier::readable_id(&bytes));
        }
        if !carrier::is_json_content(&parts.headers) {
            fields.set_reject("unsupported_media_type");
            return carrier::unsupported_media_type(carrier::readable_id(&bytes));
        }
        // A call's arguments are parsed once, here (a plain call's by its
        // handler, when it needs them), into the tree the tool uses; rmcp
        // and the checks below read the rest of the message, unless it is a
        // plain call, which needs nothing more read.
        if let Some(lifted) = arguments::lift(&bytes) {
            bytes = lifted.body;
            lifted_arguments = Some((lifted.arguments, lifted.received));
            direct = lifted
                .plain
                .and_then(|call| direct::plain_call(call, &parts.headers));
        }
        if bytes.len() > carrier::MAX_MESSAGE_BYTES {
            let (reject, response) = carrier::oversized_message(&bytes);
            fields.set_reject(reject);
            return response;
        }
    }
    let id = || carrier::readable_id(&bytes);
    // Revision 2025-11-25's tasks, which rmcp does not know, are the
    // front's; what that revision is told of them is added to rmcp's answers.
    // A plain call has no member but its name and arguments, so no task:
    // only other messages are looked at.
    let legacy = direct::legacy_revision(&parts.headers);
    let task_message = if legacy && direct.is_none() && parts.method == Method::POST {
        tasks::legacy::recognise(&bytes)
    } else {
        None
    };
    let mut amend_method = None;
    if task_message.is_some() {
        if let Some(method) = carrier::rpc_method(&bytes) {
            fields.set_rpc_method(&method);
        }
    } else if direct.is_some() {
        fields.set_rpc_method("tools/call");
    } else if parts.method == Method::POST {
        if let Some(method) = carrier::rpc_method(&bytes) {
            fields.set_rpc_method(&method);
            if legacy && matches!(method.as_str(), "initialize" | "tools/list") {
                amend_method = Some(method);
            }
        }
        match carrier::read_message(&bytes) {
            Message::Valid(message) => {
                is_initialize = matches!(
                    &*message,
                    ClientJsonRpcMessage::Request(r)
                        if matches!(r.request, ClientRequest::InitializeRequest(_))
                );
                direct = direct::direct_call(*message, &parts.headers);
            }
            Message::Fault(response) => {
                fields.set_reject("invalid_message");
                return response;
            }
        }
        carrier::set_transport_accept(&mut parts.headers);
    }
    let key = bearer(&parts.headers).map(str::to_string);
    let token = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // A new session on initialize; otherwise the one the token names.
    let (principal, session, new_session) = if is_initialize {
        let session_id = SessionSigner::new_id();
        match front
            .gw
            .auth
            .resolve(key.as_deref(), Some(&session_id))
            .await
        {
            Ok(p) => (p, None, Some(session_id)),
            Err(e) => return unauthorized(front, &fields, e, id()),
        }
    } else if let Some(token) = &token {
        match verify(front, &fields, key.as_deref(), token, id).await {
            Ok((p, s)) => (p, Some(s), None),
            Err(resp) => return resp,
        }
    } else {
        match front.gw.auth.resolve(key.as_deref(), None).await {
            Ok(p) => (p, None, None),
            Err(e) => return unauthorized(front, &fields, e, id()),
        }
    };
    fields.set_principal(&principal);
    if parts.method == Method::DELETE {
        return match session {
            Some(s) => {
                let ttl = std::time::Duration::from_secs(front.signer.remaining(&s));
                match front.gw.store.revoke_session(&s.id, ttl).await {
                    Ok(()) => Response::new(Body::empty()),
                    Err(e) => {
                        fields.set_reject("session_store_unavailable");
                        rpc_error(
                            StatusCode::SERVICE_UNAVAILABLE,
                            Value::Null,
                            INTERNAL_ERROR,
                            &format!("session store unavailable: {e}"),
                        )
                    }
                }
            }
            None => {
                fields.set_reject("invalid_request");
                rpc_error(
                    StatusCode::BAD_REQUEST,
                    Value::Null,
                    INVALID_REQUEST,
                    "DELETE needs the Mcp-Session-Id to end",
                )
            }
        };
    }
    if let Some(message) = task_message {
        return tasks::legacy::answer(
            &front.server,
            &principal,
            message,
            // A task's call is never plain: its arguments were read.
            lifted_arguments.and_then(|(arguments, _)| arguments),
        )
        .await;
    }
    let issued = new_session
        .as_ref()
        .map(|session_id| front.signer.issue(session_id, &principal.scope));
    let retry_after = RetryAfter::default();
    let response = match direct {
        Some(call) => {
            let (arguments, received) = lifted_arguments.unzip();
            let arguments = arguments.flatten();
            let request = CallRequest {
                principal: &principal,
                session: session.as_ref(),
                arguments,
                received,
                peer: call_request::peer(&parts),
                headers: &parts.headers,
                retry_after: Some(&retry_after),
                fields: Some(&fields),
                trace: None,
                terms: Default::default(),
            };
            let result = front.server.call(call.params, request).await;
            direct::answer(call.id, result)
        }
        None => {
            // What the handler reads back through rmcp (`CallRequest::from_parts`).
            parts.extensions.insert(principal);
            if let Some(s) = session {
                parts.extensions.insert(s);
            }
            if let Some((arguments, received)) = lifted_arguments {
                parts
                    .extensions
                    .insert(LiftedArguments::new(arguments, received));
            }
            parts.extensions.insert(retry_after.clone());
            // rmcp serves the call on a task of its own, outside the
            // request's trace scope.
            if let Some(trace) = TraceContext::current() {
                parts.extensions.insert(trace);
            }
            // rmcp runs stateless: the session header is ours, not its.
            parts.headers.remove(SESSION_HEADER);
            let mut mcp = front.mcp.clone();
            match mcp
                .call(Request::from_parts(parts, Body::from(bytes.clone())))
                .await
            {
                Ok(r) => r,
                Err(never) => match never {},
            }
        }
    };
    let mut response = carrier::normalize(response, id).await;
    if let Some(method) = amend_method {
        response = tasks_told(front, response, &method).await;
    }
    retry_after.apply(&mut response);
    if let Some(token) = issued
        && response.status().is_success()
        && let Ok(v) = HeaderValue::from_str(&token)
    {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// The principal of a request that carries a session token: the token must
/// verify for exactly that principal and not be revoked.
async fn verify(
    front: &Front,
    fields: &RequestFields,
    key: Option<&str>,
    token: &str,
    id: impl Fn() -> Value,
) -> Result<(Principal, Session), Response<Body>> {
    // Every refusal answers the same 404; the reason goes to logs and metrics only.
    let not_found = |reason: &'static str| {
        fields.set_reject("session_not_found");
        front
            .gw
            .metrics
            .session_rejects
            .with_label_values(&[reason])
            .inc();
        rpc_error(
            StatusCode::NOT_FOUND,
            id(),
            SESSION_ERROR,
            "Session not found",
        )
    };
    let session_id = SessionSigner::session_id(token).ok_or_else(|| not_found("malformed"))?;
    let principal = front
        .gw
        .auth
        .resolve(key, Some(session_id))
        .await
        .map_err(|e| unauthorized(front, fields, e, id()))?;
    let session = front
        .signer
        .verify(token, &principal.scope)
        .ok_or_else(|| not_found("invalid"))?;
    match front.gw.store.is_session_revoked(&session.id).await {
        Ok(false) => Ok((principal, session)),
        Ok(true) => Err(not_found("revoked")),
        Err(e) => {
            fields.set_reject("session_store_unavailable");
            Err(rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id(),
                INTERNAL_ERROR,
                &format!("session store unavailable: {e}"),
            ))
        }
    }
}

/// 401 (or 403 for missing scopes) with the `WWW-Authenticate` challenge,
/// which points at the protected-resource metadata when OAuth is on.
fn unauthorized(front: &Front, fields: &RequestFields, e: AuthError, id: Value) -> Response<Body> {
    fields.set_reject("unauthorized");
    super::protected_resource::refusal(e, front.gw.auth.oauth(), id)
}

/// A successful `initialize` or `tools/list` answer to a peer on an earlier
/// revision, with what revision 2025-11-25 tells it of tasks.
async fn tasks_told(front: &Front, response: Response<Body>, method: &str) -> Response<Body> {
    if !response.status().is_success() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, carrier::MAX_MESSAGE_BYTES * 16).await else {
        return carrier::rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            Value::Null,
            INTERNAL_ERROR,
            "the answer could not be read back",
        );
    };
    let amended = tasks::legacy::amend(&bytes, method, |tool| {
        front.server.task_deadline(tool).is_some()
    });
    Response::from_parts(parts, Body::from(amended.map_or(bytes, Into::into)))
}
