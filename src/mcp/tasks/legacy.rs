//! Revision 2025-11-25's tasks, answered by the front: rmcp knows only the
//! 2026-07-28 extension, so a `tools/call` carrying `params.task` and the
//! methods `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`
//! from a peer on an earlier revision never reach it. The same task service
//! serves both forms; only the shapes differ (`ttl`, `pollInterval`, the
//! result through `tasks/result` with the related-task `_meta`).
//!
//! Also here: what such a peer is told of tasks in `initialize`
//! (`capabilities.tasks`) and `tools/list` (`execution.taskSupport` of the
//! execute tools), which rmcp's types have no room for.

use super::TaskHost;
use super::record::{Ending, Status, TaskRecord};
use crate::auth::Principal;
use crate::mcp::carrier::INTERNAL_ERROR;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Response, StatusCode, header};
use rmcp::ErrorData as McpError;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Tasks listed per `tasks/list` page.
const PAGE: usize = 50;
/// The longest pause between two reads while `tasks/result` waits.
const RESULT_WAIT_STEP: Duration = Duration::from_millis(500);

/// A message about tasks the front answers itself.
pub enum TaskMessage {
    /// A `tools/call` with `params.task`.
    Create {
        id: Value,
        name: String,
        arguments: Option<Map<String, Value>>,
        ttl: Option<u64>,
    },
    Get {
        id: Value,
        task_id: String,
    },
    Result {
        id: Value,
        task_id: String,
    },
    List {
        id: Value,
        cursor: Option<String>,
    },
    Cancel {
        id: Value,
        task_id: String,
    },
    /// A task method whose params do not read (`-32602`).
    Malformed {
        id: Value,
        why: String,
    },
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Value,
    method: String,
    #[serde(default)]
    params: Map<String, Value>,
}

/// The task message in `body`, if it is one. Cheap for every other
/// message: nothing is parsed unless the text mentions a task.
pub fn recognise(body: &[u8]) -> Option<TaskMessage> {
    let mentions = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    if !mentions(b"\"task") {
        return None;
    }
    let envelope: Envelope = serde_json::from_slice(body).ok()?;
    let Envelope { id, method, params } = envelope;
    let task_id = |params: &Map<String, Value>| match params.get("taskId") {
        Some(Value::String(t)) => Ok(t.clone()),
        _ => Err("params.taskId must be a string".to_string()),
    };
    let malformed = |id: Value, why: String| Some(TaskMessage::Malformed { id, why });
    match method.as_str() {
        "tools/call" => {
            let task = params.get("task")?;
            let ttl = match task.get("ttl") {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(ttl) => Some(ttl),
                    None => {
                        return malformed(
                            id,
                            "params.task.ttl must be a whole number of milliseconds".into(),
                        );
                    }
                },
            };
            if !task.is_object() {
                return malformed(id, "params.task must be an object".into());
            }
            let Some(Value::String(name)) = params.get("name") else {
                return malformed(id, "params.name must be a string".into());
            };
            let arguments = match params.get("arguments") {
                Some(Value::Object(a)) => Some(a.clone()),
                _ => None,
            };
            Some(TaskMessage::Create {
                id,
                name: name.clone(),
                arguments,
                ttl,
            })
        }
        "tasks/get" | "tasks/result" | "tasks/cancel" => Some(match task_id(&params) {
            Err(why) => TaskMessage::Malformed { id, why },
            Ok(task_id) => match method.as_str() {
                "tasks/get" => TaskMessage::Get { id, task_id },
                "tasks/result" => TaskMessage::Result { id, task_id },
                _ => TaskMessage::Cancel { id, task_id },
            },
        }),
        "tasks/list" => match params.get("cursor") {
            None | Some(Value::Null) => Some(TaskMessage::List { id, cursor: None }),
            Some(Value::String(c)) => Some(TaskMessage::List {
                id,
                cursor: Some(c.clone()),
            }),
            Some(_) => malformed(id, "params.cursor must be a string".into()),
        },
        _ => None,
    }
}

/// The answer to a task message of `principal`; `lifted`: the call's
/// arguments when the front already read them out of the message.
pub async fn answer(
    host: &dyn TaskHost,
    principal: &Principal,
    message: TaskMessage,
    lifted: Option<Map<String, Value>>,
) -> Response<Body> {
    let tasks = host.tasks();
    let (id, answered) = match message {
        TaskMessage::Malformed { id, why } => (id, Err(McpError::invalid_params(why, None))),
        TaskMessage::Create {
            id,
            name,
            arguments,
            ttl,
        } => {
            let arguments = lifted.or(arguments).unwrap_or_default();
            let created = tasks.start(host, principal, &name, arguments, ttl).await;
            (id, created.map(|started| created_task(&started.record)))
        }
        TaskMessage::Get { id, task_id } => {
            let found = tasks.get(host, principal, &task_id).await;
            (
                id,
                found
                    .and_then(|t| known(t, &task_id))
                    .map(|t| task_fields(&t)),
            )
        }
        TaskMessage::Result { id, task_id } => {
            (id.clone(), result_of(host, principal, &task_id).await)
        }
        TaskMessage::List { id, cursor } => (id, list(host, principal, cursor).await),
        TaskMessage::Cancel { id, task_id } => {
            let cancelled = tasks.cancel(host, principal, &task_id).await;
            (
                id,
                cancelled
                    .and_then(|t| known(t, &task_id))
                    .map(|t| task_fields(&t)),
            )
        }
    };
    let body = match answered {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
    };
    json_response(&body)
}

/// Blocks until the task ends, then answers what its call answered.
async fn result_of(
    host: &dyn TaskHost,
    principal: &Principal,
    task_id: &str,
) -> Result<Value, McpError> {
    let tasks = host.tasks();
    loop {
        let task = known(tasks.get(host, principal, task_id).await?, task_id)?;
        if task.status.is_terminal() {
            return ended(&task);
        }
        let wait = Duration::from_millis(task.poll_ms).min(RESULT_WAIT_STEP);
        // Bounded: a task ends, or expires and reads as unknown, within its
        // lifetime.
        tokio::time::sleep(wait).await;
    }
}

/// An ended task's answer: its call's result with the related-task
/// `_meta`, or its call's error.
fn ended(task: &TaskRecord) -> Result<Value, McpError> {
    match (&task.ending, task.status) {
        (Some(Ending::Result(result)), _) => {
            let mut result = result.clone();
            if let Some(object) = result.as_object_mut() {
                // This peer's revision has no `resultType`.
                object.remove("resultType");
                let meta = object
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(
                        "io.modelcontextprotocol/related-task".into(),
                        json!({"taskId": task.task_id}),
                    );
                }
            }
            Ok(result)
        }
        (Some(Ending::Error(error)), _) => Err(serde_json::from_value(error.clone())
            .unwrap_or_else(|_| McpError::internal_error("the task's call failed", None))),
        (None, Status::Cancelled) => Err(McpError::invalid_params(
            format!("task {} was cancelled: it has no result", task.task_id),
            None,
        )),
        (None, _) => Err(McpError::internal_error(
            task.message
                .clone()
                .unwrap_or_else(|| "the task ended without a result".into()),
            None,
        )),
    }
}

async fn list(
    host: &dyn TaskHost,
    principal: &Principal,
    cursor: Option<String>,
) -> Result<Value, McpError> {
    let start = match cursor.as_deref() {
        None => 0,
        Some(c) => c
            .strip_prefix("after-")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| McpError::invalid_params(format!("unknown cursor {c:?}"), None))?,
    };
    let tasks = host.tasks().list(host, principal).await?;
    let page: Vec<Value> = tasks
        .iter()
        .skip(start)
        .take(PAGE)
        .map(task_fields)
        .collect();
    let mut result = json!({"tasks": page});
    if start + PAGE < tasks.len() {
        result["nextCursor"] = Value::String(format!("after-{}", start + PAGE));
    }
    Ok(result)
}

/// `Some` task, or the answer for an unknown one (the same for another
/// principal's task).
fn known(task: Option<TaskRecord>, task_id: &str) -> Result<TaskRecord, McpError> {
    task.ok_or_else(|| {
        McpError::invalid_params(format!("Failed to retrieve task: no task {task_id}"), None)
    })
}

/// A task as this revision shapes it.
pub fn task_fields(task: &TaskRecord) -> Value {
    let mut fields = task.common_fields();
    fields.insert("ttl".into(), json!(task.ttl_ms));
    fields.insert("pollInterval".into(), json!(task.poll_ms));
    Value::Object(fields)
}

fn created_task(task: &TaskRecord) -> Value {
    json!({
        "task": task_fields(task),
        "_meta": {
            "io.modelcontextprotocol/model-immediate-response": format!(
                "The run continues as task {}; its result will follow.",
                task.task_id
            ),
        },
    })
}

fn json_response(body: &Value) -> Response<Body> {
    match serde_json::to_vec(body) {
        Ok(bytes) => {
            let mut response = Response::new(Body::from(Bytes::from(bytes)));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => crate::mcp::carrier::rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            Value::Null,
            INTERNAL_ERROR,
            &format!("the answer could not be written: {e}"),
        ),
    }
}

/// What a peer on revision 2025-11-25 is told of tasks in `initialize`:
/// list, cancel and task-augmented `tools/call`.
pub fn capability() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
}

/// Amends a successful `initialize` or `tools/list` answer for a peer on
/// revision 2025-11-25 with what rmcp's types drop: `capabilities.tasks`,
/// and `execution.taskSupport: "optional"` on each execute tool (`execute`
/// names them). Anything else, or a body that does not read, is left as it is.
pub fn amend(body: &[u8], method: &str, execute: impl Fn(&str) -> bool) -> Option<Vec<u8>> {
    let mut message: Value = serde_json::from_slice(body).ok()?;
    let result = message.get_mut("result")?.as_object_mut()?;
    match method {
        "initialize" => {
            if result.get("protocolVersion")?.as_str()? != "2025-11-25" {
                return None;
            }
            result
                .get_mut("capabilities")?
                .as_object_mut()?
                .insert("tasks".into(), capability());
        }
        "tools/list" => {
            for tool in result.get_mut("tools")?.as_array_mut()? {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                if execute(name)
                    && let Some(tool) = tool.as_object_mut()
                {
                    tool.insert("execution".into(), json!({"taskSupport": "optional"}));
                }
            }
        }
        _ => return None,
    }
    serde_json::to_vec(&message).ok()
}
