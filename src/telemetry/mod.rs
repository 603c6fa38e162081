//! Observability of requests as they cross the gateway: the request log and
//! request ids, what a tool call's answer says, and the engine-call wrapper
//! (span, timing, trace-context headers).

pub mod engine;
pub mod log_format;
pub mod log_writer;
pub mod otel_env;
pub mod otlp;
pub mod request_log;
pub mod span_context;
pub mod tool_call;
pub mod trace_context;
