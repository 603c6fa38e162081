//! Running a workflow for a tenant: re-validate, check the input, run on a private
//! copy of the world, and commit that copy only when the run may change the world.
//!
//! A real run commits when it COMPLETED or FAILED (the calls that succeeded stay
//! done) or crashed by injected fault; a TIMED_OUT run and every dry run are thrown
//! away. Runs that call a world-changing handler hold the tenant's run lock from
//! lease to commit, so concurrent writers never lose each other's effects; waiting
//! for it counts against the run's deadline.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::{ServiceError, enter};
use crate::capabilities::mutates;
use crate::language::program::Program;
use crate::language::schema;
use crate::runtime::event::{Event, Failure};
use crate::runtime::{Ending, RunSetup, execute};
use crate::validate::problem::{Kind, Problem, has_errors};
use crate::validate::{Env, validate};
use crate::world::Engine;

/// Deadline when the request names none.
pub const DEFAULT_DEADLINE_MS: u64 = 10_000;
/// Longest deadline a request may ask for (longer ones are cut to it).
pub const MAX_DEADLINE_MS: u64 = 60_000;

/// A run request, already parsed by a dialect.
#[derive(Debug)]
pub struct RunRequest {
    pub workflow: Value,
    pub input: Value,
    pub context: Option<Map<String, Value>>,
    pub trace: bool,
    pub dry_run: bool,
    pub deadline_ms: Option<u64>,
}

/// How a run ended, for the answer.
#[derive(Debug, PartialEq)]
pub enum RunState {
    Completed,
    Failed { step: String, failure: Failure },
    TimedOut { deadline_ms: u64 },
    Rejected,
}

/// The answer to a run request.
#[derive(Debug)]
pub struct RunReport {
    pub run: u64,
    pub state: RunState,
    pub result: Value,
    /// Present when the request asked for a trace.
    pub events: Option<Vec<Event>>,
    /// The validator's problems (or the input's), when rejected.
    pub problems: Vec<Problem>,
}

/// Runs a workflow as `tenant`.
pub async fn run(
    engine: &Engine,
    tenant: &str,
    request: RunRequest,
) -> Result<RunReport, ServiceError> {
    let faults = enter(engine, tenant).await?;
    if faults.validator_500 {
        return Err(ServiceError::ValidatorFault);
    }
    let run = engine.next_run(tenant);
    let deadline_ms = request
        .deadline_ms
        .unwrap_or(DEFAULT_DEADLINE_MS)
        .min(MAX_DEADLINE_MS);
    let deadline = Instant::now() + Duration::from_millis(deadline_ms);
    let trace = request.trace;
    let report =
        |state: RunState, result: Value, events: Vec<Event>, problems: Vec<Problem>| RunReport {
            run,
            state,
            result,
            events: trace.then_some(events),
            problems,
        };

    let view = engine.view(tenant);
    let problems = validate(
        &request.workflow,
        &Env {
            view: &view,
            context: request.context.as_ref(),
        },
    );
    if has_errors(&problems) {
        return Ok(report(
            RunState::Rejected,
            Value::Null,
            Vec::new(),
            problems,
        ));
    }
    let program = Program::compile(&request.workflow).map_err(ServiceError::Internal)?;
    if let Some(input_schema) = &program.input_schema {
        let issues = schema::check(input_schema, &request.input, false);
        if !issues.is_empty() {
            let problems = issues
                .into_iter()
                .map(|i| Problem::bare(Kind::RunInput(i)))
                .collect();
            return Ok(report(
                RunState::Rejected,
                Value::Null,
                Vec::new(),
                problems,
            ));
        }
    }

    let writes = !request.dry_run && program.capabilities().into_iter().any(mutates);
    let _guard = match engine.run_lock(tenant) {
        Some(lock) if writes => match tokio::time::timeout_at(deadline.into(), lock.lock()).await {
            Ok(guard) => Some(guard),
            Err(_) => {
                return Ok(report(
                    RunState::TimedOut { deadline_ms },
                    Value::Null,
                    Vec::new(),
                    Vec::new(),
                ));
            }
        },
        _ => None,
    };
    let mut lease = engine
        .lease(tenant)
        .ok_or_else(|| ServiceError::UnknownTenant(tenant.to_owned()))?;
    let on_call = |capability: &str| engine.record_use(tenant, capability);
    let setup = RunSetup {
        run,
        input: &request.input,
        context: request.context.as_ref(),
        capabilities: &view.visible,
        deadline,
        crash_after: faults.runner_crash_after,
        on_call: &on_call,
    };
    let outcome = execute(&program, setup, &mut lease.world).await;
    // Only a run holding the lock may commit: one that took no lock changed nothing,
    // and committing its stale copy could undo a concurrent writer.
    if writes
        && matches!(
            outcome.ending,
            Ending::Completed(_) | Ending::Failed { .. } | Ending::Crashed
        )
    {
        engine.commit(tenant, lease);
    }
    let events = outcome.events;
    Ok(match outcome.ending {
        Ending::Completed(result) => report(RunState::Completed, result, events, Vec::new()),
        Ending::Failed { step, failure } => report(
            RunState::Failed { step, failure },
            Value::Null,
            events,
            Vec::new(),
        ),
        Ending::TimedOut => report(
            RunState::TimedOut { deadline_ms },
            Value::Null,
            events,
            Vec::new(),
        ),
        Ending::Crashed => return Err(ServiceError::Crashed { run, events }),
    })
}
