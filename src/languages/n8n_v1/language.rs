//! [`N8nV1`]: the `n8n/v1` implementation of the Language trait, a thin
//! seam over this folder's reader, bounds, checks, walk, plan and trace.
//! Every method reads the document again: reading borrows the program
//! value and costs little next to an n8n call.

use super::document::{Workflow, trigger_by_name};
use super::{bounds, checks, input, plan, trace, walk};
use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::config::language::Bounds;
use crate::engines::profile::EngineProfile;
use crate::languages::Language;
use crate::languages::steps::{self, RunEnd, StepInfo};
use crate::pilotage::{RequestError, RiskHints};
use serde_json::Value;
use std::collections::HashMap;

/// `n8n/v1`: a program is one n8n workflow document as JSON; locators are
/// JSON Pointers into it.
pub struct N8nV1;

impl Language for N8nV1 {
    fn kind(&self) -> &'static str {
        "n8n/v1"
    }

    fn program_json_type(&self) -> &'static str {
        "object"
    }

    fn check_bounds(&self, program: &Value, bounds: &Bounds) -> Result<(), RequestError> {
        bounds::check(program, bounds)
    }

    fn structure_problem(&self, program: &Value) -> Option<Diagnostic> {
        checks::structure_problem(program)
    }

    fn steps(&self, program: &Value) -> Vec<StepInfo> {
        walk::steps(&Workflow::read(program))
    }

    fn native_checks(
        &self,
        program: &Value,
        _steps: &[StepInfo],
        catalog: &CatalogView,
    ) -> Vec<Diagnostic> {
        checks::all(program, catalog)
    }

    fn unknown_capability(&self, step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
        checks::unknown_capability(step, name, visible)
    }

    fn step_locators(&self, steps: &[StepInfo]) -> HashMap<String, String> {
        steps::locators(steps)
    }

    fn plan(
        &self,
        program: &Value,
        _steps: &[StepInfo],
        risk_of: steps::plan::RiskOf<'_>,
    ) -> Value {
        let wf = Workflow::read(program);
        plan::derive(&wf, &walk::graph(&wf), risk_of)
    }

    fn step_parameters<'p>(&self, program: &'p Value, step: &StepInfo) -> Option<&'p Value> {
        // A node without parameters leaves every parameter at its default,
        // as in the plan.
        static NONE: std::sync::LazyLock<Value> =
            std::sync::LazyLock::new(|| Value::Object(serde_json::Map::new()));
        let node = program.pointer(&step.pointer)?;
        Some(
            node.get("parameters")
                .filter(|p| p.is_object())
                .unwrap_or(&NONE),
        )
    }

    fn plan_max_hints(&self, plan: &Value) -> RiskHints {
        steps::plan::max_hints(plan)
    }

    fn trace(
        &self,
        program: &Value,
        events: &[Value],
        _mapping: &EngineProfile,
        _steps: &[StepInfo],
        end: RunEnd,
    ) -> Vec<Value> {
        trace::map_events(&Workflow::read(program), events, end)
    }

    fn summarize(&self, steps: &[Value]) -> Vec<Value> {
        steps::summary::summarize(steps)
    }

    fn input_schema(&self, program: &Value) -> Option<Value> {
        input::schema(&Workflow::read(program))
    }

    fn program_name(&self, program: &Value) -> Option<String> {
        Workflow::read(program).name.map(str::to_string)
    }

    fn completed_a_call(&self, step: &Value) -> bool {
        // The trigger only hands the pinned input on: a run failing right
        // after it is `error`, as the closed-sets guide says.
        let calls = step.get("calls").and_then(Value::as_str);
        calls.is_some_and(|kind| !trigger_by_name(kind))
            && step.pointer("/outcome/ok").and_then(Value::as_bool) == Some(true)
    }
}
