//! Input schemas as `tools/list` shows them (Part III §4.4, §4.6): every
//! reserved member has its JSON type, the program argument the type of the
//! language's program form, and `required` and `enum` wherever the server
//! requires or restricts a value, so a client that builds its calls from the
//! schema alone is accepted. A wrong JSON type is a structural `-32602`;
//! every value fault (a value outside an `enum` included) stays with
//! Pilotage. The schemas are checked against what the server accepts.

use crate::common::{TestEnv, valid_program};
use serde_json::{Value, json};

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed"))
}

/// No closed `additionalProperties` anywhere under a loop tool's schema.
fn assert_open(name: &str, schema: &Value) {
    match schema {
        Value::Object(map) => {
            assert_ne!(
                map.get("additionalProperties"),
                Some(&Value::Bool(false)),
                "{name}"
            );
            map.values().for_each(|v| assert_open(name, v));
        }
        Value::Array(items) => items.iter().for_each(|v| assert_open(name, v)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reserved_members_carry_their_types_and_the_values_the_server_takes() {
    let env = TestEnv::start().await;
    // A caller that can come back (a session) is offered every member.
    let mut c = env.anonymous();
    c.initialize().await;
    let tools = c.list_tools().await;
    let validate = &tool(&tools, "validate_workflow")["inputSchema"];
    assert_eq!(
        validate["properties"]["workflow"],
        json!({"type": "object"})
    );
    assert_eq!(validate["properties"]["context"], json!({"type": "object"}));
    assert_eq!(validate["required"], json!(["workflow"]));

    let execute = &tool(&tools, "run_workflow")["inputSchema"];
    let types: Vec<(&str, &str)> = vec![
        ("workflow", "object"),
        ("program_ref", "string"),
        ("input", "object"),
        ("context", "object"),
        ("trace_level", "string"),
        ("store", "boolean"),
        ("expected_catalog_version", "string"),
        ("idempotency_key", "string"),
        ("test_run", "boolean"),
        ("mode", "string"),
    ];
    for (member, ty) in types {
        assert_eq!(
            execute["properties"][member]["type"],
            json!(ty),
            "run_workflow.{member}"
        );
    }
    assert_eq!(
        execute["properties"]["mode"]["enum"],
        json!(["immediate", "deploy"])
    );
    assert_eq!(
        execute["properties"]["trace_level"]["enum"],
        json!(["summary", "full", "none"])
    );
    // The runnable is one of two members: the description says which.
    assert_eq!(execute["required"], json!(["mode"]));

    let trace = &tool(&tools, "trace_workflow")["inputSchema"];
    assert_eq!(trace["properties"]["run_id"], json!({"type": "string"}));
    assert_eq!(
        trace["properties"]["trace_level"]["enum"],
        json!(["summary", "full"])
    );
    // A language executing one mode has no mode to choose.
    let staging = &tool(&tools, "run_staging_workflow")["inputSchema"];
    assert!(staging["properties"].get("mode").is_none(), "{staging}");
    assert!(staging.get("required").is_none(), "{staging}");
    for name in ["validate_workflow", "run_workflow", "trace_workflow"] {
        assert_open(name, &tool(&tools, name)["inputSchema"]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_json_type_is_structural_and_a_wrong_value_is_pilotage() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    c.initialize().await;
    // A program sent as a string (what a schema-driven client sends when the
    // schema gives no type) is a structural fault.
    let text = serde_json::to_string(&valid_program()).unwrap();
    let r = c
        .rpc(
            "tools/call",
            json!({"name": "validate_workflow", "arguments": {"workflow": text}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c
        .rpc(
            "tools/call",
            json!({"name": "run_workflow", "arguments": {"workflow": valid_program(), "mode": "immediate", "store": "yes"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Values of the right type travel through Pilotage.
    let unknown_level = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate", "trace_level": "verbose"}),
        )
        .await;
    assert_eq!(unknown_level.structured["error"]["kind"], "invalid_request");
    let unknown_mode = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "later"}),
        )
        .await;
    assert_eq!(unknown_mode.structured["error"]["kind"], "invalid_request");
    let context = c
        .call(
            "validate_workflow",
            json!({"workflow": valid_program(), "context": {"any": "value"}}),
        )
        .await;
    assert!(
        !context.is_error,
        "an undeclared context is a diagnostic: {}",
        context.structured
    );
    let invalid = c
        .call(
            "validate_workflow",
            json!({"workflow": {"steps": "not a list"}}),
        )
        .await;
    assert_eq!(invalid.structured["valid"], false, "{}", invalid.structured);
}

/// Whether the server refused a call (a carrier error or `isError`), and
/// what it said.
async fn refusal(c: &crate::common::Mcp, tool: &str, args: &Value) -> Option<String> {
    let r = c
        .rpc("tools/call", json!({"name": tool, "arguments": args}))
        .await;
    if let Some(e) = r.get("error") {
        return Some(e["message"].as_str().unwrap_or_default().to_string());
    }
    let result = &r["result"];
    (result["isError"] == true).then(|| {
        result["structuredContent"]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    })
}

/// Each listed schema against what the server does: the call with only
/// what the schema requires (and the runnable) is accepted, every enum value
/// is accepted, a value outside an enum is refused naming the member, and a
/// call without a required member is refused.
#[tokio::test(flavor = "multi_thread")]
async fn every_listed_value_is_taken_and_every_other_is_refused() {
    let env = TestEnv::start().await;
    let mut c = env.client("acme-ops-key");
    c.initialize().await;
    let tools = c.list_tools().await;
    let harmless = json!({"steps": [{"id": "s", "kind": "set", "value": 1}]});
    let stored = c
        .call(
            "run_workflow",
            json!({"workflow": harmless, "mode": "immediate", "store": true}),
        )
        .await;
    let run_id = stored.structured["run_id"].clone();
    let calls: Vec<(&str, Value)> = vec![
        ("pilotage_get_guide", json!({"language": "workflow/v1"})),
        (
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "list"}),
        ),
        ("validate_workflow", json!({"workflow": harmless})),
        (
            "run_workflow",
            json!({"workflow": harmless, "mode": "immediate"}),
        ),
        ("trace_workflow", json!({"run_id": run_id})),
    ];
    for (name, baseline) in calls {
        let schema = &tool(&tools, name)["inputSchema"];
        assert_eq!(
            refusal(&c, name, &baseline).await,
            None,
            "{name} {baseline}"
        );
        for required in schema["required"].as_array().into_iter().flatten() {
            let member = required.as_str().unwrap();
            let mut without = baseline.clone();
            without.as_object_mut().unwrap().remove(member);
            assert!(
                refusal(&c, name, &without).await.is_some(),
                "{name} without {member} accepted"
            );
        }
        for (member, property) in schema["properties"].as_object().unwrap() {
            let Some(values) = property["enum"].as_array() else {
                continue;
            };
            for value in values {
                let mut call = baseline.clone();
                call[member] = value.clone();
                if let Some(why) = refusal(&c, name, &call).await {
                    // Another member may be missing for this value (verb
                    // "get" needs an id); the value itself is never unknown.
                    assert!(
                        !why.contains("unknown") && !why.contains("invalid arguments"),
                        "{name}.{member} = {value}: {why}"
                    );
                }
            }
            let mut outside = baseline.clone();
            outside[member] = json!("not-a-listed-value");
            let why = refusal(&c, name, &outside)
                .await
                .unwrap_or_else(|| panic!("{name}.{member} outside its enum accepted"));
            assert!(why.contains(member.as_str()), "{name}.{member}: {why}");
        }
    }
}
