//! HTTP client for the engine's own REST API, read through the configured
//! mapping (`[engine.mapping]`), so nothing here knows one dialect's names.
//!
//! Every call is bounded by a timeout and by `engine.max_in_flight`; calls that
//! are safe to repeat (catalog, check, status and log reads) are retried with
//! backoff. Failures are typed so the caller can route them to the right
//! Pilotage channel: before execution starts they are `internal` request errors
//! (`NotStarted`, `Unreachable`, `Failed`); once a run may have started they are
//! outcomes (`RunBroken`).

pub mod answer;
pub mod body;
mod poll;

use crate::config::{
    CheckMeaning, EngineConfig, EngineMapping, LevelMeaning, RunMeaning, Runner, StateMeaning,
    pick, value_text,
};
use answer::{error_paths, error_text, level_meaning, state_meaning, status_meaning};
use body::Fill;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One validation problem as the engine phrased it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawProblem {
    pub is_error: bool,
    pub text: String,
    pub location: Option<String>,
    /// The engine's level when it is in no value table (counted as an error).
    pub unknown_level: Option<String>,
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
    /// The engine's run answer shows that nothing started.
    #[error("the engine started nothing: {0}")]
    NotStarted(String),
    /// A run request was sent and then failed; execution may have started.
    /// Carries whatever events the engine returned with its failure.
    #[error("engine failed during the run: {message}")]
    RunBroken { message: String, events: Vec<Value> },
}

/// One HTTP answer, read whole.
struct Answer {
    status: StatusCode,
    etag: Option<String>,
    text: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

/// One engine call.
struct Call<'a> {
    method: Method,
    path: &'a str,
    body: Option<&'a Value>,
    headers: &'a [(reqwest::header::HeaderName, &'a str)],
    timeout: Duration,
    /// Safe to repeat (a read, or a check).
    safe: bool,
}

/// Client for one engine.
#[derive(Clone)]
pub struct EngineClient {
    http: reqwest::Client,
    base: String,
    mapping: EngineMapping,
    call_timeout: Duration,
    in_flight: Arc<tokio::sync::Semaphore>,
    retries: u32,
    retry_backoff: Duration,
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
            in_flight: Arc::new(tokio::sync::Semaphore::new(config.max_in_flight.max(1))),
            retries: config.retries,
            retry_backoff: Duration::from_millis(config.retry_backoff_ms),
        }
    }

    pub fn mapping(&self) -> &EngineMapping {
        &self.mapping
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// One call under the in-flight bound. A `safe` call is repeated with
    /// backoff after a transport failure or an answer saying "try again"
    /// (429, 502, 503, 504).
    async fn call(&self, tenant: &str, c: Call<'_>) -> Result<Answer, reqwest::Error> {
        let mut delay = self.retry_backoff;
        let mut attempt = 0;
        loop {
            let result = self.attempt(tenant, &c).await;
            let again = c.safe
                && attempt < self.retries
                && match &result {
                    Err(_) => true,
                    Ok(a) => matches!(a.status.as_u16(), 429 | 502 | 503 | 504),
                };
            if !again {
                return result;
            }
            attempt += 1;
            tracing::warn!(path = %c.path, attempt, "engine call failed; retrying");
            tokio::time::sleep(delay).await;
            delay *= 2;
        }
    }

    async fn attempt(&self, tenant: &str, c: &Call<'_>) -> Result<Answer, reqwest::Error> {
        // The semaphore is never closed, so acquiring cannot fail.
        let _permit = self.in_flight.acquire().await.ok();
        let mut req = self
            .http
            .request(c.method.clone(), self.url(c.path))
            .header(&self.mapping.tenant_header, tenant)
            .timeout(c.timeout);
        for (name, value) in c.headers {
            req = req.header(name, *value);
        }
        if let Some(b) = c.body {
            req = req.json(b);
        }
        let resp = req.send().await?;
        let status = resp.status();
        let etag = resp
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = resp.text().await?;
        Ok(Answer { status, etag, text })
    }

    /// Readiness: the engine answers its health path.
    pub async fn healthy(&self) -> bool {
        self.http
            .get(self.url(&self.mapping.health_path))
            .timeout(Duration::from_secs(2))
            .send()
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
        let headers: Vec<_> = etag
            .map(|t| (reqwest::header::IF_NONE_MATCH, t))
            .into_iter()
            .collect();
        let answer = self
            .call(
                tenant,
                Call {
                    method: Method::GET,
                    path: &m.path,
                    body: None,
                    headers: &headers,
                    timeout: self.call_timeout,
                    safe: true,
                },
            )
            .await
            .map_err(transport_error)?;
        if answer.status == StatusCode::NOT_MODIFIED {
            return Ok(CatalogFetch::NotModified);
        }
        let mut body = self.success_json(&answer, "catalog")?;
        let pointer = format!("/{}", m.list.replace('.', "/"));
        match body
            .pointer_mut(if m.list.is_empty() { "" } else { &pointer })
            .map(Value::take)
        {
            Some(Value::Array(capabilities)) => Ok(CatalogFetch::Fresh {
                etag: answer.etag,
                capabilities,
            }),
            _ => Err(EngineError::Failed(format!(
                "catalog response has no '{}' array (engine.mapping.catalog.list)",
                m.list
            ))),
        }
    }

    /// For `check-config --probe`: the catalog call for `tenant` (one the
    /// engine should not know). `None` when the engine answered 2xx; else the
    /// status and the error text the mapping's `error_paths` find (`None`:
    /// nothing found).
    pub async fn error_answer(
        &self,
        tenant: &str,
    ) -> Result<Option<(StatusCode, Option<String>)>, EngineError> {
        let answer = self
            .call(
                tenant,
                Call {
                    method: Method::GET,
                    path: &self.mapping.catalog.path,
                    body: None,
                    headers: &[],
                    timeout: self.call_timeout,
                    safe: false,
                },
            )
            .await
            .map_err(transport_error)?;
        if answer.status.is_success() {
            return Ok(None);
        }
        let body = answer.json();
        let found = self
            .mapping
            .error_paths
            .iter()
            .filter(|p| !p.is_empty())
            .find_map(|p| pick(&body, p).and_then(value_text));
        Ok(Some((answer.status, found)))
    }

    /// The body of a 2xx answer as JSON, or the error it carries.
    fn success_json(&self, answer: &Answer, what: &str) -> Result<Value, EngineError> {
        if !answer.status.is_success() {
            let body = answer.json();
            let text = if body.is_null() {
                answer.text.chars().take(200).collect()
            } else {
                error_text(&body, &error_paths(&self.mapping, ""), answer.status)
            };
            return Err(EngineError::Failed(format!(
                "{what} answered HTTP {}: {text}",
                answer.status
            )));
        }
        serde_json::from_str(&answer.text)
            .map_err(|e| EngineError::Failed(format!("{what} answered invalid JSON: {e}")))
    }

    /// The engine's validator.
    pub async fn check(
        &self,
        tenant: &str,
        program: &Value,
        context: Option<&Value>,
    ) -> Result<Vec<RawProblem>, EngineError> {
        let m = &self.mapping.check;
        let body = body::render(
            &m.body,
            &m.encodings,
            &Fill {
                program: Some(program),
                context,
                ..Fill::default()
            },
        );
        let answer = self
            .call(
                tenant,
                Call {
                    method: Method::POST,
                    path: &m.path,
                    body: Some(&body),
                    headers: &[],
                    timeout: self.call_timeout,
                    safe: true,
                },
            )
            .await
            .map_err(transport_error)?;
        let body = answer.json();
        if status_meaning(&m.status, answer.status) != Some(CheckMeaning::Answer) {
            return Err(EngineError::Failed(format!(
                "validator answered HTTP {} (engine.mapping.check.status): {}",
                answer.status,
                error_text(&body, &error_paths(&self.mapping, ""), answer.status)
            )));
        }
        let problems = pick(&body, &m.problems)
            .and_then(Value::as_array)
            .ok_or_else(|| {
                EngineError::Failed(format!(
                    "validator response has no '{}' array (engine.mapping.check.problems)",
                    m.problems
                ))
            })?;
        Ok(self.problems(problems))
    }

    fn problems(&self, items: &[Value]) -> Vec<RawProblem> {
        let m = &self.mapping.check;
        items
            .iter()
            .map(|p| {
                let level = pick(p, &m.level).and_then(value_text);
                let meaning = level_meaning(&self.mapping, level.as_deref());
                if let Err(unknown) = &meaning {
                    tracing::warn!(level = %unknown, key = "engine.mapping.check.levels",
                        "engine problem level in no value table; counted as an error");
                }
                RawProblem {
                    is_error: meaning != Ok(LevelMeaning::Warning),
                    text: pick(p, &m.text).and_then(value_text).unwrap_or_default(),
                    location: pick(p, &m.location)
                        .and_then(value_text)
                        .filter(|s| !s.is_empty()),
                    unknown_level: meaning.err(),
                }
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
        let body = body::render(
            &m.body,
            &m.encodings,
            &Fill {
                program: Some(program),
                input: Some(input),
                context,
                trace: Some(true),
                dry_run: Some(dry_run),
                deadline: Some(deadline),
            },
        );
        let wait = match m.runner {
            Runner::Sync => deadline + Duration::from_secs(5),
            Runner::Async => self.call_timeout,
        };
        let answer = self
            .call(
                tenant,
                Call {
                    method: Method::POST,
                    path: &m.path,
                    body: Some(&body),
                    headers: &[],
                    timeout: wait,
                    safe: false,
                },
            )
            .await
            .map_err(|e| {
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
        let body = answer.json();
        let events = pick(&body, &m.events)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let meaning =
            status_meaning(&m.status, answer.status).unwrap_or(RunMeaning::FailedIfStarted);
        let message = || error_text(&body, &error_paths(&self.mapping, &m.error), answer.status);
        match meaning {
            RunMeaning::Answer => {}
            RunMeaning::Rejected => return Ok(self.rejected(&body, &m.problems, message())),
            RunMeaning::NotStarted => return Err(EngineError::NotStarted(message())),
            RunMeaning::Failed => {
                return Err(EngineError::RunBroken {
                    message: message(),
                    events,
                });
            }
            RunMeaning::FailedIfStarted => {
                let started =
                    pick(&body, &m.run_id).and_then(value_text).is_some() || !events.is_empty();
                return Err(if started {
                    EngineError::RunBroken {
                        message: message(),
                        events,
                    }
                } else {
                    EngineError::NotStarted(message())
                });
            }
        }
        match m.runner {
            Runner::Sync => {
                let result = pick(&body, &m.result).cloned().unwrap_or(Value::Null);
                let result = if m.result_encoded {
                    decode(result)
                } else {
                    result
                };
                let paths = ReplyPaths {
                    state: &m.state,
                    error: &m.error,
                    problems: &m.problems,
                };
                self.reply(&body, result, events, &paths)
            }
            Runner::Async => poll::finish(self, tenant, &body, deadline).await,
        }
    }

    /// A rejected run: problems at `problems_path`.
    fn rejected(&self, body: &Value, problems_path: &str, message: String) -> RunReply {
        RunReply {
            engine_run_id: pick(body, &self.mapping.run.run_id).and_then(value_text),
            state: RunState::Rejected,
            result: Value::Null,
            error: Some(message),
            events: Vec::new(),
            problems: pick(body, problems_path)
                .and_then(Value::as_array)
                .map(|p| self.problems(p))
                .unwrap_or_default(),
        }
    }

    /// A run answer: state, error and problems read from `status` at `paths`,
    /// with the result and the events already in hand.
    fn reply(
        &self,
        status: &Value,
        result: Value,
        events: Vec<Value>,
        paths: &ReplyPaths<'_>,
    ) -> Result<RunReply, EngineError> {
        let m = &self.mapping.run;
        let message = || {
            error_paths(&self.mapping, paths.error)
                .into_iter()
                .filter(|p| !p.is_empty())
                .find_map(|p| pick(status, p).and_then(value_text))
                .unwrap_or_else(|| "the engine broke off the run".into())
        };
        let state = match state_meaning(&self.mapping, pick(status, paths.state)) {
            Ok(StateMeaning::Completed) => RunState::Completed,
            Ok(StateMeaning::Failed) => RunState::Failed,
            Ok(StateMeaning::TimedOut) => RunState::TimedOut,
            Ok(StateMeaning::Rejected) => RunState::Rejected,
            Ok(StateMeaning::Broken) | Ok(StateMeaning::Running) => {
                return Err(EngineError::RunBroken {
                    message: message(),
                    events,
                });
            }
            Err(unknown) => {
                tracing::warn!(state = %unknown, key = "engine.mapping.run.states",
                    "engine run state in no value table; read as a broken run");
                return Err(EngineError::RunBroken {
                    message: format!("unknown run state '{unknown}'"),
                    events,
                });
            }
        };
        let problems = pick(status, paths.problems)
            .and_then(Value::as_array)
            .map(|p| self.problems(p))
            .unwrap_or_default();
        Ok(RunReply {
            engine_run_id: pick(status, &m.run_id).and_then(value_text),
            state,
            result,
            error: crate::config::pick_field(status, paths.error).and_then(value_text),
            events,
            problems,
        })
    }
}

/// Where a status answer keeps its state, error and problems.
struct ReplyPaths<'a> {
    state: &'a str,
    error: &'a str,
    problems: &'a str,
}

/// JSON encoded inside a string, decoded; anything else as it is.
pub fn decode(value: Value) -> Value {
    match &value {
        Value::String(s) => serde_json::from_str(s).unwrap_or(value),
        _ => value,
    }
}

fn transport_error(e: reqwest::Error) -> EngineError {
    if e.is_connect() {
        EngineError::Unreachable(e.to_string())
    } else {
        EngineError::Failed(e.to_string())
    }
}
