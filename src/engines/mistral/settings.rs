//! `[engines.NAME.mistral]`: the Mistral adapter's own settings (the risk
//! table, per-tenant visibility, polling and paging) and their start-up
//! checks. Every key has a default, so `kind = "mistral"` and a `url` are a
//! working engine.

use super::risk::{EFFECTS, RiskRule, default_rules, glob_problem};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The adapter's settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MistralSettings {
    /// Name globs → effect, first match wins. Replaces the built-in table
    /// when given; an action no row matches gets no effect and counts as
    /// destructive.
    pub risk: Vec<RiskRule>,
    /// Tenant → globs of the actions it may see; a tenant not listed sees
    /// every action (`"*"` lists a default for every other tenant).
    pub visibility: BTreeMap<String, Vec<String>>,
    /// First wait between two status reads of a run; doubled after each
    /// read up to `max_poll_interval_ms`.
    pub poll_interval_ms: u64,
    pub max_poll_interval_ms: u64,
    /// Actions per catalog page (`GET /v2/actions?limit=`).
    pub page_size: usize,
    /// Most catalog pages read for one listing (the listing fails beyond).
    pub max_pages: usize,
}

impl Default for MistralSettings {
    fn default() -> Self {
        Self {
            risk: default_rules(),
            visibility: BTreeMap::new(),
            poll_interval_ms: 50,
            max_poll_interval_ms: 500,
            page_size: 100,
            max_pages: 100,
        }
    }
}

/// Most concurrent calls the Mistral API serves (its cheroot server has 10
/// worker threads; further connections queue and are reset past 5).
pub const MAX_IN_FLIGHT: usize = 10;

/// Default concurrent calls for a `mistral` engine.
pub const DEFAULT_IN_FLIGHT: usize = 8;

impl MistralSettings {
    /// The visibility globs of `tenant` (`None`: every action).
    pub fn visible_globs(&self, tenant: &str) -> Option<&[String]> {
        self.visibility
            .get(tenant)
            .or_else(|| self.visibility.get("*"))
            .map(Vec::as_slice)
    }

    /// (key under `engine.mistral`, problem, fix) for every wrong setting.
    pub fn problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut problem = |key: String, what: String, fix: &str| {
            out.push((format!("engine.mistral.{key}"), what, fix.to_string()));
        };
        for (i, rule) in self.risk.iter().enumerate() {
            if let Some(why) = glob_problem(&rule.glob) {
                problem(
                    format!("risk[{i}].glob"),
                    why,
                    "write an action name with * and ? wildcards, e.g. \"std.ssh*\"",
                );
            }
            if !EFFECTS.contains(&rule.effect.as_str()) {
                problem(
                    format!("risk[{i}].effect"),
                    format!("'{}' is not an effect", rule.effect),
                    &format!("use one of: {}", EFFECTS.join(", ")),
                );
            }
        }
        for (tenant, globs) in &self.visibility {
            for (i, glob) in globs.iter().enumerate() {
                if let Some(why) = glob_problem(glob) {
                    problem(
                        format!("visibility.\"{tenant}\"[{i}]"),
                        why,
                        "write an action name with * and ? wildcards, e.g. \"std.*\"",
                    );
                }
            }
        }
        if self.poll_interval_ms == 0 {
            problem(
                "poll_interval_ms".into(),
                "0 would read the run's status in a busy loop".into(),
                "use a positive interval (default 50)",
            );
        }
        if self.max_poll_interval_ms < self.poll_interval_ms {
            problem(
                "max_poll_interval_ms".into(),
                format!(
                    "{} ms is below poll_interval_ms ({} ms)",
                    self.max_poll_interval_ms, self.poll_interval_ms
                ),
                "use at least poll_interval_ms (default 500)",
            );
        }
        if !(1..=1000).contains(&self.page_size) {
            problem(
                "page_size".into(),
                format!("{} is not a page size", self.page_size),
                "use 1 to 1000 actions per page (default 100)",
            );
        }
        if self.max_pages == 0 {
            problem(
                "max_pages".into(),
                "0 would never read the catalog".into(),
                "allow at least 1 page (default 100)",
            );
        }
        out
    }
}
