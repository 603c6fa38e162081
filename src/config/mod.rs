//! The gateway's configuration (`gateway.toml`): the model, the environment
//! overrides, and the start-up validation whose messages name the file, the key
//! and the fix.
//!
//! Paths inside the file (guides, classifier rules) are resolved relative to the
//! directory that holds the configuration file, so a deployment can be moved as
//! one folder.

pub mod auth;
pub mod browser;
pub mod cache;
pub mod engine;
mod engine_env;
pub mod language;
pub mod limits;
mod load;
pub mod oauth;
pub mod policy;
mod problem;
mod range;
mod rotation;
pub mod schema;
mod secrets;
pub mod server;
pub mod store;
mod store_check;
pub mod tasks;
mod threads;

pub use auth::{AnonymousScope, ApiKeyConfig, AuthConfig};
pub use engine::{DEFAULT_ENGINE, EngineConfig};
pub use language::{CapabilityConfig, LanguageConfig, LoopTools};
pub use oauth::{IssuerConfig, OAuthConfig};
pub use problem::{ConfigError, ConfigProblem};
pub use server::{ServerConfig, SessionConfig, TelemetryConfig};
pub use store::{SentinelConfig, StoreConfig};

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The whole `gateway.toml`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// How this instance listens, names itself, drains and finds its files.
    #[serde(default)]
    pub server: ServerConfig,
    /// How `Mcp-Session-Id` tokens are signed and how long they last.
    #[serde(default)]
    pub session: SessionConfig,
    /// Where runs, idempotency records and promotions are kept: embedded in
    /// memory, or Redis.
    #[serde(default)]
    pub store: StoreConfig,
    /// Byte budgets of the in-process caches.
    #[serde(default)]
    pub cache: cache::CacheConfig,
    /// Runs that outlive their request (MCP Tasks).
    #[serde(default)]
    pub tasks: tasks::TasksConfig,
    /// The default engine: the one a `[[language]]` runs on when it names
    /// none, and the only one of a configuration without `[engines.NAME]`.
    pub engine: EngineConfig,
    /// Further engines by name (`[engines.NAME]`), each with the same keys
    /// as `[engine]`; a `[[language]]` picks one with `engine = "NAME"`.
    #[serde(default)]
    pub engines: std::collections::BTreeMap<String, EngineConfig>,
    /// Who may call (API keys, OAuth issuers, anonymous access) and what each
    /// caller may do.
    #[serde(default)]
    pub auth: AuthConfig,
    /// Per-caller rate and concurrency budgets.
    #[serde(default)]
    pub limits: limits::LimitsConfig,
    /// Where traces go (the standard `OTEL_*` variables fill what is left unset).
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// One table per Language this gateway serves (`[[language]]`).
    #[serde(rename = "language", default)]
    pub languages: Vec<LanguageConfig>,
    /// Directory of the configuration file; relative paths resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The file this configuration came from (for messages).
    #[serde(skip)]
    pub source: PathBuf,
}

impl Config {
    /// Resolves a path from the configuration file: absolute paths stay; a
    /// relative one is looked up in each `server.search_path` directory in
    /// turn, and otherwise taken relative to the configuration file.
    pub fn resolve(&self, p: &str) -> PathBuf {
        let path = Path::new(p);
        if path.is_absolute() {
            return path.to_path_buf();
        }
        self.server
            .search_path
            .iter()
            .map(|dir| self.base_dir.join(dir).join(path))
            .find(|candidate| candidate.exists())
            .unwrap_or_else(|| self.base_dir.join(path))
    }

    /// The engine a language runs on: the one it names, else the default.
    /// Names are validated at start, so an unknown one (only in a
    /// configuration built without validation) falls back to the default.
    pub fn engine_for(&self, lang: &LanguageConfig) -> &EngineConfig {
        lang.engine
            .as_deref()
            .and_then(|name| self.engines.get(name))
            .unwrap_or(&self.engine)
    }

    /// The longest run deadline of any engine (bounds that must outlast
    /// any run, whichever engine it is on).
    pub fn longest_run_deadline_ms(&self) -> u64 {
        self.engines
            .values()
            .map(|e| e.run_deadline_ms)
            .fold(self.engine.run_deadline_ms, u64::max)
    }
}
