//! TLS to the engine and to Redis, with a private CA made for each test by
//! the `openssl` command line: the legacy engine behind nginx terminating TLS
//! (`https://` engine URL, `engine.ca_file`), and `redis-server` on its TLS
//! port (`rediss://`, `store.ca_file`). Without the CA file the same setups
//! fail: the certificates are really checked.

mod common;

use common::ports::{free_port, rand_suffix};
use common::{ACME_OPS, Engine, TestEnv, valid_program};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A temporary folder holding a CA and a server certificate for 127.0.0.1.
struct Pki {
    dir: PathBuf,
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Pki {
    fn new(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!(
            "pilotage-tls-{name}-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        openssl(
            &dir,
            &[
                &["req", "-x509"],
                &ec[..],
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=pilotage test CA",
                ],
            ],
        );
        openssl(
            &dir,
            &[
                &["req", "-new"],
                &ec[..],
                &[
                    "-keyout",
                    "server.key",
                    "-out",
                    "server.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ],
        );
        std::fs::write(
            dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .expect("write extensions");
        openssl(
            &dir,
            &[&[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "server.pem",
                "-days",
                "2",
                "-extfile",
                "server.ext",
            ]],
        );
        Pki { dir }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }
}

fn openssl(dir: &Path, parts: &[&[&str]]) {
    let args: Vec<&str> = parts.iter().flat_map(|p| p.iter().copied()).collect();
    let out = Command::new("openssl")
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run openssl (installed by scripts/install-deps)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
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

fn nginx_binary() -> String {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("nginx")
        .to_string()
}

/// nginx terminating TLS (the test CA's certificate) in front of `upstream`.
fn tls_proxy(pki: &Pki, upstream: &str) -> (Process, u16) {
    let port = free_port();
    let dir = &pki.dir;
    let user = if is_root() { "user root root;" } else { "" };
    let conf = format!(
        "{user}\ndaemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/nginx.err warn;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
           fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
           server {{\n    listen 127.0.0.1:{port} ssl;\n    ssl_certificate {d}/server.pem;\n\
             ssl_certificate_key {d}/server.key;\n    location / {{ proxy_pass {upstream}; }}\n  }}\n}}\n",
        d = dir.display()
    );
    std::fs::write(dir.join("nginx.conf"), conf).expect("write nginx.conf");
    let mut child = Command::new(nginx_binary())
        .args([
            "-p",
            &dir.display().to_string(),
            "-c",
            &pki.path("nginx.conf"),
        ])
        .args(["-e", &pki.path("nginx.err")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nginx (installed by scripts/install-deps)");
    wait_for_port(port, &mut child, "nginx");
    (Process(child), port)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
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
    let pki = Pki::new("engine");
    let engine = Engine::spawn(&[]);
    let (_nginx, port) = tls_proxy(&pki, &engine.url);
    let https = format!("https://127.0.0.1:{port}");
    let ca = pki.path("ca.pem");
    let env = TestEnv::in_front_of(engine, "tests/configs/conformance.toml", |cfg| {
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
    let pki = Pki::new("engine-noca");
    let engine = Engine::spawn(&[]);
    let (_nginx, port) = tls_proxy(&pki, &engine.url);
    let https = format!("https://127.0.0.1:{port}");
    let env = TestEnv::in_front_of(engine, "tests/configs/conformance.toml", |cfg| {
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
    let pki = Pki::new("redis");
    let (_redis, port) = tls_redis(&pki);
    let url = format!("rediss://127.0.0.1:{port}/0");
    let ca = pki.path("ca.pem");
    let tweak = |cfg: &mut pilotage_gateway::config::Config| {
        cfg.store.redis_url = url.clone();
        cfg.store.ca_file = ca.clone();
    };
    let a = TestEnv::in_front_of(Engine::spawn(&[]), "tests/configs/conformance.toml", tweak).await;
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
    let b = TestEnv::in_front_of(Engine::spawn(&[]), "tests/configs/conformance.toml", tweak).await;
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
    let pki = Pki::new("redis-noca");
    let (_redis, port) = tls_redis(&pki);
    let path = common::repo_path("tests/configs/conformance.toml");
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
    let pki = Pki::new("badca");
    std::fs::write(pki.dir.join("not-a-ca.pem"), "hello\n").expect("write");
    let path = common::repo_path("tests/configs/conformance.toml");
    let text = std::fs::read_to_string(&path).expect("read config");
    let mut cfg = pilotage_gateway::config::Config::parse(&text, &path).expect("parse");
    cfg.engine.ca_file = pki.path("not-a-ca.pem");
    let err = match pilotage_gateway::app::build(cfg).await {
        Ok(_) => panic!("started with a CA file holding no certificate"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("engine.ca_file"), "{err}");
}
