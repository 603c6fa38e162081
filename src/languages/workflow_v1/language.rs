//! [`WorkflowV1`]: the `workflow/v1` implementation of the Language trait,
//! a thin seam over this folder's program walker, checks, plan and trace.

use super::{checks, plan, program, trace};
use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::config::language::Bounds;
use crate::engines::profile::EngineProfile;
use crate::languages::steps::{self, RunEnd, StepInfo};
use crate::languages::{Language, binding};
use crate::pilotage::{RequestError, RiskHints};
use serde_json::Value;
use std::collections::HashMap;

/// `workflow/v1`: a program is a JSON object with a `steps` list; locators
/// are JSON Pointers into it.
pub struct WorkflowV1;

impl Language for WorkflowV1 {
    fn kind(&self) -> &'static str {
        "workflow/v1"
    }

    fn program_json_type(&self) -> &'static str {
        "object"
    }

    fn check_bounds(&self, program: &Value, bounds: &Bounds) -> Result<(), RequestError> {
        checks::bounds(program, bounds)
    }

    fn structure_problem(&self, program: &Value) -> Option<Diagnostic> {
        (!program.is_object()).then(|| {
            binding::binding_root(
                "invalid_structure",
                "a workflow is a JSON object with a 'steps' list".into(),
            )
        })
    }

    fn steps(&self, program: &Value) -> Vec<StepInfo> {
        program::steps(program)
    }

    fn native_checks(
        &self,
        _program: &Value,
        steps: &[StepInfo],
        _catalog: &CatalogView,
    ) -> Vec<Diagnostic> {
        checks::reserved_ids(steps)
    }

    fn unknown_capability(&self, step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
        checks::unknown_capability(step, name, visible)
    }

    fn step_locators(&self, steps: &[StepInfo]) -> HashMap<String, String> {
        steps::locators(steps)
    }

    fn plan(
        &self,
        _program: &Value,
        steps: &[StepInfo],
        risk_of: steps::plan::RiskOf<'_>,
    ) -> Value {
        plan::derive(steps, |cap| risk_of(cap, None))
    }

    fn plan_max_hints(&self, plan: &Value) -> RiskHints {
        steps::plan::max_hints(plan)
    }

    fn trace(
        &self,
        _program: &Value,
        events: &[Value],
        mapping: &EngineProfile,
        steps: &[StepInfo],
        end: RunEnd,
    ) -> Vec<Value> {
        trace::map_events(events, mapping, steps, end)
    }

    fn summarize(&self, steps: &[Value]) -> Vec<Value> {
        steps::summary::summarize(steps)
    }

    fn input_schema(&self, program: &Value) -> Option<Value> {
        program.get("input").cloned()
    }

    fn program_name(&self, program: &Value) -> Option<String> {
        program
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}
