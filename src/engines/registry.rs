//! Which adapter serves an engine table: one line per adapter, selected by
//! the table's `kind`. Adding an engine adapter is its folder under
//! `src/engines/` plus its line here.

use super::SharedEngine;
use crate::config::EngineConfig;
use crate::metrics::Metrics;
use std::sync::Arc;

/// Builds one adapter from its engine table, the extra CA roots it trusts
/// and the metrics its calls are recorded in.
type Connect = fn(&EngineConfig, Vec<reqwest::Certificate>, Arc<Metrics>) -> SharedEngine;

/// Every adapter this build has, by kind.
const ADAPTERS: &[(&str, Connect)] = &[
    ("rest", |config, roots, metrics| {
        Arc::new(super::rest::EngineClient::with_roots(config, roots).with_metrics(metrics))
    }),
    ("mistral", |config, roots, metrics| {
        Arc::new(super::mistral::MistralEngine::new(config, roots).with_metrics(metrics))
    }),
];

/// The adapter of `config.kind`, or `None` when this build has none (the
/// configuration check reports it first).
pub fn connect(
    config: &EngineConfig,
    roots: Vec<reqwest::Certificate>,
    metrics: Arc<Metrics>,
) -> Option<SharedEngine> {
    ADAPTERS
        .iter()
        .find(|(kind, _)| *kind == config.kind)
        .map(|(_, connect)| connect(config, roots, metrics))
}

/// The kinds this build can serve (for configuration errors).
pub fn kinds() -> Vec<&'static str> {
    ADAPTERS.iter().map(|(k, _)| *k).collect()
}
