//! In front of every dialect: counts each tenant request (one that carries a
//! tenant header of any dialect) for `GET /admin/requests`, and serves the
//! "unavailable" fault, `503` with `Retry-After`, before the dialect sees it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::json;

use super::reply;
use crate::world::Engine;

/// The tenant headers of dialects a, b and c.
const TENANT_HEADERS: [&str; 3] = ["x-tenant", "x-org-id", "x-workspace"];

pub async fn gate(State(engine): State<Arc<Engine>>, req: Request, next: Next) -> Response {
    let tenant = TENANT_HEADERS
        .iter()
        .find_map(|h| req.headers().get(*h).and_then(|v| v.to_str().ok()))
        .map(str::to_owned);
    let Some(tenant) = tenant else {
        return next.run(req).await;
    };
    engine.count_tenant_request();
    if let Some(seconds) = engine.faults(&tenant).unavailable_retry_after_s {
        let mut answer = reply::json(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": "engine overloaded, come back later"}),
        );
        answer
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        return answer;
    }
    next.run(req).await
}
