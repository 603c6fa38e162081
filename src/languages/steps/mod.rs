//! The step model every language fills and the operations read: a program
//! seen as its steps ([`StepInfo`]), how a run ended ([`RunEnd`]), and the
//! parts every language shares around them: the plan's risk aggregation
//! ([`plan`]), the summary trace ([`summary`]), the size bound ([`bounds`])
//! and the unknown-capability diagnostic ([`diagnostics`]). A language
//! folder imports this module, never another language's folder.

pub mod bounds;
pub mod diagnostics;
pub mod plan;
pub mod summary;

use std::collections::HashMap;
use std::sync::Arc;

/// What a step does, as far as the operations care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Call,
    Branch,
    Loop,
    Set,
    Other,
}

/// Enclosing construct ids, outermost first, with whether each is a loop.
/// One list per nesting level, shared by every step at that level.
pub type Ancestors = Arc<[(Arc<str>, bool)]>;

/// One step, wherever it is nested.
#[derive(Debug, Clone)]
pub struct StepInfo {
    pub id: Option<String>,
    pub kind: StepKind,
    /// The step's locator in its language's dialect: a JSON Pointer such as
    /// `/steps/1/then/0`, or a text range.
    pub pointer: String,
    pub capability: Option<String>,
    /// Innermost enclosing branch arm, when it is nearer than any loop:
    /// `(branch id, "then" | "else")`.
    pub arm: Option<(Arc<str>, &'static str)>,
    /// Innermost enclosing loop id.
    pub in_loop: Option<Arc<str>>,
    pub ancestors: Ancestors,
}

/// How a run ended, as far as the trace mapping's open constructs are
/// concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Completed,
    Failed,
    TimedOut,
}

/// Step id → locator, for diagnostics whose message names a step.
pub fn locators(steps: &[StepInfo]) -> HashMap<String, String> {
    steps
        .iter()
        .filter_map(|s| Some((s.id.clone()?, s.pointer.clone())))
        .collect()
}
