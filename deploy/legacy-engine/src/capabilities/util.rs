//! `util.*`: echo, a capability that always fails, and a bounded sleep.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Invoked;
use super::args::{integer, text};

/// Longest `util.sleep`, whatever its (editable) schema says.
pub const MAX_SLEEP_MS: u64 = 5000;

/// `util.echo {value}` → `{value}`.
pub fn echo(args: &Value) -> Result<Value, String> {
    Ok(json!({"value": args.get("value").cloned().unwrap_or(Value::Null)}))
}

/// `util.fail {message}` → fails with the message.
pub fn fail(args: &Value) -> Result<Value, String> {
    Err(text(args, "message")?.to_owned())
}

/// `util.sleep {ms}` → `{slept_ms}`; a sleep that would outlast the run's deadline
/// sleeps until the deadline and reports a timeout.
pub async fn sleep(args: &Value, deadline: Instant) -> Invoked {
    let ms = match integer(args, "ms") {
        Ok(ms) => ms.clamp(0, MAX_SLEEP_MS as i64) as u64,
        Err(message) => return Invoked::Failed(message),
    };
    let wanted = Instant::now() + Duration::from_millis(ms);
    if wanted > deadline {
        tokio::time::sleep_until(deadline.into()).await;
        return Invoked::TimedOut;
    }
    tokio::time::sleep_until(wanted.into()).await;
    Invoked::Done(json!({"slept_ms": ms}))
}
