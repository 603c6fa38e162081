//! The API keys in force, swapped whole when `auth.keys_file` changes.
//!
//! Keys are looked up by the SHA-256 of the bearer value. A reload reads the
//! keys file again, checks the keys with the rest of the configuration as at
//! start, and only then replaces the table: a broken edit keeps the keys in
//! force (and says why in the log), so a typo never locks every caller out.

use super::policy::{Permissions, RiskCeiling, RiskLevel};
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
    pub approve_above: Option<RiskLevel>,
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
            let policy = crate::config::policy::resolve(k.policy());
            (
                k.sha256.to_ascii_lowercase(),
                KeyPrincipal {
                    name: k.name.clone(),
                    tenant: k.tenant.clone(),
                    permissions: policy.permissions,
                    ceiling: policy.ceiling,
                    approve_above: policy.approve_above,
                },
            )
        })
        .collect()
}
