//! `pilotage trace RUN_ID`: the trace fetch door (Part II §6.6). The run's
//! recorded facts come back as they were stored; decisions are highlighted
//! like in `run`. Only a Language declaring `trace_fetch` is asked.

use super::{Rendered, Stopped};
use crate::discovery;
use crate::output::{self, Style};
use crate::report::Exit;
use crate::server::{PilotageServer, Timeouts, args, call_structured};
use crate::values::Outcome;
use serde_json::{Value, json};

pub async fn run<S: PilotageServer>(
    server: &S,
    language: Option<&str>,
    run_id: &str,
    level: Option<&str>,
    timeouts: Timeouts,
    style: Style,
) -> Result<Rendered, Stopped> {
    let d = discovery::discover(server, timeouts)
        .await
        .map_err(|e| Stopped::new("discover", e))?;
    let lang = discovery::pick(&d, language, "trace_fetch", |l| l.caps.trace_fetch)
        .map_err(|e| Stopped::new("discover", e))?;
    let tool = lang.trace_tool.clone().unwrap_or_default();
    let mut a = args([("run_id", json!(run_id))]);
    if let Some(l) = level {
        a.insert("trace_level".into(), json!(l));
    }
    let v = call_structured(server, &tool, a, timeouts.call)
        .await
        .map_err(|e| Stopped::new("trace", e))?;
    let mut text = format!("language {}, tool {tool}\n", lang.name);
    if let Some(o) = v.get("outcome").and_then(Outcome::parse) {
        text.push_str(&format!("outcome: {}\n", output::outcome(&o, style)));
    }
    text.push_str(&format!(
        "run_id:  {}\n",
        v.get("run_id").and_then(Value::as_str).unwrap_or("?")
    ));
    if let Some(o) = v.get("output") {
        text.push_str(&format!("output:  {o}\n"));
    }
    if let Some(t) = v.get("trace") {
        text.push_str(&output::trace(t, style));
    }
    if let Some(n) = v.get("narration").and_then(Value::as_str) {
        text.push_str(&format!("narration (server prose, not evidence): {n}\n"));
    }
    Ok(Rendered {
        text,
        json: json!({"language": lang.name, "answer": v}),
        exit: Exit::Success,
    })
}
