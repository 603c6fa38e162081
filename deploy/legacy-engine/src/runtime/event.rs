//! The runner's flat event log, dialect-neutral. Each dialect prints these with its
//! own field names; `iter` holds the 1-based counters of the enclosing loops,
//! outermost first.

use serde_json::Value;

use crate::validate::problem::Kind;

/// Why a call (or the step around it) failed, before any dialect words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A message of the capability itself or of an engine limit.
    Message(String),
    /// The resolved arguments do not fit the capability's params schema (boxed:
    /// problems are large and failures travel through every `Result`).
    Args(Box<Kind>),
}

/// Which arm a branch took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arm {
    Then,
    Else,
}

impl Arm {
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Then => "then",
            Arm::Else => "else",
        }
    }
}

/// Why a loop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitReason {
    Exhausted,
    BodyFailed,
}

impl ExitReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ExitReason::Exhausted => "items exhausted",
            ExitReason::BodyFailed => "body failed",
        }
    }
}

/// One event, in execution order.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Call {
        step: String,
        capability: String,
        args: Value,
        /// `Ok(result)` or why the call failed.
        outcome: Result<Value, Failure>,
        ms: u64,
        iter: Vec<usize>,
    },
    Set {
        step: String,
        value: Value,
        ms: u64,
        iter: Vec<usize>,
    },
    Branch {
        step: String,
        arm: Arm,
        cond: String,
        value: bool,
        ms: u64,
        iter: Vec<usize>,
    },
    LoopEnter {
        step: String,
        count: usize,
        iter: Vec<usize>,
    },
    LoopNext {
        step: String,
        index: usize,
        item: Value,
        iter: Vec<usize>,
    },
    LoopExit {
        step: String,
        iterations: usize,
        reason: ExitReason,
        ms: u64,
        iter: Vec<usize>,
    },
}
