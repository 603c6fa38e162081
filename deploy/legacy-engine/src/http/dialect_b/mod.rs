//! Dialect b (`--dialect b`): `/v2/...`, organisation in `X-Org-Id`, errors as
//! `{"failure": "..."}`. The same service as dialect a behind other names.

mod wire;
mod wording;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};

use super::body::read_object;
use super::{etag, fields, reply};
use crate::service::{self, RunRequest, ServiceError};
use crate::validate::problem::has_errors;
use crate::world::Engine;

const ORG_HEADER: &str = "x-org-id";

pub fn routes() -> Router<Arc<Engine>> {
    Router::new()
        .route("/v2/ping", get(ping))
        .route("/v2/registry/functions", get(functions))
        .route("/v2/jobs/validate", post(validate))
        .route("/v2/jobs/execute", post(execute))
        .fallback(no_route)
}

fn failure(status: StatusCode, message: impl Into<String>) -> Response {
    reply::json(status, json!({"failure": message.into()}))
}

/// A refused request, printed as dialect b's failure body.
enum Reject {
    Status(StatusCode, String),
    Service(ServiceError),
}

impl From<ServiceError> for Reject {
    fn from(e: ServiceError) -> Self {
        Reject::Service(e)
    }
}

fn bad_request(message: String) -> Reject {
    Reject::Status(StatusCode::BAD_REQUEST, message)
}

impl IntoResponse for Reject {
    fn into_response(self) -> Response {
        match self {
            Reject::Status(status, message) => failure(status, message),
            Reject::Service(ServiceError::UnknownTenant(t)) => {
                failure(StatusCode::NOT_FOUND, format!("unknown org '{t}'"))
            }
            Reject::Service(ServiceError::ValidatorFault) => failure(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal validator failure",
            ),
            Reject::Service(ServiceError::Crashed { run, events }) => reply::json(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"failure": "runner crashed", "job_id": wire::job_id(run), "log": wire::log(&events)}),
            ),
            Reject::Service(ServiceError::Internal(message)) => {
                failure(StatusCode::INTERNAL_SERVER_ERROR, message)
            }
        }
    }
}

fn org(headers: &HeaderMap) -> Result<String, Reject> {
    reply::header(headers, ORG_HEADER).ok_or_else(|| {
        Reject::Status(
            StatusCode::BAD_REQUEST,
            "missing X-Org-Id header".to_owned(),
        )
    })
}

async fn org_and_body(
    headers: &HeaderMap,
    body: Body,
) -> Result<(String, Map<String, Value>), Reject> {
    let org = org(headers)?;
    let body = read_object(body)
        .await
        .map_err(|e| Reject::Status(e.status(), e.message()))?;
    Ok((org, body))
}

async fn ping() -> Response {
    reply::json(StatusCode::OK, json!({"pong": true}))
}

async fn no_route(method: Method, uri: Uri) -> Response {
    failure(
        StatusCode::NOT_FOUND,
        format!("no route for {method} {}", uri.path()),
    )
}

/// `GET /v2/registry/functions`
async fn functions(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
) -> Result<Response, Reject> {
    let org = org(&headers)?;
    let entries = service::catalog(&engine, &org).await?;
    let array = Value::Array(
        entries
            .iter()
            .map(|(c, used)| wire::function(c, *used))
            .collect(),
    )
    .to_string();
    let body = format!("{{\"functions\":{array}}}");
    Ok(etag::respond(&headers, &array, body))
}

/// `POST /v2/jobs/validate`
async fn validate(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Reject> {
    let (org, body) = org_and_body(&headers, body).await?;
    let ctx = fields::object(&body, "ctx").map_err(bad_request)?;
    let definition = fields::any(&body, "definition");
    let problems = service::check(&engine, &org, &definition, ctx.as_ref()).await?;
    let answer = json!({"valid": !has_errors(&problems), "issues": wire::issues(&problems)});
    Ok(reply::json(StatusCode::OK, answer))
}

fn job_request(body: &Map<String, Value>) -> Result<RunRequest, String> {
    Ok(RunRequest {
        workflow: fields::any(body, "definition"),
        input: fields::input(body, "params"),
        context: fields::object(body, "ctx")?,
        trace: fields::flag(body, "collect_events")?,
        dry_run: fields::flag(body, "simulate")?,
        deadline_ms: fields::millis(body, "timeout_ms")?,
    })
}

/// `POST /v2/jobs/execute`
async fn execute(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Reject> {
    let (org, body) = org_and_body(&headers, body).await?;
    let request = job_request(&body).map_err(bad_request)?;
    let report = service::run(&engine, &org, request).await?;
    Ok(reply::json(StatusCode::OK, wire::report(&report)))
}
