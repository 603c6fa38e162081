//! The runner call: the request body from the mapping's template, what each
//! HTTP status of the answer means, and the answer read through the state
//! table: a synchronous runner's reply, or an asynchronous runner's started
//! run, which `engines::async_run` follows with the steps in `poll`.

use super::answer::{error_paths, error_text, status_meaning};
use super::body::{self, Fill};
use super::mapping::{RunMeaning, Runner};
use super::reply::ReplyPaths;
use super::transport::Call;
use super::{EngineClient, EngineError, RunReply, RunState, decode};
use crate::engines::async_run::{RunOrder, Submitted};
use crate::engines::json_path::{pick, value_text};
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;

impl EngineClient {
    /// The runner call and what its answer says: the whole reply (a
    /// refusal, or a synchronous runner's result), or the run an
    /// asynchronous runner started.
    pub(super) async fn start(
        &self,
        tenant: &str,
        order: &RunOrder<'_>,
    ) -> Result<Submitted<String>, EngineError> {
        let m = &self.mapping.run;
        let body = body::render(
            &m.body,
            &m.encodings,
            &Fill {
                program: Some(order.program),
                input: Some(order.input),
                context: order.context,
                trace: Some(true),
                dry_run: Some(order.dry_run),
                deadline: Some(order.deadline),
            },
        );
        let wait = match m.runner {
            Runner::Sync => order.deadline + Duration::from_secs(5),
            Runner::Async => self.link.call_timeout,
        };
        let call = Call::once("run", Method::POST, &m.path).within(wait);
        let answer = self
            .call(tenant, call, Some(&body), &[])
            .await
            .map_err(|e| {
                if e.never_sent() {
                    EngineError::from(e)
                } else {
                    // The request may have reached the runner: treat the run as started.
                    EngineError::RunBroken {
                        message: e.to_string(),
                        events: Vec::new(),
                    }
                }
            })?;
        let body = answer.json();
        let events = pick(&body, &m.events)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let meaning =
            status_meaning(&m.status, answer.status).unwrap_or(RunMeaning::FailedIfStarted);
        let message = || error_text(&body, &error_paths(&self.mapping, &m.error), answer.status);
        match meaning {
            RunMeaning::Answer => {}
            RunMeaning::Rejected => {
                let refused = self.rejected(&body, &m.problems, message());
                return Ok(Submitted::Answered(refused));
            }
            RunMeaning::NotStarted => return Err(EngineError::NotStarted(message())),
            RunMeaning::Failed => {
                return Err(EngineError::RunBroken {
                    message: message(),
                    events,
                });
            }
            RunMeaning::FailedIfStarted => {
                let started =
                    pick(&body, &m.run_id).and_then(value_text).is_some() || !events.is_empty();
                return Err(if started {
                    EngineError::RunBroken {
                        message: message(),
                        events,
                    }
                } else {
                    EngineError::NotStarted(message())
                });
            }
        }
        match m.runner {
            Runner::Sync => {
                let result = pick(&body, &m.result).cloned().unwrap_or(Value::Null);
                let result = if m.result_encoded {
                    decode(result)
                } else {
                    result
                };
                let paths = ReplyPaths {
                    state: &m.state,
                    error: &m.error,
                    problems: &m.problems,
                };
                Ok(Submitted::Answered(
                    self.reply(&body, result, events, &paths)?,
                ))
            }
            Runner::Async => super::poll::started(self, body),
        }
    }

    /// A rejected run: problems at `problems_path`.
    fn rejected(&self, body: &Value, problems_path: &str, message: String) -> RunReply {
        RunReply {
            engine_run_id: pick(body, &self.mapping.run.run_id).and_then(value_text),
            state: RunState::Rejected,
            result: Value::Null,
            error: Some(message),
            events: Vec::new(),
            problems: pick(body, problems_path)
                .and_then(Value::as_array)
                .map(|p| self.problems(p))
                .unwrap_or_default(),
        }
    }
}
