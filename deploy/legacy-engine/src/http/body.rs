//! Reading a JSON request body: at most `BODY_LIMIT` bytes, well-formed JSON, and a
//! JSON object. Every failure is the engine's own 4xx, never a panic.

use axum::body::{Body, to_bytes};
use axum::http::StatusCode;
use serde_json::{Map, Value};

/// Largest accepted request body.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// Bodies up to this size are read to the end before being refused as too large, so
/// the client sees the 413 instead of a reset connection; larger ones are cut off.
const DRAIN_LIMIT: usize = 8 * BODY_LIMIT;

/// Why a body was refused.
#[derive(Debug)]
pub enum BodyError {
    TooLarge,
    Malformed(String),
    NotAnObject,
}

impl BodyError {
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    pub fn message(&self) -> String {
        match self {
            BodyError::TooLarge => format!("request body exceeds the limit of {BODY_LIMIT} bytes"),
            BodyError::Malformed(detail) => format!("malformed JSON: {detail}"),
            BodyError::NotAnObject => "request body must be a JSON object".to_owned(),
        }
    }
}

/// Reads the body as a JSON object.
pub async fn read_object(body: Body) -> Result<Map<String, Value>, BodyError> {
    let bytes = to_bytes(body, DRAIN_LIMIT)
        .await
        .map_err(|_| BodyError::TooLarge)?;
    if bytes.len() > BODY_LIMIT {
        return Err(BodyError::TooLarge);
    }
    // serde_json refuses nesting deeper than 128 levels, which bounds every later
    // recursive walk over the document.
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(BodyError::NotAnObject),
        Err(e) => Err(BodyError::Malformed(e.to_string())),
    }
}

/// Like `read_object`, but an empty body is an empty object (admin conveniences).
pub async fn read_object_or_empty(body: Body) -> Result<Map<String, Value>, BodyError> {
    let bytes = to_bytes(body, DRAIN_LIMIT)
        .await
        .map_err(|_| BodyError::TooLarge)?;
    if bytes.len() > BODY_LIMIT {
        return Err(BodyError::TooLarge);
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(BodyError::NotAnObject),
        Err(e) => Err(BodyError::Malformed(e.to_string())),
    }
}
