//! The engine client's transport promises, against a stand-in HTTP server that
//! counts what it is sent: safe calls are retried after "try again" answers,
//! a run start never is, and `engine.max_in_flight` bounds the calls open at
//! once.

use axum::Router;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use pilotage_gateway::config::Config;
use pilotage_gateway::engines::rest::EngineClient;
use pilotage_gateway::engines::{CatalogFetch, Engine, EngineError};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Default)]
struct Counters {
    catalog_calls: AtomicUsize,
    run_calls: AtomicUsize,
    open: AtomicUsize,
    most_open: AtomicUsize,
}

/// Fails the first `failures` catalog calls with 503; every run call with 503;
/// each check call stays open `check_ms` so concurrent ones overlap.
async fn stand_in(failures: usize, check_ms: u64) -> (String, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let (a, b, c) = (counters.clone(), counters.clone(), counters.clone());
    let app = Router::new()
        .route(
            "/api/v1/capabilities",
            get(move || {
                let n = a.catalog_calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n < failures {
                        (
                            StatusCode::SERVICE_UNAVAILABLE,
                            axum::Json(json!({"error": "busy"})),
                        )
                            .into_response()
                    } else {
                        axum::Json(json!({"capabilities": []})).into_response()
                    }
                }
            }),
        )
        .route(
            "/api/v1/workflows/run",
            post(move || {
                b.run_calls.fetch_add(1, Ordering::SeqCst);
                async {
                    (
                        StatusCode::SERVICE_UNAVAILABLE,
                        axum::Json(json!({"error": "busy"})),
                    )
                }
            }),
        )
        .route(
            "/api/v1/workflows/check",
            post(move || {
                let c = c.clone();
                async move {
                    let now = c.open.fetch_add(1, Ordering::SeqCst) + 1;
                    c.most_open.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(check_ms)).await;
                    c.open.fetch_sub(1, Ordering::SeqCst);
                    axum::Json(json!({"ok": true, "problems": []}))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, counters)
}

fn client(url: &str, engine_keys: &str) -> EngineClient {
    let text = format!("[engine]\nurl = \"{url}\"\nretry_backoff_ms = 1\n{engine_keys}\n");
    let cfg = Config::parse(&text, Path::new("gateway.toml")).expect("config");
    EngineClient::new(&cfg.engine)
}

#[tokio::test(flavor = "multi_thread")]
async fn safe_calls_are_retried_and_a_run_start_is_not() {
    let (url, counters) = stand_in(2, 30).await;
    let fetched = client(&url, "retries = 2").catalog("acme", None).await;
    assert!(
        matches!(fetched, Ok(CatalogFetch::Fresh { .. })),
        "{fetched:?}"
    );
    assert_eq!(
        counters.catalog_calls.load(Ordering::SeqCst),
        3,
        "two retries"
    );

    let (url, counters) = stand_in(5, 30).await;
    let fetched = client(&url, "retries = 2").catalog("acme", None).await;
    assert!(
        matches!(fetched, Err(EngineError::Failed(_))),
        "{fetched:?}"
    );
    assert_eq!(counters.catalog_calls.load(Ordering::SeqCst), 3, "bounded");

    let run = client(&url, "retries = 2")
        .run(
            "acme",
            &pilotage_gateway::engines::RunOrder {
                program: &json!({"steps": []}),
                input: &json!({}),
                context: None,
                dry_run: false,
                deadline: Duration::from_secs(1),
                stop: None,
            },
        )
        .await;
    assert!(
        matches!(run, Err(EngineError::NotStarted(_))),
        "503 without a run id: {run:?}"
    );
    assert_eq!(
        counters.run_calls.load(Ordering::SeqCst),
        1,
        "never repeated"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn max_in_flight_bounds_the_calls_open_at_once() {
    let (url, counters) = stand_in(0, 30).await;
    let engine = client(&url, "max_in_flight = 3");
    let program = json!({"steps": []});
    let calls = (0..24).map(|_| {
        let (engine, program) = (engine.clone(), program.clone());
        async move { engine.check("acme", &program, None).await }
    });
    for result in futures_join(calls).await {
        assert!(result.is_ok(), "{result:?}");
    }
    let most = counters.most_open.load(Ordering::SeqCst);
    assert!(most <= 3, "{most} calls were open at once");
    assert!(most >= 2, "the calls did overlap ({most})");
}

/// Runs every future concurrently (tokio tasks; no extra crate).
async fn futures_join<F, T>(futures: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("task"));
    }
    out
}

/// A stand-in whose run call is held open until the test releases it.
async fn held_run() -> (String, Arc<tokio::sync::Notify>, Arc<AtomicUsize>) {
    let release = Arc::new(tokio::sync::Notify::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let (r, n) = (release.clone(), runs.clone());
    let app = Router::new()
        .route(
            "/api/v1/workflows/run",
            post(move || {
                let (r, n) = (r.clone(), n.clone());
                async move {
                    n.fetch_add(1, Ordering::SeqCst);
                    r.notified().await;
                    axum::Json(
                        json!({"run": "r-1", "state": "COMPLETED", "result": {}, "events": []}),
                    )
                }
            }),
        )
        .route(
            "/api/v1/workflows/check",
            post(|| async { axum::Json(json!({"ok": true, "problems": []})) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, release, runs)
}

#[tokio::test(flavor = "multi_thread")]
async fn waiting_for_a_free_slot_is_bounded_by_the_call_timeout() {
    let (url, release, runs) = held_run().await;
    let engine = client(&url, "max_in_flight = 1\ntimeout_ms = 200\nretries = 0");
    let run = {
        let engine = engine.clone();
        tokio::spawn(async move {
            engine
                .run(
                    "acme",
                    &pilotage_gateway::engines::RunOrder {
                        program: &json!({"steps": []}),
                        input: &json!({}),
                        context: None,
                        dry_run: false,
                        deadline: Duration::from_secs(20),
                        stop: None,
                    },
                )
                .await
        })
    };
    // Bounded wait until the run holds the only slot.
    for _ in 0..200 {
        if runs.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the run call reached the stand-in"
    );
    let check = engine.check("acme", &json!({"steps": []}), None).await;
    match &check {
        Err(EngineError::Unreachable(m)) => assert!(m.contains("max_in_flight"), "{m}"),
        other => panic!("expected a refused call naming max_in_flight, got {other:?}"),
    }
    release.notify_one();
    let finished = run.await.expect("task");
    assert!(finished.is_ok(), "{finished:?}");
    assert!(
        engine
            .check("acme", &json!({"steps": []}), None)
            .await
            .is_ok(),
        "the slot is free again"
    );
}
