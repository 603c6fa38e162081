//! What Mistral's calls carry and how its answers read: every call carries
//! the tenant as `X-Project-Id` (never a role, never an `X-Target-*`
//! header) and `Accept: */*` (`application/json` makes `POST /v2/workflows`
//! answer 406); the slots, the deadline and the repetition of safe calls
//! are `engines::http_client`'s.

use super::MistralEngine;
use crate::engines::EngineError;
pub(super) use crate::engines::http_client::{Answer, Call};
pub(super) use crate::engines::transport::CallError;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What a request sends.
#[derive(Clone, Copy)]
pub(super) enum Body<'a> {
    None,
    Json(&'a Value),
    /// YAML definitions travel as the text itself.
    Text(&'a str),
}

/// How Mistral's answers read.
pub(super) trait MistralAnswer {
    /// The first line of Mistral's error text (`faultstring`; the rest is
    /// a traceback or a schema dump), else the auth hook's reason (its
    /// `Server-Error-Message`; its body is HTML), else the status.
    fn error(&self) -> String;
}

impl MistralAnswer for Answer {
    fn error(&self) -> String {
        let body = self.json();
        let text = body
            .get("faultstring")
            .and_then(Value::as_str)
            .map(super::text::first_line)
            .filter(|t| !t.is_empty())
            .or_else(|| {
                self.header("Server-Error-Message")
                    .map(super::text::first_line)
            })
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
    /// One call with the tenant's project and `body`.
    pub(super) async fn call(
        &self,
        tenant: &str,
        call: Call<'_>,
        body: Body<'_>,
    ) -> Result<Answer, CallError> {
        let project = project(tenant);
        self.link
            .call(&call, |req| {
                let req = req.header("X-Project-Id", &project).header(ACCEPT, "*/*");
                match body {
                    Body::None => req,
                    Body::Json(v) => req.json(v),
                    Body::Text(t) => req.header(CONTENT_TYPE, "text/plain").body(t.to_string()),
                }
            })
            .await
    }

    /// A call made before anything runs whose answer must be a 2xx JSON
    /// body; anything else is a `Failed` naming `what` was being done.
    pub(super) async fn call_json(
        &self,
        tenant: &str,
        call: Call<'_>,
        body: Body<'_>,
        what: &str,
    ) -> Result<Value, EngineError> {
        let answer = self.call(tenant, call, body).await?;
        if !answer.status.is_success() {
            return Err(EngineError::Failed(format!("{what}: {}", answer.error())));
        }
        Ok(answer.json())
    }
}

#[cfg(test)]
mod tests {
    use super::{Answer, MistralAnswer, project};
    use reqwest::StatusCode;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn errors_keep_only_mistrals_first_line() {
        let answer = |status, text: &str, header: Option<&'static str>| {
            let mut headers = HeaderMap::new();
            if let Some(h) = header {
                headers.insert("Server-Error-Message", HeaderValue::from_static(h));
            }
            Answer::new(status, headers, text.into())
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
