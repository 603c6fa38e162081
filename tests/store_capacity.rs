//! Stored runs left running for days, through the HTTP endpoint: one key
//! storing thousands of runs on the embedded store is never refused (its
//! own oldest plain runs make room), what a stored run costs in bytes (alone
//! and after a run like it), and a Redis at its `maxmemory` refusing every
//! stored execute before the engine sees it, then recovering by itself.

mod common;

use common::redis_server::RedisServer;
use common::{ACME_OPS, Mcp, TestEnv, valid_program};
use pilotage_gateway::store::memory::MemoryStore;
use serde_json::{Value, json};

const CONFIG: &str = "tests/fixtures/features.toml";

/// The benchmark's 1 KiB branch-and-loop program (bench/src/workload.rs).
fn branch_and_loop() -> Value {
    json!({
        "name": "tier_review",
        "input": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        "steps": [
            {"id": "find", "kind": "call", "capability": "crm.find_customer",
             "with": {"query": "$.input.query"}},
            {"id": "per_customer", "kind": "for_each", "items": "$.steps.find.output.matches", "as": "customer",
             "do": [
                {"id": "is_gold", "kind": "branch",
                 "when": {"and": [{"op": "eq", "left": "$.item.tier", "right": "gold"}, {"exists": "$.item.id"}]},
                 "then": [
                    {"id": "profile", "kind": "call", "capability": "crm.get_customer", "with": {"id": "$.item.id"}},
                    {"id": "invoices", "kind": "call", "capability": "billing.list_invoices",
                     "with": {"customer_id": "$.item.id"}},
                    {"id": "gold_row", "kind": "set", "value": {
                        "customer": "$.steps.profile.output.name",
                        "email": "$.steps.profile.output.email",
                        "invoices": "$.steps.invoices.output.count"}}
                 ],
                 "else": [
                    {"id": "other_row", "kind": "set", "value": {"customer": "$.item.name", "tier": "$.item.tier"}}
                 ]}
             ]},
            {"id": "report", "kind": "call", "capability": "util.echo", "with": {"value": "$.steps.per_customer.output"}}
        ],
        "output": {"matched": "$.steps.find.output.count", "rows": "$.steps.report.output.value"}
    })
}

fn stored_run(program: Value, input: Value) -> Value {
    json!({"workflow": program, "mode": "immediate", "input": input,
        "store": true, "trace_level": "full"})
}

/// Bytes one stored record costs: as the parsed value the store once kept,
/// as compact text (what it kept next), and compressed, as it keeps it now.
fn record_bytes(record: &Value) -> (u64, u64, u64) {
    let text = serde_json::to_string(record).expect("record serializes");
    let packed = MemoryStore::run_record_bytes(record).expect("record packs");
    (
        pilotage_gateway::weigh::json(record),
        pilotage_gateway::weigh::text(&text),
        packed,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn stored_runs_are_measured_and_keep_their_full_trace() {
    let env = TestEnv::with_config(CONFIG, |_| {}).await;
    let client = env.client(ACME_OPS);
    for (name, program, input) in [
        ("two-step", valid_program(), json!({"id": "cus_1"})),
        (
            "branch-and-loop 1 KiB",
            branch_and_loop(),
            json!({"query": ""}),
        ),
    ] {
        let mut fetched = Vec::new();
        for _ in 0..2 {
            let ran = client
                .call("run_workflow", stored_run(program.clone(), input.clone()))
                .await;
            assert!(!ran.is_error, "{}", ran.structured);
            let trace = client
                .call(
                    "trace_workflow",
                    json!({"run_id": ran.structured["run_id"]}),
                )
                .await;
            assert!(!trace.is_error, "{}", trace.structured);
            // The stored trace is the full one the execute answered, unchanged.
            assert_eq!(trace.structured, ran.structured, "{name}");
            assert_eq!(trace.structured["trace"]["level"], "full");
            fetched.push(trace.structured);
        }
        let (tree, text, packed) = record_bytes(&fetched[1]);
        let after =
            MemoryStore::run_record_bytes_after(&fetched[0], &fetched[1]).expect("record packs");
        println!(
            "bytes per stored run, {name}: {tree} as a parsed value, {text} as compact text, {packed} kept alone (compressed), {after} kept after a run like it"
        );
        assert!(text * 2 < tree, "{name}: {text} is not well below {tree}");
        assert!(
            packed * 2 < text,
            "{name}: {packed} is not well below {text}"
        );
        // Two runs of one program differ in their ids and timings only.
        assert!(
            after * 2 < packed,
            "{name}: {after} after a run like it is not well below {packed} alone"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_key_stores_3000_runs_back_to_back_and_its_newest_100_are_fetchable() {
    let env = TestEnv::with_config(CONFIG, |_| {}).await;
    let client = env.client(ACME_OPS);
    let mut run_ids = Vec::new();
    for i in 0..3000 {
        let ran = client
            .call(
                "run_workflow",
                stored_run(branch_and_loop(), json!({"query": ""})),
            )
            .await;
        assert!(!ran.is_error, "run {i} refused: {}", ran.structured);
        assert_eq!(ran.structured["outcome"]["status"], "success", "run {i}");
        run_ids.push(ran.structured["run_id"].clone());
    }
    for run_id in &run_ids[run_ids.len() - 100..] {
        let fetched = client
            .call("trace_workflow", json!({"run_id": run_id}))
            .await;
        assert!(!fetched.is_error, "{run_id}: {}", fetched.structured);
        assert_eq!(&fetched.structured["run_id"], run_id);
    }
}

/// Sets Redis's ceiling to what it holds now plus `room` bytes, with the
/// policy compose runs it with (writes refused at the ceiling).
async fn set_ceiling(redis: &RedisServer, room: Option<u64>) {
    let client = ::redis::Client::open(redis.url()).expect("redis url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("redis connection");
    let info: String = ::redis::cmd("INFO")
        .arg("memory")
        .query_async(&mut conn)
        .await
        .expect("info");
    let used: u64 = info
        .lines()
        .find_map(|l| l.trim().strip_prefix("used_memory:"))
        .and_then(|v| v.parse().ok())
        .expect("used_memory");
    let max = room.map_or(0, |r| used + r);
    let () = ::redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query_async(&mut conn)
        .await
        .expect("policy");
    let () = ::redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(max)
        .query_async(&mut conn)
        .await
        .expect("maxmemory");
}

fn refused_with_retry_after(r: &common::CallResult, what: &str) {
    assert!(r.is_error, "{what} was not refused: {}", r.structured);
    let error = &r.structured["error"];
    assert_eq!(error["kind"], "internal", "{what}: {error}");
    let message = error["message"].as_str().unwrap_or("");
    assert!(
        message.contains("nothing was executed"),
        "{what}: {message}"
    );
    assert!(message.contains("store: false"), "{what}: {message}");
    let retry = r.structured["retry_after_ms"]
        .as_u64()
        .or_else(|| error["retry_after_ms"].as_u64());
    assert!(
        retry.is_some_and(|ms| ms > 0),
        "{what}: no retry_after_ms in {}",
        r.structured
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_redis_refuses_stored_runs_before_execution_and_recovers_by_itself() {
    let redis = RedisServer::start();
    let url = redis.url();
    let env = TestEnv::with_config(CONFIG, move |c| c.store.redis_url = url).await;
    let client = env.client(ACME_OPS);
    let warm = client
        .call(
            "run_workflow",
            stored_run(valid_program(), json!({"id": "cus_1"})),
        )
        .await;
    assert!(!warm.is_error, "{}", warm.structured);
    let mut answered = vec![warm.structured["run_id"].clone()];

    set_ceiling(&redis, Some(16 * 1024)).await;
    let before = env.engine.runs("acme").await;
    let plain = client
        .call(
            "run_workflow",
            stored_run(valid_program(), json!({"id": "cus_1"})),
        )
        .await;
    refused_with_retry_after(&plain, "a stored execute without a key");
    let mut keyed = stored_run(valid_program(), json!({"id": "cus_1"}));
    keyed["idempotency_key"] = json!(format!("full-{}", common::ports::rand_suffix()));
    let keyed_answer = client.call("run_workflow", keyed.clone()).await;
    refused_with_retry_after(&keyed_answer, "a keyed stored execute");
    assert_eq!(
        env.engine.runs("acme").await,
        before,
        "a stored execute reached the engine on a full Redis"
    );
    // What promises nothing stored keeps working.
    let checked = client
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert!(!checked.is_error, "{}", checked.structured);
    let unstored = client
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate",
                "input": {"id": "cus_1"}, "store": false}),
        )
        .await;
    assert!(!unstored.is_error, "{}", unstored.structured);
    assert_eq!(unstored.structured["outcome"]["status"], "success");

    // Memory frees up: the same requests succeed, with no restart.
    set_ceiling(&redis, None).await;
    for args in [stored_run(valid_program(), json!({"id": "cus_1"})), keyed] {
        let ran = client.call("run_workflow", args).await;
        assert!(!ran.is_error, "{}", ran.structured);
        answered.push(ran.structured["run_id"].clone());
    }
    for run_id in answered {
        let fetched = client
            .call("trace_workflow", json!({"run_id": run_id}))
            .await;
        assert!(
            !fetched.is_error,
            "{run_id} not fetchable: {}",
            fetched.structured
        );
    }
    // The refused ones were never stored, and say so.
    let refused_id = plain.structured["run_id"].clone();
    if !refused_id.is_null() {
        let gone = Mcp::new(&env.url, Some(ACME_OPS))
            .call("trace_workflow", json!({"run_id": refused_id}))
            .await;
        assert!(gone.is_error, "{}", gone.structured);
    }
}
