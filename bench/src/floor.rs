//! The floor: a bare axum server that answers `POST /manifest` and
//! `POST /catalog` with the gateway's own answers to `pilotage_manifest` and
//! `pilotage_catalog list`, captured at the start of the run.
//!
//! Per request it does the least any JSON-over-HTTP service does: read and
//! parse the JSON request body, serialize a JSON value of the same size as
//! the gateway's answer, and write it. It runs as its own process with
//! tokio's default multi-threaded runtime, like the gateway, so "gateway /
//! floor" is the price of everything the gateway does beyond HTTP + JSON.

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// The answers the floor serves.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Bodies {
    pub manifest: Value,
    pub catalog: Value,
}

/// Serves until killed.
pub async fn serve(listen: &str, bodies: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(bodies).map_err(|e| format!("{}: {e}", bodies.display()))?;
    let bodies: Bodies = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let manifest = Arc::new(bodies.manifest);
    let catalog = Arc::new(bodies.catalog);
    let app = Router::new()
        .route("/manifest", post(answer).with_state(manifest))
        .route("/catalog", post(answer).with_state(catalog))
        .route("/healthz", get(|| async { "ok" }));
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}

/// Parses the request (as the gateway must) and serializes the answer.
async fn answer(State(body): State<Arc<Value>>, request: axum::body::Bytes) -> Response {
    if serde_json::from_slice::<Value>(&request).is_err() {
        return StatusCode::BAD_REQUEST.into_response();
    }
    match serde_json::to_vec(body.as_ref()) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
