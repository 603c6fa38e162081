//! W3C Trace Context (`traceparent`, `tracestate`): taken from the caller's
//! request, or started here when it sent none, and handed to every engine
//! call the request causes, so one trace id follows a request from the agent
//! through the gateway into the engine.
//!
//! Each engine call gets a `traceparent` with the caller's trace id and a new
//! span id of its own (the engine call is a child of the request); the
//! caller's `tracestate` travels unchanged. Headers are read and written by
//! OpenTelemetry's W3C propagator.
//!
//! The context also names the request in the log: every line logged while it
//! is current carries its request id and trace id (`log_format`), without a
//! tracing span per request.

use axum::http::HeaderMap;
use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The trace a request belongs to, and the request's id.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceContext {
    /// 32 lowercase hex digits.
    pub trace_id: String,
    /// The caller's span, or `None` when the trace starts here.
    pub parent: Option<SpanContext>,
    /// The request's `x-request-id` (empty until the request log names it).
    pub request_id: String,
}

const TRACEPARENT: axum::http::HeaderName = axum::http::HeaderName::from_static("traceparent");

tokio::task_local! {
    static CURRENT: TraceContext;
}

impl TraceContext {
    /// The caller's context, or a new trace when `traceparent` is absent or
    /// malformed (the standard says to restart the trace then, and to drop
    /// `tracestate` with it).
    pub fn from_headers(headers: &HeaderMap) -> TraceContext {
        // Most callers send no trace: no propagator context to build then.
        let caller = if headers.contains_key(TRACEPARENT) {
            let cx = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
            cx.span().span_context().clone()
        } else {
            SpanContext::empty_context()
        };
        if caller.is_valid() {
            TraceContext {
                trace_id: caller.trace_id().to_string(),
                parent: Some(caller),
                request_id: String::new(),
            }
        } else {
            TraceContext {
                // Written as `TraceId` writes itself: 32 lowercase hex digits.
                trace_id: crate::random_id::as_str(&crate::random_id::hex_digits(
                    rand::random::<u128>() | 1,
                ))
                .to_owned(),
                parent: None,
                request_id: String::new(),
            }
        }
    }

    /// `traceparent` (and the caller's `tracestate`) of a child span with a
    /// fresh span id.
    pub fn child_headers(&self) -> reqwest::header::HeaderMap {
        let mut headers = reqwest::header::HeaderMap::new();
        let Ok(trace_id) = TraceId::from_hex(&self.trace_id) else {
            return headers;
        };
        let (flags, state) = match &self.parent {
            Some(p) => (p.trace_flags(), p.trace_state().clone()),
            None => (TraceFlags::SAMPLED, TraceState::default()),
        };
        let span_id = SpanId::from_bytes((rand::random::<u64>() | 1).to_be_bytes());
        let child = SpanContext::new(trace_id, span_id, flags, true, state);
        let cx = Context::new().with_remote_span_context(child);
        TraceContextPropagator::new().inject_context(&cx, &mut HeaderInjector(&mut headers));
        // The propagator writes an empty `tracestate` when there is none.
        if headers.get("tracestate").is_some_and(|v| v.is_empty()) {
            headers.remove("tracestate");
        }
        headers
    }

    /// Runs `f` with this context as the current one (read by engine calls).
    pub async fn scope<F: std::future::Future>(self, f: F) -> F::Output {
        CURRENT.scope(self, f).await
    }

    /// Runs `f` (on any thread) with this context as the current one.
    pub fn sync_scope<R>(self, f: impl FnOnce() -> R) -> R {
        CURRENT.sync_scope(self, f)
    }

    /// The context of the request being served, if any.
    pub fn current() -> Option<TraceContext> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// `f` of the context of the request being served, if any, uncopied.
    pub fn with_current<R>(f: impl FnOnce(&TraceContext) -> R) -> Option<R> {
        CURRENT.try_with(f).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(traceparent: &str, tracestate: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("traceparent", traceparent.parse().unwrap());
        if let Some(s) = tracestate {
            h.insert("tracestate", s.parse().unwrap());
        }
        h
    }

    #[test]
    fn a_valid_traceparent_is_continued_with_a_new_span_id() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let ctx = TraceContext::from_headers(&headers(tp, Some("vendor=x")));
        assert_eq!(ctx.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        let child = ctx.child_headers();
        let traceparent = child["traceparent"].to_str().unwrap();
        assert!(traceparent.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
        assert!(traceparent.ends_with("-01"));
        assert_ne!(&traceparent[36..52], "00f067aa0ba902b7");
        assert_eq!(child["tracestate"], "vendor=x");
    }

    #[test]
    fn a_malformed_traceparent_starts_a_new_trace_and_drops_tracestate() {
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "garbage",
        ] {
            let ctx = TraceContext::from_headers(&headers(bad, Some("vendor=x")));
            assert_eq!(ctx.parent, None, "{bad}");
            assert_eq!(ctx.trace_id.len(), 32);
            let child = ctx.child_headers();
            assert!(child.get("tracestate").is_none(), "{bad}");
            assert!(
                child["traceparent"]
                    .to_str()
                    .unwrap()
                    .contains(&ctx.trace_id)
            );
        }
    }
}
