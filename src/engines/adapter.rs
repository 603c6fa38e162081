//! One engine adapter: the engine's own part (a [`Plugin`]: its settings,
//! catalog, validator and run steps) inside the shell every adapter
//! shares. The shell holds the [`Link`] its calls travel by (built one way
//! from the engine table, metrics included), its [`EngineProfile`] and its
//! health probe, and implements [`Engine`] once: the catalog and the
//! validator are the plug-in's, a run is `async_run`'s with the plug-in's
//! steps.

use super::async_run::{self, AsyncRun, RunOrder};
use super::credentials::EngineCredentials;
use super::profile::EngineProfile;
use super::transport::breaker::BreakerState;
use super::transport::{Link, LinkSpec};
use super::{CatalogFetch, Engine, EngineError, RawProblem, RunReply};
use crate::config::EngineConfig;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::ops::Deref;

/// The adapter of one engine whose own part is `P`.
#[derive(Clone)]
pub struct EngineAdapter<P> {
    /// How its calls reach the engine.
    pub(crate) link: Link,
    /// How its catalog, events and effects read.
    pub(crate) profile: EngineProfile,
    /// The URL its readiness probe reads.
    pub(crate) health: String,
    plugin: P,
}

/// What a plug-in builds from its engine table.
pub struct Parts<P> {
    pub(crate) plugin: P,
    pub(crate) profile: EngineProfile,
    /// The URL of the engine's readiness probe.
    pub(crate) health: String,
}

/// What an engine adapter writes itself: the shape of its link, what it
/// reads from its table, its catalog and its validator (its run steps are
/// an [`AsyncRun`] of its [`EngineAdapter`]). The operations get the
/// whole adapter, link included.
#[async_trait::async_trait]
pub trait Plugin: Sized + Send + Sync + 'static {
    const LINK: LinkSpec;

    /// Its part of `config`, whose engine `link` reaches.
    fn parts(config: &EngineConfig, link: &Link) -> Parts<Self>;

    /// Readiness: the engine answers its health probe.
    async fn healthy(engine: &EngineAdapter<Self>) -> bool {
        engine.link.probe(&engine.health).await
    }

    /// The tenant's capabilities, revalidated with `etag`.
    async fn catalog(
        engine: &EngineAdapter<Self>,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError>;

    /// The engine's validator: side-effect free.
    async fn check(
        engine: &EngineAdapter<Self>,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError>;
}

impl<P: Plugin> EngineAdapter<P> {
    /// The adapter of `config`, whose engine `link` reaches.
    pub fn on(config: &EngineConfig, link: Link) -> Self {
        let Parts {
            plugin,
            profile,
            health,
        } = P::parts(config, &link);
        Self {
            link,
            profile,
            health,
            plugin,
        }
    }

    /// The adapter of `config` trusting `roots` besides the system CAs,
    /// with no credentials and no metrics.
    pub fn with_roots(config: &EngineConfig, roots: Vec<reqwest::Certificate>) -> Self {
        Self::on(
            config,
            Link::new(config, roots, EngineCredentials::none(), &P::LINK),
        )
    }

    /// What the catalog and the traces read of this engine.
    pub fn profile(&self) -> &EngineProfile {
        &self.profile
    }
}

/// The adapter's code reads its plug-in's settings and state as its own.
impl<P> Deref for EngineAdapter<P> {
    type Target = P;
    fn deref(&self) -> &P {
        &self.plugin
    }
}

#[async_trait::async_trait]
impl<P> Engine for EngineAdapter<P>
where
    P: Plugin,
    EngineAdapter<P>: AsyncRun,
{
    fn profile(&self) -> &EngineProfile {
        &self.profile
    }

    async fn healthy(&self) -> bool {
        P::healthy(self).await
    }

    fn breaker(&self) -> BreakerState {
        self.link.resilience.breaker_state()
    }

    async fn catalog(&self, tenant: &str, etag: Option<&str>) -> Result<CatalogFetch, EngineError> {
        P::catalog(self, tenant, etag).await
    }

    async fn check(
        &self,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        P::check(self, tenant, program, context).await
    }

    async fn run(&self, tenant: &str, order: &RunOrder<'_>) -> Result<RunReply, EngineError> {
        async_run::run(self, tenant, order).await
    }
}

/// An adapter's own table `table` of `config` (the defaults when it has
/// none), or why it does not read.
pub fn own_table<T: DeserializeOwned + Default>(
    config: &EngineConfig,
    table: &str,
) -> Result<T, String> {
    match config.adapter.get(table) {
        None => Ok(T::default()),
        Some(table) => table
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| e.message().to_string()),
    }
}
