//! Tasks across instances sharing one Redis: a task created on one gateway
//! is read, waited for and answered on another; a gateway killed mid-task
//! leaves the task to another instance once its lease lapses, which ends
//! it without running the program a second time.

use super::wire::*;
use crate::common::redis_server::RedisServer;
use crate::common::served::Served;
use crate::common::{ACME_OPS, Engine, FEATURES, Mcp, TestEnv};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn a_task_created_on_one_instance_is_answered_on_another() {
    let redis = RedisServer::start();
    let url = format!("redis://127.0.0.1:{}/0", redis.port);
    let a = TestEnv::with_config(FEATURES, |c| c.store.redis_url = url.clone()).await;
    let b = TestEnv::in_front_of(Engine::external(a.engine.url.clone()), FEATURES, |c| {
        c.store.redis_url = url.clone();
    })
    .await;
    let on_a = a.client(ACME_OPS);
    let on_b = b.client(ACME_OPS);
    let created = create_task(
        &on_a,
        json!({"mode": "immediate", "workflow": long_program(2, 1000, "shared"), "store": true}),
    )
    .await;
    let task_id = created_id(&created);
    // tasks/result on B waits for the run A drives.
    let result = on_b.rpc("tasks/result", json!({"taskId": task_id})).await;
    let structured = &result["result"]["structuredContent"];
    assert_eq!(structured["output"], json!({"said": "shared"}), "{result}");
    assert_eq!(
        poll_until_ended(&on_b, &task_id).await["status"],
        "completed"
    );
    let listed = on_b.rpc("tasks/list", json!({})).await;
    assert!(listed.to_string().contains(&task_id), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_whose_instance_was_killed_is_ended_by_another_and_never_run_twice() {
    let redis = RedisServer::start();
    let engine = Engine::spawn(&[]);
    let short_lease = "[tasks]\nlease_ms = 2000\n";
    let mut a = Served::start(&engine, &redis, short_lease);
    let b = Served::start(&engine, &redis, short_lease);
    let runs_before = engine.runs("acme").await;
    let created = create_task(
        &a.mcp(),
        json!({"mode": "immediate", "workflow": long_program(3, 1500, "orphan")}),
    )
    .await;
    let task_id = created_id(&created);
    let until = Instant::now() + Duration::from_secs(20);
    while a.runs_in_flight().await < 1.0 {
        assert!(Instant::now() < until, "the task's run never started on A");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.kill_hard();
    let on_b: Mcp = b.mcp();
    let ended = poll_until_ended(&on_b, &task_id).await;
    assert_eq!(ended["status"], "failed", "{ended}");
    let message = ended["statusMessage"].as_str().unwrap_or_default();
    assert!(message.contains("not be executed twice"), "{ended}");
    // Past the time the run would take, the engine ran it at most once.
    tokio::time::sleep(Duration::from_millis(5000)).await;
    let runs = engine.runs("acme").await - runs_before;
    assert!(runs <= 1, "the program ran {runs} times");
    // The answer is execute's own, as a plain call would have had it.
    let result = on_b.rpc("tasks/result", json!({"taskId": task_id})).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert_eq!(
        result["result"]["structuredContent"]["error"]["kind"], "internal",
        "{result}"
    );
}
