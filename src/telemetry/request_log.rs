//! One JSON log line per HTTP request, and the request id.
//!
//! Every request gets an `x-request-id` (the caller's, when it is a short
//! printable token, else a new random one), returned in the answer's
//! headers. The middleware here makes the request's trace context current (so
//! every line logged while serving it carries the id) and, when the answer is
//! sent, writes one
//! line with what the inner layers learned: JSON-RPC method, tool, language,
//! tenant, principal kind, outcome or reject, HTTP status and duration.
//! Nothing secret is logged: no key, no session id, only the API key's
//! configured name.

use crate::auth::Principal;
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Request, Response, StatusCode};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tracing::Instrument;

use super::trace_context::TraceContext;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// A caller's request id longer than this, or with other than printable
/// ASCII, is replaced (it would otherwise be copied into every log line).
const MAX_REQUEST_ID: usize = 128;

/// What the layers under the log learned about a request, filled in as it
/// passes them. Shared through the request's extensions.
#[derive(Clone, Default)]
pub struct RequestFields(Arc<Mutex<Fields>>);

#[derive(Default)]
struct Fields {
    rpc_method: Option<String>,
    tool: Option<String>,
    language: Option<String>,
    tenant: Option<String>,
    principal_kind: Option<&'static str>,
    key_name: Option<String>,
    outcome: Option<String>,
    /// The run an execute started (its answer's `run_id`).
    run_id: Option<String>,
    reject: Option<&'static str>,
    /// A JSON-RPC error answered for a tool call: code and message.
    rpc_error: Option<(i32, String)>,
}

impl RequestFields {
    fn with(&self, f: impl FnOnce(&mut Fields)) {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// The JSON-RPC method (of a batch: the first).
    pub fn set_rpc_method(&self, method: &str) {
        self.with(|f| f.rpc_method = Some(method.to_string()));
    }

    /// `f` of the JSON-RPC method, uncopied.
    pub fn with_rpc_method<R>(&self, f: impl FnOnce(Option<&str>) -> R) -> R {
        f(self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .rpc_method
            .as_deref())
    }

    /// The caller: tenant and kind, with the API key's name (never the key).
    pub fn set_principal(&self, principal: &Principal) {
        self.with(|f| {
            f.tenant = Some(principal.tenant.clone());
            if let Some(rest) = principal.scope.strip_prefix("key:") {
                f.principal_kind = Some("api_key");
                // scope = key:<tenant>:<name>
                f.key_name = rest.split_once(':').map(|(_, name)| name.to_string());
            } else if principal.scope.starts_with("jwt:") {
                f.principal_kind = Some("access_token");
            } else {
                f.principal_kind = Some("anonymous");
            }
        });
    }

    /// The tool call's tool, language and outcome (run status, request-error
    /// kind, `carrier_error` or `ok`).
    pub fn set_tool(&self, tool: String, language: String, outcome: String) {
        self.with(|f| {
            f.tool = Some(tool);
            f.language = (!language.is_empty()).then_some(language);
            f.outcome = Some(outcome);
        });
    }

    /// The run the tool call started.
    pub fn set_run_id(&self, run_id: &str) {
        self.with(|f| f.run_id = Some(run_id.to_string()));
    }

    /// The JSON-RPC error a tool call was answered with (the message is the
    /// gateway's own, cut to 200 characters).
    pub fn set_carrier_error(&self, code: i32, message: &str) {
        let message: String = message.chars().take(200).collect();
        self.with(|f| f.rpc_error = Some((code, message)));
    }

    /// Why the front refused the request before any tool ran (unauthorized,
    /// session_not_found, too_large, parse_error, ...).
    pub fn set_reject(&self, reject: &'static str) {
        self.with(|f| f.reject = Some(reject));
    }
}

/// The request id and the log line around `router`: one middleware, so a
/// request pays for one layer rather than four.
pub fn layer(router: axum::Router) -> axum::Router {
    router.layer(axum::middleware::from_fn(log_request))
}

/// A new request id: 128 random bits as 32 hex digits, from the thread's
/// generator (a UUID from the system's random source per request cost a
/// system call on every request).
fn new_request_id() -> HeaderValue {
    // Hex digits are always a valid header value.
    HeaderValue::from_bytes(&crate::random_id::random_hex())
        .unwrap_or_else(|_| HeaderValue::from_static("0"))
}

fn usable_id(v: &HeaderValue) -> bool {
    let bytes = v.as_bytes();
    !bytes.is_empty() && bytes.len() <= MAX_REQUEST_ID && bytes.iter().all(|b| b.is_ascii_graphic())
}

async fn log_request(mut req: Request<Body>, next: axum::middleware::Next) -> Response<Body> {
    // The caller's id when it is short printable ASCII, else a new one; the
    // answer carries it back.
    let request_header = match req.headers().get(REQUEST_ID) {
        Some(v) if usable_id(v) => v.clone(),
        _ => {
            let id = new_request_id();
            req.headers_mut().insert(REQUEST_ID, id.clone());
            id
        }
    };
    let fields = RequestFields::default();
    req.extensions_mut().insert(fields.clone());
    let mut trace = TraceContext::from_headers(req.headers());
    trace.request_id = request_header.to_str().unwrap_or_default().to_string();
    // The request is named in the log by its trace context's scope; a span
    // is made only for the collector.
    let span = if super::otlp::exporting() {
        let span = tracing::info_span!(
            target: super::span_context::EXPORTED,
            "request",
            request_id = %trace.request_id,
            trace_id = tracing::field::Empty,
        );
        // The request span continues the caller's trace (and names the
        // trace when the caller sent none).
        if let Some(exported) = super::span_context::continue_trace(&span, req.headers()) {
            trace.trace_id = exported;
        }
        span.record("trace_id", trace.trace_id.as_str());
        span
    } else {
        tracing::Span::none()
    };
    let method = req.method().clone();
    let uri = req.uri().clone();
    let started = Instant::now();
    // The line is written inside the scope, so it names the request too.
    let served = async move {
        let mut response = next.run(req).await;
        if !response.headers().contains_key(REQUEST_ID) {
            response.headers_mut().insert(REQUEST_ID, request_header);
        }
        log_line(&method, uri.path(), &response, &fields, started);
        response
    };
    trace.scope(served.instrument(span)).await
}

/// The request's one log line.
fn log_line(
    method: &axum::http::Method,
    path: &str,
    response: &Response<Body>,
    fields: &RequestFields,
    started: Instant,
) {
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    let status = response.status();
    let f = std::mem::take(&mut *fields.0.lock().unwrap_or_else(PoisonError::into_inner));
    let probe = path != "/mcp";
    // Refusals by the MCP transport itself (406, 415, 403 on a foreign Host)
    // are named after their status.
    let reject = f.reject.map(str::to_string).or_else(|| {
        (status.is_client_error() && f.outcome.is_none()).then(|| {
            status
                .canonical_reason()
                .unwrap_or("client_error")
                .to_ascii_lowercase()
                .replace(' ', "_")
        })
    });
    macro_rules! line {
        ($level:expr) => {
            tracing::event!(
                $level,
                http_method = method.as_str(),
                path,
                status = status.as_u16(),
                rpc_method = f.rpc_method.as_deref(),
                tool = f.tool.as_deref(),
                language = f.language.as_deref(),
                run_id = f.run_id.as_deref(),
                tenant = f.tenant.as_deref(),
                principal_kind = f.principal_kind,
                key_name = f.key_name.as_deref(),
                outcome = f.outcome.as_deref(),
                reject = reject.as_deref(),
                rpc_error_code = f.rpc_error.as_ref().map(|e| e.0),
                rpc_error = f.rpc_error.as_ref().map(|e| e.1.as_str()),
                duration_ms,
                "request"
            )
        };
    }
    match level(status, probe) {
        Level::Debug => line!(tracing::Level::DEBUG),
        Level::Info => line!(tracing::Level::INFO),
        Level::Warn => line!(tracing::Level::WARN),
        Level::Error => line!(tracing::Level::ERROR),
    }
}

enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// Server faults are errors; refused credentials and hosts are warnings (an
/// attack or a misconfigured client); other refusals are the caller's
/// mistake and informational, like every served request. Health probes and
/// scrapes are debug while they succeed: they arrive every few seconds.
fn level(status: StatusCode, probe: bool) -> Level {
    if status.is_server_error() {
        if probe { Level::Warn } else { Level::Error }
    } else if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        Level::Warn
    } else if probe && status.is_success() {
        Level::Debug
    } else {
        Level::Info
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_request_ids_are_32_hex_digits_and_differ() {
        let (a, b) = (new_request_id(), new_request_id());
        assert_eq!(a.len(), 32);
        assert!(a.as_bytes().iter().all(u8::is_ascii_hexdigit));
        assert_ne!(a, b);
    }

    #[test]
    fn only_short_printable_request_ids_are_kept() {
        assert!(usable_id(&HeaderValue::from_static("abc-123_X.9")));
        assert!(!usable_id(&HeaderValue::from_static("")));
        assert!(!usable_id(&HeaderValue::from_static("has space")));
        let long = "a".repeat(MAX_REQUEST_ID + 1);
        assert!(!usable_id(&HeaderValue::from_str(&long).unwrap()));
    }

    #[test]
    fn levels_follow_who_is_at_fault() {
        assert!(matches!(level(StatusCode::OK, false), Level::Info));
        assert!(matches!(level(StatusCode::OK, true), Level::Debug));
        assert!(matches!(
            level(StatusCode::UNAUTHORIZED, false),
            Level::Warn
        ));
        assert!(matches!(level(StatusCode::NOT_FOUND, false), Level::Info));
        assert!(matches!(
            level(StatusCode::PAYLOAD_TOO_LARGE, false),
            Level::Info
        ));
        assert!(matches!(
            level(StatusCode::INTERNAL_SERVER_ERROR, false),
            Level::Error
        ));
        assert!(matches!(
            level(StatusCode::SERVICE_UNAVAILABLE, true),
            Level::Warn
        ));
    }

    #[test]
    fn principal_fields_name_the_key_not_the_session() {
        let fields = RequestFields::default();
        fields.set_principal(&Principal {
            scope: "anon:public:3f2a-session".into(),
            tenant: "public".into(),
            lasting: true,
            permissions: crate::auth::policy::Permissions::ALL,
            ceiling: Default::default(),
            approve_above: None,
        });
        let f = fields.0.lock().unwrap();
        assert_eq!(f.principal_kind, Some("anonymous"));
        assert_eq!(f.key_name, None);
        drop(f);
        fields.set_principal(&Principal {
            scope: "key:acme:ops".into(),
            tenant: "acme".into(),
            lasting: true,
            permissions: crate::auth::policy::Permissions::ALL,
            ceiling: Default::default(),
            approve_above: None,
        });
        let f = fields.0.lock().unwrap();
        assert_eq!(f.principal_kind, Some("api_key"));
        assert_eq!(f.key_name.as_deref(), Some("ops"));
    }
}
