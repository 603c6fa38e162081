//! The soak's mixed traffic: which request request number `n` is, who sends
//! it, and how its answer is read (its kind, a stored `run_id`, a lockout).
//!
//! Ten requests in a row: four validations (a few dozen programs, so the
//! verdict cache both hits and misses), a catalog page, the manifest, two
//! stored executes as key `soak`, one keyed execute as key `soak-keyed`
//! (sent twice, the second time through the next instance, as a client
//! retries), and one unstored anonymous execute.

use crate::workload;
use serde_json::{Value, json};

/// The API key of stored runs (tenant acme) in `gateway.soak.toml`.
pub const STORE_KEY: &str = "bench-soak-key";
/// The API key of keyed executes (tenant globex, nothing else runs there).
pub const KEYED_KEY: &str = "bench-soak-keyed";
/// The engine tenant of [`KEYED_KEY`].
pub const KEYED_TENANT: &str = "globex";

/// One request of the mix.
pub struct Call {
    pub body: Value,
    pub bearer: Option<&'static str>,
    /// A stored execute: its `run_id` must be fetchable at the end.
    pub stores: bool,
    /// A keyed execute: sent a second time with the same key.
    pub keyed: bool,
}

/// Request number `n` of the mix.
pub fn call(n: u64) -> Call {
    let tool = |name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
    };
    let program = |name: String| workload::workflow(&name);
    let anonymous = |body| Call {
        body,
        bearer: None,
        stores: false,
        keyed: false,
    };
    match n % 10 {
        0..=3 => anonymous(tool(
            "validate_workflow",
            json!({"workflow": program(format!("soak_{}", n % 40))}),
        )),
        4 => anonymous(tool(
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "list"}),
        )),
        5 => anonymous(tool("pilotage_manifest", json!({}))),
        6 | 7 => Call {
            body: tool(
                "run_workflow",
                json!({"workflow": program(workload::NAME.into()), "input": workload::input(),
                       "mode": "immediate", "trace_level": "full", "store": true}),
            ),
            bearer: Some(STORE_KEY),
            stores: true,
            keyed: false,
        },
        8 => Call {
            body: tool(
                "run_workflow",
                json!({"workflow": program(workload::NAME.into()), "input": workload::input(),
                       "mode": "immediate", "trace_level": "summary", "store": true,
                       "idempotency_key": format!("soak-{n}")}),
            ),
            bearer: Some(KEYED_KEY),
            stores: true,
            keyed: true,
        },
        _ => anonymous(tool(
            "run_workflow",
            json!({"workflow": program(workload::NAME.into()), "input": workload::input(),
                   "mode": "immediate", "trace_level": "summary", "store": false}),
        )),
    }
}

/// The trace fetch of a stored run, as key `soak` or `soak-keyed`.
pub fn fetch(run_id: &str, n: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": {"name": "trace_workflow", "arguments": {"run_id": run_id}}})
}

/// How one answer is read.
#[derive(Debug, Clone)]
pub struct Answer {
    /// `ok`, a request-error kind, a run outcome other than success
    /// (`run:<status>`), `http-<status>` or `transport`.
    pub kind: String,
    /// The `run_id` the answer names, if any.
    pub run_id: Option<String>,
    /// A refusal that locks a caller out: a rate limit or a full store share.
    pub lockout: bool,
}

impl Answer {
    pub fn transport() -> Self {
        Self {
            kind: "transport".into(),
            run_id: None,
            lockout: false,
        }
    }

    pub fn http(status: u16) -> Self {
        Self {
            kind: format!("http-{status}"),
            run_id: None,
            lockout: status == 429,
        }
    }
}

/// Reads a JSON-RPC answer (a JSON body or one server-sent event).
pub fn read(body: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(body);
    let json_text = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or(&text);
    let v: Value = serde_json::from_str(json_text.trim()).unwrap_or(Value::Null);
    let result = &v["result"];
    let s = &result["structuredContent"];
    let run_id = s["run_id"].as_str().map(str::to_owned);
    if let Some(kind) = s["error"]["kind"].as_str() {
        let message = s["error"]["message"].as_str().unwrap_or("");
        return Answer {
            kind: kind.to_owned(),
            run_id: None,
            lockout: message.contains("rate limit") || message.contains("store budget"),
        };
    }
    if v.get("error").is_some() {
        return Answer {
            kind: "jsonrpc-error".into(),
            run_id: None,
            lockout: false,
        };
    }
    if result["isError"] == Value::Bool(true) {
        return Answer {
            kind: "tool-error".into(),
            run_id,
            lockout: false,
        };
    }
    let kind = match s["status"].as_str().or(s["outcome"].as_str()) {
        Some(status) if status != "success" && run_id.is_some() => format!("run:{status}"),
        _ => "ok".into(),
    };
    Answer {
        kind,
        run_id,
        lockout: false,
    }
}
