//! `[tasks]`: runs that outlive their request (MCP Tasks, `src/mcp/tasks/`):
//! how long a call may answer inline before it becomes a task, how often a
//! client is asked to poll, how long a task is kept, and the lease by which
//! one instance drives a task's run and another takes it over.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TasksConfig {
    /// Revision 2026-07-28: how long a call from a client that accepts tasks
    /// runs inline; a run still going then is answered as a task.
    pub inline_ms: u64,
    /// The polling interval suggested to clients (`pollInterval`).
    pub poll_interval_ms: u64,
    /// The longest a task is kept after its creation (a shorter `ttl` asked
    /// by the client is honoured; a language's retention, when shorter,
    /// caps it too).
    pub max_ttl_ms: u64,
    /// How long the instance driving a task's run holds it without renewing;
    /// past it, the next instance asked about the task takes the run over
    /// (with the run's idempotency key, so nothing runs twice).
    pub lease_ms: u64,
}

impl Default for TasksConfig {
    fn default() -> Self {
        Self {
            inline_ms: 2_000,
            poll_interval_ms: 1_000,
            max_ttl_ms: 3_600_000,
            lease_ms: 15_000,
        }
    }
}

impl TasksConfig {
    /// (key, problem, fix) triples.
    pub(super) fn validate(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for (key, value, least) in [
            ("tasks.poll_interval_ms", self.poll_interval_ms, 50),
            ("tasks.max_ttl_ms", self.max_ttl_ms, 1_000),
            ("tasks.lease_ms", self.lease_ms, 1_000),
        ] {
            if value < least {
                out.push((
                    key.to_string(),
                    format!("{value} ms is below the {least} ms minimum"),
                    format!("set at least {least}, or remove the key for the default"),
                ));
            }
        }
        out
    }
}
