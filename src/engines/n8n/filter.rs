//! The operators of a `filter` parameter (If 2+, Switch 3+ rules, Filter
//! 2+): n8n's descriptions do not list them (its code defines them), so the
//! table is here, per operand type, as n8n 2.41 accepts them. A condition
//! whose type or operation is not in it never matches in n8n (the If takes
//! its false arm, silently).

use crate::engines::RawProblem;
use serde_json::Value;

/// (operand type, operations n8n accepts for it).
pub const OPERATORS: &[(&str, &[&str])] = &[
    (
        "string",
        &[
            "exists",
            "notExists",
            "empty",
            "notEmpty",
            "equals",
            "notEquals",
            "contains",
            "notContains",
            "startsWith",
            "notStartsWith",
            "endsWith",
            "notEndsWith",
            "regex",
            "notRegex",
        ],
    ),
    (
        "number",
        &[
            "exists",
            "notExists",
            "empty",
            "notEmpty",
            "equals",
            "notEquals",
            "gt",
            "lt",
            "gte",
            "lte",
        ],
    ),
    (
        "dateTime",
        &[
            "exists",
            "notExists",
            "empty",
            "notEmpty",
            "equals",
            "notEquals",
            "after",
            "before",
            "afterOrEquals",
            "beforeOrEquals",
        ],
    ),
    (
        "boolean",
        &[
            "exists",
            "notExists",
            "empty",
            "notEmpty",
            "true",
            "false",
            "equals",
            "notEquals",
        ],
    ),
    (
        "array",
        &[
            "exists",
            "notExists",
            "empty",
            "notEmpty",
            "contains",
            "notContains",
            "lengthEquals",
            "lengthNotEquals",
            "lengthGt",
            "lengthLt",
            "lengthGte",
            "lengthLte",
        ],
    ),
    ("object", &["exists", "notExists", "empty", "notEmpty"]),
];

/// The problems of one filter value (`{"conditions": [...], "combinator"}`)
/// at `pointer`.
pub fn check(value: &Value, pointer: &str, out: &mut Vec<RawProblem>) {
    let Some(conditions) = value.get("conditions").and_then(Value::as_array) else {
        return;
    };
    for (k, condition) in conditions.iter().enumerate() {
        let at = format!("{pointer}/conditions/{k}/operator");
        let Some(operator) = condition.get("operator") else {
            continue;
        };
        let kind = operator.get("type").and_then(Value::as_str).unwrap_or("");
        let operation = operator
            .get("operation")
            .and_then(Value::as_str)
            .unwrap_or("");
        match OPERATORS.iter().find(|(t, _)| *t == kind) {
            None => out.push(RawProblem::error_at(
                format!(
                    "filter operator type '{kind}' is not one of: {}",
                    OPERATORS
                        .iter()
                        .map(|(t, _)| *t)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!("{at}/type"),
            )),
            Some((_, operations)) if !operations.contains(&operation) => {
                out.push(RawProblem::error_at(
                    format!(
                        "filter operator '{operation}' is not an operator of type '{kind}' (operators: {})",
                        operations.join(", ")
                    ),
                    at,
                ))
            }
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_types_and_operations_are_located() {
        let mut out = Vec::new();
        let value = json!({"conditions": [
            {"operator": {"type": "string", "operation": "startsWith"}},
            {"operator": {"type": "string", "operation": "startsWithish"}},
            {"operator": {"type": "quantity", "operation": "equals"}},
        ]});
        check(&value, "/nodes/1/parameters/conditions", &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0].location.as_deref(),
            Some("/nodes/1/parameters/conditions/conditions/1/operator")
        );
        assert!(
            out[0]
                .text
                .starts_with("filter operator 'startsWithish' is not an operator of type 'string'")
        );
        assert_eq!(
            out[1].location.as_deref(),
            Some("/nodes/1/parameters/conditions/conditions/2/operator/type")
        );
    }
}
