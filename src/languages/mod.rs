//! Languages as plug-ins: the [`Language`] trait every language implements,
//! the step model they share ([`steps`]), and one folder per language
//! (`workflow_v1/`, `mistral_v2/`, `n8n_v1/`), which never imports another. The validate and
//! execute operations, the tools and the gateway see a language only through
//! this trait; [`registry`] maps a `[[language]]` table's kind to its
//! implementation, one line per language.

pub mod binding;
pub mod mistral_v2;
pub mod n8n_v1;
pub mod registry;
pub mod steps;
pub mod workflow_v1;

use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::config::language::Bounds;
use crate::engines::profile::EngineProfile;
use crate::pilotage::{RequestError, RiskHints};
use serde_json::Value;
use std::collections::HashMap;

/// The step model a language's walker fills: every step with its locator,
/// kind, called capability and enclosing constructs. The operations read
/// only this, never a language's own program type.
pub use steps::{RunEnd, StepInfo, StepKind};

/// One program language as the gateway serves it. Implementations are
/// stateless and shared by every request (`Arc<dyn Language>`).
pub trait Language: Send + Sync {
    /// The kind a `[[language]]` table names to select this implementation
    /// (its Part II §3.3 identifier, e.g. `workflow/v1`).
    fn kind(&self) -> &'static str;

    /// The JSON type a program of this language travels as in a tool
    /// argument (Part III §4.6 allows a broad type constraint): `"object"`
    /// for a JSON document, `"string"` for a text language. Clients that
    /// build arguments from the schema parse the value by this type.
    fn program_json_type(&self) -> &'static str;

    /// The diagnostic locator dialect (Part II §5.5): `"json-pointer"`, or
    /// `"text-range"` for a text language, whose locators travel inside
    /// the gateway as [`crate::pilotage::text_range`] strings.
    fn locator(&self) -> &'static str {
        "json-pointer"
    }

    /// The locator of a whole-document finding: `""` for JSON Pointers,
    /// the full document's range for text ranges.
    fn root_locator(&self, _program: &Value) -> String {
        String::new()
    }

    /// The validation bounds (Part II §10.1), checked before anything else
    /// looks at the program: a `bounds_exceeded` request error past one.
    fn check_bounds(&self, program: &Value, bounds: &Bounds) -> Result<(), RequestError>;

    /// Why the program's value is not a program of this language at all
    /// (an `invalid_structure` diagnostic), or `None` when it has a form the
    /// walker and the engine can read.
    fn structure_problem(&self, program: &Value) -> Option<Diagnostic>;

    /// Every step of the program, wherever nested, in document order.
    fn steps(&self, program: &Value) -> Vec<StepInfo>;

    /// Gateway-native findings on the program's own form, before the
    /// engine is asked (reserved characters in step ids, ...), and on what
    /// the engine would let through, judged against the caller's catalog.
    fn native_checks(
        &self,
        program: &Value,
        steps: &[StepInfo],
        catalog: &CatalogView,
    ) -> Vec<Diagnostic>;

    /// The diagnostic for a step calling a capability the caller cannot see,
    /// located in this language's locator dialect; `visible` gives the
    /// close-match hints.
    fn unknown_capability(&self, step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic;

    /// The locator dialect: step id → the locator of that step, for the
    /// classifier's captured step ids.
    fn step_locators(&self, steps: &[StepInfo]) -> HashMap<String, String>;

    /// The static plan (Part II §5.6); `risk_of` gives a visible
    /// capability's risk and hints, given the step's parameters when the
    /// language has them (a catalog entry's risk can depend on a parameter
    /// value, as an HTTP method does).
    fn plan(&self, program: &Value, steps: &[StepInfo], risk_of: steps::plan::RiskOf<'_>) -> Value;

    /// The parameters `step` passes to its capability, as [`Language::plan`]
    /// hands them to `risk_of`, so the risk ceiling judges a step as its plan
    /// does; `None` for a language whose steps carry no such parameters.
    fn step_parameters<'p>(&self, _program: &'p Value, _step: &StepInfo) -> Option<&'p Value> {
        None
    }

    /// The hints aggregated over a plan (`max_risk_hints`).
    fn plan_max_hints(&self, plan: &Value) -> RiskHints;

    /// The engine's events → the flat trace at level `full` (Part II §5.8).
    fn trace(
        &self,
        program: &Value,
        events: &[Value],
        mapping: &EngineProfile,
        steps: &[StepInfo],
        end: RunEnd,
    ) -> Vec<Value>;

    /// A `full` trace cut down to level `summary`.
    fn summarize(&self, steps: &[Value]) -> Vec<Value>;

    /// The JSON Schema an inline program's `input` binds against (Part II
    /// §6.5.5), when the program declares one.
    fn input_schema(&self, program: &Value) -> Option<Value>;

    /// The name a program gives itself, shown on its promoted entry.
    fn program_name(&self, program: &Value) -> Option<String>;

    /// Whether a `full` trace entry is a call that completed, so that a run
    /// failing after it is `partial` (its effects stay) rather than `error`.
    /// A language whose runs begin with a step that only hands the input on
    /// (an n8n trigger) leaves that step out.
    fn completed_a_call(&self, step: &Value) -> bool {
        step.get("calls").is_some()
            && step.pointer("/outcome/ok").and_then(Value::as_bool) == Some(true)
    }
}
