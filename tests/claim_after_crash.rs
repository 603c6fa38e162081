//! A gateway process killed (SIGKILL) while a keyed run is in flight: the
//! client's retry with the same key, through another gateway on the same
//! Redis, answers within the run deadline plus the claim grace, and the run
//! is never executed twice.

mod common;

use common::ports::rand_suffix;
use common::redis_server::RedisServer;
use common::served::Served;
use common::{Engine, valid_program};
use serde_json::json;
use std::time::{Duration, Instant};

/// The conformance configuration's run deadline, and the default grace.
const RUN_DEADLINE: Duration = Duration::from_millis(10_000);
const GRACE: Duration = Duration::from_millis(5_000);
/// What scheduling and one HTTP round trip may add on a busy machine.
const MARGIN: Duration = Duration::from_millis(1_500);

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_a_gateway_crash_answers_within_the_run_deadline_plus_grace() {
    let redis = RedisServer::start();
    let engine = Engine::spawn(&[]);
    let mut a = Served::start(&engine, &redis, "");
    let b = Served::start(&engine, &redis, "");
    let run = |key: &str| {
        json!({"workflow": valid_program(), "mode": "immediate", "input": {"id": "cus_1"},
            "idempotency_key": key, "store": true})
    };
    // Both instances know the catalog and the program's verdict, so the
    // slow engine below only slows the run itself.
    for (gw, key) in [(&a, "warm-a"), (&b, "warm-b")] {
        let warm = gw
            .mcp()
            .call("run_workflow", run(&format!("{key}-{}", rand_suffix())))
            .await;
        assert!(!warm.is_error, "{}", warm.structured);
    }
    engine
        .faults(json!({"tenant": "acme", "slow_ms": 4000}))
        .await;
    let before = engine.runs("acme").await;

    let key = format!("crash-{}", rand_suffix());
    let first = a.mcp();
    let args = run(&key);
    let in_flight = tokio::spawn(async move {
        first
            .rpc(
                "tools/call",
                json!({"name": "run_workflow", "arguments": args}),
            )
            .await
    });
    let until = Instant::now() + Duration::from_secs(20);
    while a.runs_in_flight().await < 1.0 {
        assert!(Instant::now() < until, "the keyed run never started on A");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.kill_hard();
    let _ = in_flight.await;

    let asked = Instant::now();
    let retry = b.mcp().call("run_workflow", run(&key)).await;
    let waited = asked.elapsed();
    assert!(
        waited <= RUN_DEADLINE + GRACE + MARGIN,
        "the retry answered after {waited:?}, more than the run deadline plus grace"
    );
    assert!(retry.is_error, "{}", retry.structured);
    let message = retry.structured["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("will not be executed twice"), "{message}");

    // Whatever became of the run A started (the engine may drop it with
    // A's connection), the retry never ran it a second time.
    tokio::time::sleep(Duration::from_secs(5)).await;
    engine.faults(json!({})).await;
    let runs = engine.runs("acme").await;
    assert!(runs <= before + 1, "executed twice: {before} -> {runs}");
    // Later retries answer at once: the dead attempt is past its deadline.
    let asked = Instant::now();
    let again = b.mcp().call("run_workflow", run(&key)).await;
    assert!(again.is_error, "{}", again.structured);
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
}
