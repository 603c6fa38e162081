//! What happens around every engine request: one `engine` span, the call's
//! timing in `pilotage_engine_call_duration_seconds`, and (when tracing is on)
//! the W3C trace context of the tool call that caused it.

use super::trace_context::TraceContext;
use crate::metrics::Metrics;
use std::time::Instant;
use tracing::Instrument;

/// Sends `req` as engine operation `operation`.
pub async fn send(
    operation: &'static str,
    req: reqwest::RequestBuilder,
    metrics: Option<&Metrics>,
) -> Result<reqwest::Response, reqwest::Error> {
    let span = tracing::info_span!("engine", operation, status = tracing::field::Empty);
    let exported = super::span_context::inject(&span);
    let req = match TraceContext::current() {
        _ if !exported.is_empty() => req.headers(exported),
        Some(ctx) => req.headers(ctx.child_headers()),
        None => req,
    };
    let started = Instant::now();
    let result = req.send().instrument(span.clone()).await;
    let status = status_label(&result);
    span.record("status", status.as_str());
    if let Some(m) = metrics {
        m.engine_call(operation, &status, started.elapsed());
    }
    result
}

/// The HTTP status code, or why there is none.
fn status_label(result: &Result<reqwest::Response, reqwest::Error>) -> String {
    match result {
        Ok(r) => r.status().as_u16().to_string(),
        Err(e) if e.is_connect() => "unreachable".into(),
        Err(e) if e.is_timeout() => "timeout".into(),
        Err(_) => "error".into(),
    }
}
