//! The OpenStack Mistral adapter (`kind = "mistral"`): Mistral's own REST
//! API (`url = "http://HOST:PORT/v2"`) as an engine plug-in (the shell
//! around it is `engines::adapter`), for the `mistral/v2` language. Its
//! settings are `[engines.NAME.mistral]` ([`MistralSettings`]);
//! docs/mistral.md has every Mistral fact it relies on and, under "The
//! engine adapter", what it does with them.
//!
//! - `client`: what its calls carry (the tenant as `X-Project-Id`) and how
//!   Mistral's answers read.
//! - `actions`, `workflows`, `input_spec`, `risk`: the catalog.
//! - `check`: the validator. `rename`, `run`, `events`: the steps of a run
//!   (`engines::async_run` drives them).

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

use super::adapter::{EngineAdapter, Parts, Plugin};
use super::profile::{CatalogFields, EngineProfile, risk_levels};
use super::transport::{Link, LinkSpec};
use super::{CatalogFetch, EngineError, RawProblem};
use crate::config::EngineConfig;
use serde_json::Value;
use std::time::Duration;

/// Pooled connections idle this long are dropped: Mistral's server closes
/// them after 10 s without answering a request sent on them.
const POOL_IDLE: Duration = Duration::from_secs(5);

/// The adapter of one Mistral engine. Its link's base is the v2 API's
/// (`http://HOST:PORT/v2`); with Mistral's `keycloak-oidc` auth, its
/// credentials are an OAuth token.
pub type MistralEngine = EngineAdapter<Mistral>;

/// What is Mistral's own in its adapter.
pub struct Mistral {
    settings: MistralSettings,
    /// How often, and after what first wait, a lost start is sent again.
    retries: u32,
    retry_backoff: Duration,
}

impl MistralEngine {
    /// The adapter of `config`, trusting `roots` besides the system CAs.
    pub fn new(config: &EngineConfig, roots: Vec<reqwest::Certificate>) -> Self {
        Self::with_roots(config, roots)
    }
}

#[async_trait::async_trait]
impl Plugin for Mistral {
    const LINK: LinkSpec = LinkSpec::new("Mistral", settings::DEFAULT_IN_FLIGHT)
        .idle_for(POOL_IDLE)
        .idle_per_host(settings::MAX_IN_FLIGHT);

    fn parts(config: &EngineConfig, link: &Link) -> Parts<Self> {
        // The API root (`GET /` answers without auth) is the health probe.
        let root = link.base.strip_suffix("/v2").unwrap_or(&link.base);
        Parts {
            plugin: Mistral {
                // Validated at start; unreadable settings read as the defaults.
                settings: settings::read(config).unwrap_or_default(),
                retries: config.retries,
                retry_backoff: Duration::from_millis(config.retry_backoff_ms),
            },
            profile: profile(),
            health: format!("{root}/"),
        }
    }

    async fn catalog(
        engine: &MistralEngine,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        engine.actions(tenant, etag).await
    }

    async fn check(
        engine: &MistralEngine,
        tenant: &str,
        program: &Value,
        _context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        engine.validate(tenant, program).await
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
        effects: risk_levels(),
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
