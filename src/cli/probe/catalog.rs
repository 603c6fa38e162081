//! What the mapping reads from the engine's catalog, and from the error body
//! of a refused call.

use super::{Report, Verdict, quoted};
use crate::engines::CatalogFetch;
use crate::engines::json_path::{pick_field, value_text};
use crate::engines::rest::EngineClient;
use std::collections::BTreeSet;

pub(super) async fn catalog(client: &EngineClient, tenant: &str, out: &mut Report) {
    let m = client.mapping();
    let caps = match client.catalog(tenant, None).await {
        Ok(CatalogFetch::Fresh { capabilities, .. }) => capabilities,
        // Asked without a validator: neither answer can come.
        Ok(CatalogFetch::NotModified | CatalogFetch::Same { .. }) => Vec::new(),
        Err(e) => {
            out.push(
                Verdict::Missing,
                "engine.mapping.catalog.path",
                format!("the catalog of tenant '{tenant}' could not be read: {e}"),
            );
            return;
        }
    };
    out.push(
        Verdict::Found,
        "engine.mapping.catalog.list",
        format!("{} capabilities for tenant '{tenant}'", caps.len()),
    );
    if caps.is_empty() {
        out.push(
            Verdict::Missing,
            "engine.mapping.catalog.list",
            "the list is empty: no field below can be checked",
        );
        return;
    }
    let f = &m.catalog;
    for (key, path) in [
        ("name", &f.name),
        ("title", &f.title),
        ("description", &f.description),
        ("params", &f.params),
        ("returns", &f.returns),
        ("effect", &f.effect),
        ("tags", &f.tags),
        ("deprecated", &f.deprecated),
    ] {
        let key = format!("engine.mapping.catalog.{key}");
        if path.is_empty() {
            out.push(
                Verdict::Note,
                &key,
                "not mapped (the engine has no such field)",
            );
            continue;
        }
        let n = caps
            .iter()
            .filter(|c| pick_field(c, path).is_some())
            .count();
        if n == 0 {
            let fields = caps[0]
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            out.push(
                Verdict::Missing,
                &key,
                format!(
                    "'{path}' is in none of {} capabilities (the first has: {fields})",
                    caps.len()
                ),
            );
        } else {
            out.push(
                Verdict::Found,
                &key,
                format!("'{path}' in {n} of {}", caps.len()),
            );
        }
    }
    let mut unknown = BTreeSet::new();
    for cap in &caps {
        if let Some(effect) = pick_field(cap, &f.effect).and_then(value_text)
            && client.profile().effect_risk(&effect).is_none()
        {
            unknown.insert(effect);
        }
    }
    if unknown.is_empty() {
        out.push(
            Verdict::Found,
            "engine.mapping.effects",
            "every effect value is in the table",
        );
    } else {
        out.push(
            Verdict::Unknown,
            "engine.mapping.effects",
            format!(
                "{} not in the table (such capabilities count as destructive)",
                quoted(&unknown)
            ),
        );
    }
}

pub(super) async fn error_body(client: &EngineClient, out: &mut Report) {
    let stranger = "pilotage-probe-no-such-tenant";
    match client.error_answer(stranger).await {
        Ok(None) => out.push(
            Verdict::Note,
            "engine.mapping.error_paths",
            format!("the engine served tenant '{stranger}': no error body to read"),
        ),
        Ok(Some((status, Some(text)))) => out.push(
            Verdict::Found,
            "engine.mapping.error_paths",
            format!("HTTP {status} for an unknown tenant reads \"{text}\""),
        ),
        Ok(Some((status, None))) => out.push(
            Verdict::Missing,
            "engine.mapping.error_paths",
            format!("HTTP {status} for an unknown tenant: no error text at any of the paths"),
        ),
        Err(e) => out.push(Verdict::Missing, "engine.url", e.to_string()),
    }
}
