//! Dialect a's sentences: every problem shape, call failure and run error, worded
//! exactly as README "Message shapes" lists them (the gateway's classifier rules are
//! written against these texts).

use crate::language::schema::{Allowed, Issue, IssueKind};
use crate::runtime::event::Failure;
use crate::validate::problem::Kind;

fn allowed(allowed: &Allowed) -> String {
    match allowed {
        Allowed::OneOf(values) => values.join(", "),
        Allowed::Range(range) => range.clone(),
    }
}

/// The text of a problem.
pub fn text(kind: &Kind) -> String {
    match kind {
        Kind::UnknownCapability {
            name,
            suggestion: Some(s),
        } => format!("unknown capability '{name}' (did you mean '{s}'?)"),
        Kind::UnknownCapability {
            name,
            suggestion: None,
        } => format!("unknown capability '{name}'"),
        Kind::NotEnabled { name, tenant } => {
            format!("capability '{name}' is not enabled for tenant {tenant}")
        }
        Kind::MissingParam { param, capability } => {
            format!("missing required parameter '{param}' for {capability}")
        }
        Kind::TypeMismatch {
            param,
            capability,
            expected,
            got,
        } => {
            format!("parameter '{param}' of {capability} expects {expected}, got {got}")
        }
        Kind::InvalidValue {
            param,
            capability,
            value,
            allowed: a,
        } => {
            format!(
                "invalid value '{value}' for parameter '{param}' of {capability} (allowed: {})",
                allowed(a)
            )
        }
        Kind::UnexpectedParam { param, capability } => {
            format!("unexpected parameter '{param}' for {capability}")
        }
        Kind::DuplicateId { id } => format!("duplicate step id '{id}'"),
        Kind::MissingId { position } => format!("step #{position} has no id"),
        Kind::UnsupportedStep { kind } => format!("unknown step kind '{kind}'"),
        Kind::BadExpression { step, expr } => {
            format!("step '{step}': cannot parse expression '{expr}'")
        }
        Kind::NotRunYet { step, other } => {
            format!("step '{step}': reference to step '{other}' which has not run yet")
        }
        Kind::OnlyInLoop {
            step,
            other,
            loop_id,
        } => {
            format!("step '{step}': step '{other}' is only visible inside loop '{loop_id}'")
        }
        Kind::BranchShape { step } => {
            format!("branch '{step}' needs a 'when' condition and a non-empty 'then' list")
        }
        Kind::ForEachShape { step } => {
            format!("for_each '{step}' needs 'items', 'as' and a non-empty 'do' list")
        }
        Kind::SetShape { step } => format!("set step '{step}' needs a 'value'"),
        Kind::UnknownOperator { op } => format!("unknown condition operator '{op}'"),
        Kind::LoopValueOutsideLoop { step, expr } => {
            format!("'{expr}' used outside of a loop in step '{step}'")
        }
        Kind::UndeclaredInput { field } => {
            format!("input field '{field}' is not declared in the workflow input schema")
        }
        Kind::Deprecated {
            name,
            replacement: Some(r),
        } => format!("capability '{name}' is deprecated: use {r}"),
        Kind::Deprecated {
            name,
            replacement: None,
        } => {
            format!("capability '{name}' is deprecated: use a newer capability")
        }
        Kind::UnusedOutput { step } => format!("output of step '{step}' is never used"),
        Kind::StepBudget { count, limit } => {
            format!("E_LIMIT_0042: step budget exhausted ({count}/{limit})")
        }
        Kind::ContextMissing { step, key } => {
            format!("step '{step}': context value '{key}' is not available")
        }
        Kind::NoSteps => "workflow must have a 'steps' list".to_owned(),
        Kind::NestingDepth { depth, limit } => {
            format!("E_LIMIT_0043: nesting depth exhausted ({depth}/{limit})")
        }
        Kind::BadInputSchema => "workflow 'input' must be a JSON Schema object".to_owned(),
        Kind::BadOutputMapping => "workflow 'output' must be an object of expressions".to_owned(),
        Kind::RunInput(issue) => format!(
            "run input does not match the workflow input schema: {}",
            input_detail(issue)
        ),
    }
}

fn input_detail(issue: &Issue) -> String {
    let field = &issue.name;
    match &issue.kind {
        IssueKind::Type { expected, got } if field.is_empty() => {
            format!("input expects {expected}, got {got}")
        }
        IssueKind::Missing => format!("missing required field '{field}'"),
        IssueKind::Unexpected => format!("unexpected field '{field}'"),
        IssueKind::Type { expected, got } => {
            format!("field '{field}' expects {expected}, got {got}")
        }
        IssueKind::Value { value, allowed: a } => {
            format!(
                "invalid value '{value}' for field '{field}' (allowed: {})",
                allowed(a)
            )
        }
    }
}

/// The `error` of a failed call event.
pub fn failure(failure: &Failure) -> String {
    match failure {
        Failure::Message(message) => message.clone(),
        Failure::Args(kind) => text(kind),
    }
}

/// The run `error` of a FAILED run.
pub fn step_failed(step: &str, f: &Failure) -> String {
    format!("step '{step}' failed: {}", failure(f))
}

/// The run `error` of a TIMED_OUT run.
pub fn timed_out(deadline_ms: u64) -> String {
    format!("deadline of {deadline_ms} ms exceeded")
}

/// The run `error` of a REJECTED run.
pub const REJECTED: &str = "workflow rejected";
