//! `[cache]`: the byte budgets of the gateway's in-process caches. Each cache
//! weighs its entries in estimated bytes, so these budgets bound memory
//! whatever the size of one entry.

use serde::Deserialize;

const MIB: u64 = 1024 * 1024;
/// Below this a cache holds too little to be worth having.
pub(super) const MIN_BYTES: u64 = 64 * 1024;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// Validation verdicts (diagnostics and plans), shared by validate and
    /// execute's re-validation.
    pub verdict_bytes: u64,
    /// Tenants' mapped catalogs.
    pub catalog_bytes: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            verdict_bytes: 16 * MIB,
            catalog_bytes: 32 * MIB,
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
        ] {
            if value < MIN_BYTES {
                out.push((
                    key.to_string(),
                    format!("{value} bytes is below the 64 KiB minimum"),
                    "set at least 65536, or remove the key for the default".to_string(),
                ));
            }
        }
        out
    }
}
