//! The few JSON Schema checks the engine needs: `type`, `required`, `properties`,
//! `additionalProperties`, `enum`, `minimum`/`maximum` and `items`.
//!
//! It is used for capability parameters (statically by the validator, which skips
//! expression strings it cannot know yet, and again at run time on resolved
//! arguments) and for the workflow's `input` schema. Anything else in a schema is
//! ignored, as an old engine would.

use serde_json::{Map, Value};

use super::expr::is_expression;
use super::path::Where;
use super::values::{quote, type_name};

/// One way a value fails its schema. `name` is the dotted name of the offending
/// member (`amount`, `address.city`, `lines[0]`); `at` is where it sits, relative
/// to the checked value (for `Missing`: the object that lacks it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub name: String,
    pub at: Where,
    pub kind: IssueKind,
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IssueKind {
    Missing,
    Unexpected,
    Type { expected: String, got: &'static str },
    Value { value: String, allowed: Allowed },
}

/// What a value outside its enum or range would have had to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// The enum members, each as printed in messages.
    OneOf(Vec<String>),
    /// A range as printed in messages: `0..5000`, `>= 1` or `<= 10`.
    Range(String),
}

/// Checks `value` against `schema`. With `skip_expressions`, strings starting with
/// `$.` are accepted anywhere (their value is only known at run time).
pub fn check(schema: &Value, value: &Value, skip_expressions: bool) -> Vec<Issue> {
    let mut issues = Vec::new();
    Checker {
        skip_expressions,
        issues: &mut issues,
    }
    .at(schema, value, "", &Where::root());
    issues
}

struct Checker<'a> {
    skip_expressions: bool,
    issues: &'a mut Vec<Issue>,
}

impl Checker<'_> {
    fn push(&mut self, name: &str, at: &Where, kind: IssueKind) {
        self.issues.push(Issue {
            name: name.to_owned(),
            at: at.clone(),
            kind,
        });
    }

    fn at(&mut self, schema: &Value, value: &Value, name: &str, at: &Where) {
        if self.skip_expressions && value.as_str().is_some_and(is_expression) {
            return;
        }
        let Value::Object(schema) = schema else {
            return;
        };
        if let Some(expected) = schema.get("type")
            && !type_matches(expected, value)
        {
            let expected = render_types(expected);
            self.push(
                name,
                at,
                IssueKind::Type {
                    expected,
                    got: type_name(value),
                },
            );
            return;
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            let allowed = Allowed::OneOf(allowed.iter().map(quote).collect());
            self.push(
                name,
                at,
                IssueKind::Value {
                    value: quote(value),
                    allowed,
                },
            );
            return;
        }
        if let Some(n) = value.as_f64()
            && let Some(range) = out_of_range(schema, n)
        {
            let allowed = Allowed::Range(range);
            self.push(
                name,
                at,
                IssueKind::Value {
                    value: quote(value),
                    allowed,
                },
            );
            return;
        }
        match value {
            Value::Object(members) => self.object(schema, members, name, at),
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        let item_name = format!("{name}[{i}]");
                        self.at(item_schema, item, &item_name, &at.index(i));
                    }
                }
            }
            _ => {}
        }
    }

    fn object(
        &mut self,
        schema: &Map<String, Value>,
        members: &Map<String, Value>,
        name: &str,
        at: &Where,
    ) {
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if let Some(Value::Array(required)) = schema.get("required") {
            for key in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(key) {
                    self.push(&child(name, key), at, IssueKind::Missing);
                }
            }
        }
        for (key, member) in members {
            let member_name = child(name, key);
            let member_at = at.key(key);
            match (properties.get(key), schema.get("additionalProperties")) {
                (Some(sub), _) => self.at(sub, member, &member_name, &member_at),
                (None, Some(Value::Bool(false))) => {
                    self.push(&member_name, &member_at, IssueKind::Unexpected)
                }
                (None, Some(sub @ Value::Object(_))) => {
                    self.at(sub, member, &member_name, &member_at)
                }
                (None, _) => {}
            }
        }
    }
}

fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(t) => one_type_matches(t, value),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .any(|t| one_type_matches(t, value)),
        _ => true,
    }
}

fn one_type_matches(expected: &str, value: &Value) -> bool {
    match expected {
        "number" => value.is_number(),
        "integer" | "string" | "boolean" | "object" | "array" | "null" => {
            type_name(value) == expected
        }
        // A type this engine does not know is not its business to enforce.
        _ => true,
    }
}

fn render_types(expected: &Value) -> String {
    match expected {
        Value::Array(types) => types.iter().map(quote).collect::<Vec<_>>().join(" or "),
        other => quote(other),
    }
}

/// The allowed range as printed in messages (`0..5000`, `>= 1`, `<= 10`) when `n`
/// falls outside it.
fn out_of_range(schema: &Map<String, Value>, n: f64) -> Option<String> {
    let min = schema.get("minimum").and_then(Value::as_f64);
    let max = schema.get("maximum").and_then(Value::as_f64);
    let below = min.is_some_and(|m| n < m);
    let above = max.is_some_and(|m| n > m);
    if !below && !above {
        return None;
    }
    let show = |key: &str| schema.get(key).map(quote).unwrap_or_default();
    Some(match (min, max) {
        (Some(_), Some(_)) => format!("{}..{}", show("minimum"), show("maximum")),
        (Some(_), None) => format!(">= {}", show("minimum")),
        _ => format!("<= {}", show("maximum")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["customer_id", "amount_cents"],
            "additionalProperties": false,
            "properties": {
                "customer_id": {"type": "string"},
                "amount_cents": {"type": "integer", "minimum": 1},
                "tier": {"type": "string", "enum": ["bronze", "silver", "gold"]}
            }
        })
    }

    #[test]
    fn reports_each_kind_of_issue() {
        let issues = check(
            &schema(),
            &json!({"amount_cents": "12", "tier": "platinum", "extra": 1}),
            false,
        );
        let kinds: Vec<_> = issues.iter().map(|i| (i.name.as_str(), &i.kind)).collect();
        assert_eq!(kinds[0], ("customer_id", &IssueKind::Missing));
        assert_eq!(
            kinds[1],
            (
                "amount_cents",
                &IssueKind::Type {
                    expected: "integer".into(),
                    got: "string"
                }
            )
        );
        assert_eq!(
            kinds[2],
            (
                "tier",
                &IssueKind::Value {
                    value: "platinum".into(),
                    allowed: Allowed::OneOf(vec!["bronze".into(), "silver".into(), "gold".into()])
                }
            )
        );
        assert_eq!(kinds[3], ("extra", &IssueKind::Unexpected));
        assert_eq!(issues[3].at.to_string(), "extra");
    }

    #[test]
    fn ranges_and_expressions() {
        let issues = check(
            &schema(),
            &json!({"customer_id": "$.input.c", "amount_cents": 0}),
            true,
        );
        assert_eq!(
            issues,
            vec![Issue {
                name: "amount_cents".into(),
                at: Where::root().key("amount_cents"),
                kind: IssueKind::Value {
                    value: "0".into(),
                    allowed: Allowed::Range(">= 1".into())
                }
            }]
        );
        assert!(
            check(
                &schema(),
                &json!({"customer_id": "x", "amount_cents": 5}),
                false
            )
            .is_empty()
        );
    }
}
