//! The "output is never used" warning: a `read` call (by its capability's effect)
//! whose output no expression of the workflow names, the `output` mapping included.
//!
//! Deliberately naive, as the engine has always been: it does not follow outputs
//! into a branch's or loop's own output, nor treat the last step as the result, so
//! a read call at the end of a loop body whose loop output is used is still flagged.
//! Calls that change the world are never flagged: they are run for their effect.

use std::collections::HashSet;

use crate::language::path::Where;

/// What the walk learns about which outputs are read.
#[derive(Debug, Default)]
pub(super) struct Flow {
    /// Read calls with ids, in document order, with their location.
    pub read_calls: Vec<(String, Where)>,
    /// Step ids some expression names.
    pub referenced: HashSet<String>,
}

impl Flow {
    /// The read calls whose output no expression names, in document order.
    pub(super) fn unused_outputs(&self) -> Vec<(String, Where)> {
        self.read_calls
            .iter()
            .filter(|(id, _)| !self.referenced.contains(id))
            .cloned()
            .collect()
    }
}
