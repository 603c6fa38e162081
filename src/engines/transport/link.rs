//! What every engine adapter holds to reach its engine, built one way from
//! the engine table and the adapter's [`LinkSpec`]: the HTTP client (the
//! engine's trusted roots and client certificate, the adapter's connection
//! pool), the base URL, the per-call timeout, the bound on calls in flight,
//! the breaker and retry budget, where call timings go, and the credentials
//! presented on every call. Its calls are `engines::http_client`'s.

use super::Resilience;
use crate::config::EngineConfig;
use crate::engines::credentials::{EngineCredentials, client_builder};
use crate::metrics::Metrics;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// What an adapter fixes of its link, whatever its engine table says.
#[derive(Debug, Clone, Copy)]
pub struct LinkSpec {
    /// The adapter's name in logs and in the caller's errors.
    pub name: &'static str,
    /// Concurrent calls when the engine table sets no `max_in_flight`.
    pub default_in_flight: usize,
    /// Pooled connections idle this long are dropped (`None`: the HTTP
    /// client's default).
    pub pool_idle: Option<Duration>,
    /// Idle connections kept per host (`None`: the HTTP client's default).
    pub max_idle_per_host: Option<usize>,
    /// Whether the engine's 401 speaks of the gateway's own credentials
    /// (a held token is then dropped), not of a tenant's.
    pub unauthorized_is_ours: bool,
}

impl LinkSpec {
    /// A link named `name`, bounded to `default_in_flight` calls unless
    /// its table says otherwise, with the HTTP client's own pool.
    pub const fn new(name: &'static str, default_in_flight: usize) -> Self {
        Self {
            name,
            default_in_flight,
            pool_idle: None,
            max_idle_per_host: None,
            unauthorized_is_ours: true,
        }
    }

    /// Dropping pooled connections idle for `idle`.
    pub const fn idle_for(self, idle: Duration) -> Self {
        Self {
            pool_idle: Some(idle),
            ..self
        }
    }

    /// Keeping at most `max` idle connections per host.
    pub const fn idle_per_host(self, max: usize) -> Self {
        Self {
            max_idle_per_host: Some(max),
            ..self
        }
    }

    /// For an engine whose 401 refuses a tenant's own key or login.
    pub const fn tenants_authenticate(self) -> Self {
        Self {
            unauthorized_is_ours: false,
            ..self
        }
    }
}

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
    /// What the adapter fixed of it.
    pub spec: LinkSpec,
}

impl Link {
    /// The link `config` describes for an adapter of `spec`, trusting
    /// `roots` besides the system CAs and presenting `credentials`.
    pub fn new(
        config: &EngineConfig,
        roots: Vec<reqwest::Certificate>,
        credentials: Arc<EngineCredentials>,
        spec: &LinkSpec,
    ) -> Self {
        let connect = Duration::from_millis(config.timeout_ms.min(2000));
        let mut client = client_builder(connect, roots, &credentials);
        if let Some(idle) = spec.pool_idle {
            client = client.pool_idle_timeout(idle);
        }
        if let Some(max) = spec.max_idle_per_host {
            client = client.pool_max_idle_per_host(max);
        }
        let slots = config.max_in_flight_or(spec.default_in_flight).max(1);
        Self {
            http: client.build().unwrap_or_default(),
            base: config.url.trim_end_matches('/').to_string(),
            call_timeout: Duration::from_millis(config.timeout_ms),
            in_flight: Arc::new(Semaphore::new(slots)),
            resilience: Arc::new(Resilience::new(config, spec.name)),
            metrics: None,
            credentials,
            spec: *spec,
        }
    }

    /// Records every call in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Where call timings go, if anywhere.
    pub fn metrics(&self) -> Option<&Metrics> {
        self.metrics.as_deref()
    }
}
