//! A task as the store keeps it: its state, its call (replayed as it was
//! when another instance takes the run over), the answer once there is one,
//! and the lease of the instance that drives the run. The record is JSON in
//! the store; `revision` orders its writes (a write names the revision it
//! read, so two instances never both move one task).

use crate::execute::approval::Hold;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A task's status, as both forms of MCP Tasks name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// How the underlying `tools/call` ended: the result it answers, or the
/// JSON-RPC error object it answers instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    Result(Value),
    Error(Value),
}

/// One task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: String,
    pub revision: u64,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// Kept this long from `created_ms`.
    pub ttl_ms: u64,
    pub poll_ms: u64,
    /// The execute tool and the arguments it runs with (the idempotency
    /// key included, so a taken-over run is the same run).
    pub tool: String,
    pub arguments: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    /// The instance driving the run, and until when (ms since the epoch)
    /// its lease holds without renewal.
    pub holder: String,
    pub lease_until_ms: u64,
    /// Whether the call carries an idempotency key, so that another
    /// instance may call it again without running it twice.
    #[serde(default)]
    pub replayable: bool,
    /// The run waiting for a person's approval, while it waits (and after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Hold>,
    /// Who approved or declined the held run, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// A person's decision on a held run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub approve: bool,
    /// The deciding principal's scope (`key:<tenant>:<name>`, …).
    pub by: String,
    pub at_ms: u64,
}

impl TaskRecord {
    /// Milliseconds of life left at `now` (at least 1, so a write never
    /// asks the store for a zero expiry).
    pub fn ttl_left_ms(&self, now: u64) -> u64 {
        self.created_ms
            .saturating_add(self.ttl_ms)
            .saturating_sub(now)
            .max(1)
    }

    /// The record as stored.
    pub fn to_value(&self) -> Value {
        // A record of plain fields always serialises.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// A stored record, or `None` when it is not one this gateway wrote.
    pub fn from_value(value: Value) -> Option<Self> {
        serde_json::from_value(value).ok()
    }

    /// The next revision of this record, written at `now`.
    pub fn moved(&self, now: u64) -> Self {
        let mut next = self.clone();
        next.revision = self.revision + 1;
        next.updated_ms = now;
        next
    }

    /// The task's public fields shared by both forms: id, status, message,
    /// timestamps (RFC 3339).
    pub fn common_fields(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), Value::String(self.task_id.clone()));
        task.insert("status".into(), Value::String(self.status.as_str().into()));
        if let Some(message) = &self.message {
            task.insert("statusMessage".into(), Value::String(message.clone()));
        }
        task.insert("createdAt".into(), Value::String(rfc3339(self.created_ms)));
        task.insert(
            "lastUpdatedAt".into(),
            Value::String(rfc3339(self.updated_ms)),
        );
        task
    }
}

/// Milliseconds since the epoch as an RFC 3339 timestamp (UTC).
pub fn rfc3339(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_764_066_600_123), "2025-11-25T10:30:00.123Z");
    }

    #[test]
    fn life_left_never_reaches_zero() {
        let record = TaskRecord {
            task_id: "t".into(),
            revision: 0,
            status: Status::Working,
            message: None,
            created_ms: 1_000,
            updated_ms: 1_000,
            ttl_ms: 500,
            poll_ms: 100,
            tool: "run_workflow".into(),
            arguments: Map::new(),
            ending: None,
            holder: "i".into(),
            lease_until_ms: 0,
            replayable: true,
            hold: None,
            decision: None,
        };
        assert_eq!(record.ttl_left_ms(1_200), 300);
        assert_eq!(record.ttl_left_ms(9_000), 1);
        let read = TaskRecord::from_value(record.to_value()).expect("round trip");
        assert_eq!(read.moved(1_300).revision, 1);
    }
}
