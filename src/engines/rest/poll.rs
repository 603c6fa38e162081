//! The asynchronous runner's steps, which `engines::async_run` follows:
//! the run id of the start answer (which may already be final), the status
//! call read with backoff until a terminal state or the deadline (then the
//! cancel call, when the engine has one), and the result and the step log
//! from their own calls, page by page.

use super::answer::{error_paths, error_text, state_meaning};
use super::body::effective_deadline;
use super::mapping::{Runner, StateMeaning};
use super::reply::ReplyPaths;
use super::transport::{Answer, Call};
use super::{EngineClient, EngineError, RunReply, decode};
use crate::engines::async_run::{AsyncRun, RunOrder, Submitted};
use crate::engines::http_client::accepted;
use crate::engines::json_path::{pick, value_text};
use crate::engines::pacing::Pacing;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Method;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The run a start answer names: its id, and the answer itself when it is
/// already final (a rejection, say).
pub(super) fn started(
    client: &EngineClient,
    start: Value,
) -> Result<Submitted<String>, EngineError> {
    let m = &client.mapping.run;
    let Some(run_id) = pick(&start, &m.run_id).and_then(value_text) else {
        return Err(EngineError::RunBroken {
            message: format!(
                "the engine's start answer has no run id at '{}' (engine.mapping.run.run_id)",
                m.run_id
            ),
            events: Vec::new(),
        });
    };
    let start_state = state_meaning(&client.mapping, pick(&start, &m.state));
    Ok(
        if matches!(start_state, Ok(s) if s != StateMeaning::Running) {
            Submitted::Ended(run_id, start)
        } else {
            Submitted::Started(run_id)
        },
    )
}

#[async_trait::async_trait]
impl AsyncRun for EngineClient {
    /// The run id.
    type Run = String;

    async fn submit(
        &self,
        tenant: &str,
        order: &RunOrder<'_>,
    ) -> Result<Submitted<String>, EngineError> {
        self.start(tenant, order).await
    }

    fn submission_is_the_run(&self) -> bool {
        matches!(self.mapping.run.runner, Runner::Sync)
    }

    fn pacing(&self) -> Pacing {
        let poll = &self.mapping.run.poll;
        Pacing::from_ms(poll.first_delay_ms, poll.max_delay_ms)
    }

    /// The engine's own deadline (as the start call told it) and a grace,
    /// from the start's answer.
    fn until(&self, _asked: Instant, order: &RunOrder<'_>) -> Instant {
        let m = &self.mapping.run;
        let engine_deadline = effective_deadline(order.deadline, &m.encodings.deadline);
        Instant::now() + engine_deadline + Duration::from_millis(m.poll.grace_ms)
    }

    fn run_id<'r>(&self, run: &'r String) -> &'r str {
        run
    }

    async fn status(&self, tenant: &str, run_id: &String) -> Result<Value, EngineError> {
        let path = fill(&self.mapping.run.poll.path, run_id, "");
        Ok(get(self, tenant, &path).await?.json())
    }

    /// Terminal, or a value no table knows (read as broken by `reply`).
    fn ended(&self, status: &Value) -> bool {
        let state = pick(status, &self.mapping.run.poll.state);
        !matches!(
            state_meaning(&self.mapping, state),
            Ok(StateMeaning::Running)
        )
    }

    async fn finish(
        &self,
        tenant: &str,
        _order: &RunOrder<'_>,
        run_id: &String,
        status: Value,
    ) -> Result<RunReply, EngineError> {
        let m = &self.mapping.run;
        let paths = ReplyPaths {
            state: &m.poll.state,
            error: &m.poll.error,
            problems: &m.poll.problems,
        };
        let completed = matches!(
            state_meaning(&self.mapping, pick(&status, paths.state)),
            Ok(StateMeaning::Completed)
        );
        let result = if completed {
            result(self, tenant, run_id, &status).await?
        } else {
            Value::Null
        };
        let events = log(self, tenant, run_id).await?;
        self.reply(&status, result, events, &paths)
    }

    /// The cancel call, when the mapping has one.
    async fn cancel(&self, tenant: &str, run_id: &String) -> bool {
        let m = &self.mapping.run;
        if m.cancel.path.is_empty() {
            return false;
        }
        let path = fill(&m.cancel.path, run_id, "");
        let cancel = Call::once("cancel", Method::POST, &path);
        let answer = self.call(tenant, cancel, None, &[]).await;
        accepted(
            answer,
            |s| s.is_success(),
            |a| tracing::warn!(%run_id, status = %a.status, "engine refused to cancel a run past its deadline"),
            |e| tracing::warn!(%run_id, error = %e, "cancel call failed"),
        )
    }

    /// The steps the log holds so far.
    async fn events_so_far(&self, tenant: &str, run_id: &String) -> Vec<Value> {
        log(self, tenant, run_id).await.unwrap_or_default()
    }

    fn timed_out(&self, cancelled: bool) -> String {
        if cancelled {
            "the run did not finish by its deadline; it was cancelled".into()
        } else {
            "the run did not finish by its deadline".into()
        }
    }
}

/// The run's result: from the result call when mapped, else the status answer.
async fn result(
    client: &EngineClient,
    tenant: &str,
    run_id: &str,
    status: &Value,
) -> Result<Value, EngineError> {
    let m = &client.mapping.run;
    if m.output.path.is_empty() {
        let value = pick(status, &m.result).cloned().unwrap_or(Value::Null);
        return Ok(if m.result_encoded {
            decode(value)
        } else {
            value
        });
    }
    let body = get(client, tenant, &fill(&m.output.path, run_id, ""))
        .await?
        .json();
    let value = pick(&body, &m.output.field).cloned().unwrap_or(Value::Null);
    Ok(if m.output.encoded {
        decode(value)
    } else {
        value
    })
}

/// Every event of the run, page after page (bounded by `log.max_pages`).
async fn log(client: &EngineClient, tenant: &str, run_id: &str) -> Result<Vec<Value>, EngineError> {
    let m = &client.mapping.run.log;
    if m.path.is_empty() {
        return Ok(Vec::new());
    }
    let mut events = Vec::new();
    let mut cursor = m.first_cursor.clone();
    for _ in 0..m.max_pages.max(1) {
        let body = get(client, tenant, &fill(&m.path, run_id, &cursor))
            .await?
            .json();
        let Some(items) = pick(&body, &m.items).and_then(Value::as_array) else {
            return Err(EngineError::RunBroken {
                message: format!(
                    "the engine's step log has no '{}' array (engine.mapping.run.log.items)",
                    m.items
                ),
                events,
            });
        };
        events.extend(items.iter().map(|e| {
            if m.encoded {
                decode(e.clone())
            } else {
                e.clone()
            }
        }));
        match pick(&body, &m.next).and_then(value_text) {
            Some(next) if !next.is_empty() && next != cursor => cursor = next,
            _ => return Ok(events),
        }
    }
    tracing::warn!(%run_id, pages = m.max_pages, "step log longer than engine.mapping.run.log.max_pages; the trace is cut");
    Ok(events)
}

/// A safe read that must answer 2xx; anything else means the run's fate is
/// unknown (it may have started).
async fn get(client: &EngineClient, tenant: &str, path: &str) -> Result<Answer, EngineError> {
    let answer = client
        .call(tenant, Call::get("poll", path), None, &[])
        .await
        .map_err(|e| EngineError::RunBroken {
            message: e.to_string(),
            events: Vec::new(),
        })?;
    if !answer.status.is_success() {
        return Err(EngineError::RunBroken {
            message: error_text(
                &answer.json(),
                &error_paths(&client.mapping, ""),
                answer.status,
            ),
            events: Vec::new(),
        });
    }
    Ok(answer)
}

/// A path template with `{run_id}` and `{cursor}` filled (percent-encoded).
fn fill(template: &str, run_id: &str, cursor: &str) -> String {
    template
        .replace(
            "{run_id}",
            &utf8_percent_encode(run_id, NON_ALPHANUMERIC).to_string(),
        )
        .replace(
            "{cursor}",
            &utf8_percent_encode(cursor, NON_ALPHANUMERIC).to_string(),
        )
}
