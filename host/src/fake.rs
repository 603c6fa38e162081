//! A scripted [`PilotageServer`] for unit tests: a workflow-like Language,
//! answers chosen per tool and per call, and a log of every call, so tests
//! can assert what the Host transmitted and what it did not.

use crate::server::{PilotageServer, ToolAnswer, TransportError};
use crate::values::EXTENSION_ID;
use serde_json::{Map, Value, json};
use std::cell::{Cell, RefCell};
use std::time::Duration;

/// Answers one call: tool name, arguments, and how many times this tool was
/// called before.
pub type Responder =
    Box<dyn Fn(&str, &Map<String, Value>, usize) -> Result<ToolAnswer, TransportError>>;

pub struct FakeServer {
    pub manifest: Value,
    pub tools: Vec<Value>,
    responder: Responder,
    pub calls: RefCell<Vec<(String, Map<String, Value>)>>,
    pub tools_changed: Cell<bool>,
}

pub fn ok(v: Value) -> Result<ToolAnswer, TransportError> {
    Ok(ToolAnswer {
        structured: Some(v),
        is_error: false,
    })
}

pub fn request_error(kind: &str) -> Result<ToolAnswer, TransportError> {
    Ok(ToolAnswer {
        structured: Some(json!({"error": {"kind": kind, "message": "scripted"}})),
        is_error: true,
    })
}

/// A Language entry like the gateway's `workflow/v1`.
pub fn language(plan: bool) -> Value {
    json!({"name": "workflow/v1", "title": "Workflows", "guides": "pilotage_get_guide",
        "catalog": "pilotage_catalog",
        "loop": {"validate": "validate_workflow", "execute": "run_workflow"},
        "capabilities": {"guides": true, "catalog": true, "validate": true, "plan": plan,
            "execute": {"idempotency": true}},
        "locator": "json-pointer", "execution": "both", "trace": "full", "retention": "none"})
}

fn tools() -> Vec<Value> {
    let decl = json!({EXTENSION_ID: {"argument": "workflow", "language": "workflow/v1"}});
    vec![
        json!({"name": "pilotage_manifest", "inputSchema": {"type": "object"}}),
        json!({"name": "pilotage_get_guide", "inputSchema": {"type": "object"}}),
        json!({"name": "pilotage_catalog", "inputSchema": {"type": "object"}}),
        json!({"name": "validate_workflow", "_meta": decl,
            "inputSchema": {"type": "object", "properties": {"workflow": {}, "context": {}}}}),
        json!({"name": "run_workflow", "_meta": decl,
            "inputSchema": {"type": "object", "properties": {"workflow": {}, "input": {"type": "object"},
                "expected_catalog_version": {"type": "string"}, "mode": {"type": "string"},
                "idempotency_key": {"type": "string"}, "trace_level": {"type": "string"}}}}),
    ]
}

/// The answers every scenario shares: manifest is answered by the fake
/// itself, guides here; everything else goes to `rest`.
pub fn with_guides(
    rest: impl Fn(&str, &Map<String, Value>, usize) -> Result<ToolAnswer, TransportError> + 'static,
) -> Responder {
    Box::new(move |tool, args, n| match tool {
        "pilotage_get_guide" if args.contains_key("id") => ok(json!({"guide": {
            "id": "core", "version": "1", "body": "# core"}})),
        "pilotage_get_guide" => ok(json!({"guides": [{"id": "core", "title": "Core",
            "level": "core", "version": "1", "topics": [], "language": "workflow/v1", "size_bytes": 6}]})),
        _ => rest(tool, args, n),
    })
}

/// A plan answer with the given max risk hints.
pub fn valid_with_plan(cv: &str, destructive: bool, open_world: bool) -> Value {
    json!({"valid": true, "diagnostics": [], "catalog_version": cv,
        "plan": {"steps": [{"id": "s", "calls": "x.y", "risk": "r",
            "risk_hints": {"readOnly": false, "destructive": destructive, "openWorld": open_world}}],
            "max_risk": "r",
            "max_risk_hints": {"readOnly": false, "destructive": destructive, "openWorld": open_world}}})
}

pub fn outcome(ok: bool, status: &str) -> Value {
    json!({"run_id": "run_1", "outcome": {"ok": ok, "status": status,
        "error": if ok { Value::Null } else { json!("scripted failure") }}})
}

impl FakeServer {
    pub fn new(language: Value, responder: Responder) -> FakeServer {
        FakeServer {
            manifest: json!({"pilotage": "1.1", "languages": [language]}),
            tools: tools(),
            responder,
            calls: RefCell::new(Vec::new()),
            tools_changed: Cell::new(false),
        }
    }

    /// The calls made to `tool`, in order.
    pub fn calls_to(&self, tool: &str) -> Vec<Map<String, Value>> {
        self.calls
            .borrow()
            .iter()
            .filter(|(t, _)| t == tool)
            .map(|(_, a)| a.clone())
            .collect()
    }
}

impl PilotageServer for FakeServer {
    fn identity(&self) -> &str {
        "fake://server"
    }

    fn initialize_meta(&self) -> Option<&Value> {
        None
    }

    fn declared_extension(&self) -> bool {
        true
    }

    fn take_tools_changed(&self) -> bool {
        self.tools_changed.replace(false)
    }

    async fn list_tools(&self) -> Result<Vec<Value>, TransportError> {
        self.calls
            .borrow_mut()
            .push(("tools/list".into(), Map::new()));
        Ok(self.tools.clone())
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        _timeout: Duration,
    ) -> Result<ToolAnswer, TransportError> {
        let n = self.calls_to(name).len();
        self.calls
            .borrow_mut()
            .push((name.to_string(), arguments.clone()));
        if name == "pilotage_manifest" {
            return ok(self.manifest.clone());
        }
        (self.responder)(name, &arguments, n)
    }
}
