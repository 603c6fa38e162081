//! `[[language]]` tables: the Languages the gateway declares in its manifest,
//! their capability map (Part II §4), loop-tool names (Part III §4.3), guides,
//! classifier rules, bounds and optional `context_schema`.

use super::Config;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LanguageConfig {
    /// Language identifier, `family/version` (Part II §3.3).
    pub name: String,
    /// Which implementation serves it (`crate::languages::registry`); a
    /// table that names none is `workflow/v1`, the language every
    /// configuration written before plug-ins declares.
    #[serde(default = "default_kind")]
    pub kind: String,
    /// The engine it runs on: a name from `[engines.NAME]`, or `default`
    /// (the `[engine]` table, also when absent).
    #[serde(default)]
    pub engine: Option<String>,
    /// Human-readable title of the Language, shown in the manifest.
    pub title: String,
    /// Name of the tool argument carrying the program (Part III §5).
    #[serde(default = "default_argument")]
    pub argument: String,
    /// Directory of markdown guides (relative to the config file).
    pub guides_dir: String,
    /// Prefix prepended to guide ids, so two languages may share a directory
    /// and still expose server-unique guide ids (Part II §5.2).
    #[serde(default)]
    pub guide_id_prefix: String,
    /// Classifier rule file (relative to the config file).
    pub classifier: String,
    /// The names of the loop tools.
    pub tools: LoopTools,
    /// The sub-features this Language offers; each can be switched off.
    pub capabilities: CapabilityConfig,
    /// `immediate`, `deploy` or `both`.
    #[serde(default = "default_execution")]
    pub execution: String,
    /// Highest trace level: `summary` or `full`.
    #[serde(default = "default_trace")]
    pub trace: String,
    /// `none` or an ISO 8601 duration such as `PT24H`. `session` is refused:
    /// the gateway is stateless (Part III §8.1).
    #[serde(default = "default_retention")]
    pub retention: String,
    /// How long a program promoted by a `deploy` execution stays in the
    /// catalog (an ISO 8601 duration); promoting it again renews it.
    #[serde(default = "default_promotion_lifetime")]
    pub promotion_lifetime: String,
    /// Optional JSON Schema (as a TOML table) the request `context` must
    /// satisfy; absent means context is refused (Part II §6.4).
    #[schemars(with = "Option<serde_json::Value>")]
    #[serde(default)]
    pub context_schema: Option<toml::Value>,
    /// Program bounds checked before the engine is called.
    #[serde(default)]
    pub bounds: Bounds,
    /// Catalog page size cap.
    #[serde(default = "default_page")]
    pub catalog_page_limit: usize,
    /// The deadline of a run held by a task (MCP Tasks), which may outlive
    /// its request; a plain execute keeps the engine's `run_deadline_ms`.
    #[serde(default = "default_task_run_deadline_ms")]
    pub task_run_deadline_ms: u64,
}

fn default_kind() -> String {
    "workflow/v1".into()
}
fn default_argument() -> String {
    "workflow".into()
}
fn default_execution() -> String {
    "immediate".into()
}
fn default_trace() -> String {
    "full".into()
}
fn default_task_run_deadline_ms() -> u64 {
    3_600_000
}
fn default_retention() -> String {
    "PT24H".into()
}
fn default_promotion_lifetime() -> String {
    "P30D".into()
}
/// `P30D`, as a duration.
const DEFAULT_PROMOTION_LIFETIME: std::time::Duration = std::time::Duration::from_secs(30 * 86_400);
fn default_page() -> usize {
    50
}

/// Loop tool names, declared in the manifest's `loop` object.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopTools {
    /// Name of the validate tool.
    pub validate: String,
    /// Name of the execute tool; absent: no execute tool.
    #[serde(default)]
    pub execute: Option<String>,
    /// Name of the trace tool; absent: no trace tool.
    #[serde(default)]
    pub trace: Option<String>,
}

impl LoopTools {
    /// Tool names that exist under the capability map (Part II §4.3 rule 7).
    pub fn declared<'a>(&'a self, caps: &CapabilityConfig) -> Vec<&'a str> {
        let mut out = vec![self.validate.as_str()];
        if caps.execute.enabled
            && let Some(t) = &self.execute
        {
            out.push(t);
        }
        if caps.trace_fetch
            && let Some(t) = &self.trace
        {
            out.push(t);
        }
        out
    }
}

/// The capability map of one Language; each sub-feature can be switched off.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilityConfig {
    /// Guide sub-features.
    #[serde(default)]
    pub guides: GuidesCaps,
    /// Catalog sub-features.
    #[serde(default)]
    pub catalog: CatalogCaps,
    /// Validate answers carry the plan of the program.
    #[serde(default = "yes")]
    pub plan: bool,
    /// Execute sub-features.
    #[serde(default)]
    pub execute: ExecuteCaps,
    /// Traces of past runs can be fetched by `run_id`.
    #[serde(default = "yes")]
    pub trace_fetch: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GuidesCaps {
    /// Guides can be fetched by topic.
    pub topic_fetch: bool,
}
impl Default for GuidesCaps {
    fn default() -> Self {
        Self { topic_fetch: true }
    }
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CatalogCaps {
    /// The catalog can be searched.
    pub search: bool,
    /// The catalog answers what changed since a `catalog_version`.
    pub changed_since: bool,
}
impl Default for CatalogCaps {
    fn default() -> Self {
        Self {
            search: true,
            changed_since: true,
        }
    }
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ExecuteCaps {
    /// Programs can be executed at all.
    pub enabled: bool,
    /// Test runs (the engine simulates the steps) are offered.
    pub test_run: bool,
    /// Executes accept an `idempotency_key`.
    pub idempotency: bool,
}
impl Default for ExecuteCaps {
    fn default() -> Self {
        Self {
            enabled: true,
            test_run: true,
            idempotency: true,
        }
    }
}

/// Validation resource bounds (Part II §10.1); exceeding one is a
/// `bounds_exceeded` request error before the engine is called.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Bounds {
    /// JSON nesting depth of the program value. Kept well below serde_json's
    /// 128-level parse limit so this bound, not a parse error, answers.
    pub max_depth: usize,
    /// Steps, nested ones included.
    pub max_steps: usize,
    /// Size of the program's compact JSON.
    pub max_program_bytes: usize,
    /// Length of one step id. Ids are repeated in plans and traces (a branch
    /// id once per step of its arms), so this bound is what keeps an answer
    /// proportional to its request.
    pub max_id_bytes: usize,
}
impl Default for Bounds {
    fn default() -> Self {
        Self {
            max_depth: 32,
            max_steps: 1000,
            max_program_bytes: 256 * 1024,
            max_id_bytes: 128,
        }
    }
}

impl LanguageConfig {
    /// Retention as a duration; `None` for `none`.
    pub fn retention_duration(&self) -> Option<std::time::Duration> {
        parse_iso_duration(&self.retention)
    }

    /// The promotion lifetime (validated at start, so the fallback to the
    /// default only serves configurations built without validation).
    pub fn promotion_lifetime(&self) -> std::time::Duration {
        parse_iso_duration(&self.promotion_lifetime).unwrap_or(DEFAULT_PROMOTION_LIFETIME)
    }

    pub fn has_execute(&self) -> bool {
        self.capabilities.execute.enabled && self.tools.execute.is_some()
    }

    pub fn has_trace_fetch(&self) -> bool {
        self.has_execute() && self.capabilities.trace_fetch && self.tools.trace.is_some()
    }

    /// Range checks of the numeric keys. The depth bound stays below
    /// serde_json's 128-level parse limit so the bound, not a parse error,
    /// answers.
    fn numeric_problems(&self, i: usize) -> Vec<(String, String, String)> {
        use super::range::{outside, problems, size};
        let key = |k: &str| format!("language[{i}].{k}");
        let b = &self.bounds;
        let d = Bounds::default();
        problems([
            outside(
                &key("catalog_page_limit"),
                size(self.catalog_page_limit),
                1,
                1000,
                size(default_page()),
            ),
            outside(
                &key("bounds.max_depth"),
                size(b.max_depth),
                1,
                100,
                size(d.max_depth),
            ),
            outside(
                &key("bounds.max_steps"),
                size(b.max_steps),
                1,
                100_000,
                size(d.max_steps),
            ),
            outside(
                &key("bounds.max_program_bytes"),
                size(b.max_program_bytes),
                1,
                64 << 20,
                size(d.max_program_bytes),
            ),
            outside(
                &key("bounds.max_id_bytes"),
                size(b.max_id_bytes),
                1,
                4096,
                size(d.max_id_bytes),
            ),
        ])
    }

    /// (key, problem, fix) triples.
    pub(super) fn validate(&self, _config: &Config, i: usize) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let key = |k: &str| format!("language[{i}].{k}");
        out.extend(self.numeric_problems(i));
        let (family, version) = self.name.split_once('/').unwrap_or(("", ""));
        if family.is_empty() || version.is_empty() || version.contains('/') {
            out.push((
                key("name"),
                format!("'{}' is not family/version", self.name),
                "use an identifier like workflow/v1".into(),
            ));
        }
        if crate::languages::registry::lookup(&self.kind).is_none() {
            out.push((
                key("kind"),
                format!("no language implementation is called '{}'", self.kind),
                format!(
                    "use one of: {}",
                    crate::languages::registry::kinds().join(", ")
                ),
            ));
        }
        if !matches!(self.execution.as_str(), "immediate" | "deploy" | "both") {
            out.push((
                key("execution"),
                format!("'{}' is not a mode", self.execution),
                "use immediate, deploy or both".into(),
            ));
        }
        if !matches!(self.trace.as_str(), "summary" | "full") {
            out.push((
                key("trace"),
                format!("'{}' is not a trace level", self.trace),
                "use summary or full".into(),
            ));
        }
        if self.retention == "session" {
            out.push((
                key("retention"),
                "'session' cannot be honoured by a stateless gateway (Part III §8.1)".into(),
                "use none or an ISO 8601 duration such as PT24H".into(),
            ));
        } else if self.retention != "none" && self.retention_duration().is_none() {
            out.push((
                key("retention"),
                format!("'{}' is not none or an ISO 8601 duration", self.retention),
                "use none or a duration such as PT24H".into(),
            ));
        }
        if parse_iso_duration(&self.promotion_lifetime).is_none() {
            out.push((
                key("promotion_lifetime"),
                format!(
                    "'{}' is not an ISO 8601 duration longer than zero",
                    self.promotion_lifetime
                ),
                "use a duration such as P30D (the default)".into(),
            ));
        }
        if self.capabilities.trace_fetch
            && self.capabilities.execute.enabled
            && self.retention == "none"
        {
            out.push((
                key("capabilities.trace_fetch"),
                "trace_fetch with retention none (Part II §4.3 rule 5)".into(),
                "set trace_fetch = false or declare a retention duration".into(),
            ));
        }
        if self.capabilities.execute.enabled && self.tools.execute.is_none() {
            out.push((
                key("tools.execute"),
                "execute is enabled but no tool name is given".into(),
                "name the execute tool, e.g. run_workflow".into(),
            ));
        }
        if self.capabilities.trace_fetch
            && self.capabilities.execute.enabled
            && self.tools.trace.is_none()
        {
            out.push((
                key("tools.trace"),
                "trace_fetch is enabled but no tool name is given".into(),
                "name the trace tool, e.g. trace_workflow".into(),
            ));
        }
        if self.capabilities.trace_fetch && !self.capabilities.execute.enabled {
            out.push((
                key("capabilities.trace_fetch"),
                "trace_fetch needs execute (Part II §4.3 rule 3)".into(),
                "enable execute or set trace_fetch = false".into(),
            ));
        }
        if let Some(schema) = &self.context_schema {
            let json = serde_json::to_value(schema).unwrap_or_default();
            if let Err(e) = jsonschema::validator_for(&json) {
                out.push((
                    key("context_schema"),
                    format!("not a valid JSON Schema: {e}"),
                    "write a JSON Schema object as a TOML table".into(),
                ));
            }
        }
        out
    }
}

/// A retention or lifetime: an ISO 8601 duration longer than zero (see the
/// `pilotage-duration` crate for what is accepted).
pub fn parse_iso_duration(s: &str) -> Option<std::time::Duration> {
    pilotage_duration::parse_positive(s).ok()
}

#[cfg(test)]
mod tests {
    use super::parse_iso_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(
            parse_iso_duration("PT24H"),
            Some(Duration::from_secs(86400))
        );
        assert_eq!(
            parse_iso_duration("P1DT1M"),
            Some(Duration::from_secs(86460))
        );
        assert_eq!(
            parse_iso_duration("P1Y"),
            Some(Duration::from_secs(365 * 86400))
        );
        assert_eq!(
            parse_iso_duration("PT1.5S"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_iso_duration("none"), None);
        assert_eq!(parse_iso_duration("PT"), None);
        assert_eq!(parse_iso_duration("PT1H1H"), None);
        assert_eq!(parse_iso_duration("PT0S"), None);
    }
}
