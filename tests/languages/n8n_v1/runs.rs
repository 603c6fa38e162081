//! `n8n/v1` end to end beyond the shared loop, through the HTTP endpoint
//! against a real n8n: a broken node after a writing node refused before
//! anything runs, deploy and `program_ref`, idempotent replay, the run
//! deadline, and tenant isolation down to n8n's projects. What ran is
//! counted from outside n8n and the gateway: the workflows call a
//! [`Hook`] of the test with an HTTP Request node.

use super::hook::Hook;
use crate::common::answers::codes;
use crate::common::engine_env::ids_of;
use crate::common::n8n_gateway::{
    self, Caller, EXECUTE, N8N, N8nEnv, TRACE, chain, greet_program, manual_trigger, node, run,
    validate, workflow,
};
use serde_json::{Value, json};
use std::time::Duration;

/// An HTTP Request node calling `url` with `method`.
fn call(name: &str, x: i64, method: &str, url: &str) -> Value {
    node(
        name,
        "httpRequest",
        4.2,
        x,
        json!({"method": method, "url": url, "options": {}}),
    )
}

/// Start → each of `calls` in turn.
fn calls(name: &str, calls: Vec<Value>) -> Value {
    let names: Vec<String> = std::iter::once("Start".to_string())
        .chain(
            calls
                .iter()
                .map(|n| n["name"].as_str().unwrap().to_string()),
        )
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut nodes = vec![manual_trigger()];
    nodes.extend(calls);
    workflow(name, nodes, chain(&names))
}

/// Everything n8n shows of a tenant's user: its workflows and executions.
async fn observable(n: &N8nEnv, caller: &Caller) -> (Vec<String>, Vec<String>) {
    (
        ids_of(&n.n8n.workflows(&caller.n8n_key).await),
        ids_of(&n.n8n.executions(&caller.n8n_key).await),
    )
}

/// The workflows of `caller`'s n8n user that call `hook`: this test's,
/// whoever else uses the same n8n users meanwhile.
async fn calling(n: &N8nEnv, caller: &Caller, hook: &Hook) -> Vec<Value> {
    n.n8n
        .workflows(&caller.n8n_key)
        .await
        .into_iter()
        .filter(|w| w["nodes"].to_string().contains(&hook.base))
        .collect()
}

/// The trace's step ids.
fn step_ids(answer: &Value) -> Vec<String> {
    answer["trace"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no trace: {answer}"))
        .iter()
        .filter_map(|s| s["id"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_node_after_a_write_is_refused_before_anything_runs() {
    let n = N8nEnv::start().await;
    let hook = Hook::start().await;
    let c = n.session(&n.a).await;
    // A POST, then a Code node whose JavaScript does not parse: n8n would
    // make the POST and fail only at the Code node.
    let broken = |js: &str| {
        calls(
            "late",
            vec![
                call("Write", 240, "POST", &hook.url("/write")),
                node("Check", "code", 2.0, 480, json!({"jsCode": js})),
            ],
        )
    };
    let program = broken("return [;");
    // n8n itself takes it: created through its own API, then deleted.
    let (status, created) = n.n8n.create_workflow(&program, &n.a.n8n_key).await;
    assert_eq!(status, 200, "n8n accepts the workflow: {created}");
    let id = created["id"].as_str().expect("the created workflow's id");
    assert_eq!(
        n.n8n
            .delete(&format!("/workflows/{id}"), &n.a.n8n_key)
            .await,
        200
    );
    let before = observable(&n, &n.a).await;

    let v = validate(&c, &program).await;
    assert_eq!(v.structured["valid"], false, "{}", v.structured);
    let d = v.structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "malformed_expression")
        .unwrap_or_else(|| panic!("no malformed_expression: {}", v.structured))
        .clone();
    assert_eq!(d["path"], "/nodes/2/parameters/jsCode", "{d}");

    let r = run(&c, &program, json!({})).await;
    assert_eq!(
        r.structured["outcome"]["status"], "validation_error",
        "{}",
        r.structured
    );
    assert!(codes(&r.structured).contains(&"malformed_expression".to_string()));
    assert!(
        r.structured["run_id"].is_string(),
        "a refused run has an id"
    );
    assert_eq!(hook.hits("/write"), 0, "the write never happened");
    assert_eq!(
        observable(&n, &n.a).await,
        before,
        "nothing created or run in n8n"
    );
    // Corrected, both nodes run: the POST reaches the hook once.
    let fixed = broken("return $input.all();");
    let r = run(&c, &fixed, json!({"trace_level": "full"})).await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    assert_eq!(step_ids(&r.structured), ["Start", "Write", "Check"]);
    assert_eq!(hook.hits("/write"), 1);
    assert_eq!(observable(&n, &n.a).await, before, "nothing left in n8n");
}

#[tokio::test(flavor = "multi_thread")]
async fn deploy_returns_a_program_ref_that_runs_by_reference() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let before = observable(&n, &n.a).await;
    let deployed = c
        .call(
            EXECUTE,
            json!({"workflow": greet_program(), "mode": "deploy"}),
        )
        .await;
    assert_eq!(
        deployed.structured["outcome"]["status"], "success",
        "{}",
        deployed.structured
    );
    let program_ref = deployed.structured["output"]["program_ref"]
        .as_str()
        .unwrap_or_else(|| panic!("no program_ref: {}", deployed.structured))
        .to_string();
    // Deploying keeps the document in the gateway: nothing in n8n.
    assert_eq!(observable(&n, &n.a).await, before);
    // The program entry is in the caller's catalog, with the input its
    // Execute Workflow Trigger declares.
    let entry = c
        .call(
            "pilotage_catalog",
            json!({"language": N8N, "verb": "get", "id": program_ref}),
        )
        .await;
    assert_eq!(
        entry.structured["entry"]["kind"], "program",
        "{}",
        entry.structured
    );
    assert_eq!(
        entry.structured["entry"]["input_schema"]["properties"],
        json!({"name": {"type": "string"}}),
        "{}",
        entry.structured
    );
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"name": "bob"}}),
        )
        .await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    assert_eq!(r.structured["output"], json!([{"greeting": "hello bob"}]));
    // A wrong input is refused against the entry's schema.
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"nom": "bob"}}),
        )
        .await;
    assert_eq!(
        r.structured["outcome"]["status"], "validation_error",
        "{}",
        r.structured
    );
    assert!(codes(&r.structured).contains(&"input_binding".to_string()));
    // Another tenant cannot run it.
    let other = n.session(&n.b).await;
    let r = other
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"name": "eve"}}),
        )
        .await;
    assert_eq!(
        r.structured["error"]["kind"], "not_found",
        "{}",
        r.structured
    );
    assert_eq!(observable(&n, &n.a).await, before, "nothing left in n8n");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idempotent_replay_runs_once() {
    let n = N8nEnv::start().await;
    let hook = Hook::start().await;
    let c = n.session(&n.a).await;
    let before = observable(&n, &n.a).await;
    let program = calls("once", vec![call("Call", 240, "GET", &hook.url("/once"))]);
    let args = json!({"workflow": program, "mode": "immediate",
        "input": {"n": 1}, "idempotency_key": "replay-1"});
    let first = c.call(EXECUTE, args.clone()).await;
    assert_eq!(
        first.structured["outcome"]["status"], "success",
        "{}",
        first.structured
    );
    assert_eq!(first.structured["output"], json!([{"ok": true}]));
    let second = c.call(EXECUTE, args.clone()).await;
    assert_eq!(
        first.structured, second.structured,
        "the same answer, run_id included"
    );
    assert_eq!(hook.hits("/once"), 1, "one execution in n8n");
    let mut changed = args;
    changed["input"] = json!({"n": 2});
    let conflict = c.call(EXECUTE, changed).await;
    assert_eq!(
        conflict.structured["error"]["kind"], "idempotency_conflict",
        "{}",
        conflict.structured
    );
    assert_eq!(hook.hits("/once"), 1);
    assert_eq!(observable(&n, &n.a).await, before, "nothing left in n8n");
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_deadline_the_execution_is_stopped_in_n8n() {
    let n = N8nEnv::start_with(|cfg| {
        cfg.engines
            .get_mut(n8n_gateway::ENGINE)
            .unwrap()
            .run_deadline_ms = 5000;
    })
    .await;
    let hook = Hook::start().await;
    let before = observable(&n, &n.a).await;
    // The first call is held by the hook past the deadline.
    let slow = calls(
        "slow",
        vec![
            call("Hold", 240, "GET", &hook.url("/hold")),
            call("After", 480, "GET", &hook.url("/after")),
        ],
    );
    let running = {
        let c = n.session(&n.a).await;
        tokio::spawn(async move { run(&c, &slow, json!({"trace_level": "full"})).await })
    };
    assert_eq!(hook.next().await, "/hold");
    // While the hook holds it, the workflow is in the caller's n8n project,
    // under the gateway's name.
    let ours = calling(&n, &n.a, &hook).await;
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert!(
        ours[0]["name"].as_str().unwrap().starts_with("pilotage-"),
        "{ours:?}"
    );
    let query = format!(
        "/executions?status=running&workflowId={}",
        ours[0]["id"].as_str().unwrap()
    );
    let (status, live) = n.n8n.get(&query, &n.a.n8n_key).await;
    assert_eq!(status, 200, "{live}");
    assert_eq!(live["data"].as_array().map(Vec::len), Some(1), "{live}");
    assert_eq!(live["data"][0]["finished"], false, "{live}");
    let r = running.await.expect("the run task");
    assert_eq!(
        r.structured["outcome"]["status"], "timeout",
        "{}",
        r.structured
    );
    assert_eq!(r.structured["outcome"]["ok"], false);
    // The node runs that finished before the stop are in the trace.
    let ids = step_ids(&r.structured);
    assert!(ids.contains(&"Start".to_string()), "{ids:?}");
    assert!(!ids.contains(&"After".to_string()), "{ids:?}");
    // Stopped in n8n, and what the run created removed.
    assert_eq!(observable(&n, &n.a).await, before);
    // Answered now, the held call leads nowhere: After never starts.
    hook.release();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(hook.paths(), ["/hold"], "nothing after the stop");
}

#[tokio::test(flavor = "multi_thread")]
async fn another_tenant_cannot_see_runs_and_n8n_projects_differ() {
    let n = N8nEnv::start().await;
    let a = n.session(&n.a).await;
    let b = n.session(&n.b).await;
    let before_a = observable(&n, &n.a).await;
    let before_b = observable(&n, &n.b).await;
    // a's run waits in the hook while the test looks into n8n.
    let hook = Hook::start().await;
    let held = calls("mine", vec![call("Hold", 240, "GET", &hook.url("/hold"))]);
    let running = {
        let a = n.session(&n.a).await;
        tokio::spawn(async move { run(&a, &held, json!({"store": true})).await })
    };
    assert_eq!(hook.next().await, "/hold");
    let in_a = calling(&n, &n.a, &hook).await;
    assert_eq!(in_a.len(), 1, "{in_a:?}");
    let path = format!("/workflows/{}", in_a[0]["id"].as_str().unwrap());
    // a's user has it; b's user neither lists nor reads it.
    assert_eq!(n.n8n.get(&path, &n.a.n8n_key).await.0, 200);
    assert!(calling(&n, &n.b, &hook).await.is_empty());
    let (status, body) = n.n8n.get(&path, &n.b.n8n_key).await;
    assert!(
        status == 403 || status == 404,
        "b reads a's workflow: {status} {body}"
    );
    assert_eq!(observable(&n, &n.b).await, before_b);
    hook.release();
    let r = running.await.expect("the run task");
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    let run_id = r.structured["run_id"].clone();
    let mine = a.call(TRACE, json!({"run_id": run_id})).await;
    assert!(!mine.is_error, "{}", mine.structured);
    // Another key's tenant and an anonymous session: not_found, identical to
    // an id that never existed.
    let anonymous = n.anonymous_session().await;
    let unknown = b.call(TRACE, json!({"run_id": "run_does_not_exist"})).await;
    for (who, c) in [("tenant b", &b), ("anonymous", &anonymous)] {
        let theirs = c.call(TRACE, json!({"run_id": run_id})).await;
        assert!(theirs.is_error, "{who}: {}", theirs.structured);
        assert_eq!(theirs.structured["error"]["kind"], "not_found", "{who}");
        assert_eq!(
            theirs.structured["error"]["message"], unknown.structured["error"]["message"],
            "{who}: indistinguishable from an unknown id"
        );
    }
    // b's own run happens in b's project, out of a's sight.
    let hook = Hook::start().await;
    let held = calls("theirs", vec![call("Hold", 240, "GET", &hook.url("/hold"))]);
    let running = {
        let b = n.session(&n.b).await;
        tokio::spawn(async move { run(&b, &held, json!({})).await })
    };
    assert_eq!(hook.next().await, "/hold");
    assert_eq!(calling(&n, &n.b, &hook).await.len(), 1);
    assert!(calling(&n, &n.a, &hook).await.is_empty());
    hook.release();
    let r = running.await.expect("the run task");
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    assert_eq!(observable(&n, &n.a).await, before_a);
    assert_eq!(observable(&n, &n.b).await, before_b);
}
