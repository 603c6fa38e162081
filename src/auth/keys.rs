//! The API keys in force, swapped whole when `auth.keys_file` changes.
//!
//! Keys are looked up by the SHA-256 of the bearer value. A reload reads the
//! keys file again, checks the keys with the rest of the configuration as at
//! start, and only then replaces the table: a broken edit keeps the keys in
//! force (and says why in the log), so a typo never locks every caller out.

use super::policy::{Permissions, RiskCeiling};
use crate::config::ApiKeyConfig;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

/// What one API key stands for.
#[derive(Debug, Clone)]
pub struct KeyPrincipal {
    pub name: String,
    pub tenant: String,
    pub permissions: Permissions,
    pub ceiling: RiskCeiling,
}

/// The table of keys, by hash.
#[derive(Debug, Default)]
pub struct KeyTable(RwLock<Arc<HashMap<String, KeyPrincipal>>>);

impl KeyTable {
    pub fn new(keys: &[ApiKeyConfig]) -> Self {
        Self(RwLock::new(Arc::new(table(keys))))
    }

    /// The key whose SHA-256 (lowercase hex) is `hash`.
    pub fn get(&self, hash: &str) -> Option<KeyPrincipal> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(hash)
            .cloned()
    }

    pub fn contains(&self, hash: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(hash)
    }

    /// Puts `keys` (already validated) in force.
    pub fn replace(&self, keys: &[ApiKeyConfig]) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(table(keys));
    }

    pub fn len(&self) -> usize {
        self.0.read().unwrap_or_else(PoisonError::into_inner).len()
    }
}

fn table(keys: &[ApiKeyConfig]) -> HashMap<String, KeyPrincipal> {
    keys.iter()
        .map(|k| {
            // Values were validated when the configuration (or the reloaded
            // keys file) was read.
            let (permissions, ceiling) = crate::config::policy::resolve(
                k.permissions.as_deref(),
                k.max_risk.as_deref(),
                &k.forbid_risk_hints,
            );
            (
                k.sha256.to_ascii_lowercase(),
                KeyPrincipal {
                    name: k.name.clone(),
                    tenant: k.tenant.clone(),
                    permissions,
                    ceiling,
                },
            )
        })
        .collect()
}

impl crate::gateway::Gateway {
    /// Reads `auth.keys_file` again and puts its keys (beside those of
    /// `gateway.toml`) in force, or keeps the current ones when the file is
    /// unreadable or a key in it is wrong.
    pub fn reload_api_keys(&self) {
        if self.config.auth.keys_file.is_empty() {
            return;
        }
        match self.config.reloaded_api_keys() {
            Ok(keys) => {
                let before = self.auth.key_count();
                self.auth.replace_keys(&keys);
                tracing::info!(keys = keys.len(), before, "API keys reloaded");
            }
            Err(problems) => {
                for p in problems {
                    tracing::warn!(file = %p.file, key = %p.key, problem = %p.problem,
                        fix = %p.fix, "API keys file not reloaded; keeping the keys in force");
                }
            }
        }
    }
}
