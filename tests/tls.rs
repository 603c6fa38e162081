//! TLS to the engine and to Redis, with a private CA made for each test by
//! the `openssl` command line: the legacy engine behind nginx terminating TLS
//! (`https://` engine URL, `engine.ca_file`), and `redis-server` on its TLS
//! port (`rediss://`, `store.ca_file`). Without the CA file the same setups
//! fail: the certificates are really checked.

mod common;

use common::pki::{Nginx, Pki};
use common::ports::{free_port, rand_suffix};
use common::{ACME_OPS, Engine, TestEnv, valid_program};
use serde_json::json;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A CA and a server certificate for 127.0.0.1 in a scratch folder of
/// this test's own.
fn pki(name: &str) -> Pki {
    Pki::new(std::env::temp_dir().join(format!(
        "pilotage-tls-{name}-{}-{}",
        std::process::id(),
        rand_suffix()
    )))
}

/// A child process killed on drop.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (at most 20 s) until something accepts TCP connections on `port`.
fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} not listening on {port} after 20 s");
}

/// `redis-server` on a TLS port only (no plain port), no persistence.
fn tls_redis(pki: &Pki) -> (Process, u16) {
    let port = free_port();
    let mut child = Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .args(["--tls-cert-file", &pki.path("server.pem")])
        .args(["--tls-key-file", &pki.path("server.key")])
        .args(["--tls-ca-cert-file", &pki.path("ca.pem")])
        .args([
            "--tls-auth-clients",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(["--dir", &pki.dir.display().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start redis-server");
    wait_for_port(port, &mut child, "redis-server");
    (Process(child), port)
}

#[tokio::test]
async fn https_engine_with_a_private_ca() {
    let pki = pki("engine");
    let engine = Engine::spawn(&[]);
    let nginx = Nginx::in_front_of(&pki, &engine.url);
    let port = nginx.port;
    let https = format!("https://127.0.0.1:{port}");
    let ca = pki.path("ca.pem");
    let env = TestEnv::in_front_of(engine, "tests/fixtures/features.toml", |cfg| {
        cfg.engine.url = https.clone();
        cfg.engine.ca_file = ca;
    })
    .await;
    let mut client = env.client(ACME_OPS);
    client.initialize().await;
    let v = client
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_eq!(v.structured["valid"], true, "{}", v.raw);
    let r = client
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate", "input": {"id": "cus_1"},
                "expected_catalog_version": v.structured["catalog_version"]}),
        )
        .await;
    assert_eq!(r.structured["outcome"]["status"], "success", "{}", r.raw);
    assert_eq!(r.structured["output"]["name"], "Ada", "{}", r.raw);
}

#[tokio::test]
async fn https_engine_without_the_ca_is_refused() {
    let pki = pki("engine-noca");
    let engine = Engine::spawn(&[]);
    let nginx = Nginx::in_front_of(&pki, &engine.url);
    let port = nginx.port;
    let https = format!("https://127.0.0.1:{port}");
    let env = TestEnv::in_front_of(engine, "tests/fixtures/features.toml", |cfg| {
        cfg.engine.url = https;
    })
    .await;
    let mut client = env.client(ACME_OPS);
    client.initialize().await;
    let v = client
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    // The catalog cannot be read: the certificate is not trusted.
    assert_ne!(v.structured["valid"], true, "{}", v.raw);
    let text = v.raw.to_string();
    assert!(
        text.contains("engine"),
        "the failure names the engine: {text}"
    );
}

#[tokio::test]
async fn rediss_store_with_a_private_ca() {
    let pki = pki("redis");
    let (_redis, port) = tls_redis(&pki);
    let url = format!("rediss://127.0.0.1:{port}/0");
    let ca = pki.path("ca.pem");
    let tweak = |cfg: &mut pilotage_gateway::config::Config| {
        cfg.store.redis_url = url.clone();
        cfg.store.ca_file = ca.clone();
    };
    let a = TestEnv::in_front_of(Engine::spawn(&[]), "tests/fixtures/features.toml", tweak).await;
    let mut client = a.client(ACME_OPS);
    client.initialize().await;
    let r = client
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate", "store": true, "input": {"id": "cus_1"}}),
        )
        .await;
    assert_eq!(r.structured["outcome"]["status"], "success", "{}", r.raw);
    let run_id = r.structured["run_id"].as_str().expect("run_id").to_string();
    // A second gateway on the same TLS Redis finds the run: it is in Redis.
    let b = TestEnv::in_front_of(Engine::spawn(&[]), "tests/fixtures/features.toml", tweak).await;
    let mut other = b.client(ACME_OPS);
    other.initialize().await;
    let t = other
        .call("trace_workflow", json!({"run_id": run_id}))
        .await;
    assert!(!t.is_error, "{}", t.raw);
    assert_eq!(t.structured["run_id"], run_id.as_str(), "{}", t.raw);
}

#[tokio::test]
async fn rediss_store_without_the_ca_does_not_start() {
    let pki = pki("redis-noca");
    let (_redis, port) = tls_redis(&pki);
    let path = common::repo_path("tests/fixtures/features.toml");
    let text = std::fs::read_to_string(&path).expect("read config");
    let mut cfg = pilotage_gateway::config::Config::parse(&text, &path).expect("parse");
    cfg.store.redis_url = format!("rediss://127.0.0.1:{port}/0");
    cfg.store.op_timeout_ms = 1000;
    let err = match pilotage_gateway::app::build(cfg).await {
        Ok(_) => panic!("started on an untrusted Redis certificate"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("Redis"), "the failure names the store: {err}");
}

#[tokio::test]
async fn an_unusable_ca_file_stops_the_start_naming_the_setting() {
    let pki = pki("badca");
    std::fs::write(pki.dir.join("not-a-ca.pem"), "hello\n").expect("write");
    let path = common::repo_path("tests/fixtures/features.toml");
    let text = std::fs::read_to_string(&path).expect("read config");
    let mut cfg = pilotage_gateway::config::Config::parse(&text, &path).expect("parse");
    cfg.engine.ca_file = pki.path("not-a-ca.pem");
    let err = match pilotage_gateway::app::build(cfg).await {
        Ok(_) => panic!("started with a CA file holding no certificate"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("engine.ca_file"), "{err}");
}
