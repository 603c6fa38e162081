//! The engine's validator: the request body from the mapping's template, what
//! each HTTP status means, and each problem's text, location and level.

use super::answer::{error_paths, error_text, level_meaning, status_meaning};
use super::body::{self, Fill};
use super::mapping::{CheckMeaning, LevelMeaning};
use super::transport::Call;
use super::{EngineClient, EngineError, RawProblem};
use crate::engines::json_path::{pick, value_text};
use reqwest::Method;
use serde_json::Value;

impl EngineClient {
    /// The engine's validator.
    pub async fn check(
        &self,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        let m = &self.mapping.check;
        let body = body::render(
            &m.body,
            &m.encodings,
            &Fill {
                program: Some(program),
                context,
                ..Fill::default()
            },
        );
        let answer = self
            .call(
                tenant,
                Call::safe("check", Method::POST, &m.path),
                Some(&body),
                &[],
            )
            .await?;
        let body = answer.json();
        if status_meaning(&m.status, answer.status) != Some(CheckMeaning::Answer) {
            return Err(EngineError::Failed(format!(
                "the engine's validator answered HTTP {} (engine.mapping.check.status): {}",
                answer.status.as_u16(),
                error_text(&body, &error_paths(&self.mapping, ""), answer.status)
            )));
        }
        let problems = pick(&body, &m.problems)
            .and_then(Value::as_array)
            .ok_or_else(|| {
                EngineError::Failed(format!(
                    "validator response has no '{}' array (engine.mapping.check.problems)",
                    m.problems
                ))
            })?;
        Ok(self.problems(problems))
    }

    pub(super) fn problems(&self, items: &[Value]) -> Vec<RawProblem> {
        let m = &self.mapping.check;
        items
            .iter()
            .map(|p| {
                let level = pick(p, &m.level).and_then(value_text);
                let meaning = level_meaning(&self.mapping, level.as_deref());
                if let Err(unknown) = &meaning {
                    tracing::warn!(level = %unknown, key = "engine.mapping.check.levels",
                        "engine problem level in no value table; counted as an error");
                }
                RawProblem {
                    is_error: meaning != Ok(LevelMeaning::Warning),
                    text: pick(p, &m.text).and_then(value_text).unwrap_or_default(),
                    location: pick(p, &m.location)
                        .and_then(value_text)
                        .filter(|s| !s.is_empty()),
                    unknown_level: meaning.err(),
                }
            })
            .collect()
    }
}
