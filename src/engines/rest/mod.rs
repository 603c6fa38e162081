//! HTTP client for the engine's own REST API, read through the configured
//! mapping (`[engine.mapping]`), so nothing here knows one dialect's names.
//!
//! Every call is bounded by one deadline, the engine's breaker and
//! `engine.max_in_flight`; calls that are safe to repeat (catalog, check,
//! status and log reads) are retried with backoff within the deadline and
//! the engine's retry budget (`engines::http_client`). Failures are typed
//! so the caller can route them to the right Pilotage channel: before
//! execution starts they are `internal` request errors (`NotStarted`,
//! `Unreachable`, `Failed`); once a run may have started they are outcomes
//! (`RunBroken`). A run is `engines::async_run`'s, with the runner call of
//! `run` and, for an asynchronous runner, the steps of `poll`.

pub mod answer;
pub mod body;
mod catalog;
mod check;
pub mod mapping;
mod poll;
mod reply;
mod run;
mod stable;
mod transport;

pub use super::{CatalogFetch, EngineError, RawProblem, RunReply, RunState};
use crate::config::EngineConfig;
use crate::engines::adapter::{EngineAdapter, Parts, Plugin};
use crate::engines::transport::{Link, LinkSpec};
use mapping::EngineMapping;
use serde_json::Value;

/// Concurrent calls of a REST engine whose table sets no `max_in_flight`.
pub const DEFAULT_IN_FLIGHT: usize = 64;

/// Client for one engine.
pub type EngineClient = EngineAdapter<Rest>;

/// What is the REST adapter's own: its mapping.
#[derive(Clone)]
pub struct Rest {
    mapping: EngineMapping,
}

impl EngineClient {
    pub fn new(config: &EngineConfig) -> Self {
        Self::with_roots(config, Vec::new())
    }

    pub fn mapping(&self) -> &EngineMapping {
        &self.mapping
    }
}

#[async_trait::async_trait]
impl Plugin for Rest {
    const LINK: LinkSpec = LinkSpec::new("engine", DEFAULT_IN_FLIGHT).idle_per_host(64);

    fn parts(config: &EngineConfig, link: &Link) -> Parts<Self> {
        // Validated at start; a client built without that check reads an
        // unreadable mapping as the defaults.
        let mapping = mapping::read(config).unwrap_or_default();
        Parts {
            profile: mapping.profile(),
            health: format!("{}{}", link.base, mapping.health_path),
            plugin: Rest { mapping },
        }
    }

    /// The engine answers its health path; a failure is logged.
    async fn healthy(engine: &EngineClient) -> bool {
        engine.link.probe_as_call(&engine.health).await
    }

    async fn catalog(
        engine: &EngineClient,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        engine.catalog(tenant, etag).await
    }

    async fn check(
        engine: &EngineClient,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        engine.check(tenant, program, context).await
    }
}

/// JSON encoded inside a string, decoded; anything else as it is.
pub fn decode(value: Value) -> Value {
    match &value {
        Value::String(s) => serde_json::from_str(s).unwrap_or(value),
        _ => value,
    }
}
