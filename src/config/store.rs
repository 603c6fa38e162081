//! `[store]`: where runs, claims and baselines are kept, and the start-up
//! checks of its URLs, topology, timing and budgets.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
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
    /// blocking it for the whole dedup window. 0 (the default): the lease
    /// follows the run deadline (`run_deadline_ms + claim_grace_ms` of the
    /// language's engine); a set value is a cap below that, never above.
    pub claim_lease_ms: u64,
    /// What a claim may outlast its run deadline by: the run's record and
    /// replay writes after the engine answered. A retry of a key whose
    /// attempt died answers within `run_deadline_ms` + this. Default 5000.
    pub claim_grace_ms: u64,
    /// Embedded store only: bytes one principal may hold (runs, idempotency
    /// records, promoted programs, catalog baselines). A full share makes
    /// room from that principal's own oldest plain runs; nobody else's
    /// records are touched. 0 (the default): an eighth of the total.
    pub memory_principal_bytes: u64,
    /// Embedded store only: bytes all principals together may hold. 0 (the
    /// default): an eighth of the memory, between 64 MiB and 4 GiB.
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
            claim_lease_ms: 0,
            claim_grace_ms: 5_000,
            memory_principal_bytes: 0,
            memory_total_bytes: 0,
        }
    }
}

/// `[store.redis_sentinel]`: where the sentinels are and which master they
/// watch.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SentinelConfig {
    /// The name the sentinels monitor the master under (`sentinel monitor <name> ...`).
    pub master_name: String,
    /// Sentinel URLs (`redis://host:26379`); empty: Sentinel is not used.
    pub urls: Vec<String>,
}

impl StoreConfig {
    /// (key, problem, fix) for every wrong `[store]` key. `engine_timeout_ms`
    /// is the longest `timeout_ms` of any engine, which the claim lease must
    /// outlast; `is_file` tells whether a configured path names a file.
    pub fn problems(
        &self,
        engine_timeout_ms: u64,
        is_file: impl Fn(&str) -> bool,
    ) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = Vec::new();
        if !self.redis_url.is_empty()
            && !self.redis_url.starts_with("redis://")
            && !self.redis_url.starts_with("rediss://")
        {
            out.push((
                "store.redis_url".into(),
                format!(
                    "'{}' is not a redis:// or rediss:// URL",
                    crate::store::redis::redact_url(&self.redis_url)
                ),
                "use redis://host:port/db (rediss:// for TLS), or leave empty for the in-memory store".into(),
            ));
        }
        for (key, what, fix) in super::store_check::topology_problems(self) {
            out.push((key.into(), what, fix.into()));
        }
        if !self.ca_file.is_empty() && !is_file(&self.ca_file) {
            out.push((
                "store.ca_file".into(),
                format!("'{}' is not a file", self.ca_file),
                "name a PEM file of CA certificates (relative paths start at this file's folder)"
                    .into(),
            ));
        }
        out.extend(self.timing_problems(engine_timeout_ms));
        out
    }

    /// Problems of `[store]` timing and budgets.
    fn timing_problems(&self, engine_timeout: u64) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let s = self;
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
        let floor = 2 * engine_timeout + 3 * s.op_timeout_ms;
        if s.claim_lease_ms != 0 && s.claim_lease_ms < floor {
            out.push((
                "store.claim_lease_ms".into(),
                format!(
                    "{} ms is shorter than the work before a run starts (2 x engine.timeout_ms + 3 x store.op_timeout_ms = {floor} ms)",
                    s.claim_lease_ms
                ),
                format!("use at least {floor}, or 0 (the default) for the run deadline plus store.claim_grace_ms"),
            ));
        }
        // The grace covers the writes after a run (record, replay); shorter
        // than one store operation, a live run's retry would give up on it.
        if s.claim_grace_ms < s.op_timeout_ms {
            out.push((
                "store.claim_grace_ms".into(),
                format!(
                    "{} ms is shorter than one store operation (store.op_timeout_ms = {} ms)",
                    s.claim_grace_ms, s.op_timeout_ms
                ),
                format!("use at least {} (default 5000)", s.op_timeout_ms),
            ));
        }
        if s.memory_principal_bytes != 0 && s.memory_principal_bytes < super::cache::MIN_BYTES {
            out.push((
                "store.memory_principal_bytes".into(),
                format!(
                    "{} bytes is below the 64 KiB minimum",
                    s.memory_principal_bytes
                ),
                "set at least 65536, or 0 (the default) for a share sized to the machine".into(),
            ));
        }
        if s.memory_total_bytes != 0 && s.memory_total_bytes < s.memory_principal_bytes {
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
}
