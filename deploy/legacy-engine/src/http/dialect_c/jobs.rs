//! Dialect c's runs in the background: each accepted run is a job with a
//! phase, polled by id, cancellable, with its output and step log kept after
//! it ends. The oldest finished jobs are forgotten past `KEEP`.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

/// Finished jobs kept for reading.
const KEEP: usize = 10_000;

/// A job's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Queued,
    Running,
    Succeeded,
    Failed,
    TimedOut,
    Rejected,
    Crashed,
    Cancelled,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Queued => "Queued",
            Phase::Running => "Running",
            Phase::Succeeded => "Succeeded",
            Phase::Failed => "Failed",
            Phase::TimedOut => "TimedOut",
            Phase::Rejected => "Rejected",
            Phase::Crashed => "Crashed",
            Phase::Cancelled => "Cancelled",
        }
    }

    pub fn finished(self) -> bool {
        !matches!(self, Phase::Queued | Phase::Running)
    }
}

/// One run as dialect c reports it.
#[derive(Clone, Debug)]
pub struct Job {
    pub workspace: String,
    pub phase: Phase,
    pub fault: Option<String>,
    /// Findings of a run rejected after it was accepted (its input).
    pub findings: Value,
    pub output: Value,
    /// Step records, each JSON encoded in a string.
    pub records: Vec<Value>,
    pub abort: Option<tokio::task::AbortHandle>,
}

#[derive(Default)]
pub struct Jobs {
    seq: AtomicU64,
    map: Mutex<HashMap<String, Job>>,
    finished: Mutex<VecDeque<String>>,
}

impl Jobs {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Job>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a queued job for `workspace`; returns its id.
    pub fn create(&self, workspace: &str) -> String {
        let id = format!("c-{:06}", self.seq.fetch_add(1, Ordering::Relaxed) + 1);
        self.lock().insert(
            id.clone(),
            Job {
                workspace: workspace.to_owned(),
                phase: Phase::Queued,
                fault: None,
                findings: Value::Array(Vec::new()),
                output: Value::Null,
                records: Vec::new(),
                abort: None,
            },
        );
        id
    }

    /// The job, if `workspace` owns it.
    pub fn get(&self, id: &str, workspace: &str) -> Option<Job> {
        self.lock()
            .get(id)
            .filter(|j| j.workspace == workspace)
            .cloned()
    }

    /// Changes a job that has not finished yet (a cancelled job stays cancelled).
    pub fn update(&self, id: &str, change: impl FnOnce(&mut Job)) {
        let finished_now = {
            let mut map = self.lock();
            let Some(job) = map.get_mut(id) else {
                return;
            };
            if job.phase.finished() {
                return;
            }
            change(job);
            job.phase.finished()
        };
        if finished_now {
            self.forget_old(id);
        }
    }

    fn forget_old(&self, id: &str) {
        let mut finished = self
            .finished
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        finished.push_back(id.to_owned());
        while finished.len() > KEEP {
            if let Some(old) = finished.pop_front() {
                self.lock().remove(&old);
            }
        }
    }
}
