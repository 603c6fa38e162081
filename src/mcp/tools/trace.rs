//! The trace-fetch loop tool (Part II §6.6): the stored envelope of a run,
//! at the lower of the requested and recorded levels. Unknown, expired,
//! refused, unstored and other principals' runs all get one byte-identical
//! `not_found` answer.

use super::{Args, Reply, ToolResult};
use crate::auth::Principal;
use crate::execute::Level;
use crate::gateway::{Gateway, LanguageRuntime};
use crate::pilotage::RequestError;
use serde_json::{Value, json};

/// The one answer for every run this caller cannot fetch.
const NOT_FOUND: &str = "unknown run: it may have expired or was never retained";

pub async fn call(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    args: &Args,
) -> ToolResult {
    if args.has("question") {
        return Err(RequestError::invalid(format!(
            "narration is not declared for {}: remove 'question'; the trace itself is the record",
            lang.config.name
        )));
    }
    let requested = match args.str("trace_level") {
        None => None,
        Some("none") => {
            return Err(RequestError::invalid(
                "trace_level \"none\" has no meaning when fetching a stored record: use \"summary\" or \"full\"",
            ));
        }
        Some(l) => Some(Level::parse(l).ok_or_else(|| {
            RequestError::invalid(format!(
                "unknown trace_level '{l}': use \"summary\" or \"full\""
            ))
        })?),
    };
    let run_id = args.str("run_id").unwrap_or_default();
    let record = gw
        .store
        .get_run(&principal.scope, run_id)
        .await
        .map_err(|e| crate::pilotage::store_internal(&e, "the run could not be read: retry later"))?
        .ok_or_else(|| RequestError::not_found(NOT_FOUND))?;
    let mut out = record;
    if let Some(trace) = out.get_mut("trace") {
        let recorded = trace
            .get("level")
            .and_then(Value::as_str)
            .and_then(Level::parse)
            .unwrap_or(Level::Summary);
        let level = requested.map_or(recorded, |r| r.min(recorded));
        if level < recorded {
            let steps = trace
                .get("steps")
                .and_then(Value::as_array)
                .map(|s| lang.language.summarize(s))
                .unwrap_or_default();
            trace["steps"] = json!(steps);
            trace["level"] = json!(level.as_str());
        }
    }
    let status = out["outcome"]["status"].as_str().unwrap_or("").to_string();
    Ok(Reply::new(out, format!("run {run_id}: {status}")))
}
