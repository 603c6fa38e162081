//! HTTP client for the engine's own REST API, read through the configured
//! mapping (`[engine.mapping]`), so nothing here knows one dialect's names.
//!
//! Every call is bounded by one deadline, the engine's breaker and
//! `engine.max_in_flight`; calls that are safe to repeat (catalog, check,
//! status and log reads) are retried with backoff within the deadline and
//! the engine's retry budget (`engines::transport`). Failures are typed so the caller can route them to the right
//! Pilotage channel: before execution starts they are `internal` request errors
//! (`NotStarted`, `Unreachable`, `Failed`); once a run may have started they are
//! outcomes (`RunBroken`).

pub mod answer;
pub mod body;
mod catalog;
mod check;
pub mod mapping;
mod poll;
mod reply;
mod run;
mod transport;

pub use super::{CatalogFetch, EngineError, RawProblem, RunReply, RunState};
use crate::config::EngineConfig;
use crate::engines::credentials::EngineCredentials;
use crate::engines::profile::EngineProfile;
use crate::engines::transport::Link;
use mapping::EngineMapping;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Concurrent calls of a REST engine whose table sets no `max_in_flight`.
pub const DEFAULT_IN_FLIGHT: usize = 64;

/// Client for one engine.
#[derive(Clone)]
pub struct EngineClient {
    link: Link,
    mapping: EngineMapping,
    /// The neutral part of `mapping`, as the catalog and traces read it.
    profile: EngineProfile,
}

impl EngineClient {
    pub fn new(config: &EngineConfig) -> Self {
        Self::with_roots(config, Vec::new())
    }

    /// A client that also trusts `roots` (a private CA) for an https engine.
    pub fn with_roots(config: &EngineConfig, roots: Vec<reqwest::Certificate>) -> Self {
        Self::connect(config, roots, EngineCredentials::none())
    }

    /// A client trusting `roots` that presents `credentials` on every call.
    pub fn connect(
        config: &EngineConfig,
        roots: Vec<reqwest::Certificate>,
        credentials: Arc<EngineCredentials>,
    ) -> Self {
        // Validated at start; a client built without that check reads an
        // unreadable mapping as the defaults.
        let mapping = mapping::read(config).unwrap_or_default();
        Self {
            link: Link::new(
                config,
                roots,
                credentials,
                "engine",
                DEFAULT_IN_FLIGHT,
                |client| client.pool_max_idle_per_host(64),
            ),
            profile: mapping.profile(),
            mapping,
        }
    }

    /// Records every engine call in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::Metrics>) -> Self {
        self.link.metrics = Some(metrics);
        self
    }

    /// Sends one engine request: the single place every call passes, which
    /// adds the engine's credentials and the caller's trace context, opens
    /// the engine-call span and times the call.
    /// `broken` reads an HTTP client failure as the call's error.
    async fn send(
        &self,
        operation: &'static str,
        req: reqwest::RequestBuilder,
        broken: impl FnOnce(reqwest::Error) -> transport::CallError,
    ) -> Result<reqwest::Response, transport::CallError> {
        let req = self.link.credentials.apply(req).await?;
        let resp = crate::telemetry::engine::send(operation, req, self.link.metrics())
            .await
            .map_err(broken)?;
        if resp.status() == reqwest::StatusCode::UNAUTHORIZED {
            self.link.credentials.refused();
        }
        Ok(resp)
    }

    pub fn mapping(&self) -> &EngineMapping {
        &self.mapping
    }

    /// What the catalog and the traces read of this engine.
    pub fn profile(&self) -> &EngineProfile {
        &self.profile
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.link.base, path)
    }
    /// Readiness: the engine answers its health path.
    pub async fn healthy(&self) -> bool {
        let limit = Duration::from_secs(2);
        let req = self
            .link
            .http
            .get(self.url(&self.mapping.health_path))
            .timeout(limit);
        let deadline = crate::engines::transport::Deadline::after(limit);
        self.send("health", req, |e| {
            crate::engines::transport::CallError::transport(e, &deadline, "engine")
        })
        .await
        .map(|r| r.status().is_success())
        .unwrap_or(false)
    }
}

/// JSON encoded inside a string, decoded; anything else as it is.
pub fn decode(value: Value) -> Value {
    match &value {
        Value::String(s) => serde_json::from_str(s).unwrap_or(value),
        _ => value,
    }
}

#[async_trait::async_trait]
impl super::Engine for EngineClient {
    fn profile(&self) -> &EngineProfile {
        EngineClient::profile(self)
    }

    async fn healthy(&self) -> bool {
        EngineClient::healthy(self).await
    }

    fn breaker(&self) -> crate::engines::transport::breaker::BreakerState {
        self.link.resilience.breaker_state()
    }

    async fn catalog(&self, tenant: &str, etag: Option<&str>) -> Result<CatalogFetch, EngineError> {
        EngineClient::catalog(self, tenant, etag).await
    }

    async fn check(
        &self,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        EngineClient::check(self, tenant, program, context).await
    }

    async fn run(
        &self,
        tenant: &str,
        program: &Value,
        input: &Value,
        context: Option<&Value>,
        dry_run: bool,
        deadline: Duration,
    ) -> Result<RunReply, EngineError> {
        EngineClient::run(self, tenant, program, input, context, dry_run, deadline).await
    }
}
