//! `[server]`, `[session]` and `[telemetry]`: how this instance listens,
//! signs its sessions and exports its traces, with their start-up checks.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address the HTTP server binds (`PILOTAGE_LISTEN`).
    pub listen: String,
    /// Names accepted in the `Host` header (`browser`: empty on loopback is
    /// the loopback names, elsewhere a start-up error).
    pub allowed_hosts: Vec<String>,
    /// Web origins besides the gateway's own allowed to call `/mcp`.
    pub allowed_origins: Vec<String>,
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
    /// Worker threads of the gateway's runtime. 0: the CPUs the process may
    /// use (its CPU quota included), halved when an engine is on this
    /// machine (`config::threads`).
    pub threads: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            instance: "gateway".into(),
            watch_files: true,
            search_path: Vec::new(),
            drain_ms: 5_000,
            drain_timeout_ms: 32_000,
            threads: 0,
        }
    }
}

/// `[telemetry]`: where traces go.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
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

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
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
    /// verify, never used to sign (see `rotation.rs`).
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

impl ServerConfig {
    /// (key, problem, fix) for every wrong `[server]` key.
    pub fn problems(&self) -> Vec<(String, String, String)> {
        let default = ServerConfig::default().max_body_bytes;
        let mut out = super::range::problems([super::range::outside(
            "server.max_body_bytes",
            super::range::size(self.max_body_bytes),
            1024,
            1 << 30,
            super::range::size(default),
        )]);
        if self.listen.parse::<std::net::SocketAddr>().is_err() {
            out.push((
                "server.listen".into(),
                format!("'{}' is not an address", self.listen),
                "use host:port, e.g. 0.0.0.0:8080".into(),
            ));
        }
        if self.drain_ms > 600_000 || self.drain_timeout_ms > 600_000 {
            out.push((
                "server.drain_ms".into(),
                "drain_ms and drain_timeout_ms are at most 600000 (10 minutes)".into(),
                "shorten the drain; orchestrators kill a container long before that".into(),
            ));
        }
        if self.threads > super::threads::MOST {
            out.push((
                "server.threads".into(),
                format!(
                    "{} threads is more than {}",
                    self.threads,
                    super::threads::MOST
                ),
                "use 0 (chosen from the CPUs) or at most one per CPU".into(),
            ));
        }
        out
    }
}

impl SessionConfig {
    /// (key, problem, fix) for every wrong `[session]` key.
    pub fn problems(&self) -> Vec<(String, String, String)> {
        let mut out = super::range::problems([super::range::outside(
            "session.ttl_secs",
            self.ttl_secs,
            1,
            366 * 86_400,
            24 * 3600,
        )]);
        if self.secret.len() < 16 {
            out.push((
                "session.secret".into(),
                "missing or shorter than 16 bytes".into(),
                "set a long random value (or PILOTAGE_SESSION_SECRET, or a file named by PILOTAGE_SESSION_SECRET_FILE); all instances share it".into(),
            ));
        }
        out
    }
}

impl TelemetryConfig {
    /// (key, problem, fix) for every wrong `[telemetry]` key.
    pub fn problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let otlp = &self.otlp_traces_endpoint;
        let is_url = otlp.starts_with("http://") || otlp.starts_with("https://");
        if !otlp.is_empty() && !is_url {
            out.push((
                "telemetry.otlp_traces_endpoint".into(),
                format!("'{otlp}' is not an http(s) URL"),
                "give the collector's OTLP/HTTP traces URL, e.g. http://otel-collector:4318/v1/traces, or leave it empty".into(),
            ));
        }
        out
    }
}
