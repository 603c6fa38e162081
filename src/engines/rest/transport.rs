//! One engine call: under the `engine.max_in_flight` bound, with a timeout,
//! and repeated with backoff when it is safe to repeat.

use super::EngineClient;
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

/// Why a call got no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum CallError {
    #[error("{0}")]
    Transport(#[from] reqwest::Error),
    /// Every `engine.max_in_flight` slot stayed taken for the call's whole
    /// timeout: nothing was sent.
    #[error("no free engine call slot within {0:?} (engine.max_in_flight)")]
    Saturated(Duration),
}

impl CallError {
    /// Whether the request surely never reached the engine.
    pub(super) fn never_sent(&self) -> bool {
        match self {
            CallError::Transport(e) => e.is_connect(),
            CallError::Saturated(_) => true,
        }
    }
}

impl EngineClient {
    /// One call under the in-flight bound. A `safe` call is repeated with
    /// backoff after a transport failure or an answer saying "try again"
    /// (429, 502, 503, 504).
    pub(super) async fn call(&self, tenant: &str, c: Call<'_>) -> Result<Answer, CallError> {
        let mut delay = self.retry_backoff;
        let mut attempt = 0;
        loop {
            let result = self.attempt(tenant, &c).await;
            let again = c.safe
                && attempt < self.retries
                && match &result {
                    Err(_) => true,
                    Ok(a) => matches!(a.status.as_u16(), 429 | 502 | 503 | 504),
                };
            if !again {
                return result;
            }
            attempt += 1;
            tracing::warn!(path = %c.path, attempt, "engine call failed; retrying");
            tokio::time::sleep(delay).await;
            delay *= 2;
        }
    }

    async fn attempt(&self, tenant: &str, c: &Call<'_>) -> Result<Answer, CallError> {
        // Waiting for a slot is bounded by the call's timeout too, so a
        // saturated engine answers `internal` instead of hanging the caller.
        // The semaphore is never closed: acquiring fails only by timing out.
        let _permit = tokio::time::timeout(c.timeout, self.in_flight.acquire())
            .await
            .map_err(|_| CallError::Saturated(c.timeout))?
            .ok();
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
