//! Reading tool answers: the request-error kind, the outcome status and the
//! diagnostic codes, one copy for every suite; and an initialized session.

use super::{CallResult, Mcp, TestEnv};
use serde_json::Value;

/// Something that carries a `structuredContent`: a whole call result, or
/// the JSON already taken out of one.
pub trait Answer {
    fn structured(&self) -> &Value;
}

impl Answer for Value {
    fn structured(&self) -> &Value {
        self
    }
}

impl Answer for CallResult {
    fn structured(&self) -> &Value {
        &self.structured
    }
}

/// A started environment with an initialized anonymous session.
pub async fn session() -> (TestEnv, Mcp) {
    let env = TestEnv::start().await;
    let c = anonymous_session(&env).await;
    (env, c)
}

/// An initialized anonymous session on `env`.
pub async fn anonymous_session(env: &TestEnv) -> Mcp {
    let mut c = env.anonymous();
    c.initialize().await;
    c
}

/// The request-error kind of an `isError` result.
pub fn error_kind(r: &CallResult) -> &str {
    assert!(r.is_error, "expected a request error, got {}", r.structured);
    kind_of(r)
}

/// The request-error kind of a result, empty when it is not one.
pub fn kind_of(r: &CallResult) -> &str {
    r.structured["error"]["kind"].as_str().unwrap_or("")
}

/// Outcome status of an execute answer (never a request error).
pub fn status(r: &CallResult) -> &str {
    assert!(
        !r.is_error,
        "expected an outcome, got request error {}",
        r.structured
    );
    r.structured["outcome"]["status"].as_str().unwrap_or("")
}

/// Diagnostic codes of a validate or refused-execute answer.
pub fn codes(r: &impl Answer) -> Vec<String> {
    r.structured()["diagnostics"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|x| x["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
