//! Engine adapters: how the gateway talks to a workflow engine. Every
//! adapter is an [`Engine`]; the validate and execute operations and the
//! catalog see an engine only through it. `rest` is the configurable REST
//! mapping (`[engine.mapping]`), synchronous and asynchronous runners alike;
//! `mistral` is OpenStack Mistral's own API; `n8n` is n8n's; [`registry`]
//! builds the adapter an engine table's `kind` names.
//!
//! What every adapter shares is written once: [`adapter`] (the shell
//! around an adapter's own part: construction, metrics, the `Engine`
//! implementation), [`async_run`] (submit, poll, cancel, clean up) with
//! [`pacing`], [`http_client`] (one call to the engine) and [`transport`]
//! (the link, deadlines, breaker, retries).

pub mod adapter;
pub mod async_run;
pub mod credentials;
pub mod http_client;
pub mod json_path;
pub mod mistral;
pub mod n8n;
pub mod pacing;
pub mod profile;
pub mod registry;
pub mod rest;
pub mod transport;

pub use async_run::RunOrder;
use profile::EngineProfile;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One validation problem as the engine phrased it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawProblem {
    pub is_error: bool,
    pub text: String,
    pub location: Option<String>,
    /// The engine's level when it is in no value table (counted as an error).
    pub unknown_level: Option<String>,
}

impl RawProblem {
    /// An error found by the gateway's own check of a program, at the
    /// program location `location`.
    pub fn error_at(text: String, location: String) -> RawProblem {
        RawProblem {
            is_error: true,
            text,
            location: Some(location),
            unknown_level: None,
        }
    }
}

/// Result of a conditional catalog fetch.
#[derive(Debug)]
pub enum CatalogFetch {
    NotModified,
    /// The listing changed only in what never reaches an entry (usage
    /// counters, timestamps): the catalog stands, revalidated by `etag`.
    Same {
        etag: Option<String>,
    },
    Fresh {
        etag: Option<String>,
        capabilities: Vec<Value>,
    },
}

/// The runner's terminal state, mapped from the dialect's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Completed,
    Failed,
    TimedOut,
    Rejected,
}

/// What the runner answered.
#[derive(Debug, Clone)]
pub struct RunReply {
    pub engine_run_id: Option<String>,
    pub state: RunState,
    pub result: Value,
    pub error: Option<String>,
    pub events: Vec<Value>,
    pub problems: Vec<RawProblem>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Nothing reached the engine (connection refused, DNS, ...).
    #[error("{0}")]
    Unreachable(String),
    /// The engine answered something the mapping cannot read, or an error status.
    #[error("{0}")]
    Failed(String),
    /// The request may have reached the engine and no answer came (it
    /// timed out, or the connection broke off). The message is the
    /// gateway's own words, fit for a caller.
    #[error("{0}")]
    NoAnswer(String),
    /// Nothing was sent, and the engine should not be called before
    /// `retry_after` (its circuit breaker is open).
    #[error("{message}")]
    Unavailable {
        message: String,
        retry_after: Duration,
    },
    /// The engine's run answer shows that nothing started.
    #[error("the engine started nothing: {0}")]
    NotStarted(String),
    /// A run request was sent and then failed; execution may have started.
    /// Carries whatever events the engine returned with its failure.
    #[error("engine failed during the run: {message}")]
    RunBroken { message: String, events: Vec<Value> },
}

impl EngineError {
    /// When the caller may try again, when the gateway knows.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            EngineError::Unavailable { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }
}

/// One engine the gateway fronts, as the operations use it. Failures are
/// typed so the caller can route them to the right Pilotage channel: before
/// execution starts they are `internal` request errors (`NotStarted`,
/// `Unreachable`, `Failed`); once a run may have started they are outcomes
/// (`RunBroken`).
#[async_trait::async_trait]
pub trait Engine: Send + Sync {
    /// How the catalog, events and effects of this engine read (an adapter
    /// that builds its own answers fixes its profile; the REST adapter's
    /// comes from its configured mapping).
    fn profile(&self) -> &EngineProfile;

    /// Readiness: the engine answers its health probe.
    async fn healthy(&self) -> bool;

    /// The engine's circuit breaker, as `/metrics` and `/readyz` show it
    /// (an adapter that calls through `transport::Resilience` reports its
    /// breaker's).
    fn breaker(&self) -> transport::breaker::BreakerState {
        transport::breaker::BreakerState::Closed
    }

    /// The tenant's capabilities, revalidated with `etag` when the engine
    /// supports it.
    async fn catalog(&self, tenant: &str, etag: Option<&str>) -> Result<CatalogFetch, EngineError>;

    /// The engine's validator: side-effect free.
    async fn check(
        &self,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError>;

    /// Runs `order`'s program to a terminal state within its deadline, or
    /// until its stop.
    async fn run(&self, tenant: &str, order: &RunOrder<'_>) -> Result<RunReply, EngineError>;
}

/// An engine shared by every request.
pub type SharedEngine = Arc<dyn Engine>;
