//! Observability of requests as they cross the gateway: the request log and
//! request ids, what a tool call's answer says, and the engine-call wrapper
//! (span, timing, trace-context headers).

pub mod carried;
pub mod engine;
pub mod log_format;
pub mod log_writer;
pub mod otel_env;
pub mod otlp;
pub mod request_log;
pub mod span_context;
mod timestamp;
pub mod tool_call;
pub mod trace_context;

/// A `Write` the logging tests read back: every clone appends to the same
/// bytes.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct TestSink(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

#[cfg(test)]
impl std::io::Write for TestSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
