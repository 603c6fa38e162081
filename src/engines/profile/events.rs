//! `[engine.mapping.events]` of the REST adapter, and the event reading of
//! every engine profile: the runner's event log, its value tables and
//! counter base.

use serde::Deserialize;
use std::collections::BTreeMap;

/// What an event kind means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CallOutcome {
    Ok,
    Failed,
}

/// The runner's event log.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EventMapping {
    /// Field of an event's kind (meanings from `kinds`).
    pub kind: String,
    /// Event kind value → meaning; kinds not listed are logged and skipped.
    pub kinds: BTreeMap<String, EventKind>,
    /// Field of the id of the step an event belongs to.
    pub step: String,
    /// Enclosing loop counters, outermost first.
    pub iter: String,
    /// The engine's count of a loop's first iteration (0 or 1).
    pub counter_base: u64,
    /// Field of an event's duration in milliseconds.
    pub ms: String,
    /// Field of the capability a call event called.
    pub capability: String,
    /// Field of a call event's arguments.
    pub args: String,
    /// Field of a call event's result.
    pub result: String,
    /// Field telling whether a call succeeded, and its values' meanings
    /// (a value not listed is a failure).
    pub ok_field: String,
    /// Values of `ok_field` and whether each means success.
    pub outcomes: BTreeMap<String, CallOutcome>,
    /// Field of a failed call's error message.
    pub error: String,
    /// Value produced by a set step.
    pub set_value: String,
    /// Arm taken by a branch (values in `arms`), the condition as written,
    /// and its value.
    pub arm: String,
    /// Values of `arm` and which arm each means.
    pub arms: BTreeMap<String, ArmMeaning>,
    /// Field of a branch's condition as written.
    pub cond: String,
    /// Field of the value the condition had.
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
