//! A gateway process killed (SIGKILL) while a keyed run is in flight: the
//! client's retry with the same key, through another gateway on the same
//! Redis, answers within the run deadline plus the claim grace, and the run
//! is never executed twice.

mod common;

use common::ports::rand_suffix;
use common::redis_server::RedisServer;
use common::{ACME_OPS, Engine, Mcp, repo_path, valid_program};
use serde_json::{Value, json};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The conformance configuration's run deadline, and the default grace.
const RUN_DEADLINE: Duration = Duration::from_millis(10_000);
const GRACE: Duration = Duration::from_millis(5_000);
/// What scheduling and one HTTP round trip may add on a busy machine.
const MARGIN: Duration = Duration::from_millis(1_500);

/// A `pilotage-gateway serve` process on a kernel-chosen port.
struct Served {
    child: Child,
    base: String,
    config: std::path::PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}

impl Served {
    fn start(engine: &Engine, redis: &RedisServer) -> Served {
        let text = std::fs::read_to_string(repo_path("tests/fixtures/features.toml"))
            .expect("conformance config");
        // Beside the original, so its relative paths still resolve.
        let config = repo_path(&format!(
            "tests/fixtures/.claim-crash-{}-{}.toml",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::write(&config, text).expect("write config");
        let mut child = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
            .args(["serve", "--config"])
            .arg(&config)
            .env("PILOTAGE_ENGINE_URL", &engine.url)
            .env("PILOTAGE_LISTEN", "127.0.0.1:0")
            .env("PILOTAGE_REDIS_URL", redis.url())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pilotage-gateway");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let Ok(parsed) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if !sent && parsed["message"] == "pilotage-gateway listening" {
                    let _ = tx.send(parsed["address"].as_str().unwrap_or("").to_owned());
                    sent = true;
                }
            }
        });
        let address = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the gateway printed its address");
        Served {
            child,
            base: format!("http://{address}"),
            config,
        }
    }

    fn mcp(&self) -> Mcp {
        Mcp::new(&format!("{}/mcp", self.base), Some(ACME_OPS))
    }

    async fn runs_in_flight(&self) -> f64 {
        let Ok(response) = reqwest::get(format!("{}/metrics", self.base)).await else {
            return 0.0;
        };
        let text = response.text().await.unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("pilotage_runs_in_flight")?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }

    fn kill_hard(&mut self) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-KILL", &pid]).status();
        assert!(killed.is_ok_and(|s| s.success()), "SIGKILL {pid}");
        let _ = self.child.wait();
    }
}

async fn engine_runs(engine: &Engine) -> u64 {
    let state = engine.state("acme").await;
    state["runs"]
        .as_u64()
        .unwrap_or_else(|| panic!("no run count in {state}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_a_gateway_crash_answers_within_the_run_deadline_plus_grace() {
    let redis = RedisServer::start();
    let engine = Engine::spawn(&[]);
    let mut a = Served::start(&engine, &redis);
    let b = Served::start(&engine, &redis);
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
    let before = engine_runs(&engine).await;

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
    let runs = engine_runs(&engine).await;
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
