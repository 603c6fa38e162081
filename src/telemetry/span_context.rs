//! The bridge to exported spans (when `[telemetry] otlp_traces_endpoint` is
//! set): the request span becomes a child of the caller's `traceparent`, and
//! an engine call carries its own exported span as the engine's parent, so
//! the collector shows agent → gateway → engine as one trace. Without export
//! both are no-ops and [`super::trace_context`] carries the context alone.

use axum::http::HeaderMap;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The target of spans made only for the collector (the request and the tool
/// call, which the log names from their task scopes instead): made only
/// while spans are exported, and left out of log lines.
pub const EXPORTED: &str = "pilotage_gateway::exported";

/// Makes `span` a child of the caller's trace context; the trace id of the
/// exported span, or `None` when spans are not exported.
pub fn continue_trace(span: &tracing::Span, headers: &HeaderMap) -> Option<String> {
    let parent = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
    let own = span.context();
    let ctx = own.span().span_context().clone();
    ctx.is_valid().then(|| ctx.trace_id().to_string())
}

/// `traceparent`/`tracestate` naming `span` as the parent, when it is exported.
pub fn inject(span: &tracing::Span) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    let cx = span.context();
    if cx.span().span_context().is_valid() {
        TraceContextPropagator::new().inject_context(&cx, &mut HeaderInjector(&mut headers));
    }
    headers
}
