//! The n8n adapter (`kind = "n8n"`): n8n's public API and editor endpoints
//! behind the [`Engine`] trait, for the `n8n/v1` language. Its settings are
//! `[engines.NAME.n8n]` ([`N8nSettings`]); docs/n8n.md has every n8n fact it
//! relies on and docs/n8n-v1.md the contract with the language.
//!
//! - `client`, `tenants`: the transport, each tenant as its own n8n user.
//! - `nodes`, `catalog`, `schema`, `risk`: node descriptions → entries.
//! - `check` with `params`, `display`, `filter`, `cron`: the validator.
//! - `run`, `events`: execution.

mod catalog;
pub mod check;
mod client;
#[cfg(test)]
mod corpus_tests;
pub mod cron;
pub mod display;
mod events;
pub mod filter;
pub mod nodes;
pub mod params;
pub mod risk;
mod run;
pub mod schema;
pub mod settings;
pub mod tenants;

pub use settings::N8nSettings;

use super::profile::{CatalogFields, EffectRisk, EngineProfile};
use super::transport::Link;
use super::{CatalogFetch, Engine, EngineError, RawProblem, RunReply};
use crate::config::EngineConfig;
use crate::engines::credentials::EngineCredentials;
use crate::metrics::Metrics;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The adapter of one n8n.
pub struct N8nEngine {
    /// Its base is n8n's URL (`http://127.0.0.1:5678`).
    link: Link,
    settings: N8nSettings,
    profile: EngineProfile,
    /// Tenant → its user's login cookie.
    cookies: Mutex<HashMap<String, String>>,
    /// The node descriptions, read once per change of n8n's node versions.
    nodes: tokio::sync::Mutex<Option<catalog::Cached>>,
}

impl N8nEngine {
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
        Self {
            link: Link::new(
                config,
                roots,
                credentials,
                "n8n",
                settings::DEFAULT_IN_FLIGHT,
                |client| client,
            ),
            // Validated at start; unreadable settings read as the defaults.
            settings: settings::read(config).unwrap_or_default(),
            profile: profile(),
            cookies: Mutex::new(HashMap::new()),
            nodes: tokio::sync::Mutex::new(None),
        }
    }

    /// Records every call in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.link.metrics = Some(metrics);
        self
    }
}

/// How the catalog reads this adapter's entries (as `catalog` builds
/// them: the contract's shape), and the four risks.
fn profile() -> EngineProfile {
    EngineProfile {
        catalog: CatalogFields {
            path: "/types/nodes.json".into(),
            list: String::new(),
            name: "id".into(),
            title: "name".into(),
            description: "description".into(),
            params: "input_schema".into(),
            returns: String::new(),
            effect: "risk".into(),
            tags: String::new(),
            deprecated: String::new(),
            volatile: Vec::new(),
            // The language reads `n8n`, the operations `risk_when`.
            kept: vec!["risk_when".into(), "n8n".into()],
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

/// The workflow document of an `n8n/v1` program (a JSON object).
fn workflow(program: &Value) -> Result<&serde_json::Map<String, Value>, EngineError> {
    program.as_object().ok_or_else(|| {
        EngineError::Failed("an n8n/v1 program is one workflow document (a JSON object)".into())
    })
}

#[async_trait::async_trait]
impl Engine for N8nEngine {
    fn profile(&self) -> &EngineProfile {
        &self.profile
    }

    async fn healthy(&self) -> bool {
        let req = self
            .link
            .http
            .get(format!("{}/healthz", self.link.base))
            .timeout(Duration::from_secs(2));
        self.link.credentials.probe(req, self.link.metrics()).await
    }

    fn breaker(&self) -> super::transport::breaker::BreakerState {
        self.link.resilience.breaker_state()
    }

    async fn catalog(&self, tenant: &str, etag: Option<&str>) -> Result<CatalogFetch, EngineError> {
        self.entries(tenant, etag).await
    }

    async fn check(
        &self,
        tenant: &str,
        program: &Value,
        _context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        workflow(program)?;
        let cached = self.node_catalog(tenant).await?;
        let credentials = self.tenant_credentials(tenant).await?;
        Ok(check::check_workflow(
            &cached,
            program,
            Some(credentials.as_slice()),
        ))
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
                "n8n has no dry run (n8n/v1 does not declare test_run)".into(),
            ));
        }
        workflow(program)?;
        self.execute(tenant, program, input, deadline).await
    }
}
