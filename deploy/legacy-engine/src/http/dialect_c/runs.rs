//! Dialect c's runs: `POST /v3/runs` checks and accepts, the run goes on in
//! the background; its phase, output and step records are read by id, and an
//! unfinished run can be cancelled.

use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::jobs::{self, Jobs, Phase};
use super::{Reject, bad_request, spec, wire, wording, workspace, workspace_and_body};
use crate::http::{fields, reply};
use crate::language::schema;
use crate::service::{self, RunRequest, RunState, ServiceError};
use crate::validate::problem::{Kind, Problem, has_errors};
use crate::world::Engine;

/// Step records per page of `/v3/runs/{id}/steps`.
const PAGE: usize = 4;

/// A switch written as one of two words.
fn word(options: &Map<String, Value>, name: &str, on: &str, off: &str) -> Result<bool, String> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::String(s)) if s == on => Ok(true),
        Some(Value::String(s)) if s == off => Ok(false),
        Some(_) => Err(format!("options.{name} must be \"{on}\" or \"{off}\"")),
    }
}

fn run_request(body: &Map<String, Value>) -> Result<RunRequest, String> {
    let spec = spec(body)?;
    let options = fields::object(body, "options")?.unwrap_or_default();
    let seconds = match options.get("timeoutSeconds") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|s| *s > 0.0 && s.is_finite())
                .ok_or("options.timeoutSeconds must be a positive number")?,
        ),
    };
    Ok(RunRequest {
        workflow: spec.document,
        input: spec.arguments,
        context: spec.context,
        trace: word(&options, "events", "ALL", "NONE")?,
        dry_run: word(&options, "mode", "SIMULATE", "LIVE")?,
        deadline_ms: seconds.map(|s| (s * 1000.0).ceil() as u64),
    })
}

/// `POST /v3/runs`: checks the document and its arguments first (422 with
/// findings when it may not run), then accepts the run (202) and runs it in
/// the background.
pub(super) async fn start(
    State(engine): State<Arc<Engine>>,
    Extension(jobs): Extension<Arc<Jobs>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Reject> {
    let (workspace, body) = workspace_and_body(&headers, body).await?;
    let request = run_request(&body).map_err(bad_request)?;
    let mut problems = service::check(
        &engine,
        &workspace,
        &request.workflow,
        request.context.as_ref(),
    )
    .await?;
    if !has_errors(&problems)
        && let Some(input_schema) = request.workflow.get("input").filter(|s| s.is_object())
    {
        problems.extend(
            schema::check(input_schema, &request.input, false)
                .into_iter()
                .map(|issue| Problem::bare(Kind::RunInput(issue))),
        );
    }
    if has_errors(&problems) {
        let answer =
            json!({"fault": {"message": wording::REJECTED, "findings": wire::findings(&problems)}});
        return Ok(reply::json(StatusCode::UNPROCESSABLE_ENTITY, answer));
    }
    let id = jobs.create(&workspace);
    let task = {
        let (engine, jobs, id, workspace) =
            (engine.clone(), jobs.clone(), id.clone(), workspace.clone());
        tokio::spawn(async move {
            jobs.update(&id, |j| j.phase = Phase::Running);
            let outcome = service::run(&engine, &workspace, request).await;
            jobs.update(&id, |job| settle(job, outcome));
        })
    };
    jobs.update(&id, |j| j.abort = Some(task.abort_handle()));
    Ok(reply::json(
        StatusCode::ACCEPTED,
        json!({"runId": id, "phase": Phase::Queued.as_str()}),
    ))
}

/// Records how a background run ended.
fn settle(job: &mut jobs::Job, outcome: Result<service::RunReport, ServiceError>) {
    job.abort = None;
    match outcome {
        Ok(report) => {
            job.records = report
                .events
                .as_deref()
                .map(wire::encoded_records)
                .unwrap_or_default();
            match report.state {
                RunState::Completed => {
                    job.phase = Phase::Succeeded;
                    job.output = Value::String(report.result.to_string());
                }
                RunState::Failed { step, failure } => {
                    job.phase = Phase::Failed;
                    job.fault = Some(wording::step_failed(&step, &failure));
                }
                RunState::TimedOut { deadline_ms } => {
                    job.phase = Phase::TimedOut;
                    job.fault = Some(wording::timed_out(deadline_ms));
                }
                RunState::Rejected => {
                    job.phase = Phase::Rejected;
                    job.fault = Some(wording::REJECTED.to_owned());
                    job.findings = wire::findings(&report.problems);
                }
            }
        }
        Err(ServiceError::Crashed { events, .. }) => {
            job.phase = Phase::Crashed;
            job.fault = Some("runner crashed".to_owned());
            job.records = wire::encoded_records(&events);
        }
        Err(ServiceError::ValidatorFault) => {
            job.phase = Phase::Crashed;
            job.fault = Some("internal validator failure".to_owned());
        }
        Err(other) => {
            job.phase = Phase::Crashed;
            job.fault = Some(format!("{other:?}"));
        }
    }
}

fn job(jobs: &Jobs, id: &str, headers: &HeaderMap) -> Result<jobs::Job, Reject> {
    let workspace = workspace(headers)?;
    jobs.get(id, &workspace)
        .ok_or_else(|| Reject::Status(StatusCode::NOT_FOUND, format!("no run '{id}'")))
}

/// `GET /v3/runs/{id}`
pub(super) async fn poll(
    Extension(jobs): Extension<Arc<Jobs>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Reject> {
    let job = job(&jobs, &id, &headers)?;
    let fault = job
        .fault
        .map(|m| json!({"message": m, "findings": job.findings}));
    Ok(reply::json(
        StatusCode::OK,
        json!({"runId": id, "phase": job.phase.as_str(), "fault": fault}),
    ))
}

/// `POST /v3/runs/{id}/cancel`: stops a run that has not finished; its
/// changes are never committed.
pub(super) async fn cancel(
    Extension(jobs): Extension<Arc<Jobs>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Reject> {
    job(&jobs, &id, &headers)?;
    jobs.update(&id, |job| {
        if let Some(abort) = job.abort.take() {
            abort.abort();
        }
        job.phase = Phase::Cancelled;
        job.fault = Some("cancelled".to_owned());
    });
    let job = job(&jobs, &id, &headers)?;
    Ok(reply::json(
        StatusCode::OK,
        json!({"runId": id, "phase": job.phase.as_str()}),
    ))
}

/// `GET /v3/runs/{id}/output`: the result, JSON encoded in a string.
pub(super) async fn output(
    Extension(jobs): Extension<Arc<Jobs>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Reject> {
    let job = job(&jobs, &id, &headers)?;
    if job.phase != Phase::Succeeded {
        return Err(Reject::Status(
            StatusCode::CONFLICT,
            format!("run '{id}' has no output (phase {})", job.phase.as_str()),
        ));
    }
    Ok(reply::json(StatusCode::OK, json!({"output": job.output})))
}

/// `GET /v3/runs/{id}/steps?cursor=N`: `PAGE` records from position N.
pub(super) async fn steps(
    Extension(jobs): Extension<Arc<Jobs>>,
    Path(id): Path<String>,
    Query(query): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, Reject> {
    let job = job(&jobs, &id, &headers)?;
    let from: usize = match query.get("cursor").map(String::as_str) {
        None | Some("") => 0,
        Some(c) => c
            .parse()
            .map_err(|_| bad_request(format!("cursor '{c}' is not a position")))?,
    };
    let items: Vec<Value> = job.records.iter().skip(from).take(PAGE).cloned().collect();
    let next = from + items.len();
    let next = (next < job.records.len()).then(|| next.to_string());
    Ok(reply::json(
        StatusCode::OK,
        json!({"items": items, "nextCursor": next}),
    ))
}
