//! Several gateway processes sharing one Redis: any instance answers anything.
//!
//! Each test starts its own topology on loopback: a throwaway `redis-server`
//! (free port, no persistence), a `legacy-engine`, and real
//! `pilotage-gateway serve` processes built from this crate, configured by the
//! environment overrides a deployment uses (`PILOTAGE_LISTEN`,
//! `PILOTAGE_REDIS_URL`, `PILOTAGE_ENGINE_URL`, `PILOTAGE_INSTANCE`). Every
//! process is killed when its handle drops, also when a test fails.
//!
//! `redis-server` must be on PATH (`apt-get install -y redis-server`); the
//! tests fail, not skip, without it. Waits are bounded (a process that never
//! gets ready fails the test with its log); no assertion depends on timing.

use crate::common::ports::free_port;
use crate::common::redis_server::RedisServer;
use crate::common::{ACME_OPS, Engine, Mcp, repo_path, write_program};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Longest wait for a process to become ready, or for a request that must
/// not hang. Far above what any step needs; it only turns a hang into a
/// failure.
const BOUND: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------
// Gateway processes
// ---------------------------------------------------------------------------

/// One `pilotage-gateway serve` process, killed on drop. Its log (stderr) goes
/// to a temporary file that is removed unless the test failed.
struct Gateway {
    /// Role in the test (gw1, gw2, ...).
    name: String,
    /// `PILOTAGE_INSTANCE`: the name plus a nonce, unique on this machine, so
    /// a readiness probe cannot mistake another process on the port for this one.
    instance: String,
    child: Option<Child>,
    port: u16,
    log: PathBuf,
}

impl Gateway {
    /// Starts instance `name` with the conformance configuration, pointed at
    /// `redis_url` and `engine_url` by environment, and waits until `/readyz`
    /// answers 200.
    async fn start(name: &str, redis_url: &str, engine_url: &str) -> Gateway {
        let mut last_log = String::new();
        for attempt in 0..5 {
            let port = free_port();
            let log = std::env::temp_dir().join(format!(
                "pilotage-multi-{}-{name}-{port}-{attempt}.log",
                std::process::id()
            ));
            let file = std::fs::File::create(&log).expect("create gateway log");
            let instance = format!("{name}-{}-{port}-{attempt}", std::process::id());
            let child = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
                .arg("serve")
                .arg("--config")
                .arg(repo_path("tests/fixtures/features.toml"))
                .env("PILOTAGE_LISTEN", format!("127.0.0.1:{port}"))
                .env("PILOTAGE_REDIS_URL", redis_url)
                .env("PILOTAGE_ENGINE_URL", engine_url)
                .env("PILOTAGE_INSTANCE", &instance)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(file)
                .spawn()
                .expect("start pilotage-gateway");
            let mut gw = Gateway {
                name: name.to_string(),
                instance,
                child: Some(child),
                port,
                log,
            };
            if gw.wait_ready().await {
                return gw;
            }
            // Exited (e.g. the port was taken meanwhile): try another port.
            last_log = gw.log_tail();
            gw.stop();
            let _ = std::fs::remove_file(&gw.log);
        }
        panic!("gateway {name} did not start after 5 attempts; last log:\n{last_log}");
    }

    /// Waits until this process answers `/readyz` with 200: `true`; `false`
    /// if it exited first or another process holds the port. Panics (with
    /// the log) if it is neither ready nor dead within the bound.
    async fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + BOUND;
        while Instant::now() < deadline {
            if let Some(c) = &mut self.child
                && let Ok(Some(_)) = c.try_wait()
            {
                return false;
            }
            if let Some((200, body)) = self.readyz_answer().await {
                // Another process on the port means ours cannot bind it.
                return body["instance"] == self.instance.as_str();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "gateway {} not ready within {BOUND:?}; log:\n{}",
            self.name,
            self.log_tail()
        );
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    /// The HTTP status of `/readyz`, or `None` when nothing answers.
    async fn readyz(&self) -> Option<u16> {
        self.readyz_answer().await.map(|(status, _)| status)
    }

    /// Status and JSON body of `/readyz`.
    async fn readyz_answer(&self) -> Option<(u16, Value)> {
        let r = http()
            .get(format!("{}/readyz", self.base()))
            .send()
            .await
            .ok()?;
        let status = r.status().as_u16();
        Some((status, r.json().await.unwrap_or(Value::Null)))
    }

    /// `pilotage_mcp_requests_total` of this instance (scraped directly, so
    /// the series needs no instance label: Prometheus adds one per target).
    async fn requests_total(&self) -> u64 {
        let text = http()
            .get(format!("{}/metrics", self.base()))
            .send()
            .await
            .expect("GET /metrics")
            .text()
            .await
            .expect("metrics body");
        let series = "pilotage_mcp_requests_total ";
        text.lines()
            .find_map(|l| l.strip_prefix(series))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in /metrics:\n{text}"))
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() {
            eprintln!("gateway {} log kept at {}", self.name, self.log.display());
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("http client")
}

/// Redis, an engine, and gateway instances gw1..gwN sharing both.
struct Cluster {
    gateways: Vec<Gateway>,
    engine: Engine,
    redis: RedisServer,
}

impl Cluster {
    async fn start(instances: usize) -> Cluster {
        let redis = RedisServer::start();
        let engine = Engine::spawn(&[]);
        let mut gateways = Vec::new();
        for i in 1..=instances {
            gateways.push(Gateway::start(&format!("gw{i}"), &redis.url(), &engine.url).await);
        }
        Cluster {
            gateways,
            engine,
            redis,
        }
    }

    /// Kills every gateway process, then starts new ones (new ports).
    async fn restart_gateways(&mut self) {
        let names: Vec<String> = self.gateways.iter().map(|g| g.name.clone()).collect();
        self.gateways.clear();
        for name in names {
            let gw = Gateway::start(&name, &self.redis.url(), &self.engine.url).await;
            self.gateways.push(gw);
        }
    }

    async fn runs(&self, tenant: &str) -> u64 {
        self.engine.state(tenant).await["runs"]
            .as_u64()
            .expect("engine state has a runs counter")
    }
}

/// Runs `fut`, failing the test instead of hanging past the bound.
async fn bounded<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {BOUND:?}"))
}

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{:016x}{:08x}",
        crate::common::ports::rand_suffix(),
        std::process::id()
    )
}

fn request_error_kind(structured: &Value) -> &str {
    structured["error"]["kind"].as_str().unwrap_or("")
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

/// 50 concurrent executes with one idempotency key, sent round robin to three
/// instances: the engine runs the program once, and all 50 callers get the
/// same response.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_idempotency_key_over_three_instances_runs_once() {
    let cluster = Cluster::start(3).await;
    let runs_before = cluster.runs("acme").await;
    let mut served_before = Vec::new();
    for gw in &cluster.gateways {
        served_before.push(gw.requests_total().await);
    }
    let args = json!({
        "workflow": write_program("gold"),
        "mode": "immediate",
        "idempotency_key": unique("concurrent"),
        "trace_level": "full",
    });
    let mut tasks = Vec::new();
    let mut sent = vec![0u64; cluster.gateways.len()];
    for i in 0..50 {
        let which = i % cluster.gateways.len();
        sent[which] += 1;
        let url = cluster.gateways[which].mcp_url();
        let args = args.clone();
        tasks.push(tokio::spawn(async move {
            let client = Mcp::new(&url, Some(ACME_OPS));
            client.call("run_workflow", args).await
        }));
    }
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(
            bounded("a concurrent execute", t)
                .await
                .expect("execute task"),
        );
    }

    for a in &answers {
        assert!(
            !a.is_error,
            "a request error instead of the run: {}",
            a.structured
        );
    }
    let first = serde_json::to_string(&answers[0].structured).expect("serialize");
    for (i, a) in answers.iter().enumerate() {
        let this = serde_json::to_string(&a.structured).expect("serialize");
        assert_eq!(this, first, "answer {i} differs from answer 0");
    }
    assert_eq!(answers[0].structured["outcome"]["status"], "success");
    assert_eq!(answers[0].structured["output"]["tier"], "gold");
    assert_eq!(
        cluster.runs("acme").await,
        runs_before + 1,
        "exactly one engine run for one idempotency key"
    );
    // Each instance served exactly the requests sent to it.
    for (i, gw) in cluster.gateways.iter().enumerate() {
        let served = gw.requests_total().await - served_before[i];
        assert_eq!(
            served, sent[i],
            "{} served {served} of its {} requests",
            gw.name, sent[i]
        );
    }
}

/// A run stored through instance A survives a restart of every gateway
/// process and is fetched through instance B unchanged.
#[tokio::test(flavor = "multi_thread")]
async fn stored_run_survives_restart_of_all_gateways() {
    let mut cluster = Cluster::start(3).await;
    let a = Mcp::new(&cluster.gateways[0].mcp_url(), Some(ACME_OPS));
    let executed = a
        .call(
            "run_workflow",
            json!({"workflow": write_program("silver"), "mode": "immediate",
                "store": true, "trace_level": "full"}),
        )
        .await;
    assert!(!executed.is_error, "{}", executed.structured);
    assert_eq!(executed.structured["outcome"]["status"], "success");
    let run_id = executed.structured["run_id"].clone();

    cluster.restart_gateways().await;

    let b = Mcp::new(&cluster.gateways[1].mcp_url(), Some(ACME_OPS));
    let fetched = b.call("trace_workflow", json!({"run_id": run_id})).await;
    assert!(!fetched.is_error, "{}", fetched.structured);
    assert_eq!(
        fetched.structured, executed.structured,
        "the envelope fetched through B after the restart is the one A answered"
    );
    // The same principal through the third instance, and another principal
    // sees nothing.
    let c = Mcp::new(&cluster.gateways[2].mcp_url(), Some(ACME_OPS));
    let again = c.call("trace_workflow", json!({"run_id": run_id})).await;
    assert_eq!(again.structured, executed.structured);
    let other = Mcp::new(
        &cluster.gateways[2].mcp_url(),
        Some(crate::common::ACME_AUDIT),
    );
    let hidden = other
        .call("trace_workflow", json!({"run_id": run_id}))
        .await;
    assert_eq!(request_error_kind(&hidden.structured), "not_found");
}

/// A session initialized on A is valid on B and C (signed ids, no shared
/// session table); a DELETE on B ends it on C and A too.
#[tokio::test(flavor = "multi_thread")]
async fn session_from_one_instance_works_on_all_and_delete_ends_it_everywhere() {
    let cluster = Cluster::start(3).await;
    let [a, b, c] = [0, 1, 2].map(|i| cluster.gateways[i].mcp_url());
    let mut on_a = Mcp::new(&a, None);
    on_a.initialize().await;
    let token = on_a.session.clone().expect("session id");
    let with_session = |url: &str| {
        let mut client = Mcp::new(url, None);
        client.session = Some(token.clone());
        client
    };
    let (on_b, on_c) = (with_session(&b), with_session(&c));
    assert!(!on_b.list_tools().await.is_empty(), "tools/list on B");
    assert!(!on_c.list_tools().await.is_empty(), "tools/list on C");

    // The anonymous principal is the session: a run stored through B is
    // the session's own, found through C, invisible to another session.
    let stored = on_b
        .call(
            "run_workflow",
            json!({"workflow": crate::common::valid_program(), "mode": "immediate",
                "input": {"id": "cus_1"}, "store": true}),
        )
        .await;
    assert_eq!(
        stored.structured["outcome"]["status"], "success",
        "{}",
        stored.structured
    );
    let run_id = stored.structured["run_id"].clone();
    let fetched = on_c.call("trace_workflow", json!({"run_id": run_id})).await;
    assert_eq!(fetched.structured, stored.structured);
    let mut stranger = Mcp::new(&c, None);
    stranger.initialize().await;
    let hidden = stranger
        .call("trace_workflow", json!({"run_id": run_id}))
        .await;
    assert_eq!(request_error_kind(&hidden.structured), "not_found");

    // DELETE on B.
    let deleted = http()
        .delete(&b)
        .header("mcp-session-id", &token)
        .header("mcp-protocol-version", &on_b.protocol)
        .send()
        .await
        .expect("DELETE /mcp");
    assert!(
        deleted.status().is_success(),
        "DELETE on B: {}",
        deleted.status()
    );

    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}}).to_string();
    for (name, client) in [("C", &on_c), ("A", &with_session(&a))] {
        let (status, _, body) = client.raw(&list).await;
        assert_eq!(status, 404, "ended session on {name}: {body}");
    }
    // The stranger's own session is untouched.
    assert!(!stranger.list_tools().await.is_empty());
}

/// Redis gone before an execute starts: a request error `internal`, nothing
/// executed, an answer within the bound, and `/readyz` says 503.
#[tokio::test(flavor = "multi_thread")]
async fn redis_down_before_execution_refuses_without_running() {
    let mut cluster = Cluster::start(2).await;
    let runs_before = cluster.runs("acme").await;
    let digest_before = cluster.engine.digest("acme").await;
    cluster.redis.kill();

    for (i, extra) in [
        json!({}),
        json!({"idempotency_key": unique("down"), "store": true}),
    ]
    .into_iter()
    .enumerate()
    {
        let client = Mcp::new(&cluster.gateways[i % 2].mcp_url(), Some(ACME_OPS));
        let mut args = json!({"workflow": write_program("gold"), "mode": "immediate"});
        for (k, v) in extra.as_object().expect("object") {
            args[k] = v.clone();
        }
        let answer = bounded(
            "an execute with Redis down",
            client.call("run_workflow", args),
        )
        .await;
        assert!(
            answer.is_error,
            "expected a request error: {}",
            answer.structured
        );
        assert_eq!(
            request_error_kind(&answer.structured),
            "internal",
            "{}",
            answer.structured
        );
        crate::common::assert_shape(&answer.structured, "RequestError");
    }
    assert_eq!(
        cluster.runs("acme").await,
        runs_before,
        "the engine ran nothing"
    );
    assert_eq!(
        cluster.engine.digest("acme").await,
        digest_before,
        "no side effect"
    );
    for gw in &cluster.gateways {
        assert_eq!(
            gw.readyz().await,
            Some(503),
            "{} /readyz with Redis down",
            gw.name
        );
    }

    // Back: the instances reconnect by themselves.
    cluster.redis.restart();
    for gw in &mut cluster.gateways {
        assert!(
            gw.wait_ready().await,
            "{} ready again after Redis came back",
            gw.name
        );
    }
    let client = Mcp::new(&cluster.gateways[0].mcp_url(), Some(ACME_OPS));
    let answer = client
        .call(
            "run_workflow",
            json!({"workflow": write_program("gold"), "mode": "immediate"}),
        )
        .await;
    assert_eq!(
        answer.structured["outcome"]["status"], "success",
        "{}",
        answer.structured
    );
}

/// Redis lost while the engine runs: the caller still gets the run's true
/// outcome, marked `trace.stats.retained: false`, and a later fetch (Redis
/// back, empty) answers `not_found`.
#[tokio::test(flavor = "multi_thread")]
async fn redis_lost_during_the_run_answers_the_outcome_unretained() {
    let mut cluster = Cluster::start(1).await;
    let url = cluster.gateways[0].mcp_url();
    let runs_before = cluster.runs("acme").await;
    // The engine counts the run when it starts it, then sleeps: Redis is
    // stopped in that window, after every store access that precedes
    // execution and before the record is written.
    let program = json!({"steps": [
        {"id": "wait", "kind": "call", "capability": "util.sleep", "with": {"ms": 3000}},
        {"id": "set", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_2", "tier": "gold"}}
    ], "output": {"tier": "$.steps.set.output.tier"}});
    let execute = tokio::spawn(async move {
        let client = Mcp::new(&url, Some(ACME_OPS));
        client
            .call(
                "run_workflow",
                json!({"workflow": program, "mode": "immediate", "store": true, "trace_level": "full"}),
            )
            .await
    });
    bounded("the engine starting the run", async {
        while cluster.runs("acme").await == runs_before {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    cluster.redis.kill();

    let answer = bounded("the execute", execute).await.expect("execute task");
    assert!(
        !answer.is_error,
        "the run happened; not a request error: {}",
        answer.structured
    );
    assert_eq!(
        answer.structured["outcome"]["status"], "success",
        "{}",
        answer.structured
    );
    assert_eq!(answer.structured["output"]["tier"], "gold");
    assert_eq!(answer.structured["trace"]["stats"]["retained"], false);
    let state = cluster.engine.state("acme").await;
    assert_eq!(cluster.runs("acme").await, runs_before + 1);
    let cus_2 = state["customers"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == "cus_2"))
        .expect("cus_2 in the engine state");
    assert_eq!(cus_2["tier"], "gold", "the write reached the engine");

    cluster.redis.restart();
    assert!(cluster.gateways[0].wait_ready().await, "ready again");
    let client = Mcp::new(&cluster.gateways[0].mcp_url(), Some(ACME_OPS));
    let fetched = client
        .call(
            "trace_workflow",
            json!({"run_id": answer.structured["run_id"]}),
        )
        .await;
    assert_eq!(
        request_error_kind(&fetched.structured),
        "not_found",
        "{}",
        fetched.structured
    );
}
