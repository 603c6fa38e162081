//! Builds the application: the one code path `main` and every integration
//! test use. `build` loads everything and returns the axum router; `serve`
//! binds and runs it until shutdown.

use crate::config::Config;
use crate::gateway::{Gateway, StartError};
use crate::mcp::layer::{self, Front, McpService};
use crate::mcp::protected_resource;
use crate::mcp::server::PilotageServer;
use crate::mcp::session::SessionSigner;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{any, get};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A built application.
pub struct App {
    pub router: Router,
    pub gateway: Arc<Gateway>,
    /// Live reload of rule and guide files (file watch and SIGHUP); stops
    /// when the application is dropped.
    _watcher: Option<crate::reload::ReloadWatcher>,
}

#[derive(Clone)]
struct AppState {
    gw: Arc<Gateway>,
    front: Front,
    requests: Arc<AtomicU64>,
}

/// Everything a gateway needs, from its configuration.
pub async fn build(config: Config) -> Result<App, StartError> {
    let gw = Gateway::build(config).await?;
    let server = PilotageServer::new(gw.clone()).map_err(StartError::Tools)?;
    let mut transport = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(gw.config.server.max_body_bytes);
    transport = if gw.config.server.allowed_hosts.is_empty() {
        transport.disable_allowed_hosts()
    } else {
        transport.with_allowed_hosts(gw.config.server.allowed_hosts.clone())
    };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        transport,
    );
    let mcp: McpService = tower::util::BoxCloneSyncService::new(
        tower::ServiceBuilder::new()
            .map_response(|r: axum::http::Response<_>| r.map(axum::body::Body::new))
            .service(service),
    );
    let front = Front {
        gw: gw.clone(),
        signer: SessionSigner::new(&gw.config.session.secret, gw.config.session.ttl_secs),
        mcp,
    };
    let state = AppState {
        gw: gw.clone(),
        front,
        requests: Arc::new(AtomicU64::new(0)),
    };
    let router = Router::new()
        .route("/mcp", any(mcp_route))
        .route(
            "/healthz",
            get(|| async { axum::Json(json!({"status": "ok"})) }),
        )
        .route("/readyz", get(readyz))
        .route(protected_resource::WELL_KNOWN, get(resource_metadata))
        .route(
            &format!("{}/{{*resource}}", protected_resource::WELL_KNOWN),
            get(resource_metadata),
        )
        .route("/metrics", get(metrics))
        .with_state(state);
    Ok(App {
        router,
        _watcher: watch(&gw),
        gateway: gw,
    })
}

/// Reloads classifier rules and guides when their files change or on SIGHUP.
fn watch(gw: &Arc<Gateway>) -> Option<crate::reload::ReloadWatcher> {
    if !gw.config.server.watch_files {
        return None;
    }
    let mut paths = Vec::new();
    for lang in &gw.config.languages {
        paths.push(gw.config.resolve(&lang.classifier));
        paths.push(gw.config.resolve(&lang.guides_dir));
    }
    let target = gw.clone();
    match crate::reload::spawn_reload_watcher(paths, move || target.reload()) {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!(error = %e, "live reload is off: cannot watch the rule and guide files");
            None
        }
    }
}

async fn mcp_route(
    State(state): State<AppState>,
    req: axum::extract::Request,
) -> axum::response::Response {
    state.requests.fetch_add(1, Ordering::Relaxed);
    layer::handle(state.front.clone(), req).await
}

/// RFC 9728 metadata when OAuth is configured; otherwise there is no
/// protected resource to describe.
async fn resource_metadata(State(state): State<AppState>) -> axum::response::Response {
    match state.gw.auth.oauth() {
        Some(oauth) => axum::Json(protected_resource::document(oauth)).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": "this gateway accepts no OAuth access tokens"})),
        )
            .into_response(),
    }
}

/// Ready when the engine answers and the store is reachable.
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let engine = state.gw.engine.healthy().await;
    let store = state.gw.store.ping().await.is_ok();
    let body = axum::Json(json!({
        "engine": engine, "store": state.gw.store.backend(), "store_ok": store,
        "instance": state.gw.config.server.instance,
    }));
    if engine && store {
        (StatusCode::OK, body)
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, body)
    }
}

/// Plain-text counters: MCP requests served by this instance, and
/// diagnostics by code.
async fn metrics(State(state): State<AppState>) -> String {
    let instance = &state.gw.config.server.instance;
    let mut out = format!(
        "pilotage_mcp_requests_total{{instance=\"{instance}\"}} {}\n",
        state.requests.load(Ordering::Relaxed)
    );
    for (code, n) in state.gw.classifiers.counts() {
        out.push_str(&format!(
            "pilotage_diagnostics_total{{instance=\"{instance}\",code=\"{code}\"}} {n}\n"
        ));
    }
    out
}

/// Binds `listen` and serves until ctrl-c / SIGTERM.
pub async fn serve(app: App) -> std::io::Result<()> {
    let listen = app.gateway.config.server.listen.clone();
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    tracing::info!(address = %listener.local_addr()?, "pilotage-gateway listening");
    axum::serve(listener, app.router)
        .with_graceful_shutdown(shutdown_signal())
        .await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
