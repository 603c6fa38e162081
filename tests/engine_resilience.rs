//! Engine calls under one deadline, a retry budget and a circuit breaker,
//! through the real `/mcp` endpoint in front of the real legacy engine (its
//! admin faults slow it down or make it shed with 503 + `Retry-After`; its
//! `/admin/requests` counts what it received):
//! - an engine slower than `timeout_ms` is answered within the timeout plus
//!   a margin, in words ("did not answer within 1000 ms"), never retried;
//! - an engine that sheds gets at most the retry budget's extra calls, and
//!   a `Retry-After` longer than the deadline is not waited for;
//! - repeated failures open the breaker: calls fail fast with
//!   `retry_after_ms`, `/readyz` and `/metrics` show it, and one probe
//!   closes it once the engine is back.
//!
//! Time bounds are generous (seconds over the expected value); the counts
//! are exact or bounded by the budget's own arithmetic.

mod common;

use common::{Mcp, TestEnv};
use pilotage_gateway::config::Config;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const TIMEOUT_MS: u64 = 1000;
/// What an answer may take beyond the engine timeout on a loaded machine.
const MARGIN: Duration = Duration::from_millis(1500);

/// The engine settings of these tests: a 1 s timeout, two retries, a budget
/// of 10 % of calls with no floor, and a breaker as `breaker` sets it.
fn tweak(cfg: &mut Config, breaker_in_a_row: u32) {
    let e = &mut cfg.engine;
    e.timeout_ms = TIMEOUT_MS;
    e.retries = 2;
    e.retry_backoff_ms = 20;
    e.retry_budget.ratio = 0.1;
    e.retry_budget.min_per_second = 0;
    e.breaker.consecutive_failures = breaker_in_a_row;
    e.breaker.failure_ratio = 1.0;
    e.breaker.min_calls = 100_000;
    e.breaker.open_ms = 1500;
}

async fn env(breaker_in_a_row: u32) -> TestEnv {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        tweak(c, breaker_in_a_row)
    })
    .await;
    assert!(!env.external, "these tests start their own engine");
    env
}

async fn client(env: &TestEnv) -> Mcp {
    let mut c = env.anonymous();
    c.initialize().await;
    c
}

/// A valid program the verdict cache has not seen (`n` makes it unique).
fn program(n: usize) -> Value {
    json!({"name": format!("p{n}"), "steps": [
        {"id": "echo", "kind": "call", "capability": "util.echo", "with": {"value": "hi"}}
    ]})
}

/// Engine requests per validate of a fresh program while all is well.
async fn baseline(env: &TestEnv, c: &Mcp, from: usize) -> f64 {
    let before = env.engine.requests().await;
    for n in from..from + 4 {
        let v = c
            .call("validate_workflow", json!({"workflow": program(n)}))
            .await;
        assert!(!v.is_error, "{}", v.raw);
    }
    (env.engine.requests().await - before) as f64 / 4.0
}

fn gateway_base(env: &TestEnv) -> String {
    env.url.trim_end_matches("/mcp").to_string()
}

/// The caller's message of a failed call: it says what happened and names
/// neither the engine's address nor the HTTP client's words.
fn message_of(r: &common::CallResult) -> String {
    assert!(r.is_error, "{}", r.raw);
    assert_eq!(r.structured["error"]["kind"], "internal", "{}", r.raw);
    let m = r.structured["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    for internal in ["http://", "127.0.0.1", "error sending", "reqwest", "hyper"] {
        assert!(
            !m.contains(internal),
            "'{internal}' reaches the caller: {m}"
        );
    }
    m
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_engine_is_answered_within_its_timeout_and_never_hit_twice() {
    let env = env(0).await;
    let c = client(&env).await;
    let per_call = baseline(&env, &c, 0).await;
    env.engine.faults(json!({"slow_ms": 3 * TIMEOUT_MS})).await;
    let before = env.engine.requests().await;
    let calls = [
        ("validate_workflow", json!({"workflow": program(100)})),
        (
            "pilotage_catalog",
            json!({"language": common::LANG, "verb": "list", "q": "nothing-cached"}),
        ),
        (
            "run_workflow",
            json!({"workflow": program(101), "mode": "immediate"}),
        ),
        ("validate_workflow", json!({"workflow": program(102)})),
        ("validate_workflow", json!({"workflow": program(103)})),
    ];
    let mut failed = 0;
    for (tool, args) in &calls {
        let started = Instant::now();
        let r = c.call(tool, args.clone()).await;
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(TIMEOUT_MS) + MARGIN,
            "{tool} answered after {took:?}: {}",
            r.raw
        );
        if r.is_error {
            failed += 1;
            let m = message_of(&r);
            assert!(
                m.contains(&format!("the engine did not answer within {TIMEOUT_MS} ms")),
                "{tool}: {m}"
            );
        }
    }
    assert!(
        failed >= 3,
        "the slow engine failed the uncached calls ({failed})"
    );
    let received = env.engine.requests().await - before;
    let most = (per_call * calls.len() as f64).ceil() as u64;
    assert!(
        received <= most,
        "a slow engine received {received} requests for {} calls (at most {most} without retries)",
        calls.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shedding_engine_gets_at_most_the_retry_budgets_extra_calls() {
    let env = env(0).await;
    let c = client(&env).await;
    let per_call = baseline(&env, &c, 0).await;
    let made_before = (per_call * 4.0).round() as u64;
    // Retry-After: 0 asks for an immediate retry: only the budget holds it.
    env.engine
        .faults(json!({"unavailable_retry_after_s": 0}))
        .await;
    let before = env.engine.requests().await;
    const CALLS: usize = 30;
    for n in 0..CALLS {
        let r = c
            .call("validate_workflow", json!({"workflow": program(200 + n)}))
            .await;
        let m = message_of(&r);
        assert!(m.contains("the engine answered HTTP 503"), "{m}");
    }
    let received = env.engine.requests().await - before;
    // Each validate makes at most `per_call` calls; the budget allows 10 %
    // of every call made in its window as retries, the baseline's included.
    let first_attempts = (per_call * CALLS as f64).ceil() as u64;
    let budget = ((made_before + first_attempts) as f64 * 0.1).floor() as u64;
    assert!(
        received >= CALLS as u64,
        "every call reached the engine ({received})"
    );
    assert!(
        received <= first_attempts + budget,
        "{received} requests for {CALLS} calls: more than {first_attempts} + a budget of {budget}"
    );
    assert!(
        received < 2 * CALLS as u64,
        "two retries per call were not made ({received})"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_beyond_the_deadline_is_not_waited_for() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        tweak(c, 0);
        // A budget that would allow every retry: only Retry-After stops them.
        c.engine.retry_budget.ratio = 1.0;
        c.engine.retry_budget.min_per_second = 100;
    })
    .await;
    assert!(!env.external, "these tests start their own engine");
    let c = client(&env).await;
    env.engine
        .faults(json!({"unavailable_retry_after_s": 30}))
        .await;
    let before = env.engine.requests().await;
    for n in 0..3 {
        let started = Instant::now();
        let r = c
            .call("validate_workflow", json!({"workflow": program(300 + n)}))
            .await;
        assert!(
            started.elapsed() < Duration::from_millis(TIMEOUT_MS) + MARGIN,
            "{}",
            r.raw
        );
        let m = message_of(&r);
        assert!(m.contains("the engine answered HTTP 503"), "{m}");
    }
    let received = env.engine.requests().await - before;
    assert_eq!(
        received, 3,
        "one request per call: a 30 s Retry-After does not fit 1 s"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_breaker_fails_fast_shows_on_readyz_and_metrics_and_a_probe_closes_it() {
    let env = env(3).await;
    let c = client(&env).await;
    let base = gateway_base(&env);
    assert_eq!(breaker_gauge(&base).await, 0);
    env.engine.faults(json!({"slow_ms": 3 * TIMEOUT_MS})).await;
    // Three calls that time out at the engine open the breaker (each
    // validate fails at its first engine call; nothing is retried after a
    // spent deadline).
    for n in 0..3 {
        let r = c
            .call("validate_workflow", json!({"workflow": program(400 + n)}))
            .await;
        let m = message_of(&r);
        assert!(m.contains("did not answer within"), "{m}");
    }
    assert_eq!(breaker_gauge(&base).await, 2, "open");
    let ready = reqwest::get(format!("{base}/readyz"))
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 503);
    let body: Value = ready.json().await.expect("json");
    assert_eq!(body["open_breakers"], json!(["default"]), "{body}");

    // Open: the call fails fast, never reaches the engine, says when to
    // come back.
    let before = env.engine.requests().await;
    let started = Instant::now();
    let r = c
        .call("validate_workflow", json!({"workflow": program(410)}))
        .await;
    let took = started.elapsed();
    let m = message_of(&r);
    assert!(m.contains("circuit breaker is open"), "{m}");
    let wait = r.structured["retry_after_ms"]
        .as_u64()
        .expect("retry_after_ms");
    assert!((1..=1500).contains(&wait), "{wait}");
    assert!(
        took < Duration::from_millis(TIMEOUT_MS),
        "failed fast: {took:?}"
    );
    assert_eq!(env.engine.requests().await, before, "nothing was sent");

    // The engine is back: after the cool-down one probe closes the breaker.
    env.engine.faults(json!({})).await;
    tokio::time::sleep(Duration::from_millis(wait + 100)).await;
    let r = c
        .call("validate_workflow", json!({"workflow": program(420)}))
        .await;
    assert!(!r.is_error, "{}", r.raw);
    assert_eq!(r.structured["valid"], true, "{}", r.raw);
    assert_eq!(breaker_gauge(&base).await, 0, "closed");
    let ready = reqwest::get(format!("{base}/readyz"))
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 200);
}

/// `pilotage_engine_breaker_state{engine="default"}` on `/metrics`.
async fn breaker_gauge(base: &str) -> i64 {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let line = text
        .lines()
        .find(|l| l.starts_with("pilotage_engine_breaker_state{engine=\"default\"}"))
        .unwrap_or_else(|| panic!("no breaker gauge:\n{text}"));
    line.rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a value")
}
