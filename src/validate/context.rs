//! Context binding (Part II §6.4): the request's `context` against the
//! language's `context_schema`.

use crate::classify::Diagnostic;
use crate::gateway::LanguageRuntime;
use crate::languages::binding;
use serde_json::Value;

/// Context binding (Part II §6.4): checked against `context_schema`, refused
/// when the language declares none.
pub fn context_findings(lang: &LanguageRuntime, context: Option<&Value>) -> Vec<Diagnostic> {
    match (&lang.context_schema, context) {
        (None, None) => Vec::new(),
        (None, Some(_)) => vec![binding::binding_root(
            "context_binding",
            format!(
                "language {} takes no context; remove the 'context' member",
                lang.config.name
            ),
        )],
        (Some(_), None) => vec![binding::binding_root(
            "context_binding",
            "this language requires a 'context' value (see context_schema in the manifest)".into(),
        )],
        (Some((_, validator)), Some(ctx)) => {
            binding::bind(validator, ctx, "context_binding", "context")
        }
    }
}
