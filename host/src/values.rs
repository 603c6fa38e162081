//! Closed sets a Server emits and the Client's conservative fallbacks for
//! values it does not recognise (Part II §1.3, Part III §7.2).
//!
//! Client policy branches on these structured fields only, never on
//! Server-authored prose (`message`, `hint`, descriptions), which stays
//! content to display.

use serde_json::Value;

/// The Pilotage extension identifier and `_meta` key (Part III §1.1, §2).
pub const EXTENSION_ID: &str = "io.github.jafarsa0/pilotage";

/// The major version of Pilotage this Host implements (Part II §11.1).
pub const MAJOR_VERSION: u64 = 1;

/// How the Host treats a Run outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutcomeClass {
    /// `ok: true`: the program completed.
    Success,
    /// Refused before execution: the program, input or context is invalid.
    ValidationError,
    /// Refused before execution: the catalog moved since validation; recoverable.
    CatalogDrift,
    /// Refused before execution: a promoted program's baseline no longer holds.
    PromotionDrift,
    /// Started and did not complete; side effects may have occurred. Also the
    /// fallback for every `ok: false` status this Host does not know
    /// (`reported` keeps what the Server said).
    Partial { reported: String },
    /// Started and failed; no more specific status applies.
    Error,
}

impl OutcomeClass {
    /// Classifies a run-level outcome. Reserved statuses keep their meaning;
    /// any other status with `ok: false` is treated as `partial` (Part II
    /// §1.3 and §5.7), including the possibility that side effects occurred.
    /// An engine-defined status with `ok: true` is a success: `ok` is the
    /// authoritative success flag.
    pub fn classify(ok: bool, status: &str) -> OutcomeClass {
        match status {
            "success" if ok => OutcomeClass::Success,
            "validation_error" => OutcomeClass::ValidationError,
            "catalog_drift" => OutcomeClass::CatalogDrift,
            "promotion_drift" => OutcomeClass::PromotionDrift,
            "partial" => OutcomeClass::Partial {
                reported: status.to_string(),
            },
            "error" => OutcomeClass::Error,
            _ if ok => OutcomeClass::Success,
            other => OutcomeClass::Partial {
                reported: other.to_string(),
            },
        }
    }

    /// The closed name the Host acts on.
    pub fn name(&self) -> &'static str {
        match self {
            OutcomeClass::Success => "success",
            OutcomeClass::ValidationError => "validation_error",
            OutcomeClass::CatalogDrift => "catalog_drift",
            OutcomeClass::PromotionDrift => "promotion_drift",
            OutcomeClass::Partial { .. } => "partial",
            OutcomeClass::Error => "error",
        }
    }

    /// Whether side effects may have happened (refusals guarantee none).
    pub fn may_have_side_effects(&self) -> bool {
        matches!(
            self,
            OutcomeClass::Success | OutcomeClass::Partial { .. } | OutcomeClass::Error
        )
    }
}

/// A parsed run-level outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub ok: bool,
    /// The status exactly as the Server sent it.
    pub status: String,
    pub error: Option<String>,
    pub class: OutcomeClass,
}

impl Outcome {
    /// Reads `{ok, status, error}`; `None` when `ok` or `status` is missing
    /// or of the wrong type (a malformed answer, not a Run result).
    pub fn parse(v: &Value) -> Option<Outcome> {
        let ok = v.get("ok")?.as_bool()?;
        let status = v.get("status")?.as_str()?.to_string();
        let error = v.get("error").and_then(Value::as_str).map(str::to_string);
        let class = OutcomeClass::classify(ok, &status);
        Some(Outcome {
            ok,
            status,
            error,
            class,
        })
    }
}

/// Request-error kinds (Part III §7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    NotFound,
    InvalidRequest,
    UnknownBaseline,
    IdempotencyConflict,
    BoundsExceeded,
    Unsupported,
    Internal,
}

impl ErrorKind {
    /// Parses a kind; an unrecognised kind is `internal` (Part III §7.2,
    /// §10.2 item 7).
    pub fn parse(kind: &str) -> ErrorKind {
        match kind {
            "not_found" => ErrorKind::NotFound,
            "invalid_request" => ErrorKind::InvalidRequest,
            "unknown_baseline" => ErrorKind::UnknownBaseline,
            "idempotency_conflict" => ErrorKind::IdempotencyConflict,
            "bounds_exceeded" => ErrorKind::BoundsExceeded,
            "unsupported" => ErrorKind::Unsupported,
            _ => ErrorKind::Internal,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::UnknownBaseline => "unknown_baseline",
            ErrorKind::IdempotencyConflict => "idempotency_conflict",
            ErrorKind::BoundsExceeded => "bounds_exceeded",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Internal => "internal",
        }
    }
}

/// A request error (`isError: true` with `structuredContent.error`).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestError {
    pub kind: ErrorKind,
    /// The kind exactly as the Server sent it (shown when it was unknown).
    pub reported: String,
    pub message: String,
}

impl RequestError {
    /// Reads a request-error result. A result flagged `isError` without a
    /// readable `error` object is still a request error: of kind `internal`,
    /// because the Host cannot tell what the Server meant.
    pub fn parse(structured: Option<&Value>) -> RequestError {
        let err = structured.and_then(|s| s.get("error"));
        let reported = err
            .and_then(|e| e.get("kind"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let message = err
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the server flagged an error without a readable error object")
            .to_string();
        RequestError {
            kind: ErrorKind::parse(&reported),
            reported,
            message,
        }
    }

    /// Whether the Server's kind was outside the closed set.
    pub fn kind_was_unknown(&self) -> bool {
        self.kind.name() != self.reported
    }
}

/// Diagnostic severity; anything but `warning` blocks execution, so an
/// unknown severity is handled like `error` (fail closed).
pub fn is_error_severity(diagnostic: &Value) -> bool {
    diagnostic.get("severity").and_then(Value::as_str) != Some("warning")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unrecognised_ok_false_status_is_partial() {
        let o = Outcome::parse(&json!({"ok": false, "status": "quarantined", "error": "x"}))
            .expect("outcome");
        assert_eq!(
            o.class,
            OutcomeClass::Partial {
                reported: "quarantined".into()
            }
        );
        assert!(o.class.may_have_side_effects());
        assert_eq!(o.status, "quarantined");
    }

    #[test]
    fn reserved_statuses_keep_their_meaning() {
        assert_eq!(
            OutcomeClass::classify(true, "success"),
            OutcomeClass::Success
        );
        assert_eq!(
            OutcomeClass::classify(false, "catalog_drift"),
            OutcomeClass::CatalogDrift
        );
        assert_eq!(
            OutcomeClass::classify(false, "validation_error"),
            OutcomeClass::ValidationError
        );
        assert_eq!(OutcomeClass::classify(false, "error"), OutcomeClass::Error);
        assert!(!OutcomeClass::CatalogDrift.may_have_side_effects());
        // An engine-defined success status: `ok` decides.
        assert_eq!(OutcomeClass::classify(true, "done"), OutcomeClass::Success);
    }

    #[test]
    fn a_malformed_outcome_is_not_a_value() {
        assert!(Outcome::parse(&json!({"status": "success"})).is_none());
        assert!(Outcome::parse(&json!({"ok": "yes", "status": "success"})).is_none());
    }

    #[test]
    fn an_unrecognised_request_error_kind_is_internal() {
        let e = RequestError::parse(Some(
            &json!({"error": {"kind": "rate_limited", "message": "slow down"}}),
        ));
        assert_eq!(e.kind, ErrorKind::Internal);
        assert_eq!(e.reported, "rate_limited");
        assert!(e.kind_was_unknown());
        let known = RequestError::parse(Some(
            &json!({"error": {"kind": "not_found", "message": "m"}}),
        ));
        assert_eq!(known.kind, ErrorKind::NotFound);
        assert!(!known.kind_was_unknown());
        let broken = RequestError::parse(None);
        assert_eq!(broken.kind, ErrorKind::Internal);
    }

    #[test]
    fn unknown_severity_blocks_like_an_error() {
        assert!(!is_error_severity(&json!({"severity": "warning"})));
        assert!(is_error_severity(&json!({"severity": "error"})));
        assert!(is_error_severity(&json!({"severity": "fatal"})));
    }
}
