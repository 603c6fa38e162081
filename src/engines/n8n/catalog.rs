//! The catalog: n8n's node descriptions (`GET /types/nodes.json`, readable
//! only with a login cookie) read with the asking tenant's own login, kept
//! in their compact form, and the entries built from them; read again only
//! when `GET /types/node-versions.json` (51 KB) changes. Every tenant of an
//! engine uses the engine's one copy, and engines that read the same
//! descriptions (two engine tables on one n8n) share one parsed copy, keyed
//! by a digest of the text n8n served. One capability entry per node type,
//! in name order, so the same n8n gives the same bytes. The ETag is a hash
//! of the entries.

use super::N8nEngine;
use super::check::TenantCredential;
use super::client::{Auth, Call, N8nAnswer};
use super::nodes::{Description, NodeCatalog, NodeType};
use super::risk::node_risk;
use super::schema::parameters_schema;
use crate::catalog::shared::Shared;
use crate::engines::{CatalogFetch, EngineError};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// A check reuses the node descriptions this long without asking n8n
/// whether they changed (a catalog read always asks).
const CHECK_REUSE: Duration = Duration::from_secs(10);

/// Node descriptions by SHA-256 of the text n8n served: held once however
/// many engines (and tenants) read the same.
static PARSED: LazyLock<Shared<NodeCatalog>> = LazyLock::new(Shared::default);

/// The node descriptions of the engine and the entries built from them.
pub(super) struct Cached {
    /// Hash of `/types/node-versions.json` they were read under.
    versions: String,
    read_at: Instant,
    catalog: Arc<NodeCatalog>,
    /// The entries as one JSON list: held as text and read again only for
    /// a tenant's fresh listing, so their schemas are not kept as a tree
    /// beside the catalog service's own copy.
    entries: Arc<str>,
    etag: String,
}

impl N8nEngine {
    /// The tenant's catalog entries (`NotModified` when `etag` still holds).
    pub(super) async fn entries(
        &self,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        let (entries, tag) = self.cached(tenant, true).await?;
        if etag == Some(tag.as_str()) {
            return Ok(CatalogFetch::NotModified);
        }
        let capabilities = serde_json::from_str(&entries).map_err(|e| {
            EngineError::Failed(format!("the n8n catalog's entries do not read ({e})"))
        })?;
        Ok(CatalogFetch::Fresh {
            etag: Some(tag),
            capabilities,
        })
    }

    /// The node descriptions, for the checks.
    pub(super) async fn node_catalog(&self, tenant: &str) -> Result<Arc<NodeCatalog>, EngineError> {
        self.cached(tenant, false).await?;
        let guard = self.nodes.lock().await;
        guard
            .as_ref()
            .map(|c| c.catalog.clone())
            .ok_or_else(|| EngineError::Failed("n8n's node descriptions are not read".into()))
    }

    /// The cached entries and ETag, revalidated against n8n's node versions
    /// (always when `fresh`, else when older than `CHECK_REUSE`). Reads
    /// with the tenant's own login, so a tenant n8n does not know gets
    /// nothing even when the cache is warm.
    async fn cached(&self, tenant: &str, fresh: bool) -> Result<(Arc<str>, String), EngineError> {
        let mut guard = self.nodes.lock().await;
        if !fresh
            && let Some(c) = guard.as_ref()
            && c.read_at.elapsed() < CHECK_REUSE
        {
            // The tenant's own login still has to work.
            self.secrets(tenant)?;
            return Ok((c.entries.clone(), c.etag.clone()));
        }
        let versions = self.read_text(tenant, "/types/node-versions.json").await?;
        let versions = hex::encode(Sha256::digest(versions.as_bytes()));
        if let Some(c) = guard.as_mut()
            && c.versions == versions
        {
            c.read_at = Instant::now();
            return Ok((c.entries.clone(), c.etag.clone()));
        }
        let text = self.read_text(tenant, "/types/nodes.json").await?;
        let digest = hex::encode(Sha256::digest(text.as_bytes()));
        let catalog = match PARSED.get(&digest) {
            Some(catalog) => catalog,
            None => {
                let parsed = NodeCatalog::from_text(&text).map_err(|e| {
                    EngineError::Failed(format!("reading n8n's node types: not a JSON list ({e})"))
                })?;
                PARSED.intern(&digest, parsed)
            }
        };
        drop(text);
        let entries: Vec<Value> = catalog
            .types
            .values()
            .filter_map(|t| entry(t, &self.settings.risk))
            .collect();
        let canonical = serde_json::to_string(&entries).unwrap_or_default();
        let etag = format!(
            "\"n8n-{}\"",
            hex::encode(Sha256::digest(canonical.as_bytes()))
        );
        drop(entries);
        let cached = Cached {
            versions,
            read_at: Instant::now(),
            catalog,
            entries: Arc::from(canonical),
            etag,
        };
        let out = (cached.entries.clone(), cached.etag.clone());
        *guard = Some(cached);
        Ok(out)
    }

    /// A 2xx text answer of a login-only path.
    async fn read_text(&self, tenant: &str, path: &str) -> Result<String, EngineError> {
        let answer = self
            .call(tenant, Call::get("catalog", path), Auth::Login, None)
            .await?;
        if !answer.status.is_success() {
            return Err(EngineError::Failed(format!(
                "reading {path}: {}",
                answer.error()
            )));
        }
        Ok(answer.text)
    }

    /// The credentials the tenant's user can use (`GET /rest/credentials`
    /// with its login: a member's API key may not list them).
    pub(super) async fn tenant_credentials(
        &self,
        tenant: &str,
    ) -> Result<Vec<TenantCredential>, EngineError> {
        let body = self
            .call_json(
                tenant,
                Call::get("check", "/rest/credentials"),
                Auth::Login,
                "listing the tenant's credentials",
            )
            .await?;
        Ok(credentials_of(&body))
    }
}

/// The credentials of a `/rest/credentials` answer (`{"data": [...]}`).
pub(super) fn credentials_of(body: &Value) -> Vec<TenantCredential> {
    body.get("data")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|c| {
                    let text = |k: &str| {
                        c.get(k).map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                    };
                    Some(TenantCredential {
                        id: text("id")?,
                        name: text("name").unwrap_or_default(),
                        kind: text("type")?,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How many `main` connections a fixed list has, and their names; `None`
/// when n8n computes them from the parameters (an expression). An AI
/// connection (`ai_languageModel`, `ai_tool`, ...) is no `main` input or
/// output: a sub-node has none, and the model of an LLM chain is attached, not fed.
fn fixed(list: &Value) -> Option<(usize, Vec<Value>)> {
    let names: Vec<Value> = list
        .as_array()?
        .iter()
        .map(|i| match i {
            Value::String(s) => json!(s),
            other => other.get("type").cloned().unwrap_or(Value::Null),
        })
        .filter(|kind| kind == "main")
        .collect();
    Some((names.len(), names))
}

/// One node type as a catalog entry (docs/n8n-v1.md, "The catalog").
pub(super) fn entry(t: &NodeType, rows: &[super::risk::RiskRow]) -> Option<Value> {
    let d: &Description = t.default_description()?;
    let mut e = Map::new();
    e.insert("id".into(), json!(t.name));
    e.insert("kind".into(), json!("capability"));
    e.insert("name".into(), json!(t.display_name));
    if !t.description.is_empty() {
        e.insert("description".into(), json!(t.description));
    }
    let properties = d.properties();
    e.insert("input_schema".into(), parameters_schema(&properties));
    let risk = node_risk(rows, &t.name, |parameter| {
        properties
            .iter()
            .find(|p| p.get("name").and_then(Value::as_str) == Some(parameter))
            .and_then(|p| p.get("default").cloned())
    });
    e.insert("risk".into(), json!(risk.risk));
    if !risk.when.is_empty() {
        e.insert("risk_when".into(), Value::Array(risk.when));
    }
    let mut n8n = Map::new();
    n8n.insert(
        "versions".into(),
        Value::Array(t.versions().into_iter().map(Value::Number).collect()),
    );
    n8n.insert(
        "default_version".into(),
        Value::Number(t.default_version.clone()),
    );
    n8n.insert("trigger".into(), json!(d.trigger));
    if let Some(max) = d.max_nodes {
        n8n.insert("max_nodes".into(), json!(max));
    }
    if d.webhook {
        n8n.insert("webhook".into(), json!(true));
    }
    if let Some((count, names)) = fixed(&d.outputs) {
        n8n.insert("outputs".into(), json!(count));
        let names = d
            .output_names
            .clone()
            .filter(|n| n.as_array().is_some_and(|a| a.len() == count))
            .unwrap_or(Value::Array(names));
        n8n.insert("output_names".into(), names);
    }
    if let Some((count, _)) = fixed(&d.inputs) {
        n8n.insert("inputs".into(), json!(count));
    }
    let credentials: Vec<Value> = d
        .credentials
        .iter()
        .filter_map(|c| {
            Some(json!({
                "name": c.get("name")?.as_str()?,
                "required": c.get("required").and_then(Value::as_bool).unwrap_or(false),
            }))
        })
        .collect();
    n8n.insert("credentials".into(), Value::Array(credentials));
    e.insert("n8n".into(), Value::Object(n8n));
    Some(Value::Object(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::n8n::nodes::tests::fixture;
    use crate::engines::n8n::risk::default_rows;

    fn entry_of(name: &str) -> Value {
        entry(&fixture().types[name], &default_rows()).unwrap()
    }

    #[test]
    fn an_entry_has_the_contracts_shape() {
        let http = entry_of("n8n-nodes-base.httpRequest");
        assert_eq!(http["id"], "n8n-nodes-base.httpRequest");
        assert_eq!(http["kind"], "capability");
        assert_eq!(http["name"], "HTTP Request");
        assert_eq!(http["risk"], "destructive");
        assert_eq!(
            http["risk_when"],
            json!([{"parameter": "method", "default": "GET", "in": ["GET", "HEAD", "OPTIONS"], "risk": "safe"}])
        );
        assert_eq!(http["n8n"]["default_version"], json!(4.5));
        assert_eq!(
            http["n8n"]["versions"],
            json!([1, 2, 3, 4, 4.1, 4.2, 4.3, 4.4, 4.5])
        );
        assert_eq!(http["n8n"]["trigger"], false);
        assert_eq!(http["n8n"]["outputs"], 1);
        assert_eq!(http["n8n"]["inputs"], 1);
        assert!(http["input_schema"]["properties"].get("url").is_some());
    }

    #[test]
    fn computed_outputs_are_absent_and_named_outputs_kept() {
        let switch = entry_of("n8n-nodes-base.switch");
        assert!(switch["n8n"].get("outputs").is_none());
        let merge = entry_of("n8n-nodes-base.merge");
        assert!(merge["n8n"].get("inputs").is_none());
        assert_eq!(merge["n8n"]["outputs"], 1);
        let r#if = entry_of("n8n-nodes-base.if");
        assert_eq!(r#if["n8n"]["outputs"], 2);
        assert_eq!(r#if["n8n"]["output_names"], json!(["true", "false"]));
        let manual = entry_of("n8n-nodes-base.manualTrigger");
        assert_eq!(manual["n8n"]["trigger"], true);
        assert_eq!(manual["n8n"]["max_nodes"], 1);
        assert!(r#if["n8n"].get("max_nodes").is_none());
        assert_eq!(manual["n8n"]["inputs"], 0);
        assert_eq!(manual["risk"], "safe");
    }

    #[test]
    fn ai_connections_are_no_main_inputs_or_outputs() {
        let catalog = crate::engines::n8n::nodes::NodeCatalog::from_descriptions(&[
            json!({"name": "@n8n/n8n-nodes-langchain.lmChatOpenAi", "group": ["transform"],
                   "version": 1, "inputs": [], "outputs": ["ai_languageModel"], "properties": []}),
            json!({"name": "@n8n/n8n-nodes-langchain.informationExtractor", "group": ["transform"],
                   "version": 1, "inputs": ["main", {"type": "ai_languageModel", "required": true}],
                   "outputs": ["main"], "properties": []}),
        ]);
        let model = entry(&catalog.types["@n8n/n8n-nodes-langchain.lmChatOpenAi"], &[]).unwrap();
        assert_eq!(
            (&model["n8n"]["inputs"], &model["n8n"]["outputs"]),
            (&json!(0), &json!(0))
        );
        let extractor = entry(
            &catalog.types["@n8n/n8n-nodes-langchain.informationExtractor"],
            &[],
        )
        .unwrap();
        assert_eq!(extractor["n8n"]["inputs"], 1);
        assert_eq!(extractor["n8n"]["output_names"], json!(["main"]));
    }

    #[test]
    fn entries_are_the_same_bytes_every_time() {
        let build = || {
            let entries: Vec<Value> = fixture()
                .types
                .values()
                .filter_map(|t| entry(t, &default_rows()))
                .collect();
            serde_json::to_string(&entries).unwrap()
        };
        assert_eq!(build(), build());
    }

    #[test]
    fn credentials_are_read_from_the_listing() {
        let body = json!({"data": [{"id": "abc", "name": "Billing API", "type": "httpBasicAuth"}, {"name": "no id"}]});
        assert_eq!(
            credentials_of(&body),
            vec![TenantCredential {
                id: "abc".into(),
                name: "Billing API".into(),
                kind: "httpBasicAuth".into()
            }]
        );
    }
}
