//! The gateway's configuration (`gateway.toml`): the model, the environment
//! overrides, and the start-up validation whose messages name the file, the key
//! and the fix.
//!
//! Paths inside the file (guides, classifier rules) are resolved relative to the
//! directory that holds the configuration file, so a deployment can be moved as
//! one folder.

pub mod cache;
mod engine;
mod engine_check;
mod engine_env;
pub mod language;
pub mod limits;
pub mod oauth;
pub mod policy;
mod rotation;
mod secrets;
mod store_check;

pub use engine::{
    ArmMeaning, CallOutcome, CallPath, CatalogFields, CheckMapping, CheckMeaning, EffectRisk,
    Encoding, Encodings, EngineMapping, EventKind, EventMapping, LevelMeaning, LogMapping,
    OutputMapping, PLACEHOLDERS, PollMapping, RunMapping, RunMeaning, Runner, StateMeaning, pick,
    pick_field, value_text,
};
pub use language::{CapabilityConfig, LanguageConfig, LoopTools};
pub use oauth::{IssuerConfig, OAuthConfig};

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The name of the `[engine]` table among the named engines.
pub const DEFAULT_ENGINE: &str = "default";

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
    #[serde(default)]
    pub cache: cache::CacheConfig,
    /// The default engine: the one a `[[language]]` runs on when it names
    /// none, and the only one of a configuration without `[engines.NAME]`.
    pub engine: EngineConfig,
    /// Further engines by name (`[engines.NAME]`), each with the same keys
    /// as `[engine]`; a `[[language]]` picks one with `engine = "NAME"`.
    #[serde(default)]
    pub engines: std::collections::BTreeMap<String, EngineConfig>,
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
    /// Directories searched, in order, for the relative guide and rule paths
    /// of `[[language]]` before the configuration file's own directory
    /// (`PILOTAGE_SEARCH_PATH`, entries separated by `:`). Relative entries
    /// are relative to the configuration file.
    pub search_path: Vec<String>,
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
            search_path: Vec::new(),
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
    /// A file holding the secret instead (`PILOTAGE_SESSION_SECRET_FILE`),
    /// e.g. a container secret; wins over `secret`.
    pub secret_file: String,
    /// How long a session id stays valid.
    pub ttl_secs: u64,
    /// Secrets that signed sessions before `secret` (rotation): accepted to
    /// verify, never used to sign (see `secrets.rs`).
    pub previous_secrets: Vec<String>,
    /// Files each holding one previous secret
    /// (`PILOTAGE_SESSION_PREVIOUS_SECRET_FILES`, comma-separated).
    pub previous_secret_files: Vec<String>,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            secret: String::new(),
            secret_file: String::new(),
            ttl_secs: 24 * 3600,
            previous_secrets: Vec::new(),
            previous_secret_files: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `redis://host:port/db`; empty selects the embedded in-memory store
    /// (`PILOTAGE_REDIS_URL`).
    pub redis_url: String,
    /// A file holding the URL instead, for a URL with a password
    /// (`PILOTAGE_REDIS_URL_FILE`); wins over `redis_url`.
    pub redis_url_file: String,
    /// Node URLs of a Redis Cluster (some or all of its masters and
    /// replicas; the rest is discovered; `PILOTAGE_REDIS_CLUSTER`,
    /// comma-separated). Excludes `redis_url`.
    pub redis_cluster: Vec<String>,
    /// A master found through Redis Sentinel. Excludes `redis_url` and
    /// `redis_cluster`.
    pub redis_sentinel: SentinelConfig,
    /// Upper bound of one store operation.
    pub op_timeout_ms: u64,
    /// PEM file of a private CA trusted, besides the system roots, for a
    /// `rediss://` URL.
    pub ca_file: String,
    /// Lease of an idempotency claim until its run starts: a claim whose
    /// owner never started the run (it was refused, failed, or its write
    /// landed after it gave up) frees the key after this long instead of
    /// blocking it for the whole dedup window.
    pub claim_lease_ms: u64,
    /// Embedded store only: bytes one principal may hold (runs, idempotency
    /// records, promoted programs, catalog baselines). A full budget refuses
    /// that principal's new writes; nobody else's records are touched.
    pub memory_principal_bytes: u64,
    /// Embedded store only: bytes all principals together may hold.
    pub memory_total_bytes: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            redis_url: String::new(),
            redis_url_file: String::new(),
            redis_cluster: Vec::new(),
            redis_sentinel: SentinelConfig::default(),
            op_timeout_ms: 2000,
            ca_file: String::new(),
            claim_lease_ms: 20_000,
            memory_principal_bytes: 4 * 1024 * 1024,
            memory_total_bytes: 64 * 1024 * 1024,
        }
    }
}

/// `[store.redis_sentinel]`: where the sentinels are and which master they
/// watch.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SentinelConfig {
    /// The name the sentinels monitor the master under (`sentinel monitor <name> ...`).
    pub master_name: String,
    /// Sentinel URLs (`redis://host:26379`); empty: Sentinel is not used.
    pub urls: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// Which adapter talks to this engine (`rest`, the configurable REST
    /// mapping, unless named; see `engines::registry`).
    #[serde(default = "default_engine_kind")]
    pub kind: String,
    /// Base URL of the engine's REST API (`PILOTAGE_ENGINE_URL`).
    pub url: String,
    /// Upper bound of one catalog or check call.
    #[serde(default = "default_engine_timeout")]
    pub timeout_ms: u64,
    /// Default and maximum run deadline handed to the engine.
    #[serde(default = "default_run_deadline")]
    pub run_deadline_ms: u64,
    /// Most calls this instance has open to the engine at once; further
    /// calls wait for a free slot. Unset: the adapter's default (see
    /// [`EngineConfig::max_in_flight`]).
    #[serde(default, rename = "max_in_flight")]
    pub max_in_flight_setting: Option<usize>,
    /// Extra attempts for calls that are safe to repeat (catalog, check,
    /// status and log reads) after a transport failure or a 429/502/503/504.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// First wait before a retry; doubled for each further one.
    #[serde(default = "default_retry_backoff")]
    pub retry_backoff_ms: u64,
    /// How the engine's REST dialect maps onto Pilotage.
    #[serde(default)]
    pub mapping: EngineMapping,
    /// PEM file of a private CA trusted, besides the system roots, for an
    /// `https://` engine URL.
    #[serde(default)]
    pub ca_file: String,
    /// The Mistral adapter's settings (`kind = "mistral"` only).
    #[serde(default)]
    pub mistral: Option<crate::engines::mistral::MistralSettings>,
}

impl EngineConfig {
    /// The bound on concurrent engine calls: the configured one, else the
    /// adapter's default (64; 8 for Mistral, whose API serves 10 at once).
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight_setting
            .unwrap_or(if self.kind == "mistral" {
                crate::engines::mistral::settings::DEFAULT_IN_FLIGHT
            } else {
                default_max_in_flight()
            })
    }
}

fn default_engine_kind() -> String {
    "rest".into()
}
fn default_engine_timeout() -> u64 {
    5000
}
fn default_max_in_flight() -> usize {
    64
}
fn default_retries() -> u32 {
    2
}
fn default_retry_backoff() -> u64 {
    50
}
fn default_run_deadline() -> u64 {
    30_000
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// Anonymous access: callers without a key act inside `anonymous_tenant`.
    pub anonymous: bool,
    pub anonymous_tenant: String,
    /// Who an anonymous principal is: `"session"` (each MCP session) or
    /// `"tenant"` (every anonymous caller); see [`AnonymousScope`].
    pub anonymous_scope: String,
    /// What anonymous callers may do, as for a key: permissions (all when
    /// absent) and a risk ceiling.
    pub anonymous_permissions: Option<Vec<String>>,
    pub anonymous_max_risk: Option<String>,
    pub anonymous_forbid_risk_hints: Vec<String>,
    #[serde(rename = "key")]
    pub keys: Vec<ApiKeyConfig>,
    /// A file of more `[[key]]` blocks (`PILOTAGE_API_KEYS_FILE`), so keys
    /// can be mounted as a container secret.
    pub keys_file: String,
    /// How many of `keys` (the last ones) came from `keys_file`.
    #[serde(skip)]
    pub keys_from_file: usize,
    /// Bearer JWT access tokens from identity providers, beside the keys.
    pub oauth: Option<OAuthConfig>,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            anonymous: false,
            anonymous_tenant: String::new(),
            anonymous_scope: AnonymousScope::Session.as_str().into(),
            anonymous_permissions: None,
            anonymous_max_risk: None,
            anonymous_forbid_risk_hints: Vec::new(),
            keys: Vec::new(),
            keys_file: String::new(),
            keys_from_file: 0,
            oauth: None,
        }
    }
}

impl AuthConfig {
    /// The configured scope; `None` for a value `validate` reports.
    pub fn scope(&self) -> Option<AnonymousScope> {
        AnonymousScope::parse(&self.anonymous_scope)
    }
}

/// What one anonymous principal covers (`auth.anonymous_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnonymousScope {
    /// Each MCP session is a principal of its own. A request without a session
    /// belongs to nobody a later request can be, so nothing is stored for it.
    #[default]
    Session,
    /// Every anonymous caller is one principal of the anonymous tenant: a local
    /// or single-user install, where clients without sessions (revision
    /// 2026-07-28) still fetch their stored runs.
    Tenant,
}

impl AnonymousScope {
    pub fn parse(value: &str) -> Option<AnonymousScope> {
        match value {
            "session" => Some(AnonymousScope::Session),
            "tenant" => Some(AnonymousScope::Tenant),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AnonymousScope::Session => "session",
            AnonymousScope::Tenant => "tenant",
        }
    }
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
    /// What this key may do (`learn`, `validate`, `execute`, `deploy`,
    /// `trace`); absent means all of them.
    #[serde(default)]
    pub permissions: Option<Vec<String>>,
    /// The riskiest level a program of this key may reach.
    #[serde(default)]
    pub max_risk: Option<String>,
    /// Risk hints no step of this key's programs may carry.
    #[serde(default)]
    pub forbid_risk_hints: Vec<String>,
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
        let mut problems = config.apply_env(|k| std::env::var(k).ok());
        let variables: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        problems.extend(config.unknown_engine_url_variables(variables.iter().map(String::as_str)));
        problems.extend(config.validate());
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

    /// Problems of the named engines and of the languages' engine names.
    fn named_engine_problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for (name, engine) in &self.engines {
            let prefix = format!("engines.{name}");
            if name == DEFAULT_ENGINE {
                out.push((
                    prefix.clone(),
                    format!("'{DEFAULT_ENGINE}' names the [engine] table"),
                    "give this engine another name, or move it to [engine]".into(),
                ));
            }
            if !(engine.url.starts_with("http://") || engine.url.starts_with("https://")) {
                out.push((
                    format!("{prefix}.url"),
                    format!("'{}' is not an http(s) URL", engine.url),
                    "set the engine base URL, e.g. http://127.0.0.1:7070".into(),
                ));
            }
            if !engine.ca_file.is_empty() && !self.resolve(&engine.ca_file).is_file() {
                out.push((
                    format!("{prefix}.ca_file"),
                    format!("'{}' is not a file", engine.ca_file),
                    "name a PEM file of CA certificates (relative paths start at this file's folder)".into(),
                ));
            }
            for (key, what, fix) in engine_check::engine_problems(engine) {
                let key = key
                    .strip_prefix("engine")
                    .map_or(key.clone(), |rest| format!("{prefix}{rest}"));
                out.push((key, what, fix));
            }
        }
        for (i, lang) in self.languages.iter().enumerate() {
            if let Some(name) = &lang.engine
                && name != DEFAULT_ENGINE
                && !self.engines.contains_key(name)
            {
                let mut known = vec![DEFAULT_ENGINE.to_string()];
                known.extend(self.engines.keys().cloned());
                out.push((
                    format!("language[{i}].engine"),
                    format!("no engine is called '{name}'"),
                    format!(
                        "use one of: {} (or declare [engines.{name}])",
                        known.join(", ")
                    ),
                ));
            }
        }
        out
    }

    /// Problems of `[store]` timing and budgets, as (key, problem, fix).
    fn store_problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let s = &self.store;
        if s.op_timeout_ms == 0 {
            out.push((
                "store.op_timeout_ms".into(),
                "0 would fail every store operation".into(),
                "use a positive value (default 2000)".into(),
            ));
        }
        // The claim must outlive the work between claiming and starting the
        // run (a catalog and a check call, a few store operations), or every
        // keyed run would lose its claim before it starts.
        let engine_timeout = self
            .engines
            .values()
            .map(|e| e.timeout_ms)
            .fold(self.engine.timeout_ms, u64::max);
        let floor = 2 * engine_timeout + 3 * s.op_timeout_ms;
        if s.claim_lease_ms < floor {
            out.push((
                "store.claim_lease_ms".into(),
                format!(
                    "{} ms is shorter than the work before a run starts (2 x engine.timeout_ms + 3 x store.op_timeout_ms = {floor} ms)",
                    s.claim_lease_ms
                ),
                format!("use at least {floor} (default 20000)"),
            ));
        }
        if s.memory_principal_bytes < cache::MIN_BYTES {
            out.push((
                "store.memory_principal_bytes".into(),
                format!(
                    "{} bytes is below the 64 KiB minimum",
                    s.memory_principal_bytes
                ),
                "set at least 65536, or remove the key for the default (4 MiB)".into(),
            ));
        }
        if s.memory_total_bytes < s.memory_principal_bytes {
            out.push((
                "store.memory_total_bytes".into(),
                format!(
                    "{} bytes is below one principal's budget ({} bytes)",
                    s.memory_total_bytes, s.memory_principal_bytes
                ),
                "raise memory_total_bytes or lower memory_principal_bytes".into(),
            ));
        }
        out
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
                "set a long random value (or PILOTAGE_SESSION_SECRET, or a file named by PILOTAGE_SESSION_SECRET_FILE); all instances share it",
            );
        }
        for (key, what, fix) in self.previous_secret_problems() {
            problem(&key, what, &fix);
        }
        if !(self.engine.url.starts_with("http://") || self.engine.url.starts_with("https://")) {
            problem(
                "engine.url",
                format!("'{}' is not an http(s) URL", self.engine.url),
                "set the engine base URL, e.g. http://127.0.0.1:7070",
            );
        }
        for (key, what, fix) in engine_check::engine_problems(&self.engine) {
            problem(&key, what, &fix);
        }
        for (key, what, fix) in self.named_engine_problems() {
            problem(&key, what, &fix);
        }
        if !self.store.redis_url.is_empty()
            && !self.store.redis_url.starts_with("redis://")
            && !self.store.redis_url.starts_with("rediss://")
        {
            problem(
                "store.redis_url",
                format!(
                    "'{}' is not a redis:// or rediss:// URL",
                    crate::store::redis::redact_url(&self.store.redis_url)
                ),
                "use redis://host:port/db (rediss:// for TLS), or leave empty for the in-memory store",
            );
        }
        for (key, what, fix) in store_check::topology_problems(&self.store) {
            problem(key, what, fix);
        }
        for (key, path) in [
            ("engine.ca_file", &self.engine.ca_file),
            ("store.ca_file", &self.store.ca_file),
        ] {
            if !path.is_empty() && !self.resolve(path).is_file() {
                problem(
                    key,
                    format!("'{path}' is not a file"),
                    "name a PEM file of CA certificates (relative paths start at this file's folder)",
                );
            }
        }
        for (key, problem_text, fix) in self.store_problems() {
            problem(&key, problem_text, &fix);
        }
        for (key, problem_text, fix) in self.cache.validate() {
            problem(&key, problem_text, &fix);
        }
        if self.auth.anonymous && self.auth.anonymous_tenant.is_empty() {
            problem(
                "auth.anonymous_tenant",
                "anonymous access is on but names no tenant".into(),
                "set anonymous_tenant, or anonymous = false",
            );
        }
        if self.auth.scope().is_none() {
            problem(
                "auth.anonymous_scope",
                format!("'{}' is not an anonymous scope", self.auth.anonymous_scope),
                "use \"session\" (each MCP session is its own anonymous principal) or \"tenant\" (every anonymous caller is one principal: a local or single-user install)",
            );
        }
        if !self.auth.anonymous && self.auth.keys.is_empty() && self.auth.oauth.is_none() {
            problem(
                "auth",
                "no API key, no OAuth issuer and anonymous access off: nobody could call".into(),
                "add [[auth.key]] entries, an [auth.oauth] resource server, or set anonymous = true",
            );
        }
        if let Some(oauth) = &self.auth.oauth {
            for p in oauth.validate() {
                problem(&p.0, p.1, &p.2);
            }
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
            for p in policy::problems(
                &format!("auth.key[{i}]."),
                key.permissions.as_deref(),
                key.max_risk.as_deref(),
                &key.forbid_risk_hints,
            ) {
                problem(&p.0, p.1, &p.2);
            }
        }
        for p in policy::problems(
            "auth.anonymous_",
            self.auth.anonymous_permissions.as_deref(),
            self.auth.anonymous_max_risk.as_deref(),
            &self.auth.anonymous_forbid_risk_hints,
        ) {
            problem(&p.0, p.1, &p.2);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The problems' keys of the conformance configuration with `auth`
    /// (TOML under `[auth]`) in place of its own.
    fn problems(auth: &str) -> Vec<String> {
        #[derive(Deserialize)]
        struct Only {
            auth: AuthConfig,
        }
        let mut c = Config::parse(
            include_str!("../../tests/configs/conformance.toml"),
            Path::new("gateway.toml"),
        )
        .expect("parse");
        c.auth = toml::from_str::<Only>(&format!("[auth]\n{auth}"))
            .expect("auth TOML")
            .auth;
        c.validate().into_iter().map(|p| p.key).collect()
    }

    #[test]
    fn key_policies_are_validated_by_key() {
        let key = |extra: &str| {
            format!(
                "[[auth.key]]\nname = \"k\"\ntenant = \"acme\"\nsha256 = \"{}\"\n{extra}",
                "a".repeat(64)
            )
        };
        assert!(
            !problems(&key(
                "permissions = [\"learn\", \"validate\"]\nmax_risk = \"write\""
            ))
            .iter()
            .any(|k| k.starts_with("auth"))
        );
        let bad = problems(&key(
            "permissions = [\"execute\"]\nmax_risk = \"loud\"\nforbid_risk_hints = [\"readOnly\"]",
        ));
        for k in [
            "auth.key[0].permissions",
            "auth.key[0].max_risk",
            "auth.key[0].forbid_risk_hints",
        ] {
            assert!(bad.contains(&k.to_string()), "{k} missing from {bad:?}");
        }
        let anonymous = problems(
            "anonymous = true\nanonymous_tenant = \"acme\"\nanonymous_permissions = [\"validate\"]\nanonymous_max_risk = \"all\"",
        );
        for k in ["auth.anonymous_permissions", "auth.anonymous_max_risk"] {
            assert!(
                anonymous.contains(&k.to_string()),
                "{k} missing from {anonymous:?}"
            );
        }
        let unknown = problems(&key("permissions = [\"learn\", \"validate\", \"fly\"]"));
        assert!(unknown.contains(&"auth.key[0].permissions".to_string()));
        // An OAuth resource server alone is someone who can call.
        let oauth = problems(
            "[auth.oauth]\nresource = \"https://gw.example.com/mcp\"\n[[auth.oauth.issuer]]\nissuer = \"https://idp\"\njwks_uri = \"https://idp/jwks\"\ntenant = \"acme\"",
        );
        assert!(!oauth.iter().any(|k| k.starts_with("auth")), "{oauth:?}");
    }
}
