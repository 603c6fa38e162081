//! The HTTP front of `/mcp`, in front of rmcp's Streamable HTTP service:
//! - a body that is not JSON gets a JSON-RPC `-32700` error object with
//!   `id: null` (Part III §7.1; rmcp alone would answer a plain-text 4xx), and
//!   a JSON body that is not a JSON-RPC message gets `-32600`;
//! - the caller's principal is resolved from the bearer key and the signed
//!   session id, and attached to the request for the tools;
//! - `initialize` answers carry a signed `Mcp-Session-Id`; later requests with
//!   an unknown, forged, expired or revoked id get HTTP 404; DELETE revokes.

use super::session::{Session, SessionSigner};
use crate::auth::{AuthError, Principal, bearer};
use crate::gateway::Gateway;
use crate::telemetry::request_log::RequestFields;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use tower::Service;

const SESSION_HEADER: &str = "mcp-session-id";

/// rmcp's service as a boxed, cloneable tower service.
pub type McpService = tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;

/// State of the `/mcp` front.
#[derive(Clone)]
pub struct Front {
    pub gw: Arc<Gateway>,
    pub signer: SessionSigner,
    pub mcp: McpService,
}

/// The `/mcp` handler for every method.
pub async fn handle(front: Front, req: Request<Body>) -> Response<Body> {
    let (mut parts, body) = req.into_parts();
    let fields = parts
        .extensions
        .get::<RequestFields>()
        .cloned()
        .unwrap_or_default();
    let limit = front.gw.config.server.max_body_bytes;
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => {
            fields.set_reject("too_large");
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                -32600,
                &format!("request body larger than {limit} bytes"),
            );
        }
    };
    let mut is_initialize = false;
    if parts.method == Method::POST {
        let message: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                fields.set_reject("parse_error");
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Value::Null,
                    -32700,
                    &format!("Parse error: {e}"),
                );
            }
        };
        if let Some(method) = rpc_method(&message) {
            fields.set_rpc_method(method);
        }
        if let Some(problem) = not_jsonrpc(&message) {
            fields.set_reject("invalid_request");
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            return rpc_error(StatusCode::BAD_REQUEST, id, -32600, problem);
        }
        is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    }
    let key = bearer(&parts.headers).map(str::to_string);
    let token = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // A new session on initialize; otherwise the one the token names.
    let (principal, session, new_session) = if is_initialize {
        let id = SessionSigner::new_id();
        match front.gw.auth.principal(key.as_deref(), Some(&id)) {
            Ok(p) => (p, None, Some(id)),
            Err(e) => return unauthorized(&fields, e),
        }
    } else if let Some(token) = &token {
        match verify(&front, &fields, key.as_deref(), token).await {
            Ok((p, s)) => (p, Some(s), None),
            Err(resp) => return resp,
        }
    } else {
        match front.gw.auth.principal(key.as_deref(), None) {
            Ok(p) => (p, None, None),
            Err(e) => return unauthorized(&fields, e),
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
                            -32603,
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
                    -32600,
                    "DELETE needs the Mcp-Session-Id to end",
                )
            }
        };
    }
    let issued = new_session
        .as_ref()
        .map(|id| front.signer.issue(id, &principal.scope));
    parts.extensions.insert(principal);
    // rmcp runs stateless: the session header is ours, not its.
    parts.headers.remove(SESSION_HEADER);
    let mut mcp = front.mcp.clone();
    let mut response = match mcp
        .call(Request::from_parts(parts, Body::from(bytes)))
        .await
    {
        Ok(r) => r,
        Err(never) => match never {},
    };
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
            Value::Null,
            -32001,
            "Session not found",
        )
    };
    let id = SessionSigner::session_id(token).ok_or_else(|| not_found("malformed"))?;
    let principal = front
        .gw
        .auth
        .principal(key, Some(id))
        .map_err(|e| unauthorized(fields, e))?;
    let session = front
        .signer
        .verify(token, &principal.scope)
        .ok_or_else(|| not_found("invalid"))?;
    match front.gw.store.is_session_revoked(&session.id).await {
        Ok(false) => Ok((principal, session)),
        Ok(true) => Err(not_found("revoked")),
        Err(e) => Err({
            fields.set_reject("session_store_unavailable");
            rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                -32603,
                &format!("session store unavailable: {e}"),
            )
        }),
    }
}

/// Why a JSON value is not a JSON-RPC 2.0 message (single or batch).
fn not_jsonrpc(message: &Value) -> Option<&'static str> {
    let one = |m: &Value| -> Option<&'static str> {
        let obj = m.as_object()?;
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some("Invalid Request: 'jsonrpc' must be \"2.0\"");
        }
        if !obj.contains_key("method") && !obj.contains_key("result") && !obj.contains_key("error")
        {
            return Some("Invalid Request: no 'method'");
        }
        None
    };
    match message {
        Value::Object(_) => one(message),
        _ => Some("Invalid Request: a JSON-RPC message is an object"),
    }
}

/// The method of a JSON-RPC message (of a batch: the first's).
fn rpc_method(message: &Value) -> Option<&str> {
    match message {
        Value::Array(items) => items.first().and_then(rpc_method),
        _ => message.get("method").and_then(Value::as_str),
    }
}

fn unauthorized(fields: &RequestFields, e: AuthError) -> Response<Body> {
    fields.set_reject("unauthorized");
    let mut r = rpc_error(
        StatusCode::UNAUTHORIZED,
        Value::Null,
        -32001,
        &e.to_string(),
    );
    r.headers_mut().insert(
        axum::http::header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer"),
    );
    r
}

/// A JSON-RPC error object as the HTTP body.
pub fn rpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut r = Response::new(Body::from(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}
