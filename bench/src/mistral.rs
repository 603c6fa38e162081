//! The Mistral row: `mistral/v2` through the gateway vs OpenStack Mistral
//! directly, measured side by side in one run against the same Mistral.
//!
//! - validate: `POST /v2/workflows/validate` of a one-task workflow vs the
//!   gateway's `validate_mistral_workflow` (a new program per request, so the
//!   gateway's verdict cache never answers: it parses, checks and asks
//!   Mistral's validator every time);
//! - execute: create the workflow, start an execution and poll it to
//!   `SUCCESS` (what a client of Mistral does at the least) vs the gateway's
//!   `run_mistral_workflow` (which also reads the tasks and action
//!   executions for the full trace).
//!
//! Mistral serves few requests at once (10 API threads, runs through its
//! engine and executor), so requests go one at a time: the row reports
//! median and p90 latency per side and the gateway/direct ratio of the
//! medians. Speed is reported, never asserted.

use crate::procs::{self, Proc};
use serde::Serialize;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// How a Mistral row is measured.
pub struct MistralArgs<'a> {
    pub url: &'a str,
    pub requests: u64,
    pub gateway_bin: &'a Path,
    pub engine: &'a Proc,
    pub gateway_env: &'a [String],
    pub logs: &'a Path,
}

/// One side of a row: latencies in milliseconds.
#[derive(Serialize, Clone, Debug)]
pub struct Side {
    pub label: String,
    pub p50_ms: f64,
    pub p90_ms: f64,
}

/// One operation measured both ways.
#[derive(Serialize, Clone, Debug)]
pub struct MistralRow {
    pub operation: String,
    pub requests: u64,
    pub direct: Side,
    pub gateway: Side,
    /// Gateway median / direct median.
    pub ratio: f64,
}

/// The program of request `n`: one `std.echo` task (a name of its own, so
/// nothing is ever answered from a cache or a 409).
fn program(n: u64, tag: &str) -> String {
    format!(
        "version: '2.0'\nbench_{tag}_{n}:\n  output:\n    said: <% $.said %>\n  tasks:\n    say:\n      action: std.echo output='hello {n}'\n      publish:\n        said: <% task().result %>\n"
    )
}

/// Runs both operations; the rows in order.
pub async fn run(a: MistralArgs<'_>) -> Result<Vec<MistralRow>, String> {
    let base = a.url.trim_end_matches('/').to_string();
    let tag = format!("{}{:x}", std::process::id(), now_nanos() & 0xffff_ffff);
    let project = format!("bench-{tag}");
    let config = write_config(a.logs, &base, &project)?;
    let gateway = procs::gateway(
        a.gateway_bin,
        &config,
        a.engine,
        None,
        a.gateway_env,
        a.logs,
    )?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        // Mistral drops connections idle for 10 s without answering.
        .pool_idle_timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())?;
    let mcp = Mcp::open(&http, &gateway.url()).await?;
    let direct = Direct {
        http: &http,
        base: &base,
        project: &project,
    };
    // One of each first: both sides work, and nothing below measures a
    // cold start.
    direct.validate(&program(0, "warm")).await?;
    mcp.validate(&program(0, "warmgw")).await?;
    direct.execute(&program(1, "warm")).await?;
    mcp.execute(&program(1, "warmgw")).await?;

    let mut rows = Vec::new();
    let (mut d, mut g) = (Vec::new(), Vec::new());
    for n in 0..a.requests {
        let t = Instant::now();
        direct.validate(&program(n, &format!("v{tag}"))).await?;
        d.push(t.elapsed());
        let t = Instant::now();
        mcp.validate(&program(n, &format!("vg{tag}"))).await?;
        g.push(t.elapsed());
    }
    rows.push(row(
        "validate",
        "POST /v2/workflows/validate",
        "validate_mistral_workflow",
        &d,
        &g,
    ));
    let (mut d, mut g) = (Vec::new(), Vec::new());
    for n in 0..a.requests {
        let t = Instant::now();
        direct.execute(&program(n, &format!("x{tag}"))).await?;
        d.push(t.elapsed());
        let t = Instant::now();
        mcp.execute(&program(n, &format!("xg{tag}"))).await?;
        g.push(t.elapsed());
    }
    rows.push(row(
        "execute (one std.echo task)",
        "create + start + poll to SUCCESS",
        "run_mistral_workflow (full trace)",
        &d,
        &g,
    ));
    direct.clean().await;
    Ok(rows)
}

fn now_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn percentile_ms(samples: &[Duration], p: f64) -> f64 {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    if ms.is_empty() {
        return 0.0;
    }
    let i = ((ms.len() - 1) as f64 * p).round() as usize;
    ms[i.min(ms.len() - 1)]
}

fn row(op: &str, direct: &str, gateway: &str, d: &[Duration], g: &[Duration]) -> MistralRow {
    let side = |label: &str, s: &[Duration]| Side {
        label: label.into(),
        p50_ms: percentile_ms(s, 0.5),
        p90_ms: percentile_ms(s, 0.9),
    };
    let (direct, gateway) = (side(direct, d), side(gateway, g));
    let ratio = if direct.p50_ms > 0.0 {
        gateway.p50_ms / direct.p50_ms
    } else {
        0.0
    };
    MistralRow {
        operation: op.into(),
        requests: d.len() as u64,
        direct,
        gateway,
        ratio,
    }
}

/// The row's console line.
pub fn console_line(r: &MistralRow) -> String {
    format!(
        "  {:<28} direct p50 {:>7.1} ms p90 {:>7.1} ms · gateway p50 {:>7.1} ms p90 {:>7.1} ms · ×{:.2}",
        r.operation, r.direct.p50_ms, r.direct.p90_ms, r.gateway.p50_ms, r.gateway.p90_ms, r.ratio
    )
}

/// The markdown section of the rows.
pub fn markdown(
    machine: &str,
    commit: Option<&str>,
    url_note: &str,
    rows: &[MistralRow],
) -> String {
    use std::fmt::Write;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### mistral/v2: through the gateway vs Mistral directly\n\n{machine} · {} · release \
         gateway, {url_note}, one request at a time (Mistral's API serves 10 at once), a new \
         program per request, both sides measured alternately in the same run\n",
        commit.map_or("commit unknown".to_string(), |c| format!("commit `{c}`"))
    );
    let _ = writeln!(
        md,
        "| operation | requests | Mistral directly | p50 / p90 | through the gateway | p50 / p90 | gateway / direct (p50) |"
    );
    let _ = writeln!(md, "|---|---:|---|---:|---|---:|---:|");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.1} / {:.1} ms | {} | {:.1} / {:.1} ms | ×{:.2} |",
            r.operation,
            r.requests,
            r.direct.label,
            r.direct.p50_ms,
            r.direct.p90_ms,
            r.gateway.label,
            r.gateway.p50_ms,
            r.gateway.p90_ms,
            r.ratio
        );
    }
    md
}

/// A gateway configuration for the row: `deploy/gateway.mistral.toml` with
/// its paths made absolute, Mistral's URL in `[engines.mistral]` and the
/// run's own project as the anonymous tenant (line edits: the file's layout
/// is this repository's own).
fn write_config(logs: &Path, url: &str, project: &str) -> Result<std::path::PathBuf, String> {
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let deploy = deploy.canonicalize().unwrap_or(deploy);
    let source = deploy.join("gateway.mistral.toml");
    let text =
        std::fs::read_to_string(&source).map_err(|e| format!("{}: {e}", source.display()))?;
    let mut in_mistral = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with('[') {
            in_mistral = line.trim() == "[engines.mistral]";
        }
        let line = if in_mistral && line.starts_with("url = ") {
            format!("url = \"{url}\"")
        } else if line.starts_with("anonymous_tenant = ") {
            format!("anonymous_tenant = \"{project}\"")
        } else {
            line.replace("\"../", &format!("\"{}/../", deploy.display()))
        };
        out.push_str(&line);
        out.push('\n');
    }
    let path = logs.join("gateway.mistral.bench.toml");
    std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Mistral's REST API, as a client of it uses it.
struct Direct<'a> {
    http: &'a reqwest::Client,
    base: &'a str,
    project: &'a str,
}

impl Direct<'_> {
    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("X-Project-Id", self.project)
            .header("Accept", "*/*")
    }

    async fn json(&self, r: reqwest::RequestBuilder, want: u16) -> Result<Value, String> {
        let resp = r.send().await.map_err(|e| format!("Mistral: {e}"))?;
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status != want {
            return Err(format!(
                "Mistral answered HTTP {status} (wanted {want}): {body}"
            ));
        }
        Ok(body)
    }

    async fn validate(&self, yaml: &str) -> Result<(), String> {
        let r = self
            .req(reqwest::Method::POST, "/workflows/validate")
            .header("Content-Type", "text/plain")
            .body(yaml.to_string());
        let body = self.json(r, 200).await?;
        if body["valid"] != true {
            return Err(format!("the benchmark program is invalid: {body}"));
        }
        Ok(())
    }

    async fn execute(&self, yaml: &str) -> Result<(), String> {
        let r = self
            .req(reqwest::Method::POST, "/workflows")
            .header("Content-Type", "text/plain")
            .body(yaml.to_string());
        let created = self.json(r, 201).await?;
        let name = created["workflows"][0]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let r = self
            .req(reqwest::Method::POST, "/executions")
            .json(&json!({"workflow_name": name, "input": {}}));
        let started = self.json(r, 201).await?;
        let id = started["id"].as_str().unwrap_or_default().to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut wait = Duration::from_millis(10);
        loop {
            let ex = self
                .json(
                    self.req(reqwest::Method::GET, &format!("/executions/{id}")),
                    200,
                )
                .await?;
            match ex["state"].as_str() {
                Some("SUCCESS") => return Ok(()),
                Some("ERROR" | "CANCELLED") => return Err(format!("the direct run ended {ex}")),
                _ if Instant::now() > deadline => {
                    return Err("the direct run took over 60 s".into());
                }
                _ => {}
            }
            tokio::time::sleep(wait).await;
            // The gateway's adapter polls from 50 ms; a direct client
            // polling faster is the stricter baseline.
            wait = (wait * 2).min(Duration::from_millis(100));
        }
    }

    /// Deletes the run's executions and workflows (best effort).
    async fn clean(&self) {
        for (list, key) in [
            ("/executions?limit=1000", "executions"),
            ("/workflows?limit=1000", "workflows"),
        ] {
            let Ok(body) = self.json(self.req(reqwest::Method::GET, list), 200).await else {
                continue;
            };
            for item in body[key].as_array().cloned().unwrap_or_default() {
                let id = if key == "workflows" {
                    &item["name"]
                } else {
                    &item["id"]
                };
                if let Some(id) = id.as_str() {
                    let _ = self
                        .req(reqwest::Method::DELETE, &format!("/{key}/{id}"))
                        .send()
                        .await;
                }
            }
        }
    }
}

/// A minimal MCP session with the gateway (anonymous, the run's tenant).
struct Mcp<'a> {
    http: &'a reqwest::Client,
    url: String,
    session: String,
}

impl<'a> Mcp<'a> {
    async fn open(http: &'a reqwest::Client, base: &str) -> Result<Mcp<'a>, String> {
        let url = format!("{base}/mcp");
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "pilotage-bench", "version": "1"}}});
        let resp = Self::post(http, &url, None, &init).await?;
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .ok_or("the gateway issued no session")?
            .to_string();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        Self::post(http, &url, Some(&session), &note).await?;
        Ok(Mcp { http, url, session })
    }

    async fn post(
        http: &reqwest::Client,
        url: &str,
        session: Option<&str>,
        body: &Value,
    ) -> Result<reqwest::Response, String> {
        let mut r = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string());
        if let Some(s) = session {
            r = r.header("mcp-session-id", s);
        }
        r.send().await.map_err(|e| format!("gateway: {e}"))
    }

    async fn call(&self, tool: &str, args: Value) -> Result<Value, String> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let resp = Self::post(self.http, &self.url, Some(&self.session), &body).await?;
        let text = resp.text().await.map_err(|e| e.to_string())?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("the gateway's answer is not JSON ({e}): {text}"))?;
        Ok(value["result"]["structuredContent"].clone())
    }

    async fn validate(&self, yaml: &str) -> Result<(), String> {
        let r = self
            .call("validate_mistral_workflow", json!({"workflow": yaml}))
            .await?;
        if r["valid"] != true {
            return Err(format!("validate through the gateway: {r}"));
        }
        Ok(())
    }

    async fn execute(&self, yaml: &str) -> Result<(), String> {
        let r = self
            .call(
                "run_mistral_workflow",
                json!({"workflow": yaml, "mode": "immediate", "trace_level": "full"}),
            )
            .await?;
        if r["outcome"]["status"] != "success" {
            return Err(format!("execute through the gateway: {r}"));
        }
        Ok(())
    }
}
