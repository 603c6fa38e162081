//! The run every adapter's `Engine::run` is: submit the program, then
//! (unless the submission's answer is already the reply) read the run's
//! status with doubling waits until it ends or the operation's deadline
//! passes; an ended run is read into the reply, one past its deadline is
//! cancelled and answered `TimedOut` with the events the engine holds so
//! far; last, whatever the submission created is cleaned up. A run asked
//! to stop (a task's cancel) is cut short the same way, at once. An adapter
//! writes only its engine's steps ([`AsyncRun`]): its endpoints, its wire
//! shapes and the mapping of its states and events.

use super::pacing::Pacing;
use super::{EngineError, RawProblem, RunReply, RunState};
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A run as `Engine::run` asks for it.
#[derive(Debug, Clone, Copy)]
pub struct RunOrder<'a> {
    pub program: &'a Value,
    pub input: &'a Value,
    pub context: Option<&'a Value>,
    pub dry_run: bool,
    /// The operation's deadline.
    pub deadline: Duration,
    /// Cancelled when the run must stop before its deadline.
    pub stop: Option<&'a CancellationToken>,
}

impl RunOrder<'_> {
    /// Resolves once the run is asked to stop; never without a stop.
    async fn stopped(&self) {
        match self.stop {
            Some(stop) => stop.cancelled().await,
            None => std::future::pending().await,
        }
    }
}

/// What a submission came to.
pub enum Submitted<R> {
    /// The submission's answer is the whole reply: a refusal (nothing
    /// started), or a synchronous runner's result.
    Answered(RunReply),
    /// The run started; its status is read until it ends.
    Started(R),
    /// The run started and the submission's answer is already its final
    /// status.
    Ended(R, Value),
}

impl<R> Submitted<R> {
    /// The engine's (or the adapter's) refusal of the program: nothing
    /// started, and the first problem says why.
    pub fn refused(problems: Vec<RawProblem>) -> Self {
        Submitted::Answered(RunReply {
            engine_run_id: None,
            state: RunState::Rejected,
            result: Value::Null,
            error: problems.first().map(|p| p.text.clone()),
            events: Vec::new(),
            problems,
        })
    }
}

/// One adapter's steps of a run. A failed step is typed as `Engine::run`
/// says: `NotStarted`, `Unreachable` or `Failed` while nothing started,
/// `RunBroken` once it may have.
#[async_trait::async_trait]
pub trait AsyncRun: Sync {
    /// A started run, as the adapter follows it.
    type Run: Send + Sync;

    /// Why this engine cannot run a program dry, if it cannot.
    fn no_dry_run(&self) -> Option<&'static str> {
        None
    }

    /// Whether the submission's answer is the run's end (a synchronous
    /// runner): then a stop abandons the submission itself, which the
    /// engine sees as its caller gone. Otherwise a submission is let finish,
    /// so that a started run is known and can be cancelled.
    fn submission_is_the_run(&self) -> bool {
        false
    }

    /// Submits the program (never asked for a dry run it cannot do).
    async fn submit(
        &self,
        tenant: &str,
        order: &RunOrder<'_>,
    ) -> Result<Submitted<Self::Run>, EngineError>;

    /// The waits between status reads.
    fn pacing(&self) -> Pacing;

    /// When the status reads give up: by default the operation's deadline,
    /// counted from `asked` (when the run was asked for).
    fn until(&self, asked: Instant, order: &RunOrder<'_>) -> Instant {
        asked + order.deadline
    }

    /// The run's id at the engine.
    fn run_id<'r>(&self, run: &'r Self::Run) -> &'r str;

    /// The engine's status of the run; failing, the run's fate is unknown.
    async fn status(&self, tenant: &str, run: &Self::Run) -> Result<Value, EngineError>;

    /// Whether `status` is final.
    fn ended(&self, status: &Value) -> bool;

    /// The reply of a run whose final status is `status`.
    async fn finish(
        &self,
        tenant: &str,
        order: &RunOrder<'_>,
        run: &Self::Run,
        status: Value,
    ) -> Result<RunReply, EngineError>;

    /// Asks the engine to stop a run past its deadline; whether it did.
    async fn cancel(&self, tenant: &str, run: &Self::Run) -> bool;

    /// What the engine holds of a run cut short, as events.
    async fn events_so_far(&self, tenant: &str, run: &Self::Run) -> Vec<Value>;

    /// The error of a run cut short at its deadline, `cancelled` or not.
    fn timed_out(&self, cancelled: bool) -> String;

    /// Deletes what the run created, once its reply is known (best effort).
    async fn clean_up(
        &self,
        _tenant: &str,
        _run: &Self::Run,
        _reply: &Result<RunReply, EngineError>,
    ) {
    }
}

/// Runs `order` to its reply with `steps`.
pub async fn run<A: AsyncRun>(
    steps: &A,
    tenant: &str,
    order: &RunOrder<'_>,
) -> Result<RunReply, EngineError> {
    let asked = Instant::now();
    if order.dry_run
        && let Some(why) = steps.no_dry_run()
    {
        return Err(EngineError::Failed(why.into()));
    }
    // Stopped before it was sent: nothing is started at all.
    if order.stop.is_some_and(CancellationToken::is_cancelled) {
        return Ok(stopped_reply(
            "the run was cancelled on request before it reached the engine; nothing ran",
        ));
    }
    let submitted = if steps.submission_is_the_run() {
        tokio::select! {
            submitted = steps.submit(tenant, order) => submitted?,
            () = order.stopped() => return Ok(stopped_reply(ABANDONED)),
        }
    } else {
        steps.submit(tenant, order).await?
    };
    let (run, status) = match submitted {
        Submitted::Answered(reply) => return Ok(reply),
        Submitted::Started(run) => (run, None),
        Submitted::Ended(run, status) => (run, Some(status)),
    };
    let polled = match status {
        Some(status) => Ok(Polled::Ended(status)),
        None => poll(steps, tenant, &run, order, steps.until(asked, order)).await,
    };
    let reply = match polled {
        Ok(Polled::Ended(status)) => steps.finish(tenant, order, &run, status).await,
        Ok(Polled::PastDeadline) => Ok(cut_short(steps, tenant, &run, false).await),
        Ok(Polled::Stopped) => Ok(cut_short(steps, tenant, &run, true).await),
        Err(e) => Err(e),
    };
    steps.clean_up(tenant, &run, &reply).await;
    reply
}

/// Where the status reads ended.
enum Polled {
    Ended(Value),
    PastDeadline,
    Stopped,
}

/// Reads the run's status until it ends, `until` passes or the order's stop.
async fn poll<A: AsyncRun>(
    steps: &A,
    tenant: &str,
    run: &A::Run,
    order: &RunOrder<'_>,
    until: Instant,
) -> Result<Polled, EngineError> {
    let pacing = steps.pacing();
    let mut wait = pacing.first;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        tokio::select! {
            () = tokio::time::sleep(wait.min(left)) => {}
            () = order.stopped() => return Ok(Polled::Stopped),
        }
        let status = steps.status(tenant, run).await?;
        if steps.ended(&status) {
            return Ok(Polled::Ended(status));
        }
        if Instant::now() >= until {
            return Ok(Polled::PastDeadline);
        }
        wait = pacing.next(wait);
    }
}

/// The deadline passed or a stop came: cancel, and answer timed out with
/// the events the engine holds so far.
async fn cut_short<A: AsyncRun>(steps: &A, tenant: &str, run: &A::Run, stopped: bool) -> RunReply {
    let cancelled = steps.cancel(tenant, run).await;
    let events = steps.events_so_far(tenant, run).await;
    let error = if stopped {
        stopped_error(cancelled)
    } else {
        steps.timed_out(cancelled)
    };
    RunReply {
        engine_run_id: Some(steps.run_id(run).to_string()),
        state: RunState::TimedOut,
        result: Value::Null,
        error: Some(error),
        events,
        problems: Vec::new(),
    }
}

fn stopped_error(cancelled: bool) -> String {
    if cancelled {
        "the run was cancelled on request; the engine stopped it".into()
    } else {
        "the run was cancelled on request; the engine did not confirm that it stopped".into()
    }
}

/// A synchronous run whose caller stopped waiting: the engine sees its
/// caller gone; what it did until then is unknown.
const ABANDONED: &str = "the run was cancelled on request; its request to the engine was abandoned, so steps it began may have taken effect";

/// A run stopped on request without a run at the engine to cancel.
fn stopped_reply(error: &str) -> RunReply {
    RunReply {
        engine_run_id: None,
        state: RunState::TimedOut,
        result: Value::Null,
        error: Some(error.into()),
        events: Vec::new(),
        problems: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A run that ends after `reads` status reads, recording every step.
    struct Script {
        reads: usize,
        seen: Mutex<Vec<String>>,
    }

    impl Script {
        fn note(&self, step: impl Into<String>) {
            self.seen.lock().unwrap().push(step.into());
        }
    }

    #[async_trait::async_trait]
    impl AsyncRun for Script {
        type Run = String;
        async fn submit(
            &self,
            _: &str,
            order: &RunOrder<'_>,
        ) -> Result<Submitted<String>, EngineError> {
            self.note("submit");
            Ok(match order.input.as_str() {
                Some("ended") => Submitted::Ended("r1".into(), Value::from(0)),
                _ => Submitted::Started("r1".into()),
            })
        }
        fn pacing(&self) -> Pacing {
            Pacing::from_ms(1, 4)
        }
        fn run_id<'r>(&self, run: &'r String) -> &'r str {
            run
        }
        async fn status(&self, _: &str, _: &String) -> Result<Value, EngineError> {
            let mut seen = self.seen.lock().unwrap();
            seen.push("status".into());
            Ok(Value::from(seen.iter().filter(|s| *s == "status").count()))
        }
        fn ended(&self, status: &Value) -> bool {
            status.as_u64().is_some_and(|n| n as usize >= self.reads)
        }
        async fn finish(
            &self,
            _: &str,
            _: &RunOrder<'_>,
            run: &String,
            status: Value,
        ) -> Result<RunReply, EngineError> {
            self.note(format!("finish {status}"));
            Ok(RunReply {
                engine_run_id: Some(run.clone()),
                state: RunState::Completed,
                result: status,
                error: None,
                events: Vec::new(),
                problems: Vec::new(),
            })
        }
        async fn cancel(&self, _: &str, _: &String) -> bool {
            self.note("cancel");
            true
        }
        async fn events_so_far(&self, _: &str, _: &String) -> Vec<Value> {
            self.note("events");
            vec![Value::from("so far")]
        }
        fn timed_out(&self, cancelled: bool) -> String {
            format!("late, cancelled: {cancelled}")
        }
        async fn clean_up(&self, _: &str, _: &String, reply: &Result<RunReply, EngineError>) {
            self.note(format!("clean up {}", reply.is_ok()));
        }
    }

    async fn follow(reads: usize, input: &str, deadline_ms: u64) -> (RunReply, Vec<String>) {
        let script = Script {
            reads,
            seen: Mutex::new(Vec::new()),
        };
        let (program, input) = (Value::Null, Value::from(input));
        let order = RunOrder {
            program: &program,
            input: &input,
            context: None,
            dry_run: false,
            deadline: Duration::from_millis(deadline_ms),
            stop: None,
        };
        let reply = run(&script, "acme", &order).await.unwrap();
        (reply, script.seen.into_inner().unwrap())
    }

    #[tokio::test]
    async fn a_run_is_polled_to_its_end_then_finished_and_cleaned_up() {
        let (reply, seen) = follow(3, "", 10_000).await;
        assert_eq!(reply.state, RunState::Completed);
        assert_eq!(
            seen,
            [
                "submit",
                "status",
                "status",
                "status",
                "finish 3",
                "clean up true"
            ]
        );
    }

    #[tokio::test]
    async fn an_answer_already_final_is_not_polled() {
        let (_, seen) = follow(3, "ended", 10_000).await;
        assert_eq!(seen, ["submit", "finish 0", "clean up true"]);
    }

    #[tokio::test]
    async fn a_run_past_its_deadline_is_cancelled_and_keeps_its_events() {
        let (reply, seen) = follow(usize::MAX, "", 20).await;
        assert_eq!(reply.state, RunState::TimedOut);
        assert_eq!(reply.engine_run_id.as_deref(), Some("r1"));
        assert_eq!(reply.error.as_deref(), Some("late, cancelled: true"));
        assert_eq!(reply.events, [Value::from("so far")]);
        assert_eq!(
            seen[seen.len() - 3..],
            ["cancel", "events", "clean up true"]
        );
    }
}
