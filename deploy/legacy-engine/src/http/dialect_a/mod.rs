//! Dialect a (the default): `/healthz` and `/api/v1/...`, tenant in `X-Tenant`,
//! errors as `{"error": "..."}`. A thin translation between HTTP and the service.

mod wire;
pub(super) mod wording;

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
use crate::world::{Engine, clock};

const TENANT_HEADER: &str = "x-tenant";

pub fn routes() -> Router<Arc<Engine>> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/v1/capabilities", get(capabilities))
        .route("/api/v1/workflows/check", post(check))
        .route("/api/v1/workflows/run", post(run))
        .fallback(no_route)
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    reply::json(status, json!({"error": message.into()}))
}

/// A refused request, printed as dialect a's error body.
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
            Reject::Status(status, message) => error(status, message),
            Reject::Service(ServiceError::UnknownTenant(t)) => {
                error(StatusCode::NOT_FOUND, format!("unknown tenant '{t}'"))
            }
            Reject::Service(ServiceError::ValidatorFault) => error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal validator failure",
            ),
            Reject::Service(ServiceError::Crashed { run, events }) => reply::json(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": "runner crashed", "run": wire::run_id(run), "events": wire::events(&events)}),
            ),
            Reject::Service(ServiceError::Internal(message)) => {
                error(StatusCode::INTERNAL_SERVER_ERROR, message)
            }
        }
    }
}

fn tenant(headers: &HeaderMap) -> Result<String, Reject> {
    reply::header(headers, TENANT_HEADER).ok_or_else(|| {
        Reject::Status(
            StatusCode::BAD_REQUEST,
            "missing X-Tenant header".to_owned(),
        )
    })
}

/// The tenant and the JSON object body of a POST.
async fn tenant_and_body(
    headers: &HeaderMap,
    body: Body,
) -> Result<(String, Map<String, Value>), Reject> {
    let tenant = tenant(headers)?;
    let body = read_object(body)
        .await
        .map_err(|e| Reject::Status(e.status(), e.message()))?;
    Ok((tenant, body))
}

async fn healthz() -> Response {
    reply::json(StatusCode::OK, json!({"status": "ok"}))
}

async fn no_route(method: Method, uri: Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("no route for {method} {}", uri.path()),
    )
}

/// `GET /api/v1/capabilities`
async fn capabilities(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
) -> Result<Response, Reject> {
    let tenant = tenant(&headers)?;
    let entries = service::catalog(&engine, &tenant).await?;
    let array = Value::Array(
        entries
            .iter()
            .map(|(c, used)| wire::capability(c, *used))
            .collect(),
    )
    .to_string();
    let generated_at = Value::String(clock::now_rfc3339());
    let body = format!("{{\"capabilities\":{array},\"generated_at\":{generated_at}}}");
    Ok(etag::respond(&headers, &array, body))
}

/// `POST /api/v1/workflows/check`
async fn check(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Reject> {
    let (tenant, body) = tenant_and_body(&headers, body).await?;
    let context = fields::object(&body, "context").map_err(bad_request)?;
    let workflow = fields::any(&body, "workflow");
    let problems = service::check(&engine, &tenant, &workflow, context.as_ref()).await?;
    let answer = json!({"ok": !has_errors(&problems), "problems": wire::problems(&problems)});
    Ok(reply::json(StatusCode::OK, answer))
}

fn run_request(body: &Map<String, Value>) -> Result<RunRequest, String> {
    Ok(RunRequest {
        workflow: fields::any(body, "workflow"),
        input: fields::input(body, "input"),
        context: fields::object(body, "context")?,
        trace: fields::flag(body, "trace")?,
        dry_run: fields::flag(body, "dry_run")?,
        deadline_ms: fields::millis(body, "deadline_ms")?,
    })
}

/// `POST /api/v1/workflows/run`
async fn run(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Reject> {
    let (tenant, body) = tenant_and_body(&headers, body).await?;
    let request = run_request(&body).map_err(bad_request)?;
    let report = service::run(&engine, &tenant, request).await?;
    Ok(reply::json(StatusCode::OK, wire::report(&report)))
}
