//! A tool call that panics still answers. Without this guard a panic ends
//! the task serving the request and the client waits forever; with it the
//! caller gets an `internal` request error (counted like any other) and the
//! cause goes to the log, never to the caller.

use super::answer::Answer;
use super::tools::envelope;
use crate::pilotage::RequestError;
use futures_util::FutureExt;
use rmcp::ErrorData as McpError;
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

/// `call`, answering `internal` if it panics.
pub async fn guarded(
    tool: &str,
    call: impl Future<Output = Result<Answer, McpError>>,
) -> Result<Answer, McpError> {
    // Nothing the call borrowed is used after a panic: the request ends here.
    match AssertUnwindSafe(call).catch_unwind().await {
        Ok(answer) => answer,
        Err(panic) => Ok(envelope(Err(panicked(tool, panic.as_ref())))),
    }
}

/// The answer to a call whose handler panicked.
fn panicked(tool: &str, panic: &(dyn Any + Send)) -> RequestError {
    let cause = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(tool, cause, "a tool call panicked");
    RequestError::internal(
        "the gateway failed while answering this call (the cause is in its log): retry; if it persists, report it to the operator",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_answers_internal_without_its_cause() {
        let answer = guarded("t", async {
            if std::hint::black_box(true) {
                panic!("secret detail at 10.0.0.7");
            }
            Err(McpError::internal_error("unreachable", None))
        })
        .await
        .expect("an answer, not a carrier error");
        assert!(answer.is_error());
        let structured = answer.structured().unwrap();
        assert_eq!(structured["error"]["kind"], "internal");
        assert!(!structured.to_string().contains("10.0.0.7"), "{structured}");
    }

    #[tokio::test]
    async fn an_answer_passes_through() {
        let answer = guarded("t", async { Ok(envelope(Err(RequestError::invalid("x")))) })
            .await
            .unwrap();
        assert_eq!(
            answer.structured().unwrap()["error"]["kind"],
            "invalid_request"
        );
    }
}
