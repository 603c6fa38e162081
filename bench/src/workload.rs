//! What the benchmark sends: the workflow, the request bodies of every
//! scenario, and the marker each answer must contain to count as a success.
//!
//! The same program goes to the engine directly and through the gateway, and
//! the direct request bodies are exactly what the gateway itself sends the
//! engine (same members, same `deadline_ms`), so a ratio compares like with
//! like.

use bytes::Bytes;
use serde_json::{Value, json};

/// Tenant of the benchmark (its API key's tenant).
pub const TENANT: &str = "acme";
/// The shipped configuration's demo API key (tenant `acme`, no budget):
/// every gateway request carries it, as agents call with a key. Its runs
/// are retained and fetchable, an anonymous caller's are not.
pub const BEARER: &str = "Bearer demo-key";
/// The run deadline the gateway hands the engine (its default
/// `engine.run_deadline_ms`), repeated in the direct run requests.
pub const RUN_DEADLINE_MS: u64 = 30_000;

/// A realistic 1 KiB `workflow/v1` program for tenant `acme`: a read, a loop
/// over its matches with a branch inside (two calls and a `set` on one arm, a
/// `set` on the other), and a final call over the loop's output. Every call
/// only reads, so repeated runs leave the engine's world as it was and the
/// engine's own cost stays flat over a long run.
pub fn workflow(name: &str) -> Value {
    json!({
        "name": name,
        "input": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        "steps": [
            {"id": "find", "kind": "call", "capability": "crm.find_customer",
             "with": {"query": "$.input.query"}},
            {"id": "per_customer", "kind": "for_each", "items": "$.steps.find.output.matches", "as": "customer",
             "do": [
                {"id": "is_gold", "kind": "branch",
                 "when": {"and": [{"op": "eq", "left": "$.item.tier", "right": "gold"}, {"exists": "$.item.id"}]},
                 "then": [
                    {"id": "profile", "kind": "call", "capability": "crm.get_customer", "with": {"id": "$.item.id"}},
                    {"id": "invoices", "kind": "call", "capability": "billing.list_invoices",
                     "with": {"customer_id": "$.item.id"}},
                    {"id": "gold_row", "kind": "set", "value": {
                        "customer": "$.steps.profile.output.name",
                        "email": "$.steps.profile.output.email",
                        "invoices": "$.steps.invoices.output.count"}}
                 ],
                 "else": [
                    {"id": "other_row", "kind": "set", "value": {"customer": "$.item.name", "tier": "$.item.tier"}}
                 ]}
             ]},
            {"id": "report", "kind": "call", "capability": "util.echo", "with": {"value": "$.steps.per_customer.output"}}
        ],
        "output": {"matched": "$.steps.find.output.count", "rows": "$.steps.report.output.value"}
    })
}

/// The program name of the fixed-program scenarios.
pub const NAME: &str = "tier_review";

/// The run input: an empty query matches all three seeded customers, so the
/// loop runs three times and both branch arms are taken.
pub fn input() -> Value {
    json!({"query": ""})
}

/// A request body, fixed or different on every request.
#[derive(Clone, Debug)]
pub enum Body {
    Fixed(Bytes),
    /// `prefix` + a request counter + `suffix`: the counter goes inside the
    /// program's `name`, so every request carries a program never seen before
    /// (defeats the gateway's verdict cache without changing the work).
    Numbered {
        prefix: Bytes,
        suffix: Bytes,
    },
}

impl Body {
    /// Splits `value`'s compact JSON around the placeholder `marker`.
    fn numbered(value: &Value, marker: &str) -> Body {
        let text = value.to_string();
        let (prefix, suffix) = text
            .split_once(marker)
            .expect("the placeholder is in the serialized body");
        Body::Numbered {
            prefix: Bytes::copy_from_slice(prefix.as_bytes()),
            suffix: Bytes::copy_from_slice(suffix.as_bytes()),
        }
    }

    fn fixed(value: &Value) -> Body {
        Body::Fixed(Bytes::from(value.to_string()))
    }

    /// The body of request number `n`.
    pub fn render(&self, n: u64) -> Bytes {
        match self {
            Body::Fixed(b) => b.clone(),
            Body::Numbered { prefix, suffix } => {
                let counter = n.to_string();
                let mut out = Vec::with_capacity(prefix.len() + counter.len() + suffix.len());
                out.extend_from_slice(prefix);
                out.extend_from_slice(counter.as_bytes());
                out.extend_from_slice(suffix);
                Bytes::from(out)
            }
        }
    }

    /// Size of one rendered body (the counter of the first request).
    pub fn len(&self) -> usize {
        self.render(0).len()
    }
}

/// Placeholder replaced by the request counter in varying bodies.
const COUNTER: &str = "@@n@@";

fn program(vary: bool) -> Value {
    if vary {
        workflow(&format!("{NAME}_{COUNTER}"))
    } else {
        workflow(NAME)
    }
}

fn build(value: Value, vary: bool) -> Body {
    if vary {
        Body::numbered(&value, COUNTER)
    } else {
        Body::fixed(&value)
    }
}

/// `POST /api/v1/workflows/check`, as the gateway sends it.
pub fn engine_check(vary: bool) -> Body {
    build(json!({"workflow": program(vary)}), vary)
}

/// `POST /api/v1/workflows/run`, as the gateway sends it (trace on, not a
/// dry run, the gateway's deadline).
pub fn engine_run() -> Body {
    build(
        json!({"workflow": program(false), "input": input(), "trace": true,
               "dry_run": false, "deadline_ms": RUN_DEADLINE_MS}),
        false,
    )
}

/// A JSON-RPC `tools/call` of `tool` with `arguments`.
fn tools_call(tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

/// The gateway's validate tool on the benchmark program.
pub fn mcp_validate(vary: bool) -> Body {
    build(
        tools_call("validate_workflow", json!({"workflow": program(vary)})),
        vary,
    )
}

/// The gateway's execute tool: run now, full trace, stored.
pub fn mcp_execute() -> Body {
    build(
        tools_call(
            "run_workflow",
            json!({"workflow": program(false), "input": input(), "mode": "immediate",
                   "trace_level": "full", "store": true}),
        ),
        false,
    )
}

/// The execute tool at trace level `level`, stored; with `keys`, every
/// request carries an idempotency key of its own ([`idempotency_key`]).
pub fn mcp_execute_at(level: &str, keys: Option<&str>) -> Body {
    let mut arguments = json!({"workflow": program(false), "input": input(), "mode": "immediate",
                               "trace_level": level, "store": true});
    if let Some(prefix) = keys {
        arguments["idempotency_key"] = Value::String(idempotency_key(prefix, COUNTER));
    }
    build(tools_call("run_workflow", arguments), keys.is_some())
}

/// The idempotency key of request `n` of [`mcp_execute_at`] with `prefix`.
pub fn idempotency_key(prefix: &str, n: impl std::fmt::Display) -> String {
    format!("capacity-{prefix}-{n}")
}

/// The trace fetch tool on one stored run.
pub fn mcp_trace_fetch(run_id: &str) -> Body {
    build(
        tools_call("trace_workflow", json!({"run_id": run_id})),
        false,
    )
}

/// `pilotage_manifest`.
pub fn mcp_manifest() -> Body {
    build(tools_call("pilotage_manifest", json!({})), false)
}

/// `pilotage_catalog` verb `list` (the first page).
pub fn mcp_catalog_list() -> Body {
    build(
        tools_call(
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "list"}),
        ),
        false,
    )
}

/// Markers an answer must contain to count as a success. They are checked on
/// every answer with a substring search, cheap enough not to load the client;
/// the first answer of every scenario is also checked in full (see `probe`).
pub mod expect {
    /// The engine's validator found nothing.
    pub const CHECK_OK: &str = r#""ok":true"#;
    /// The engine ran the program to its end.
    pub const RUN_COMPLETED: &str = r#""state":"COMPLETED""#;
    /// The validate tool found the program valid.
    pub const VALID: &str = r#""valid":true"#;
    /// The execute tool's one-line summary of a successful run.
    pub const RUN_SUCCESS: &str = r#""text":"success (run "#;
    /// Any tool answer that is not a request error.
    pub const TOOL_OK: &str = r#""isError":false"#;
    /// The floor answers the captured tool answer verbatim.
    pub const FLOOR: &str = r#""jsonrpc":"2.0""#;
}
