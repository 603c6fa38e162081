//! What one `tools/call` says, for metrics and the log: the tool, language
//! and tenant every line logged during the call carries ([`ToolScope`]); its
//! answer's outcome (run status, request-error kind, carrier error or ok),
//! and every diagnostic it returns.

use crate::mcp::answer::Answer;
use crate::metrics::Metrics;
use rmcp::ErrorData as McpError;
use serde_json::Value;
use std::future::Future;
use std::time::Duration;

/// The call being served: what the log's `tools/call` entry names.
#[derive(Clone)]
pub struct ToolScope {
    pub tool: String,
    pub language: String,
    pub tenant: String,
}

tokio::task_local! {
    static CURRENT: ToolScope;
}

impl ToolScope {
    /// Runs `call` with this scope as the current one.
    pub async fn run<F: Future>(self, call: F) -> F::Output {
        CURRENT.scope(self, call).await
    }

    /// `f` of the call being served, if any.
    pub fn with_current<R>(f: impl FnOnce(&ToolScope) -> R) -> Option<R> {
        CURRENT.try_with(f).ok()
    }

    /// The call being served, if any.
    pub fn current() -> Option<ToolScope> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Runs `f` (on any thread) with this scope as the current one.
    pub fn sync_scope<R>(self, f: impl FnOnce() -> R) -> R {
        CURRENT.sync_scope(self, f)
    }
}

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
