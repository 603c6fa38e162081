//! Test harness: starts the real thing and talks to it over HTTP.
//!
//! In-process mode (default): a real `legacy-engine` process on a free port,
//! and the gateway built by the same `app::build` as production, serving on a
//! free port. External mode (`PILOTAGE_TEST_GATEWAY_URL` and
//! `PILOTAGE_TEST_ENGINE_URL` set): the suite drives an already running
//! deployment, e.g. three gateways behind a load balancer.
//!
//! Every `structuredContent` a test sees can be checked against the official
//! JSON Schema when it is present (`PILOTAGE_SCHEMA`, default
//! `../shared/pilotage/pilotage.schema.json` next to the repository).

#![allow(dead_code)]

pub mod answers;
pub mod engine_env;
pub mod guides;
pub mod mistral;
pub mod pki;
pub mod ports;
pub mod redis_cluster;
pub mod redis_sentinel;
pub mod redis_server;
pub mod served;
pub mod shipped;

// The n8n/v1 suites' gateway in front of n8n.
pub mod n8n_gateway;

use pilotage_gateway::config::Config;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

pub const ACME_OPS: &str = "acme-ops-key";
pub const ACME_AUDIT: &str = "acme-audit-key";
pub const GLOBEX: &str = "globex-key";
pub const PUBLIC: &str = "public-key";
pub const LANG: &str = "workflow/v1";
/// The feature suites' configuration: two languages built to reach every
/// sub-feature, declared and undeclared. It stands for no shipped
/// configuration; `tests/configs/` holds those the vectors also run against.
pub const FEATURES: &str = "tests/fixtures/features.toml";
pub const STAGING: &str = "workflow-staging/v1";

/// A running engine process (killed on drop) or an external one.
pub struct Engine {
    pub url: String,
    child: Option<Child>,
    http: reqwest::Client,
    /// Every line the engine printed on stdout (its trace-context log).
    stdout: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn engine_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
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
    })
    .clone()
}

impl Engine {
    /// Spawns `legacy-engine --listen 127.0.0.1:0 [extra args]`.
    pub fn spawn(extra: &[&str]) -> Engine {
        let mut child = Command::new(engine_binary())
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start legacy-engine");
        let stdout = child.stdout.take().expect("engine stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = lines.clone();
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
                if let Ok(mut all) = kept.lock() {
                    all.push(line);
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("legacy-engine printed its address");
        Engine {
            url,
            child: Some(child),
            http: reqwest::Client::new(),
            stdout: lines,
        }
    }

    pub fn external(url: String) -> Engine {
        Engine {
            url,
            child: None,
            http: reqwest::Client::new(),
            stdout: Default::default(),
        }
    }

    /// The lines the engine printed so far.
    pub fn stdout_lines(&self) -> Vec<String> {
        self.stdout.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The world digest of a tenant: changes iff a side effect happened.
    pub async fn digest(&self, tenant: &str) -> String {
        let v = self.state(tenant).await;
        v["digest"].as_str().expect("digest").to_string()
    }

    /// The runs the engine has made for `tenant` since its start.
    pub async fn runs(&self, tenant: &str) -> u64 {
        let state = self.state(tenant).await;
        state["runs"]
            .as_u64()
            .unwrap_or_else(|| panic!("no run count in {state}"))
    }

    pub async fn state(&self, tenant: &str) -> Value {
        self.admin(&format!("state?tenant={tenant}")).await
    }

    /// The JSON the engine's `GET /admin/<path>` answers.
    async fn admin(&self, path: &str) -> Value {
        self.http
            .get(format!("{}/admin/{path}", self.url))
            .send()
            .await
            .unwrap_or_else(|e| panic!("admin {path}: {e}"))
            .json()
            .await
            .unwrap_or_else(|e| panic!("admin {path} json: {e}"))
    }

    /// Tenant requests (catalog, check, run, ...) the engine received since
    /// its start or last reset.
    pub async fn requests(&self) -> u64 {
        let v = self.admin("requests").await;
        v["requests"].as_u64().expect("a count")
    }

    pub async fn reset(&self) {
        let r = self
            .http
            .post(format!("{}/admin/reset", self.url))
            .send()
            .await
            .expect("reset");
        assert!(r.status().is_success());
    }

    /// Edits a capability (globally, or for one tenant).
    pub async fn put_capability(&self, name: &str, body: &Value, tenant: Option<&str>) {
        let mut url = format!("{}/admin/capabilities/{name}", self.url);
        if let Some(t) = tenant {
            url.push_str(&format!("?tenant={t}"));
        }
        let r = self
            .http
            .put(url)
            .json(body)
            .send()
            .await
            .expect("put capability");
        assert!(r.status().is_success(), "put capability: {}", r.status());
    }

    /// The engine's own description of a capability as a tenant sees it, in
    /// the shape its admin `PUT` takes (the same in every dialect).
    pub async fn capability(&self, tenant: &str, name: &str) -> Value {
        let r = self
            .http
            .get(format!(
                "{}/admin/capabilities/{name}?tenant={tenant}",
                self.url
            ))
            .send()
            .await
            .expect("admin capability");
        assert!(
            r.status().is_success(),
            "capability {name} not visible to {tenant}: {}",
            r.status()
        );
        r.json().await.expect("admin capability json")
    }

    pub async fn faults(&self, body: Value) {
        let r = self
            .http
            .post(format!("{}/admin/faults", self.url))
            .json(&body)
            .send()
            .await
            .expect("faults");
        assert!(r.status().is_success());
    }
}

/// The engine dialect the suite runs against (`PILOTAGE_TEST_DIALECT=b` or
/// `c`; `None` is the default dialect a): the engine is started with
/// `--dialect X` and the gateway gets the engine mapping and rule file of
/// `deploy/gateway.dialect-X.toml`, configuration only.
pub fn dialect() -> Option<String> {
    std::env::var("PILOTAGE_TEST_DIALECT")
        .ok()
        .filter(|d| !d.is_empty() && d != "a")
}

/// A fresh engine speaking the dialect under test (see [`dialect`]).
pub fn dialect_engine() -> Engine {
    match dialect() {
        Some(d) => Engine::spawn(&["--dialect", &d]),
        None => Engine::spawn(&[]),
    }
}

pub fn apply_dialect(cfg: &mut Config, dialect: &str) {
    let path = repo_path(&format!("deploy/gateway.dialect-{dialect}.toml"));
    let text = std::fs::read_to_string(&path).expect("read the dialect's config");
    let other = Config::parse(&text, &path).expect("parse the dialect's config");
    let rules = other.resolve(&other.languages[0].classifier);
    cfg.engine.adapter = other.engine.adapter;
    for lang in &mut cfg.languages {
        lang.classifier = rules.display().to_string();
    }
}

/// One test environment: an engine and a gateway URL.
pub struct TestEnv {
    pub engine: Engine,
    pub url: String,
    pub gateway: Option<std::sync::Arc<pilotage_gateway::gateway::Gateway>>,
    pub external: bool,
    /// The configuration refuses anonymous callers: the suite's anonymous
    /// ones are visitors, a key each ([`shipped::next_visitor`]).
    pub visitors: bool,
    /// The Redis this gateway stores in, when the suite started it.
    _redis: Option<redis_server::RedisServer>,
}

pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

impl TestEnv {
    /// The feature configuration, or the shipped configuration that
    /// `PILOTAGE_TEST_SHIPPED` names (see [`shipped`]).
    pub async fn start() -> TestEnv {
        match shipped::selected() {
            Some(name) => match Self::external() {
                Some(mut env) => {
                    env.visitors = !shipped::Shipped::load(&name).config().auth.anonymous;
                    env
                }
                None => Self::shipped(&name).await,
            },
            None => Self::with_config(FEATURES, |_| {}).await,
        }
    }

    /// The deployment that `PILOTAGE_TEST_GATEWAY_URL` and
    /// `PILOTAGE_TEST_ENGINE_URL` name, if they do.
    fn external() -> Option<TestEnv> {
        let gateway = std::env::var("PILOTAGE_TEST_GATEWAY_URL").ok()?;
        let engine = std::env::var("PILOTAGE_TEST_ENGINE_URL").ok()?;
        Some(TestEnv {
            engine: Engine::external(engine),
            url: gateway,
            gateway: None,
            external: true,
            visitors: false,
            _redis: None,
        })
    }

    /// A gateway from the shipped `deploy/<name>.toml`, changed only as
    /// `tests/configs/<name>.toml` says (and the addresses of this run's
    /// engine and Redis), in front of a fresh engine of its dialect.
    pub async fn shipped(name: &str) -> TestEnv {
        let shipped = shipped::Shipped::load(name);
        let engine = match &shipped.dialect {
            Some(d) => Engine::spawn(&["--dialect", d]),
            None => Engine::spawn(&[]),
        };
        let mut cfg = shipped.config();
        cfg.engine.url = engine.url.clone();
        // A configuration that stores in Redis gets this run's server, or
        // one of its own.
        let mut redis = None;
        if !cfg.store.redis_url.is_empty() {
            cfg.store.redis_url = std::env::var("PILOTAGE_TEST_REDIS_URL").unwrap_or_else(|_| {
                let server = redis_server::RedisServer::start();
                let url = format!("redis://127.0.0.1:{}/0", server.port);
                redis = Some(server);
                url
            });
        }
        let visitors = !cfg.auth.anonymous;
        if visitors {
            cfg.auth.keys.extend(shipped::visitor_keys());
        }
        let mut env = Self::serve(engine, cfg).await;
        env.visitors = visitors;
        env._redis = redis;
        env
    }

    /// A gateway from `config` (relative to the repository) in front of a
    /// fresh engine; `tweak` may change the loaded configuration.
    pub async fn with_config(config: &str, tweak: impl FnOnce(&mut Config)) -> TestEnv {
        if config == FEATURES
            && let Some(env) = Self::external()
        {
            return env;
        }
        let engine = match dialect() {
            Some(d) => Engine::spawn(&["--dialect", &d]),
            None => Engine::spawn(&[]),
        };
        Self::in_front_of(engine, config, tweak).await
    }

    /// A gateway from `config` in front of an already started engine.
    pub async fn in_front_of(
        engine: Engine,
        config: &str,
        tweak: impl FnOnce(&mut Config),
    ) -> TestEnv {
        let path = repo_path(config);
        let text = std::fs::read_to_string(&path).expect("read test config");
        let mut cfg = Config::parse(&text, &path).expect("parse test config");
        cfg.engine.url = engine.url.clone();
        if let Some(d) = dialect() {
            apply_dialect(&mut cfg, &d);
        }
        if let Ok(redis) = std::env::var("PILOTAGE_TEST_REDIS_URL") {
            cfg.store.redis_url = redis;
        }
        tweak(&mut cfg);
        Self::serve(engine, cfg).await
    }

    /// Serves `cfg` (checked as at start) on a free loopback port.
    async fn serve(engine: Engine, cfg: Config) -> TestEnv {
        let problems = cfg.validate();
        assert!(problems.is_empty(), "test config invalid: {problems:?}");
        let app = pilotage_gateway::app::build(cfg)
            .await
            .expect("build gateway");
        let gateway = app.gateway.clone();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            // The app (with its file watcher) lives as long as the server.
            let router = app.router.clone();
            let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
            let _ = axum::serve(listener, service).await;
            drop(app);
        });
        TestEnv {
            engine,
            url,
            gateway: Some(gateway),
            external: false,
            visitors: false,
            _redis: None,
        }
    }

    /// An anonymous client (no key), or a visitor where the configuration
    /// refuses anonymous callers.
    pub fn anonymous(&self) -> Mcp {
        let visitor = self.visitors.then(shipped::next_visitor);
        Mcp::new(&self.url, visitor.as_deref())
    }

    /// A client with an API key.
    pub fn client(&self, key: &str) -> Mcp {
        Mcp::new(&self.url, Some(key))
    }
}

/// The answer of one tools/call.
#[derive(Debug, Clone)]
pub struct CallResult {
    pub raw: Value,
    pub structured: Value,
    pub is_error: bool,
    pub text: String,
}

/// A minimal JSON-RPC-over-HTTP MCP client (the suite's own eyes on the wire).
pub struct Mcp {
    pub url: String,
    key: Option<String>,
    pub session: Option<String>,
    pub protocol: String,
    http: reqwest::Client,
    next_id: std::sync::atomic::AtomicU64,
}

impl Mcp {
    pub fn new(url: &str, key: Option<&str>) -> Mcp {
        Mcp {
            url: url.to_string(),
            key: key.map(str::to_string),
            session: None,
            protocol: "2025-11-25".into(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("http client"),
            next_id: std::sync::atomic::AtomicU64::new(1),
        }
    }

    /// Like [`Mcp::new`], over `http` (e.g. a client trusting a test CA).
    pub fn with_http(url: &str, key: Option<&str>, http: reqwest::Client) -> Mcp {
        let mut client = Mcp::new(url, key);
        client.http = http;
        client
    }

    fn request(&self, body: String) -> reqwest::RequestBuilder {
        let mut r = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", &self.protocol)
            .body(body);
        if let Some(k) = &self.key {
            r = r.bearer_auth(k);
        }
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s);
        }
        r
    }

    /// POSTs a raw body; returns (HTTP status, headers, parsed JSON or Null).
    pub async fn raw(&self, body: &str) -> (u16, reqwest::header::HeaderMap, Value) {
        let resp = self
            .request(body.to_string())
            .send()
            .await
            .expect("POST /mcp");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let value = parse_body(&text);
        (status, headers, value)
    }

    /// A JSON-RPC request; returns the whole response object.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, _, value) = self.raw(&body.to_string()).await;
        assert!(
            status == 200 || value.get("error").is_some(),
            "{method}: HTTP {status}: {value}"
        );
        value
    }

    /// initialize + notifications/initialized; keeps the session id.
    pub async fn initialize(&mut self) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.protocol,
            "capabilities": {"extensions": {"io.github.jafarsa0/pilotage": {}}},
            "clientInfo": {"name": "pilotage-test", "version": "1"}}});
        let (status, headers, value) = self.raw(&body.to_string()).await;
        assert_eq!(status, 200, "initialize: {value}");
        self.session = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        assert!(
            self.session.is_some(),
            "initialize issued no Mcp-Session-Id"
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, _) = self.raw(&note.to_string()).await;
        assert!(status < 300, "initialized notification: HTTP {status}");
        value["result"].clone()
    }

    pub async fn list_tools(&self) -> Vec<Value> {
        let r = self.rpc("tools/list", json!({})).await;
        r["result"]["tools"].as_array().cloned().unwrap_or_default()
    }

    /// tools/call; panics on a JSON-RPC error (use `rpc` to observe those).
    pub async fn call(&self, tool: &str, args: Value) -> CallResult {
        let r = self
            .rpc("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        assert!(r.get("error").is_none(), "{tool}: carrier error {r}");
        let result = &r["result"];
        let structured = result["structuredContent"].clone();
        assert!(
            structured.is_object(),
            "{tool}: no structuredContent in {r}"
        );
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let call = CallResult {
            raw: r.clone(),
            is_error: result["isError"].as_bool().unwrap_or(false),
            structured,
            text,
        };
        check_tool_output(tool, &call.structured);
        call
    }
}

fn parse_body(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str(text) {
        return v;
    }
    // An SSE-framed answer: take the last data line.
    text.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| serde_json::from_str(d.trim()).ok())
        .unwrap_or(Value::Null)
}

/// The official schema, when present.
pub fn official_schema() -> Option<&'static Value> {
    static SCHEMA: OnceLock<Option<Value>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let path = std::env::var("PILOTAGE_SCHEMA")
                .map(PathBuf::from)
                .unwrap_or_else(|_| repo_path("../shared/pilotage/pilotage.schema.json"));
            let text = std::fs::read_to_string(path).ok()?;
            serde_json::from_str(&text).ok()
        })
        .as_ref()
}

/// Asserts `value` validates against `$defs[name]` of the official schema
/// (when the schema is available; CI always has it).
pub fn assert_shape(value: &Value, name: &str) {
    let Some(schema) = official_schema() else {
        return;
    };
    let mut root = schema.clone();
    root["$ref"] = json!(format!("#/$defs/{name}"));
    if let Some(obj) = root.as_object_mut() {
        obj.remove("$id");
    }
    let validator = jsonschema::validator_for(&root).expect("official schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "not a valid {name}: {errors:?}\n{value}");
}

/// Every tool answer is checked against its tool's output union.
fn check_tool_output(tool: &str, structured: &Value) {
    let shape = match tool {
        "pilotage_manifest" => "ManifestToolOutput",
        "pilotage_get_guide" => "GetGuideToolOutput",
        "pilotage_catalog" => "CatalogToolOutput",
        t if t.starts_with("validate_") => "ValidateToolOutput",
        t if t.starts_with("run_") => "ExecuteToolOutput",
        t if t.starts_with("trace_") => "TraceToolOutput",
        _ => return,
    };
    assert_shape(structured, shape);
}

/// A small valid program for tenant acme: read a customer, echo its name.
pub fn valid_program() -> Value {
    json!({"name": "greet", "input": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        "steps": [
        {"id": "get", "kind": "call", "capability": "crm.get_customer", "with": {"id": "$.input.id"}},
        {"id": "echo", "kind": "call", "capability": "util.echo", "with": {"value": "$.steps.get.output.name"}}
    ], "output": {"name": "$.steps.echo.output.value"}})
}

/// A program with a write: set a tier.
pub fn write_program(tier: &str) -> Value {
    json!({"steps": [
        {"id": "set", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_3", "tier": tier}}
    ], "output": {"tier": "$.steps.set.output.tier"}})
}

/// A program nested `depth` branches deep (each level adds three JSON levels).
pub fn nested(depth: usize) -> Value {
    let mut inner = json!([{"id": "leaf", "kind": "set", "value": 1}]);
    for i in 0..depth {
        inner = json!([{"id": format!("b{i}"), "kind": "branch",
            "when": {"op": "eq", "left": 1, "right": 1}, "then": inner}]);
    }
    json!({"steps": inner})
}
