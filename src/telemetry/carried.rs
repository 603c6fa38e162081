//! The request's scopes carried onto a thread of its own: the trace context
//! and the tool call that lines logged while serving a request name
//! (`log_format`). Task-local values stay on their task; work a request
//! hands to a plain thread takes them along with this.

use super::tool_call::ToolScope;
use super::trace_context::TraceContext;

/// The scopes current where it was taken.
pub struct Carried {
    trace: Option<TraceContext>,
    tool: Option<ToolScope>,
}

impl Carried {
    /// The scopes of the request being served here, if any.
    pub fn current() -> Self {
        Self {
            trace: TraceContext::current(),
            tool: ToolScope::current(),
        }
    }

    /// Runs `f` inside the carried scopes.
    pub fn run<R>(self, f: impl FnOnce() -> R) -> R {
        let inner = move || match self.tool {
            Some(tool) => tool.sync_scope(f),
            None => f(),
        };
        match self.trace {
            Some(trace) => trace.sync_scope(inner),
            None => inner(),
        }
    }
}
