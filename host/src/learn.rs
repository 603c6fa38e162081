//! The learn step (Part II §6.2, Part III §4.1): the guide index, and guide
//! bodies through the on-disk cache. The index is metadata only, so it is
//! always fetched; a body is fetched only when its (server, language, id,
//! version) is not cached.

use crate::discovery::GUIDE_TOOL;
use crate::guide_cache::{GuideCache, GuideKey};
use crate::server::{CallError, PilotageServer, Timeouts, args, call_structured};
use serde_json::{Value, json};

/// One guide of the index.
#[derive(Debug, Clone, PartialEq)]
pub struct GuideMeta {
    pub id: String,
    pub title: String,
    /// `core`, `reference` or `examples`; an unknown level reads as
    /// `reference` (Part II §1.3).
    pub level: String,
    pub version: String,
    pub size_bytes: Option<u64>,
    pub topics: Vec<String>,
}

impl GuideMeta {
    fn parse(v: &Value) -> Option<GuideMeta> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let level = match s("level").as_deref() {
            Some(l @ ("core" | "reference" | "examples")) => l.to_string(),
            _ => "reference".to_string(),
        };
        Some(GuideMeta {
            id: s("id")?,
            title: s("title").unwrap_or_default(),
            level,
            version: s("version")?,
            size_bytes: v.get("size_bytes").and_then(Value::as_u64),
            topics: v
                .get("topics")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        })
    }
}

/// A guide body and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Guide {
    pub meta: GuideMeta,
    pub body: String,
    pub cached: bool,
}

/// The guide index of a Language. Entries without an id or version are
/// skipped: they cannot be fetched or cached.
pub async fn index<S: PilotageServer>(
    server: &S,
    language: &str,
    timeouts: Timeouts,
) -> Result<Vec<GuideMeta>, CallError> {
    let v = call_structured(
        server,
        GUIDE_TOOL,
        args([("language", json!(language))]),
        timeouts.call,
    )
    .await?;
    let list = v
        .get("guides")
        .and_then(Value::as_array)
        .ok_or_else(|| CallError::Malformed {
            tool: GUIDE_TOOL.into(),
            what: "no `guides` array".into(),
        })?;
    Ok(list.iter().filter_map(GuideMeta::parse).collect())
}

/// One guide body: from the cache when this exact version is there, else
/// fetched and stored. A cache that cannot be written is not an error.
pub async fn fetch<S: PilotageServer>(
    server: &S,
    cache: Option<&GuideCache>,
    language: &str,
    meta: &GuideMeta,
    timeouts: Timeouts,
) -> Result<Guide, CallError> {
    let key = GuideKey {
        server: server.identity(),
        language,
        id: &meta.id,
        version: &meta.version,
    };
    if let Some(body) = cache.and_then(|c| c.get(&key)) {
        return Ok(Guide {
            meta: meta.clone(),
            body,
            cached: true,
        });
    }
    let v = call_structured(
        server,
        GUIDE_TOOL,
        args([("language", json!(language)), ("id", json!(meta.id))]),
        timeouts.call,
    )
    .await?;
    let guide = v.get("guide");
    let body = guide
        .and_then(|g| g.get("body"))
        .and_then(Value::as_str)
        .ok_or_else(|| CallError::Malformed {
            tool: GUIDE_TOOL.into(),
            what: "no `guide.body` string".into(),
        })?
        .to_string();
    // Cache under the version the body itself states, when it states one:
    // that is the version this text belongs to.
    let version = guide
        .and_then(|g| g.get("version"))
        .and_then(Value::as_str)
        .unwrap_or(&meta.version);
    if let Some(c) = cache {
        let _ = c.put(&GuideKey { version, ..key }, &body);
    }
    Ok(Guide {
        meta: meta.clone(),
        body,
        cached: false,
    })
}

/// The core guide of a Language (the first guide of level `core`), or
/// `None` when the server lists none.
pub async fn core<S: PilotageServer>(
    server: &S,
    cache: Option<&GuideCache>,
    language: &str,
    timeouts: Timeouts,
) -> Result<Option<Guide>, CallError> {
    let guides = index(server, language, timeouts).await?;
    match guides.iter().find(|g| g.level == "core") {
        Some(meta) => fetch(server, cache, language, meta, timeouts)
            .await
            .map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_level_reads_as_reference() {
        let g = GuideMeta::parse(&json!({"id": "x", "version": "1", "level": "tutorial"}))
            .expect("meta");
        assert_eq!(g.level, "reference");
        assert!(GuideMeta::parse(&json!({"id": "x", "level": "core"})).is_none());
    }
}
