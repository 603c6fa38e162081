//! The capability registry: a global set of capabilities, each tenant's view of it
//! (seeded patterns plus admin additions, removals and per-tenant overrides) and the
//! per-tenant usage counters the catalog shows.

use std::collections::{BTreeMap, BTreeSet};

use super::capability::Capability;
use super::seed::{Seed, pattern_matches};

/// What an admin edit can get wrong.
#[derive(Debug, PartialEq, Eq)]
pub enum RegistryError {
    UnknownTenant(String),
    UnknownCapability(String),
}

#[derive(Clone, Debug, Default)]
struct TenantView {
    allow: Vec<String>,
    deny: Vec<String>,
    added: BTreeSet<String>,
    removed: BTreeSet<String>,
    overrides: BTreeMap<String, Capability>,
    usage: BTreeMap<String, u64>,
}

impl TenantView {
    fn sees(&self, name: &str) -> bool {
        if self.removed.contains(name) {
            return false;
        }
        self.added.contains(name)
            || (self.allow.iter().any(|p| pattern_matches(p, name))
                && !self.deny.iter().any(|p| pattern_matches(p, name)))
    }
}

/// The registry of one engine.
#[derive(Clone, Debug)]
pub struct Registry {
    global: BTreeMap<String, Capability>,
    tenants: BTreeMap<String, TenantView>,
}

impl Registry {
    pub fn from_seed(seed: &Seed) -> Self {
        let global = seed
            .capabilities
            .iter()
            .map(|c| (c.name.clone(), c.clone()))
            .collect();
        let tenants = seed
            .tenants
            .iter()
            .map(|(name, t)| {
                let view = TenantView {
                    allow: t.allow.clone(),
                    deny: t.deny.clone(),
                    ..TenantView::default()
                };
                (name.clone(), view)
            })
            .collect();
        Registry { global, tenants }
    }

    /// The capabilities `tenant` sees, by name (sorted), with tenant overrides applied.
    pub fn visible(&self, tenant: &str) -> BTreeMap<String, Capability> {
        let Some(view) = self.tenants.get(tenant) else {
            return BTreeMap::new();
        };
        let names: BTreeSet<&String> = self.global.keys().chain(view.overrides.keys()).collect();
        names
            .into_iter()
            .filter(|name| view.sees(name))
            .filter_map(|name| {
                let capability = view.overrides.get(name).or_else(|| self.global.get(name))?;
                Some((name.clone(), capability.clone()))
            })
            .collect()
    }

    /// Names in the global registry (what "did you mean" suggestions come from).
    pub fn global_names(&self) -> BTreeSet<String> {
        self.global.keys().cloned().collect()
    }

    pub fn usage(&self, tenant: &str, name: &str) -> u64 {
        self.tenants
            .get(tenant)
            .and_then(|v| v.usage.get(name))
            .copied()
            .unwrap_or(0)
    }

    pub fn record_use(&mut self, tenant: &str, name: &str) {
        if let Some(view) = self.tenants.get_mut(tenant) {
            *view.usage.entry(name.to_owned()).or_insert(0) += 1;
        }
    }

    /// Upserts a capability globally (`tenant` = None) or for one tenant.
    ///
    /// A global edit of an existing name keeps every tenant's visibility; a new
    /// global name becomes visible to every tenant. A tenant edit overrides the
    /// definition for that tenant only and makes it visible there.
    pub fn put(
        &mut self,
        capability: Capability,
        tenant: Option<&str>,
    ) -> Result<(), RegistryError> {
        let name = capability.name.clone();
        match tenant {
            None => {
                let is_new = self.global.insert(name.clone(), capability).is_none();
                if is_new {
                    for view in self.tenants.values_mut() {
                        view.removed.remove(&name);
                        view.added.insert(name.clone());
                    }
                }
            }
            Some(t) => {
                let view = self
                    .tenants
                    .get_mut(t)
                    .ok_or_else(|| RegistryError::UnknownTenant(t.to_owned()))?;
                view.removed.remove(&name);
                view.added.insert(name.clone());
                view.overrides.insert(name, capability);
            }
        }
        Ok(())
    }

    /// Removes a capability globally (`tenant` = None) or from one tenant's view.
    pub fn remove(&mut self, name: &str, tenant: Option<&str>) -> Result<(), RegistryError> {
        match tenant {
            None => {
                let existed = self.global.remove(name).is_some();
                let mut overridden = false;
                for view in self.tenants.values_mut() {
                    overridden |= view.overrides.remove(name).is_some();
                    view.added.remove(name);
                    view.removed.remove(name);
                }
                if existed || overridden {
                    Ok(())
                } else {
                    Err(RegistryError::UnknownCapability(name.to_owned()))
                }
            }
            Some(t) => {
                if !self.tenants.contains_key(t) {
                    return Err(RegistryError::UnknownTenant(t.to_owned()));
                }
                if !self.visible(t).contains_key(name) {
                    return Err(RegistryError::UnknownCapability(name.to_owned()));
                }
                if let Some(view) = self.tenants.get_mut(t) {
                    view.overrides.remove(name);
                    view.added.remove(name);
                    view.removed.insert(name.to_owned());
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::seed::DEFAULT_SEED;

    fn registry() -> Registry {
        Registry::from_seed(&Seed::parse(DEFAULT_SEED).expect("seed"))
    }

    #[test]
    fn seeded_visibility_differs_per_tenant() {
        let r = registry();
        assert_eq!(r.visible("acme").len(), 11);
        let globex = r.visible("globex");
        assert!(!globex.contains_key("mail.send"));
        assert!(!globex.contains_key("crm.delete_customer"));
        assert_eq!(globex.len(), 9);
        let public: Vec<_> = r.visible("public").into_keys().collect();
        assert_eq!(
            public,
            vec![
                "crm.find_customer",
                "crm.get_customer",
                "util.echo",
                "util.fail",
                "util.sleep"
            ]
        );
    }

    #[test]
    fn admin_edits_move_visibility() {
        let mut r = registry();
        r.remove("util.echo", Some("public")).expect("removes");
        assert!(!r.visible("public").contains_key("util.echo"));
        assert!(r.visible("acme").contains_key("util.echo"));
        let mut mail = r.visible("acme")["mail.send"].clone();
        mail.title = "Mail for globex".into();
        r.put(mail, Some("globex")).expect("puts");
        assert_eq!(r.visible("globex")["mail.send"].title, "Mail for globex");
        assert_eq!(
            r.remove("nope.nope", None),
            Err(RegistryError::UnknownCapability("nope.nope".into()))
        );
    }
}
