//! Harness for the Host's integration tests: the real thing, end to end.
//!
//! A real `legacy-engine` process on a free port; the gateway built by the
//! same `pilotage_gateway::app::build` as production with the conformance
//! configuration, served in process on a free port; and the `pilotage`
//! binary run as a subprocess against it. (The root crate's `tests/common`
//! cannot be shared across crates, so the few pieces needed are repeated
//! here.)
//!
//! Between the CLI and the gateway sits a thin HTTP front, the test's own
//! eyes on the wire: it logs every JSON-RPC method and tool called, so a
//! test can prove what the Host transmitted and what it did not. It can
//! also play the part of the world around the Host: edit the engine's
//! catalog just before an execute request reaches the gateway (to cause a
//! real `catalog_drift`), or rewrite an answer into a value the gateway
//! never emits (an unknown status or request-error kind).

#![allow(dead_code)]

#[path = "../../../tests/common/pki.rs"]
pub mod tls;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const ACME_OPS: &str = "acme-ops-key";

/// A running engine process, killed on drop.
pub struct Engine {
    pub url: String,
    child: Child,
    http: reqwest::Client,
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn engine_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join("legacy-engine");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "legacy-engine"])
            .status()
            .expect("run cargo build -p legacy-engine");
        assert!(status.success(), "building legacy-engine failed");
    }
    bin
}

impl Engine {
    pub fn spawn() -> Engine {
        let mut child = Command::new(engine_binary())
            .args(["--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start legacy-engine");
        let stdout = child.stdout.take().expect("engine stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut sent = false;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if !sent && let Some(i) = line.find("http://") {
                    let _ = tx.send(line[i..].trim().to_string());
                    sent = true;
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("legacy-engine printed its address");
        Engine {
            url,
            child,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(20))
                .build()
                .expect("http client"),
        }
    }

    pub async fn state(&self, tenant: &str) -> Value {
        self.http
            .get(format!("{}/admin/state?tenant={tenant}", self.url))
            .send()
            .await
            .expect("admin state")
            .json()
            .await
            .expect("admin state json")
    }

    /// (runs counter, world digest): the runs counter moves iff the engine
    /// was asked to run something; the digest iff a side effect happened.
    pub async fn runs_and_digest(&self, tenant: &str) -> (u64, String) {
        let s = self.state(tenant).await;
        (
            s["runs"].as_u64().expect("runs"),
            s["digest"].as_str().expect("digest").to_string(),
        )
    }

    /// Renames a capability for one tenant: a defined catalog field
    /// changes, so that tenant's `catalog_version` moves.
    pub async fn rename_capability(&self, tenant: &str, name: &str, title: &str) {
        rename_capability(&self.http, &self.url, tenant, name, title).await;
    }
}

async fn rename_capability(
    http: &reqwest::Client,
    engine: &str,
    tenant: &str,
    name: &str,
    title: &str,
) {
    let list: Value = http
        .get(format!("{engine}/api/v1/capabilities"))
        .header("X-Tenant", tenant)
        .send()
        .await
        .expect("capabilities")
        .json()
        .await
        .expect("capabilities json");
    let mut cap = list["capabilities"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == name))
        .cloned()
        .expect("capability visible");
    cap["title"] = json!(title);
    let r = http
        .put(format!(
            "{engine}/admin/capabilities/{name}?tenant={tenant}"
        ))
        .json(&cap)
        .send()
        .await
        .expect("put capability");
    assert!(r.status().is_success(), "put capability: {}", r.status());
}

/// A rewrite of one tool's JSON-RPC `result` (`structuredContent`,
/// `isError`, …).
pub type Rewrite = fn(&mut Value);

/// The test's HTTP front in front of the gateway.
#[derive(Clone, Default)]
pub struct Front {
    /// One line per request: `initialize`, `tools/list`,
    /// `tools/call validate_workflow`, …
    pub log: Arc<Mutex<Vec<String>>>,
    /// When set, the first `tools/call` of this tool first renames a
    /// capability in the engine (engine URL, tool).
    drift_before: Arc<Mutex<Option<(String, String)>>>,
    /// Rewrites the answer of this tool.
    rewrite: Arc<Mutex<Option<(String, Rewrite)>>>,
}

impl Front {
    /// How many requests matched `label` exactly.
    pub fn count(&self, label: &str) -> usize {
        self.log
            .lock()
            .expect("log")
            .iter()
            .filter(|l| *l == label)
            .count()
    }

    pub fn clear(&self) {
        self.log.lock().expect("log").clear();
    }

    pub fn lines(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }

    /// Before the next call of `tool` reaches the gateway, the catalog moves.
    pub fn drift_before(&self, engine: &Engine, tool: &str) {
        *self.drift_before.lock().expect("hook") = Some((engine.url.clone(), tool.to_string()));
    }

    pub fn rewrite(&self, tool: &str, f: Rewrite) {
        *self.rewrite.lock().expect("hook") = Some((tool.to_string(), f));
    }
}

async fn observe(State(f): State<Front>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 16 << 20)
        .await
        .unwrap_or_default();
    let msg: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let method = msg["method"].as_str().unwrap_or_default();
    let tool = msg["params"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let label = match method {
        "tools/call" => format!("tools/call {tool}"),
        "" => format!("{} (no JSON-RPC method)", parts.method),
        m => m.to_string(),
    };
    f.log.lock().expect("log").push(label);
    if method == "tools/call" {
        let hook = {
            let mut h = f.drift_before.lock().expect("hook");
            match h.as_ref() {
                Some((_, t)) if *t == tool => h.take(),
                _ => None,
            }
        };
        if let Some((url, _)) = hook {
            rename_capability(
                &reqwest::Client::new(),
                &url,
                "acme",
                "util.echo",
                "Echo (renamed while the Host was gating)",
            )
            .await;
        }
    }
    let resp = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let rewrite = {
        let r = f.rewrite.lock().expect("hook");
        match r.as_ref() {
            Some((t, f)) if method == "tools/call" && *t == tool => Some(*f),
            _ => None,
        }
    };
    let Some(rewrite) = rewrite else {
        return resp;
    };
    let (mut parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, 16 << 20)
        .await
        .unwrap_or_default();
    let mut v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if let Some(result) = v.pointer_mut("/result") {
        rewrite(result);
    }
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(v.to_string()))
}

/// One environment: engine, gateway behind the front, a scratch directory.
pub struct Env {
    pub engine: Engine,
    pub url: String,
    pub front: Front,
    pub dir: PathBuf,
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What one `pilotage` invocation did.
#[derive(Debug)]
pub struct CliRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl CliRun {
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

impl Env {
    pub async fn start() -> Env {
        let engine = Engine::spawn();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/features.toml");
        let text = std::fs::read_to_string(&path).expect("read conformance config");
        let mut cfg = pilotage_gateway::config::Config::parse(&text, &path)
            .expect("parse conformance config");
        cfg.engine.url = engine.url.clone();
        cfg.server.watch_files = false;
        let problems = cfg.validate();
        assert!(problems.is_empty(), "config invalid: {problems:?}");
        let app = pilotage_gateway::app::build(cfg)
            .await
            .expect("build gateway");
        let front = Front::default();
        let router = app
            .router
            .clone()
            .layer(axum::middleware::from_fn_with_state(front.clone(), observe));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
            drop(app);
        });
        let dir = std::env::temp_dir().join(format!(
            "pilotage-host-test-{}-{:x}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Env {
            engine,
            url,
            front,
            dir,
        }
    }

    /// Writes a program to the scratch directory and returns its path.
    pub fn program(&self, name: &str, program: &Value) -> String {
        let p = self.dir.join(format!("{name}.json"));
        std::fs::write(&p, program.to_string()).expect("write program");
        p.display().to_string()
    }

    /// Runs `pilotage ARGS --url URL --key acme-ops-key` with stdin not a
    /// terminal (null) and stdout/stderr piped.
    pub async fn pilotage(&self, args: &[&str]) -> CliRun {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--url", &self.url, "--key", ACME_OPS]);
        self.pilotage_as_given(&all, &[]).await
    }

    /// Runs `pilotage ARGS` with only the cache directory added (the test
    /// gives URL and key itself), `envs` set, and PILOTAGE_URL,
    /// PILOTAGE_KEY and SSL_CERT_FILE otherwise unset.
    pub async fn pilotage_as_given(&self, args: &[&str], envs: &[(&str, &str)]) -> CliRun {
        run_cli(
            env!("CARGO_BIN_EXE_pilotage"),
            args,
            &self.dir.join("cache"),
            envs,
        )
        .await
    }

    /// The gateway's address without the MCP path: `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }
}

/// Runs a `pilotage` binary with stdin not a terminal (null) and
/// stdout/stderr piped.
pub async fn run_cli(bin: &str, args: &[&str], cache: &Path, envs: &[(&str, &str)]) -> CliRun {
    {
        let child = tokio::process::Command::new(bin)
            .args(args)
            .arg("--cache-dir")
            .arg(cache)
            .env_remove("PILOTAGE_URL")
            .env_remove("PILOTAGE_KEY")
            .env_remove("SSL_CERT_FILE")
            .envs(envs.iter().copied())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start pilotage");
        let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .expect("pilotage finished within 120 s")
            .expect("pilotage output");
        CliRun {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish()
}
