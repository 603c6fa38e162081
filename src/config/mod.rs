//! The gateway's configuration (`gateway.toml`): the model, the environment
//! overrides, and the start-up validation whose messages name the file, the key
//! and the fix.
//!
//! Paths inside the file (guides, classifier rules) are resolved relative to the
//! directory that holds the configuration file, so a deployment can be moved as
//! one folder.

mod engine;
pub mod language;
pub mod limits;

pub use engine::{
    CatalogFields, CheckMapping, EffectRisk, EngineMapping, EventMapping, RunMapping, pick,
};
pub use language::{CapabilityConfig, LanguageConfig, LoopTools};

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The whole `gateway.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub server: ServerConfig,
    #[serde(default)]
    pub session: SessionConfig,
    #[serde(default)]
    pub store: StoreConfig,
    pub engine: EngineConfig,
    #[serde(default)]
    pub auth: AuthConfig,
    #[serde(default)]
    pub limits: limits::LimitsConfig,
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    #[serde(rename = "language", default)]
    pub languages: Vec<LanguageConfig>,
    /// Directory of the configuration file; relative paths resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The file this configuration came from (for messages).
    #[serde(skip)]
    pub source: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address the HTTP server binds (`PILOTAGE_LISTEN`).
    pub listen: String,
    /// Host names accepted in the `Host` header; empty accepts any (the usual
    /// setting behind a load balancer).
    pub allowed_hosts: Vec<String>,
    /// Largest HTTP body the transport accepts. Kept well above the program
    /// size bound so an oversized program is a `bounds_exceeded` request error
    /// rather than an HTTP 413.
    pub max_body_bytes: usize,
    /// Name this instance reports in logs and `/readyz` (`PILOTAGE_INSTANCE`).
    pub instance: String,
    /// Reload classifier rules and guides when their files change (and on
    /// SIGHUP) without a restart.
    pub watch_files: bool,
    /// After SIGTERM: how long the instance keeps serving new requests while
    /// `/readyz` answers 503, so the balancer stops sending before it stops.
    pub drain_ms: u64,
    /// Then: how long requests still in flight (runs) may take before the
    /// process exits anyway.
    pub drain_timeout_ms: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            allowed_hosts: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            instance: "gateway".into(),
            watch_files: true,
            drain_ms: 5_000,
            drain_timeout_ms: 32_000,
        }
    }
}

/// `[telemetry]`: where traces go.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// The switch of trace export: the OTLP/HTTP traces URL of a collector,
    /// e.g. `http://otel-collector:4318/v1/traces` (JSON encoding); empty
    /// exports nothing (`PILOTAGE_OTLP_TRACES_ENDPOINT`). Trace context is
    /// propagated to the engine either way.
    pub otlp_traces_endpoint: String,
    /// `service.name` of the exported spans.
    pub service_name: String,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self {
            otlp_traces_endpoint: String::new(),
            service_name: "pilotage-gateway".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionConfig {
    /// HMAC key that signs `Mcp-Session-Id` tokens; every instance behind one
    /// load balancer needs the same value (`PILOTAGE_SESSION_SECRET`).
    pub secret: String,
    /// How long a session id stays valid.
    pub ttl_secs: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            secret: String::new(),
            ttl_secs: 24 * 3600,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `redis://host:port/db`; empty selects the embedded in-memory store
    /// (`PILOTAGE_REDIS_URL`).
    pub redis_url: String,
    /// Upper bound of one store operation.
    pub op_timeout_ms: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            redis_url: String::new(),
            op_timeout_ms: 2000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// Base URL of the engine's REST API (`PILOTAGE_ENGINE_URL`).
    pub url: String,
    /// Upper bound of one catalog or check call.
    #[serde(default = "default_engine_timeout")]
    pub timeout_ms: u64,
    /// Default and maximum run deadline handed to the engine.
    #[serde(default = "default_run_deadline")]
    pub run_deadline_ms: u64,
    /// How the engine's REST dialect maps onto Pilotage.
    #[serde(default)]
    pub mapping: EngineMapping,
}

fn default_engine_timeout() -> u64 {
    5000
}
fn default_run_deadline() -> u64 {
    30_000
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// Anonymous access: each MCP session becomes its own principal inside
    /// `anonymous_tenant`.
    pub anonymous: bool,
    pub anonymous_tenant: String,
    #[serde(rename = "key")]
    pub keys: Vec<ApiKeyConfig>,
}

/// One API key. Only its SHA-256 is stored.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyConfig {
    /// Principal name (appears in logs, never in responses).
    pub name: String,
    pub tenant: String,
    /// Lowercase hex SHA-256 of the bearer key.
    pub sha256: String,
}

/// One problem found in a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigProblem {
    pub file: String,
    pub key: String,
    pub problem: String,
    pub fix: String,
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: `{}`: {}; fix: {}",
            self.file, self.key, self.problem, self.fix
        )
    }
}

/// Loading failed: every problem found, not just the first.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration:\n{}", .0.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct ConfigError(pub Vec<ConfigProblem>);

impl Config {
    /// Reads, applies environment overrides, and validates.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError(vec![ConfigProblem {
                file: file.clone(),
                key: "(file)".into(),
                problem: format!("cannot read: {e}"),
                fix: "pass an existing file with --config".into(),
            }])
        })?;
        let mut config = Self::parse(&text, path)?;
        config.apply_env(|k| std::env::var(k).ok());
        let problems = config.validate();
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(ConfigError(problems))
        }
    }

    /// Parses TOML text; `path` names the source in messages and anchors
    /// relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let mut config: Config = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
                .unwrap_or(0);
            ConfigError(vec![ConfigProblem {
                file: if line > 0 {
                    format!("{file}:{line}")
                } else {
                    file.clone()
                },
                key: "(syntax)".into(),
                problem: e.message().to_string(),
                fix: "correct the TOML at that line (see deploy/gateway.local.toml for a complete example)".into(),
            }])
        })?;
        config.base_dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        config.source = path.to_path_buf();
        Ok(config)
    }

    /// Environment variables win over the file, so one image serves every
    /// replica of a compose deployment.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) {
        if let Some(v) = get("PILOTAGE_LISTEN") {
            self.server.listen = v;
        }
        if let Some(v) = get("PILOTAGE_ENGINE_URL") {
            self.engine.url = v;
        }
        if let Some(v) = get("PILOTAGE_REDIS_URL") {
            self.store.redis_url = v;
        }
        if let Some(v) = get("PILOTAGE_SESSION_SECRET") {
            self.session.secret = v;
        }
        if let Some(v) = get("PILOTAGE_INSTANCE") {
            self.server.instance = v;
        }
        if let Some(v) = get("PILOTAGE_OTLP_TRACES_ENDPOINT") {
            self.telemetry.otlp_traces_endpoint = v;
        }
    }

    /// Resolves a path from the configuration file against its directory.
    pub fn resolve(&self, p: &str) -> PathBuf {
        let path = Path::new(p);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base_dir.join(path)
        }
    }

    /// Every problem, each naming file, key and fix.
    pub fn validate(&self) -> Vec<ConfigProblem> {
        let file = self.source.display().to_string();
        let mut out = Vec::new();
        let mut problem = |key: &str, problem: String, fix: &str| {
            out.push(ConfigProblem {
                file: file.clone(),
                key: key.into(),
                problem,
                fix: fix.into(),
            })
        };
        if self.server.listen.parse::<std::net::SocketAddr>().is_err() {
            problem(
                "server.listen",
                format!("'{}' is not an address", self.server.listen),
                "use host:port, e.g. 0.0.0.0:8080",
            );
        }
        if self.session.secret.len() < 16 {
            problem(
                "session.secret",
                "missing or shorter than 16 bytes".into(),
                "set a long random value (or PILOTAGE_SESSION_SECRET); all instances share it",
            );
        }
        if !(self.engine.url.starts_with("http://") || self.engine.url.starts_with("https://")) {
            problem(
                "engine.url",
                format!("'{}' is not an http(s) URL", self.engine.url),
                "set the engine base URL, e.g. http://127.0.0.1:7070",
            );
        }
        if !self.store.redis_url.is_empty() && !self.store.redis_url.starts_with("redis://") {
            problem(
                "store.redis_url",
                format!("'{}' is not a redis:// URL", self.store.redis_url),
                "use redis://host:port/db, or leave empty for the in-memory store",
            );
        }
        if self.auth.anonymous && self.auth.anonymous_tenant.is_empty() {
            problem(
                "auth.anonymous_tenant",
                "anonymous access is on but names no tenant".into(),
                "set anonymous_tenant, or anonymous = false",
            );
        }
        if !self.auth.anonymous && self.auth.keys.is_empty() {
            problem(
                "auth",
                "no API key and anonymous access off: nobody could call".into(),
                "add [[auth.key]] entries or set anonymous = true",
            );
        }
        for (i, key) in self.auth.keys.iter().enumerate() {
            if key.sha256.len() != 64 || !key.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                problem(
                    &format!("auth.key[{i}].sha256"),
                    "not a 64-digit hex SHA-256".into(),
                    "store the key as `printf %s KEY | sha256sum`",
                );
            }
            if key.tenant.is_empty() {
                problem(
                    &format!("auth.key[{i}].tenant"),
                    "empty tenant".into(),
                    "name the engine tenant this key acts for",
                );
            }
        }
        let otlp = &self.telemetry.otlp_traces_endpoint;
        let is_url = otlp.starts_with("http://") || otlp.starts_with("https://");
        if !otlp.is_empty() && !is_url {
            problem(
                "telemetry.otlp_traces_endpoint",
                format!("'{otlp}' is not an http(s) URL"),
                "give the collector's OTLP/HTTP traces URL, e.g. http://otel-collector:4318/v1/traces, or leave it empty",
            );
        }
        let key_names: Vec<&str> = self.auth.keys.iter().map(|k| k.name.as_str()).collect();
        for (key, p, fix) in self.limits.validate(&key_names) {
            problem(&key, p, &fix);
        }
        if self.server.drain_ms > 600_000 || self.server.drain_timeout_ms > 600_000 {
            problem(
                "server.drain_ms",
                "drain_ms and drain_timeout_ms are at most 600000 (10 minutes)".into(),
                "shorten the drain; orchestrators kill a container long before that",
            );
        }
        if self.languages.is_empty() {
            problem(
                "language",
                "no [[language]] declared".into(),
                "declare at least one language (see deploy/gateway.local.toml)",
            );
        }
        let mut tool_names = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for (i, lang) in self.languages.iter().enumerate() {
            if !names.insert(lang.name.clone()) {
                problem(
                    &format!("language[{i}].name"),
                    format!("'{}' declared twice", lang.name),
                    "give each language a distinct name",
                );
            }
            for p in lang.validate(self, i) {
                problem(&p.0, p.1, &p.2);
            }
            for tool in lang.tools.declared(&lang.capabilities) {
                if !tool_names.insert(tool.to_string()) {
                    problem(
                        &format!("language[{i}].tools"),
                        format!("tool name '{tool}' is used twice"),
                        "give every loop tool a distinct name",
                    );
                }
            }
        }
        out
    }
}
