//! `pilotage_manifest` (Part III §3.1): the discovery entry point. Also builds
//! the manifest object carried in initialize and `server/discover` `_meta`.

use super::{Reply, ToolResult};
use crate::auth::Reach;
use crate::auth::policy::Permissions;
use crate::gateway::{Gateway, LanguageRuntime};
use crate::mcp::answer::Rendered;
use crate::pilotage::VERSION;
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub const NAME: &str = "pilotage_manifest";
pub const GUIDES_TOOL: &str = "pilotage_get_guide";
pub const CATALOG_TOOL: &str = "pilotage_catalog";

/// A permission set's manifest answer, built and written once at start (it
/// depends only on configuration) and shared by every call.
pub struct ManifestAnswer {
    pub rendered: Arc<Rendered>,
    summary: String,
}

impl ManifestAnswer {
    pub fn new(gw: &Gateway, manifest: Value) -> Self {
        let n = gw.languages.len();
        Self {
            rendered: Rendered::new(manifest),
            summary: format!(
                "Pilotage {VERSION} manifest: {n} language{} ({}). Next: read the core guide with {GUIDES_TOOL}.",
                if n == 1 { "" } else { "s" },
                gw.language_names().join(", ")
            ),
        }
    }
}

pub fn call(manifest: &ManifestAnswer) -> ToolResult {
    Ok(Reply::shared(
        manifest.rendered.clone(),
        manifest.summary.clone(),
    ))
}

/// The Part II §5.1 manifest of a principal with `perms`: one entry per
/// Language, its effective capability map (the stages the principal may use),
/// and loop tools that exist exactly per that map. A passing caller (no
/// later request can be it) is declared what it gets: retention `none`, no
/// idempotency and no changed_since (nothing is kept for it to come back to).
pub fn build(gw: &Gateway, perms: Permissions, reach: Reach) -> Value {
    let languages: Vec<Value> = gw
        .languages
        .iter()
        .map(|l| language_entry(l, perms, reach))
        .collect();
    json!({"pilotage": VERSION, "languages": languages})
}

fn language_entry(lang: &LanguageRuntime, perms: Permissions, reach: Reach) -> Value {
    let c = &lang.config;
    let execution = perms.execution_of(c);
    let caps = &c.capabilities;
    let lasting = reach == Reach::Lasting;
    let mut e = Map::new();
    e.insert("name".into(), json!(c.name));
    e.insert("title".into(), json!(c.title));
    e.insert("guides".into(), json!(GUIDES_TOOL));
    e.insert("catalog".into(), json!(CATALOG_TOOL));
    let mut loop_tools = Map::new();
    loop_tools.insert("validate".into(), json!(c.tools.validate));
    let mut capabilities = Map::new();
    capabilities.insert(
        "guides".into(),
        json!({"topic_fetch": caps.guides.topic_fetch}),
    );
    capabilities.insert(
        "catalog".into(),
        json!({"search": caps.catalog.search, "changed_since": caps.catalog.changed_since && lasting}),
    );
    capabilities.insert("validate".into(), json!(true));
    capabilities.insert("plan".into(), json!(caps.plan));
    if execution.is_some() {
        loop_tools.insert("execute".into(), json!(c.tools.execute));
        capabilities.insert(
            "execute".into(),
            json!({"test_run": caps.execute.test_run, "idempotency": caps.execute.idempotency && lasting}),
        );
        if perms.trace_fetch_of(c) {
            loop_tools.insert("trace".into(), json!(c.tools.trace));
            capabilities.insert("trace_fetch".into(), json!(true));
        }
    }
    e.insert("loop".into(), Value::Object(loop_tools));
    e.insert("capabilities".into(), Value::Object(capabilities));
    e.insert("locator".into(), json!(lang.language.locator()));
    if let Some((schema, _)) = &lang.context_schema {
        e.insert("context_schema".into(), schema.clone());
    }
    if let Some(execution) = execution {
        e.insert("execution".into(), json!(execution));
        e.insert("trace".into(), json!(c.trace));
        let retention = if lasting {
            c.retention.as_str()
        } else {
            "none"
        };
        e.insert("retention".into(), json!(retention));
    }
    Value::Object(e)
}
