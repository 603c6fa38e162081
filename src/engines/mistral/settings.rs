//! `[engines.NAME.mistral]`: the Mistral adapter's own settings (the risk
//! table, per-tenant visibility, polling and paging) and their start-up
//! checks. Every key has a default, so `kind = "mistral"` and a `url` are a
//! working engine.

use super::risk::{EFFECTS, RiskRule, default_rules, glob_problem};
use crate::config::EngineConfig;
use crate::engines::adapter::own_table;
use crate::engines::pacing::{self, Pacing};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The adapter's settings.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
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
    /// Longest wait between two status reads of a run.
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

/// The key of this adapter's own table under an engine's table.
pub const TABLE: &str = "mistral";

/// The settings of an engine table (the defaults when it has none), or why
/// its `[engine.mistral]` does not read.
pub fn read(config: &EngineConfig) -> Result<MistralSettings, String> {
    own_table(config, TABLE)
}

/// The `kind = "mistral"` checks of an engine table: its settings, its URL
/// and its call bound, as (key under `engine`, problem, fix).
pub fn engine_problems(engine: &EngineConfig) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if !engine.url.trim_end_matches('/').ends_with("/v2") {
        out.push((
            "engine.url".into(),
            format!("'{}' is not Mistral's v2 API base", engine.url),
            "end the URL with /v2, e.g. http://127.0.0.1:8989/v2".into(),
        ));
    }
    let in_flight = engine.max_in_flight_or(DEFAULT_IN_FLIGHT);
    if in_flight > MAX_IN_FLIGHT {
        out.push((
            "engine.max_in_flight".into(),
            format!(
                "{in_flight} concurrent calls overrun Mistral's API ({MAX_IN_FLIGHT} worker threads; it resets connections beyond its queue)"
            ),
            "use at most 10 (default 8)".into(),
        ));
    }
    match read(engine) {
        Ok(settings) => out.extend(settings.problems()),
        Err(why) => out.push((
            format!("engine.{TABLE}"),
            why,
            "correct the mistral table (docs/mistral.md lists every key)".into(),
        )),
    }
    out
}

impl MistralSettings {
    /// The waits between two status reads of a run.
    pub fn pacing(&self) -> Pacing {
        Pacing::from_ms(self.poll_interval_ms, self.max_poll_interval_ms)
    }

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
        let defaults = Self::default();
        for (key, what, fix) in pacing::problems(
            self.poll_interval_ms,
            self.max_poll_interval_ms,
            "the run's status",
            (defaults.poll_interval_ms, defaults.max_poll_interval_ms),
        ) {
            problem(key.into(), what, &fix);
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

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::Path;

    /// The problems of a `kind = "mistral"` engine with `keys` and a
    /// `[engine.mistral]` table of `settings`.
    fn mistral_problems(url: &str, keys: &str, settings: &str) -> Vec<String> {
        crate::engines::registry::engine_problems("m", "mistral", url, keys, settings)
    }

    #[test]
    fn a_mistral_engine_with_defaults_is_valid_and_bounded_to_eight_calls() {
        assert!(
            mistral_problems("http://127.0.0.1:1/v2", "", "").is_empty(),
            "{:?}",
            mistral_problems("http://127.0.0.1:1/v2", "", "")
        );
        let config = Config::parse(
            "[engine]\nurl = \"http://127.0.0.1:1/v2\"\nkind = \"mistral\"\n",
            Path::new("g.toml"),
        )
        .unwrap();
        assert_eq!(crate::engines::registry::max_in_flight(&config.engine), 8);
        let rest = Config::parse("[engine]\nurl = \"http://x\"\n", Path::new("g.toml")).unwrap();
        assert_eq!(crate::engines::registry::max_in_flight(&rest.engine), 64);
    }

    #[test]
    fn every_wrong_mistral_key_is_named() {
        for (url, keys, settings, key) in [
            ("http://127.0.0.1:1", "", "", "engines.m.url"),
            (
                "http://127.0.0.1:1/v2",
                "max_in_flight = 11",
                "",
                "engines.m.max_in_flight",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "risk = [{ glob = \"std.*\", effect = \"harmless\" }]",
                "engines.m.mistral.risk[0].effect",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "risk = [{ glob = \"\", effect = \"safe\" }]",
                "engines.m.mistral.risk[0].glob",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "visibility = { acme = [\"std.echo\", \"std .x\"] }",
                "engines.m.mistral.visibility.\"acme\"[1]",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "poll_interval_ms = 0",
                "engines.m.mistral.poll_interval_ms",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "poll_interval_ms = 100\nmax_poll_interval_ms = 50",
                "engines.m.mistral.max_poll_interval_ms",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "page_size = 0",
                "engines.m.mistral.page_size",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "max_pages = 0",
                "engines.m.mistral.max_pages",
            ),
            (
                "http://127.0.0.1:1/v2",
                "kind = \"rest\"",
                "",
                "engines.m.mistral",
            ),
        ] {
            let keys_and_kind = keys.to_string();
            let found = if keys.starts_with("kind") {
                let text = format!(
                    "[session]\nsecret = \"0123456789abcdef0123\"\n[engine]\nurl = \"http://127.0.0.1:1\"\n\
                     [engines.m]\n{keys_and_kind}\nurl = \"{url}\"\n[engines.m.mistral]\n"
                );
                Config::parse(&text, Path::new("gateway.toml"))
                    .expect("parses")
                    .validate()
                    .into_iter()
                    .map(|p| format!("{}: {}", p.key, p.problem))
                    .collect()
            } else {
                mistral_problems(url, keys, settings)
            };
            assert!(
                found.iter().any(|p| p.starts_with(&format!("{key}:"))),
                "{key} not named for {keys:?} {settings:?}: {found:?}"
            );
        }
    }

    #[test]
    fn unknown_mistral_keys_are_refused_at_start() {
        let text = "[engine]\nurl = \"http://127.0.0.1:1/v2\"\nkind = \"mistral\"\n[engine.mistral]\npoll_ms = 5\n";
        let problems = Config::parse(text, Path::new("gateway.toml"))
            .expect("parses")
            .validate();
        assert!(
            problems
                .iter()
                .any(|p| p.key == "engine.mistral" && p.problem.contains("poll_ms")),
            "{problems:?}"
        );
    }
}
