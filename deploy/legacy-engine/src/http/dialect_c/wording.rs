//! Dialect c's sentences: dialect a's, except that allowed values are listed
//! as `a / b / c`.

use crate::http::dialect_a::wording as a;
use crate::language::schema::Allowed;
use crate::runtime::event::Failure;
use crate::validate::problem::Kind;

/// The `message` of a finding.
pub fn text(kind: &Kind) -> String {
    match kind {
        Kind::InvalidValue {
            param,
            capability,
            value,
            allowed,
        } => {
            let allowed = match allowed {
                Allowed::OneOf(values) => values.join(" / "),
                Allowed::Range(range) => range.clone(),
            };
            format!(
                "invalid value '{value}' for parameter '{param}' of {capability} (allowed: {allowed})"
            )
        }
        other => a::text(other),
    }
}

/// The `problem` of a failed invoke record.
pub fn failure(failure: &Failure) -> String {
    match failure {
        Failure::Message(message) => message.clone(),
        Failure::Args(kind) => text(kind),
    }
}

pub fn step_failed(step: &str, f: &Failure) -> String {
    format!("step '{step}' failed: {}", failure(f))
}

pub use a::{REJECTED, timed_out};
