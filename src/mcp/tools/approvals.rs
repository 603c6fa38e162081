//! `pilotage_approvals`: for a principal holding the `approve` permission,
//! the runs of its tenant held for a person's approval (verb `list`), and
//! the decision on one (`approve`, `decline`, with `task_id`). Not a
//! Pilotage loop tool: a gateway's own, offered only to approvers.

use super::{Args, Reply, ToolResult};
use crate::auth::Principal;
use crate::mcp::tasks::TaskHost;
use crate::mcp::tasks::approvals::{self, Decider};
use crate::pilotage::RequestError;
use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use serde_json::json;

pub const NAME: &str = "pilotage_approvals";

pub async fn call(host: &dyn TaskHost, principal: &Principal, args: &Args) -> ToolResult {
    match args.str("verb") {
        Some("list") => {
            let held = approvals::held_runs(host, principal)
                .await
                .map_err(request_error)?;
            let summary = format!("{} run(s) wait for a decision", held.len());
            Ok(Reply::new(json!({"held": held}), summary))
        }
        Some(verb @ ("approve" | "decline")) => {
            let Some(task_id) = args.str("task_id") else {
                return Err(RequestError::invalid(format!(
                    "verb {verb} needs task_id: the id a list answered"
                )));
            };
            let approve = verb == "approve";
            let task = approvals::decide(host, Decider::Approver(principal), task_id, approve)
                .await
                .map_err(request_error)?;
            let status = task.status.as_str();
            Ok(Reply::new(
                json!({"task_id": task.task_id, "decision": verb, "status": status, "decided_by": principal.scope}),
                task.message.unwrap_or_default(),
            ))
        }
        _ => Err(RequestError::invalid(
            "verb must be list, approve or decline",
        )),
    }
}

/// A decision refused is the caller's to fix (`invalid_request`) unless the
/// store failed (`internal`).
fn request_error(e: McpError) -> RequestError {
    if e.code == ErrorCode::INTERNAL_ERROR {
        RequestError::internal(e.message.to_string())
    } else {
        RequestError::invalid(e.message.to_string())
    }
}
