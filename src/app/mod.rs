//! Builds the application: the one code path `main` and every integration
//! test use. `build` loads everything and returns the axum router; `serve`
//! binds and runs it until shutdown.

pub mod drain;

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
use drain::Drain;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::sync::Arc;

/// A built application.
pub struct App {
    pub router: Router,
    pub gateway: Arc<Gateway>,
    /// Whether the instance drains, and the `/mcp` requests in flight.
    pub drain: Arc<Drain>,
    /// Live reload of rule and guide files (file watch and SIGHUP); stops
    /// when the application is dropped.
    _watcher: Option<crate::reload::ReloadWatcher>,
}

/// What the routes share; one reference to count per request.
#[derive(Clone)]
struct AppState(Arc<Shared>);

struct Shared {
    gw: Arc<Gateway>,
    front: Front,
    drain: Arc<Drain>,
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
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
    // The front checks Host and Origin first (`mcp::origin`).
    transport = transport.disable_allowed_hosts().disable_allowed_origins();
    let handler = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
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
        signer: SessionSigner::new(&gw.config.session.secret, gw.config.session.ttl_secs)
            .with_previous(&gw.config.session.previous_secrets),
        mcp,
        server,
        guard: crate::mcp::origin::BrowserGuard::new(&gw.config.server),
    };
    let drain = Arc::new(Drain::default());
    let state = AppState(Arc::new(Shared {
        gw: gw.clone(),
        front,
        drain: drain.clone(),
    }));
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
    let router = crate::telemetry::request_log::layer(router);
    Ok(App {
        router,
        drain,
        _watcher: watch(&gw),
        gateway: gw,
    })
}

/// Reloads classifier rules, guides and the API keys file when they change
/// or on SIGHUP.
fn watch(gw: &Arc<Gateway>) -> Option<crate::reload::ReloadWatcher> {
    if !gw.config.server.watch_files {
        return None;
    }
    let mut paths = Vec::new();
    for lang in &gw.config.languages {
        paths.push(gw.config.resolve(&lang.classifier));
        paths.push(gw.config.resolve(&lang.guides_dir));
    }
    if !gw.config.auth.keys_file.is_empty() {
        paths.push(gw.config.resolve(&gw.config.auth.keys_file));
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
    let metrics = &state.gw.metrics;
    metrics.mcp_requests.inc();
    let _in_flight = state.drain.request();
    let fields = req
        .extensions()
        .get::<crate::telemetry::request_log::RequestFields>()
        .cloned()
        .unwrap_or_default();
    let response = layer::handle(&state.front, req).await;
    let status = response.status();
    fields.with_rpc_method(|method| metrics.http_requests.count(method, status));
    response
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

/// Ready when the engine answers and the store is reachable, and the
/// instance is not draining.
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    if state.drain.is_draining() {
        let body = axum::Json(json!({
            "draining": true, "instance": state.gw.config.server.instance,
        }));
        return (StatusCode::SERVICE_UNAVAILABLE, body);
    }
    // Ready only when every engine answers: a language on a dead engine
    // would fail every call routed here.
    // An open circuit breaker fails that engine's calls fast: not ready
    // either, and the body names the engine.
    let mut engine = true;
    let mut open_breakers = Vec::new();
    for (name, e) in &state.gw.engines {
        engine &= e.client.healthy().await;
        if e.client.breaker() == crate::engines::transport::breaker::BreakerState::Open {
            open_breakers.push(name.clone());
        }
    }
    let store = state.gw.store.ping().await.is_ok();
    let body = axum::Json(json!({
        "engine": engine, "store": state.gw.store.backend(), "store_ok": store,
        "open_breakers": open_breakers,
        "instance": state.gw.config.server.instance,
    }));
    if engine && open_breakers.is_empty() && store {
        (StatusCode::OK, body)
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, body)
    }
}

/// Every metric family in the Prometheus text format; the cache gauges are
/// read at scrape time.
async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let gw = &state.gw;
    let caches = &gw.metrics.cache_entries;
    caches
        .with_label_values(&["verdicts"])
        .set(i64::try_from(gw.verdicts.entry_count().await).unwrap_or(i64::MAX));
    caches.with_label_values(&["catalog_tenants"]).set(
        i64::try_from(
            gw.engines
                .values()
                .map(|e| e.catalog.tenant_count())
                .sum::<u64>(),
        )
        .unwrap_or(i64::MAX),
    );
    caches.with_label_values(&["catalog_contents"]).set(
        i64::try_from(
            gw.engines
                .values()
                .map(|e| e.catalog.distinct_catalogs())
                .sum::<usize>(),
        )
        .unwrap_or(i64::MAX),
    );
    for (name, e) in &gw.engines {
        gw.metrics
            .engine_breakers
            .with_label_values(&[name.as_str()])
            .set(e.client.breaker().gauge());
    }
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        gw.metrics.render() + &crate::metrics::store::usage_exposition(&*gw.store),
    )
}

/// Binds `listen` and serves until SIGTERM (or ctrl-c), then drains
/// (`drain`).
pub async fn serve(app: App) -> std::io::Result<()> {
    let listen = app.gateway.config.server.listen.clone();
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    // The runtime's size, chosen from `[server] threads` (`config::threads`).
    let threads = tokio::runtime::Handle::current().metrics().num_workers();
    tracing::info!(address = %listener.local_addr()?, threads, "pilotage-gateway listening");
    // `app` lives until the drain ends: its reload watcher with it.
    drain::serve_until_drained(listener, app.router.clone(), &app.drain, &app.gateway).await
}
