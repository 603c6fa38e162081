//! The first-answer checks that make sure every row measures real work: a
//! valid program with a plan, a completed run with its full trace, the same
//! manifest and catalog page on both sides of a floor row.

use crate::load::{self, Target};
use crate::scenario::{Baseline, Pair};
use serde_json::Value;

/// One answer as JSON, HTTP 200 required.
pub async fn answer(target: &Target) -> Result<Value, String> {
    let (status, body) = load::once(target, 0).await?;
    if !status.is_success() {
        return Err(format!(
            "{} answered HTTP {status}: {}",
            target.path,
            String::from_utf8_lossy(&body)
        ));
    }
    serde_json::from_slice(&body).map_err(|e| format!("{}: not JSON: {e}", target.path))
}

/// Checks the first answer of both sides in full before measuring them.
pub(crate) async fn probe(pair: &Pair, baseline: &Target, gateway: &Target) -> Result<(), String> {
    let base = answer(baseline).await?;
    let gw = answer(gateway).await?;
    let sc = &gw["result"]["structuredContent"];
    let fail = |what: &str, v: &Value| -> Result<(), String> {
        let text = v.to_string();
        Err(format!(
            "{}: {what}: {}",
            pair.id,
            &text[..text.len().min(600)]
        ))
    };
    if gw["result"]["isError"] != Value::Bool(false) {
        return fail("the gateway answered a request error", &gw);
    }
    match pair.baseline {
        Baseline::EngineCheck { .. } => {
            if base["ok"] != Value::Bool(true) || base["problems"] != serde_json::json!([]) {
                return fail("the engine's check found problems", &base);
            }
            if sc["valid"] != Value::Bool(true) || sc["plan"]["steps"].as_array().is_none() {
                return fail("the validate tool did not find the program valid", &gw);
            }
        }
        Baseline::EngineRun => {
            if base["state"] != "COMPLETED" || base["events"].as_array().is_none_or(Vec::is_empty) {
                return fail("the engine's run did not complete with events", &base);
            }
            let steps = sc["trace"]["steps"].as_array().map_or(0, Vec::len);
            if sc["outcome"]["status"] != "success" || sc["trace"]["level"] != "full" || steps == 0
            {
                return fail(
                    "the execute tool did not return a successful full trace",
                    &gw,
                );
            }
        }
        Baseline::FloorManifest => {
            if sc["pilotage"] != "1.1" || base != gw {
                return fail("the manifest (or the floor's copy of it) is wrong", &gw);
            }
        }
        Baseline::FloorCatalog => {
            if sc["items"].as_array().is_none_or(Vec::is_empty) || base != gw {
                return fail("the catalog page (or the floor's copy of it) is wrong", &gw);
            }
        }
    }
    Ok(())
}

/// Opens an MCP session on the gateway `target` points at (initialize, then
/// `notifications/initialized`, with `target`'s headers) and returns its
/// `Mcp-Session-Id`.
pub async fn open_session(target: &Target) -> Result<String, String> {
    let url = format!("http://{}{}", target.addr, target.path);
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http.post(&url).body(body.to_string());
        for (name, value) in &target.headers {
            request = request.header(name, value);
        }
        if let Some(id) = session {
            request = request.header("mcp-session-id", id);
        }
        request.send()
    };
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "pilotage-bench", "version": "1"}}});
    let answer = post(init, None)
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    let session = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "initialize answered HTTP {} without a session",
                answer.status()
            )
        })?;
    let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(note, Some(&session))
        .await
        .map_err(|e| format!("notifications/initialized: {e}"))?;
    if !answer.status().is_success() {
        return Err(format!(
            "notifications/initialized answered HTTP {}",
            answer.status()
        ));
    }
    Ok(session)
}
