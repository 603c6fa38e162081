//! The `tools/list` entries: names, cold-start descriptions (Part III §3.4),
//! input schemas, `anyOf` output schemas (§6), annotations (§4.5) and the
//! program declaration `_meta` (§5).
//!
//! Each input schema comes twice. The published one teaches: `required` and
//! `enum` wherever the server requires or restricts a value, so a client that
//! builds calls from the schema alone (forms, LLM tool calling) sends a call
//! that is accepted. The checked one is what the front enforces as a
//! structural `-32602`: JSON types (and the access tools' own `verb`), never
//! the taught values, so an unknown `mode` or `trace_level` and a missing
//! runnable stay Pilotage request errors (§4.6: deterministic routing).

use super::tools::{approvals, catalog, get_guide, manifest};
use crate::auth::Reach;
use crate::auth::policy::{Permission, Permissions};
use crate::gateway::{Gateway, LanguageRuntime};
use crate::pilotage::EXTENSION_ID;
use serde_json::{Map, Value, json};

/// What a tool does, for dispatch.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRole {
    Manifest,
    Guide,
    Catalog,
    Validate(String),
    Execute(String),
    Trace(String),
    /// The gateway's own tool for approvers (`approve` permission).
    Approvals,
}

/// One listed tool with its role.
pub struct ToolSpec {
    pub role: ToolRole,
    pub json: Value,
    /// The input schema the front checks (see the module comment).
    pub checked: Value,
}

impl ToolSpec {
    pub fn name(&self) -> &str {
        self.json["name"].as_str().unwrap_or_default()
    }
    pub fn input_schema(&self) -> &Value {
        &self.json["inputSchema"]
    }

    #[cfg(test)]
    pub fn for_tests(role: ToolRole, json: Value) -> Self {
        Self::new(role, json, &[])
    }

    /// A tool whose checked schema is its published one without the taught
    /// `enum`s and with only `structural` left required.
    fn new(role: ToolRole, json: Value, structural: &[&str]) -> Self {
        let checked = untaught(&json["inputSchema"], structural);
        Self {
            role,
            json,
            checked,
        }
    }
}

/// Members whose `enum` the front enforces itself (an access tool's verb
/// selects the operation, Part III §4).
const ENFORCED_ENUMS: &[&str] = &["verb"];

/// `schema` with taught `enum`s removed from its members and `required`
/// narrowed to `structural`.
fn untaught(schema: &Value, structural: &[&str]) -> Value {
    let mut out = schema.clone();
    if let Some(props) = out.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, member) in props.iter_mut() {
            if !ENFORCED_ENUMS.contains(&name.as_str())
                && let Some(m) = member.as_object_mut()
            {
                m.remove("enum");
            }
        }
    }
    if let Some(obj) = out.as_object_mut() {
        obj.remove("required");
        if !structural.is_empty() {
            obj.insert("required".into(), json!(structural));
        }
    }
    out
}

/// Every tool this gateway lists to a principal with `perms`, in a stable
/// order: loop tools exist exactly per that principal's capability map.
pub fn all(gw: &Gateway, perms: Permissions, reach: Reach) -> Vec<ToolSpec> {
    let languages = gw.language_names();
    let names = languages.join(", ");
    let mut out = vec![
        ToolSpec::new(
            ToolRole::Manifest,
            json!({
                "name": manifest::NAME,
                "title": "Pilotage manifest",
                "description": format!("START HERE. Call this first: it returns the Pilotage manifest, the map of this server's program languages ({names}), their capabilities and the names of the tools that learn, look up, validate, execute and fetch traces. Pilotage loop: manifest → guides ({}) → catalog ({}) → validate → execute → trace.", get_guide::NAME, catalog::NAME),
                "inputSchema": {"type": "object", "properties": {}},
                "outputSchema": any_of(vec![manifest_shape()]),
                "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
            }),
            &[],
        ),
        ToolSpec::new(
            ToolRole::Guide,
            json!({
                "name": get_guide::NAME,
                "title": "Pilotage guides (learn)",
                "description": format!("Learn stage: the guides that teach a program language ({names}). Without 'id' it lists the guides (read the one with level \"core\" first); with 'id' it returns one guide; with 'id' and 'topic' just that topic. The closed-sets guide lists every diagnostic code, status and scope rule."),
                "inputSchema": {"type": "object", "properties": {
                    "language": {"type": "string", "enum": languages}, "id": {"type": "string"}, "topic": {"type": "string"}},
                    "required": ["language"]},
                "outputSchema": any_of(vec![
                    json!({"type": "object", "required": ["guides"], "properties": {"guides": {"type": "array", "items": {"type": "object"}}}}),
                    json!({"type": "object", "required": ["guide"], "properties": {"guide": {"type": "object", "required": ["id", "body"]}}}),
                ]),
                "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
            }),
            &["language"],
        ),
        ToolSpec::new(
            ToolRole::Catalog,
            json!({
                "name": catalog::NAME,
                "title": "Pilotage catalog (lookup)",
                "description": format!("Lookup stage: the catalog of live names a program may use in {names} (capabilities with their input schemas and risk, and promoted programs). verb \"list\" (filters kind, tag, q, cursor, limit), \"get\" (id), \"changed_since\" (catalog_version). Every answer carries catalog_version; pass it to execute as expected_catalog_version."),
                "inputSchema": {"type": "object", "properties": {
                    "language": {"type": "string", "enum": languages},
                    "verb": {"type": "string", "enum": ["list", "get", "changed_since"]},
                    "kind": {"type": "string"}, "tag": {"type": "string"}, "q": {"type": "string"},
                    "cursor": {"type": "string"}, "limit": {"type": "integer", "minimum": 1},
                    "id": {"type": "string"}, "catalog_version": {"type": "string"}},
                    "required": ["language", "verb"]},
                "outputSchema": any_of(vec![
                    json!({"type": "object", "required": ["items", "catalog_version"], "properties": {"items": {"type": "array", "items": {"type": "object"}}, "catalog_version": {"type": "string"}, "next_cursor": {"type": "string"}}}),
                    json!({"type": "object", "required": ["entry", "catalog_version"], "properties": {"entry": {"type": "object"}, "catalog_version": {"type": "string"}}}),
                    json!({"type": "object", "required": ["catalog_version", "changes"], "properties": {"catalog_version": {"type": "string"}, "changes": {"type": "array", "items": {"type": "object"}}}}),
                ]),
                "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
            }),
            &["language", "verb"],
        ),
    ];
    for lang in &gw.languages {
        out.extend(loop_tools(lang, perms, reach));
    }
    if perms.has(Permission::Approve) && reach == Reach::Lasting {
        out.push(approvals_tool());
    }
    out
}

/// `pilotage_approvals`, for principals that decide other callers' held runs.
fn approvals_tool() -> ToolSpec {
    ToolSpec::new(
        ToolRole::Approvals,
        json!({
            "name": approvals::NAME,
            "title": "Approve held runs (four eyes)",
            "description": "For a person who approves risky runs: verb \"list\" shows the runs of this tenant held because their plan is riskier than their caller may run alone (steps, risk, program digest, who asked); verb \"approve\" or \"decline\" with task_id decides one. An approved run starts at once, exactly the program that was held, on the catalog it was checked on; a declined one ends with nothing executed. Nobody decides their own run here.",
            "inputSchema": {"type": "object", "properties": {
                "verb": {"type": "string", "enum": ["list", "approve", "decline"]},
                "task_id": {"type": "string"}},
                "required": ["verb"]},
            "outputSchema": any_of(vec![
                json!({"type": "object", "required": ["held"], "properties": {"held": {"type": "array", "items": {"type": "object"}}}}),
                json!({"type": "object", "required": ["task_id", "decision", "status"], "properties": {"task_id": {"type": "string"}, "decision": {"type": "string"}, "status": {"type": "string"}, "decided_by": {"type": "string"}}}),
            ]),
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false},
        }),
        &["verb"],
    )
}

fn loop_tools(lang: &LanguageRuntime, perms: Permissions, reach: Reach) -> Vec<ToolSpec> {
    let c = &lang.config;
    let execution = perms.execution_of(c);
    let name = &c.name;
    let arg = &c.argument;
    let declaration = json!({ EXTENSION_ID: {"argument": arg, "language": name} });
    let mut out = vec![ToolSpec::new(
        ToolRole::Validate(name.clone()),
        json!({
            "name": c.tools.validate,
            "title": format!("Validate a {name} program"),
            "description": format!("Validate stage for language {name}: checks the program in '{arg}' without running anything and returns diagnostics with closed codes (valid:false is a normal answer, fix and call again), the plan with risk hints when valid, and catalog_version."),
            "inputSchema": {"type": "object", "properties": {arg: program_schema(lang), "context": {"type": "object"}}, "required": [arg]},
            "outputSchema": any_of(vec![validate_shape()]),
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
            "_meta": declaration,
        }),
        &[arg.as_str()],
    )];
    if let Some(execution) = execution {
        let mut props = Map::new();
        props.insert(arg.clone(), program_schema(lang));
        props.insert("program_ref".into(), json!({"type": "string"}));
        props.insert("input".into(), json!({"type": "object"}));
        props.insert("context".into(), json!({"type": "object"}));
        props.insert(
            "trace_level".into(),
            json!({"type": "string", "enum": ["summary", "full", "none"]}),
        );
        props.insert("store".into(), json!({"type": "boolean"}));
        props.insert("expected_catalog_version".into(), json!({"type": "string"}));
        if c.capabilities.execute.idempotency && reach == Reach::Lasting {
            props.insert("idempotency_key".into(), json!({"type": "string"}));
        }
        if c.capabilities.execute.test_run {
            props.insert("test_run".into(), json!({"type": "boolean"}));
        }
        let mut required = vec![];
        if execution == "both" {
            props.insert(
                "mode".into(),
                json!({"type": "string", "enum": ["immediate", "deploy"]}),
            );
            required.push("mode");
        }
        let keeping = if perms.trace_fetch_of(c) {
            " store:true keeps the run for the trace tool."
        } else {
            " the run is not kept for you: its trace is in this answer."
        };
        let mode_note = if execution == "both" {
            " 'mode' is required: \"immediate\" runs it now, \"deploy\" promotes it to the catalog and returns a program_ref."
        } else {
            ""
        };
        out.push(ToolSpec::new(
            ToolRole::Execute(name.clone()),
            json!({
                "name": c.tools.execute,
                "title": format!("Execute a {name} program"),
                "description": format!("Execute stage for language {name}: runs a validated program ('{arg}') or a promoted one ('program_ref') and returns the outcome and the trace with branch and loop decisions. Pass the catalog_version from validate as expected_catalog_version;{keeping}{mode_note} Executes real side effects: check the plan's max_risk_hints first."),
                "inputSchema": execute_schema(props, &required),
                "outputSchema": any_of(vec![execute_shape()]),
                "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true},
                "_meta": declaration,
            }),
            &[],
        ));
    }
    if perms.trace_fetch_of(c)
        && let Some(trace) = &c.tools.trace
    {
        out.push(ToolSpec::new(
                ToolRole::Trace(name.clone()),
                json!({
                    "name": trace,
                    "title": format!("Fetch a {name} run's trace"),
                    "description": format!("Trace fetch stage for language {name}: returns the stored outcome and trace of an earlier run by run_id (runs executed with store:true, kept for {}); trace_level \"summary\" or \"full\".", c.retention),
                    "inputSchema": {"type": "object", "properties": {"run_id": {"type": "string"}, "trace_level": {"type": "string", "enum": ["summary", "full"]}}, "required": ["run_id"]},
                    "outputSchema": any_of(vec![execute_shape()]),
                    "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
                }),
                &["run_id"],
            ));
    }
    out
}

/// The execute tool's input schema; `required` only when something is (an
/// empty list is refused by older JSON Schema drafts some clients use).
fn execute_schema(props: Map<String, Value>, required: &[&str]) -> Value {
    let mut schema = json!({"type": "object", "properties": props});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The program argument's schema: its JSON type only, so a client that
/// builds arguments from the schema sends the program as that type, and every
/// fault inside the program stays a diagnostic (Part III §4.6).
fn program_schema(lang: &LanguageRuntime) -> Value {
    json!({"type": lang.language.program_json_type()})
}

/// Every success shape plus the request-error shape (Part III §6).
fn any_of(mut shapes: Vec<Value>) -> Value {
    shapes.push(json!({
        "type": "object",
        "required": ["error"],
        "properties": {"error": {"type": "object", "required": ["kind", "message"],
            "properties": {"kind": {"type": "string"}, "message": {"type": "string"}}}}
    }));
    json!({"type": "object", "anyOf": shapes})
}

fn manifest_shape() -> Value {
    json!({"type": "object", "required": ["pilotage", "languages"],
        "properties": {"pilotage": {"type": "string"}, "languages": {"type": "array", "minItems": 1, "items": {"type": "object"}}}})
}

fn validate_shape() -> Value {
    json!({"type": "object", "required": ["valid", "diagnostics"],
        "properties": {"valid": {"type": "boolean"}, "diagnostics": {"type": "array", "items": {"type": "object",
            "required": ["severity", "code", "path", "message"]}},
            "catalog_version": {"type": "string"}, "plan": {"type": "object"}, "references": {"type": "array"}}})
}

fn execute_shape() -> Value {
    json!({"type": "object", "required": ["run_id", "outcome"],
        "properties": {"run_id": {"type": "string"},
            "outcome": {"type": "object", "required": ["ok", "status", "error"]},
            "diagnostics": {"type": "array"}, "trace": {"type": "object", "required": ["run_id", "level", "steps"]}}})
}
