//! Bounds on what one run may do, so no workflow can make the engine hang or run
//! out of memory: loop iterations per activation, events per run, bytes of values
//! produced per run, and the nesting depth of any produced value.

use serde_json::Value;

use crate::language::values::measure;

/// Most iterations one loop activation may run.
pub const MAX_ITERATIONS: usize = 1000;
/// Most events one run may produce.
pub const MAX_EVENTS: usize = 100_000;
/// Most bytes of values (arguments, results, items, outputs) one run may produce.
pub const MAX_DATA_BYTES: usize = 64 * 1024 * 1024;
/// Deepest nesting of any value a run produces.
pub const MAX_VALUE_DEPTH: usize = 128;

/// The running total of one run.
#[derive(Debug, Default)]
pub struct Budget {
    spent: usize,
}

impl Budget {
    /// Charges a produced value; the error is the failure message.
    pub fn charge(&mut self, value: &Value) -> Result<(), String> {
        let size = measure(value, MAX_VALUE_DEPTH)
            .ok_or_else(|| format!("value nested deeper than {MAX_VALUE_DEPTH} levels"))?;
        self.spent = self.spent.saturating_add(size);
        if self.spent > MAX_DATA_BYTES {
            return Err(format!(
                "run exceeded its data budget of {MAX_DATA_BYTES} bytes"
            ));
        }
        Ok(())
    }
}
