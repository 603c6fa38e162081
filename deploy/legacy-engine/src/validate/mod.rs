//! The validator behind `check` and behind every run: it walks a raw workflow
//! document and reports problems in document order, then the output mapping's, then
//! the unused-output warnings. It never stops at the first problem, except for the
//! size limits, which are checked first and alone.

mod calls;
mod limits;
pub mod problem;
mod references;
mod suggest;
mod unused;
mod walker;

use serde_json::{Map, Value};

use crate::world::CatalogView;
use problem::{Kind, Problem};

pub use limits::{MAX_DEPTH, MAX_STEPS};

/// What the validator needs to know besides the document.
pub struct Env<'a> {
    pub view: &'a CatalogView,
    /// The request's context object, when it carries one.
    pub context: Option<&'a Map<String, Value>>,
}

/// Validates a workflow document.
pub fn validate(workflow: &Value, env: &Env<'_>) -> Vec<Problem> {
    let Some(steps) = workflow.get("steps").and_then(Value::as_array) else {
        return vec![Problem::bare(Kind::NoSteps)];
    };
    let count = limits::count_steps(steps);
    if count > MAX_STEPS {
        return vec![Problem::bare(Kind::StepBudget {
            count,
            limit: MAX_STEPS,
        })];
    }
    let depth = limits::max_depth(steps);
    if depth > MAX_DEPTH {
        return vec![Problem::bare(Kind::NestingDepth {
            depth,
            limit: MAX_DEPTH,
        })];
    }
    walker::Walker::new(env, workflow).run(steps)
}

#[cfg(test)]
mod tests;
