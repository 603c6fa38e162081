//! Step-by-step execution. Every step first checks the deadline; every event goes
//! through `push`, which enforces the event limit and the injected crash.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use serde_json::Value;

use super::budget::{Budget, MAX_EVENTS, MAX_ITERATIONS};
use super::event::{Arm, Event, ExitReason, Failure};
use super::scope::{Frame, Values};
use super::{Ending, RunSetup};
use crate::capabilities::{self, CallEnv, Invoked};
use crate::language::condition::Cond;
use crate::language::program::{Program, Step, StepBody, Template};
use crate::language::schema;
use crate::language::values::type_name;
use crate::validate::problem::Kind;
use crate::world::tenant::TenantWorld;

/// Why execution stopped early.
enum Stop {
    Failed { step: String, failure: Failure },
    TimedOut,
    Crashed,
}

fn failed(step: &str, message: String) -> Stop {
    Stop::Failed {
        step: step.to_owned(),
        failure: Failure::Message(message),
    }
}

type StepFuture<'s> = Pin<Box<dyn Future<Output = Result<Value, Stop>> + Send + 's>>;

pub(super) struct Runner<'a> {
    setup: RunSetup<'a>,
    world: &'a mut TenantWorld,
    values: Values<'a>,
    events: Vec<Event>,
    budget: Budget,
}

fn elapsed_ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}

impl<'a> Runner<'a> {
    pub fn new(setup: RunSetup<'a>, world: &'a mut TenantWorld, values: Values<'a>) -> Self {
        Runner {
            setup,
            world,
            values,
            events: Vec::new(),
            budget: Budget::default(),
        }
    }

    pub fn into_events(self) -> Vec<Event> {
        self.events
    }

    pub async fn run(&mut self, program: &Program) -> Ending {
        let outcome = async {
            if self.setup.crash_after == Some(0) {
                return Err(Stop::Crashed);
            }
            let last = self.block(&program.steps).await?;
            let result = match &program.output {
                Some(mapping) => self.values.resolve(mapping),
                None => last,
            };
            self.charge("output", &result)?;
            Ok(result)
        }
        .await;
        match outcome {
            Ok(result) => Ending::Completed(result),
            Err(Stop::Failed { step, failure }) => Ending::Failed { step, failure },
            Err(Stop::TimedOut) => Ending::TimedOut,
            Err(Stop::Crashed) => Ending::Crashed,
        }
    }

    fn push(&mut self, step: &str, event: Event) -> Result<(), Stop> {
        if self.events.len() >= MAX_EVENTS {
            return Err(failed(
                step,
                format!("run exceeded the limit of {MAX_EVENTS} events"),
            ));
        }
        self.events.push(event);
        if self
            .setup
            .crash_after
            .is_some_and(|n| self.events.len() >= n)
        {
            return Err(Stop::Crashed);
        }
        Ok(())
    }

    fn charge(&mut self, step: &str, value: &Value) -> Result<(), Stop> {
        self.budget
            .charge(value)
            .map_err(|message| failed(step, message))
    }

    fn check_deadline(&self) -> Result<(), Stop> {
        if Instant::now() >= self.setup.deadline {
            Err(Stop::TimedOut)
        } else {
            Ok(())
        }
    }

    /// Runs a block; its output is the output of its last step (null when empty).
    fn block<'s>(&'s mut self, steps: &'s [Step]) -> StepFuture<'s> {
        Box::pin(async move {
            let mut last = Value::Null;
            for step in steps {
                last = self.step(step).await?;
            }
            Ok(last)
        })
    }

    async fn step(&mut self, step: &Step) -> Result<Value, Stop> {
        self.check_deadline()?;
        // Long loops of cheap steps must not starve other requests on this worker.
        tokio::task::yield_now().await;
        let output = match &step.body {
            StepBody::Call { capability, with } => self.call(&step.id, capability, with).await?,
            StepBody::Set { value } => self.set(&step.id, value)?,
            StepBody::Branch {
                when,
                then,
                otherwise,
            } => self.branch(&step.id, when, then, otherwise).await?,
            StepBody::ForEach {
                items,
                as_name,
                body,
                body_ids,
            } => {
                self.for_each(&step.id, items, as_name, body, body_ids)
                    .await?
            }
        };
        self.values.outputs.insert(step.id.clone(), output.clone());
        Ok(output)
    }

    async fn call(&mut self, id: &str, capability: &str, with: &Template) -> Result<Value, Stop> {
        let started = Instant::now();
        let args = self.values.resolve(with);
        self.charge(id, &args)?;
        let spec = self.setup.capabilities.get(capability);
        let outcome = match spec.map(|s| schema::check(&s.params, &args, false)) {
            None => Err(Failure::Message(format!(
                "capability '{capability}' is not available"
            ))),
            Some(issues) if !issues.is_empty() => Err(Failure::Args(Box::new(
                Kind::from_param_issue(capability, &issues[0]),
            ))),
            Some(_) => {
                let env = CallEnv {
                    run: self.setup.run,
                    deadline: self.setup.deadline,
                };
                match capabilities::invoke(capability, &args, self.world, &env).await {
                    Invoked::Done(result) => match self.budget.charge(&result) {
                        Ok(()) => Ok(result),
                        Err(message) => Err(Failure::Message(message)),
                    },
                    Invoked::Failed(message) => Err(Failure::Message(message)),
                    Invoked::TimedOut => return Err(Stop::TimedOut),
                }
            }
        };
        (self.setup.on_call)(capability);
        let iter = self.values.iter();
        let event = Event::Call {
            step: id.to_owned(),
            capability: capability.to_owned(),
            args,
            outcome: outcome.clone(),
            ms: elapsed_ms(started),
            iter,
        };
        self.push(id, event)?;
        outcome.map_err(|failure| Stop::Failed {
            step: id.to_owned(),
            failure,
        })
    }

    fn set(&mut self, id: &str, template: &Template) -> Result<Value, Stop> {
        let started = Instant::now();
        let value = self.values.resolve(template);
        self.charge(id, &value)?;
        let event = Event::Set {
            step: id.to_owned(),
            value: value.clone(),
            ms: elapsed_ms(started),
            iter: self.values.iter(),
        };
        self.push(id, event)?;
        Ok(value)
    }

    async fn branch(
        &mut self,
        id: &str,
        when: &Cond,
        then: &[Step],
        otherwise: &[Step],
    ) -> Result<Value, Stop> {
        let started = Instant::now();
        let value = self.values.eval(when);
        let (arm, steps) = if value {
            (Arm::Then, then)
        } else {
            (Arm::Else, otherwise)
        };
        let event = Event::Branch {
            step: id.to_owned(),
            arm,
            cond: when.render(),
            value,
            ms: elapsed_ms(started),
            iter: self.values.iter(),
        };
        self.push(id, event)?;
        self.block(steps).await
    }

    async fn for_each(
        &mut self,
        id: &str,
        items: &Template,
        as_name: &str,
        body: &[Step],
        body_ids: &[String],
    ) -> Result<Value, Stop> {
        let started = Instant::now();
        let items = match self.values.resolve(items) {
            // A null list (e.g. from a branch arm that did not run) loops zero times.
            Value::Null => Vec::new(),
            Value::Array(items) => items,
            other => {
                return Err(failed(
                    id,
                    format!(
                        "items of for_each '{id}' is not a list (got {})",
                        type_name(&other)
                    ),
                ));
            }
        };
        if items.len() > MAX_ITERATIONS {
            let message = format!(
                "for_each '{id}' has {} items; at most {MAX_ITERATIONS} are allowed",
                items.len()
            );
            return Err(failed(id, message));
        }
        let iter = self.values.iter();
        self.push(
            id,
            Event::LoopEnter {
                step: id.to_owned(),
                count: items.len(),
                iter: iter.clone(),
            },
        )?;
        let count = items.len();
        let mut outputs = Vec::with_capacity(count);
        for (i, item) in items.into_iter().enumerate() {
            self.check_deadline()?;
            // Loop bodies are closed: nothing from the previous iteration is readable.
            for body_id in body_ids {
                self.values.outputs.remove(body_id);
            }
            let next = Event::LoopNext {
                step: id.to_owned(),
                index: i + 1,
                item: item.clone(),
                iter: iter.clone(),
            };
            self.push(id, next)?;
            self.values.frames.push(Frame {
                as_name: as_name.to_owned(),
                item,
                index: i + 1,
            });
            let result = self.block(body).await;
            self.values.frames.pop();
            match result {
                Ok(output) => outputs.push(output),
                Err(stop @ Stop::Failed { .. }) => {
                    let exit = Event::LoopExit {
                        step: id.to_owned(),
                        iterations: i + 1,
                        reason: ExitReason::BodyFailed,
                        ms: elapsed_ms(started),
                        iter: iter.clone(),
                    };
                    self.push(id, exit)?;
                    return Err(stop);
                }
                Err(other) => return Err(other),
            }
        }
        let exit = Event::LoopExit {
            step: id.to_owned(),
            iterations: count,
            reason: ExitReason::Exhausted,
            ms: elapsed_ms(started),
            iter,
        };
        self.push(id, exit)?;
        let output = Value::Array(outputs);
        self.charge(id, &output)?;
        Ok(output)
    }
}
