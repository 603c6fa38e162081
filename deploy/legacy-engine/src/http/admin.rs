//! Admin endpoints, identical in every dialect: world state and digest, reset,
//! capability reads and edits, and fault injection. Errors are `{"error": "..."}`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::body::{BodyError, read_object_or_empty};
use super::reply;
use crate::world::capability::Capability;
use crate::world::registry::RegistryError;
use crate::world::{Engine, clock, faults};

type Params = Result<Query<HashMap<String, String>>, QueryRejection>;

pub fn routes() -> Router<Arc<Engine>> {
    Router::new()
        .route("/admin/state", get(state))
        .route("/admin/reset", post(reset))
        .route(
            "/admin/capabilities/{name}",
            get(get_capability)
                .put(put_capability)
                .delete(delete_capability),
        )
        .route("/admin/faults", post(set_faults))
        .route("/admin/requests", get(requests))
}

/// An admin request refused with `{"error": "..."}`.
struct AdminError(StatusCode, String);

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        reply::json(self.0, json!({"error": self.1}))
    }
}

impl From<RegistryError> for AdminError {
    fn from(e: RegistryError) -> Self {
        match e {
            RegistryError::UnknownTenant(t) => {
                AdminError(StatusCode::NOT_FOUND, format!("unknown tenant '{t}'"))
            }
            RegistryError::UnknownCapability(c) => {
                AdminError(StatusCode::NOT_FOUND, format!("unknown capability '{c}'"))
            }
        }
    }
}

impl From<BodyError> for AdminError {
    fn from(e: BodyError) -> Self {
        AdminError(e.status(), e.message())
    }
}

/// The optional `tenant` query parameter.
fn tenant_param(params: Params) -> Result<Option<String>, AdminError> {
    match params {
        Ok(Query(map)) => Ok(map.get("tenant").filter(|t| !t.is_empty()).cloned()),
        Err(e) => Err(AdminError(
            StatusCode::BAD_REQUEST,
            format!("bad query string: {e}"),
        )),
    }
}

/// `GET /admin/state?tenant=T`
async fn state(State(engine): State<Arc<Engine>>, params: Params) -> Result<Response, AdminError> {
    let tenant = tenant_param(params)?.ok_or_else(|| {
        AdminError(
            StatusCode::BAD_REQUEST,
            "missing query parameter 'tenant'".to_owned(),
        )
    })?;
    let state = engine
        .state(&tenant)
        .ok_or_else(|| AdminError(StatusCode::NOT_FOUND, format!("unknown tenant '{tenant}'")))?;
    Ok(reply::json(StatusCode::OK, state))
}

/// `POST /admin/reset`
async fn reset(State(engine): State<Arc<Engine>>) -> Response {
    engine.reset();
    reply::json(StatusCode::OK, json!({"reset": true}))
}

/// `GET /admin/capabilities/{name}?tenant=T`: the capability as the tenant
/// sees it, in the shape `PUT` takes.
async fn get_capability(
    State(engine): State<Arc<Engine>>,
    Path(name): Path<String>,
    params: Params,
) -> Result<Response, AdminError> {
    let tenant = tenant_param(params)?.ok_or_else(|| {
        AdminError(
            StatusCode::BAD_REQUEST,
            "missing query parameter 'tenant'".to_owned(),
        )
    })?;
    let found = engine
        .catalog(&tenant)
        .into_iter()
        .find(|(c, _)| c.name == name)
        .ok_or_else(|| {
            AdminError(
                StatusCode::NOT_FOUND,
                format!("capability '{name}' not visible to '{tenant}'"),
            )
        })?
        .0;
    Ok(reply::json(
        StatusCode::OK,
        json!({"name": found.name, "title": found.title, "doc": found.doc,
            "params": found.params, "returns": found.returns, "effect": found.effect.as_str(),
            "tags": found.tags, "deprecated": found.deprecated}),
    ))
}

/// `PUT /admin/capabilities/{name}?tenant=T` with the full capability object.
async fn put_capability(
    State(engine): State<Arc<Engine>>,
    Path(name): Path<String>,
    params: Params,
    body: Body,
) -> Result<Response, AdminError> {
    let tenant = tenant_param(params)?;
    let body = Value::Object(read_object_or_empty(body).await?);
    let capability = Capability::from_admin(&name, &body, clock::now_rfc3339())
        .map_err(|message| AdminError(StatusCode::BAD_REQUEST, message))?;
    let stored = serde_json::to_value(&capability).unwrap_or(Value::Null);
    engine.put_capability(capability, tenant.as_deref())?;
    Ok(reply::json(
        StatusCode::OK,
        json!({"capability": stored, "tenant": tenant}),
    ))
}

/// `DELETE /admin/capabilities/{name}?tenant=T`
async fn delete_capability(
    State(engine): State<Arc<Engine>>,
    Path(name): Path<String>,
    params: Params,
) -> Result<Response, AdminError> {
    let tenant = tenant_param(params)?;
    engine.remove_capability(&name, tenant.as_deref())?;
    Ok(reply::json(
        StatusCode::OK,
        json!({"deleted": name, "tenant": tenant}),
    ))
}

/// `GET /admin/requests`: how many tenant requests (catalog, check, run and
/// status calls) the engine received since its start or last reset.
async fn requests(State(engine): State<Arc<Engine>>) -> Response {
    reply::json(
        StatusCode::OK,
        json!({"requests": engine.tenant_requests()}),
    )
}

/// `POST /admin/faults` with `{"tenant"?, "validator_500", "slow_ms", "runner_crash_after",
/// "unavailable_retry_after_s"}`.
async fn set_faults(State(engine): State<Arc<Engine>>, body: Body) -> Result<Response, AdminError> {
    let body = read_object_or_empty(body).await?;
    let (tenant, set) =
        faults::parse(&body).map_err(|message| AdminError(StatusCode::BAD_REQUEST, message))?;
    let shown = json!({
        "tenant": tenant,
        "validator_500": set.validator_500,
        "slow_ms": set.slow_ms,
        "runner_crash_after": set.runner_crash_after,
        "unavailable_retry_after_s": set.unavailable_retry_after_s,
    });
    engine.set_faults(tenant, set)?;
    Ok(reply::json(StatusCode::OK, json!({"faults": shown})))
}
