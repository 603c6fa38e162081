//! What the loop tells its caller as it goes, and how a command ends. The
//! loop emits [`Event`]s to a [`Reporter`]; `output.rs` turns them into
//! text or JSON. Keeping rendering out of the loop lets tests observe the
//! loop's decisions directly.

use crate::discovery::{Chosen, Discovery};
use crate::gate::{Approval, Assessment};
use crate::learn::Guide;
use crate::values::Outcome;
use serde_json::Value;

/// Process exit codes: the operator (or a calling agent) can tell a bad
/// program from a refusal from a broken server without reading prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The run completed (`ok: true`), or a read-only command succeeded.
    Success = 0,
    /// The program is invalid, or the run ended `ok: false`: values to
    /// act on, not failures to retry.
    NotOk = 1,
    /// The risk gate did not get approval; nothing was transmitted.
    Refused = 2,
    /// Transport failure, carrier error, request error or malformed answer.
    Failure = 3,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Exit::Success => "success",
            Exit::NotOk => "not_ok",
            Exit::Refused => "refused",
            Exit::Failure => "failure",
        }
    }
}

/// One step of the loop, as it happens.
#[derive(Debug)]
pub enum Event<'a> {
    Discovered {
        server: &'a str,
        discovery: &'a Discovery,
        chosen: &'a Chosen,
    },
    Guide(&'a Guide),
    NoCoreGuide {
        language: &'a str,
    },
    /// A `valid` answer (true or false) of the validate tool.
    Validated {
        round: u32,
        answer: &'a Value,
        valid: bool,
    },
    /// The risk picture of a valid program, before the gate decides.
    Risk {
        assessment: &'a Assessment,
    },
    Gate {
        assessment: &'a Assessment,
        /// `None` when no approval was needed.
        approval: Option<&'a Approval>,
    },
    /// An execute request is about to be transmitted.
    Executing {
        round: u32,
        arguments: &'a serde_json::Map<String, Value>,
    },
    Executed {
        round: u32,
        answer: &'a Value,
        outcome: &'a Outcome,
    },
    /// `catalog_drift`: the loop re-validates (round `round` of `max`).
    Drift {
        round: u32,
        max: u32,
    },
    /// The recovery rounds are used up.
    DriftExhausted {
        max: u32,
    },
    /// Something that is not a Pilotage value stopped the loop.
    Failed {
        stage: &'a str,
        error: String,
        /// What the operator can do about it, when the Host knows.
        advice: Option<String>,
    },
    Note(String),
}

/// Receives the loop's events.
pub trait Reporter {
    fn event(&mut self, event: Event<'_>);
    /// Called once, with how the command ends.
    fn finish(&mut self, exit: Exit);
}

/// Keeps a copy of every event's essentials; for tests.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct Recorder {
    pub lines: Vec<String>,
    pub exit: Option<Exit>,
}

#[cfg(test)]
impl Reporter for Recorder {
    fn event(&mut self, event: Event<'_>) {
        let line = match event {
            Event::Discovered { chosen, .. } => format!("discovered {}", chosen.language.name),
            Event::Guide(g) => format!("guide {} cached={}", g.meta.id, g.cached),
            Event::NoCoreGuide { .. } => "no core guide".into(),
            Event::Validated { round, valid, .. } => format!("validated {round} valid={valid}"),
            Event::Risk { assessment } => format!("risk {:?}", assessment.basis),
            Event::Gate {
                assessment,
                approval,
            } => format!(
                "gate required={} approval={:?}",
                assessment.requires_approval(),
                approval
            ),
            Event::Executing { round, .. } => format!("executing {round}"),
            Event::Executed { round, outcome, .. } => {
                format!("executed {round} {}", outcome.class.name())
            }
            Event::Drift { round, max } => format!("drift {round}/{max}"),
            Event::DriftExhausted { max } => format!("drift exhausted {max}"),
            Event::Failed {
                stage,
                error,
                advice,
            } => match advice {
                Some(a) => format!("failed {stage}: {error} (advice: {a})"),
                None => format!("failed {stage}: {error}"),
            },
            Event::Note(n) => format!("note {n}"),
        };
        self.lines.push(line);
    }

    fn finish(&mut self, exit: Exit) {
        self.exit = Some(exit);
    }
}
