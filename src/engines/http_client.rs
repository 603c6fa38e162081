//! The one way an adapter's call reaches its engine: over the adapter's
//! [`Link`], under one deadline for the whole call, a slot of the in-flight
//! bound and the engine's breaker and retry budget (`transport`), with the
//! engine's credentials, timed and traced (`telemetry::engine`), and the
//! answer read whole. An adapter adds only what is its engine's: the
//! headers and body its engine wants (`dress`) and how its answers read.

use super::transport::{self, CallError, Deadline, Link, Reply};
use reqwest::header::{AsHeaderName, HeaderMap};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// How long a readiness probe may take.
const PROBE_LIMIT: Duration = Duration::from_secs(2);

/// One call to an engine, before the adapter dresses it.
pub struct Call<'a> {
    /// The operation's name in spans and metrics (`catalog`, `check`,
    /// `run`, `poll`, `cancel`, …).
    pub operation: &'static str,
    pub method: Method,
    /// After the engine's base URL (`/actions?limit=5`).
    pub path: &'a str,
    /// Safe to repeat (a read, a validation, a delete): repeated with
    /// backoff after a transport failure or an answer saying "try again".
    pub safe: bool,
    /// The whole call's budget, retries included; `None`: the engine's
    /// `timeout_ms`.
    pub timeout: Option<Duration>,
    /// Whether the engine's credentials go with it (a login is the
    /// tenant's own business).
    pub credentials: bool,
}

impl<'a> Call<'a> {
    /// A call that may be repeated.
    pub fn safe(operation: &'static str, method: Method, path: &'a str) -> Self {
        Self {
            operation,
            method,
            path,
            safe: true,
            timeout: None,
            credentials: true,
        }
    }

    /// A call sent once: repeating it could start or change something twice.
    pub fn once(operation: &'static str, method: Method, path: &'a str) -> Self {
        Self {
            safe: false,
            ..Self::safe(operation, method, path)
        }
    }

    /// A read.
    pub fn get(operation: &'static str, path: &'a str) -> Self {
        Self::safe(operation, Method::GET, path)
    }

    /// With a budget of its own instead of the engine's `timeout_ms`.
    pub fn within(self, timeout: Duration) -> Self {
        Self {
            timeout: Some(timeout),
            ..self
        }
    }

    /// Without the engine's credentials.
    pub fn without_credentials(self) -> Self {
        Self {
            credentials: false,
            ..self
        }
    }
}

/// One HTTP answer, read whole.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
    retry_after: Option<Duration>,
}

impl Answer {
    pub fn new(status: StatusCode, headers: HeaderMap, text: String) -> Self {
        // Read now: an HTTP date counts from the moment the answer came.
        let retry_after = transport::retry_after(&headers);
        Self {
            status,
            headers,
            text,
            retry_after,
        }
    }

    /// The body as JSON, `Null` when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// A header's value, when it is text.
    pub fn header(&self, name: impl AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
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

/// Whether the engine accepted a request the run does not wait on (a
/// cancel, a clean-up): `fine` reads the answer's status; `refused` and
/// `failed` say why not, in the adapter's own log line.
pub fn accepted<E>(
    answer: Result<Answer, E>,
    fine: impl FnOnce(StatusCode) -> bool,
    refused: impl FnOnce(&Answer),
    failed: impl FnOnce(&E),
) -> bool {
    match answer {
        Ok(a) if fine(a.status) => true,
        Ok(a) => {
            refused(&a);
            false
        }
        Err(e) => {
            failed(&e);
            false
        }
    }
}

impl Link {
    /// One call under the in-flight bound and the engine's breaker, all
    /// within the call's budget; a `safe` one is repeated with backoff
    /// within that budget and the retry budget. `dress` adds what the
    /// engine wants on every attempt (headers, body).
    pub async fn call(
        &self,
        call: &Call<'_>,
        dress: impl Fn(RequestBuilder) -> RequestBuilder,
    ) -> Result<Answer, CallError> {
        let timeout = call.timeout.unwrap_or(self.call_timeout);
        self.resilience
            .call(call.safe, timeout, call.path, |deadline| {
                self.attempt(call, &dress, deadline)
            })
            .await
    }

    async fn attempt(
        &self,
        call: &Call<'_>,
        dress: &impl Fn(RequestBuilder) -> RequestBuilder,
        deadline: Deadline,
    ) -> Result<Answer, CallError> {
        let _permit = transport::slot(&self.in_flight, &deadline, self.spec.name).await?;
        let req = self
            .http
            .request(call.method.clone(), format!("{}{}", self.base, call.path))
            .timeout(deadline.remaining());
        let req = dress(req);
        let req = if call.credentials {
            self.credentials.apply(req).await?
        } else {
            req
        };
        self.exchange(call.operation, req, &deadline).await
    }

    /// Sends a finished request as engine operation `operation` and reads
    /// its whole answer; a 401 drops a held token when the engine's 401
    /// speaks of the gateway's credentials.
    pub async fn exchange(
        &self,
        operation: &'static str,
        req: RequestBuilder,
        deadline: &Deadline,
    ) -> Result<Answer, CallError> {
        let broken = |e| CallError::transport(e, deadline, self.spec.name);
        let resp = crate::telemetry::engine::send(operation, req, self.metrics())
            .await
            .map_err(broken)?;
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED && self.spec.unauthorized_is_ours {
            self.credentials.refused();
        }
        let headers = resp.headers().clone();
        let text = resp.text().await.map_err(broken)?;
        Ok(Answer::new(status, headers, text))
    }

    /// Readiness: `url` answers 2xx, with the engine's credentials, within
    /// two seconds (as engine operation `health`).
    pub async fn probe(&self, url: &str) -> bool {
        let req = self.http.get(url).timeout(PROBE_LIMIT);
        self.credentials.probe(req, self.metrics()).await
    }

    /// Like [`Self::probe`], read the way a call's answer is (through
    /// [`Self::exchange`]): a failure is logged and a 401 can drop a held
    /// token.
    pub async fn probe_as_call(&self, url: &str) -> bool {
        let deadline = Deadline::after(PROBE_LIMIT);
        let req = self.http.get(url).timeout(PROBE_LIMIT);
        let Ok(req) = self.credentials.apply(req).await else {
            return false;
        };
        self.exchange("health", req, &deadline)
            .await
            .is_ok_and(|a| a.status.is_success())
    }
}
