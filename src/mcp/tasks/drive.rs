//! One task's run on the instance that holds it: the execute call with the
//! task's own deadline and stop, the lease renewed beside it (and a cancel
//! seen by another instance turned into this run's stop), then the call's
//! answer written as the task's ending unless the task ended otherwise. A
//! call that needs a person's approval is held: the task waits in
//! `input_required` until someone decides, then the approved run is called.

use super::TaskHost;
use super::approvals;
use super::record::{Ending, Status, TaskRecord};
use super::{Tasks, WRITE_ATTEMPTS, read, write};
use crate::auth::Principal;
use crate::execute::RunTerms;
use crate::execute::approval::{Approved, Hold, HoldSlot};
use crate::mcp::call_request::CallRequest;
use crate::store::now_ms;
use axum::http::HeaderMap;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ServerResult};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The longest pause between two reads while a held run waits.
const DECISION_POLL: Duration = Duration::from_millis(500);

pub(super) struct Drive {
    pub(super) tasks: Arc<Tasks>,
    pub(super) host: Arc<dyn TaskHost>,
    pub(super) principal: Principal,
    pub(super) record: TaskRecord,
    pub(super) stop: CancellationToken,
    /// Driven since the instance that started it died.
    pub(super) taken_over: bool,
}

impl Drive {
    /// Runs the call to its end; the ending written (or `None` when the
    /// task had ended otherwise: cancelled, declined, expired, or finished
    /// by another instance).
    pub(super) async fn run(self) -> Option<Ending> {
        let ending = tokio::select! {
            ending = self.held_or_run() => ending,
            () = self.keep_lease() => {
                // The lease loop ends only when the task ended elsewhere
                // (cancelled, declined): the call stops, its answer dropped.
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

    /// The call; when it is held for approval, the wait for the decision
    /// and then the approved call.
    async fn held_or_run(&self) -> Option<Ending> {
        let mut approved = self.record.decision.as_ref().and_then(|d| {
            let hold = self.record.hold.as_ref()?;
            d.approve.then(|| approved_run(hold))
        });
        // A held run is called at most twice: held, then approved (a
        // second hold means the approval no longer fits; it is answered).
        for _ in 0..2 {
            let slot = HoldSlot::default();
            let ending = self.call(Some(slot.clone()), approved.clone()).await;
            let Some(hold) = slot.take() else {
                return Some(ending);
            };
            if approved.is_some() {
                return Some(ending);
            }
            approved = Some(self.wait_for_decision(hold).await?);
        }
        None
    }

    /// The execute call as the task's caller, its answer as an ending.
    async fn call(&self, hold: Option<HoldSlot>, approved: Option<Approved>) -> Ending {
        let lang_deadline = self
            .host
            .task_deadline(&self.record.tool)
            .unwrap_or(Duration::from_secs(3600));
        let headers = HeaderMap::new();
        let request = CallRequest {
            principal: &self.principal,
            session: None,
            arguments: Some(self.record.arguments.clone()),
            received: None,
            peer: None,
            headers: &headers,
            retry_after: None,
            fields: None,
            trace: None,
            terms: RunTerms {
                deadline: Some(lang_deadline),
                stop: Some(self.stop.clone()),
                holder_gone: self.taken_over,
                hold,
                approved,
            },
        };
        let params = CallToolRequestParams::new(self.record.tool.clone());
        match self.host.call(params, request).await {
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
        }
    }

    /// Moves the task to `input_required` with `hold`, lists it for the
    /// tenant's approvers, and waits until a person decides. `Some`: the
    /// approval; `None`: declined, cancelled or expired (the task says so).
    async fn wait_for_decision(&self, hold: Hold) -> Option<Approved> {
        let task_id = &self.record.task_id;
        let mut held = None;
        for _ in 0..WRITE_ATTEMPTS {
            let record = read(&*self.host, &self.principal, task_id).await.ok()??;
            if record.status.is_terminal() {
                return None;
            }
            let mut next = record.moved(now_ms());
            next.status = Status::InputRequired;
            next.message = Some(approvals::waiting_message(&hold));
            next.hold = Some(hold.clone());
            next.decision = None;
            if write(&*self.host, &self.principal, &record, &next)
                .await
                .ok()?
            {
                held = Some(next);
                break;
            }
        }
        let held = held?;
        approvals::list_for_approvers(&*self.host, &self.principal, &held).await;
        tracing::info!(task_id, risk = %hold.risk, scope = %self.principal.scope, "run held for approval");
        let poll = Duration::from_millis(held.poll_ms).min(DECISION_POLL);
        // Bounded: the task is read until it is decided or ends, at most
        // as long as its lifetime (then it has left the store).
        let polls = held.ttl_ms / poll.as_millis().max(1) as u64 + 2;
        for _ in 0..polls {
            tokio::time::sleep(poll).await;
            let record = match read(&*self.host, &self.principal, task_id).await {
                Ok(Some(record)) => record,
                Ok(None) => return None,
                Err(_) => continue,
            };
            if record.status.is_terminal() {
                return None;
            }
            if let Some(decision) = &record.decision
                && decision.approve
            {
                return Some(approved_run(&hold));
            }
        }
        None
    }

    /// Renews the lease until the task ends elsewhere (then returns); runs
    /// as long as the call when nothing happens.
    async fn keep_lease(&self) {
        let lease = Duration::from_millis(self.tasks.config.lease_ms);
        loop {
            tokio::time::sleep(lease / 3).await;
            let Ok(Some(record)) = read(&*self.host, &self.principal, &self.record.task_id).await
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
            let _ = write(&*self.host, &self.principal, &record, &next).await;
        }
    }

    /// Writes the ending over the task, unless it ended otherwise first.
    async fn finish(&self, ending: Ending) -> Option<Ending> {
        let task_id = &self.record.task_id;
        for _ in 0..WRITE_ATTEMPTS {
            let record = read(&*self.host, &self.principal, task_id).await.ok()??;
            if record.status.is_terminal() {
                return None;
            }
            let mut next = record.moved(now_ms());
            let (status, message) = settled(&ending);
            next.status = status;
            next.message = Some(message);
            next.ending = Some(ending.clone());
            if write(&*self.host, &self.principal, &record, &next)
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

fn approved_run(hold: &Hold) -> Approved {
    Approved {
        digest: hold.digest.clone(),
        catalog_version: hold.catalog_version.clone(),
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
