//! Outcomes (Part II §5.7): the closed run-level and step-level status sets of
//! `workflow/v1`, each with its `ok` value. The closed-sets guide enumerates
//! exactly these.

use serde_json::{Value, json};

/// Run-level statuses this gateway emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Success,
    ValidationError,
    CatalogDrift,
    PromotionDrift,
    Partial,
    Error,
    /// Engine-defined: the run's deadline passed; side effects may have occurred.
    Timeout,
}

impl RunStatus {
    pub const ALL: [RunStatus; 7] = [
        Self::Success,
        Self::ValidationError,
        Self::CatalogDrift,
        Self::PromotionDrift,
        Self::Partial,
        Self::Error,
        Self::Timeout,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::ValidationError => "validation_error",
            Self::CatalogDrift => "catalog_drift",
            Self::PromotionDrift => "promotion_drift",
            Self::Partial => "partial",
            Self::Error => "error",
            Self::Timeout => "timeout",
        }
    }
}

/// Step-level statuses this gateway emits in traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    Success,
    Error,
    Timeout,
    /// A branch or loop entry whose body did not complete.
    Partial,
}

impl StepStatus {
    pub const ALL: [StepStatus; 4] = [Self::Success, Self::Error, Self::Timeout, Self::Partial];
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Timeout => "timeout",
            Self::Partial => "partial",
        }
    }
}

/// `{ok, status, error}`; `error` is null exactly when ok.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub ok: bool,
    pub status: &'static str,
    pub error: Option<String>,
}

impl Outcome {
    pub fn success() -> Self {
        Self {
            ok: true,
            status: RunStatus::Success.as_str(),
            error: None,
        }
    }
    pub fn run_failure(status: RunStatus, error: impl Into<String>) -> Self {
        Self {
            ok: false,
            status: status.as_str(),
            error: Some(error.into()),
        }
    }
    pub fn step(status: StepStatus, error: Option<String>) -> Self {
        Self {
            ok: status == StepStatus::Success,
            status: status.as_str(),
            error: if status == StepStatus::Success {
                None
            } else {
                Some(error.unwrap_or_else(|| status.as_str().to_string()))
            },
        }
    }
    pub fn to_json(&self) -> Value {
        json!({"ok": self.ok, "status": self.status, "error": self.error})
    }
}
