//! Carrier faults of `/mcp` (Part III §7.1): every HTTP answer that is not a
//! tool result is a JSON-RPC error object with `content-type:
//! application/json`, the code §7.1 names, and the request `id` when one could
//! be read from the body (`null` otherwise).
//!
//! | HTTP | when                                              | code     |
//! |------|---------------------------------------------------|----------|
//! | 400  | the body is not JSON                              | `-32700` |
//! | 400  | JSON, but not a valid JSON-RPC message            | `-32600` |
//! | 400  | an unsupported `MCP-Protocol-Version` (rmcp)      | `-32600` |
//! | 400  | a missing or malformed `Host` (`origin`)          | `-32600` |
//! | 403  | a `Host` or `Origin` not allowed (`origin`)       | `-32600` |
//! | 405  | an HTTP method other than POST and DELETE         | `-32600` |
//! | 406  | an `Accept` that excludes every JSON type         | `-32600` |
//! | 413  | a body over `server.max_body_bytes`               | `-32600` |
//! | 413  | a message over 64 KiB without a call's arguments  | `-32600` |
//! | 415  | a `Content-Type` other than `application/json`    | `-32600` |
//!
//! Accept negotiation follows RFC 9110 §12.5.1: no `Accept`, `*/*`,
//! `application/*` or `application/json` (with or without
//! `text/event-stream`) all get the JSON answer, the only one this gateway
//! gives. Any answer of rmcp's transport that still is not JSON is rewritten
//! into the same shape ([`normalize`]).

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

/// JSON-RPC 2.0 codes used on the carrier.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP's code for a session or credential the server does not know.
pub const SESSION_ERROR: i64 = -32001;

/// The `Accept` rmcp's transport insists on; requests that passed our
/// negotiation are handed on with it, and get JSON (the transport is in JSON
/// response mode).
const TRANSPORT_ACCEPT: &str = "application/json, text/event-stream";

/// Largest rmcp error body read back when rewriting it as JSON-RPC.
const MAX_PLAIN_BODY: usize = 64 * 1024;

/// A JSON-RPC error object as the HTTP body.
pub fn rpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut r = Response::new(Body::from(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The request id of `body` when it is JSON with a valid JSON-RPC id (a
/// string or an integer that fits an `i64`, as MCP's ids are); `null` when
/// none can be read. Only the `id` member is built: the rest of the body is
/// skipped, so answering a fault costs no copy of a large message.
pub fn readable_id(body: &[u8]) -> Value {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let Ok(head) = serde_json::from_slice::<Head>(body) else {
        return Value::Null;
    };
    // A message is an object: a list's first element is no id.
    if !body.trim_ascii_start().starts_with(b"{") {
        return Value::Null;
    }
    match head.id.map(|raw| serde_json::from_str::<Value>(raw.get())) {
        Some(Ok(id @ Value::String(_))) => id,
        Some(Ok(Value::Number(n))) if n.is_i64() => Value::Number(n),
        _ => Value::Null,
    }
}

/// The largest message rmcp is handed to read, a `tools/call`'s arguments
/// object not counted (the front reads that itself, [`super::arguments`]).
/// rmcp's reading of a message costs over ten times its text, and no MCP
/// message but a call's arguments has a reason to be large.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// 413 for a message over [`MAX_MESSAGE_BYTES`] once a call's arguments
/// are set aside.
pub fn message_too_large(id: Value, bytes: usize) -> Response<Body> {
    rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        id,
        INVALID_REQUEST,
        &format!(
            "message too large: {bytes} bytes besides a tools/call's arguments; only the arguments object of a tools/call may be larger than {MAX_MESSAGE_BYTES} bytes"
        ),
    )
}

/// Whether the `Accept` header admits an `application/json` answer. A range
/// with `q=0` excludes; a range that cannot be parsed is ignored.
pub fn accepts_json(headers: &HeaderMap) -> bool {
    let values: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter(|v| !v.trim().is_empty())
        .collect();
    if values.is_empty() {
        return true;
    }
    let ranges = || values.iter().flat_map(|v| v.split(','));
    // What clients send: a plain range that admits JSON needs no parsing
    // (without parameters its weight is 1).
    if ranges().any(|range| {
        let range = range.trim();
        ["application/json", "application/*", "*/*"]
            .iter()
            .any(|plain| range.eq_ignore_ascii_case(plain))
    }) {
        return true;
    }
    ranges()
        .filter_map(|range| range.trim().parse::<mime::Mime>().ok())
        .any(|range| {
            let type_ok = range.type_() == mime::STAR
                || (range.type_() == mime::APPLICATION
                    && (range.subtype() == mime::STAR || range.subtype() == mime::JSON));
            let weight = range
                .get_param("q")
                .map(|q| q.as_str().parse::<f32>().unwrap_or(0.0))
                .unwrap_or(1.0);
            type_ok && weight > 0.0
        })
}

/// Hands a negotiated request on to the transport with the `Accept` it needs.
pub fn set_transport_accept(headers: &mut HeaderMap) {
    headers.insert(header::ACCEPT, HeaderValue::from_static(TRANSPORT_ACCEPT));
}

/// Whether `Content-Type` is `application/json` (parameters allowed).
pub fn is_json_content(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return false;
    };
    if value.as_bytes().eq_ignore_ascii_case(b"application/json") {
        return true;
    }
    value
        .to_str()
        .ok()
        .and_then(|v| v.parse::<mime::Mime>().ok())
        .is_some_and(|m| m.essence_str() == mime::APPLICATION_JSON.essence_str())
}

/// What a POST body is, read the way rmcp will read it.
pub enum Message {
    /// A JSON-RPC message rmcp accepts, as read.
    Valid(Box<ClientJsonRpcMessage>),
    /// Not a JSON-RPC message: the fault to answer.
    Fault(Response<Body>),
}

/// The `method` of a JSON-RPC message, for logs and metrics. Only that member
/// is kept: the rest of the body is skipped, not built.
pub fn rpc_method(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        method: Option<String>,
    }
    serde_json::from_slice::<Head>(body).ok()?.method
}

/// Reads a POST body as one JSON-RPC message: not JSON → `-32700` with `id:
/// null`; JSON that is no valid message (wrong member types, an invalid id,
/// a duplicate member, a batch) → `-32600` with the id when readable.
pub fn read_message(body: &[u8]) -> Message {
    match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
        Ok(message) => Message::Valid(Box::new(message)),
        Err(typed) => Message::Fault(match serde_json::from_slice::<Value>(body) {
            Err(e) => parse_error(&e),
            Ok(_) => rpc_error(
                StatusCode::BAD_REQUEST,
                readable_id(body),
                INVALID_REQUEST,
                &format!(
                    "Invalid Request: not a valid JSON-RPC 2.0 request, notification or response ({typed})"
                ),
            ),
        }),
    }
}

/// 400 `-32700` for a body that is not JSON.
pub fn parse_error(e: &serde_json::Error) -> Response<Body> {
    rpc_error(
        StatusCode::BAD_REQUEST,
        Value::Null,
        PARSE_ERROR,
        &format!("Parse error: {e}"),
    )
}

/// The fault of a message over [`MAX_MESSAGE_BYTES`], with its request-log
/// `reject`: a parse error when it is not JSON at all (checked without
/// building anything, as any other body that is not JSON), else 413.
pub fn oversized_message(body: &[u8]) -> (&'static str, Response<Body>) {
    match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        Err(e) => ("invalid_message", parse_error(&e)),
        Ok(_) => (
            "message_too_large",
            message_too_large(readable_id(body), body.len()),
        ),
    }
}

/// 405 for every HTTP method `/mcp` does not serve.
pub fn method_not_allowed() -> Response<Body> {
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        Value::Null,
        INVALID_REQUEST,
        "HTTP method not allowed: send JSON-RPC messages with POST (and DELETE to end a session)",
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    r
}

/// 406 for an `Accept` that excludes every JSON type.
pub fn not_acceptable(id: Value) -> Response<Body> {
    rpc_error(
        StatusCode::NOT_ACCEPTABLE,
        id,
        INVALID_REQUEST,
        "Not Acceptable: this server answers application/json only; accept application/json (or */*), or send no Accept header",
    )
}

/// 415 for a body that is not declared as JSON.
pub fn unsupported_media_type(id: Value) -> Response<Body> {
    rpc_error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        id,
        INVALID_REQUEST,
        "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json",
    )
}

/// 413 for a body over the transport limit.
pub fn too_large(limit: usize) -> Response<Body> {
    rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        Value::Null,
        INVALID_REQUEST,
        &format!("request body larger than {limit} bytes"),
    )
}

/// Whether reading the body failed at the size limit (rather than on a
/// connection that ended or failed before the body did).
pub fn over_limit(error: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// 400 for a body that ended before its declared length.
pub fn body_incomplete() -> Response<Body> {
    rpc_error(
        StatusCode::BAD_REQUEST,
        Value::Null,
        INVALID_REQUEST,
        "the request body ended before it was complete: send the whole JSON-RPC message",
    )
}

/// An error answer of rmcp's transport that is not JSON (e.g. its 400 for an
/// unsupported `MCP-Protocol-Version`) becomes a JSON-RPC error object with
/// the same status and its text as the message; every other answer passes.
pub async fn normalize(response: Response<Body>, id: impl FnOnce() -> Value) -> Response<Body> {
    let status = response.status();
    if status.is_success() {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime::Mime>().ok())
        .is_some_and(|m| m.essence_str() == mime::APPLICATION_JSON.essence_str());
    if is_json {
        return response;
    }
    // Boxed: reading the body makes a large future, which every request's
    // future would otherwise make room for.
    Box::pin(rewrite(response, id)).await
}

/// The JSON-RPC error object for a non-JSON error answer.
async fn rewrite(response: Response<Body>, id: impl FnOnce() -> Value) -> Response<Body> {
    let status = response.status();
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_PLAIN_BODY)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text
    };
    let code = if status.is_server_error() {
        INTERNAL_ERROR
    } else if status == StatusCode::NOT_FOUND || status == StatusCode::UNAUTHORIZED {
        SESSION_ERROR
    } else {
        INVALID_REQUEST
    };
    let mut out = rpc_error(status, id(), code, &message);
    for name in [header::ALLOW, header::WWW_AUTHENTICATE] {
        if let Some(v) = parts.headers.get(&name) {
            out.headers_mut().insert(name, v.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::ACCEPT, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn accept_negotiation_admits_every_range_that_covers_json() {
        for ok in [
            &[][..],
            &["*/*"],
            &["application/*"],
            &["application/json"],
            &["application/json, text/event-stream"],
            &["text/event-stream", "application/json;q=0.5"],
            &["text/html, */*;q=0.1"],
            &[""],
        ] {
            assert!(accepts_json(&accept(ok)), "{ok:?}");
        }
        for refused in [
            &["text/event-stream"][..],
            &["text/html"],
            &["application/xml"],
            &["application/json;q=0"],
            &["*/*;q=0, text/plain"],
        ] {
            assert!(!accepts_json(&accept(refused)), "{refused:?}");
        }
    }

    #[test]
    fn ids_are_read_only_when_valid() {
        assert_eq!(readable_id(br#"{"id": 7}"#), json!(7));
        assert_eq!(readable_id(br#"{"id": "a"}"#), json!("a"));
        assert_eq!(
            readable_id(br#" {"params": {"big": [1, 2, {"x": "y"}]}, "id": -3}"#),
            json!(-3)
        );
        for no in [
            &br#"{"id": 1.5}"#[..],
            br#"{"id": 18446744073709551616}"#,
            br#"{"id": null}"#,
            br#"{"id": {}}"#,
            b"not json",
            br#"[{"id": 1}]"#,
            br#"{"id": "a""#,
        ] {
            assert_eq!(
                readable_id(no),
                Value::Null,
                "{}",
                String::from_utf8_lossy(no)
            );
        }
    }
}
