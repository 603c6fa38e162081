//! One task's run on the instance that holds it: the execute call with the
//! task's own deadline and stop, the lease renewed beside it (and a cancel
//! seen by another instance turned into this run's stop), then the call's
//! answer written as the task's ending unless the task ended otherwise.

use super::record::{Ending, Status, TaskRecord};
use super::{Tasks, WRITE_ATTEMPTS, read, write};
use crate::auth::Principal;
use crate::execute::RunTerms;
use crate::mcp::call_request::CallRequest;
use crate::mcp::server::PilotageServer;
use crate::store::now_ms;
use axum::http::HeaderMap;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ServerResult};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub(super) struct Drive {
    pub(super) tasks: Arc<Tasks>,
    pub(super) server: PilotageServer,
    pub(super) principal: Principal,
    pub(super) record: TaskRecord,
    pub(super) stop: CancellationToken,
    /// Driven since the instance that started it died.
    pub(super) taken_over: bool,
}

impl Drive {
    /// Runs the call to its end; the ending written (or `None` when the
    /// task had ended otherwise: cancelled, or finished by another instance).
    pub(super) async fn run(self) -> Option<Ending> {
        let ending = tokio::select! {
            ending = self.call() => ending,
            () = self.keep_lease() => {
                // The lease loop ends only when the task ended elsewhere
                // (cancelled): the call stops, and its answer is dropped.
                self.stop.cancel();
                None
            }
        };
        let written = match ending {
            Some(ending) => self.finish(ending).await,
            None => None,
        };
        self.tasks.forget(&self.record.task_id);
        written
    }

    /// The execute call as the task's caller, its answer as an ending.
    async fn call(&self) -> Option<Ending> {
        let lang_deadline = self
            .server
            .task_deadline(&self.record.tool)
            .unwrap_or(Duration::from_secs(3600));
        let headers = HeaderMap::new();
        let request = CallRequest {
            principal: &self.principal,
            session: None,
            arguments: Some(self.record.arguments.clone()),
            peer: None,
            headers: &headers,
            retry_after: None,
            fields: None,
            trace: None,
            terms: RunTerms {
                deadline: Some(lang_deadline),
                stop: Some(self.stop.clone()),
                holder_gone: self.taken_over,
            },
        };
        let params = CallToolRequestParams::new(self.record.tool.clone());
        let answered = self.server.call(params, request).await;
        Some(match answered {
            Ok(answer) => {
                let result = ServerResult::from(CallToolResponse::from(answer.into_result()));
                match serde_json::to_value(result) {
                    Ok(value) => Ending::Result(value),
                    Err(e) => Ending::Error(serde_json::json!({
                        "code": -32603,
                        "message": format!("the answer could not be written: {e}"),
                    })),
                }
            }
            Err(e) => Ending::Error(serde_json::to_value(e).unwrap_or_default()),
        })
    }

    /// Renews the lease until the task ends elsewhere (then returns); runs
    /// as long as the call when nothing happens.
    async fn keep_lease(&self) {
        let lease = Duration::from_millis(self.tasks.config.lease_ms);
        loop {
            tokio::time::sleep(lease / 3).await;
            let Ok(Some(record)) = read(&self.server, &self.principal, &self.record.task_id).await
            else {
                // The store did not answer: try again at the next beat (the
                // lease has two more beats to run); a task gone is expired.
                continue;
            };
            if record.status.is_terminal() {
                return;
            }
            if record.holder != self.tasks.instance {
                // Another instance took the run over while this one could
                // not renew: the idempotency key keeps it one run; let the
                // call finish and whoever ends first write the ending.
                std::future::pending::<()>().await;
            }
            let now = now_ms();
            let mut next = record.moved(now);
            next.lease_until_ms = now.saturating_add(self.tasks.config.lease_ms);
            let _ = write(&self.server, &self.principal, &record, &next).await;
        }
    }

    /// Writes the ending over the task, unless it ended otherwise first.
    async fn finish(&self, ending: Ending) -> Option<Ending> {
        let task_id = &self.record.task_id;
        for _ in 0..WRITE_ATTEMPTS {
            let record = read(&self.server, &self.principal, task_id).await.ok()??;
            if record.status.is_terminal() {
                return None;
            }
            let mut next = record.moved(now_ms());
            let (status, message) = settled(&ending);
            next.status = status;
            next.message = Some(message);
            next.ending = Some(ending.clone());
            if write(&self.server, &self.principal, &record, &next)
                .await
                .ok()?
            {
                tracing::info!(task_id, status = status.as_str(), "task ended");
                return Some(ending);
            }
        }
        tracing::warn!(
            task_id,
            "the task's ending could not be written: it kept changing"
        );
        None
    }
}

/// The status an ending gives its task: a JSON-RPC error or a result with
/// `isError` is `failed` (as revision 2025-11-25 says of tool calls).
fn settled(ending: &Ending) -> (Status, String) {
    match ending {
        Ending::Error(e) => (
            Status::Failed,
            e.get("message")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("the call failed")
                .to_owned(),
        ),
        Ending::Result(r) if r.get("isError") == Some(&serde_json::Value::Bool(true)) => (
            Status::Failed,
            first_text(r).unwrap_or("the call failed").to_owned(),
        ),
        Ending::Result(r) => (
            Status::Completed,
            first_text(r).unwrap_or("the run ended").to_owned(),
        ),
    }
}

fn first_text(result: &serde_json::Value) -> Option<&str> {
    result.get("content")?.get(0)?.get("text")?.as_str()
}
