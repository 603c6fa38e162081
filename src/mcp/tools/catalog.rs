//! `pilotage_catalog` (Part III §4.2): the lookup stage. Verbs `list`
//! (kind/tag/q filters, opaque cursors), `get`, and `changed_since`; members
//! that do not apply to the verb, or need an undeclared sub-feature, are
//! `invalid_request`. Every answer carries the caller's `catalog_version`.

use super::catalog_pages::{CatalogPages, Page, PageKey};
use super::{Args, Reply, ToolResult, inapplicable};
use crate::auth::Principal;
use crate::catalog::{CatalogView, Entry};
use crate::gateway::{Gateway, LanguageRuntime};
use crate::mcp::answer::Rendered;
use crate::pilotage::{RequestError, RequestErrorKind};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::Arc;

pub const NAME: &str = "pilotage_catalog";

pub async fn call(
    gw: &Gateway,
    pages: &CatalogPages,
    principal: &Principal,
    args: &Args,
) -> ToolResult {
    let language = args.str("language").unwrap_or_default();
    let lang = gw.language_or_not_found(language)?;
    let verb = args.str("verb").unwrap_or_default();
    let caps = &lang.config.capabilities.catalog;
    let allowed: &[&str] = match verb {
        "list" => &["language", "verb", "kind", "tag", "q", "cursor", "limit"],
        "get" => &["language", "verb", "id"],
        _ => &["language", "verb", "catalog_version"],
    };
    let extra = args.unexpected(allowed);
    if !extra.is_empty() {
        return Err(inapplicable(&extra, &format!("to verb '{verb}'")));
    }
    if verb == "list" && args.has("q") && !caps.search {
        return Err(RequestError::invalid(format!(
            "free-text search is not declared for {language}: filter with 'kind' or 'tag' instead"
        )));
    }
    if verb == "changed_since" && !caps.changed_since {
        return Err(RequestError::invalid(format!(
            "changed_since is not declared for {language}: list the catalog again and compare catalog_version"
        )));
    }
    if verb == "changed_since" && !principal.lasting {
        return Err(RequestError::invalid(format!(
            "changed_since is not declared for this caller of {language}: {}; list the catalog again and compare catalog_version",
            crate::execute::PASSING_CALLER
        )));
    }
    let view = lang
        .catalog
        .view(principal, crate::catalog::Currency::MayReuse)
        .await
        .map_err(|e| e.before_execution())?;
    match verb {
        "list" => list(lang, pages, principal, &view, args),
        "get" => get(lang, &view, args),
        _ => changed(lang, principal, &view, args).await,
    }
}

fn visible_to(lang: &LanguageRuntime, entry: &Entry) -> bool {
    match entry.member("languages").and_then(Value::as_array) {
        None => true,
        Some(langs) => langs.iter().any(|l| l.as_str() == Some(&lang.config.name)),
    }
}

/// A page of the entries that pass the filters: answered from `pages` while
/// the caller's `catalog_version` holds, else built, written and kept.
fn list(
    lang: &LanguageRuntime,
    pages: &CatalogPages,
    principal: &Principal,
    view: &CatalogView,
    args: &Args,
) -> ToolResult {
    let kind = args.str("kind");
    let tag = args.str("tag");
    let q = args.str("q").map(str::to_lowercase);
    let filters = format!("{kind:?}|{tag:?}|{q:?}");
    // Read only for a cursor: a page kept in `pages` needs none.
    let filter_hash = || hex::encode(&Sha256::digest(filters.as_bytes())[..4]);
    let offset = match args.str("cursor") {
        None => 0,
        Some(c) => decode_cursor(c, &filter_hash()).ok_or_else(|| {
            RequestError::invalid(
                "unknown or foreign cursor: pass next_cursor back unchanged, with the same filters",
            )
        })?,
    };
    // Start-up refuses a zero page limit; `max(1)` keeps a page moving even
    // if one ever got through, and `min` before `max` can never panic.
    let cap = lang.config.catalog_page_limit.max(1);
    let limit = args
        .value("limit")
        .and_then(Value::as_u64)
        .map_or(cap, |l| usize::try_from(l).unwrap_or(cap).min(cap).max(1));
    let key = PageKey {
        tenant: &principal.tenant,
        language: &lang.config.name,
        version: &view.version,
        filters: &filters,
        offset,
        limit,
    };
    if let Some(page) = pages.get(&key) {
        return Ok(page.reply());
    }
    let matching: Vec<&Arc<Entry>> = view
        .entries
        .iter()
        .filter(|e| visible_to(lang, e))
        .filter(|e| kind.is_none_or(|k| e.member("kind").and_then(Value::as_str) == Some(k)))
        .filter(|e| {
            tag.is_none_or(|t| {
                e.member("tags")
                    .and_then(Value::as_array)
                    .is_some_and(|tags| tags.iter().any(|x| x.as_str() == Some(t)))
            })
        })
        .filter(|e| q.as_deref().is_none_or(|q| matches_query(e, q)))
        .collect();
    // Read back whole into the page, once per version (see `versioned`).
    let page: Vec<Value> = matching
        .iter()
        .skip(offset)
        .take(limit)
        .map(|e| e.to_json())
        .collect();
    let shown = page.len();
    let mut out = versioned("items", Value::Array(page), view);
    let next = offset + shown;
    if next < matching.len() {
        out["next_cursor"] = Value::String(encode_cursor(next, &filter_hash()));
    }
    let summary = format!(
        "{} of {} entries (catalog_version {})",
        shown,
        matching.len(),
        view.version
    );
    let page = Arc::new(Page {
        rendered: Rendered::new(out),
        summary,
    });
    pages.keep(&key, page.clone());
    Ok(page.reply())
}

/// An answer of `member` and the view's `catalog_version`. Built as an
/// object of the values given, never through `json!`, which would serialise
/// every entry into a new tree, re-hashing each key.
fn versioned(member: &str, value: Value, view: &CatalogView) -> Value {
    Value::Object(serde_json::Map::from_iter([
        (member.to_string(), value),
        (
            "catalog_version".to_string(),
            Value::String(view.version.clone()),
        ),
    ]))
}

/// Case-insensitive substring match over id, name, description and tags.
fn matches_query(entry: &Entry, q: &str) -> bool {
    let field = |k: &str| {
        entry
            .member(k)
            .and_then(Value::as_str)
            .is_some_and(|s| s.to_lowercase().contains(q))
    };
    field("id")
        || field("name")
        || field("description")
        || entry
            .member("tags")
            .and_then(Value::as_array)
            .is_some_and(|t| {
                t.iter()
                    .filter_map(Value::as_str)
                    .any(|t| t.to_lowercase().contains(q))
            })
}

fn encode_cursor(offset: usize, filter_hash: &str) -> String {
    format!("cur_{filter_hash}{offset:x}")
}

fn decode_cursor(cursor: &str, filter_hash: &str) -> Option<usize> {
    let rest = cursor.strip_prefix("cur_")?.strip_prefix(filter_hash)?;
    usize::from_str_radix(rest, 16).ok()
}

fn get(lang: &LanguageRuntime, view: &CatalogView, args: &Args) -> ToolResult {
    let Some(id) = args.str("id") else {
        return Err(RequestError::invalid("verb 'get' needs 'id'")
            .with("catalog_version", json!(view.version)));
    };
    match view.get(id).filter(|e| visible_to(lang, e)) {
        Some(entry) => Ok(Reply::new(
            versioned("entry", entry.to_json(), view),
            format!("entry {id}"),
        )),
        // The same answer whether the entry exists for someone else or not at all.
        // The message does not echo the id, so two unknown ids answer alike too.
        None => Err(RequestError::not_found(
            "unknown catalog entry: no entry with this id is visible to you; list the catalog for the names you can use",
        )
        .with("catalog_version", json!(view.version))),
    }
}

async fn changed(
    lang: &LanguageRuntime,
    principal: &Principal,
    view: &CatalogView,
    args: &Args,
) -> ToolResult {
    let Some(baseline) = args.str("catalog_version") else {
        return Err(RequestError::invalid(
            "verb 'changed_since' needs 'catalog_version'",
        ));
    };
    let changes = lang
        .catalog
        .changes_since(principal, view, baseline)
        .await
        .map_err(|e| {
            crate::pilotage::store_internal(
                &e,
                "the changed_since baseline could not be read: retry later",
            )
        })?;
    match changes {
        Some(changes) => {
            let n = changes.len();
            Ok(Reply::new(
                json!({"catalog_version": view.version, "changes": changes}),
                format!("{n} changes since {baseline}"),
            ))
        }
        None => Err(RequestError::new(
            RequestErrorKind::UnknownBaseline,
            format!("no changes can be computed from '{baseline}': list the catalog again"),
        )),
    }
}
