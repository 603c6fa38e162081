//! Mistral's validator: `POST /v2/workflows/validate` with the YAML text.
//! It always answers 200; `valid: false` carries one error, of which only
//! the first line is stable, so that line is the one problem (located when
//! the error carries a YAML mark). Validation costs 0.1–0.2 s per task, so
//! the call gets the whole call deadline.

use super::client::{Body, Call};
use super::text::{first_line, yaml_location};
use super::{MistralEngine, program_text};
use crate::engines::{EngineError, RawProblem};
use reqwest::Method;
use serde_json::Value;

impl MistralEngine {
    pub(super) async fn validate(
        &self,
        tenant: &str,
        program: &Value,
    ) -> Result<Vec<RawProblem>, EngineError> {
        let text = program_text(program)?;
        let body = self
            .call_json(
                tenant,
                Call::safe("check", Method::POST, "/workflows/validate"),
                Body::Text(text),
                "validating",
            )
            .await?;
        match body.get("valid").and_then(Value::as_bool) {
            Some(true) => Ok(Vec::new()),
            Some(false) => {
                let error = body.get("error").and_then(Value::as_str).unwrap_or("");
                Ok(vec![problem(error, text)])
            }
            None => Err(EngineError::Failed(
                "validating: the answer has no 'valid' field".into(),
            )),
        }
    }
}

/// Mistral's error text as one problem: its first line, located by its YAML
/// mark when it has one.
pub(super) fn problem(error: &str, program: &str) -> RawProblem {
    let text = first_line(error);
    RawProblem {
        is_error: true,
        text: if text.is_empty() {
            "Mistral refused the workflow without saying why".into()
        } else {
            text
        },
        location: yaml_location(error, program),
        unknown_level: None,
    }
}
