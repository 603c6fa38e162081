//! Running an inline program, as the steps of `engines::async_run`: rename
//! its workflow to the tenant's owned name, create it, start an execution
//! under an id of our own (a repeated start with the same id is the same
//! execution, so a start whose answer was lost can be sent again), delete
//! the workflow again (a started execution runs from its own copy, and the
//! tenant's workflow list stays the tenant's); the execution ends in
//! `SUCCESS`, `ERROR` or `CANCELLED` (past the deadline it is cancelled),
//! and its tasks are read as events.

use super::check::problem;
use super::client::{Body, Call, MistralAnswer};
use super::rename::{Renamed, rename};
use super::text::{decode, first_line_of};
use super::{MistralEngine, program_text};
use crate::engines::async_run::{AsyncRun, RunOrder, Submitted};
use crate::engines::http_client::accepted;
use crate::engines::pacing::Pacing;
use crate::engines::{EngineError, RawProblem, RunReply, RunState};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Execution states after which nothing more happens.
const TERMINAL: [&str; 3] = ["SUCCESS", "ERROR", "CANCELLED"];

/// A started execution.
pub struct Execution {
    id: String,
    /// Its workflow's owned name and the caller's.
    renamed: Renamed,
}

impl Execution {
    /// Mistral's text with the caller's workflow name put back.
    fn restore(&self, text: String) -> String {
        text.replace(&self.renamed.name, &self.renamed.original)
    }
}

#[async_trait::async_trait]
impl AsyncRun for MistralEngine {
    type Run = Execution;

    fn no_dry_run(&self) -> Option<&'static str> {
        Some("Mistral has no dry run (mistral/v2 does not declare test_run)")
    }

    async fn submit(
        &self,
        tenant: &str,
        order: &RunOrder<'_>,
    ) -> Result<Submitted<Execution>, EngineError> {
        let text = program_text(order.program)?;
        let renamed = match rename(tenant, text) {
            Ok(r) => r,
            Err(e) => {
                // Mistral's validator words YAML and schema mistakes the way
                // the rule file knows; our own reason only when it has none.
                let mut problems = self.validate(tenant, order.program).await?;
                if problems.is_empty() {
                    problems.push(RawProblem {
                        is_error: true,
                        text: e.to_string(),
                        location: None,
                        unknown_level: None,
                    });
                }
                return Ok(Submitted::refused(problems));
            }
        };
        let id = execution_id(tenant, &renamed.name);
        // The same program of the same tenant has the same name: a run
        // beside this one may delete it between our create and our start;
        // then it is created again.
        let mut attempts = 0;
        let started = loop {
            attempts += 1;
            if let Some(problems) = self.create(tenant, &renamed, text).await? {
                return Ok(Submitted::refused(problems));
            }
            match self.start(tenant, &renamed, &id, order.input).await {
                Err(Start::WorkflowGone(_)) if attempts < 3 => continue,
                Err(Start::WorkflowGone(m)) => break Err(EngineError::NotStarted(m)),
                Err(Start::Engine(e)) => break Err(e),
                Ok(()) => break Ok(()),
            }
        };
        self.delete(tenant, &renamed.name).await;
        started?;
        Ok(Submitted::Started(Execution { id, renamed }))
    }

    fn pacing(&self) -> Pacing {
        self.settings.pacing()
    }

    fn run_id<'r>(&self, run: &'r Execution) -> &'r str {
        &run.id
    }

    async fn status(&self, tenant: &str, run: &Execution) -> Result<Value, EngineError> {
        let path = format!("/executions/{}", encode(&run.id));
        self.read(tenant, &path).await.map_err(broken)
    }

    fn ended(&self, status: &Value) -> bool {
        TERMINAL.contains(&state(status))
    }

    async fn finish(
        &self,
        tenant: &str,
        _order: &RunOrder<'_>,
        run: &Execution,
        status: Value,
    ) -> Result<RunReply, EngineError> {
        let restore = |s: String| run.restore(s);
        let events = self
            .events(tenant, &run.id, &restore)
            .await
            .map_err(broken)?;
        let (state, error) = match state(&status) {
            "SUCCESS" => (RunState::Completed, None),
            "CANCELLED" => (
                RunState::Failed,
                Some("the execution was cancelled in Mistral".to_string()),
            ),
            _ => {
                let failed_task = events
                    .iter()
                    .filter(|e| e["state"] == "ERROR")
                    .find_map(|e| e["state_info"].as_str().map(str::to_string));
                let error = failed_task
                    .or_else(|| first_line_of(status.get("state_info")).map(restore))
                    .unwrap_or_else(|| "the execution failed".into());
                (RunState::Failed, Some(error))
            }
        };
        // A failed execution's output is a summary that goes on with
        // Python tracebacks: it never leaves the adapter.
        let result = if state == RunState::Completed {
            decode(status.get("output"))
        } else {
            Value::Null
        };
        Ok(RunReply {
            engine_run_id: Some(run.id.clone()),
            state,
            result,
            error,
            events,
            problems: Vec::new(),
        })
    }

    async fn cancel(&self, tenant: &str, run: &Execution) -> bool {
        let path = format!("/executions/{}", encode(&run.id));
        let body = json!({"state": "CANCELLED"});
        let answer = self
            .call(
                tenant,
                Call::once("cancel", Method::PUT, &path),
                Body::Json(&body),
            )
            .await;
        accepted(
            answer,
            |s| s.is_success(),
            |a| tracing::warn!(execution = %run.id, error = %a.error(), "Mistral refused to cancel an execution past its deadline"),
            |e| tracing::warn!(execution = %run.id, error = %e, "cancelling an execution failed"),
        )
    }

    async fn events_so_far(&self, tenant: &str, run: &Execution) -> Vec<Value> {
        self.events(tenant, &run.id, &|s| run.restore(s))
            .await
            .unwrap_or_default()
    }

    fn timed_out(&self, cancelled: bool) -> String {
        if cancelled {
            "the run did not finish by its deadline; it was cancelled (an action already running is not interrupted)".into()
        } else {
            "the run did not finish by its deadline, and Mistral did not accept its cancellation"
                .into()
        }
    }
}

impl MistralEngine {
    /// Creates the renamed workflow; `Some` carries the validator's refusal
    /// (nothing was created or started).
    async fn create(
        &self,
        tenant: &str,
        renamed: &Renamed,
        original: &str,
    ) -> Result<Option<Vec<RawProblem>>, EngineError> {
        // Creating twice is a 409, nothing worse: the call is safe.
        let create = Call::safe("run", Method::POST, "/workflows");
        let created = self.call(tenant, create, Body::Text(&renamed.text)).await?;
        match created.status.as_u16() {
            // 409: a run beside this one stored the same content.
            200 | 201 | 409 => Ok(None),
            400 => {
                let error = created
                    .json()
                    .get("faultstring")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .replace(&renamed.name, &renamed.original);
                Ok(Some(vec![problem(&error, original)]))
            }
            _ => Err(EngineError::Failed(format!(
                "creating the workflow: {}",
                created.error()
            ))),
        }
    }

    /// Deletes an owned workflow after its start (best effort: one left
    /// behind is only listed, never offered, and the next run reuses it).
    async fn delete(&self, tenant: &str, name: &str) {
        let path = format!("/workflows/{}", encode(name));
        let answer = self
            .call(tenant, Call::safe("run", Method::DELETE, &path), Body::None)
            .await;
        accepted(
            answer,
            |s| s.is_success() || s == StatusCode::NOT_FOUND,
            |a| tracing::warn!(workflow = %name, error = %a.error(), "an owned workflow could not be deleted"),
            |e| tracing::warn!(workflow = %name, error = %e, "an owned workflow could not be deleted"),
        );
    }

    /// Starts the execution under `id`. The start is sent again (same id,
    /// so still one execution) when its answer is lost or says "try again".
    async fn start(
        &self,
        tenant: &str,
        renamed: &Renamed,
        id: &str,
        input: &Value,
    ) -> Result<(), Start> {
        let input = if input.is_null() {
            json!({})
        } else {
            input.clone()
        };
        let body = json!({"id": id, "workflow_name": renamed.name, "input": input});
        let mut last = String::new();
        let mut sent = false;
        for attempt in 0..=self.retries {
            if attempt > 0 {
                // A resent start is still a retry the engine pays for.
                if !self.link.resilience.may_retry() {
                    break;
                }
                tokio::time::sleep(self.retry_backoff * 2u32.pow(attempt - 1)).await;
            }
            let start = Call::once("run", Method::POST, "/executions");
            let answer = self.call(tenant, start, Body::Json(&body)).await;
            match answer {
                Ok(a) if a.status.is_success() => return Ok(()),
                Ok(a) if a.status.is_server_error() => {
                    sent = true;
                    last = a.error();
                }
                Ok(a) => {
                    // Invalid input, or the workflow is gone: nothing started.
                    let message = a.error().replace(&renamed.name, &renamed.original);
                    return Err(if sent {
                        Start::Engine(EngineError::RunBroken {
                            message,
                            events: Vec::new(),
                        })
                    } else if a.status == StatusCode::NOT_FOUND {
                        Start::WorkflowGone(message)
                    } else {
                        Start::Engine(EngineError::NotStarted(message))
                    });
                }
                Err(e) => {
                    sent |= !e.never_sent();
                    last = e.to_string();
                }
            }
        }
        Err(Start::Engine(if sent {
            EngineError::RunBroken {
                message: format!("starting the execution: {last}"),
                events: Vec::new(),
            }
        } else {
            EngineError::Unreachable(last)
        }))
    }

    /// A safe read that must answer 2xx with JSON; else why not.
    pub(super) async fn read(&self, tenant: &str, path: &str) -> Result<Value, String> {
        let answer = self
            .call(tenant, Call::get("poll", path), Body::None)
            .await
            .map_err(|e| e.to_string())?;
        if !answer.status.is_success() {
            return Err(answer.error());
        }
        serde_json::from_str(&answer.text)
            .map_err(|e| format!("Mistral answered invalid JSON: {e}"))
    }
}

/// Why a start failed.
enum Start {
    /// The workflow was deleted by a run beside this one: create it again.
    WorkflowGone(String),
    Engine(EngineError),
}

/// An execution's state (`RUNNING`, `SUCCESS`, …).
fn state(status: &Value) -> &str {
    status.get("state").and_then(Value::as_str).unwrap_or("")
}

/// A failed read of a run that may be under way.
fn broken(message: String) -> EngineError {
    EngineError::RunBroken {
        message,
        events: Vec::new(),
    }
}

/// A fresh UUID-shaped execution id, derived from the tenant, the workflow
/// and a random nonce: unique per run, the same for every send of its start.
fn execution_id(tenant: &str, workflow: &str) -> String {
    let nonce: [u8; 16] = rand::random();
    let mut h = Sha256::new();
    h.update(tenant.as_bytes());
    h.update([0]);
    h.update(workflow.as_bytes());
    h.update(nonce);
    let x = hex::encode(h.finalize());
    format!(
        "{}-{}-{}-{}-{}",
        &x[0..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..32]
    )
}

/// A path segment or query value, percent-encoded.
pub(super) fn encode(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}
