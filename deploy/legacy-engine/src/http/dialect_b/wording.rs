//! Dialect b's sentences, shape for shape the same problems as dialect a in other
//! words (README "Message shapes", column b).

use crate::language::schema::{Allowed, Issue, IssueKind};
use crate::runtime::event::Failure;
use crate::validate::problem::Kind;

fn allowed(allowed: &Allowed) -> String {
    match allowed {
        Allowed::OneOf(values) => values.join("|"),
        Allowed::Range(range) => range.clone(),
    }
}

/// The `msg` of an issue.
pub fn text(kind: &Kind) -> String {
    match kind {
        Kind::UnknownCapability {
            name,
            suggestion: Some(s),
        } => format!("no function named '{name}' exists; perhaps '{s}'"),
        Kind::UnknownCapability {
            name,
            suggestion: None,
        } => format!("no function named '{name}' exists"),
        Kind::NotEnabled { name, tenant } => {
            format!("function '{name}' is not licensed for org {tenant}")
        }
        Kind::MissingParam { param, capability } => {
            format!("function {capability}: argument '{param}' is required")
        }
        Kind::TypeMismatch {
            param,
            capability,
            expected,
            got,
        } => {
            format!("function {capability}: argument '{param}' must be {expected} (saw {got})")
        }
        Kind::InvalidValue {
            param,
            capability,
            value,
            allowed: a,
        } => {
            format!(
                "function {capability}: argument '{param}' must be one of {} (saw '{value}')",
                allowed(a)
            )
        }
        Kind::UnexpectedParam { param, capability } => {
            format!("function {capability}: argument '{param}' is not recognised")
        }
        Kind::DuplicateId { id } => format!("node id '{id}' appears more than once"),
        Kind::MissingId { position } => format!("node at position {position} lacks an id"),
        Kind::UnsupportedStep { kind } => format!("node kind '{kind}' is not supported"),
        Kind::BadExpression { step, expr } => {
            format!("node '{step}': expression '{expr}' is malformed")
        }
        Kind::NotRunYet { step, other } => {
            format!("node '{step}' uses '{other}' before it has produced output")
        }
        Kind::OnlyInLoop {
            step,
            other,
            loop_id,
        } => {
            format!("node '{step}' reads '{other}', which only exists inside loop '{loop_id}'")
        }
        Kind::BranchShape { step } => format!("decision node '{step}' requires when/then"),
        Kind::ForEachShape { step } => format!("loop node '{step}' requires items/as/do"),
        Kind::SetShape { step } => format!("assign node '{step}' requires value"),
        Kind::UnknownOperator { op } => format!("comparison '{op}' is not supported"),
        Kind::LoopValueOutsideLoop { step, .. } => {
            format!("node '{step}' reads the loop element outside any loop")
        }
        Kind::UndeclaredInput { field } => {
            format!("param '{field}' is not part of the declared input")
        }
        Kind::Deprecated {
            name,
            replacement: Some(r),
        } => format!("function '{name}' is retired; prefer {r}"),
        Kind::Deprecated {
            name,
            replacement: None,
        } => format!("function '{name}' is retired; prefer a newer function"),
        Kind::UnusedOutput { step } => format!("node '{step}' result is discarded"),
        Kind::StepBudget { count, limit } => {
            format!("QUOTA: node budget exceeded {count} of {limit}")
        }
        Kind::ContextMissing { step, key } => format!("node '{step}': ctx key '{key}' missing"),
        Kind::NoSteps => "definition has no 'steps' array".to_owned(),
        Kind::NestingDepth { depth, limit } => {
            format!("QUOTA: nesting depth exceeded {depth} of {limit}")
        }
        Kind::BadInputSchema => "definition 'input' is not a schema object".to_owned(),
        Kind::BadOutputMapping => "definition 'output' is not an object".to_owned(),
        Kind::RunInput(issue) => format!(
            "params do not satisfy the declared input: {}",
            input_detail(issue)
        ),
    }
}

fn input_detail(issue: &Issue) -> String {
    let field = &issue.name;
    match &issue.kind {
        IssueKind::Type { expected, got } if field.is_empty() => {
            format!("params must be {expected} (saw {got})")
        }
        IssueKind::Missing => format!("field '{field}' is required"),
        IssueKind::Unexpected => format!("field '{field}' is not recognised"),
        IssueKind::Type { expected, got } => {
            format!("field '{field}' must be {expected} (saw {got})")
        }
        IssueKind::Value { value, allowed: a } => {
            format!(
                "field '{field}' must be one of {} (saw '{value}')",
                allowed(a)
            )
        }
    }
}

/// The `err` of a failed invoke entry.
pub fn failure(failure: &Failure) -> String {
    match failure {
        Failure::Message(message) => message.clone(),
        Failure::Args(kind) => text(kind),
    }
}

/// The job `failure` of a failed job.
pub fn node_failed(step: &str, f: &Failure) -> String {
    format!("node '{step}' failed: {}", failure(f))
}

/// The job `failure` of a timed-out job.
pub fn timed_out(deadline_ms: u64) -> String {
    format!("timeout after {deadline_ms} ms")
}

/// The job `failure` of a rejected job.
pub const REJECTED: &str = "definition rejected";
