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
