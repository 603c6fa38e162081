//! The runner: executes a compiled program against a private copy of a tenant's
//! world, producing the result and the flat event log. It knows nothing about HTTP
//! or dialects; the service decides what to commit and how to answer.

pub mod budget;
pub mod event;
mod exec;
mod scope;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::language::program::Program;
use crate::world::capability::Capability;
use crate::world::tenant::TenantWorld;
use event::{Event, Failure};

/// What a run needs besides the program and the world.
pub struct RunSetup<'a> {
    /// The run number (audit entries name it).
    pub run: u64,
    pub input: &'a Value,
    pub context: Option<&'a Map<String, Value>>,
    /// The capabilities the tenant sees (for the run-time argument check).
    pub capabilities: &'a BTreeMap<String, Capability>,
    pub deadline: Instant,
    /// Injected fault: stop as if crashed once this many events exist.
    pub crash_after: Option<usize>,
    /// Called once per executed call event (usage counters).
    pub on_call: &'a (dyn Fn(&str) + Send + Sync),
}

/// How a run ended.
#[derive(Debug, PartialEq)]
pub enum Ending {
    Completed(Value),
    Failed { step: String, failure: Failure },
    TimedOut,
    Crashed,
}

/// The ending and every event produced before it.
#[derive(Debug)]
pub struct RunOutcome {
    pub ending: Ending,
    pub events: Vec<Event>,
}

/// Runs `program`; `world` is changed in place by the calls that succeed.
pub async fn execute(
    program: &Program,
    setup: RunSetup<'_>,
    world: &mut TenantWorld,
) -> RunOutcome {
    let values = scope::Values {
        input: setup.input,
        context: setup.context,
        outputs: HashMap::new(),
        frames: Vec::new(),
    };
    let mut runner = exec::Runner::new(setup, world, values);
    let ending = runner.run(program).await;
    RunOutcome {
        ending,
        events: runner.into_events(),
    }
}
