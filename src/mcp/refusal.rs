//! What a structural `-32602` says: the member, the rule it broke and the
//! fix, never the value sent. A program sent as a string would otherwise
//! come back escaped in full before the reason.

use super::tool_list::ToolSpec;
use crate::pilotage::EXTENSION_ID;
use jsonschema::ValidationError;

/// The message of a call refused by `spec`'s checked schema.
pub fn structural(spec: &ToolSpec, err: &ValidationError<'_>) -> String {
    let name = spec.name();
    let at = err.instance_path().to_string();
    let member = at.trim_start_matches('/');
    let program_argument = spec.json["_meta"][EXTENSION_ID]["argument"].as_str();
    if program_argument == Some(member) && err.instance().is_string() {
        let wanted = spec.input_schema()["properties"][member]["type"]
            .as_str()
            .unwrap_or("object");
        if wanted != "string" {
            return format!(
                "invalid arguments for {name}: '{member}' must be the program as a JSON {wanted}, not a string holding its text: send the parsed document itself (no quotes around it)"
            );
        }
    }
    let place = if member.is_empty() {
        String::new()
    } else {
        format!(" (at '{at}')")
    };
    format!(
        "invalid arguments for {name}: {}{place}; see the tool's inputSchema in tools/list",
        err.masked()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tool_list::ToolRole;
    use serde_json::{Value, json};

    fn spec() -> ToolSpec {
        ToolSpec::for_tests(
            ToolRole::Validate("w/v1".into()),
            json!({"name": "validate_w", "inputSchema": {"type": "object",
                "properties": {"workflow": {"type": "object"}, "context": {"type": "object"}},
                "required": ["workflow"]},
                "_meta": {EXTENSION_ID: {"argument": "workflow", "language": "w/v1"}}}),
        )
    }

    fn refusal(args: Value) -> String {
        let s = spec();
        let v = jsonschema::validator_for(s.input_schema()).unwrap();
        let err = v.iter_errors(&args).next().expect("refused");
        structural(&s, &err)
    }

    #[test]
    fn a_program_as_a_string_names_the_fix_and_is_not_echoed() {
        let text = json!("{\"steps\": [{\"id\": \"secret-step\"}]}");
        let m = refusal(json!({"workflow": text}));
        assert!(m.contains("not a string"), "{m}");
        assert!(!m.contains("secret-step"), "{m}");
    }

    #[test]
    fn other_faults_name_the_member_without_its_value() {
        let m = refusal(json!({"workflow": {}, "context": "secret-context"}));
        assert!(m.contains("/context"), "{m}");
        assert!(!m.contains("secret-context"), "{m}");
        let m = refusal(json!({}));
        assert!(m.contains("workflow"), "{m}");
    }
}
