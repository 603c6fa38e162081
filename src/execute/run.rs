//! Step 5 of execute (Part II §6.5.2): once the store has room for what it
//! will record and the idempotency claim (if any) is marked started, the
//! program runs on the engine, and the engine's reply becomes an outcome and
//! the language's trace.

use super::bind::run_input;
use super::claim::Claim;
use super::record::{refuse, retains};
use super::{Exec, Finished, Halt, Runnable, store_internal_with};
use crate::catalog::CatalogView;
use crate::engines::{EngineError, RunOrder, RunReply, RunState};
use crate::languages::RunEnd;
use crate::pilotage::internal;
use crate::pilotage::{Outcome, RequestError, RunStatus};
use crate::validate;
use serde_json::{Value, json};
use std::time::Instant;

/// Room in the store, then the claim marked started: nothing runs that
/// could not be recorded.
pub(super) async fn reserve(ex: &Exec<'_>, claim: Option<&Claim>) -> Result<(), RequestError> {
    if retains(ex) || claim.is_some() {
        ex.gw
            .store
            .admit(&ex.principal.scope)
            .await
            .map_err(|e| store_internal_with(&e, "nothing was executed"))?;
    }
    if let Some(claim) = claim {
        claim.start(ex.gw).await?;
    }
    Ok(())
}

/// The engine's answer, read as the outcome of a started run.
struct Ended {
    outcome: Outcome,
    output: Option<Value>,
    events: Vec<Value>,
    end: RunEnd,
}

fn ended_as(outcome: Outcome, output: Option<Value>, events: Vec<Value>, end: RunEnd) -> Ended {
    Ended {
        outcome,
        output,
        events,
        end,
    }
}

pub(super) async fn on_engine(
    ex: &Exec<'_>,
    view: &CatalogView,
    runnable: &Runnable,
) -> Result<Finished, Halt> {
    let lang = ex.lang;
    let input = run_input(ex);
    let context = ex
        .req
        .context
        .as_ref()
        .filter(|_| lang.context_schema.is_some());
    let order = RunOrder {
        program: &runnable.program,
        input: &input,
        context,
        dry_run: ex.checked.test_run,
        deadline: ex.deadline(),
        stop: ex.req.terms.stop.as_ref(),
    };
    let started = Instant::now();
    let in_flight = ex.gw.metrics.run_in_flight();
    let reply = lang.engine.run(&ex.principal.tenant, &order).await;
    drop(in_flight);
    let answer = ended(ex, view, runnable, reply)?;
    Ok(traced(ex, runnable, answer, started))
}

/// The engine's reply as an outcome; a reply that shows nothing ran is a
/// request error or a refused run, never a replayed outcome.
fn ended(
    ex: &Exec<'_>,
    view: &CatalogView,
    runnable: &Runnable,
    reply: Result<RunReply, EngineError>,
) -> Result<Ended, Halt> {
    let reply = match reply {
        Err(
            e @ (EngineError::Unreachable(_) | EngineError::Failed(_) | EngineError::NoAnswer(_)),
        ) => {
            return Err(internal(&e).into());
        }
        Err(e @ EngineError::Unavailable { .. }) => return Err(internal(&e).into()),
        // The engine's answer shows nothing ran (as the mapping reads it).
        Err(e @ EngineError::NotStarted(_)) => return Err(internal(&e).into()),
        Err(EngineError::RunBroken { message, events }) => {
            let outcome = Outcome::run_failure(
                RunStatus::Partial,
                format!("the engine failed mid-run: {message}"),
            );
            return Ok(ended_as(outcome, None, events, RunEnd::Failed));
        }
        Ok(reply) => reply,
    };
    Ok(match reply.state {
        RunState::Rejected => {
            let lang = ex.lang;
            let mut diagnostics =
                validate::classify_problems(ex.gw, lang, view, &runnable.steps, reply.problems);
            validate::locate_whole_program(lang, &runnable.program, &mut diagnostics);
            return Err(refuse(
                ex,
                RunStatus::ValidationError,
                "the engine rejected the program; nothing was executed",
                Some(&diagnostics),
            ));
        }
        RunState::Completed => ended_as(
            Outcome::success(),
            Some(reply.result),
            reply.events,
            RunEnd::Completed,
        ),
        RunState::Failed => {
            // `partial` instead once the trace shows a call that completed
            // (side effects may exist): see `traced`.
            let error = reply.error.unwrap_or_else(|| "the run failed".into());
            let outcome = Outcome::run_failure(RunStatus::Error, error);
            ended_as(outcome, None, reply.events, RunEnd::Failed)
        }
        RunState::TimedOut => {
            let error = reply
                .error
                .unwrap_or_else(|| "the run's deadline passed".into());
            let outcome = Outcome::run_failure(RunStatus::Timeout, error);
            ended_as(outcome, None, reply.events, RunEnd::TimedOut)
        }
    })
}

/// The language's full trace of the run, and its stats.
fn traced(ex: &Exec<'_>, runnable: &Runnable, ended: Ended, started: Instant) -> Finished {
    let lang = ex.lang;
    let Ended {
        mut outcome,
        output,
        events,
        end,
    } = ended;
    let trace = lang.language.trace(
        &runnable.program,
        &events,
        lang.engine.profile(),
        &runnable.steps,
        end,
    );
    if end == RunEnd::Failed
        && outcome.status == RunStatus::Error.as_str()
        && trace
            .iter()
            .any(|step| lang.language.completed_a_call(step))
    {
        outcome.status = RunStatus::Partial.as_str();
    }
    let stats = json!({"calls": trace.iter().filter(|s| s.get("calls").is_some()).count(),
        "duration_ms": started.elapsed().as_millis() as u64, "test_run": ex.checked.test_run});
    Finished {
        outcome,
        output,
        trace,
        stats,
    }
}
