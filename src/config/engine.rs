//! `[engine]` and `[engines.NAME]`: the keys every engine table has, whichever
//! adapter serves it. An adapter's own tables (`[engine.mapping]` of the REST
//! adapter, for instance) are kept as written: the adapter's row in
//! `engines::registry` reads and checks them, so this file knows no adapter.

use serde::Deserialize;

/// The name of the `[engine]` table among the named engines.
pub const DEFAULT_ENGINE: &str = "default";

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
// The adapter's registry row refuses unknown keys at start; the schema says so too.
#[schemars(deny_unknown_fields)]
pub struct EngineConfig {
    /// Which adapter talks to this engine (`rest`, the configurable REST
    /// mapping, unless named; see `engines::registry`).
    #[serde(default = "default_engine_kind")]
    pub kind: String,
    /// Base URL of the engine's REST API (`PILOTAGE_ENGINE_URL`).
    pub url: String,
    /// Upper bound of one whole catalog, check or status call, retries and
    /// the wait for a call slot included.
    #[serde(default = "default_engine_timeout")]
    pub timeout_ms: u64,
    /// Default and maximum run deadline handed to the engine.
    #[serde(default = "default_run_deadline")]
    pub run_deadline_ms: u64,
    /// Most calls this instance has open to the engine at once; further
    /// calls wait for a free slot. Unset: the adapter's default.
    #[serde(default, rename = "max_in_flight")]
    pub max_in_flight_setting: Option<usize>,
    /// Most extra attempts for calls that are safe to repeat (catalog,
    /// check, status and log reads) after a transport failure or a
    /// 429/502/503/504, within `timeout_ms` and the retry budget.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// First wait before a retry (jittered); doubled for each further one.
    /// An engine's `Retry-After` replaces it.
    #[serde(default = "default_retry_backoff")]
    pub retry_backoff_ms: u64,
    /// When the engine's circuit breaker opens (`[engine.breaker]`).
    #[serde(default)]
    pub breaker: crate::engines::transport::settings::BreakerSettings,
    /// The share of calls that may be retried (`[engine.retry_budget]`).
    #[serde(default)]
    pub retry_budget: crate::engines::transport::settings::RetryBudgetSettings,
    /// PEM file of a private CA trusted, besides the system roots, for an
    /// `https://` engine URL.
    #[serde(default)]
    pub ca_file: String,
    /// `[engine.auth]`: the credentials presented to this engine, as paths
    /// of the files holding them (`engines::credentials`).
    #[serde(default)]
    #[schemars(with = "Option<crate::engines::credentials::settings::AuthSchema>")]
    pub auth: crate::engines::credentials::settings::AuthTable,
    /// Every other key of the table: the adapter's own tables, as written.
    /// The adapter's registry row reads them and refuses the keys it does
    /// not know, so a typo still stops the start.
    #[schemars(with = "crate::engines::registry::AdapterTables")]
    #[serde(flatten)]
    pub adapter: toml::Table,
    /// The folder of the configuration file, which relative paths in the
    /// adapter's own table are resolved against (set when the file loads).
    #[serde(skip)]
    #[schemars(skip)]
    pub base_dir: std::path::PathBuf,
}

impl EngineConfig {
    /// The bound on concurrent engine calls: the configured one, else the
    /// adapter's `default`.
    pub fn max_in_flight_or(&self, default: usize) -> usize {
        self.max_in_flight_setting.unwrap_or(default)
    }

    /// (key, problem, fix) for the keys every engine has, with `prefix`
    /// (`engine` or `engines.NAME`) before each key; `is_file` tells whether
    /// a configured path names a file.
    pub fn problems(
        &self,
        prefix: &str,
        is_file: impl Fn(&str) -> bool,
    ) -> Vec<(String, String, String)> {
        use super::range::outside;
        let key = |k: &str| format!("{prefix}.{k}");
        // A deadline of days covers the longest runs an engine keeps open.
        let mut out = super::range::problems([
            outside(
                &key("timeout_ms"),
                self.timeout_ms,
                1,
                600_000,
                default_engine_timeout(),
            ),
            outside(
                &key("run_deadline_ms"),
                self.run_deadline_ms,
                1,
                7 * 86_400_000,
                default_run_deadline(),
            ),
            outside(
                &key("retries"),
                u64::from(self.retries),
                0,
                10,
                u64::from(default_retries()),
            ),
            outside(
                &key("retry_backoff_ms"),
                self.retry_backoff_ms,
                0,
                60_000,
                default_retry_backoff(),
            ),
        ]);
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            out.push((
                format!("{prefix}.url"),
                format!("'{}' is not an http(s) URL", self.url),
                "set the engine base URL, e.g. http://127.0.0.1:7070".into(),
            ));
        }
        if !self.ca_file.is_empty() && !is_file(&self.ca_file) {
            out.push((
                format!("{prefix}.ca_file"),
                format!("'{}' is not a file", self.ca_file),
                "name a PEM file of CA certificates (relative paths start at this file's folder)"
                    .into(),
            ));
        }
        out.extend(self.auth.problems(&format!("{prefix}.auth"), &is_file));
        out.extend(crate::engines::transport::settings::problems(
            prefix,
            &self.breaker,
            &self.retry_budget,
        ));
        out
    }
}

fn default_engine_kind() -> String {
    "rest".into()
}
fn default_engine_timeout() -> u64 {
    5000
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
