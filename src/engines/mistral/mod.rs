//! The OpenStack Mistral adapter (`kind = "mistral"`): Mistral's own REST
//! API (`url = "http://HOST:PORT/v2"`) behind the [`Engine`] trait, for the
//! `mistral/v2` language. Its settings are `[engines.NAME.mistral]`
//! ([`MistralSettings`]); docs/mistral.md has every Mistral fact it relies
//! on and, under "The engine adapter", what it does with them.
//!
//! - `client`: the transport (tenant as `X-Project-Id`, bounded, deadlines).
//! - `actions`, `workflows`, `input_spec`, `risk`: the catalog.
//! - `check`: the validator. `rename`, `run`, `events`: execution.

mod actions;
mod check;
mod client;
mod events;
pub mod input_spec;
pub mod rename;
pub mod risk;
mod run;
pub mod settings;
mod text;
pub mod workflows;

pub use client::project;
pub use settings::MistralSettings;

use super::profile::{CatalogFields, EffectRisk, EngineProfile};
use super::transport::Link;
use super::{CatalogFetch, Engine, EngineError, RawProblem, RunReply};
use crate::config::EngineConfig;
use crate::engines::credentials::EngineCredentials;
use crate::metrics::Metrics;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Pooled connections idle this long are dropped: Mistral's server closes
/// them after 10 s without answering a request sent on them.
const POOL_IDLE: Duration = Duration::from_secs(5);

/// The adapter of one Mistral engine.
pub struct MistralEngine {
    /// Its base is the v2 API's (`http://HOST:PORT/v2`); with Mistral's
    /// `keycloak-oidc` auth, its credentials are an OAuth token.
    link: Link,
    /// The API root (`GET /` answers without auth): the health probe.
    root: String,
    settings: MistralSettings,
    profile: EngineProfile,
    retries: u32,
    retry_backoff: Duration,
}

impl MistralEngine {
    /// The adapter of `config`, trusting `roots` besides the system CAs.
    pub fn new(config: &EngineConfig, roots: Vec<reqwest::Certificate>) -> Self {
        Self::connect(config, roots, EngineCredentials::none())
    }

    /// Like [`Self::new`], presenting `credentials` on every call.
    pub fn connect(
        config: &EngineConfig,
        roots: Vec<reqwest::Certificate>,
        credentials: Arc<EngineCredentials>,
    ) -> Self {
        let link = Link::new(
            config,
            roots,
            credentials,
            "Mistral",
            settings::DEFAULT_IN_FLIGHT,
            |client| {
                client
                    .pool_idle_timeout(POOL_IDLE)
                    .pool_max_idle_per_host(settings::MAX_IN_FLIGHT)
            },
        );
        let root = link
            .base
            .strip_suffix("/v2")
            .unwrap_or(&link.base)
            .to_string()
            + "/";
        Self {
            link,
            root,
            // Validated at start; unreadable settings read as the defaults.
            settings: settings::read(config).unwrap_or_default(),
            profile: profile(),
            retries: config.retries,
            retry_backoff: Duration::from_millis(config.retry_backoff_ms),
        }
    }

    /// Records every call in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.link.metrics = Some(metrics);
        self
    }
}

/// How the catalog reads this adapter's entries (as `actions` builds them),
/// and the four effects.
fn profile() -> EngineProfile {
    EngineProfile {
        catalog: CatalogFields {
            path: "/actions".into(),
            list: "actions".into(),
            name: "name".into(),
            title: String::new(),
            description: "description".into(),
            params: "input_schema".into(),
            returns: String::new(),
            effect: "effect".into(),
            tags: "tags".into(),
            deprecated: String::new(),
            volatile: Vec::new(),
            kept: Vec::new(),
        },
        effects: BTreeMap::from([
            ("safe".into(), EffectRisk::new("safe", true, false, false)),
            (
                "write".into(),
                EffectRisk::new("write", false, false, false),
            ),
            (
                "external".into(),
                EffectRisk::new("external", false, false, true),
            ),
            (
                "destructive".into(),
                EffectRisk::new("destructive", false, true, true),
            ),
        ]),
        ..EngineProfile::default()
    }
}

/// The YAML text of a `mistral/v2` program.
fn program_text(program: &Value) -> Result<&str, EngineError> {
    program.as_str().ok_or_else(|| {
        EngineError::Failed(
            "a mistral/v2 program is the YAML text of one workflow (a string)".into(),
        )
    })
}

#[async_trait::async_trait]
impl Engine for MistralEngine {
    fn profile(&self) -> &EngineProfile {
        &self.profile
    }

    async fn healthy(&self) -> bool {
        let req = self
            .link
            .http
            .get(&self.root)
            .timeout(Duration::from_secs(2));
        self.link.credentials.probe(req, self.link.metrics()).await
    }

    fn breaker(&self) -> super::transport::breaker::BreakerState {
        self.link.resilience.breaker_state()
    }

    async fn catalog(&self, tenant: &str, etag: Option<&str>) -> Result<CatalogFetch, EngineError> {
        self.actions(tenant, etag).await
    }

    async fn check(
        &self,
        tenant: &str,
        program: &Value,
        _context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        self.validate(tenant, program).await
    }

    async fn run(
        &self,
        tenant: &str,
        program: &Value,
        input: &Value,
        _context: Option<&Value>,
        dry_run: bool,
        deadline: Duration,
    ) -> Result<RunReply, EngineError> {
        if dry_run {
            return Err(EngineError::Failed(
                "Mistral has no dry run (mistral/v2 does not declare test_run)".into(),
            ));
        }
        self.execute(tenant, program, input, deadline).await
    }
}
