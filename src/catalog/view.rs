//! A caller's view of the catalog: the tenant's capabilities joined with
//! the caller's promoted programs, its `catalog_version`, and the lookups
//! that validate, the plan and the catalog tool make on it.

use super::{Entry, TenantCatalog, canonical};
use crate::pilotage::RiskHints;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The catalog as one caller sees it right now.
pub struct CatalogView {
    pub version: String,
    /// Capabilities then programs, each ordered by id.
    pub entries: Vec<Arc<Entry>>,
    /// Entry id → content digest, the changed_since baseline.
    pub(super) digests: Arc<BTreeMap<String, String>>,
    /// Capability id → (position in `entries`, risk).
    pub(super) index: Arc<HashMap<String, (usize, RiskHints)>>,
}

impl CatalogView {
    pub fn get(&self, id: &str) -> Option<&Entry> {
        if let Some((i, _)) = self.index.get(id) {
            return self.entries.get(*i).map(|e| &**e);
        }
        // Programs: few per caller, after the capabilities.
        self.entries[self.index.len().min(self.entries.len())..]
            .iter()
            .find(|e| e.id() == id)
            .map(|e| &**e)
    }

    /// Risk of a capability the caller can see.
    pub fn capability_risk(&self, id: &str) -> Option<RiskHints> {
        self.index.get(id).map(|(_, r)| *r)
    }

    /// Names a workflow step may call: the visible capabilities, sorted.
    pub fn callable_names(&self) -> Vec<String> {
        self.entries[..self.index.len().min(self.entries.len())]
            .iter()
            .map(|e| e.id().to_string())
            .collect()
    }

    /// Entry id → digest map stored as the changed_since baseline.
    pub fn snapshot(&self) -> Value {
        json!(*self.digests)
    }

    /// A view of these capability entries alone, for unit tests of what
    /// reads a view; an entry's risk comes from its `risk_hints` (absent:
    /// the worst case).
    #[cfg(test)]
    pub fn from_capabilities(mut entries: Vec<Value>) -> CatalogView {
        entries.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        let worst = RiskHints {
            read_only: false,
            destructive: true,
            open_world: true,
        };
        let index = entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let id = e.get("id")?.as_str()?.to_string();
                let hints = e
                    .get("risk_hints")
                    .and_then(RiskHints::from_json)
                    .unwrap_or(worst);
                Some((id, (i, hints)))
            })
            .collect();
        CatalogView {
            version: "cv_test".into(),
            entries: entries
                .into_iter()
                .map(|e| Arc::new(Entry::new(e).0))
                .collect(),
            digests: Arc::new(BTreeMap::new()),
            index: Arc::new(index),
        }
    }
}

/// Joins a tenant's capabilities with the caller's programs into one view.
pub(super) fn compose(tenant: &TenantCatalog, programs: &[Value]) -> CatalogView {
    let programs: Vec<&Value> = programs.iter().filter_map(|p| p.get("entry")).collect();
    if programs.is_empty() {
        return CatalogView {
            version: tenant.version.clone(),
            entries: tenant.entries.clone(),
            digests: tenant.digests.clone(),
            index: tenant.index.clone(),
        };
    }
    let mut hasher = tenant.prefix.clone();
    let mut digests = (*tenant.digests).clone();
    let mut entries = tenant.entries.clone();
    for entry in programs {
        let (entry, digest) = Entry::new(entry.clone());
        hasher.add(&digest);
        if entry.member("id").is_some() {
            digests.insert(entry.id().to_string(), canonical::revision(&digest));
        }
        entries.push(Arc::new(entry));
    }
    CatalogView {
        version: hasher.token(),
        entries,
        digests: Arc::new(digests),
        index: tenant.index.clone(),
    }
}
