//! From the engine's listing to a tenant's catalog: each capability mapped
//! through the engine profile's catalog fields (schemas moved out of the
//! listing, not copied, where the paths allow), its risk judged, hashed and
//! weighed in one pass.

use super::canonical::{self, EntryDigest, VersionHasher, in_halves};
use super::{CatalogService, Entry, KIND_CAPABILITY, TenantCatalog};
use crate::engines::json_path::{pick, pick_field};
use crate::engines::profile::EffectRisk;
use crate::pilotage::RiskHints;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

impl CatalogService {
    /// A tenant's catalog from the engine's listing. Each capability is
    /// mapped, hashed and weighed in one pass while it is in cache (on two
    /// threads for large listings), and its schemas are moved out of the
    /// listing rather than copied.
    pub(super) fn build(&self, capabilities: Vec<Value>) -> TenantCatalog {
        let mut mapped: Vec<Mapped> = in_halves(capabilities, |cap| self.mapped(cap))
            .into_iter()
            .flatten()
            .collect();
        // Stable: of two capabilities with one id, the engine's first wins.
        mapped.sort_by(|a, b| a.id.cmp(&b.id));
        mapped.dedup_by(|a, b| a.id == b.id);
        let mut prefix = VersionHasher::default();
        let mut index = HashMap::with_capacity(mapped.len());
        let mut digests = BTreeMap::new();
        let mut out = Vec::with_capacity(mapped.len());
        let mut weight = 512;
        for Mapped {
            id,
            entry,
            risk,
            digest,
            weight: entry_weight,
        } in mapped
        {
            prefix.add(&digest);
            let revision = canonical::revision(&digest);
            // The entry, its baseline row and its index row.
            weight += entry_weight
                + 64
                + 2 * crate::weigh::text(&id)
                + crate::weigh::text(&revision)
                + 64;
            digests.insert(id.clone(), revision);
            index.insert(id, (out.len(), risk));
            out.push(Arc::new(entry));
        }
        TenantCatalog {
            weight,
            entries: out,
            index: Arc::new(index),
            digests: Arc::new(digests),
            version: prefix.clone().token(),
            prefix,
        }
    }

    /// One engine capability mapped, written as text, hashed and weighed.
    fn mapped(&self, cap: Value) -> Option<Mapped> {
        let (id, entry, risk) = self.entry(cap)?;
        let (entry, digest) = Entry::new(entry);
        Some(Mapped {
            digest,
            weight: entry.weight(),
            id,
            entry,
            risk,
        })
    }

    /// Maps one engine capability to a Pilotage entry; volatile fields are
    /// simply never copied. The schemas, tags and kept members are moved
    /// out of `cap` when no two of their paths overlap (the usual case),
    /// copied otherwise.
    fn entry(&self, mut cap: Value) -> Option<(String, Value, RiskHints)> {
        let f = &self.fields;
        let id = pick(&cap, &f.name)?.as_str()?.to_string();
        let effect = pick_field(&cap, &f.effect)
            .and_then(Value::as_str)
            .unwrap_or("");
        // An unmapped effect is treated as the most dangerous one: fail closed.
        let risk = self
            .mapping
            .effect_risk(effect)
            .cloned()
            .unwrap_or_else(|| {
                tracing::warn!(%effect, capability = %id, key = "engine.mapping.effects",
                "engine effect in no value table; the capability counts as destructive");
                EffectRisk {
                    risk: "destructive".into(),
                    read_only: false,
                    destructive: true,
                    open_world: true,
                }
            });
        let hints = RiskHints {
            read_only: risk.read_only,
            destructive: risk.destructive,
            open_world: risk.open_world,
        };
        let name = pick_field(&cap, &f.title)
            .and_then(Value::as_str)
            .unwrap_or(&id)
            .to_string();
        let description = pick_field(&cap, &f.description)
            .and_then(Value::as_str)
            .map(str::to_string);
        let deprecated = pick_field(&cap, &f.deprecated).and_then(Value::as_bool) == Some(true);
        let mut take = |path: &str| -> Option<Value> {
            if self.moves_apart {
                take_field(&mut cap, path)
            } else {
                pick_field(&cap, path).cloned()
            }
        };
        let params = take(&f.params);
        let returns = take(&f.returns);
        let mut tags: Vec<Value> = match take(&f.tags) {
            Some(Value::Array(tags)) => tags,
            _ => Vec::new(),
        };
        if deprecated {
            tags.push(Value::String("deprecated".into()));
        }
        // Kept members are top-level members, not paths.
        let kept: Vec<(String, Value)> = f
            .kept
            .iter()
            .filter_map(|member| {
                let value = if self.moves_apart {
                    cap.get_mut(member).map(std::mem::take)
                } else {
                    cap.get(member).cloned()
                };
                value.map(|v| (member.clone(), v))
            })
            .collect();
        let mut e = Map::new();
        e.insert("id".into(), Value::String(id.clone()));
        e.insert("kind".into(), Value::String(KIND_CAPABILITY.into()));
        e.insert("name".into(), Value::String(name));
        if let Some(d) = description {
            e.insert("description".into(), Value::String(d));
        }
        e.insert(
            "input_schema".into(),
            params.unwrap_or_else(|| json!({"type": "object"})),
        );
        e.insert("output_schema".into(), returns.unwrap_or(Value::Null));
        e.insert("risk".into(), Value::String(risk.risk.clone()));
        e.insert("risk_hints".into(), hints.to_json());
        e.insert("tags".into(), Value::Array(tags));
        e.extend(kept);
        Some((id, Value::Object(e), hints))
    }
}

/// One engine capability as its tenant's catalog keeps it.
struct Mapped {
    id: String,
    entry: Entry,
    risk: RiskHints,
    digest: EntryDigest,
    /// Estimated heap bytes of `entry`.
    weight: u64,
}

/// Moves the value at a dotted path out of `value` (leaving `null`); an
/// empty path reads nothing.
fn take_field(value: &mut Value, path: &str) -> Option<Value> {
    if path.is_empty() {
        return None;
    }
    let slot = path.split('.').try_fold(value, |v, key| v.get_mut(key))?;
    Some(std::mem::take(slot))
}

/// Whether no two of `paths` (dotted, empty ones aside) name the same
/// field or one inside the other, so each can be moved out in turn.
pub(super) fn paths_apart(paths: &[&str]) -> bool {
    let inside = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}."));
    let paths: Vec<&str> = paths.iter().copied().filter(|p| !p.is_empty()).collect();
    paths.iter().enumerate().all(|(i, a)| {
        paths[i + 1..]
            .iter()
            .all(|b| !inside(a, b) && !inside(b, a))
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{engine_config, service};
    use serde_json::json;

    #[test]
    fn an_adapters_kept_members_reach_the_entry_and_others_do_not() {
        let config = engine_config("[engine]\nkind = \"n8n\"\nurl = \"http://127.0.0.1:1\"\n");
        let service = service(std::sync::Arc::new(crate::engines::n8n::N8nEngine::new(
            &config,
            Vec::new(),
        )));
        let cap = json!({"id": "n8n-nodes-base.httpRequest", "name": "HTTP Request",
            "risk": "destructive", "input_schema": {"type": "object"},
            "risk_when": [{"parameter": "method", "in": ["GET"], "risk": "safe"}],
            "n8n": {"outputs": 1}, "other": true});
        let (id, entry, _) = service.entry(cap.clone()).unwrap();
        assert_eq!(id, "n8n-nodes-base.httpRequest");
        assert_eq!(entry["risk"], "destructive");
        assert_eq!(entry["risk_when"], cap["risk_when"]);
        assert_eq!(entry["n8n"], json!({"outputs": 1}));
        assert!(entry.get("other").is_none());
    }

    #[test]
    fn overlapping_paths_are_not_moved() {
        use super::paths_apart;
        assert!(paths_apart(&["params", "returns", "", "tags", "n8n"]));
        assert!(paths_apart(&["spec.in", "spec.out", "spec.inner"]));
        assert!(!paths_apart(&["spec", "spec.out"]));
        assert!(!paths_apart(&["spec.out", "spec"]));
        assert!(!paths_apart(&["schema", "tags", "schema"]));
    }

    #[test]
    fn a_moved_field_leaves_null_and_a_missing_one_reads_nothing() {
        use super::take_field;
        let mut cap = json!({"spec": {"in": {"type": "object"}}, "tags": ["a"]});
        assert_eq!(
            take_field(&mut cap, "spec.in"),
            Some(json!({"type": "object"}))
        );
        assert_eq!(cap["spec"]["in"], serde_json::Value::Null);
        assert_eq!(take_field(&mut cap, "spec.out"), None);
        assert_eq!(take_field(&mut cap, ""), None);
    }

    /// With the params and returns paths one inside the other, the entry
    /// gets both (copied), as before moving was possible.
    #[test]
    fn a_mapping_whose_paths_overlap_copies_them() {
        let config = engine_config(
            "[engine]\nurl = \"http://127.0.0.1:1\"\n[engine.mapping.catalog]\nparams = \"spec\"\nreturns = \"spec.out\"\n",
        );
        let service = service(std::sync::Arc::new(
            crate::engines::rest::EngineClient::new(&config),
        ));
        assert!(!service.moves_apart);
        let cap = json!({"name": "a.b", "spec": {"out": {"type": "string"}}});
        let (_, entry, _) = service.entry(cap).unwrap();
        assert_eq!(entry["input_schema"], json!({"out": {"type": "string"}}));
        assert_eq!(entry["output_schema"], json!({"type": "string"}));
    }
}
