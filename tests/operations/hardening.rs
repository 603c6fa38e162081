//! Regression tests of the hardening issue, each through the HTTP endpoint:
//! requests that cost what they weigh, idempotency keys never stuck or run
//! twice when Redis freezes or dies, principals that cannot evict each other
//! in the embedded store, the first request after a Redis restart, and store
//! failures named as the store's. Redis is a `redis-server` each test owns.

use crate::common::answers::kind_of as error_kind;
use crate::common::redis_server::RedisServer;
use crate::common::{ACME_OPS, Mcp, TestEnv};
use pilotage_gateway::config::Config;
use serde_json::{Value, json};
use std::time::Duration;

const CONFIG: &str = "tests/fixtures/features.toml";

/// A gateway of this process in front of a fresh engine, always (never an
/// external deployment: these tests change the configuration and own Redis).
async fn gateway(tweak: impl FnOnce(&mut Config)) -> TestEnv {
    let engine = crate::common::dialect_engine();
    TestEnv::in_front_of(engine, CONFIG, tweak).await
}

/// A gateway on `redis` with timeouts short enough that outages answer quickly.
async fn on_redis(redis: &RedisServer) -> TestEnv {
    let url = redis.url();
    gateway(move |c: &mut Config| {
        c.store.redis_url = url;
        c.store.op_timeout_ms = 500;
        c.engine.timeout_ms = 2000;
        c.store.claim_lease_ms = 6000;
    })
    .await
}

/// An invoice for cus_1: a side effect the engine's world digest shows.
fn invoice() -> Value {
    json!({"steps": [{"id": "bill", "kind": "call", "capability": "billing.create_invoice",
        "with": {"customer_id": "cus_1", "amount_cents": 1200}}]})
}

fn keyed_run(key: &str) -> Value {
    json!({"workflow": invoice(), "mode": "immediate", "idempotency_key": key, "store": true})
}

async fn invoices(env: &TestEnv) -> usize {
    let state = env.engine.state("acme").await;
    state["invoices"]
        .as_array()
        .map(Vec::len)
        .or_else(|| state["invoices"].as_u64().map(|n| n as usize))
        .unwrap_or_else(|| panic!("no invoice count in {state}"))
}

fn error_message(r: &crate::common::CallResult) -> String {
    r.structured["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// A keyed client without a session (the session check reads the store too).
fn keyed(env: &TestEnv) -> Mcp {
    env.client(ACME_OPS)
}

/// Repro 1: 13 nested branches of 16,500-character ids around 986 steps
/// are refused by a bound before any walk; programs of that shape at the
/// bounds validate, and the verdict cache stays within its byte budget
/// whatever the number of distinct programs.
#[tokio::test(flavor = "multi_thread")]
async fn amplifying_programs_are_bounded_and_the_verdict_cache_by_bytes() {
    const BUDGET: u64 = 1024 * 1024;
    let env = gateway(|c: &mut Config| c.cache.verdict_bytes = BUDGET).await;
    let c = keyed(&env);
    let shape = |id_len: usize, levels: usize, inner: usize, salt: usize| {
        let mut arm: Vec<Value> = (0..inner)
            .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": salt}))
            .collect();
        for level in 0..levels {
            let id = format!("{level}{}", "b".repeat(id_len - 1));
            arm = vec![json!({"id": id, "kind": "branch",
                "when": {"op": "eq", "left": 1, "right": 1}, "then": arm})];
        }
        json!({"steps": arm})
    };
    let issue = shape(16_500, 13, 986, 0);
    assert!(
        issue.to_string().len() < 256 * 1024,
        "inside the size bound"
    );
    let r = c
        .call("validate_workflow", json!({"workflow": issue}))
        .await;
    assert_eq!(error_kind(&r), "bounds_exceeded", "{}", r.structured);
    assert!(
        error_message(&r).contains("step id"),
        "{}",
        error_message(&r)
    );
    // The same shape at the bounds (128-byte ids, as deep as allowed): an
    // answer, and each distinct program adds at most its verdict's weight.
    for salt in 0..40 {
        let program = shape(128, 9, 980, salt);
        let r = c
            .call("validate_workflow", json!({"workflow": program}))
            .await;
        assert!(
            r.structured.get("valid").is_some(),
            "program {salt}: {}",
            r.structured
        );
    }
    let gw = env.gateway.as_ref().expect("in-process gateway");
    let held = gw.verdicts.weighted_size().await;
    assert!(
        held <= BUDGET,
        "verdict cache holds {held} bytes > {BUDGET}"
    );
    assert!(held > 0, "the verdict cache keeps what fits");
}

/// Repro 2a: Redis frozen during the claim. The request fails before
/// execution; once Redis answers its queue, the retry with the same key
/// runs exactly once and later retries replay it.
#[tokio::test(flavor = "multi_thread")]
async fn a_claim_that_timed_out_does_not_block_its_key() {
    let redis = RedisServer::start();
    let env = on_redis(&redis).await;
    let c = keyed(&env);
    let warm = c
        .call("validate_workflow", json!({"workflow": invoice()}))
        .await;
    assert_eq!(warm.structured["valid"], true, "{}", warm.structured);
    let before = invoices(&env).await;
    redis.freeze();
    let r = c.call("run_workflow", keyed_run("frozen-key")).await;
    redis.thaw();
    assert_eq!(error_kind(&r), "internal", "{}", r.structured);
    let message = error_message(&r);
    assert!(message.contains("store"), "{message}");
    assert!(message.contains("nothing was executed"), "{message}");
    assert_eq!(invoices(&env).await, before, "nothing ran");
    let retry = c.call("run_workflow", keyed_run("frozen-key")).await;
    assert_eq!(
        retry.structured["outcome"]["status"], "success",
        "{}",
        retry.structured
    );
    assert_eq!(invoices(&env).await, before + 1, "the retry ran once");
    let again = c.call("run_workflow", keyed_run("frozen-key")).await;
    assert_eq!(again.structured["run_id"], retry.structured["run_id"]);
    assert_eq!(
        invoices(&env).await,
        before + 1,
        "a replay, not a second run"
    );
}

/// Repro 2b: Redis dies (and comes back with its data) between the claim
/// and the run. Nothing runs; the retry with the same key runs once.
#[tokio::test(flavor = "multi_thread")]
async fn redis_dying_between_claim_and_run_does_not_block_the_key() {
    let mut redis = RedisServer::durable();
    let env = on_redis(&redis).await;
    let c = keyed(&env);
    let warm = c
        .call("validate_workflow", json!({"workflow": invoice()}))
        .await;
    assert_eq!(warm.structured["valid"], true, "{}", warm.structured);
    let before = invoices(&env).await;
    // A slow engine holds the request between its claim and its run.
    env.engine
        .faults(json!({"tenant": "acme", "slow_ms": 800}))
        .await;
    let url = env.url.clone();
    let pending = tokio::spawn(async move {
        Mcp::new(&url, Some(ACME_OPS))
            .call("run_workflow", keyed_run("dying-key"))
            .await
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    redis.kill();
    let r = pending.await.expect("request task");
    assert_eq!(error_kind(&r), "internal", "{}", r.structured);
    assert!(
        error_message(&r).contains("nothing was executed"),
        "{}",
        error_message(&r)
    );
    assert_eq!(invoices(&env).await, before, "nothing ran");
    redis.restart();
    env.engine.faults(json!({})).await;
    let retry = c.call("run_workflow", keyed_run("dying-key")).await;
    assert_eq!(
        retry.structured["outcome"]["status"], "success",
        "{}",
        retry.structured
    );
    let again = c.call("run_workflow", keyed_run("dying-key")).await;
    assert_eq!(again.structured["run_id"], retry.structured["run_id"]);
    assert_eq!(invoices(&env).await, before + 1, "exactly one invoice");
}

/// Repro 3: strangers filling the embedded store never evict a principal's
/// records; when the store is full, new runs are refused before execution.
#[tokio::test(flavor = "multi_thread")]
async fn strangers_cannot_evict_a_principal_in_the_embedded_store() {
    let env = gateway(|c: &mut Config| {
        c.store.redis_url = String::new();
        c.store.memory_principal_bytes = 1024 * 1024;
        c.store.memory_total_bytes = 4 * 1024 * 1024;
    })
    .await;
    let c = keyed(&env);
    let before = invoices(&env).await;
    let first = c.call("run_workflow", keyed_run("invoice-1")).await;
    assert_eq!(
        first.structured["outcome"]["status"], "success",
        "{}",
        first.structured
    );
    let run_id = first.structured["run_id"].clone();
    // Random letters: the store keeps runs compressed, and a repeated
    // letter would compress to nothing.
    let blob: String = rand::Rng::sample_iter(rand::rng(), rand::distr::Alphanumeric)
        .take(100 * 1024)
        .map(char::from)
        .collect();
    let echo = json!({"steps": [{"id": "e", "kind": "call", "capability": "util.echo",
        "with": {"value": "$.input.blob"}}]});
    let mut stored = 0;
    let mut refused = None;
    for _ in 0..60 {
        let mut anon = env.anonymous();
        anon.initialize().await;
        let runs_before = env.engine.state("acme").await["runs"].clone();
        let r = anon
            .call(
                "run_workflow",
                json!({"workflow": echo, "mode": "immediate",
                "store": true, "input": {"blob": blob}}),
            )
            .await;
        if error_kind(&r) == "internal" {
            assert_eq!(
                env.engine.state("acme").await["runs"],
                runs_before,
                "a refused run never reached the engine"
            );
            refused = Some(error_message(&r));
            break;
        }
        assert_eq!(
            r.structured["outcome"]["status"], "success",
            "{}",
            r.structured
        );
        stored += 1;
    }
    let message = refused.unwrap_or_else(|| panic!("{stored} runs of 200 KB fit in 4 MiB"));
    assert!(message.contains("embedded store is full"), "{message}");
    assert!(message.contains("nothing was executed"), "{message}");
    assert!(stored >= 5, "only {stored} strangers' runs were stored");
    // The keyed principal's run and idempotency record are still there.
    let fetched = c
        .call(
            "trace_workflow",
            json!({"run_id": run_id, "trace_level": "summary"}),
        )
        .await;
    assert_eq!(
        fetched.structured["run_id"], run_id,
        "{}",
        fetched.structured
    );
    let retry = c.call("run_workflow", keyed_run("invoice-1")).await;
    assert_eq!(
        retry.structured["run_id"], run_id,
        "replayed, not run again"
    );
    assert_eq!(invoices(&env).await, before + 1, "one invoice");
}

/// Repro 5: the first requests after a Redis restart succeed, and
/// `/readyz` says what is true.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_after_a_redis_restart_succeeds() {
    let mut redis = RedisServer::start();
    let env = on_redis(&redis).await;
    let mut session = env.client(ACME_OPS);
    session.initialize().await;
    let http = reqwest::Client::new();
    let readyz = env.url.replace("/mcp", "/readyz");
    for round in 0..2 {
        let ok = session
            .call("validate_workflow", json!({"workflow": invoice()}))
            .await;
        assert_eq!(
            ok.structured["valid"], true,
            "round {round}: {}",
            ok.structured
        );
        redis.restart();
        // A session request (its revocation check reads the store) first.
        let first = session
            .call("validate_workflow", json!({"workflow": invoice()}))
            .await;
        assert_eq!(
            first.structured["valid"], true,
            "round {round}: {}",
            first.structured
        );
        let keyed_first = keyed(&env)
            .call("run_workflow", keyed_run(&format!("restart-{round}")))
            .await;
        assert_eq!(
            keyed_first.structured["outcome"]["status"], "success",
            "round {round}: {}",
            keyed_first.structured
        );
        let ready = http.get(&readyz).send().await.expect("readyz");
        assert_eq!(ready.status().as_u16(), 200, "round {round}");
    }
    redis.kill();
    let down = http.get(&readyz).send().await.expect("readyz");
    assert_eq!(down.status().as_u16(), 503, "Redis is down: not ready");
}

/// Repro 6: a store failure is named as the store's, not as the engine's.
#[tokio::test(flavor = "multi_thread")]
async fn store_failures_are_named_for_the_store() {
    let mut redis = RedisServer::start();
    let env = on_redis(&redis).await;
    let c = keyed(&env);
    let ok = c
        .call("validate_workflow", json!({"workflow": invoice()}))
        .await;
    assert_eq!(ok.structured["valid"], true, "{}", ok.structured);
    redis.kill();
    for (tool, args) in [
        ("validate_workflow", json!({"workflow": invoice()})),
        (
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "list"}),
        ),
        (
            "run_workflow",
            json!({"workflow": invoice(), "mode": "immediate"}),
        ),
    ] {
        let r = c.call(tool, args).await;
        assert_eq!(error_kind(&r), "internal", "{tool}: {}", r.structured);
        let message = error_message(&r);
        assert!(
            message.contains("the gateway's store failed"),
            "{tool}: {message}"
        );
        assert!(!message.contains("engine"), "{tool}: {message}");
    }
}
