//! HTTP client for the engine's own REST API, read through the configured
//! mapping (`[engine.mapping]`), so nothing here knows one dialect's names.
//!
//! Every call is bounded by a timeout. Failures are typed so the caller can
//! route them to the right Pilotage channel: before execution starts they are
//! `internal` request errors; once a run request was sent they are outcomes.

use crate::config::{EngineConfig, EngineMapping, pick};
use serde_json::{Map, Value};
use std::time::Duration;

/// One validation problem as the engine phrased it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawProblem {
    pub is_error: bool,
    pub text: String,
    pub location: Option<String>,
}

/// Result of a conditional catalog fetch.
#[derive(Debug)]
pub enum CatalogFetch {
    NotModified,
    Fresh {
        etag: Option<String>,
        capabilities: Vec<Value>,
    },
}

/// The runner's terminal state, mapped from the dialect's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Completed,
    Failed,
    TimedOut,
    Rejected,
}

/// What the runner answered.
#[derive(Debug, Clone)]
pub struct RunReply {
    pub engine_run_id: Option<String>,
    pub state: RunState,
    pub result: Value,
    pub error: Option<String>,
    pub events: Vec<Value>,
    pub problems: Vec<RawProblem>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Nothing reached the engine (connection refused, DNS, ...).
    #[error("engine unreachable: {0}")]
    Unreachable(String),
    /// The engine answered something the mapping cannot read, or an error status.
    #[error("engine error: {0}")]
    Failed(String),
    /// A run request was sent and then failed; execution may have started.
    /// Carries whatever events the engine returned with its failure.
    #[error("engine failed during the run: {message}")]
    RunBroken { message: String, events: Vec<Value> },
}

/// Client for one engine.
#[derive(Clone)]
pub struct EngineClient {
    http: reqwest::Client,
    base: String,
    mapping: EngineMapping,
    call_timeout: Duration,
    /// Where engine call timings go (none in benchmarks).
    metrics: Option<std::sync::Arc<crate::metrics::Metrics>>,
}

impl EngineClient {
    pub fn new(config: &EngineConfig) -> Self {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_millis(config.timeout_ms.min(2000)))
            .build()
            .unwrap_or_default();
        Self {
            http,
            base: config.url.trim_end_matches('/').to_string(),
            mapping: config.mapping.clone(),
            call_timeout: Duration::from_millis(config.timeout_ms),
            metrics: None,
        }
    }

    /// Records every engine call in `metrics`.
    pub fn with_metrics(mut self, metrics: std::sync::Arc<crate::metrics::Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Sends one engine request: the single place every call passes, which
    /// adds the caller's trace context, opens the engine-call span and times
    /// the call.
    async fn send(
        &self,
        operation: &'static str,
        req: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, reqwest::Error> {
        crate::telemetry::engine::send(operation, req, self.metrics.as_deref()).await
    }

    pub fn mapping(&self) -> &EngineMapping {
        &self.mapping
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Readiness: the engine answers its health path.
    pub async fn healthy(&self) -> bool {
        let req = self
            .http
            .get(self.url(&self.mapping.health_path))
            .timeout(Duration::from_secs(2));
        self.send("health", req)
            .await
            .map(|r| r.status().is_success())
            .unwrap_or(false)
    }

    /// The tenant's capabilities, revalidated with `If-None-Match`.
    pub async fn catalog(
        &self,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        let m = &self.mapping.catalog;
        let mut req = self
            .http
            .get(self.url(&m.path))
            .header(&self.mapping.tenant_header, tenant)
            .timeout(self.call_timeout);
        if let Some(tag) = etag {
            req = req.header(reqwest::header::IF_NONE_MATCH, tag);
        }
        let resp = self.send("catalog", req).await.map_err(transport_error)?;
        if resp.status() == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(CatalogFetch::NotModified);
        }
        let etag = resp
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body = json_body(resp, "catalog").await?;
        let pointer = format!("/{}", m.list.replace('.', "/"));
        match body
            .pointer_mut(if m.list.is_empty() { "" } else { &pointer })
            .map(Value::take)
        {
            Some(Value::Array(capabilities)) => Ok(CatalogFetch::Fresh { etag, capabilities }),
            _ => Err(EngineError::Failed(format!(
                "catalog response has no '{}' array",
                m.list
            ))),
        }
    }

    /// The engine's validator.
    pub async fn check(
        &self,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        let m = &self.mapping.check;
        let mut body = Map::new();
        body.insert(m.program_field.clone(), program.clone());
        if let Some(ctx) = context {
            body.insert(m.context_field.clone(), ctx.clone());
        }
        let req = self
            .http
            .post(self.url(&m.path))
            .header(&self.mapping.tenant_header, tenant)
            .timeout(self.call_timeout)
            .json(&body);
        let resp = self.send("check", req).await.map_err(transport_error)?;
        let body = json_body(resp, "validator").await?;
        let problems = pick(&body, &m.problems)
            .and_then(Value::as_array)
            .ok_or_else(|| {
                EngineError::Failed(format!("validator response has no '{}' array", m.problems))
            })?;
        Ok(self.problems(problems))
    }

    fn problems(&self, items: &[Value]) -> Vec<RawProblem> {
        let m = &self.mapping.check;
        items
            .iter()
            .map(|p| RawProblem {
                is_error: pick(p, &m.level).and_then(Value::as_str) != Some(&m.warning_level),
                text: pick(p, &m.text)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                location: pick(p, &m.location)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            })
            .collect()
    }

    /// Runs a program. `deadline` bounds the engine's run and, with a margin,
    /// our wait for its answer.
    pub async fn run(
        &self,
        tenant: &str,
        program: &Value,
        input: &Value,
        context: Option<&Value>,
        dry_run: bool,
        deadline: Duration,
    ) -> Result<RunReply, EngineError> {
        let m = &self.mapping.run;
        let mut body = Map::new();
        body.insert(m.program_field.clone(), program.clone());
        body.insert(m.input_field.clone(), input.clone());
        if let Some(ctx) = context {
            body.insert(m.context_field.clone(), ctx.clone());
        }
        body.insert(m.trace_field.clone(), Value::Bool(true));
        body.insert(m.dry_run_field.clone(), Value::Bool(dry_run));
        body.insert(
            m.deadline_field.clone(),
            Value::from(deadline.as_millis() as u64),
        );
        let req = self
            .http
            .post(self.url(&m.path))
            .header(&self.mapping.tenant_header, tenant)
            .timeout(deadline + Duration::from_secs(5))
            .json(&body);
        let resp = self.send("run", req).await.map_err(|e| {
            if e.is_connect() {
                EngineError::Unreachable(e.to_string())
            } else {
                // The request may have reached the runner: treat the run as started.
                EngineError::RunBroken {
                    message: e.to_string(),
                    events: Vec::new(),
                }
            }
        })?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| EngineError::RunBroken {
            message: e.to_string(),
            events: Vec::new(),
        })?;
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let events = pick(&body, &m.events)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !status.is_success() {
            let message = pick(&body, &m.error)
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("HTTP {status}"));
            return Err(EngineError::RunBroken { message, events });
        }
        let state_value = pick(&body, &m.state).and_then(Value::as_str).unwrap_or("");
        let state = if state_value == m.completed {
            RunState::Completed
        } else if state_value == m.failed {
            RunState::Failed
        } else if state_value == m.timed_out {
            RunState::TimedOut
        } else if state_value == m.rejected {
            RunState::Rejected
        } else {
            return Err(EngineError::RunBroken {
                message: format!("unknown run state '{state_value}'"),
                events,
            });
        };
        let problems = pick(&body, &m.problems)
            .and_then(Value::as_array)
            .map(|p| self.problems(p))
            .unwrap_or_default();
        Ok(RunReply {
            engine_run_id: pick(&body, &m.run_id).map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            state,
            result: pick(&body, &m.result).cloned().unwrap_or(Value::Null),
            error: pick(&body, &m.error)
                .and_then(Value::as_str)
                .map(str::to_string),
            events,
            problems,
        })
    }
}

fn transport_error(e: reqwest::Error) -> EngineError {
    if e.is_connect() {
        EngineError::Unreachable(e.to_string())
    } else {
        EngineError::Failed(e.to_string())
    }
}

async fn json_body(resp: reqwest::Response, what: &str) -> Result<Value, EngineError> {
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|e| EngineError::Failed(format!("{what}: {e}")))?;
    if !status.is_success() {
        return Err(EngineError::Failed(format!(
            "{what} answered HTTP {status}: {}",
            text.chars().take(200).collect::<String>()
        )));
    }
    serde_json::from_str(&text)
        .map_err(|e| EngineError::Failed(format!("{what} answered invalid JSON: {e}")))
}
