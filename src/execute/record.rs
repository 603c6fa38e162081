//! After a run (Part II §6.5.2): the record is written before the
//! response whenever retention or `store: true` promises it, and the response
//! carries the trace at the level the caller asked, never above the ceiling.
//! Refused runs are answered here too, and never recorded.

use super::{Done, Exec, Finished, Halt, Level, ceiling};
use crate::classify::Diagnostic;
use crate::pilotage::{Outcome, RunStatus};
use crate::store::StoreError;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Builds the response, and the record when retention promises one; the
/// record is durably written before the response leaves. The recorded
/// envelope is built once: the response is that envelope, or it with its
/// trace summarised or left out, so a full trace is neither copied nor
/// rebuilt for the answer.
pub(super) async fn finish(ex: &Exec<'_>, finished: Finished) -> Done {
    let Finished {
        outcome,
        output,
        trace,
        stats,
    } = finished;
    let lang = ex.lang;
    let recorded_level = ceiling(lang);
    let recorded_steps = if recorded_level == Level::Full {
        trace
    } else {
        lang.language.summarize(&trace)
    };
    let run_id = ex.run_id.as_str();
    let mut envelope = envelope(
        run_id,
        &outcome,
        output,
        Some((recorded_level, recorded_steps, stats)),
    );
    if retains(ex) {
        let ttl = lang
            .config
            .retention_duration()
            .unwrap_or(Duration::from_secs(24 * 3600));
        if let Err(e) = write_with_retry(ex, &envelope, ttl).await {
            tracing::error!(%run_id, error = %e, "run record could not be stored after the run; the response says retained: false");
            envelope["trace"]["stats"]["retained"] = Value::Bool(false);
        }
    }
    let response = match ex.checked.level {
        Level::None => {
            if let Some(members) = envelope.as_object_mut() {
                members.shift_remove("trace");
            }
            envelope
        }
        Level::Full if recorded_level == Level::Full => envelope,
        _ => {
            let trace = &mut envelope["trace"];
            let steps = match trace["steps"].take() {
                Value::Array(steps) => lang.language.summarize(&steps),
                _ => Vec::new(),
            };
            trace["steps"] = Value::Array(steps);
            trace["level"] = Value::String(Level::Summary.as_str().into());
            envelope
        }
    };
    Done {
        started: true,
        response,
    }
}

/// Whether this run gets a record (retention, or `store`). A caller no later
/// request can be gets none: nobody could fetch it.
pub(super) fn retains(ex: &Exec<'_>) -> bool {
    ex.principal.lasting
        && match ex.req.store {
            Some(flag) => flag,
            None => ex.lang.config.retention != "none",
        }
}

/// `{run_id, outcome, output?, trace?}`: the shape of the execute response
/// and of the stored record.
fn envelope(
    run_id: &str,
    outcome: &Outcome,
    output: Option<Value>,
    trace: Option<(Level, Vec<Value>, Value)>,
) -> Value {
    let mut out = Map::new();
    out.insert("run_id".into(), Value::String(run_id.into()));
    out.insert("outcome".into(), outcome.to_json());
    if outcome.ok
        && let Some(o) = output
    {
        out.insert("output".into(), o);
    }
    if let Some((level, steps, stats)) = trace {
        let mut trace = Map::new();
        trace.insert("run_id".into(), Value::String(run_id.into()));
        trace.insert("level".into(), Value::String(level.as_str().into()));
        trace.insert("steps".into(), Value::Array(steps));
        trace.insert("stats".into(), stats);
        out.insert("trace".into(), Value::Object(trace));
    }
    Value::Object(out)
}

/// A refused run: a run_id, an outcome, diagnostics when validation refused.
pub(super) fn refuse(
    ex: &Exec<'_>,
    status: RunStatus,
    error: &str,
    diagnostics: Option<&[Diagnostic]>,
) -> Halt {
    let mut response = json!({
        "run_id": ex.run_id,
        "outcome": Outcome::run_failure(status, error).to_json(),
    });
    if let Some(d) = diagnostics {
        response["diagnostics"] = json!(d);
    }
    Halt::Refused(Done {
        started: false,
        response,
    })
}

/// A few attempts, backing off, bounded to about two seconds in all.
async fn write_with_retry(ex: &Exec<'_>, record: &Value, ttl: Duration) -> Result<(), StoreError> {
    const ATTEMPTS: u32 = 4;
    let run_id = ex.run_id.as_str();
    let mut delay = Duration::from_millis(100);
    let mut attempt = 1;
    loop {
        match ex
            .gw
            .store
            .put_run(&ex.principal.scope, run_id, record, ttl)
            .await
        {
            Ok(()) => return Ok(()),
            Err(e) if attempt == ATTEMPTS => return Err(e),
            Err(e) => {
                tracing::warn!(%run_id, attempt, error = %e, "run record write failed; retrying");
                tokio::time::sleep(delay).await;
                delay *= 4;
                attempt += 1;
            }
        }
    }
}
