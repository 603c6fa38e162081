//! Loop-tool input schemas as `tools/list` shows them (Part III §4.4, §4.6):
//! every reserved member has its JSON type, the program argument the type of
//! the language's program form, and nothing more (no enums, no required
//! runnable, open `additionalProperties`), so a wrong JSON type is a
//! structural `-32602` while every value fault stays with Pilotage.

use crate::common::{TestEnv, valid_program};
use serde_json::{Value, json};

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed"))
}

/// No enum, const or pattern anywhere under a loop tool's schema, and no
/// closed `additionalProperties`.
fn assert_permissive(name: &str, schema: &Value) {
    match schema {
        Value::Object(map) => {
            for forbidden in ["enum", "const", "pattern"] {
                assert!(
                    !map.contains_key(forbidden),
                    "{name}: {forbidden} in {schema}"
                );
            }
            assert_ne!(
                map.get("additionalProperties"),
                Some(&Value::Bool(false)),
                "{name}"
            );
            map.values().for_each(|v| assert_permissive(name, v));
        }
        Value::Array(items) => items.iter().for_each(|v| assert_permissive(name, v)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reserved_members_carry_their_json_types_and_nothing_more() {
    let env = TestEnv::start().await;
    let tools = env.anonymous().list_tools().await;
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
            execute["properties"][member],
            json!({"type": ty}),
            "run_workflow.{member}"
        );
    }
    assert!(
        execute.get("required").is_none(),
        "runnable selection is Pilotage's"
    );

    let trace = &tool(&tools, "trace_workflow")["inputSchema"];
    assert_eq!(trace["properties"]["run_id"], json!({"type": "string"}));
    assert_eq!(
        trace["properties"]["trace_level"],
        json!({"type": "string"})
    );
    for name in ["validate_workflow", "run_workflow", "trace_workflow"] {
        assert_permissive(name, &tool(&tools, name)["inputSchema"]);
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
