//! Test helpers: start the real `legacy-engine` binary on a free port, wait for its
//! "listening on" line, and talk JSON to it over HTTP. The process is killed when
//! the handle drops, so every test gets a fresh, isolated engine.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use reqwest::StatusCode;
use serde_json::{Value, json};

pub struct Engine {
    child: Child,
    pub base: String,
    pub client: reqwest::Client,
}

impl Engine {
    /// Dialect a with the shipped seed.
    pub fn start() -> Self {
        Self::start_with(&[], &[])
    }

    /// Dialect b with the shipped seed.
    pub fn start_b() -> Self {
        Self::start_with(&["--dialect", "b"], &[])
    }

    /// Any extra arguments and environment variables.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_legacy-engine"));
        for var in [
            "LEGACY_ENGINE_LISTEN",
            "LEGACY_ENGINE_SEED",
            "LEGACY_ENGINE_DIALECT",
        ] {
            command.env_remove(var);
        }
        command.envs(env.iter().copied());
        command.arg("--listen").arg("127.0.0.1:0").args(args);
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the engine binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reads the first line");
        let base = line
            .trim()
            .strip_prefix("legacy-engine listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_owned();
        Engine {
            child,
            base,
            client: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET with an optional tenant header (`X-Tenant`), returning status and JSON.
    pub async fn get(&self, path: &str, tenant: Option<&str>) -> (StatusCode, Value) {
        self.get_with(path, tenant.map(|t| ("X-Tenant", t))).await
    }

    pub async fn get_with(&self, path: &str, header: Option<(&str, &str)>) -> (StatusCode, Value) {
        let mut request = self.client.get(self.url(path));
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        decode(request.send().await.expect("request is sent")).await
    }

    /// POST a JSON body with an optional `X-Tenant` header.
    pub async fn post(
        &self,
        path: &str,
        tenant: Option<&str>,
        body: &Value,
    ) -> (StatusCode, Value) {
        self.post_with(path, tenant.map(|t| ("X-Tenant", t)), body)
            .await
    }

    pub async fn post_with(
        &self,
        path: &str,
        header: Option<(&str, &str)>,
        body: &Value,
    ) -> (StatusCode, Value) {
        self.post_raw(path, header, body.to_string()).await
    }

    pub async fn post_raw(
        &self,
        path: &str,
        header: Option<(&str, &str)>,
        body: String,
    ) -> (StatusCode, Value) {
        let mut request = self.client.post(self.url(path)).body(body);
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        decode(request.send().await.expect("request is sent")).await
    }

    /// `check` as `tenant`; returns the answer body (status must be 200).
    pub async fn check(&self, tenant: &str, workflow: Value) -> Value {
        let (status, body) = self
            .post(
                "/api/v1/workflows/check",
                Some(tenant),
                &json!({ "workflow": workflow }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// `run` as `tenant` with the full request body; returns the answer body.
    pub async fn run(&self, tenant: &str, request: Value) -> Value {
        let (status, body) = self
            .post("/api/v1/workflows/run", Some(tenant), &request)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// `GET /admin/state?tenant=...`
    pub async fn state(&self, tenant: &str) -> Value {
        let (status, body) = self
            .get(&format!("/admin/state?tenant={tenant}"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    pub async fn digest(&self, tenant: &str) -> String {
        self.state(tenant).await["digest"]
            .as_str()
            .expect("digest")
            .to_owned()
    }

    pub async fn faults(&self, faults: Value) {
        let (status, body) = self.post("/admin/faults", None, &faults).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn decode(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.expect("body is read");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body)
}

/// A call step.
pub fn call(id: &str, capability: &str, with: Value) -> Value {
    json!({"id": id, "kind": "call", "capability": capability, "with": with})
}

/// A set step.
pub fn set(id: &str, value: Value) -> Value {
    json!({"id": id, "kind": "set", "value": value})
}

/// The `type` (dialect a) of every event.
pub fn types(events: &Value) -> Vec<String> {
    events
        .as_array()
        .expect("events list")
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}

pub mod cases;
pub mod shapes;
