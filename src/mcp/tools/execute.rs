//! The execute loop tool (Part II §6.5): reads the reserved members of
//! Part III §4.4 and hands them to `crate::execute`. A failed or refused run
//! is an ordinary result carrying its outcome. A test run says so where a
//! reader looks first: the text starts with it and the answer carries a
//! top-level `test_run: true`, not only `trace.stats.test_run`.

use super::{Args, Reply, ToolResult};
use crate::auth::Principal;
use crate::execute::{self, ExecuteRequest, RunTerms};
use crate::gateway::{Gateway, LanguageRuntime};
use serde_json::Value;

pub async fn call(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    mut args: Args,
    terms: RunTerms,
) -> ToolResult {
    let argument = &lang.config.argument;
    let program_text = args.received(argument).map(ToOwned::to_owned);
    let context_text = args.received("context").map(ToOwned::to_owned);
    let program = args.take(argument);
    let input = args.take("input");
    let context = args.take("context");
    let text = |k: &str| args.str(k).map(str::to_string);
    let req = ExecuteRequest {
        program,
        program_text,
        program_ref: text("program_ref"),
        input,
        context,
        context_text,
        trace_level: text("trace_level"),
        store: args.value("store").and_then(Value::as_bool),
        expected_catalog_version: text("expected_catalog_version"),
        idempotency_key: text("idempotency_key"),
        test_run: args.value("test_run").and_then(Value::as_bool),
        mode: text("mode"),
        terms,
    };
    let test_run = req.test_run == Some(true);
    let mut response = execute::execute(gw, lang, principal, req).await?;
    if test_run && let Some(answer) = response.as_object_mut() {
        answer.insert("test_run".into(), Value::Bool(true));
    }
    let outcome = &response["outcome"];
    let status = outcome["status"].as_str().unwrap_or("unknown");
    let summary = match outcome["error"].as_str() {
        None => format!(
            "{status} (run {})",
            response["run_id"].as_str().unwrap_or("")
        ),
        Some(e) => format!("{status}: {e}"),
    };
    let summary = if test_run {
        format!("TEST RUN, simulated: no side effects took place, outputs are simulated. {summary}")
    } else {
        summary
    };
    Ok(Reply::new(response, summary))
}
