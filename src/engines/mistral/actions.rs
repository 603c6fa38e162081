//! The catalog: `GET /v2/actions` paged by name with an inclusive marker
//! (the answer's `next` link filters on an empty namespace and finds
//! nothing, so it is never followed), each action mapped to an entry with
//! its input schema and its effect from the risk table, filtered by the
//! tenant's visibility. The ETag is our own: a hash of the entries, so an
//! unchanged listing answers `NotModified`. The tenant's own workflows
//! (`workflows`) join the actions as entries a `workflow:` task may call.

use super::client::{Body, Call};
use super::risk::{effect, glob_match};
use super::{MistralEngine, input_spec};
use crate::engines::{CatalogFetch, EngineError};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

impl MistralEngine {
    /// The tenant's visible actions as catalog entries.
    pub(super) async fn actions(
        &self,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        let listed = self.list_actions(tenant).await?;
        let mut entries: Vec<Value> = listed.iter().filter_map(|a| self.entry(a)).collect();
        let actions: std::collections::BTreeSet<String> = entries
            .iter()
            .filter_map(|e| e["name"].as_str().map(str::to_string))
            .collect();
        for workflow in self.workflows(tenant).await? {
            let name = workflow["name"].as_str().unwrap_or("");
            if actions.contains(name) {
                // A `workflow:` task could name it, but an entry id is one
                // thing: the action keeps the name.
                tracing::warn!(workflow = %name, "a workflow named like an action is not offered");
            } else {
                entries.push(workflow);
            }
        }
        let visible = self.settings.visible_globs(tenant);
        let mut entries: Vec<Value> = entries
            .into_iter()
            .filter(|e| {
                let name = e["name"].as_str().unwrap_or("");
                visible.is_none_or(|globs| globs.iter().any(|g| glob_match(g, name)))
            })
            .collect();
        entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let canonical = serde_json::to_string(&entries).unwrap_or_default();
        let tag = format!(
            "\"m-{}\"",
            hex::encode(Sha256::digest(canonical.as_bytes()))
        );
        if etag == Some(tag.as_str()) {
            return Ok(CatalogFetch::NotModified);
        }
        Ok(CatalogFetch::Fresh {
            etag: Some(tag),
            capabilities: entries,
        })
    }

    /// Every action, page by page: each page after the first starts at the
    /// previous page's last name (the marker is inclusive), which is dropped.
    async fn list_actions(&self, tenant: &str) -> Result<Vec<Value>, EngineError> {
        let limit = self.settings.page_size.max(1);
        let mut all: Vec<Value> = Vec::new();
        let mut marker: Option<String> = None;
        for _ in 0..self.settings.max_pages.max(1) {
            // A later page repeats the marker: ask for one more.
            let asked = limit + usize::from(marker.is_some());
            let mut path = format!("/actions?limit={asked}&sort_keys=name&sort_dirs=asc");
            if let Some(m) = &marker {
                path.push_str("&marker=");
                path.push_str(&utf8_percent_encode(m, NON_ALPHANUMERIC).to_string());
            }
            let body = self
                .call_json(
                    tenant,
                    Call::get("catalog", &path),
                    Body::None,
                    "listing actions",
                )
                .await?;
            let Some(page) = body.get("actions").and_then(Value::as_array) else {
                return Err(EngineError::Failed(
                    "listing actions: the answer has no 'actions' array".into(),
                ));
            };
            let full = page.len() >= asked;
            let mut page = page.iter();
            if let Some(m) = &marker {
                // An unknown marker (the action was deleted meanwhile)
                // silently restarts the list: never loop, fail instead.
                match page.next() {
                    Some(first) if first.get("name").and_then(Value::as_str) == Some(m) => {}
                    _ => {
                        return Err(EngineError::Failed(format!(
                            "listing actions: the page after '{m}' did not start with it (the action list changed while it was read); retry"
                        )));
                    }
                }
            }
            let before = all.len();
            all.extend(page.cloned());
            if !full || all.len() == before {
                return Ok(all);
            }
            marker = all
                .last()
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        Err(EngineError::Failed(format!(
            "listing actions: more than {} pages of {limit} (engine.mistral.max_pages)",
            self.settings.max_pages
        )))
    }

    /// One action as a catalog entry (fields as `mapping().catalog` reads them).
    fn entry(&self, action: &Value) -> Option<Value> {
        let name = action.get("name").and_then(Value::as_str)?;
        let mut e = Map::new();
        e.insert("name".into(), json!(name));
        if let Some(d) = action
            .get("description")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            e.insert("description".into(), json!(d));
        }
        let spec = action.get("input").and_then(Value::as_str).unwrap_or("");
        e.insert("input_schema".into(), input_spec::schema(spec));
        if let Some(effect) = effect(&self.settings.risk, name) {
            e.insert("effect".into(), json!(effect));
        }
        let mut tags: Vec<Value> = action
            .get("tags")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        tags.insert(0, json!("action"));
        e.insert("tags".into(), Value::Array(tags));
        Some(Value::Object(e))
    }
}
