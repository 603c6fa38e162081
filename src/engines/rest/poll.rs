//! The asynchronous runner: after the start call answered with a run id, poll
//! the status call with backoff until a terminal state or the deadline (then
//! cancel, when the engine has a cancel call), and read the result and the
//! step log from their own calls, page by page.

use super::answer::{error_paths, error_text, state_meaning};
use super::body::effective_deadline;
use super::mapping::StateMeaning;
use super::reply::ReplyPaths;
use super::transport::{Answer, Call};
use super::{EngineClient, EngineError, RunReply, RunState, decode};
use crate::engines::json_path::{pick, value_text};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Method;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Follows a started run to its end.
pub(super) async fn finish(
    client: &EngineClient,
    tenant: &str,
    start: &Value,
    deadline: Duration,
) -> Result<RunReply, EngineError> {
    let m = &client.mapping.run;
    let Some(run_id) = pick(start, &m.run_id).and_then(value_text) else {
        return Err(EngineError::RunBroken {
            message: format!(
                "the engine's start answer has no run id at '{}' (engine.mapping.run.run_id)",
                m.run_id
            ),
            events: Vec::new(),
        });
    };
    // A start answer may already be final, e.g. a rejection.
    let start_state = state_meaning(&client.mapping, pick(start, &m.state));
    let status = if matches!(start_state, Ok(s) if s != StateMeaning::Running) {
        start.clone()
    } else {
        match poll_until_done(client, tenant, &run_id, deadline).await? {
            Some(status) => status,
            None => return Ok(cancelled(client, tenant, &run_id).await),
        }
    };
    let paths = ReplyPaths {
        state: &m.poll.state,
        error: &m.poll.error,
        problems: &m.poll.problems,
    };
    let completed = matches!(
        state_meaning(&client.mapping, pick(&status, paths.state)),
        Ok(StateMeaning::Completed)
    );
    let result = if completed {
        result(client, tenant, &run_id, &status).await?
    } else {
        Value::Null
    };
    let events = log(client, tenant, &run_id).await?;
    client.reply(&status, result, events, &paths)
}

/// The final status answer, or `None` when the deadline passed first.
async fn poll_until_done(
    client: &EngineClient,
    tenant: &str,
    run_id: &str,
    deadline: Duration,
) -> Result<Option<Value>, EngineError> {
    let m = &client.mapping.run;
    let engine_deadline = effective_deadline(deadline, &m.encodings.deadline);
    let until = Instant::now() + engine_deadline + Duration::from_millis(m.poll.grace_ms);
    let mut delay = Duration::from_millis(m.poll.first_delay_ms.max(1));
    let max_delay = Duration::from_millis(m.poll.max_delay_ms.max(1));
    loop {
        let left = until.saturating_duration_since(Instant::now());
        tokio::time::sleep(delay.min(left)).await;
        let answer = get(client, tenant, &fill(&m.poll.path, run_id, "")).await?;
        let body = answer.json();
        match state_meaning(&client.mapping, pick(&body, &m.poll.state)) {
            Ok(StateMeaning::Running) => {}
            // Terminal, or a value no table knows (read as broken by `reply`).
            _ => return Ok(Some(body)),
        }
        if Instant::now() >= until {
            return Ok(None);
        }
        delay = (delay * 2).min(max_delay);
    }
}

/// The deadline passed: cancel (when mapped) and answer timed out with the
/// steps the log holds so far.
async fn cancelled(client: &EngineClient, tenant: &str, run_id: &str) -> RunReply {
    let m = &client.mapping.run;
    let cancelled = if m.cancel.path.is_empty() {
        false
    } else {
        let path = fill(&m.cancel.path, run_id, "");
        match client
            .call(
                tenant,
                Call {
                    operation: "cancel",
                    method: Method::POST,
                    path: &path,
                    body: None,
                    headers: &[],
                    timeout: client.link.call_timeout,
                    safe: false,
                },
            )
            .await
        {
            Ok(a) if a.status.is_success() => true,
            Ok(a) => {
                tracing::warn!(%run_id, status = %a.status, "engine refused to cancel a run past its deadline");
                false
            }
            Err(e) => {
                tracing::warn!(%run_id, error = %e, "cancel call failed");
                false
            }
        }
    };
    let events = log(client, tenant, run_id).await.unwrap_or_default();
    RunReply {
        engine_run_id: Some(run_id.to_string()),
        state: RunState::TimedOut,
        result: Value::Null,
        error: Some(if cancelled {
            "the run did not finish by its deadline; it was cancelled".into()
        } else {
            "the run did not finish by its deadline".into()
        }),
        events,
        problems: Vec::new(),
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
        .call(
            tenant,
            Call {
                operation: "poll",
                method: Method::GET,
                path,
                body: None,
                headers: &[],
                timeout: client.link.call_timeout,
                safe: true,
            },
        )
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
