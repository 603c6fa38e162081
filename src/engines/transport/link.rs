//! What every engine adapter holds to reach its engine, built one way from
//! the engine table: the HTTP client (the engine's trusted roots and client
//! certificate), the base URL, the per-call timeout, the bound on calls in
//! flight, the breaker and retry budget, where call timings go, and the
//! credentials presented on every call.

use super::Resilience;
use crate::config::EngineConfig;
use crate::engines::credentials::{EngineCredentials, client_builder};
use crate::metrics::Metrics;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// One adapter's way to its engine (cheap to clone: the guards are shared).
#[derive(Clone)]
pub struct Link {
    pub http: reqwest::Client,
    /// The engine's URL, without a trailing `/`.
    pub base: String,
    /// A call's whole budget, retries included (`engine.timeout_ms`).
    pub call_timeout: Duration,
    /// `engine.max_in_flight` slots.
    pub in_flight: Arc<Semaphore>,
    /// The engine's breaker, retry budget and retry settings.
    pub resilience: Arc<Resilience>,
    /// Where engine call timings go (none in benchmarks and unit tests).
    pub metrics: Option<Arc<Metrics>>,
    /// What this engine, and only it, is sent to authenticate the gateway.
    pub credentials: Arc<EngineCredentials>,
}

impl Link {
    /// The link `config` describes, trusting `roots` besides the system
    /// CAs. `engine` names the adapter in logs; `in_flight` is its bound
    /// when the table sets none; `pool` sets the adapter's own connection
    /// pool on the client.
    pub fn new(
        config: &EngineConfig,
        roots: Vec<reqwest::Certificate>,
        credentials: Arc<EngineCredentials>,
        engine: &'static str,
        in_flight: usize,
        pool: impl FnOnce(reqwest::ClientBuilder) -> reqwest::ClientBuilder,
    ) -> Self {
        let connect = Duration::from_millis(config.timeout_ms.min(2000));
        let http = pool(client_builder(connect, roots, &credentials))
            .build()
            .unwrap_or_default();
        Self {
            http,
            base: config.url.trim_end_matches('/').to_string(),
            call_timeout: Duration::from_millis(config.timeout_ms),
            in_flight: Arc::new(Semaphore::new(config.max_in_flight_or(in_flight).max(1))),
            resilience: Arc::new(Resilience::new(config, engine)),
            metrics: None,
            credentials,
        }
    }

    /// Where call timings go, if anywhere.
    pub fn metrics(&self) -> Option<&Metrics> {
        self.metrics.as_deref()
    }
}
