//! Held runs and the people who decide them. A held run is listed for its
//! tenant's approvers (an index record under the tenant, beside the owner's
//! task) and decided either by the owner's own client (the elicitation of
//! the 2026-07-28 form: the person at that client) or by another principal
//! of the tenant holding the `approve` permission (four eyes, any
//! revision, through `pilotage_approvals`). Approval moves the task back to
//! `working` and its run starts; a decline cancels it with nothing
//! executed. Every decision is logged with who made it.

use super::TaskHost;
use super::record::{Decision, Status, TaskRecord};
use super::{WRITE_ATTEMPTS, store_failed};
use crate::auth::Principal;
use crate::execute::approval::Hold;
use crate::store::now_ms;
use rmcp::ErrorData as McpError;
use serde_json::{Value, json};
use std::time::Duration;

/// The scope under which a tenant's held runs are listed.
fn index_scope(tenant: &str) -> String {
    format!("held:{tenant}")
}

/// The task's status message while it waits.
pub fn waiting_message(hold: &Hold) -> String {
    format!(
        "waiting for a person's approval: this run reaches risk '{}', above '{}' that its caller may run alone",
        hold.risk, hold.approve_above
    )
}

/// What a person is shown: the plan's steps with their risk, the program's
/// digest and the catalog it was checked on.
pub fn summary(hold: &Hold) -> String {
    let steps: Vec<String> = hold
        .steps
        .iter()
        .map(|s| format!("{} calls {} ({})", s.id, s.capability, s.risk))
        .collect();
    format!(
        "Approve this run? It reaches risk {} (its caller may run up to {} alone). Steps: {}. Program {} on catalog {}.",
        hold.risk,
        hold.approve_above,
        steps.join("; "),
        hold.digest,
        hold.catalog_version
    )
}

/// The elicitation form of a held run (revision 2026-07-28's `inputRequests`).
pub fn form(hold: &Hold) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": summary(hold),
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "decision": {"type": "string", "enum": ["approve", "decline"], "title": "Run it?"},
                },
                "required": ["decision"],
            },
        },
    })
}

/// Lists a held task for the approvers of its tenant (best effort: the
/// owner's client can still decide it).
pub async fn list_for_approvers(host: &dyn TaskHost, owner: &Principal, task: &TaskRecord) {
    let entry = json!({
        "task_id": task.task_id,
        "revision": 0,
        "owner": owner.scope,
        "hold": task.hold,
        "held_ms": task.updated_ms,
    });
    let ttl = Duration::from_millis(task.ttl_left_ms(now_ms()));
    if let Err(e) = host
        .gateway()
        .store
        .put_task(
            &index_scope(&owner.tenant),
            &task.task_id,
            &entry,
            ttl,
            None,
        )
        .await
    {
        tracing::warn!(task_id = %task.task_id, error = %e, "a held run could not be listed for approvers");
    }
}

/// The runs of the approver's tenant that wait for a decision.
pub async fn held_runs(host: &dyn TaskHost, approver: &Principal) -> Result<Vec<Value>, McpError> {
    let store = &host.gateway().store;
    let entries = store
        .list_tasks(&index_scope(&approver.tenant))
        .await
        .map_err(store_failed)?;
    let mut held = Vec::new();
    for entry in entries {
        let (Some(task_id), Some(owner)) = (
            entry.get("task_id").and_then(Value::as_str),
            entry.get("owner").and_then(Value::as_str),
        ) else {
            continue;
        };
        let Some(task) = store
            .get_task(owner, task_id)
            .await
            .map_err(store_failed)?
            .and_then(TaskRecord::from_value)
        else {
            continue;
        };
        if task.status != Status::InputRequired {
            continue;
        }
        let Some(hold) = &task.hold else { continue };
        held.push(json!({
            "task_id": task_id,
            "requested_by": owner,
            "held_at": super::record::rfc3339(task.updated_ms),
            "risk": hold.risk,
            "approve_above": hold.approve_above,
            "steps": hold.steps,
            "program_digest": hold.digest,
            "catalog_version": hold.catalog_version,
            "summary": summary(hold),
        }));
    }
    held.sort_by(|a, b| a["held_at"].as_str().cmp(&b["held_at"].as_str()));
    Ok(held)
}

/// Who may decide a task: its owner (its own client), or another principal
/// of the tenant with the `approve` permission, never the owner through the
/// approvals tool (that would be one person approving their own run).
pub enum Decider<'a> {
    Owner(&'a Principal),
    Approver(&'a Principal),
}

/// Records `decider`'s decision on held task `task_id`.
pub async fn decide(
    host: &dyn TaskHost,
    decider: Decider<'_>,
    task_id: &str,
    approve: bool,
) -> Result<TaskRecord, McpError> {
    let store = &host.gateway().store;
    let (owner_scope, by) = match decider {
        Decider::Owner(p) => (p.scope.clone(), p.scope.clone()),
        Decider::Approver(p) => {
            let entry = store
                .get_task(&index_scope(&p.tenant), task_id)
                .await
                .map_err(store_failed)?
                .ok_or_else(|| unknown(task_id))?;
            let owner = entry
                .get("owner")
                .and_then(Value::as_str)
                .ok_or_else(|| unknown(task_id))?
                .to_owned();
            if owner == p.scope {
                return Err(McpError::invalid_params(
                    "a run is approved by another person than the one who asked for it: ask someone else with the approve permission, or decide from the client that asked (its approval form)",
                    None,
                ));
            }
            (owner, p.scope.clone())
        }
    };
    for _ in 0..WRITE_ATTEMPTS {
        let record = store
            .get_task(&owner_scope, task_id)
            .await
            .map_err(store_failed)?
            .and_then(TaskRecord::from_value)
            .ok_or_else(|| unknown(task_id))?;
        if record.status != Status::InputRequired || record.hold.is_none() {
            return Err(McpError::invalid_params(
                format!(
                    "task {task_id} is not waiting for approval ({})",
                    record.status.as_str()
                ),
                None,
            ));
        }
        let now = now_ms();
        let mut next = record.moved(now);
        next.decision = Some(Decision {
            approve,
            by: by.clone(),
            at_ms: now,
        });
        if approve {
            next.status = Status::Working;
            next.message = Some(format!("approved by {by}; the run starts"));
        } else {
            next.status = Status::Cancelled;
            next.message = Some(format!("declined by {by}: nothing was executed"));
        }
        let ttl = Duration::from_millis(next.ttl_left_ms(now));
        let written = store
            .put_task(
                &owner_scope,
                task_id,
                &next.to_value(),
                ttl,
                Some(record.revision),
            )
            .await
            .map_err(store_failed)?;
        if written {
            tracing::info!(
                task_id,
                decided_by = %by,
                requested_by = %owner_scope,
                decision = if approve { "approve" } else { "decline" },
                "held run decided"
            );
            return Ok(next);
        }
    }
    Err(McpError::internal_error(
        "the task kept changing while it was decided; try again",
        None,
    ))
}

fn unknown(task_id: &str) -> McpError {
    McpError::invalid_params(format!("no held run {task_id}"), None)
}
