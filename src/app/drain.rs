//! Stopping without dropping work: on SIGTERM (or ctrl-c) the instance
//!
//! 1. answers `/readyz` with 503 at once, so the balancer takes it out;
//! 2. keeps serving every request, new ones included, for `[server] drain_ms`
//!    (the balancer needs a few health-check rounds to notice);
//! 3. stops accepting connections and waits up to `[server] drain_timeout_ms`
//!    for the requests in flight (a run records its result before it
//!    answers, so a finished run is never lost);
//! 4. exits.
//!
//! Each phase is logged with what is still in flight.

use crate::gateway::Gateway;
use axum::Router;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Shared by `/readyz`, the `/mcp` route and the serve loop.
#[derive(Default)]
pub struct Drain {
    draining: AtomicBool,
    requests: Arc<AtomicUsize>,
}

impl Drain {
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Counts one `/mcp` request as in flight until the guard drops.
    pub fn request(&self) -> InFlightRequest {
        self.requests.fetch_add(1, Ordering::AcqRel);
        InFlightRequest(self.requests.clone())
    }

    /// `/mcp` requests being served now.
    pub fn in_flight(&self) -> usize {
        self.requests.load(Ordering::Acquire)
    }

    fn begin(&self) {
        self.draining.store(true, Ordering::Release);
    }
}

pub struct InFlightRequest(Arc<AtomicUsize>);

impl Drop for InFlightRequest {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `router` on `listener` until a stop signal, then drains as above:
/// `drain` is what `/readyz` and `/mcp` see, `gw` holds the drain windows and
/// the metrics the phases report.
pub async fn serve_until_drained(
    listener: tokio::net::TcpListener,
    router: Router,
    drain: &Drain,
    gw: &Gateway,
) -> std::io::Result<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // Each request knows its peer address: anonymous budgets are kept per
    // client address when a caller has no session.
    let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let server = axum::serve(listener, service).with_graceful_shutdown(async {
        let _ = stopped.await;
    });
    let mut server = tokio::spawn(server.into_future());
    tokio::select! {
        result = &mut server => return flatten(result),
        _ = stop_signal() => {}
    }
    let config = &gw.config.server;
    let metrics = &gw.metrics;
    drain.begin();
    metrics.draining.set(1);
    tracing::info!(
        drain_ms = config.drain_ms,
        requests_in_flight = drain.in_flight(),
        runs_in_flight = metrics.runs_in_flight.get(),
        "drain started: readyz answers 503; new requests are still served until the drain window ends"
    );
    tokio::select! {
        result = &mut server => return flatten(result),
        _ = tokio::time::sleep(Duration::from_millis(config.drain_ms)) => {}
    }
    tracing::info!(
        drain_timeout_ms = config.drain_timeout_ms,
        requests_in_flight = drain.in_flight(),
        runs_in_flight = metrics.runs_in_flight.get(),
        "drain window over: no new connections; waiting for the requests in flight"
    );
    let _ = stop.send(());
    match tokio::time::timeout(Duration::from_millis(config.drain_timeout_ms), &mut server).await {
        Ok(result) => {
            tracing::info!("drained: every request finished; exiting");
            flatten(result)
        }
        Err(_) => {
            tracing::warn!(
                requests_in_flight = drain.in_flight(),
                runs_in_flight = metrics.runs_in_flight.get(),
                "drain timeout: exiting with requests still in flight (their runs may finish in the engine unrecorded)"
            );
            server.abort();
            Ok(())
        }
    }
}

fn flatten(result: Result<std::io::Result<()>, tokio::task::JoinError>) -> std::io::Result<()> {
    result.map_err(std::io::Error::other)?
}

async fn stop_signal() {
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
    tokio::select! {
        _ = ctrl_c => tracing::info!(signal = "SIGINT", "stop requested"),
        _ = term => tracing::info!(signal = "SIGTERM", "stop requested"),
    }
}
