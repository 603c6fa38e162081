//! One engine call: under one deadline for the whole operation, the
//! engine's breaker and the `engine.max_in_flight` bound, and repeated
//! with backoff when it is safe to repeat (`engines::transport`).

use super::EngineClient;
pub(super) use crate::engines::transport::CallError;
use crate::engines::transport::{self, Deadline, Reply};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// One HTTP answer, read whole.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) etag: Option<String>,
    pub(super) text: String,
    retry_after: Option<Duration>,
}

impl Answer {
    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

impl Reply for Answer {
    fn status(&self) -> StatusCode {
        self.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

/// One engine call.
pub(super) struct Call<'a> {
    /// The operation's name in spans and metrics (`catalog`, `check`, …).
    pub(super) operation: &'static str,
    pub(super) method: Method,
    pub(super) path: &'a str,
    pub(super) body: Option<&'a super::body::Rendered<'a>>,
    pub(super) headers: &'a [(reqwest::header::HeaderName, &'a str)],
    /// The whole call's deadline, retries included.
    pub(super) timeout: Duration,
    /// Safe to repeat (a read, or a check).
    pub(super) safe: bool,
}

impl EngineClient {
    /// One call under the in-flight bound and the engine's breaker. A
    /// `safe` call is repeated with backoff after a transport failure or an
    /// answer saying "try again" (429, 502, 503, 504), within its deadline
    /// and the engine's retry budget.
    pub(super) async fn call(&self, tenant: &str, c: Call<'_>) -> Result<Answer, CallError> {
        self.link
            .resilience
            .call(c.safe, c.timeout, c.path, |deadline| {
                self.attempt(tenant, &c, deadline)
            })
            .await
    }

    async fn attempt(
        &self,
        tenant: &str,
        c: &Call<'_>,
        deadline: Deadline,
    ) -> Result<Answer, CallError> {
        let _permit = transport::slot(&self.link.in_flight, &deadline, "engine").await?;
        let mut req = self
            .link
            .http
            .request(c.method.clone(), self.url(c.path))
            .header(&self.mapping.tenant_header, tenant)
            .timeout(deadline.remaining());
        for (name, value) in c.headers {
            req = req.header(name, *value);
        }
        if let Some(b) = c.body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(super::body::to_json(b));
        }
        let broken = |e| CallError::transport(e, &deadline, "engine");
        let resp = self.send(c.operation, req, broken).await?;
        let status = resp.status();
        let etag = resp
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let retry_after = transport::retry_after(resp.headers());
        let text = resp.text().await.map_err(broken)?;
        Ok(Answer {
            status,
            etag,
            text,
            retry_after,
        })
    }
}
