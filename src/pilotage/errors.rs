//! Request errors (Part III §7.2): a well-formed request that cannot be served.
//! They travel as `CallToolResult{isError: true, structuredContent: {error}}`,
//! with operation-mandated siblings (e.g. `catalog_version` on a failed get).

use serde_json::{Map, Value, json};

/// The closed set of request-error kinds (Part III §7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestErrorKind {
    NotFound,
    InvalidRequest,
    UnknownBaseline,
    IdempotencyConflict,
    BoundsExceeded,
    Unsupported,
    Internal,
}

impl RequestErrorKind {
    pub const ALL: [RequestErrorKind; 7] = [
        Self::NotFound,
        Self::InvalidRequest,
        Self::UnknownBaseline,
        Self::IdempotencyConflict,
        Self::BoundsExceeded,
        Self::Unsupported,
        Self::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::InvalidRequest => "invalid_request",
            Self::UnknownBaseline => "unknown_baseline",
            Self::IdempotencyConflict => "idempotency_conflict",
            Self::BoundsExceeded => "bounds_exceeded",
            Self::Unsupported => "unsupported",
            Self::Internal => "internal",
        }
    }
}

/// One request error with its message and any sibling fields.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestError {
    pub kind: RequestErrorKind,
    pub message: String,
    pub siblings: Map<String, Value>,
}

impl RequestError {
    pub fn new(kind: RequestErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            siblings: Map::new(),
        }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(RequestErrorKind::NotFound, message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(RequestErrorKind::InvalidRequest, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(RequestErrorKind::Internal, message)
    }
    pub fn bounds(message: impl Into<String>) -> Self {
        Self::new(RequestErrorKind::BoundsExceeded, message)
    }

    /// Adds a top-level sibling of `error`.
    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.siblings.insert(key.into(), value);
        self
    }

    /// The `structuredContent` of the error result.
    pub fn to_structured(&self) -> Value {
        let mut out = self.siblings.clone();
        out.insert(
            "error".into(),
            json!({"kind": self.kind.as_str(), "message": self.message}),
        );
        Value::Object(out)
    }
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}
