//! The "output is never used" warning for `read` calls.
//!
//! A read call's output counts as used when an expression names it, when it is the
//! run's result (the last top-level step of a workflow without an `output` mapping),
//! or when it is the last step of a branch arm or loop body whose branch/loop output
//! is itself used (that output is made of it). Calls that change the world are never
//! flagged: they are run for their effect.

use std::collections::{HashMap, HashSet};

use super::problem::Kind;
use super::walker::{Parent, Walker};
use crate::language::path::Where;

/// What the walk learns about how outputs flow.
#[derive(Debug, Default)]
pub(super) struct Flow {
    /// Read calls with ids, in document order, with their location.
    pub read_calls: Vec<(String, Where)>,
    /// Step ids some expression names.
    pub referenced: HashSet<String>,
    /// Last step of an arm/body → the branch/loop its output flows into.
    carries_to: HashMap<String, String>,
    /// The last top-level step.
    last_top: Option<String>,
}

impl Flow {
    pub fn record_last(&mut self, id: &str, parent: Parent<'_>) {
        match parent {
            Parent::Top => self.last_top = Some(id.to_owned()),
            Parent::Step(p) => {
                self.carries_to.insert(id.to_owned(), p.to_owned());
            }
            Parent::Lost => {}
        }
    }

    fn used(&self, id: &str, result_is_last: bool, depth: usize) -> bool {
        // Nesting is bounded by the depth limit; the counter only guards against a
        // cycle that duplicate ids could create.
        if depth > 64 {
            return true;
        }
        self.referenced.contains(id)
            || (result_is_last && self.last_top.as_deref() == Some(id))
            || self
                .carries_to
                .get(id)
                .is_some_and(|p| self.used(p, result_is_last, depth + 1))
    }
}

impl Walker<'_> {
    pub(super) fn unused_outputs(&mut self, has_mapping: bool) {
        let unused: Vec<(String, Where)> = self
            .flow
            .read_calls
            .iter()
            .filter(|(id, _)| !self.flow.used(id, !has_mapping, 0))
            .cloned()
            .collect();
        for (step, at) in unused {
            self.push(Kind::UnusedOutput { step }, at);
        }
    }
}
