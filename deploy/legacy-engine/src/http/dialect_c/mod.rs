//! Dialect c (`--dialect c`): `/v3/...`, workspace in `X-Workspace`, errors as
//! `{"fault": {"message": "..."}}`, and an asynchronous runner: `POST /v3/runs`
//! answers `202` with a run id; the phase, output and step log are read later
//! from their own endpoints, and a run can be cancelled.

mod jobs;
mod runs;
mod wire;
mod wording;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{Map, Value, json};

use super::body::read_object;
use super::{etag, fields, reply};
use crate::service::{self, ServiceError};
use crate::validate::problem::has_errors;
use crate::world::Engine;
use jobs::Jobs;

use runs::{cancel, output, poll, start, steps};

const WORKSPACE_HEADER: &str = "x-workspace";

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
pub(super) enum Reject {
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

pub(super) fn workspace(headers: &HeaderMap) -> Result<String, Reject> {
    reply::header(headers, WORKSPACE_HEADER).ok_or_else(|| {
        Reject::Status(
            StatusCode::BAD_REQUEST,
            "missing X-Workspace header".to_owned(),
        )
    })
}

pub(super) async fn workspace_and_body(
    headers: &HeaderMap,
    body: Body,
) -> Result<(String, Map<String, Value>), Reject> {
    let workspace = workspace(headers)?;
    let body = read_object(body)
        .await
        .map_err(|e| Reject::Status(e.status(), e.message()))?;
    Ok((workspace, body))
}

pub(super) fn bad_request(message: String) -> Reject {
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
pub(super) struct Spec {
    pub(super) document: Value,
    pub(super) arguments: Value,
    pub(super) context: Option<Map<String, Value>>,
}

pub(super) fn spec(body: &Map<String, Value>) -> Result<Spec, String> {
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
