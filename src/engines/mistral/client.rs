//! The transport to Mistral's REST API: every call carries the tenant as
//! `X-Project-Id` (never a role, never an `X-Target-*` header) and
//! `Accept: */*` (`application/json` makes `POST /v2/workflows` answer 406),
//! waits for one of `max_in_flight` slots, has a deadline, and is repeated
//! with backoff only when it is a safe read.

use super::MistralEngine;
use crate::engines::EngineError;
pub(super) use crate::engines::transport::CallError;
use crate::engines::transport::{self, Deadline, Reply};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// What a request sends.
pub(super) enum Body<'a> {
    None,
    Json(&'a Value),
    /// YAML definitions travel as the text itself.
    Text(&'a str),
}

/// One call to Mistral.
pub(super) struct Request<'a> {
    /// The operation's name in spans and metrics.
    pub(super) operation: &'static str,
    pub(super) method: Method,
    /// After the base URL (`/actions?limit=5`).
    pub(super) path: &'a str,
    pub(super) body: Body<'a>,
    pub(super) timeout: Duration,
    /// Safe to repeat (a read, or a validation).
    pub(super) safe: bool,
}

/// One HTTP answer, read whole.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) text: String,
    /// The auth hook's refusal reason (its body is HTML).
    pub(super) server_error: Option<String>,
    pub(super) retry_after: Option<Duration>,
}

impl Reply for Answer {
    fn status(&self) -> StatusCode {
        self.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl Answer {
    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// The first line of Mistral's error text (`faultstring`; the rest is a
    /// traceback or a schema dump), else the auth hook's reason, else the
    /// status.
    pub(super) fn error(&self) -> String {
        let body = self.json();
        let text = body
            .get("faultstring")
            .and_then(Value::as_str)
            .map(super::text::first_line)
            .filter(|t| !t.is_empty())
            .or_else(|| self.server_error.clone())
            .unwrap_or_else(|| format!("HTTP {}", self.status));
        format!("Mistral answered HTTP {}: {text}", self.status.as_u16())
    }
}

/// The Mistral project of a tenant. The trusted-header plug-in accepts 1 to
/// 80 letters, digits and `. _ : @ -`, starting with a letter or digit; a
/// tenant outside that alphabet (or one that starts like a mapped name)
/// becomes `x-` and the hex SHA-256 of its name, so the mapping stays one
/// to one and deterministic across instances.
pub fn project(tenant: &str) -> String {
    let fits = (1..=80).contains(&tenant.len())
        && tenant
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && tenant
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_:@".contains(c))
        && !tenant.starts_with("x-");
    if fits {
        tenant.to_string()
    } else {
        format!("x-{}", hex::encode(Sha256::digest(tenant.as_bytes())))
    }
}

impl MistralEngine {
    /// One call under the in-flight bound and the engine's breaker, all
    /// within `r.timeout`; a `safe` one is repeated with backoff after a
    /// transport failure or an answer saying "try again", within the
    /// deadline and the retry budget.
    pub(super) async fn call(&self, tenant: &str, r: Request<'_>) -> Result<Answer, CallError> {
        self.link
            .resilience
            .call(r.safe, r.timeout, r.path, |deadline| {
                self.attempt(tenant, &r, deadline)
            })
            .await
    }

    /// A call made before anything runs whose answer must be a 2xx JSON
    /// body; anything else is a `Failed` naming `what` was being done.
    pub(super) async fn call_json(
        &self,
        tenant: &str,
        r: Request<'_>,
        what: &str,
    ) -> Result<Value, EngineError> {
        let answer = self.call(tenant, r).await.map_err(EngineError::from)?;
        if !answer.status.is_success() {
            return Err(EngineError::Failed(format!("{what}: {}", answer.error())));
        }
        Ok(answer.json())
    }

    async fn attempt(
        &self,
        tenant: &str,
        r: &Request<'_>,
        deadline: Deadline,
    ) -> Result<Answer, CallError> {
        let _permit = transport::slot(&self.link.in_flight, &deadline, "Mistral").await?;
        let mut req = self
            .link
            .http
            .request(r.method.clone(), format!("{}{}", self.link.base, r.path))
            .header("X-Project-Id", project(tenant))
            .header(reqwest::header::ACCEPT, "*/*")
            .timeout(deadline.remaining());
        req = match r.body {
            Body::None => req,
            Body::Json(v) => req.json(v),
            Body::Text(t) => req
                .header(reqwest::header::CONTENT_TYPE, "text/plain")
                .body(t.to_string()),
        };
        let req = self.link.credentials.apply(req).await?;
        let broken = |e| CallError::transport(e, &deadline, "Mistral");
        let resp = crate::telemetry::engine::send(r.operation, req, self.link.metrics())
            .await
            .map_err(broken)?;
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED {
            self.link.credentials.refused();
        }
        let server_error = resp
            .headers()
            .get("Server-Error-Message")
            .and_then(|v| v.to_str().ok())
            .map(super::text::first_line);
        let retry_after = transport::retry_after(resp.headers());
        let text = resp.text().await.map_err(broken)?;
        Ok(Answer {
            status,
            text,
            server_error,
            retry_after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Answer, project};
    use reqwest::StatusCode;

    #[test]
    fn errors_keep_only_mistrals_first_line() {
        let answer = |status, text: &str, header: Option<&str>| Answer {
            status,
            text: text.into(),
            server_error: header.map(str::to_string),
            retry_after: None,
        };
        let dump = r#"{"faultcode": "Client", "faultstring": "Invalid DSL: 'a' is not of type 'array'\n\nFailed validating 'type' in schema:\n {...}", "debuginfo": null}"#;
        assert_eq!(
            answer(StatusCode::BAD_REQUEST, dump, None).error(),
            "Mistral answered HTTP 400: Invalid DSL: 'a' is not of type 'array'"
        );
        assert_eq!(
            answer(
                StatusCode::UNAUTHORIZED,
                "<html>401</html>",
                Some("Failed to validate access token: the X-Project-Id header is required")
            )
            .error(),
            "Mistral answered HTTP 401: Failed to validate access token: the X-Project-Id header is required"
        );
        assert_eq!(
            answer(StatusCode::INTERNAL_SERVER_ERROR, "", None).error(),
            "Mistral answered HTTP 500: HTTP 500 Internal Server Error"
        );
    }

    #[test]
    fn tenants_in_the_plug_ins_alphabet_pass_unchanged() {
        for t in ["acme", "a.b_c:d@e-f", "T1", &"a".repeat(80)] {
            assert_eq!(project(t), t);
        }
    }

    #[test]
    fn other_tenants_are_hashed_one_to_one() {
        let long = "a".repeat(81);
        let mapped: Vec<String> = ["", "with space", "-dash", "é", &long, "x-abc"]
            .iter()
            .map(|t| project(t))
            .collect();
        for m in &mapped {
            assert!(m.starts_with("x-") && m.len() == 66, "{m}");
            assert!(m.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        }
        let unique: std::collections::BTreeSet<_> = mapped.iter().collect();
        assert_eq!(unique.len(), mapped.len());
        assert_eq!(project("with space"), project("with space"));
    }
}
