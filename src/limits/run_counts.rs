//! Executes in progress per caller, for budgets kept per caller. Only
//! callers with a run in progress have an entry (it leaves with their last
//! run), so the table is as large as the runs in flight and no larger.

use super::Caller;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The runs in progress of every caller of one budget.
#[derive(Default)]
pub struct RunCounts {
    in_progress: Arc<Mutex<HashMap<Caller, u32>>>,
}

/// One counted run; it stops counting when dropped.
pub struct CountedRun {
    in_progress: Arc<Mutex<HashMap<Caller, u32>>>,
    caller: Caller,
}

impl RunCounts {
    /// Counts one more run of `caller`, unless it already has `cap`.
    pub fn try_start(&self, caller: &Caller, cap: u32) -> Option<CountedRun> {
        let mut table = self
            .in_progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = table.entry(caller.clone()).or_insert(0);
        if *count >= cap {
            return None;
        }
        *count += 1;
        Some(CountedRun {
            in_progress: self.in_progress.clone(),
            caller: caller.clone(),
        })
    }

    /// Callers with a run in progress.
    pub fn callers(&self) -> usize {
        self.in_progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Drop for CountedRun {
    fn drop(&mut self) {
        let mut table = self
            .in_progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = table.get_mut(&self.caller) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                table.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_leaves_the_table_with_its_last_run() {
        let counts = RunCounts::default();
        let a = Caller::Session("a".into());
        let first = counts.try_start(&a, 2).unwrap();
        let second = counts.try_start(&a, 2).unwrap();
        assert!(counts.try_start(&a, 2).is_none());
        assert!(counts.try_start(&Caller::Session("b".into()), 2).is_some());
        assert_eq!(counts.callers(), 1, "b's run ended when its slot dropped");
        drop(first);
        drop(second);
        assert_eq!(counts.callers(), 0);
    }
}
