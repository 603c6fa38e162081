//! n8n for the `n8n/v1` suites: where it runs, a gateway built from
//! `deploy/gateway.n8n.toml` in front of it (and of a real `legacy-engine`
//! for `workflow/v1`), and a direct client of n8n's public API that looks at
//! n8n behind the gateway's back (what a tenant's n8n project holds).
//!
//! n8n is found through `PILOTAGE_N8N_URL`; without it, through
//! `scripts/n8n url`, and when that finds none, `scripts/n8n start` starts
//! the repository's own (it stays up for the next test binaries;
//! `scripts/test` stops it at the end, `scripts/n8n stop` by hand). The
//! n8n users' secrets are those `scripts/n8n` wrote under
//! `PILOTAGE_N8N_HOME` (default `target/n8n`): `tenants/alpha` and
//! `tenants/beta`.
//!
//! Every environment gets gateway tenants of its own (random names), each
//! a folder of a fresh `tenants_dir` holding a copy of one n8n user's
//! secrets: keyed caller a and the anonymous callers act as n8n user
//! alpha, keyed caller b as beta, so runs stored by one test never meet
//! another's while n8n keeps only the users `scripts/n8n` made. Because
//! tests share those users, and some compare what a user's n8n project
//! holds before and after, the environments of one test binary are held one
//! at a time.

use super::{Engine, TestEnv, engine_env, engine_env::EngineEnv, ports::rand_suffix, repo_path};
use pilotage_gateway::config::{ApiKeyConfig, Config};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The configuration the suites build their gateway from.
pub const CONFIG: &str = "deploy/gateway.n8n.toml";
/// The language and its tools in that configuration.
pub const N8N: &str = "n8n/v1";
pub const VALIDATE: &str = "validate_n8n_workflow";
pub const EXECUTE: &str = "run_n8n_workflow";
pub const TRACE: &str = "trace_n8n_workflow";
/// The name of n8n's engine table in that configuration, and of the
/// adapter's own table inside it.
pub const ENGINE: &str = "n8n";
pub const ADAPTER_TABLE: &str = "n8n";

/// Where `scripts/n8n` keeps n8n, its users and their secrets.
pub fn n8n_home() -> PathBuf {
    match std::env::var("PILOTAGE_N8N_HOME") {
        Ok(home) if !home.trim().is_empty() => PathBuf::from(home.trim()),
        _ => repo_path("target/n8n"),
    }
}

/// n8n's base URL (`http://127.0.0.1:PORT`), found or started once per test
/// binary.
pub fn n8n_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let home = n8n_home();
        engine_env::find_or_start("PILOTAGE_N8N_URL", "n8n", &[("PILOTAGE_N8N_HOME", &home)])
    })
    .clone()
}

/// A direct client of n8n's public API, with one user's API key a call.
#[derive(Clone)]
pub struct N8n {
    pub base: String,
    http: reqwest::Client,
}

impl N8n {
    pub fn new(base: &str) -> N8n {
        N8n {
            base: base.to_string(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("http client"),
        }
    }

    /// `GET /api/v1{path}` with `key`: (status, JSON body or Null).
    pub async fn get(&self, path: &str, key: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}/api/v1{path}", self.base))
            .header("X-N8N-API-KEY", key)
            .header("Accept", "application/json")
            .send()
            .await
            .expect("GET from n8n");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// `POST /api/v1/workflows` with `key`: n8n's own answer to a workflow
    /// created behind the gateway's back, (status, JSON body or Null).
    pub async fn create_workflow(&self, doc: &Value, key: &str) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}/api/v1/workflows", self.base))
            .header("X-N8N-API-KEY", key)
            .json(doc)
            .send()
            .await
            .expect("POST to n8n");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// `DELETE /api/v1{path}` with `key`: its status.
    pub async fn delete(&self, path: &str, key: &str) -> u16 {
        self.http
            .delete(format!("{}/api/v1{path}", self.base))
            .header("X-N8N-API-KEY", key)
            .send()
            .await
            .expect("DELETE from n8n")
            .status()
            .as_u16()
    }

    /// The workflows the key's user may see (one page of 250).
    pub async fn workflows(&self, key: &str) -> Vec<Value> {
        let (status, body) = self.get("/workflows?limit=250", key).await;
        assert_eq!(status, 200, "list workflows: {body}");
        body["data"].as_array().cloned().unwrap_or_default()
    }

    /// The executions the key's user may see (one page of 250).
    pub async fn executions(&self, key: &str) -> Vec<Value> {
        let (status, body) = self.get("/executions?limit=250", key).await;
        assert_eq!(status, 200, "list executions: {body}");
        body["data"].as_array().cloned().unwrap_or_default()
    }

    /// The names of the workflows a run of the gateway created
    /// (`pilotage-<digest>`) that the key's user still has.
    pub async fn gateway_workflows(&self, key: &str) -> Vec<String> {
        self.workflows(key)
            .await
            .iter()
            .filter_map(|w| w["name"].as_str())
            .filter(|n| n.starts_with("pilotage-"))
            .map(str::to_string)
            .collect()
    }
}

/// A caller of the suite's gateway: its bearer key, the gateway tenant it
/// acts in, and the API key of the n8n user behind that tenant.
#[derive(Clone, Debug)]
pub struct Caller {
    pub key: String,
    pub tenant: String,
    pub n8n_key: String,
}

/// A gateway serving `workflow/v1` (legacy engine) and `n8n/v1` (n8n), with
/// two keyed tenants and an anonymous one of its own.
pub struct N8nEnv {
    pub env: TestEnv,
    pub n8n: N8n,
    pub a: Caller,
    pub b: Caller,
    /// The anonymous callers' tenant (n8n user alpha).
    pub anonymous: String,
    /// The environment's own folder of tenant secrets.
    pub tenants_dir: PathBuf,
    /// Held while the environment lives: one at a time per test binary.
    _turn: OwnedMutexGuard<()>,
}

/// The turn of one user of n8n among the tests of this test binary (an
/// environment, or a test of the adapter itself): each checks that nothing
/// is left behind in a tenant, which another's run in flight would break.
pub async fn turn() -> OwnedMutexGuard<()> {
    static TURN: OnceLock<Arc<Mutex<()>>> = OnceLock::new();
    TURN.get_or_init(|| Arc::new(Mutex::new(())))
        .clone()
        .lock_owned()
        .await
}

fn key_entry(name: &str, caller: &Caller) -> ApiKeyConfig {
    engine_env::key_entry(name, &caller.tenant, &caller.key)
}

/// Copies n8n user `user`'s secrets (`api-key`, `user.json`) into
/// `dir/tenant`; the user's API key.
fn tenant_folder(dir: &Path, tenant: &str, user: &str) -> String {
    let from = n8n_home().join("tenants").join(user);
    let to = dir.join(tenant);
    std::fs::create_dir_all(&to).expect("a tenant folder");
    for file in ["api-key", "user.json"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (scripts/n8n start writes it)",
                from.join(file).display()
            )
        });
    }
    std::fs::read_to_string(to.join("api-key"))
        .expect("the api-key just copied")
        .trim()
        .to_string()
}

impl N8nEnv {
    pub async fn start() -> N8nEnv {
        Self::start_with(|_| {}).await
    }

    /// The suite's environment; `tweak` may change the configuration after
    /// the suite has pointed it at n8n and its tenants.
    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> N8nEnv {
        let turn = turn().await;
        let url = n8n_url();
        let tag = format!("{:012x}", rand_suffix() & 0xffff_ffff_ffff);
        let tenants_dir = std::env::temp_dir().join(format!("pilotage-n8n-{tag}"));
        let caller = |who: &str, user: &str| {
            let tenant = format!("pt-{tag}-{who}");
            let n8n_key = tenant_folder(&tenants_dir, &tenant, user);
            Caller {
                key: format!("{who}-key-{tag}"),
                tenant,
                n8n_key,
            }
        };
        let (a, b) = (caller("a", "alpha"), caller("b", "beta"));
        let anonymous = format!("pt-{tag}-anon");
        tenant_folder(&tenants_dir, &anonymous, "alpha");
        let (ka, kb, anon) = (key_entry("a", &a), key_entry("b", &b), anonymous.clone());
        let (n8n_url, dir) = (url.clone(), tenants_dir.clone());
        let env = TestEnv::in_front_of(Engine::spawn(&[]), CONFIG, move |cfg| {
            let engine = cfg
                .engines
                .get_mut(ENGINE)
                .expect("the configuration has [engines.n8n]");
            engine.url = n8n_url;
            if let Some(table) = engine
                .adapter
                .get_mut(ADAPTER_TABLE)
                .and_then(toml::Value::as_table_mut)
            {
                table.insert(
                    "tenants_dir".into(),
                    toml::Value::String(dir.display().to_string()),
                );
            }
            cfg.auth.keys = vec![ka, kb];
            cfg.auth.anonymous = true;
            cfg.auth.anonymous_tenant = anon;
            // The suites call faster than a person would.
            cfg.limits.anonymous = Default::default();
            tweak(cfg);
        })
        .await;
        N8nEnv {
            env,
            n8n: N8n::new(&url),
            a,
            b,
            anonymous,
            tenants_dir,
            _turn: turn,
        }
    }

    /// An initialized session of a keyed caller.
    pub async fn session(&self, caller: &Caller) -> super::Mcp {
        engine_env::session(&self.env, &caller.key).await
    }

    /// An initialized anonymous session.
    pub async fn anonymous_session(&self) -> super::Mcp {
        super::answers::anonymous_session(&self.env).await
    }
}

impl EngineEnv for N8nEnv {
    const LANGUAGE: &'static str = N8N;
    const VALIDATE: &'static str = VALIDATE;
    const EXECUTE: &'static str = EXECUTE;
    const TRACE: &'static str = TRACE;
    const ENGINE: &'static str = ENGINE;

    async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self {
        N8nEnv::start_with(tweak).await
    }

    fn gateway(&self) -> &TestEnv {
        &self.env
    }

    fn keys(&self) -> [&str; 2] {
        [&self.a.key, &self.b.key]
    }
}

impl Drop for N8nEnv {
    fn drop(&mut self) {
        // Copies of secrets: never left behind.
        let _ = std::fs::remove_dir_all(&self.tenants_dir);
    }
}

/// validate through the gateway.
pub async fn validate(c: &super::Mcp, program: &Value) -> super::CallResult {
    c.call(VALIDATE, json!({"workflow": program})).await
}

/// execute through the gateway: `mode` immediate, plus `extra` members.
pub async fn run(c: &super::Mcp, program: &Value, extra: Value) -> super::CallResult {
    engine_env::execute(c, EXECUTE, program.clone(), extra).await
}

/// A node of the suites' programs.
pub fn node(name: &str, node_type: &str, version: f64, x: i64, parameters: Value) -> Value {
    json!({"id": format!("id-{name}"), "name": name,
           "type": format!("n8n-nodes-base.{node_type}"), "typeVersion": version,
           "position": [x, 0], "parameters": parameters})
}

/// `connections` for a chain of nodes, each to the next on output 0.
pub fn chain(names: &[&str]) -> Value {
    let mut out = serde_json::Map::new();
    for pair in names.windows(2) {
        out.insert(
            pair[0].to_string(),
            json!({"main": [[{"node": pair[1], "type": "main", "index": 0}]]}),
        );
    }
    Value::Object(out)
}

/// A workflow document of `nodes` and `connections`.
pub fn workflow(name: &str, nodes: Vec<Value>, connections: Value) -> Value {
    json!({"name": name, "nodes": nodes, "connections": connections,
           "settings": {"executionOrder": "v1"}})
}

/// A Set node (typeVersion 3.4) making the given string fields.
pub fn set_node(name: &str, x: i64, fields: &[(&str, &str)]) -> Value {
    let assignments: Vec<Value> = fields
        .iter()
        .enumerate()
        .map(|(i, (field, value))| {
            json!({"id": format!("{name}-{i}"), "name": field, "value": value, "type": "string"})
        })
        .collect();
    node(
        name,
        "set",
        3.4,
        x,
        json!({"mode": "manual", "options": {},
               "assignments": {"assignments": assignments}}),
    )
}

pub fn manual_trigger() -> Value {
    node("Start", "manualTrigger", 1.0, 0, json!({}))
}

/// The workflow's input declared by an Execute Workflow Trigger: one
/// string field `name`.
pub fn input_trigger() -> Value {
    node(
        "Start",
        "executeWorkflowTrigger",
        1.1,
        0,
        json!({"inputSource": "workflowInputs",
               "workflowInputs": {"values": [{"name": "name", "type": "string"}]}}),
    )
}

/// A program with an input `name`: `[{"greeting": "hello NAME"}]`.
pub fn greet_program() -> Value {
    workflow(
        "greet",
        vec![
            input_trigger(),
            set_node("Greet", 240, &[("greeting", "=hello {{ $json.name }}")]),
        ],
        chain(&["Start", "Greet"]),
    )
}

/// A program without input: one item `{"said": TEXT}`.
pub fn say_program(text: &str) -> Value {
    workflow(
        "say",
        vec![manual_trigger(), set_node("Say", 240, &[("said", text)])],
        chain(&["Start", "Say"]),
    )
}
