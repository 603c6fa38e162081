//! Revision 2026-07-28's tasks extension: a client that declares it gets a
//! task when the run outlasts the inline bound and the plain answer when it
//! does not; `tasks/get` carries the result once ended; a client that did
//! not declare it gets `-32021` from the task methods and a plain call.

use super::wire::*;
use crate::common::{ACME_OPS, FEATURES, TestEnv};
use serde_json::{Value, json};
use std::time::Duration;

async fn gateway() -> TestEnv {
    TestEnv::with_config(FEATURES, |_| {}).await
}

fn run(program: Value) -> Value {
    json!({"name": "run_workflow", "arguments": {"mode": "immediate", "workflow": program, "trace_level": "full"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_past_the_inline_bound_becomes_a_task_with_its_result() {
    let env = gateway().await;
    let discovered = stateless(&env.url, ACME_OPS, "server/discover", json!({}), true).await;
    assert!(
        discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{discovered}"
    );
    let answer = stateless(
        &env.url,
        ACME_OPS,
        "tools/call",
        run(long_program(3, 1200, "later")),
        true,
    )
    .await;
    let created = &answer["result"];
    assert_eq!(created["resultType"], "task", "{answer}");
    assert_eq!(created["status"], "working", "{answer}");
    assert!(
        created["ttlMs"].as_u64().is_some() && created["pollIntervalMs"].as_u64().is_some(),
        "{answer}"
    );
    let task_id = created["taskId"].as_str().expect("taskId").to_owned();
    let ended = until_stateless(&env.url, ACME_OPS, &task_id, |s| s != "working").await;
    assert_eq!(ended["status"], "completed", "{ended}");
    let structured = &ended["result"]["structuredContent"];
    assert_eq!(structured["outcome"]["status"], "success", "{ended}");
    assert_eq!(structured["output"], json!({"said": "later"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_within_the_inline_bound_is_answered_inline() {
    let env = gateway().await;
    let answer = stateless(
        &env.url,
        ACME_OPS,
        "tools/call",
        run(long_program(1, 100, "now")),
        true,
    )
    .await;
    let result = &answer["result"];
    assert_ne!(result["resultType"], "task", "{answer}");
    assert_eq!(
        result["structuredContent"]["output"],
        json!({"said": "now"}),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_did_not_opt_in_sees_no_task() {
    let env = gateway().await;
    let answer = stateless(
        &env.url,
        ACME_OPS,
        "tools/call",
        run(long_program(2, 1500, "plain")),
        false,
    )
    .await;
    assert_eq!(
        answer["result"]["structuredContent"]["output"],
        json!({"said": "plain"}),
        "{answer}"
    );
    let get = stateless(
        &env.url,
        ACME_OPS,
        "tasks/get",
        json!({"taskId": "task_x"}),
        false,
    )
    .await;
    assert_eq!(get["error"]["code"], -32021, "{get}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_task_stops_and_stays_cancelled() {
    let env = gateway().await;
    let before = env.engine.digest("acme").await;
    let answer = stateless(
        &env.url,
        ACME_OPS,
        "tools/call",
        run(long_write(3, 1500, "gold")),
        true,
    )
    .await;
    let task_id = answer["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let cancel = stateless(
        &env.url,
        ACME_OPS,
        "tasks/cancel",
        json!({"taskId": task_id}),
        true,
    )
    .await;
    assert!(cancel.get("error").is_none(), "{cancel}");
    let got = stateless(
        &env.url,
        ACME_OPS,
        "tasks/get",
        json!({"taskId": task_id}),
        true,
    )
    .await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    tokio::time::sleep(Duration::from_millis(4000)).await;
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "the cancelled run wrote"
    );
}
