//! The n8n adapter (`kind = "n8n"`): n8n's public API and editor endpoints
//! as an engine plug-in (the shell around it is `engines::adapter`), for
//! the `n8n/v1` language. Its settings are `[engines.NAME.n8n]`
//! ([`N8nSettings`]); docs/n8n.md has every n8n fact it relies on and
//! docs/n8n-v1.md the contract with the language.
//!
//! - `client`, `tenants`: what its calls carry, each tenant as its own n8n
//!   user, and how n8n's answers read.
//! - `served`, `nodes`, `catalog`, `schema`, `risk`: node descriptions as
//!   n8n serves them → their compact form → entries.
//! - `check` with `params`, `display`, `filter`, `cron`: the validator;
//!   `probe`: n8n's own verdict at create, asked at validate.
//! - `run`, `events`: the steps of a run (`engines::async_run` drives them).

mod catalog;
pub mod check;
mod client;
#[cfg(test)]
mod corpus_tests;
pub mod cron;
pub mod display;
mod events;
pub mod filter;
#[cfg(test)]
mod mutation_tests;
pub mod nodes;
pub mod params;
mod probe;
pub mod risk;
mod run;
pub mod schema;
mod served;
pub mod settings;
pub mod tenants;

pub use settings::N8nSettings;

use super::adapter::{EngineAdapter, Parts, Plugin};
use super::profile::{CatalogFields, EngineProfile, risk_levels};
use super::transport::{Link, LinkSpec};
use super::{CatalogFetch, EngineError, RawProblem};
use crate::config::EngineConfig;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// The adapter of one n8n. Its link's base is n8n's URL
/// (`http://127.0.0.1:5678`).
pub type N8nEngine = EngineAdapter<N8n>;

/// What is n8n's own in its adapter.
pub struct N8n {
    settings: N8nSettings,
    /// Tenant → its user's login cookie.
    cookies: Mutex<HashMap<String, String>>,
    /// The node descriptions, read once per change of n8n's node versions.
    nodes: tokio::sync::Mutex<Option<catalog::Cached>>,
    /// Tenants whose leftover validate probes this process has removed.
    swept: Mutex<HashSet<String>>,
}

impl N8nEngine {
    /// The adapter of `config`, trusting `roots` besides the system CAs.
    pub fn new(config: &EngineConfig, roots: Vec<reqwest::Certificate>) -> Self {
        Self::with_roots(config, roots)
    }
}

#[async_trait::async_trait]
impl Plugin for N8n {
    // A 401 from n8n refuses the tenant's key or login, not the gateway.
    const LINK: LinkSpec = LinkSpec::new("n8n", settings::DEFAULT_IN_FLIGHT).tenants_authenticate();

    fn parts(config: &EngineConfig, link: &Link) -> Parts<Self> {
        Parts {
            plugin: N8n {
                // Validated at start; unreadable settings read as the defaults.
                settings: settings::read(config).unwrap_or_default(),
                cookies: Mutex::new(HashMap::new()),
                nodes: tokio::sync::Mutex::new(None),
                swept: Mutex::new(HashSet::new()),
            },
            profile: profile(),
            health: format!("{}/healthz", link.base),
        }
    }

    async fn catalog(
        engine: &N8nEngine,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        engine.entries(tenant, etag).await
    }

    async fn check(
        engine: &N8nEngine,
        tenant: &str,
        program: &Value,
        _context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        workflow(program)?;
        let cached = engine.node_catalog(tenant).await?;
        let credentials = engine.tenant_credentials(tenant).await?;
        let mut problems = check::check_workflow(&cached, program, Some(credentials.as_slice()));
        // What the gateway's own check passes, n8n itself is asked about:
        // a program validate calls valid is never refused at create.
        if !problems.iter().any(|p| p.is_error) {
            problems.extend(engine.probe(tenant, program).await?);
        }
        Ok(problems)
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
        effects: risk_levels(),
        ..EngineProfile::default()
    }
}

/// The workflow document of an `n8n/v1` program (a JSON object).
fn workflow(program: &Value) -> Result<&serde_json::Map<String, Value>, EngineError> {
    program.as_object().ok_or_else(|| {
        EngineError::Failed("an n8n/v1 program is one workflow document (a JSON object)".into())
    })
}
