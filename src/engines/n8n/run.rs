//! Running a workflow, as the steps of `engines::async_run`: create it in
//! the tenant's own project under a gateway-owned name (`pilotage-<digest>`)
//! with the tenant's API key and the Pilotage input pinned as its trigger's
//! output (beside the program's own `pinData`), run it manually from that
//! trigger with the tenant's login; the
//! execution ends when n8n stops it (past the deadline the gateway stops
//! it: `TimedOut`), is read into events, and the execution and the
//! workflow are deleted again: nothing is kept in n8n. n8n's refusals
//! (`Unrecognized node type`, a version it does not have,
//! `WorkflowHasIssuesError`) are `Rejected` with problems located at the
//! node they name.

use super::client::{Auth, Call, N8nAnswer};
use super::{N8nEngine, events, workflow};
use crate::engines::async_run::{AsyncRun, RunOrder, Submitted};
use crate::engines::http_client::accepted;
use crate::engines::pacing::Pacing;
use crate::engines::{EngineError, RawProblem, RunReply, RunState};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Statuses after which an execution changes no more.
const RUNNING: [&str; 4] = ["new", "running", "waiting", "unknown"];

/// A run of a workflow the adapter created: the workflow and its
/// execution.
pub struct WorkflowRun {
    workflow_id: String,
    execution_id: String,
}

#[async_trait::async_trait]
impl AsyncRun for N8nEngine {
    type Run = WorkflowRun;

    fn no_dry_run(&self) -> Option<&'static str> {
        Some("n8n has no dry run (n8n/v1 does not declare test_run)")
    }

    async fn submit(
        &self,
        tenant: &str,
        order: &RunOrder<'_>,
    ) -> Result<Submitted<WorkflowRun>, EngineError> {
        let program = order.program;
        workflow(program)?;
        let Some(trigger) = self.trigger(tenant, program).await? else {
            return Ok(Submitted::refused(vec![RawProblem {
                is_error: true,
                text: "the workflow has no trigger node: nothing can start it".into(),
                location: Some("/nodes".into()),
                unknown_level: None,
            }]));
        };
        let name = owned_name(RUN_PREFIX, program);
        let workflow_id = match self
            .create(tenant, "run", &name, program, &trigger, order.input)
            .await?
        {
            Ok(id) => id,
            Err(refused) => return Ok(Submitted::refused(vec![refused])),
        };
        let started = self.start(tenant, program, &trigger, &workflow_id).await;
        if !matches!(started, Ok(Start::Running(_))) {
            // Nothing runs: the workflow goes now.
            self.remove(tenant, &workflow_path(&workflow_id)).await;
        }
        Ok(match started? {
            Start::Running(execution_id) => Submitted::Started(WorkflowRun {
                workflow_id,
                execution_id,
            }),
            Start::Refused(problem) => Submitted::refused(vec![problem]),
        })
    }

    fn pacing(&self) -> Pacing {
        self.settings.pacing()
    }

    fn run_id<'r>(&self, run: &'r WorkflowRun) -> &'r str {
        &run.execution_id
    }

    async fn status(&self, tenant: &str, run: &WorkflowRun) -> Result<Value, EngineError> {
        self.read_execution(tenant, &run.execution_id)
            .await
            .map_err(|e| EngineError::RunBroken {
                message: e.to_string(),
                events: Vec::new(),
            })
    }

    fn ended(&self, execution: &Value) -> bool {
        let status = execution
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("");
        let stopped = execution.get("stoppedAt").is_some_and(|s| !s.is_null());
        stopped && !RUNNING.contains(&status)
    }

    async fn finish(
        &self,
        _tenant: &str,
        order: &RunOrder<'_>,
        run: &WorkflowRun,
        execution: Value,
    ) -> Result<RunReply, EngineError> {
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
                    let problem = refusal(&text, order.program);
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
            engine_run_id: Some(run.execution_id.clone()),
            state,
            result,
            error,
            events,
            problems,
        })
    }

    /// Asks n8n to stop the execution; whether it did.
    async fn cancel(&self, tenant: &str, run: &WorkflowRun) -> bool {
        let path = format!("/api/v1/executions/{}/stop", run.execution_id);
        let stop = Call::safe("cancel", Method::POST, &path);
        let answer = self.call(tenant, stop, Auth::Key, None).await;
        accepted(
            answer,
            |s| s.is_success(),
            |a| tracing::warn!(execution = %run.execution_id, error = %a.error(), "n8n refused to stop an execution past its deadline"),
            |e| tracing::warn!(execution = %run.execution_id, error = %e, "stopping an execution failed"),
        )
    }

    async fn events_so_far(&self, tenant: &str, run: &WorkflowRun) -> Vec<Value> {
        let read = self.read_execution(tenant, &run.execution_id).await.ok();
        let mut events = read.as_ref().map(events::events).unwrap_or_default();
        // The run was cut short: its last word is ours, not n8n's.
        events.retain(|e| e.get("execution").is_none());
        events.push(
            json!({"execution": "canceled", "error": "the run was cut short before it finished (its deadline passed, or it was cancelled)"}),
        );
        events
    }

    fn timed_out(&self, stopped: bool) -> String {
        if stopped {
            "the run did not finish by its deadline; n8n stopped it".into()
        } else {
            "the run did not finish by its deadline, and n8n did not accept its stop".into()
        }
    }

    /// The execution (unless the run broke off) and the workflow go.
    async fn clean_up(
        &self,
        tenant: &str,
        run: &WorkflowRun,
        reply: &Result<RunReply, EngineError>,
    ) {
        if let Ok(r) = reply
            && let Some(execution) = &r.engine_run_id
        {
            self.remove(tenant, &format!("/api/v1/executions/{execution}"))
                .await;
        }
        self.remove(tenant, &workflow_path(&run.workflow_id)).await;
    }
}

impl N8nEngine {
    /// Creates `program` inactive in the tenant's project under `name`,
    /// the Pilotage `input` pinned as `trigger`'s output (n8n then runs from
    /// it without waiting for a call or a schedule); the workflow's id, or
    /// n8n's refusal located at the node it names. Execute and validate's
    /// probe create alike, so what one is refused the other is too.
    pub(super) async fn create(
        &self,
        tenant: &str,
        operation: &'static str,
        name: &str,
        program: &Value,
        trigger: &str,
        input: &Value,
    ) -> Result<Result<String, RawProblem>, EngineError> {
        let body = json!({
            "name": name,
            "nodes": program.get("nodes").cloned().unwrap_or(json!([])),
            "connections": program.get("connections").cloned().unwrap_or(json!({})),
            "settings": settings(program),
            "pinData": pin_data(program, trigger, input),
        });
        let create = Call::once(operation, Method::POST, "/api/v1/workflows");
        let created = self.call(tenant, create, Auth::Key, Some(&body)).await?;
        if created.status.as_u16() == 400 {
            return Ok(Err(refusal(&created.message(), program)));
        }
        if !created.status.is_success() {
            return Err(EngineError::NotStarted(format!(
                "creating the workflow: {}",
                created.error()
            )));
        }
        match created.json().get("id").and_then(id_text) {
            Some(id) => Ok(Ok(id)),
            None => Err(EngineError::NotStarted(
                "creating the workflow: n8n's answer has no id".into(),
            )),
        }
    }

    /// Starts the created workflow from `trigger`.
    async fn start(
        &self,
        tenant: &str,
        program: &Value,
        trigger: &str,
        workflow_id: &str,
    ) -> Result<Start, EngineError> {
        let start = json!({"triggerToStartFrom": {"name": trigger}});
        let path = format!("/rest/workflows/{workflow_id}/run");
        let run = Call::once("run", Method::POST, &path);
        let started = self.call(tenant, run, Auth::Login, Some(&start)).await?;
        if started.status.as_u16() == 400 {
            return Ok(Start::Refused(refusal(&started.message(), program)));
        }
        if !started.status.is_success() {
            return Err(EngineError::NotStarted(format!(
                "starting the workflow: {}",
                started.error()
            )));
        }
        match started
            .json()
            .pointer("/data/executionId")
            .and_then(id_text)
        {
            Some(id) => Ok(Start::Running(id)),
            None => Err(EngineError::NotStarted(format!(
                "starting the workflow: n8n started no execution ({})",
                started.text.chars().take(200).collect::<String>()
            ))),
        }
    }

    /// The name of the program's first enabled trigger node (by the node
    /// descriptions), if it has one.
    pub(super) async fn trigger(
        &self,
        tenant: &str,
        program: &Value,
    ) -> Result<Option<String>, EngineError> {
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

    async fn read_execution(&self, tenant: &str, id: &str) -> Result<Value, EngineError> {
        let path = format!("/api/v1/executions/{id}?includeData=true");
        self.call_json(
            tenant,
            Call::get("poll", &path),
            Auth::Key,
            "reading the execution",
        )
        .await
    }

    /// Deletes what a run created (best effort, logged when it fails).
    pub(super) async fn remove(&self, tenant: &str, path: &str) {
        let answer = self
            .call(
                tenant,
                Call::safe("run", Method::DELETE, path),
                Auth::Key,
                None,
            )
            .await;
        accepted(
            answer,
            |s| s.is_success() || s == StatusCode::NOT_FOUND,
            |a| tracing::warn!(%path, status = a.status.as_u16(), "n8n kept something a run created"),
            |e| tracing::warn!(%path, error = %e, "n8n kept something a run created"),
        );
    }
}

/// What starting a created workflow came to.
enum Start {
    /// Its execution's id.
    Running(String),
    /// n8n's refusal: nothing runs.
    Refused(RawProblem),
}

/// The public API path of a created workflow.
pub(super) fn workflow_path(workflow_id: &str) -> String {
    format!("/api/v1/workflows/{workflow_id}")
}

/// The name prefix of the workflows runs create.
pub(super) const RUN_PREFIX: &str = "pilotage-";

/// A gateway-owned workflow name: `prefix`, then a digest of the program
/// and a nonce, so it says nothing of the tenant's own name and never meets
/// another run's.
pub(super) fn owned_name(prefix: &str, program: &Value) -> String {
    let nonce: [u8; 8] = rand::random();
    let mut h = Sha256::new();
    h.update(program.to_string().as_bytes());
    h.update(nonce);
    format!("{prefix}{}", &hex::encode(h.finalize())[..16])
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

/// The data pinned for the run: the program's own `pinData` (nodes that
/// hand on fixed items instead of running), with the Pilotage input pinned
/// on `trigger` in place of anything the program pinned there.
fn pin_data(program: &Value, trigger: &str, input: &Value) -> Value {
    let mut pins = program
        .get("pinData")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    pins.insert(trigger.to_string(), items(input));
    Value::Object(pins)
}

/// An id n8n gives as a string or a number.
pub(super) fn id_text(v: &Value) -> Option<String> {
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

/// One of n8n's refusals as a problem, located at the node it names
/// (its type, its version, or the node).
pub(super) fn refusal(message: &str, program: &Value) -> RawProblem {
    let nodes: &[Value] = program
        .get("nodes")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let find = |pred: &dyn Fn(&Value) -> bool| nodes.iter().position(pred);
    // The public API's schema check names the member it refuses:
    // `request/body/nodes/0/position Expected array, received string`.
    let location = if let Some(rest) = message.strip_prefix("request/body/") {
        rest.split_once(' ')
            .map(|(pointer, _)| format!("/{pointer}"))
    } else if let Some(t) = message.strip_prefix("Unrecognized node type: ") {
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
    fn a_refused_member_of_the_request_body_is_located_in_the_program() {
        let p = refusal(
            "request/body/settings/saveDataErrorExecution Invalid enum value. Expected 'all' | 'none', received 'sometimes'",
            &program(),
        );
        assert_eq!(
            p.location.as_deref(),
            Some("/settings/saveDataErrorExecution")
        );
        let p = refusal(
            "request/body/nodes/0/notes Expected string, received number",
            &program(),
        );
        assert_eq!(p.location.as_deref(), Some("/nodes/0/notes"));
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
    fn the_programs_pins_are_kept_and_the_input_is_pinned_on_the_trigger() {
        let program =
            json!({"pinData": {"Start": [{"json": {"old": 1}}], "Fetch": [{"json": {"n": 2}}]}});
        assert_eq!(
            pin_data(&program, "Start", &json!({"name": "ada"})),
            json!({"Start": [{"json": {"name": "ada"}}], "Fetch": [{"json": {"n": 2}}]})
        );
        assert_eq!(
            pin_data(&json!({"pinData": [1]}), "Start", &Value::Null),
            json!({"Start": [{"json": {}}]})
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
        let (a, b) = (
            owned_name(RUN_PREFIX, &program()),
            owned_name(RUN_PREFIX, &program()),
        );
        assert!(a.starts_with("pilotage-") && a.len() == 25, "{a}");
        assert_ne!(a, b);
    }
}
