//! OpenStack Mistral for the `mistral/v2` suites: where it runs, a gateway
//! built from `deploy/gateway.mistral.toml` in front of it (and of a real
//! `legacy-engine` for `workflow/v1`), and a direct REST client that looks at
//! Mistral behind the gateway's back (what ran, in which project).
//!
//! Mistral is found through `PILOTAGE_MISTRAL_URL`; without it, through
//! `scripts/mistral url`, and when that finds none, `scripts/mistral start`
//! starts the repository's own (it stays up for the next test binaries;
//! `scripts/test` stops it at the end, `scripts/mistral stop` by hand).
//!
//! Every environment gets tenants of its own (random names), so Mistral
//! projects never meet those of another test or of anyone else using the
//! same Mistral.

use super::{Engine, TestEnv, engine_env, engine_env::EngineEnv, ports::rand_suffix};
use pilotage_gateway::config::{ApiKeyConfig, Config};
use serde_json::{Value, json};
use std::sync::OnceLock;
use std::time::Duration;

/// The configuration the suites build their gateway from.
pub const CONFIG: &str = "deploy/gateway.mistral.toml";
/// The language and its tools in that configuration.
pub const MISTRAL: &str = "mistral/v2";
pub const VALIDATE: &str = "validate_mistral_workflow";
pub const EXECUTE: &str = "run_mistral_workflow";
pub const TRACE: &str = "trace_mistral_workflow";
/// The name of Mistral's engine table in that configuration.
pub const ENGINE: &str = "mistral";

/// Mistral's API base URL (`http://127.0.0.1:PORT/v2`), found or started once
/// per test binary.
pub fn mistral_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| engine_env::find_or_start("PILOTAGE_MISTRAL_URL", "mistral", &[]))
        .clone()
}

/// A direct client of Mistral's REST API, one project at a time.
#[derive(Clone)]
pub struct Mistral {
    pub base: String,
    http: reqwest::Client,
}

impl Mistral {
    pub fn new(base: &str) -> Mistral {
        Mistral {
            base: base.to_string(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                // Mistral closes connections idle for 10 s without a word.
                .pool_idle_timeout(Duration::from_secs(5))
                .build()
                .expect("http client"),
        }
    }

    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        project: &str,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("X-Project-Id", project)
            .header("Accept", "*/*")
    }

    /// `GET path` in `project`: (status, JSON body or Null).
    pub async fn get(&self, path: &str, project: &str) -> (u16, Value) {
        let r = self
            .request(reqwest::Method::GET, path, project)
            .send()
            .await
            .expect("GET from Mistral");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// Every execution of `project` (bounded: one page of 1000).
    pub async fn executions(&self, project: &str) -> Vec<Value> {
        let (status, body) = self.get("/executions?limit=1000", project).await;
        assert_eq!(status, 200, "list executions of {project}: {body}");
        body["executions"].as_array().cloned().unwrap_or_default()
    }

    /// Every workflow of `project`.
    pub async fn workflows(&self, project: &str) -> Vec<Value> {
        let (status, body) = self.get("/workflows?limit=1000", project).await;
        assert_eq!(status, 200, "list workflows of {project}: {body}");
        body["workflows"].as_array().cloned().unwrap_or_default()
    }

    /// Creates (or, with `update`, replaces) an ad-hoc action of `project`
    /// from its YAML definition.
    pub async fn put_action(&self, project: &str, yaml: &str, update: bool) {
        let method = if update {
            reqwest::Method::PUT
        } else {
            reqwest::Method::POST
        };
        let r = self
            .request(method, "/actions", project)
            .header("Content-Type", "text/plain")
            .body(yaml.to_string())
            .send()
            .await
            .expect("write an ad-hoc action");
        let status = r.status().as_u16();
        let body = r.text().await.unwrap_or_default();
        assert!(
            status == 200 || status == 201,
            "action: HTTP {status}: {body}"
        );
    }

    /// Deletes what a project holds (best effort; the project name is never
    /// reused anyway).
    pub async fn clean(&self, project: &str) {
        for ex in self.executions(project).await {
            if let Some(id) = ex["id"].as_str() {
                let _ = self
                    .request(
                        reqwest::Method::DELETE,
                        &format!("/executions/{id}"),
                        project,
                    )
                    .send()
                    .await;
            }
        }
    }
}

/// A caller of the suite's gateway: its bearer key and the tenant (= the
/// Mistral project) it acts in.
#[derive(Clone, Debug)]
pub struct Caller {
    pub key: String,
    pub tenant: String,
}

/// A gateway serving `workflow/v1` (legacy engine) and `mistral/v2`
/// (Mistral), with two keyed tenants and an anonymous one of its own.
pub struct MistralEnv {
    pub env: TestEnv,
    pub mistral: Mistral,
    pub a: Caller,
    pub b: Caller,
    /// The anonymous callers' tenant.
    pub anonymous: String,
}

fn key_entry(name: &str, caller: &Caller) -> ApiKeyConfig {
    engine_env::key_entry(name, &caller.tenant, &caller.key)
}

impl MistralEnv {
    pub async fn start() -> MistralEnv {
        Self::start_with(|_| {}).await
    }

    /// The suite's environment; `tweak` may change the configuration after
    /// the suite has pointed it at its engines and tenants.
    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> MistralEnv {
        let url = mistral_url();
        let tag = format!("{:012x}", rand_suffix() & 0xffff_ffff_ffff);
        let caller = |who: &str| Caller {
            key: format!("{who}-key-{tag}"),
            tenant: format!("pt-{tag}-{who}"),
        };
        let (a, b) = (caller("a"), caller("b"));
        let anonymous = format!("pt-{tag}-anon");
        let (ka, kb, anon) = (key_entry("a", &a), key_entry("b", &b), anonymous.clone());
        let mistral_url = url.clone();
        let env = TestEnv::in_front_of(Engine::spawn(&[]), CONFIG, move |cfg| {
            cfg.engines
                .get_mut(ENGINE)
                .expect("the configuration has [engines.mistral]")
                .url = mistral_url;
            cfg.auth.keys = vec![ka, kb];
            cfg.auth.anonymous_tenant = anon;
            // The suites call faster than a person would.
            cfg.limits.anonymous = Default::default();
            tweak(cfg);
        })
        .await;
        MistralEnv {
            env,
            mistral: Mistral::new(&url),
            a,
            b,
            anonymous,
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

    /// Removes the executions the suite left in its projects.
    pub async fn clean(&self) {
        for project in [&self.a.tenant, &self.b.tenant, &self.anonymous] {
            self.mistral.clean(project).await;
        }
    }
}

impl EngineEnv for MistralEnv {
    const LANGUAGE: &'static str = MISTRAL;
    const VALIDATE: &'static str = VALIDATE;
    const EXECUTE: &'static str = EXECUTE;
    const TRACE: &'static str = TRACE;
    const ENGINE: &'static str = ENGINE;

    async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self {
        MistralEnv::start_with(tweak).await
    }

    fn gateway(&self) -> &TestEnv {
        &self.env
    }

    fn keys(&self) -> [&str; 2] {
        [&self.a.key, &self.b.key]
    }
}

/// validate through the gateway.
pub async fn validate(c: &super::Mcp, program: &str) -> super::CallResult {
    c.call(VALIDATE, json!({"workflow": program})).await
}

/// execute through the gateway: `mode` immediate, plus `extra` members.
pub async fn run(c: &super::Mcp, program: &str, extra: Value) -> super::CallResult {
    engine_env::execute(c, EXECUTE, json!(program), extra).await
}

/// A one-task program that echoes `text`.
pub fn echo_program(name: &str, text: &str) -> String {
    format!(
        "version: '2.0'\n{name}:\n  output:\n    said: <% $.said %>\n  tasks:\n    say:\n      action: std.echo output=\"{text}\"\n      publish:\n        said: <% task().result %>\n"
    )
}

/// The workflow `name`: a task `write` that echoes, then on its success the
/// task `then` calling `action`.
pub fn write_then(name: &str, then: &str, action: &str) -> String {
    format!(
        "version: '2.0'\n{name}:\n  tasks:\n    write:\n      action: std.echo output='written'\n      on-success:\n        - {then}\n    {then}:\n      action: {action}\n"
    )
}

/// A program with a required input `name`: `hello NAME`.
pub fn greet_program() -> String {
    "version: '2.0'\ngreet:\n  input:\n    - name\n  output:\n    greeting: <% $.greeting %>\n  tasks:\n    hello:\n      action: std.echo output=\"hello <% $.name %>\"\n      publish:\n        greeting: <% task().result %>\n".to_string()
}
