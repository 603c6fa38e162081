//! The lookup step (Part II §6.3, Part III §4.2): catalog `get` for the
//! gate's no-plan path, and paginated `list` for `pilotage catalog`. Cursors
//! are returned unchanged and the number of pages is bounded, so a server
//! that never stops paginating cannot hold the Host.

use crate::discovery::CATALOG_TOOL;
use crate::server::{CallError, PilotageServer, Timeouts, args, call_structured};
use serde_json::{Map, Value, json};

/// The most pages one listing follows.
pub const MAX_PAGES: usize = 50;

/// The most references the gate looks up one by one; beyond it the Host
/// stops asking and fails closed.
pub const MAX_REFERENCES: usize = 200;

/// One entry by id: `Ok(None)` when the server says `not_found`.
pub async fn get<S: PilotageServer>(
    server: &S,
    language: &str,
    id: &str,
    timeouts: Timeouts,
) -> Result<Option<Value>, CallError> {
    let r = call_structured(
        server,
        CATALOG_TOOL,
        args([
            ("language", json!(language)),
            ("verb", json!("get")),
            ("id", json!(id)),
        ]),
        timeouts.call,
    )
    .await;
    match r {
        Ok(v) => Ok(v.get("entry").cloned()),
        Err(CallError::Request(e)) if e.kind == crate::values::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A complete listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub items: Vec<Value>,
    pub catalog_version: Option<String>,
    /// The page bound was reached before the listing ended.
    pub truncated: bool,
}

/// Lists entries, following `next_cursor` up to [`MAX_PAGES`] pages.
/// `filters` holds `q`, `kind`, `tag`, `limit` as the caller supplied them.
pub async fn list<S: PilotageServer>(
    server: &S,
    language: &str,
    filters: &Map<String, Value>,
    timeouts: Timeouts,
) -> Result<Listing, CallError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut catalog_version = None;
    for _ in 0..MAX_PAGES {
        let mut a = args([("language", json!(language)), ("verb", json!("list"))]);
        a.extend(filters.clone());
        if let Some(c) = &cursor {
            a.insert("cursor".into(), json!(c));
        }
        let v = call_structured(server, CATALOG_TOOL, a, timeouts.call).await?;
        if let Some(page) = v.get("items").and_then(Value::as_array) {
            items.extend(page.iter().cloned());
        }
        catalog_version = v
            .get("catalog_version")
            .and_then(Value::as_str)
            .map(str::to_string);
        cursor = v
            .get("next_cursor")
            .and_then(Value::as_str)
            .map(str::to_string);
        if cursor.is_none() {
            return Ok(Listing {
                items,
                catalog_version,
                truncated: false,
            });
        }
    }
    Ok(Listing {
        items,
        catalog_version,
        truncated: true,
    })
}
