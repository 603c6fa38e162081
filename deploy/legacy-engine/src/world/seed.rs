//! The seed: capabilities, tenants (with the capability patterns each may see) and
//! the starting world. The crate ships `seed.json`; `--seed FILE` replaces it, and
//! `POST /admin/reset` returns to whichever seed the engine started with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use super::capability::Capability;
use super::tenant::Customer;

/// The seed shipped with the engine.
pub const DEFAULT_SEED: &str = include_str!("../../seed.json");

/// A parsed seed file.
#[derive(Clone, Debug, Deserialize)]
pub struct Seed {
    pub capabilities: Vec<Capability>,
    pub tenants: BTreeMap<String, TenantSeed>,
    pub world: WorldSeed,
}

/// Which capabilities a tenant sees: names matching an `allow` pattern and no `deny`
/// pattern. A pattern is `*`, a prefix ending in `.*` (`mail.*`) or an exact name.
#[derive(Clone, Debug, Deserialize)]
pub struct TenantSeed {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    /// Replaces the shared starting world for this tenant.
    #[serde(default)]
    pub world: Option<WorldSeed>,
}

/// The starting world of a tenant.
#[derive(Clone, Debug, Deserialize)]
pub struct WorldSeed {
    pub customers: Vec<Customer>,
}

impl Seed {
    /// Parses and checks seed text.
    pub fn parse(text: &str) -> Result<Seed, String> {
        let seed: Seed = serde_json::from_str(text).map_err(|e| format!("invalid seed: {e}"))?;
        if seed.tenants.is_empty() {
            return Err("invalid seed: no tenants".to_owned());
        }
        let mut names = BTreeSet::new();
        for capability in &seed.capabilities {
            if !names.insert(capability.name.as_str()) {
                return Err(format!(
                    "invalid seed: capability '{}' appears twice",
                    capability.name
                ));
            }
        }
        Ok(seed)
    }

    /// Loads the seed from `path`, or the shipped one.
    pub fn load(path: Option<&Path>) -> Result<Seed, String> {
        match path {
            None => Seed::parse(DEFAULT_SEED),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read seed {}: {e}", path.display()))?;
                Seed::parse(&text)
            }
        }
    }
}

/// True when `name` matches a visibility pattern.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some("") => true,
        Some(prefix) if prefix.ends_with('.') => name.starts_with(prefix),
        _ => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_seed_parses() {
        let seed = Seed::parse(DEFAULT_SEED).expect("shipped seed is valid");
        assert_eq!(seed.tenants.len(), 3);
        assert_eq!(seed.capabilities.len(), 11);
        assert_eq!(seed.world.customers.len(), 3);
    }

    #[test]
    fn patterns() {
        assert!(pattern_matches("*", "crm.x"));
        assert!(pattern_matches("mail.*", "mail.send"));
        assert!(!pattern_matches("mail.*", "mailer.send"));
        assert!(pattern_matches("util.echo", "util.echo"));
        assert!(!pattern_matches("util.echo", "util.echo2"));
    }
}
