//! Dialect c (`--dialect c`): `/v3/...`, workspace in `X-Workspace`, errors as
//! `{"fault": {"message": "..."}}`, and an asynchronous runner: `POST /v3/runs`
//! answers `202` with a run id; the phase, output and step log are read later
//! from their own endpoints, and a run can be cancelled.

mod jobs;
mod wire;
mod wording;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{Map, Value, json};

use super::body::read_object;
use super::{etag, fields, reply};
use crate::language::schema;
use crate::service::{self, RunRequest, RunState, ServiceError};
use crate::validate::problem::{Kind, Problem, has_errors};
use crate::world::Engine;
use jobs::{Jobs, Phase};

const WORKSPACE_HEADER: &str = "x-workspace";
/// Step records per page of `/v3/runs/{id}/steps`.
const PAGE: usize = 4;

pub fn routes() -> Router<Arc<Engine>> {
    Router::new()
        .route("/v3/status", get(status))
        .route("/v3/actions", get(actions))
        .route("/v3/validations", post(validate))
        .route("/v3/runs", post(start))
        .route("/v3/runs/{id}", get(poll))
        .route("/v3/runs/{id}/cancel", post(cancel))
        .route("/v3/runs/{id}/output", get(output))
        .route("/v3/runs/{id}/steps", get(steps))
        .fallback(no_route)
        .layer(Extension(Arc::new(Jobs::default())))
}

fn fault(status: StatusCode, message: impl Into<String>) -> Response {
    reply::json(status, json!({"fault": {"message": message.into()}}))
}

/// A refused request, printed as dialect c's fault body.
enum Reject {
    Status(StatusCode, String),
    Service(ServiceError),
}

impl From<ServiceError> for Reject {
    fn from(e: ServiceError) -> Self {
        Reject::Service(e)
    }
}

impl IntoResponse for Reject {
    fn into_response(self) -> Response {
        match self {
            Reject::Status(status, message) => fault(status, message),
            Reject::Service(ServiceError::UnknownTenant(t)) => {
                fault(StatusCode::NOT_FOUND, format!("unknown workspace '{t}'"))
            }
            Reject::Service(ServiceError::ValidatorFault) => fault(
                StatusCode::SERVICE_UNAVAILABLE,
                "internal validator failure",
            ),
            Reject::Service(ServiceError::Crashed { .. }) => {
                fault(StatusCode::INTERNAL_SERVER_ERROR, "runner crashed")
            }
            Reject::Service(ServiceError::Internal(message)) => {
                fault(StatusCode::INTERNAL_SERVER_ERROR, message)
            }
        }
    }
}

fn workspace(headers: &HeaderMap) -> Result<String, Reject> {
    reply::header(headers, WORKSPACE_HEADER).ok_or_else(|| {
        Reject::Status(
            StatusCode::BAD_REQUEST,
            "missing X-Workspace header".to_owned(),
        )
    })
}

async fn workspace_and_body(
    headers: &HeaderMap,
    body: Body,
) -> Result<(String, Map<String, Value>), Reject> {
    let workspace = workspace(headers)?;
    let body = read_object(body)
        .await
        .map_err(|e| Reject::Status(e.status(), e.message()))?;
    Ok((workspace, body))
}

fn bad_request(message: String) -> Reject {
    Reject::Status(StatusCode::BAD_REQUEST, message)
}

async fn status() -> Response {
    reply::json(StatusCode::OK, json!({"up": true}))
}

async fn no_route(method: Method, uri: Uri) -> Response {
    fault(
        StatusCode::NOT_FOUND,
        format!("no route for {method} {}", uri.path()),
    )
}

/// `GET /v3/actions`
async fn actions(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
) -> Result<Response, Reject> {
    let workspace = workspace(&headers)?;
    let entries = service::catalog(&engine, &workspace).await?;
    let array = Value::Array(
        entries
            .iter()
            .map(|(c, used)| wire::action(c, *used))
            .collect(),
    )
    .to_string();
    let body = format!("{{\"data\":{{\"actions\":{array}}}}}");
    Ok(etag::respond(&headers, &array, body))
}

/// The `spec` object of a request: the document (a JSON string), arguments
/// and context.
struct Spec {
    document: Value,
    arguments: Value,
    context: Option<Map<String, Value>>,
}

fn spec(body: &Map<String, Value>) -> Result<Spec, String> {
    let spec = match body.get("spec") {
        Some(Value::Object(spec)) => spec.clone(),
        _ => return Err("field 'spec' must be an object".into()),
    };
    let document = match spec.get("document") {
        Some(Value::String(text)) => serde_json::from_str(text)
            .map_err(|e| format!("spec.document is not a JSON document: {e}"))?,
        _ => return Err("spec.document must be a string holding the JSON document".into()),
    };
    Ok(Spec {
        document,
        arguments: fields::input(&spec, "arguments"),
        context: fields::object(&spec, "context")?,
    })
}

/// `POST /v3/validations`: 200 when the document may run, 422 when it may not;
/// both carry the findings.
async fn validate(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Reject> {
    let (workspace, body) = workspace_and_body(&headers, body).await?;
    let spec = spec(&body).map_err(bad_request)?;
    let problems =
        service::check(&engine, &workspace, &spec.document, spec.context.as_ref()).await?;
    let verdict = json!({"findings": wire::findings(&problems)});
    if has_errors(&problems) {
        let answer = json!({"verdict": verdict, "fault": {"message": "document invalid"}});
        return Ok(reply::json(StatusCode::UNPROCESSABLE_ENTITY, answer));
    }
    Ok(reply::json(StatusCode::OK, json!({"verdict": verdict})))
}

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
async fn start(
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
async fn poll(
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
async fn cancel(
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
async fn output(
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
async fn steps(
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
