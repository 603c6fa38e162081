//! `[cache]`: the byte budgets of the gateway's in-process caches. Each cache
//! weighs its entries in estimated bytes, so these budgets bound memory
//! whatever the size of one entry.

use serde::Deserialize;

const MIB: u64 = 1024 * 1024;
/// Below this a cache holds too little to be worth having.
pub(super) const MIN_BYTES: u64 = 64 * 1024;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// Validation verdicts (diagnostics and plans), shared by validate and
    /// execute's re-validation.
    pub verdict_bytes: u64,
    /// Tenants' mapped catalogs (and principals' promoted-program listings).
    pub catalog_bytes: u64,
    /// Catalog list pages as answered (tree and JSON text), reused while
    /// the caller's `catalog_version` holds.
    pub page_bytes: u64,
    /// Opt-in departure from Part II §6.4, 0 (off) by default: how long
    /// validate and catalog pages may answer from a tenant's catalog (and a
    /// principal's promoted programs) confirmed that many milliseconds ago.
    /// Within it such an answer can miss a catalog change, and its
    /// `catalog_version` can lag. Execute never reuses: its drift check and
    /// re-validation always use a catalog confirmed after the call arrived.
    pub read_only_catalog_staleness_ms: u64,
    /// The key this setting had when it also applied to execute; refused
    /// at start with the way forward.
    #[schemars(skip)]
    #[serde(rename = "catalog_max_age_ms")]
    pub retired_catalog_max_age_ms: Option<u64>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            verdict_bytes: 16 * MIB,
            catalog_bytes: 32 * MIB,
            page_bytes: 4 * MIB,
            read_only_catalog_staleness_ms: 0,
            retired_catalog_max_age_ms: None,
        }
    }
}

impl CacheConfig {
    /// (key, problem, fix) triples.
    pub(super) fn validate(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for (key, value) in [
            ("cache.verdict_bytes", self.verdict_bytes),
            ("cache.catalog_bytes", self.catalog_bytes),
            ("cache.page_bytes", self.page_bytes),
        ] {
            if value < MIN_BYTES {
                out.push((
                    key.to_string(),
                    format!("{value} bytes is below the 64 KiB minimum"),
                    "set at least 65536, or remove the key for the default".to_string(),
                ));
            }
        }
        if self.retired_catalog_max_age_ms.is_some() {
            out.push((
                "cache.catalog_max_age_ms".to_string(),
                "this key is gone: execute now always uses a catalog the engine confirmed after the call arrived, and every other call does too by default".to_string(),
                "remove it; to let validate and catalog pages reuse a catalog for a bounded time (a departure from Part II §6.4), set cache.read_only_catalog_staleness_ms instead".to_string(),
            ));
        }
        out
    }

    /// (key, warning) pairs: settings that work but bend the specification.
    pub(super) fn warnings(&self) -> Vec<(String, String)> {
        let ms = self.read_only_catalog_staleness_ms;
        if ms == 0 {
            return Vec::new();
        }
        vec![(
            "cache.read_only_catalog_staleness_ms".to_string(),
            format!(
                "validate and catalog pages may answer from a catalog confirmed up to {ms} ms ago, a departure from Part II §6.4: within that time they can miss a catalog change and show an older catalog_version (execute always confirms the catalog); set 0 to keep the specification"
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::Path;

    fn demo() -> Config {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/gateway.local.toml");
        let text = std::fs::read_to_string(&path).expect("demo config");
        Config::parse(&text, &path).expect("demo config parses")
    }

    fn problem_keys(config: &Config) -> Vec<String> {
        config.validate().into_iter().map(|p| p.key).collect()
    }

    #[test]
    fn budgets_and_lease_are_checked_with_their_keys() {
        let mut config = demo();
        assert_eq!(problem_keys(&config), Vec::<String>::new());
        config.cache.verdict_bytes = 10;
        config.store.claim_lease_ms = 1_000;
        config.store.memory_principal_bytes = 1_000;
        config.store.memory_total_bytes = 500;
        config.languages[0].bounds.max_id_bytes = 0;
        let keys = problem_keys(&config);
        for key in [
            "cache.verdict_bytes",
            "store.claim_lease_ms",
            "store.memory_principal_bytes",
            "store.memory_total_bytes",
            "language[0].bounds.max_id_bytes",
        ] {
            assert!(
                keys.iter().any(|k| k == key),
                "{key} not reported: {keys:?}"
            );
        }
        let lease = config
            .validate()
            .into_iter()
            .find(|p| p.key == "store.claim_lease_ms")
            .map(|p| p.fix);
        assert_eq!(
            lease.as_deref(),
            Some(
                "use at least 16000, or 0 (the default) for the run deadline plus store.claim_grace_ms"
            )
        );
    }

    #[test]
    fn the_retired_age_key_is_refused_and_staleness_is_warned() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/gateway.local.toml"),
        )
        .expect("demo config");
        let old = format!("{text}\n[cache]\ncatalog_max_age_ms = 1000\n");
        let config = Config::parse(&old, Path::new("g.toml")).expect("parses");
        let refused = config
            .validate()
            .into_iter()
            .find(|p| p.key == "cache.catalog_max_age_ms")
            .expect("the old key is refused");
        assert!(
            refused.fix.contains("read_only_catalog_staleness_ms"),
            "{refused}"
        );
        let mut config = demo();
        assert!(
            config.warnings().is_empty(),
            "the demo keeps the specification"
        );
        config.cache.read_only_catalog_staleness_ms = 500;
        let warnings = config.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("Part II §6.4"), "{warnings:?}");
        assert!(problem_keys(&config).is_empty(), "a warning, not a problem");
    }
}
