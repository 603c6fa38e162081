//! Running a workflow: create it in the tenant's own project under a
//! gateway-owned name (`pilotage-<digest>`) with the tenant's API key and
//! the Pilotage input pinned as its trigger's output, run it manually from
//! that trigger with the tenant's login, poll the execution until it ends or the
//! deadline passes (then stop it: `TimedOut`), read it into events, and
//! delete the execution and the workflow again: nothing is kept in n8n.
//! n8n's refusals (`Unrecognized node type`, a version it does not have,
//! `WorkflowHasIssuesError`) are `Rejected` with problems located at the
//! node they name.

use super::N8nEngine;
use super::client::{Answer, Auth, Request};
use super::events;
use crate::engines::{EngineError, RawProblem, RunReply, RunState};
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};

/// Statuses after which an execution changes no more.
const RUNNING: [&str; 4] = ["new", "running", "waiting", "unknown"];

impl N8nEngine {
    pub(super) async fn execute(
        &self,
        tenant: &str,
        program: &Value,
        input: &Value,
        deadline: Duration,
    ) -> Result<RunReply, EngineError> {
        let until = Instant::now() + deadline;
        let Some(trigger) = self.trigger(tenant, program).await? else {
            return Ok(rejected(vec![RawProblem {
                is_error: true,
                text: "the workflow has no trigger node: nothing can start it".into(),
                location: Some("/nodes".into()),
                unknown_level: None,
            }]));
        };
        // The Pilotage input is the trigger's output, pinned: n8n then runs
        // from it without waiting for a call or a schedule.
        let body = json!({
            "name": owned_name(program),
            "nodes": program.get("nodes").cloned().unwrap_or(json!([])),
            "connections": program.get("connections").cloned().unwrap_or(json!({})),
            "settings": settings(program),
            "pinData": {trigger.as_str(): items(input)},
        });
        let created = self
            .call(
                tenant,
                Request {
                    operation: "run",
                    method: Method::POST,
                    path: "/api/v1/workflows",
                    body: Some(&body),
                    auth: Auth::Key,
                    timeout: self.link.call_timeout,
                    safe: false,
                },
            )
            .await?;
        if created.status.as_u16() == 400 {
            return Ok(rejected(vec![refusal(&created.message(), program)]));
        }
        if !created.status.is_success() {
            return Err(EngineError::NotStarted(format!(
                "creating the workflow: {}",
                created.error()
            )));
        }
        let Some(workflow_id) = created.json().get("id").and_then(id_text) else {
            return Err(EngineError::NotStarted(
                "creating the workflow: n8n's answer has no id".into(),
            ));
        };
        let reply = self
            .run_created(tenant, program, &trigger, &workflow_id, until)
            .await;
        if let Ok(r) = &reply
            && let Some(execution) = &r.engine_run_id
        {
            self.remove(tenant, &format!("/api/v1/executions/{execution}"))
                .await;
        }
        self.remove(tenant, &format!("/api/v1/workflows/{workflow_id}"))
            .await;
        reply
    }

    /// Starts the created workflow and follows its execution.
    async fn run_created(
        &self,
        tenant: &str,
        program: &Value,
        trigger: &str,
        workflow_id: &str,
        until: Instant,
    ) -> Result<RunReply, EngineError> {
        let start = json!({"triggerToStartFrom": {"name": trigger}});
        let path = format!("/rest/workflows/{workflow_id}/run");
        let started = self
            .call(
                tenant,
                Request {
                    operation: "run",
                    method: Method::POST,
                    path: &path,
                    body: Some(&start),
                    auth: Auth::Login,
                    timeout: self.link.call_timeout,
                    safe: false,
                },
            )
            .await?;
        if started.status.as_u16() == 400 {
            return Ok(rejected(vec![refusal(&started.message(), program)]));
        }
        if !started.status.is_success() {
            return Err(EngineError::NotStarted(format!(
                "starting the workflow: {}",
                started.error()
            )));
        }
        let Some(execution_id) = started
            .json()
            .pointer("/data/executionId")
            .and_then(id_text)
        else {
            return Err(EngineError::NotStarted(format!(
                "starting the workflow: n8n started no execution ({})",
                started.text.chars().take(200).collect::<String>()
            )));
        };
        let Some(execution) = self.poll(tenant, &execution_id, until).await? else {
            let stopped = self.stop(tenant, &execution_id).await;
            let read = self.read_execution(tenant, &execution_id).await.ok();
            let mut events = read.as_ref().map(events::events).unwrap_or_default();
            // The run was cut short: its last word is ours, not n8n's.
            events.retain(|e| e.get("execution").is_none());
            events.push(
                json!({"execution": "canceled", "error": "the run did not finish by its deadline"}),
            );
            return Ok(RunReply {
                engine_run_id: Some(execution_id),
                state: RunState::TimedOut,
                result: Value::Null,
                error: Some(if stopped {
                    "the run did not finish by its deadline; n8n stopped it".into()
                } else {
                    "the run did not finish by its deadline, and n8n did not accept its stop".into()
                }),
                events,
                problems: Vec::new(),
            });
        };
        let events = events::events(&execution);
        let (state, error, problems) = match events::final_status(&execution) {
            "success" => (RunState::Completed, None, Vec::new()),
            "canceled" => (
                RunState::Failed,
                Some("the execution was stopped in n8n".to_string()),
                Vec::new(),
            ),
            _ => {
                let message = events::error_message(&execution)
                    .unwrap_or_else(|| "the execution failed".into());
                if events::error_name(&execution).as_deref() == Some("WorkflowHasIssuesError") {
                    let text = format!("WorkflowHasIssuesError: {message}");
                    let problem = refusal(&text, program);
                    (RunState::Rejected, Some(text), vec![problem])
                } else {
                    let failed_node = events
                        .iter()
                        .find(|e| e["status"] == "error")
                        .and_then(|e| e["node"].as_str())
                        .map(str::to_string);
                    let error = match failed_node {
                        Some(node) if !message.contains(&node) => format!("{node}: {message}"),
                        _ => message,
                    };
                    (RunState::Failed, Some(error), Vec::new())
                }
            }
        };
        let result = if state == RunState::Completed {
            events::result(&execution)
        } else {
            Value::Null
        };
        Ok(RunReply {
            engine_run_id: Some(execution_id),
            state,
            result,
            error,
            events,
            problems,
        })
    }

    /// The name of the program's first enabled trigger node (by the node
    /// descriptions), if it has one.
    async fn trigger(&self, tenant: &str, program: &Value) -> Result<Option<String>, EngineError> {
        let catalog = self.node_catalog(tenant).await?;
        Ok(program
            .get("nodes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|n| n.get("disabled").and_then(Value::as_bool) != Some(true))
            .find(|n| {
                n.get("type")
                    .and_then(Value::as_str)
                    .and_then(|t| catalog.types.get(t))
                    .and_then(|t| t.default_description())
                    .is_some_and(|d| d.trigger)
            })
            .and_then(|n| n.get("name").and_then(Value::as_str))
            .map(str::to_string))
    }

    /// The finished execution, or `None` when `until` passed first.
    async fn poll(
        &self,
        tenant: &str,
        id: &str,
        until: Instant,
    ) -> Result<Option<Value>, EngineError> {
        let mut delay = Duration::from_millis(self.settings.poll_interval_ms.max(1));
        let max_delay = Duration::from_millis(self.settings.max_poll_interval_ms.max(1));
        loop {
            let left = until.saturating_duration_since(Instant::now());
            tokio::time::sleep(delay.min(left)).await;
            let execution =
                self.read_execution(tenant, id)
                    .await
                    .map_err(|e| EngineError::RunBroken {
                        message: e.to_string(),
                        events: Vec::new(),
                    })?;
            let status = execution
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("");
            let stopped = execution.get("stoppedAt").is_some_and(|s| !s.is_null());
            if stopped && !RUNNING.contains(&status) {
                return Ok(Some(execution));
            }
            if Instant::now() >= until {
                return Ok(None);
            }
            delay = (delay * 2).min(max_delay);
        }
    }

    async fn read_execution(&self, tenant: &str, id: &str) -> Result<Value, EngineError> {
        let path = format!("/api/v1/executions/{id}?includeData=true");
        self.call_json(
            tenant,
            Request {
                operation: "poll",
                method: Method::GET,
                path: &path,
                body: None,
                auth: Auth::Key,
                timeout: self.link.call_timeout,
                safe: true,
            },
            "reading the execution",
        )
        .await
    }

    /// Asks n8n to stop the execution; whether it did.
    async fn stop(&self, tenant: &str, id: &str) -> bool {
        let path = format!("/api/v1/executions/{id}/stop");
        let answer = self
            .call(
                tenant,
                Request {
                    operation: "cancel",
                    method: Method::POST,
                    path: &path,
                    body: None,
                    auth: Auth::Key,
                    timeout: self.link.call_timeout,
                    safe: true,
                },
            )
            .await;
        match answer {
            Ok(a) if a.status.is_success() => true,
            Ok(a) => {
                tracing::warn!(execution = %id, error = %a.error(), "n8n refused to stop an execution past its deadline");
                false
            }
            Err(e) => {
                tracing::warn!(execution = %id, error = %e, "stopping an execution failed");
                false
            }
        }
    }

    /// Deletes what a run created (best effort, logged when it fails).
    async fn remove(&self, tenant: &str, path: &str) {
        let answer = self
            .call(
                tenant,
                Request {
                    operation: "run",
                    method: Method::DELETE,
                    path,
                    body: None,
                    auth: Auth::Key,
                    timeout: self.link.call_timeout,
                    safe: true,
                },
            )
            .await;
        match answer {
            Ok(a) if a.status.is_success() || a.status.as_u16() == 404 => {}
            Ok(Answer { status, .. }) => {
                tracing::warn!(%path, status = status.as_u16(), "n8n kept something a run created")
            }
            Err(e) => tracing::warn!(%path, error = %e, "n8n kept something a run created"),
        }
    }
}

/// A gateway-owned workflow name: a digest of the program and a nonce, so
/// it says nothing of the tenant's own name and never meets another run's.
fn owned_name(program: &Value) -> String {
    let nonce: [u8; 8] = rand::random();
    let mut h = Sha256::new();
    h.update(program.to_string().as_bytes());
    h.update(nonce);
    format!("pilotage-{}", &hex::encode(h.finalize())[..16])
}

/// The program's settings, saving the execution's progress unless the
/// program says otherwise: n8n stores a stopped manual execution without
/// the node runs that finished before the stop, unless it saved them as
/// they finished, and a run stopped at its deadline still owes its caller
/// a trace of them.
fn settings(program: &Value) -> Value {
    let mut settings = program
        .get("settings")
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(map) = settings.as_object_mut() {
        map.entry("saveExecutionProgress").or_insert(json!(true));
    }
    settings
}

/// An id n8n gives as a string or a number.
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The trigger's items for the Pilotage input: one item, or one per
/// element of a list; no input is one empty item.
fn items(input: &Value) -> Value {
    let list: Vec<Value> = match input {
        Value::Null => vec![json!({"json": {}})],
        Value::Array(list) => list.iter().map(|i| json!({"json": as_item(i)})).collect(),
        other => vec![json!({"json": as_item(other)})],
    };
    Value::Array(list)
}

/// An item's `json`: an object, else the value under `value`.
fn as_item(v: &Value) -> Value {
    if v.is_object() {
        v.clone()
    } else {
        json!({"value": v})
    }
}

fn rejected(problems: Vec<RawProblem>) -> RunReply {
    RunReply {
        engine_run_id: None,
        state: RunState::Rejected,
        result: Value::Null,
        error: problems.first().map(|p| p.text.clone()),
        events: Vec::new(),
        problems,
    }
}

/// One of n8n's refusals as a problem, located at the node it names
/// (its type, its version, or the node).
pub(super) fn refusal(message: &str, program: &Value) -> RawProblem {
    let nodes: &[Value] = program
        .get("nodes")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let find = |pred: &dyn Fn(&Value) -> bool| nodes.iter().position(pred);
    let location = if let Some(t) = message.strip_prefix("Unrecognized node type: ") {
        let t = t.trim();
        find(&|n| n.get("type").and_then(Value::as_str) == Some(t))
            .map(|i| format!("/nodes/{i}/type"))
    } else if let Some(rest) = message.strip_prefix("Node type \"") {
        let short = rest.split('"').next().unwrap_or("");
        let version = rest
            .split("version ")
            .nth(1)
            .and_then(|v| v.split(' ').next())
            .map(|v| v.trim_end_matches('.').to_string());
        find(&|n| {
            let t = n.get("type").and_then(Value::as_str).unwrap_or("");
            let v = n.get("typeVersion").map(Value::to_string);
            t.rsplit('.').next() == Some(short) && (version.is_none() || v == version)
        })
        .map(|i| format!("/nodes/{i}/typeVersion"))
    } else if let Some(rest) = message
        .split_once("The '")
        .map(|(_, r)| r)
        .or_else(|| message.split_once("Node \"").map(|(_, r)| r))
    {
        let name = rest.split(['\'', '"']).next().unwrap_or("");
        find(&|n| n.get("name").and_then(Value::as_str) == Some(name))
            .map(|i| format!("/nodes/{i}"))
    } else {
        None
    };
    RawProblem {
        is_error: true,
        text: message.to_string(),
        location,
        unknown_level: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Value {
        json!({"nodes": [
            {"name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1},
            {"name": "Fetch", "type": "n8n-nodes-base.htpRequest", "typeVersion": 4.2},
            {"name": "Set", "type": "n8n-nodes-base.set", "typeVersion": 99},
        ]})
    }

    #[test]
    fn refusals_are_located_at_the_node_they_name() {
        let at = |m: &str| refusal(m, &program()).location;
        assert_eq!(
            at("Unrecognized node type: n8n-nodes-base.htpRequest").as_deref(),
            Some("/nodes/1/type")
        );
        assert_eq!(
            at("Node type \"set\" is not available in version 99. Available versions: 1, 2, 3. Use the latest version 3.5.").as_deref(),
            Some("/nodes/2/typeVersion")
        );
        assert_eq!(
            at("WorkflowHasIssuesError: The 'Fetch' node has issues: - Parameter \"URL\" is required.").as_deref(),
            Some("/nodes/1")
        );
        assert_eq!(at("something else"), None);
    }

    #[test]
    fn progress_is_saved_unless_the_program_says_otherwise() {
        assert_eq!(
            settings(&json!({"settings": {"executionOrder": "v1"}})),
            json!({"executionOrder": "v1", "saveExecutionProgress": true})
        );
        assert_eq!(settings(&json!({})), json!({"saveExecutionProgress": true}));
        assert_eq!(
            settings(&json!({"settings": {"saveExecutionProgress": false}})),
            json!({"saveExecutionProgress": false})
        );
    }

    #[test]
    fn the_input_becomes_the_triggers_items() {
        assert_eq!(items(&Value::Null), json!([{"json": {}}]));
        assert_eq!(items(&json!({"a": 1})), json!([{"json": {"a": 1}}]));
        assert_eq!(
            items(&json!([{"a": 1}, 2])),
            json!([{"json": {"a": 1}}, {"json": {"value": 2}}])
        );
    }

    #[test]
    fn owned_names_differ_per_run_and_reveal_nothing() {
        let (a, b) = (owned_name(&program()), owned_name(&program()));
        assert!(a.starts_with("pilotage-") && a.len() == 25, "{a}");
        assert_ne!(a, b);
    }
}
