//! Which adapter serves an engine table: one row per adapter, selected by
//! the table's `kind`. A row carries everything the rest of the gateway
//! needs of an adapter: the name of its own table, its link's shape (its
//! default call bound among it), its start-up checks and its builder.
//! Adding an engine adapter is its folder under `src/engines/` plus its row
//! here.

use super::SharedEngine;
use super::adapter::{EngineAdapter, Plugin};
use super::credentials::EngineCredentials;
use super::transport::{Link, LinkSpec};
use super::{mistral, n8n, rest};
use crate::config::EngineConfig;
use crate::metrics::Metrics;
use std::sync::Arc;

/// Builds one adapter from its engine table and the link to its engine.
type Connect = fn(&EngineConfig, Link) -> SharedEngine;

/// (key under `engine`, problem, fix) for an engine table of this kind.
type Problems = fn(&EngineConfig) -> Vec<(String, String, String)>;

/// One adapter this build has.
pub struct Adapter {
    /// The `kind` that selects it.
    pub kind: &'static str,
    /// Its own table under the engine's table (`[engine.<table>]`).
    pub table: &'static str,
    /// Its link's name, pool and call bound when the table sets no
    /// `max_in_flight`.
    pub link: LinkSpec,
    /// Its start-up checks of the table (its own table included).
    pub problems: Problems,
    pub connect: Connect,
}

/// The adapters' own tables under an engine table: what the schema lists for
/// the keys `EngineConfig` keeps as written. Only the table of the engine's
/// `kind` may be given (checked at start, not by the schema).
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // read only by the schema derive
pub struct AdapterTables {
    /// `kind = "rest"`: how the engine's REST API is called and how its
    /// answers read.
    mapping: Option<rest::mapping::EngineMapping>,
    /// `kind = "mistral"`: the Mistral adapter's risk table, visibility,
    /// polling and paging.
    mistral: Option<mistral::MistralSettings>,
    /// `kind = "n8n"`: the n8n adapter's tenants folder, risk table and
    /// polling.
    n8n: Option<n8n::N8nSettings>,
}

/// Every adapter this build has, the default kind first.
const ADAPTERS: &[Adapter] = &[
    Adapter {
        kind: "rest",
        table: rest::mapping::TABLE,
        link: rest::Rest::LINK,
        problems: rest::mapping::problems::engine_problems,
        connect: adapter_of::<rest::Rest>,
    },
    Adapter {
        kind: "mistral",
        table: mistral::settings::TABLE,
        link: mistral::Mistral::LINK,
        problems: mistral::settings::engine_problems,
        connect: adapter_of::<mistral::Mistral>,
    },
    Adapter {
        kind: "n8n",
        table: n8n::settings::TABLE,
        link: n8n::N8n::LINK,
        problems: n8n::settings::engine_problems,
        connect: adapter_of::<n8n::N8n>,
    },
];

/// The adapter of plug-in `P`.
fn adapter_of<P: Plugin>(config: &EngineConfig, link: Link) -> SharedEngine
where
    EngineAdapter<P>: super::Engine,
{
    Arc::new(EngineAdapter::<P>::on(config, link))
}

/// The row of `kind`, if this build has one.
pub fn adapter(kind: &str) -> Option<&'static Adapter> {
    ADAPTERS.iter().find(|a| a.kind == kind)
}

/// The adapter of `config.kind`, trusting `roots` besides the system CAs,
/// presenting `credentials` and recording its calls in `metrics`, or
/// `None` when this build has none (the configuration check reports it
/// first).
pub fn connect(
    config: &EngineConfig,
    roots: Vec<reqwest::Certificate>,
    credentials: Arc<EngineCredentials>,
    metrics: Arc<Metrics>,
) -> Option<SharedEngine> {
    adapter(&config.kind).map(|a| {
        let link = Link::new(config, roots, credentials, &a.link).with_metrics(metrics);
        (a.connect)(config, link)
    })
}

/// The kinds this build can serve (for configuration errors).
pub fn kinds() -> Vec<&'static str> {
    ADAPTERS.iter().map(|a| a.kind).collect()
}

/// The bound on concurrent calls of an engine table: the configured one,
/// else its adapter's default.
pub fn max_in_flight(config: &EngineConfig) -> usize {
    let default = adapter(&config.kind).map_or(ADAPTERS[0].link.default_in_flight, |a| {
        a.link.default_in_flight
    });
    config.max_in_flight_or(default)
}

/// (key under `engine`, problem, fix) for everything wrong with an engine
/// table that its adapter owns: its kind, its call bound, the keys beyond
/// the common ones, and the adapter's own checks.
pub fn problems(config: &EngineConfig) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let Some(adapter) = adapter(&config.kind) else {
        out.push((
            "engine.kind".into(),
            format!("no engine adapter is called '{}'", config.kind),
            format!("use one of: {}", kinds().join(", ")),
        ));
        return out;
    };
    if max_in_flight(config) == 0 {
        out.push((
            "engine.max_in_flight".into(),
            "0 would never let a call through".into(),
            format!(
                "allow at least 1 concurrent engine call ({})",
                in_flight_defaults()
            ),
        ));
    }
    for key in config.adapter.keys() {
        if key == adapter.table {
            continue;
        }
        match ADAPTERS.iter().find(|a| a.table == key) {
            Some(other) => out.push((
                format!("engine.{key}"),
                format!(
                    "{} settings on an engine of kind '{}'",
                    other.kind, config.kind
                ),
                format!(
                    "set kind = \"{}\", or remove the {key} table",
                    other.kind
                ),
            )),
            None => out.push((
                format!("engine.{key}"),
                format!("not a key of an engine of kind '{}'", config.kind),
                format!(
                    "remove it; an engine takes kind, url, timeout_ms, run_deadline_ms, max_in_flight, retries, retry_backoff_ms, [breaker], [retry_budget], ca_file, [auth] and [{}]",
                    adapter.table
                ),
            )),
        }
    }
    out.extend((adapter.problems)(config));
    out
}

/// "default 64; 8 for kind \"…\"": every adapter's default call bound.
fn in_flight_defaults() -> String {
    let mut text = format!("default {}", ADAPTERS[0].link.default_in_flight);
    for a in &ADAPTERS[1..] {
        text.push_str(&format!(
            "; {} for kind \"{}\"",
            a.link.default_in_flight, a.kind
        ));
    }
    text
}

/// "key: problem" for every engine problem of a gateway whose engine
/// `name` is of `kind` at `url`, with the further engine `keys` and its own
/// table holding `settings` (for the adapters' tests of their settings).
#[cfg(test)]
pub(crate) fn engine_problems(
    name: &str,
    kind: &str,
    url: &str,
    keys: &str,
    settings: &str,
) -> Vec<String> {
    let table = adapter(kind).expect("a kind of this build").table;
    let text = format!(
        "[session]\nsecret = \"0123456789abcdef0123\"\n\
         [engine]\nurl = \"http://127.0.0.1:1\"\n\
         [engines.{name}]\nkind = \"{kind}\"\nurl = \"{url}\"\n{keys}\n[engines.{name}.{table}]\n{settings}\n"
    );
    crate::config::Config::parse(&text, std::path::Path::new("gateway.toml"))
        .expect("parses")
        .validate()
        .into_iter()
        .filter(|p| p.key.starts_with("engine"))
        .map(|p| {
            assert_eq!(p.file, "gateway.toml");
            assert!(!p.fix.is_empty());
            format!("{}: {}", p.key, p.problem)
        })
        .collect()
}
