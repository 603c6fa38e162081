//! The engine mapping through the real endpoint and the real engine: what the
//! channel of an execute answer follows when the engine's run answer shows
//! that nothing started, the asynchronous runner's cancel at the deadline, and
//! the client reading a dialect with HTTP 422 rejections, JSON in strings and
//! capitalised values.

use crate::common::{ACME_OPS, Engine, TestEnv, apply_dialect, repo_path, write_program};
use pilotage_gateway::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
use pilotage_gateway::config::Config;
use pilotage_gateway::engines::rest::EngineClient;
use pilotage_gateway::engines::{Engine as _, RunState};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

fn unique(prefix: &str) -> String {
    format!("{prefix}-{:x}", rand_bits())
}

fn rand_bits() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Issue: a validator failure after a cached validate became a permanent
/// `partial`. The engine's run answer (HTTP 500, no run id, no events) shows
/// nothing started: an `internal` request error, not recorded for replay, so
/// the retry with the same key executes once.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_answer_showing_nothing_started_is_internal_and_not_replayed() {
    let env = TestEnv::start().await;
    let mut c = env.client(ACME_OPS);
    c.initialize().await;
    let mut program = write_program("gold");
    program["name"] = json!(unique("nothing-started"));
    let valid = c
        .call("validate_workflow", json!({"workflow": program.clone()}))
        .await;
    assert_eq!(valid.structured["valid"], true, "{}", valid.structured);
    let before = env.engine.state("acme").await;
    env.engine
        .faults(json!({"tenant": "acme", "validator_500": true}))
        .await;
    let key = unique("key");
    let args = json!({"workflow": program, "mode": "immediate", "idempotency_key": key});
    let refused = c.call("run_workflow", args.clone()).await;
    assert!(
        refused.is_error,
        "a request error, not an outcome: {}",
        refused.structured
    );
    assert_eq!(refused.structured["error"]["kind"], "internal");
    let after = env.engine.state("acme").await;
    assert_eq!(after["runs"], before["runs"], "the engine started no run");
    assert_eq!(after["digest"], before["digest"]);

    env.engine.faults(json!({})).await;
    let retried = c.call("run_workflow", args.clone()).await;
    assert!(!retried.is_error, "{}", retried.structured);
    assert_eq!(retried.structured["outcome"]["status"], "success");
    let ran = env.engine.state("acme").await;
    assert_ne!(ran["digest"], before["digest"], "the retry executed");
    let replayed = c.call("run_workflow", args).await;
    assert_eq!(replayed.structured["run_id"], retried.structured["run_id"]);
    assert_eq!(env.engine.state("acme").await["digest"], ran["digest"]);
}

/// The asynchronous runner past its deadline: the gateway cancels the run
/// through the engine's cancel call and answers `timeout`; the cancelled run
/// never changes the world, even after the time it would have needed.
#[tokio::test(flavor = "multi_thread")]
async fn the_async_runner_cancels_a_run_past_its_deadline() {
    let engine = Engine::spawn(&["--dialect", "c"]);
    let env = TestEnv::in_front_of(engine, "tests/fixtures/features.toml", |cfg| {
        apply_dialect(cfg, "c");
        cfg.engine.run_deadline_ms = 300;
        cfg.engine.adapter["mapping"]["run"]["poll"]["grace_ms"] = toml::Value::Integer(0);
    })
    .await;
    let mut c = env.client(ACME_OPS);
    c.initialize().await;
    let before = env.engine.state("acme").await;
    // Every engine call of the tenant now waits 1.5 s before it starts, the
    // background run included: it cannot finish within 300 ms.
    env.engine
        .faults(json!({"tenant": "acme", "slow_ms": 1500}))
        .await;
    let mut program = write_program("silver");
    program["name"] = json!(unique("cancelled"));
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": program, "mode": "immediate"}),
        )
        .await;
    env.engine.faults(json!({})).await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(
        r.structured["outcome"]["status"], "timeout",
        "{}",
        r.structured
    );
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("cancelled"),
        "{}",
        r.structured
    );
    // Without the cancel, the run would have committed by now.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let after = env.engine.state("acme").await;
    assert_eq!(after["runs"], before["runs"], "the cancelled run never ran");
    assert_eq!(after["digest"], before["digest"]);
}

fn dialect_c_client(engine: &Engine) -> (EngineClient, Config) {
    let path = repo_path("deploy/gateway.dialect-c.toml");
    let text = std::fs::read_to_string(&path).expect("read dialect c config");
    let mut cfg = Config::parse(&text, &path).expect("parse dialect c config");
    cfg.engine.url = engine.url.clone();
    (EngineClient::new(&cfg.engine), cfg)
}

/// Dialect c answers an invalid program with HTTP 422 and its findings, at
/// check and at run; locations like `flow.steps.1.capability` (counted from
/// 1) become pointers through the rule file's syntax.
#[tokio::test(flavor = "multi_thread")]
async fn http_422_answers_carry_problems_at_their_paths() {
    let engine = Engine::spawn(&["--dialect", "c"]);
    let (client, cfg) = dialect_c_client(&engine);
    let program = json!({"steps": [
        {"id": "a", "kind": "call", "capability": "crm.get_custmer", "with": {"id": "cus_1"}}]});
    let problems = client.check("acme", &program, None).await.expect("check");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].is_error && problems[0].unknown_level.is_none());
    assert_eq!(
        problems[0].location.as_deref(),
        Some("flow.steps.1.capability")
    );

    let reply = client
        .run(
            "acme",
            &pilotage_gateway::engines::RunOrder {
                program: &program,
                input: &json!({}),
                context: None,
                dry_run: true,
                deadline: Duration::from_secs(5),
                stop: None,
            },
        )
        .await
        .expect("a rejection is an answer");
    assert_eq!(reply.state, RunState::Rejected);
    assert_eq!(reply.problems.len(), 1);
    assert_eq!(reply.problems[0].text, problems[0].text);

    let source = pilotage_gateway::gateway::LanguageRuntime::check(&cfg, &cfg.languages[0])
        .expect("guides of dialect c's language");
    let table = RuleTable::load(&source.path, &source.allowed_codes).expect("rule file");
    let steps = HashMap::new();
    let visible = vec!["crm.get_customer".to_owned()];
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &visible,
    };
    let classified = table.classify(
        &EngineProblem {
            level: Severity::Error,
            text: problems[0].text.clone(),
            location: problems[0].location.clone(),
        },
        &ctx,
    );
    assert_eq!(classified.diagnostic.code, "unknown_capability");
    assert_eq!(classified.diagnostic.path, "/steps/0/capability");
}

/// The asynchronous runner end to end at the client: a loop program whose
/// step log spans several pages of JSON strings, counters from 0 rebased,
/// the result decoded from its string, values read case-insensitively.
#[tokio::test(flavor = "multi_thread")]
async fn the_async_runner_reads_result_and_paged_log() {
    let engine = Engine::spawn(&["--dialect", "c"]);
    let (client, cfg) = dialect_c_client(&engine);
    let program = json!({"steps": [
        {"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x", "do": [
            {"id": "b", "kind": "branch", "when": {"op": "gt", "left": "$.item", "right": 1},
             "then": [{"id": "s", "kind": "set", "value": "$.item"}]}]}],
        "output": {"n": "$.input.xs"}});
    let reply = client
        .run(
            "acme",
            &pilotage_gateway::engines::RunOrder {
                program: &program,
                input: &json!({"xs": [1, 2, 3]}),
                context: None,
                dry_run: true,
                deadline: Duration::from_secs(5),
                stop: None,
            },
        )
        .await
        .expect("run");
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    assert_eq!(
        reply.result,
        json!({"n": [1, 2, 3]}),
        "decoded from its string"
    );
    // enter + 3 × (next + decide) + 2 sets + exit = 10 records: three pages of 4.
    assert_eq!(reply.events.len(), 10, "{:?}", reply.events);
    let profile = EngineClient::new(&cfg.engine).profile().clone();
    let steps = pilotage_gateway::languages::workflow_v1::program::steps(&program);
    let trace = pilotage_gateway::languages::workflow_v1::trace::map_events(
        &reply.events,
        &profile,
        &steps,
        pilotage_gateway::languages::RunEnd::Completed,
    );
    let ids: Vec<&str> = trace.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["l", "b#1", "b#2", "s#2", "b#3", "s#3"]);
    assert_eq!(
        trace[1]["decisions"][0]["took"], "else",
        "ELSE read as else"
    );
    assert_eq!(trace[2]["decisions"][0]["took"], "then");
}

/// The engine refuses at run time what the gateway's checks let through
/// (`1.0` is an integer to JSON Schema, not to the engine): dialect a answers
/// `REJECTED`, dialect c HTTP 422 with its findings. Either way the caller
/// gets `validation_error` with diagnostics, and nothing ran.
#[tokio::test(flavor = "multi_thread")]
async fn an_engine_rejection_at_run_time_is_a_validation_error_with_diagnostics() {
    let env = TestEnv::start().await;
    let mut c = env.client(ACME_OPS);
    c.initialize().await;
    let program = json!({"name": unique("strict-input"),
        "input": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "steps": [{"id": "s", "kind": "set", "value": "$.input.n"}],
        "output": {"n": "$.steps.s.output"}});
    let before = env.engine.state("acme").await;
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": program, "mode": "immediate", "input": {"n": 1.0}}),
        )
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(
        r.structured["outcome"]["status"], "validation_error",
        "{}",
        r.structured
    );
    let diagnostics = r.structured["diagnostics"].as_array().expect("diagnostics");
    assert!(!diagnostics.is_empty(), "{}", r.structured);
    assert_eq!(env.engine.state("acme").await["digest"], before["digest"]);
}
