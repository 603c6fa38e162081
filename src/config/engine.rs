//! `[engine.mapping]`: where the engine's REST dialect keeps each thing.
//!
//! Every default below is the reference engine's dialect, so a config that says
//! nothing talks to it. Adapting the gateway to another engine means overriding
//! these keys (see docs/adapting.md): endpoint paths, the tenant header, request
//! bodies as JSON templates with typed placeholders, field paths (dotted paths into
//! the engine's JSON), value tables for every enumerated value the gateway reads,
//! what each HTTP status of a run or check answer means, and how an asynchronous
//! runner is polled.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineMapping {
    /// Header carrying the tenant on every engine call.
    pub tenant_header: String,
    /// Readiness probe (GET, any 2xx is ready).
    pub health_path: String,
    /// Whether value tables match engine values regardless of case.
    pub case_insensitive_values: bool,
    /// Where an error body keeps its text, tried in order (`fault.message`).
    pub error_paths: Vec<String>,
    pub catalog: CatalogFields,
    pub check: CheckMapping,
    pub run: RunMapping,
    pub events: EventMapping,
    /// Engine effect value → Pilotage risk. A value not in the table is the
    /// most dangerous risk (destructive, open world).
    pub effects: BTreeMap<String, EffectRisk>,
}

impl Default for EngineMapping {
    fn default() -> Self {
        let effect = |risk: &str, read_only, destructive, open_world| EffectRisk {
            risk: risk.into(),
            read_only,
            destructive,
            open_world,
        };
        Self {
            tenant_header: "X-Tenant".into(),
            health_path: "/healthz".into(),
            case_insensitive_values: false,
            error_paths: vec!["error".into()],
            catalog: CatalogFields::default(),
            check: CheckMapping::default(),
            run: RunMapping::default(),
            events: EventMapping::default(),
            effects: BTreeMap::from([
                ("read".into(), effect("safe", true, false, false)),
                ("write".into(), effect("write", false, false, false)),
                ("external".into(), effect("external", false, false, true)),
                ("delete".into(), effect("destructive", false, true, false)),
            ]),
        }
    }
}

impl EngineMapping {
    /// Looks an engine value up in a value table (`case_insensitive_values`
    /// honoured). Non-string values are looked up by their JSON text
    /// (`true`, `0`).
    pub fn lookup<'t, T>(&self, table: &'t BTreeMap<String, T>, value: &str) -> Option<&'t T> {
        if let Some(found) = table.get(value) {
            return Some(found);
        }
        if self.case_insensitive_values {
            return table
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(value))
                .map(|(_, v)| v);
        }
        None
    }

    /// What an event is; `Err` carries a kind no table lists.
    pub fn event_kind(&self, event: &serde_json::Value) -> Result<EventKind, String> {
        let text = pick(event, &self.events.kind)
            .and_then(value_text)
            .unwrap_or_default();
        self.lookup(&self.events.kinds, &text).copied().ok_or(text)
    }

    /// Whether a call event succeeded; a value no table lists is a failure.
    pub fn call_ok(&self, event: &serde_json::Value) -> bool {
        let text = pick(event, &self.events.ok_field)
            .and_then(value_text)
            .unwrap_or_default();
        self.lookup(&self.events.outcomes, &text) == Some(&CallOutcome::Ok)
    }

    /// The arm a branch event took; `Err` carries an arm no table lists.
    pub fn arm(&self, event: &serde_json::Value) -> Result<ArmMeaning, String> {
        let text = pick(event, &self.events.arm)
            .and_then(value_text)
            .unwrap_or_default();
        self.lookup(&self.events.arms, &text).copied().ok_or(text)
    }

    /// An event's loop counters, rebased so the first iteration is 1.
    pub fn counters(&self, event: &serde_json::Value) -> Vec<u64> {
        let shift = 1u64.saturating_sub(self.events.counter_base);
        pick(event, &self.events.iter)
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(serde_json::Value::as_u64)
                    .map(|n| n + shift)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The risk of an effect value; unknown values fail closed.
    pub fn effect_risk(&self, effect: &str) -> Option<&EffectRisk> {
        self.lookup(&self.effects, effect)
    }
}

/// The text of a scalar engine value as value tables see it.
pub fn value_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The risk an engine effect value stands for (Part II §5.3).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EffectRisk {
    pub risk: String,
    #[serde(rename = "readOnly")]
    pub read_only: bool,
    pub destructive: bool,
    #[serde(rename = "openWorld")]
    pub open_world: bool,
}

/// The capability listing.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CatalogFields {
    pub path: String,
    /// Field holding the array of capabilities.
    pub list: String,
    pub name: String,
    /// The remaining fields may be empty: the engine has no such field.
    pub title: String,
    pub description: String,
    pub params: String,
    pub returns: String,
    pub effect: String,
    pub tags: String,
    pub deprecated: String,
    /// Fields that move without the contract changing (usage counters,
    /// timestamps); they never reach an entry, so never move
    /// `catalog_version`. Listed for documentation and for `check-config`.
    pub volatile: Vec<String>,
}

impl Default for CatalogFields {
    fn default() -> Self {
        Self {
            path: "/api/v1/capabilities".into(),
            list: "capabilities".into(),
            name: "name".into(),
            title: "title".into(),
            description: "doc".into(),
            params: "params".into(),
            returns: "returns".into(),
            effect: "effect".into(),
            tags: "tags".into(),
            deprecated: "deprecated".into(),
            volatile: vec!["usage_count".into(), "updated_at".into()],
        }
    }
}

/// What a problem's level means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LevelMeaning {
    Error,
    Warning,
}

/// What an HTTP status of a check answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckMeaning {
    /// The body is the validator's answer (problems at `problems`).
    Answer,
    /// The validator failed: an `internal` request error.
    Error,
}

/// The validator endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckMapping {
    pub path: String,
    /// Request body template (placeholders `{{program}}`, `{{context}}`).
    pub body: toml::Value,
    pub encodings: Encodings,
    /// HTTP status (`"422"`, or a class `"4xx"`) → meaning; a status not
    /// listed is an error.
    pub status: BTreeMap<String, CheckMeaning>,
    /// Response field holding the problems array.
    pub problems: String,
    pub text: String,
    pub location: String,
    pub level: String,
    /// The level value meaning an error, and the one meaning a warning.
    pub error_level: String,
    pub warning_level: String,
    /// Further level values and their meaning. A level in none of these is
    /// logged and counts as an error (fail closed).
    pub levels: BTreeMap<String, LevelMeaning>,
}

impl Default for CheckMapping {
    fn default() -> Self {
        Self {
            path: "/api/v1/workflows/check".into(),
            body: template(&[("workflow", "{{program}}"), ("context", "{{context}}")]),
            encodings: Encodings::default(),
            status: BTreeMap::from([("2xx".into(), CheckMeaning::Answer)]),
            problems: "problems".into(),
            text: "text".into(),
            location: "where".into(),
            level: "level".into(),
            error_level: "ERROR".into(),
            warning_level: "WARN".into(),
            levels: BTreeMap::new(),
        }
    }
}

/// A flat body template of `key = "{{placeholder}}"` pairs.
fn template(pairs: &[(&str, &str)]) -> toml::Value {
    toml::Value::Table(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), toml::Value::String(v.to_string())))
            .collect(),
    )
}

/// How a placeholder's value is written into a request body.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Encoding {
    /// `boolean`, `milliseconds`, `seconds` (fractional when needed),
    /// `whole_seconds` (rounded up), `json` or `json_string`.
    Named(String),
    /// For a switch: the value sent when on, and the one sent when off.
    Pair([String; 2]),
}

/// Encodings of the body placeholders.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Encodings {
    pub program: Encoding,
    pub input: Encoding,
    pub context: Encoding,
    pub trace: Encoding,
    pub dry_run: Encoding,
    pub deadline: Encoding,
}

impl Default for Encodings {
    fn default() -> Self {
        let named = |n: &str| Encoding::Named(n.into());
        Self {
            program: named("json"),
            input: named("json"),
            context: named("json"),
            trace: named("boolean"),
            dry_run: named("boolean"),
            deadline: named("milliseconds"),
        }
    }
}

/// The placeholders a body template may use.
pub const PLACEHOLDERS: [&str; 6] = [
    "program", "input", "context", "trace", "dry_run", "deadline",
];

/// What an HTTP status of a run answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMeaning {
    /// The body is a run answer (its state decides).
    Answer,
    /// The engine refused the program; its problems are at `problems`.
    Rejected,
    /// Nothing ran: an `internal` request error, not recorded for replay.
    NotStarted,
    /// The run may have started and failed: a `partial` outcome.
    Failed,
    /// Failed mid-run if the body shows a run id or events; otherwise
    /// nothing started.
    FailedIfStarted,
}

/// What a run state value means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateMeaning {
    Completed,
    Failed,
    TimedOut,
    Rejected,
    /// Not finished yet (asynchronous runners).
    Running,
    /// The engine broke during the run (crash): a `partial` outcome.
    Broken,
}

/// Synchronous (the run call answers with the result) or asynchronous
/// (start, poll, then read the result and the step log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    #[default]
    Sync,
    Async,
}

/// The runner endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunMapping {
    /// Run (sync) or start (async) call, POST.
    pub path: String,
    pub runner: Runner,
    /// Request body template; placeholders `{{program}}`, `{{input}}`,
    /// `{{context}}`, `{{trace}}`, `{{dry_run}}`, `{{deadline}}`.
    pub body: toml::Value,
    pub encodings: Encodings,
    /// HTTP status (`"422"`, or a class `"5xx"`) → meaning.
    pub status: BTreeMap<String, RunMeaning>,
    pub run_id: String,
    pub state: String,
    pub result: String,
    /// Whether the result is JSON encoded inside a string.
    pub result_encoded: bool,
    pub error: String,
    pub events: String,
    /// Problems of a rejected run (same item shape as the validator's).
    pub problems: String,
    /// Engine state value → meaning. A value not listed is logged and read
    /// as a broken run (it may have started).
    pub states: BTreeMap<String, StateMeaning>,
    /// Asynchronous runners: the status call polled until a terminal state.
    pub poll: PollMapping,
    /// Asynchronous runners: the cancel call made when the deadline passes;
    /// empty path: the engine has none.
    pub cancel: CallPath,
    /// Asynchronous runners: the result call; empty path: the result is in
    /// the poll answer.
    pub output: OutputMapping,
    /// Asynchronous runners: the step log, paged.
    pub log: LogMapping,
}

impl Default for RunMapping {
    fn default() -> Self {
        Self {
            path: "/api/v1/workflows/run".into(),
            runner: Runner::Sync,
            body: template(&[
                ("workflow", "{{program}}"),
                ("input", "{{input}}"),
                ("context", "{{context}}"),
                ("trace", "{{trace}}"),
                ("dry_run", "{{dry_run}}"),
                ("deadline_ms", "{{deadline}}"),
            ]),
            encodings: Encodings::default(),
            status: BTreeMap::from([
                ("2xx".into(), RunMeaning::Answer),
                ("4xx".into(), RunMeaning::NotStarted),
                ("5xx".into(), RunMeaning::FailedIfStarted),
            ]),
            run_id: "run".into(),
            state: "state".into(),
            result: "result".into(),
            result_encoded: false,
            error: "error".into(),
            events: "events".into(),
            problems: "problems".into(),
            states: BTreeMap::from([
                ("COMPLETED".into(), StateMeaning::Completed),
                ("FAILED".into(), StateMeaning::Failed),
                ("TIMED_OUT".into(), StateMeaning::TimedOut),
                ("REJECTED".into(), StateMeaning::Rejected),
            ]),
            poll: PollMapping::default(),
            cancel: CallPath::default(),
            output: OutputMapping::default(),
            log: LogMapping::default(),
        }
    }
}

/// A call at a path template (`/runs/{run_id}/cancel`).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct CallPath {
    pub path: String,
}

/// The status call of an asynchronous runner (GET `path` with `{run_id}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PollMapping {
    pub path: String,
    /// Field paths in the status answer (meanings from `run.states`).
    pub state: String,
    pub error: String,
    pub problems: String,
    /// First wait between polls; doubled after each poll up to `max_delay_ms`.
    pub first_delay_ms: u64,
    pub max_delay_ms: u64,
    /// How long past the run deadline the gateway keeps polling before it
    /// cancels (the engine is expected to stop the run at the deadline).
    pub grace_ms: u64,
}

impl Default for PollMapping {
    fn default() -> Self {
        Self {
            path: String::new(),
            state: "state".into(),
            error: "error".into(),
            problems: "problems".into(),
            first_delay_ms: 10,
            max_delay_ms: 500,
            grace_ms: 5000,
        }
    }
}

/// The result call of an asynchronous runner.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct OutputMapping {
    pub path: String,
    /// Field of the result in that answer.
    pub field: String,
    /// Whether the result is JSON encoded inside a string.
    pub encoded: bool,
}

/// The step log of an asynchronous runner: GET `path` (with `{run_id}` and
/// `{cursor}`), events at `items`, the next cursor at `next` (absent, null or
/// empty: last page).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogMapping {
    pub path: String,
    pub items: String,
    pub next: String,
    pub first_cursor: String,
    /// Whether each event is JSON encoded inside a string.
    pub encoded: bool,
    /// Upper bound of pages read for one run.
    pub max_pages: usize,
}

impl Default for LogMapping {
    fn default() -> Self {
        Self {
            path: String::new(),
            items: "items".into(),
            next: "next".into(),
            first_cursor: String::new(),
            encoded: false,
            max_pages: 1000,
        }
    }
}

/// What an event kind means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Call,
    Set,
    Branch,
    LoopEnter,
    LoopNext,
    LoopExit,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Call => "call",
            EventKind::Set => "set",
            EventKind::Branch => "branch",
            EventKind::LoopEnter => "loop_enter",
            EventKind::LoopNext => "loop_next",
            EventKind::LoopExit => "loop_exit",
        }
    }
}

/// Which arm a branch took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArmMeaning {
    Then,
    Else,
}

impl ArmMeaning {
    pub fn as_str(self) -> &'static str {
        match self {
            ArmMeaning::Then => "then",
            ArmMeaning::Else => "else",
        }
    }
}

/// Whether a call succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallOutcome {
    Ok,
    Failed,
}

/// The runner's event log.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EventMapping {
    pub kind: String,
    /// Event kind value → meaning; kinds not listed are logged and skipped.
    pub kinds: BTreeMap<String, EventKind>,
    pub step: String,
    /// Enclosing loop counters, outermost first.
    pub iter: String,
    /// The engine's count of a loop's first iteration (0 or 1).
    pub counter_base: u64,
    pub ms: String,
    pub capability: String,
    pub args: String,
    pub result: String,
    /// Field telling whether a call succeeded, and its values' meanings
    /// (a value not listed is a failure).
    pub ok_field: String,
    pub outcomes: BTreeMap<String, CallOutcome>,
    pub error: String,
    /// Value produced by a set step.
    pub set_value: String,
    /// Arm taken by a branch (values in `arms`), the condition as written,
    /// and its value.
    pub arm: String,
    pub arms: BTreeMap<String, ArmMeaning>,
    pub cond: String,
    pub cond_value: String,
    /// Number of items a loop activation will visit (on loop enter).
    pub loop_count: String,
}

impl Default for EventMapping {
    fn default() -> Self {
        Self {
            kind: "type".into(),
            kinds: BTreeMap::from([
                ("call".into(), EventKind::Call),
                ("set".into(), EventKind::Set),
                ("branch".into(), EventKind::Branch),
                ("loop_enter".into(), EventKind::LoopEnter),
                ("loop_next".into(), EventKind::LoopNext),
                ("loop_exit".into(), EventKind::LoopExit),
            ]),
            step: "step".into(),
            iter: "iter".into(),
            counter_base: 1,
            ms: "ms".into(),
            capability: "capability".into(),
            args: "args".into(),
            result: "result".into(),
            ok_field: "status".into(),
            outcomes: BTreeMap::from([
                ("ok".into(), CallOutcome::Ok),
                ("failed".into(), CallOutcome::Failed),
            ]),
            error: "error".into(),
            set_value: "value".into(),
            arm: "arm".into(),
            arms: BTreeMap::from([
                ("then".into(), ArmMeaning::Then),
                ("else".into(), ArmMeaning::Else),
            ]),
            cond: "cond".into(),
            cond_value: "value".into(),
            loop_count: "count".into(),
        }
    }
}

/// Reads a dotted path (`stats.calls`) out of a JSON value.
pub fn pick<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    if path.is_empty() {
        return Some(value);
    }
    path.split('.').try_fold(value, |v, key| v.get(key))
}

/// Like `pick`, but an empty path means "the engine has no such field".
pub fn pick_field<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    if path.is_empty() {
        None
    } else {
        pick(value, path)
    }
}
