//! `[engine.mapping.run]`: the runner, synchronous or asynchronous (poll,
//! cancel, output and log calls), what its statuses and states mean.

use super::Encodings;
use super::body::template;
use serde::Deserialize;
use std::collections::BTreeMap;

/// What an HTTP status of a run answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    #[default]
    Sync,
    Async,
}

/// The runner endpoint.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunMapping {
    /// Run (sync) or start (async) call, POST.
    pub path: String,
    /// `sync`: the run call answers with the result; `async`: start, poll, then
    /// read the result and the step log.
    pub runner: Runner,
    /// Request body template; placeholders `{{program}}`, `{{input}}`,
    /// `{{context}}`, `{{trace}}`, `{{dry_run}}`, `{{deadline}}`.
    #[schemars(with = "serde_json::Value")]
    pub body: toml::Value,
    /// How each placeholder of `body` is written.
    pub encodings: Encodings,
    /// HTTP status (`"422"`, or a class `"5xx"`) → meaning.
    pub status: BTreeMap<String, RunMeaning>,
    /// Field of the run id in the run answer.
    pub run_id: String,
    /// Field of the run state (meanings from `states`).
    pub state: String,
    /// Field of the run result.
    pub result: String,
    /// Whether the result is JSON encoded inside a string.
    pub result_encoded: bool,
    /// Field of the run's error message.
    pub error: String,
    /// Field of the run's event log.
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
#[derive(Debug, Clone, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CallPath {
    /// Path template of the call; empty: the engine has none.
    pub path: String,
}

/// The status call of an asynchronous runner (GET `path` with `{run_id}`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PollMapping {
    /// The status call (GET, with `{run_id}`).
    pub path: String,
    /// Field paths in the status answer (meanings from `run.states`).
    pub state: String,
    /// Field of the run's error message in the status answer.
    pub error: String,
    /// Field of a rejected run's problems in the status answer.
    pub problems: String,
    /// First wait between polls; doubled after each poll up to `max_delay_ms`.
    pub first_delay_ms: u64,
    /// Longest wait between two polls.
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
#[derive(Debug, Clone, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OutputMapping {
    /// The result call (GET, with `{run_id}`); empty: the result is in the poll
    /// answer.
    pub path: String,
    /// Field of the result in that answer.
    pub field: String,
    /// Whether the result is JSON encoded inside a string.
    pub encoded: bool,
}

/// The step log of an asynchronous runner: GET `path` (with `{run_id}` and
/// `{cursor}`), events at `items`, the next cursor at `next` (absent, null or
/// empty: last page).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LogMapping {
    /// The log call (GET, with `{run_id}` and `{cursor}`).
    pub path: String,
    /// Field of the page's events.
    pub items: String,
    /// Field of the next page's cursor (absent, null or empty: last page).
    pub next: String,
    /// Cursor of the first page.
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
