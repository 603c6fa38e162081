//! Runs that outlive their request: MCP Tasks for the execute tools, in
//! both forms (revision 2025-11-25's `tasks` capability, answered by the
//! front in [`legacy`]; revision 2026-07-28's `io.modelcontextprotocol/tasks`
//! extension, answered through rmcp's handler in [`extension`]).
//!
//! A task is written to the store before its id is answered, so any
//! instance resolves it. The instance that created it drives its run
//! ([`drive`]) under a lease it renews; when the lease lapses (the instance
//! died), the next instance asked about the task takes the run over by
//! calling execute again with the task's arguments and idempotency key: a
//! run that already ended is replayed, one that never started runs, and one
//! that started is never run a second time. Cancel moves the task to
//! `cancelled` at once and stops the run wherever it waits, reaching the
//! engine. Only the task's principal sees it: records live in its scope.

pub mod approvals;
mod drive;
pub mod extension;
pub mod legacy;
pub mod record;

use crate::auth::{Principal, Reach};
use crate::config::tasks::TasksConfig;
use crate::store::{StoreError, now_ms};
use record::{Ending, Status, TaskRecord};
use rmcp::ErrorData as McpError;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What a task needs to know of the execute call it holds.
pub struct TaskCall {
    /// The language keeps idempotency keys (a taken-over run is replayed).
    pub idempotent: bool,
    /// The language's retention, which caps a task's lifetime.
    pub retention_ms: Option<u64>,
}

/// What tasks need of the MCP server that holds them: the gateway, the
/// tasks service, the checks of a call a task may hold, and the call
/// itself. The server implements it, so tasks never name the server.
#[async_trait::async_trait]
pub trait TaskHost: Send + Sync + 'static {
    fn gateway(&self) -> &Arc<crate::gateway::Gateway>;
    fn tasks(&self) -> &Arc<Tasks>;
    /// Whether a `tools/call` may be held by a task (an execute tool, with
    /// arguments its schema accepts).
    fn task_call(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<TaskCall, McpError>;
    /// The run deadline of a task holding a call of the execute tool `tool`.
    fn task_deadline(&self, tool: &str) -> Option<std::time::Duration>;
    /// One `tools/call`, as the server answers it.
    async fn call(
        &self,
        params: rmcp::model::CallToolRequestParams,
        request: super::call_request::CallRequest<'_>,
    ) -> Result<super::answer::Answer, McpError>;
    /// A handle a spawned run keeps.
    fn shared(&self) -> Arc<dyn TaskHost>;
}

/// How many times a write that lost a race re-reads and tries again.
const WRITE_ATTEMPTS: usize = 8;

/// The tasks service of one gateway instance.
pub struct Tasks {
    /// This process, as a task's holder.
    instance: String,
    config: TasksConfig,
    /// The stops of the runs this instance drives, by task id.
    running: Mutex<HashMap<String, CancellationToken>>,
}

/// What a started task hands its starter: the record as answered, and the
/// drive, which ends with the run.
pub struct Started {
    pub record: TaskRecord,
    pub drive: JoinHandle<Option<Ending>>,
}

impl Tasks {
    pub fn new(config: TasksConfig) -> Self {
        Self {
            instance: format!("gw_{:032x}", rand::random::<u128>()),
            config,
            running: Mutex::new(HashMap::new()),
        }
    }

    pub fn config(&self) -> &TasksConfig {
        &self.config
    }

    /// Creates a task for a `tools/call` of an execute tool and starts its
    /// run. `ttl_ms`: what the client asked for, capped. Refused before
    /// anything is written: a caller no later request can be (it could
    /// never read the task), a tool that is not an execute tool, arguments
    /// the tool refuses.
    pub async fn start(
        self: &Arc<Self>,
        host: &dyn TaskHost,
        principal: &Principal,
        tool: &str,
        mut arguments: Map<String, Value>,
        ttl_ms: Option<u64>,
    ) -> Result<Started, McpError> {
        if Reach::of(principal) != Reach::Lasting {
            return Err(McpError::invalid_request(
                format!(
                    "a task needs a caller a later request can be: {}; call without a task, or with an API key or token",
                    crate::execute::PASSING_CALLER
                ),
                None,
            ));
        }
        let task_id = format!("task_{:032x}", rand::random::<u128>());
        let shape = host.task_call(principal, tool, &arguments)?;
        if shape.idempotent && !arguments.contains_key("idempotency_key") {
            arguments.insert(
                "idempotency_key".into(),
                Value::String(format!("pilotage-{task_id}")),
            );
        }
        let cap = shape
            .retention_ms
            .map_or(self.config.max_ttl_ms, |r| r.min(self.config.max_ttl_ms));
        let now = now_ms();
        let record = TaskRecord {
            task_id: task_id.clone(),
            revision: 0,
            status: Status::Working,
            message: Some("the run is in progress".into()),
            created_ms: now,
            updated_ms: now,
            ttl_ms: ttl_ms.unwrap_or(cap).clamp(1_000, cap),
            poll_ms: self.config.poll_interval_ms,
            tool: tool.to_owned(),
            arguments,
            ending: None,
            holder: self.instance.clone(),
            lease_until_ms: now.saturating_add(self.config.lease_ms),
            replayable: shape.idempotent,
            hold: None,
            decision: None,
        };
        let written = host
            .gateway()
            .store
            .put_task(
                &principal.scope,
                &task_id,
                &record.to_value(),
                std::time::Duration::from_millis(record.ttl_ms),
                None,
            )
            .await
            .map_err(store_failed)?;
        if !written {
            return Err(McpError::internal_error("a task id was drawn twice", None));
        }
        let drive = self.spawn(host, principal, &record, false);
        Ok(Started { record, drive })
    }

    /// The caller's task, taken over first when its driver is gone. `None`:
    /// no such task for this caller (never created, expired, or another's).
    pub async fn get(
        self: &Arc<Self>,
        host: &dyn TaskHost,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Option<TaskRecord>, McpError> {
        let Some(record) = read(host, principal, task_id).await? else {
            return Ok(None);
        };
        Ok(Some(
            self.resume_if_abandoned(host, principal, record).await?,
        ))
    }

    /// Every task of the caller, newest first.
    pub async fn list(
        &self,
        host: &dyn TaskHost,
        principal: &Principal,
    ) -> Result<Vec<TaskRecord>, McpError> {
        let mut tasks: Vec<TaskRecord> = host
            .gateway()
            .store
            .list_tasks(&principal.scope)
            .await
            .map_err(store_failed)?
            .into_iter()
            .filter_map(TaskRecord::from_value)
            .collect();
        tasks.sort_by(|a, b| (b.created_ms, &b.task_id).cmp(&(a.created_ms, &a.task_id)));
        Ok(tasks)
    }

    /// Moves the caller's task to `cancelled` and stops its run. `Ok(None)`:
    /// no such task; a task already ended is refused (`-32602`).
    pub async fn cancel(
        &self,
        host: &dyn TaskHost,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Option<TaskRecord>, McpError> {
        for _ in 0..WRITE_ATTEMPTS {
            let Some(record) = read(host, principal, task_id).await? else {
                return Ok(None);
            };
            if record.status.is_terminal() {
                return Err(McpError::invalid_params(
                    format!(
                        "task {task_id} has already ended ({}); only a running task can be cancelled",
                        record.status.as_str()
                    ),
                    None,
                ));
            }
            let now = now_ms();
            let mut next = record.moved(now);
            next.status = Status::Cancelled;
            next.message = Some("the task was cancelled on request".into());
            if write(host, principal, &record, &next).await? {
                self.stop_local(task_id);
                tracing::info!(task_id, scope = %principal.scope, "task cancelled");
                return Ok(Some(next));
            }
        }
        Err(McpError::internal_error(
            "the task kept changing while it was cancelled; try again",
            None,
        ))
    }

    /// A running task whose lease lapsed is driven from here on.
    async fn resume_if_abandoned(
        self: &Arc<Self>,
        host: &dyn TaskHost,
        principal: &Principal,
        record: TaskRecord,
    ) -> Result<TaskRecord, McpError> {
        let now = now_ms();
        let driven = matches!(record.status, Status::Working | Status::InputRequired);
        if !driven || record.lease_until_ms > now {
            return Ok(record);
        }
        let mut next = record.moved(now);
        next.holder = self.instance.clone();
        next.lease_until_ms = now.saturating_add(self.config.lease_ms);
        if !next.replayable && record.status == Status::Working {
            // Without an idempotency key a second call could run it twice.
            next.status = Status::Failed;
            next.message = Some("the instance running this task stopped; its run may or may not have taken effect, and it is not run again (the language keeps no idempotency keys)".into());
        }
        if !write(host, principal, &record, &next).await? {
            // Someone else moved it first: theirs is the current record.
            return Ok(read(host, principal, &record.task_id)
                .await?
                .unwrap_or(record));
        }
        if matches!(next.status, Status::Working | Status::InputRequired) {
            tracing::info!(task_id = %next.task_id, from = %record.holder, "task taken over");
            drop(self.spawn(host, principal, &next, true));
        }
        Ok(next)
    }

    fn spawn(
        self: &Arc<Self>,
        host: &dyn TaskHost,
        principal: &Principal,
        record: &TaskRecord,
        taken_over: bool,
    ) -> JoinHandle<Option<Ending>> {
        let stop = CancellationToken::new();
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(record.task_id.clone(), stop.clone());
        let drive = drive::Drive {
            tasks: Arc::clone(self),
            host: host.shared(),
            principal: principal.clone(),
            record: record.clone(),
            stop,
            taken_over,
        };
        tokio::spawn(drive.run())
    }

    fn stop_local(&self, task_id: &str) {
        if let Some(stop) = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(task_id)
        {
            stop.cancel();
        }
    }

    fn forget(&self, task_id: &str) {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(task_id);
    }
}

/// The caller's stored task.
async fn read(
    host: &dyn TaskHost,
    principal: &Principal,
    task_id: &str,
) -> Result<Option<TaskRecord>, McpError> {
    let stored = host
        .gateway()
        .store
        .get_task(&principal.scope, task_id)
        .await
        .map_err(store_failed)?;
    Ok(stored.and_then(TaskRecord::from_value))
}

/// Writes `next` over `read` (the revision it was made from); whether it won.
async fn write(
    host: &dyn TaskHost,
    principal: &Principal,
    read: &TaskRecord,
    next: &TaskRecord,
) -> Result<bool, McpError> {
    host.gateway()
        .store
        .put_task(
            &principal.scope,
            &next.task_id,
            &next.to_value(),
            std::time::Duration::from_millis(next.ttl_left_ms(now_ms())),
            Some(read.revision),
        )
        .await
        .map_err(store_failed)
}

fn store_failed(e: StoreError) -> McpError {
    McpError::internal_error(format!("the task store failed: {e}"), None)
}
