//! How a finished run's answer reads, for both runners: the synchronous
//! runner's run answer and the asynchronous runner's last status read are
//! one reply, read at the paths each keeps its state, error and problems.

use super::answer::{error_paths, state_meaning};
use super::mapping::StateMeaning;
use super::{EngineClient, EngineError, RunReply, RunState};
use crate::engines::json_path::{pick, pick_field, value_text};
use serde_json::Value;

/// Where a status answer keeps its state, error and problems.
pub(super) struct ReplyPaths<'a> {
    pub(super) state: &'a str,
    pub(super) error: &'a str,
    pub(super) problems: &'a str,
}

impl EngineClient {
    /// A run answer: state, error and problems read from `status` at `paths`,
    /// with the result and the events already in hand.
    pub(super) fn reply(
        &self,
        status: &Value,
        result: Value,
        events: Vec<Value>,
        paths: &ReplyPaths<'_>,
    ) -> Result<RunReply, EngineError> {
        let m = &self.mapping.run;
        let message = || {
            error_paths(&self.mapping, paths.error)
                .into_iter()
                .filter(|p| !p.is_empty())
                .find_map(|p| pick(status, p).and_then(value_text))
                .unwrap_or_else(|| "the engine broke off the run".into())
        };
        let state = match state_meaning(&self.mapping, pick(status, paths.state)) {
            Ok(StateMeaning::Completed) => RunState::Completed,
            Ok(StateMeaning::Failed) => RunState::Failed,
            Ok(StateMeaning::TimedOut) => RunState::TimedOut,
            Ok(StateMeaning::Rejected) => RunState::Rejected,
            Ok(StateMeaning::Broken) | Ok(StateMeaning::Running) => {
                return Err(EngineError::RunBroken {
                    message: message(),
                    events,
                });
            }
            Err(unknown) => {
                tracing::warn!(state = %unknown, key = "engine.mapping.run.states",
                    "engine run state in no value table; read as a broken run");
                return Err(EngineError::RunBroken {
                    message: format!("unknown run state '{unknown}'"),
                    events,
                });
            }
        };
        let problems = pick(status, paths.problems)
            .and_then(Value::as_array)
            .map(|p| self.problems(p))
            .unwrap_or_default();
        Ok(RunReply {
            engine_run_id: pick(status, &m.run_id).and_then(value_text),
            state,
            result,
            error: pick_field(status, paths.error).and_then(value_text),
            events,
            problems,
        })
    }
}
