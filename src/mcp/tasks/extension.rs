//! Revision 2026-07-28's tasks extension (`io.modelcontextprotocol/tasks`),
//! through rmcp's handler: a call of an execute tool from a client that
//! declared the extension starts its run at once and answers inline when it
//! ends within `tasks.inline_ms`, else as a task; `tasks/get` answers the
//! task with its result or error once ended; `tasks/cancel` stops it. rmcp
//! answers `-32021` to a client that did not declare the extension.

use super::TaskHost;
use super::record::{Ending, Status, TaskRecord};
use crate::auth::{Principal, Reach};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, DetailedTask, GetTaskResult, JsonObject,
    MetaObject, Task, TaskPayload, TaskStatus,
};
use serde_json::{Map, Value};
use std::time::Duration;

/// Whether a call from this caller, of this tool, is run as a possible
/// task: an execute tool, a caller a later request can be.
pub fn may_hold(host: &dyn TaskHost, principal: &Principal, tool: &str) -> bool {
    Reach::of(principal) == Reach::Lasting && host.task_deadline(tool).is_some()
}

/// The call run as a task, answered inline when it ends within the bound.
pub async fn call(
    host: &dyn TaskHost,
    principal: &Principal,
    tool: &str,
    arguments: Map<String, Value>,
) -> Result<CallToolResponse, McpError> {
    let tasks = host.tasks();
    let started = tasks.start(host, principal, tool, arguments, None).await?;
    let inline = Duration::from_millis(tasks.config().inline_ms);
    let mut drive = started.drive;
    match tokio::time::timeout(inline, &mut drive).await {
        Ok(Ok(Some(Ending::Result(result)))) => Ok(CallToolResponse::Complete(
            serde_json::from_value::<CallToolResult>(result).map_err(|e| {
                McpError::internal_error(format!("the answer did not read back: {e}"), None)
            })?,
        )),
        Ok(Ok(Some(Ending::Error(error)))) => Err(serde_json::from_value(error)
            .unwrap_or_else(|_| McpError::internal_error("the call failed", None))),
        // Still running, or ended some other way: the task says how.
        _ => {
            let record = tasks
                .get(host, principal, &started.record.task_id)
                .await?
                .unwrap_or(started.record);
            let mut meta = MetaObject::default();
            meta.0.insert(
                "io.modelcontextprotocol/model-immediate-response".into(),
                Value::String(format!(
                    "The run continues as task {}; poll tasks/get for its result.",
                    record.task_id
                )),
            );
            Ok(CallToolResponse::Task(
                CreateTaskResult::new(task_of(&record)).with_meta(meta),
            ))
        }
    }
}

/// `tasks/get`.
pub async fn get(
    host: &dyn TaskHost,
    principal: &Principal,
    task_id: &str,
) -> Result<GetTaskResult, McpError> {
    let record = known(host.tasks().get(host, principal, task_id).await?, task_id)?;
    Ok(GetTaskResult::new(detailed(&record)))
}

/// The key of the approval form among a held task's `inputRequests`.
pub const APPROVAL_INPUT: &str = "approval";

/// `tasks/update`: the owner's client answers the approval form (an
/// elicitation result: `accept` with `decision`, or `decline`/`cancel`).
pub async fn update(
    host: &dyn TaskHost,
    principal: &Principal,
    task_id: &str,
    responses: &rmcp::model::InputResponses,
) -> Result<(), McpError> {
    let Some(answer) = responses.get(APPROVAL_INPUT) else {
        return Err(McpError::invalid_params(
            format!("task {task_id} asks only for '{APPROVAL_INPUT}': approve or decline its run"),
            None,
        ));
    };
    let action = answer.get("action").and_then(Value::as_str);
    let decision = answer
        .get("content")
        .and_then(|c| c.get("decision"))
        .and_then(Value::as_str);
    let approve = match (action, decision) {
        (Some("accept"), Some("approve")) => true,
        (Some("accept"), Some("decline")) | (Some("decline" | "cancel"), _) => false,
        _ => {
            return Err(McpError::invalid_params(
                "answer the approval form with action accept and content.decision approve or decline (or action decline)",
                None,
            ));
        }
    };
    super::approvals::decide(
        host,
        super::approvals::Decider::Owner(principal),
        task_id,
        approve,
    )
    .await
    .map(drop)
}

/// `tasks/cancel`.
pub async fn cancel(
    host: &dyn TaskHost,
    principal: &Principal,
    task_id: &str,
) -> Result<(), McpError> {
    known(
        host.tasks().cancel(host, principal, task_id).await?,
        task_id,
    )
    .map(drop)
}

fn known(task: Option<TaskRecord>, task_id: &str) -> Result<TaskRecord, McpError> {
    task.ok_or_else(|| McpError::invalid_params(format!("no task {task_id}"), None))
}

/// The task's base fields, as this revision names them.
fn task_of(record: &TaskRecord) -> Task {
    let fields = record.common_fields();
    let text = |k: &str| {
        fields
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let status = match record.status {
        Status::Working => TaskStatus::Working,
        Status::InputRequired => TaskStatus::InputRequired,
        Status::Completed => TaskStatus::Completed,
        Status::Failed => TaskStatus::Failed,
        Status::Cancelled => TaskStatus::Cancelled,
    };
    let mut task = Task::new(
        record.task_id.clone(),
        status,
        text("createdAt"),
        text("lastUpdatedAt"),
    )
    .with_ttl_ms(record.ttl_ms)
    .with_poll_interval_ms(record.poll_ms);
    if let Some(message) = &record.message {
        task = task.with_status_message(message.clone());
    }
    task
}

/// The task with its result or error once ended: a call that answered a
/// result (a failed run included) is `completed` with it; one that answered
/// a JSON-RPC error is `failed` with it.
fn detailed(record: &TaskRecord) -> DetailedTask {
    let payload = match (&record.ending, record.status) {
        (_, Status::Cancelled) => TaskPayload::Cancelled,
        (Some(Ending::Result(result)), _) => TaskPayload::Completed {
            result: object(result),
        },
        (Some(Ending::Error(error)), _) => TaskPayload::Failed {
            error: object(error),
        },
        (None, Status::Failed | Status::Completed) => {
            let mut error = JsonObject::new();
            error.insert("code".into(), Value::from(-32603));
            error.insert(
                "message".into(),
                Value::String(record.message.clone().unwrap_or_default()),
            );
            TaskPayload::Failed { error }
        }
        (None, Status::InputRequired) => match &record.hold {
            Some(hold) => {
                let mut requests = rmcp::model::InputRequests::new();
                if let Ok(form) = serde_json::from_value(super::approvals::form(hold)) {
                    requests.insert(APPROVAL_INPUT.into(), form);
                }
                TaskPayload::InputRequired {
                    input_requests: requests,
                }
            }
            None => TaskPayload::Working,
        },
        (None, _) => TaskPayload::Working,
    };
    DetailedTask::new(task_of(record), payload)
}

fn object(value: &Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}
