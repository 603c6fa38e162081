//! One engine call: under the `engine.max_in_flight` bound, with a timeout,
//! and repeated with backoff when it is safe to repeat.

use super::EngineClient;
pub(super) use crate::engines::call::CallError;
use crate::engines::call::{self, Retry};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// One HTTP answer, read whole.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) etag: Option<String>,
    pub(super) text: String,
}

impl Answer {
    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
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
    pub(super) timeout: Duration,
    /// Safe to repeat (a read, or a check).
    pub(super) safe: bool,
}

impl EngineClient {
    /// One call under the in-flight bound. A `safe` call is repeated with
    /// backoff after a transport failure or an answer saying "try again"
    /// (429, 502, 503, 504).
    pub(super) async fn call(&self, tenant: &str, c: Call<'_>) -> Result<Answer, CallError> {
        let retry = Retry {
            retries: self.retries,
            backoff: self.retry_backoff,
        };
        call::repeat_if_safe(
            c.safe,
            retry,
            "engine",
            c.path,
            |a: &Answer| a.status,
            || self.attempt(tenant, &c),
        )
        .await
    }

    async fn attempt(&self, tenant: &str, c: &Call<'_>) -> Result<Answer, CallError> {
        let _permit = call::slot(&self.in_flight, c.timeout, "engine").await?;
        let mut req = self
            .http
            .request(c.method.clone(), self.url(c.path))
            .header(&self.mapping.tenant_header, tenant)
            .timeout(c.timeout);
        for (name, value) in c.headers {
            req = req.header(name, *value);
        }
        if let Some(b) = c.body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(super::body::to_json(b));
        }
        let resp = self.send(c.operation, req).await?;
        let status = resp.status();
        let etag = resp
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = resp.text().await?;
        Ok(Answer { status, etag, text })
    }
}
