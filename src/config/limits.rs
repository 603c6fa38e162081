//! `[limits]`: per-principal budgets of tool calls and concurrent runs.
//!
//! ```toml
//! [limits.anonymous]          # every anonymous caller together (built-in default below)
//! requests_per_second = 10
//! burst = 50
//! concurrent_runs = 4
//!
//! [limits.default]            # each API key without an entry of its own (default: none)
//! requests_per_second = 50
//! concurrent_runs = 16
//!
//! [[limits.key]]              # one API key, by its [[auth.key]] name
//! name = "billing-agent"
//! requests_per_second = 100
//! burst = 200
//! concurrent_runs = 32
//! ```

use serde::Deserialize;

/// One budget; an absent member is not limited.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    /// Sustained tool calls per second.
    pub requests_per_second: Option<f64>,
    /// Tool calls allowed at once above the sustained rate (default: one
    /// second's worth, at least 1).
    pub burst: Option<u32>,
    /// Executes in progress at once.
    pub concurrent_runs: Option<u32>,
}

impl Limit {
    /// The built-in budget of anonymous callers: enough for an agent working
    /// through the loop, not enough for one caller to take every engine slot.
    pub fn anonymous_default() -> Limit {
        Limit {
            requests_per_second: Some(10.0),
            burst: Some(50),
            concurrent_runs: Some(4),
        }
    }
}

/// The budget of one named API key.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyLimit {
    /// The `name` of the API key (`[[auth.key]]`) this budget applies to.
    pub name: String,
    #[serde(flatten)]
    pub limit: Limit,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// The budget of each anonymous principal.
    pub anonymous: Limit,
    /// The budget of every API key without its own `[[limits.key]]`.
    pub default: Limit,
    /// Budgets of named API keys (`[[limits.key]]`).
    #[serde(rename = "key")]
    pub keys: Vec<KeyLimit>,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            anonymous: Limit::anonymous_default(),
            default: Limit::default(),
            keys: Vec::new(),
        }
    }
}

impl LimitsConfig {
    /// Problems as (key, problem, fix); `key_names` are the configured API keys.
    pub fn validate(&self, key_names: &[&str]) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut check = |at: String, l: &Limit| {
            if let Some(r) = l.requests_per_second
                && !(r.is_finite() && r > 0.0)
            {
                out.push((
                    format!("{at}.requests_per_second"),
                    format!("{r} is not a positive rate"),
                    "give tool calls per second above 0, or remove the member for no limit".into(),
                ));
            }
            if l.burst == Some(0) {
                out.push((
                    format!("{at}.burst"),
                    "0 would refuse every call".into(),
                    "use at least 1, or remove it (default: one second's worth)".into(),
                ));
            }
            if l.burst.is_some() && l.requests_per_second.is_none() {
                out.push((
                    format!("{at}.burst"),
                    "a burst without requests_per_second limits nothing".into(),
                    "add requests_per_second, or remove burst".into(),
                ));
            }
            if l.concurrent_runs == Some(0) {
                out.push((
                    format!("{at}.concurrent_runs"),
                    "0 would refuse every execute".into(),
                    "use at least 1, or remove it for no limit".into(),
                ));
            }
        };
        check("limits.anonymous".into(), &self.anonymous);
        check("limits.default".into(), &self.default);
        for (i, k) in self.keys.iter().enumerate() {
            check(format!("limits.key[{i}]"), &k.limit);
        }
        for (i, k) in self.keys.iter().enumerate() {
            if !key_names.contains(&k.name.as_str()) {
                out.push((
                    format!("limits.key[{i}].name"),
                    format!("no [[auth.key]] is named '{}'", k.name),
                    "use the name of a configured API key".into(),
                ));
            }
        }
        out
    }
}
