//! `pilotage catalog [--q Q] [--kind K] [--tag T]`: the caller-visible
//! catalog with each entry's risk. `--q` is sent only when the Language
//! declares `catalog.search`.

use super::{Rendered, Stopped};
use crate::discovery;
use crate::gate::Hints;
use crate::lookup;
use crate::output;
use crate::report::Exit;
use crate::server::{PilotageServer, Timeouts};
use serde_json::{Map, Value, json};

/// The listing filters.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub q: Option<String>,
    pub kind: Option<String>,
    pub tag: Option<String>,
}

pub async fn run<S: PilotageServer>(
    server: &S,
    language: Option<&str>,
    filters: &Filters,
    timeouts: Timeouts,
) -> Result<Rendered, Stopped> {
    let d = discovery::discover(server, timeouts)
        .await
        .map_err(|e| Stopped::new("discover", e))?;
    let lang = discovery::pick(&d, language, "catalog", |l| l.caps.catalog)
        .map_err(|e| Stopped::new("discover", e))?;
    let mut f = Map::new();
    if let Some(q) = &filters.q {
        if !lang.caps.search {
            return Err(Stopped::new(
                "lookup",
                format!(
                    "{} does not declare catalog.search; list without --q",
                    lang.name
                ),
            ));
        }
        f.insert("q".into(), json!(q));
    }
    if let Some(k) = &filters.kind {
        f.insert("kind".into(), json!(k));
    }
    if let Some(t) = &filters.tag {
        f.insert("tag".into(), json!(t));
    }
    let listing = lookup::list(server, &lang.name, &f, timeouts)
        .await
        .map_err(|e| Stopped::new("lookup", e))?;
    let mut text = format!(
        "catalog of {} ({} entries, catalog_version {})\n",
        lang.name,
        listing.items.len(),
        listing.catalog_version.as_deref().unwrap_or("?")
    );
    for e in &listing.items {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
        text.push_str(&format!(
            "  {:<26} {:<12} {:<12} {}  {}\n",
            s("id"),
            s("kind"),
            s("risk"),
            output::hints(&Hints::parse(e.get("risk_hints"))),
            s("name")
        ));
    }
    if listing.truncated {
        text.push_str(&format!(
            "  (stopped after {} pages; narrow the listing)\n",
            lookup::MAX_PAGES
        ));
    }
    text.push_str(&format!("{}\n", crate::gate::UNVERIFIED_NOTICE));
    Ok(Rendered {
        text,
        json: json!({"language": lang.name, "catalog_version": listing.catalog_version,
            "items": listing.items, "truncated": listing.truncated}),
        exit: Exit::Success,
    })
}
