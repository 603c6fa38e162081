//! What the suites of every language bound to a third-party engine
//! (`mistral`, `n8n_gateway`) share: the environment every such suite
//! starts ([`EngineEnv`]: a gateway in front of the engine, its language's
//! tools, two keyed tenants and an anonymous one); finding the engine, or
//! starting it through its script; a caller's API-key entry; sessions; the
//! execute call.

use super::{CallResult, Mcp, TestEnv, repo_path};
use pilotage_gateway::config::{ApiKeyConfig, Config};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;

/// A gateway serving one engine-bound language in front of its real engine,
/// with keyed callers a and b (two tenants) and anonymous callers (a third).
#[allow(async_fn_in_trait)]
pub trait EngineEnv: Sized {
    /// The language's name in the manifest, and its loop's tools.
    const LANGUAGE: &'static str;
    const VALIDATE: &'static str;
    const EXECUTE: &'static str;
    const TRACE: &'static str;
    /// The name of the engine's table in the configuration.
    const ENGINE: &'static str;

    /// The environment; `tweak` may change the configuration after it points
    /// at the engine and the tenants.
    async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self;
    /// The environment as the suite configures it.
    async fn start() -> Self {
        Self::start_with(|_| {}).await
    }
    /// The gateway.
    fn gateway(&self) -> &TestEnv;
    /// The bearer keys of the keyed callers a and b.
    fn keys(&self) -> [&str; 2];

    /// Whether the gateway has no run in flight within `within` (a run ends
    /// once the engine's answer is read and what it created is cleaned up).
    async fn runs_settled(&self, within: std::time::Duration) -> bool {
        let gateway = self
            .gateway()
            .gateway
            .as_ref()
            .expect("an in-process gateway");
        let until = std::time::Instant::now() + within;
        while gateway.metrics.runs_in_flight.get() > 0 {
            if std::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        true
    }

    /// An initialized session of keyed caller a.
    async fn caller_a(&self) -> Mcp {
        session(self.gateway(), self.keys()[0]).await
    }

    /// An initialized session of keyed caller b.
    async fn caller_b(&self) -> Mcp {
        session(self.gateway(), self.keys()[1]).await
    }

    /// An initialized anonymous session.
    async fn anonymous_caller(&self) -> Mcp {
        super::answers::anonymous_session(self.gateway()).await
    }
}

/// The engine's base URL: the environment variable `var` when set; else
/// what `scripts/<script> url` prints; else the last line of
/// `scripts/<script> start` (the engine then stays up for the next test
/// binaries). `envs` are handed to the script.
pub fn find_or_start(var: &str, script: &str, envs: &[(&str, &Path)]) -> String {
    if let Ok(url) = std::env::var(var)
        && !url.trim().is_empty()
    {
        return url.trim().trim_end_matches('/').to_string();
    }
    let path = repo_path(&format!("scripts/{script}"));
    let command = |verb: &str| {
        let mut c = Command::new(&path);
        c.arg(verb);
        for (k, v) in envs {
            c.env(k, v);
        }
        c.output()
    };
    if let Ok(out) = command("url")
        && out.status.success()
    {
        return String::from_utf8_lossy(&out.stdout).trim().to_string();
    }
    let out = command("start").unwrap_or_else(|e| panic!("run scripts/{script} start: {e}"));
    assert!(
        out.status.success(),
        "scripts/{script} start failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_else(|| panic!("scripts/{script} start printed the URL"))
        .trim()
        .to_string()
}

/// The `[[auth.keys]]` entry of a caller with bearer `key` in `tenant`.
pub fn key_entry(name: &str, tenant: &str, key: &str) -> ApiKeyConfig {
    ApiKeyConfig {
        name: name.to_string(),
        tenant: tenant.to_string(),
        sha256: hex::encode(Sha256::digest(key.as_bytes())),
        permissions: None,
        max_risk: None,
        forbid_risk_hints: Vec::new(),
        approve_above: None,
    }
}

/// An initialized session of the caller with bearer `key`.
pub async fn session(env: &TestEnv, key: &str) -> Mcp {
    let mut c = env.client(key);
    c.initialize().await;
    c
}

/// The execute tool `tool` on `program`: `mode` immediate, plus `extra`'s
/// members.
pub async fn execute(c: &Mcp, tool: &str, program: Value, extra: Value) -> CallResult {
    let mut args = json!({"workflow": program, "mode": "immediate"});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    c.call(tool, args).await
}

/// The ids of an engine's list (strings, or n8n's numeric execution ids),
/// sorted.
pub fn ids_of(list: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = list
        .iter()
        .filter_map(|e| match &e["id"] {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect();
    ids.sort();
    ids
}
