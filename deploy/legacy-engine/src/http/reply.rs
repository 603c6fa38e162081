//! Building responses and reading headers, the same way everywhere.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// A JSON response with a status.
pub fn json(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

/// A header's value, trimmed; absent, unreadable or blank headers are `None`.
pub fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    let value = headers.get(name)?.to_str().ok()?.trim();
    (!value.is_empty()).then(|| value.to_owned())
}
