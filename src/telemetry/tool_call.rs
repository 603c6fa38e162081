//! What one `tools/call` answer says, for metrics and the request log: its
//! outcome (run status, request-error kind, carrier error or ok), and every
//! diagnostic it returns.

use crate::mcp::answer::Answer;
use crate::metrics::Metrics;
use rmcp::ErrorData as McpError;
use serde_json::Value;
use std::time::Duration;

/// The outcome label of an answer: the request-error kind of an `isError`
/// result, the run status of an execute, `carrier_error` for a JSON-RPC
/// error, else `ok`.
pub fn outcome(result: &Result<Answer, McpError>) -> String {
    let Ok(r) = result else {
        return "carrier_error".into();
    };
    let structured = r.structured();
    let field = |pointer: &str| {
        structured
            .and_then(|s| s.pointer(pointer))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if r.is_error() {
        return field("/error/kind").unwrap_or_else(|| "internal".into());
    }
    field("/outcome/status").unwrap_or_else(|| "ok".into())
}

/// Counts one answered tool call: its duration, the run or request error it
/// carries, and every diagnostic in it (a verdict from the cache counts as
/// much as a fresh one: the caller saw it).
pub fn record(
    metrics: &Metrics,
    execute: bool,
    tool: &str,
    language: &str,
    result: &Result<Answer, McpError>,
    outcome: &str,
    took: Duration,
) {
    metrics
        .tool_calls
        .with_label_values(&[tool, language, outcome])
        .observe(took.as_secs_f64());
    let Ok(r) = result else {
        return;
    };
    let Some(structured) = r.structured() else {
        return;
    };
    if r.is_error() {
        metrics.request_errors.with_label_values(&[outcome]).inc();
        return;
    }
    if execute && structured.get("outcome").is_some() {
        metrics.runs.with_label_values(&[outcome]).inc();
    }
    if let Some(diagnostics) = structured.get("diagnostics").and_then(Value::as_array) {
        for d in diagnostics {
            if let Some(code) = d.get("code").and_then(Value::as_str) {
                metrics.diagnostics.with_label_values(&[code]).inc();
            }
        }
    }
}
