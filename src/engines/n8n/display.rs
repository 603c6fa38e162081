//! n8n's `displayOptions`: whether a property is shown, given the values of
//! the other parameters and the node's version. `show` needs every named
//! parameter to hold one of its values; `hide` hides when any does. A name
//! starting with `/` is read from the node's top-level parameters, any
//! other from the same level; `@version` is the node's version. A listed
//! value is compared as it is, or is a `{"_cnd": {op: operand}}` condition.

use serde_json::{Map, Value};

/// Where a level's parameter values are read.
pub struct Scope<'a> {
    /// The values at the property's own level (defaults filled in).
    pub level: &'a Map<String, Value>,
    /// The node's top-level values (defaults filled in).
    pub root: &'a Map<String, Value>,
    pub version: f64,
}

/// Whether a property with these `displayOptions` is shown.
pub fn shown(display_options: Option<&Value>, scope: &Scope<'_>) -> bool {
    let Some(options) = display_options.and_then(Value::as_object) else {
        return true;
    };
    if let Some(show) = options.get("show").and_then(Value::as_object) {
        for (name, allowed) in show {
            if !holds(name, allowed, scope) {
                return false;
            }
        }
    }
    if let Some(hide) = options.get("hide").and_then(Value::as_object) {
        for (name, allowed) in hide {
            if holds(name, allowed, scope) {
                return false;
            }
        }
    }
    true
}

/// What would show a property that these `displayOptions` certainly hide
/// (`mode 'raw'`, `typeVersion >= 2`), or `None` when it is not certainly
/// hidden: a `show` condition that fails or a `hide` condition that holds,
/// on a value known before the run. A value that is an expression
/// (`"=..."`), or a name n8n reads from elsewhere (`@tool`), leaves its
/// condition open, and an open condition hides nothing.
pub fn why_hidden(display_options: Option<&Value>, scope: &Scope<'_>) -> Option<String> {
    let options = display_options.and_then(Value::as_object)?;
    let mut needed = Vec::new();
    if let Some(show) = options.get("show").and_then(Value::as_object) {
        for (name, allowed) in show {
            if decided(name, scope) && !holds(name, allowed, scope) {
                needed.push(listed(name, allowed, false));
            }
        }
    }
    if let Some(hide) = options.get("hide").and_then(Value::as_object) {
        for (name, allowed) in hide {
            if decided(name, scope) && holds(name, allowed, scope) {
                needed.push(listed(name, allowed, true));
            }
        }
    }
    (!needed.is_empty()).then(|| needed.join(" and "))
}

/// A condition as a reader writes it: `mode 'raw' or 'json'`,
/// `typeVersion >= 3.3`, and negated for a `hide` (`mode other than 'raw'`,
/// `typeVersion < 3.4`).
fn listed(name: &str, allowed: &Value, negate: bool) -> String {
    let name = match name {
        "@version" => "typeVersion",
        other => other.strip_prefix('/').unwrap_or(other),
    };
    let items: Vec<&Value> = match allowed {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    let plain = |v: &Value| v.to_string().replace('"', "'");
    let one = |a: &Value| -> String {
        let Some(condition) = a.get("_cnd").and_then(Value::as_object) else {
            return if negate {
                format!("other than {}", plain(a))
            } else {
                plain(a)
            };
        };
        let parts: Vec<String> = condition
            .iter()
            .map(|(op, operand)| {
                let (op, operand) = (op.as_str(), plain(operand));
                let symbol = match (op, negate) {
                    ("eq", false) | ("not", true) => "",
                    ("eq", true) | ("not", false) => "other than ",
                    ("gte", false) | ("lt", true) => ">= ",
                    ("lte", false) | ("gt", true) => "<= ",
                    ("gt", false) | ("lte", true) => "> ",
                    ("lt", false) | ("gte", true) => "< ",
                    _ => return format!("{}{op} {operand}", if negate { "not " } else { "" }),
                };
                format!("{symbol}{operand}")
            })
            .collect();
        parts.join(" and ")
    };
    let conditions = items.iter().any(|a| a.get("_cnd").is_some());
    let joined = items.iter().map(|a| one(a)).collect::<Vec<_>>();
    if negate && !conditions {
        let values: Vec<String> = items.iter().map(|a| plain(a)).collect();
        format!("{name} other than {}", values.join(", "))
    } else if negate {
        format!("{name} {}", joined.join(" and "))
    } else {
        format!("{name} {}", joined.join(" or "))
    }
}

/// Whether the value a condition reads is known before the run.
fn decided(name: &str, scope: &Scope<'_>) -> bool {
    if name.starts_with('@') && name != "@version" {
        return false;
    }
    let expression = |v: &Value| v.as_str().is_some_and(|s| s.starts_with('='));
    match value(name, scope) {
        Some(Value::Array(items)) => !items.iter().any(expression),
        Some(v) => !expression(&v),
        None => true,
    }
}

/// The value a condition on `name` reads.
fn value(name: &str, scope: &Scope<'_>) -> Option<Value> {
    if name == "@version" {
        serde_json::Number::from_f64(scope.version).map(Value::Number)
    } else if let Some(top) = name.strip_prefix('/') {
        scope.root.get(top).cloned()
    } else {
        scope.level.get(name).cloned()
    }
}

/// Whether the parameter `name` holds one of `allowed`.
fn holds(name: &str, allowed: &Value, scope: &Scope<'_>) -> bool {
    let Some(value) = value(name, scope) else {
        return false;
    };
    let allowed: Vec<&Value> = match allowed {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    let candidates: Vec<&Value> = match &value {
        // A multi-option value holds when one of its values does.
        Value::Array(a) if !a.is_empty() => a.iter().collect(),
        v => vec![v],
    };
    candidates
        .iter()
        .any(|v| allowed.iter().any(|a| matches(a, v)))
}

/// Whether `value` is the listed `allowed` value or meets its condition.
fn matches(allowed: &Value, value: &Value) -> bool {
    let Some(condition) = allowed.get("_cnd").and_then(Value::as_object) else {
        return same(allowed, value);
    };
    condition
        .iter()
        .all(|(op, operand)| test(op, operand, value))
}

/// Equality with numbers compared by value (`1` is `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// One `_cnd` operator.
fn test(op: &str, operand: &Value, value: &Value) -> bool {
    let n = value.as_f64();
    let o = operand.as_f64();
    let s = value.as_str();
    match op {
        "eq" => same(operand, value),
        "not" => !same(operand, value),
        "gte" => matches!((n, o), (Some(n), Some(o)) if n >= o),
        "lte" => matches!((n, o), (Some(n), Some(o)) if n <= o),
        "gt" => matches!((n, o), (Some(n), Some(o)) if n > o),
        "lt" => matches!((n, o), (Some(n), Some(o)) if n < o),
        "between" => {
            let from = operand.get("from").and_then(Value::as_f64);
            let to = operand.get("to").and_then(Value::as_f64);
            matches!((n, from, to), (Some(n), Some(f), Some(t)) if n >= f && n <= t)
        }
        "startsWith" => matches!((s, operand.as_str()), (Some(s), Some(p)) if s.starts_with(p)),
        "endsWith" => matches!((s, operand.as_str()), (Some(s), Some(p)) if s.ends_with(p)),
        "includes" => matches!((s, operand.as_str()), (Some(s), Some(p)) if s.contains(p)),
        "regex" => match (s, operand.as_str()) {
            (Some(s), Some(p)) => regex::Regex::new(p).is_ok_and(|r| r.is_match(s)),
            _ => false,
        },
        "exists" => !value.is_null(),
        // An operator this version does not know: not shown, never guessed.
        _ => false,
    }
}

/// The values of one level as n8n reads them: the given ones, and for every
/// property shown (in order, so later properties see earlier defaults)
/// and not given, its default.
pub fn with_defaults(
    properties: &[Value],
    given: &Map<String, Value>,
    root: Option<&Map<String, Value>>,
    version: f64,
) -> Map<String, Value> {
    let mut values = given.clone();
    for p in properties {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        if values.contains_key(name) {
            continue;
        }
        let Some(default) = p.get("default") else {
            continue;
        };
        let scope_root = root.cloned().unwrap_or_else(|| values.clone());
        let scope = Scope {
            level: &values,
            root: &scope_root,
            version,
        };
        if shown(p.get("displayOptions"), &scope) {
            values.insert(name.to_string(), default.clone());
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `judge` of `options` at a node whose values are `level`.
    fn at<R>(level: Value, version: f64, judge: impl FnOnce(&Scope) -> R) -> R {
        let level = level.as_object().cloned().unwrap_or_default();
        judge(&Scope {
            level: &level,
            root: &level,
            version,
        })
    }

    fn is_shown(options: Value, level: Value, version: f64) -> bool {
        at(level, version, |scope| shown(Some(&options), scope))
    }

    #[test]
    fn show_needs_every_named_value_and_hide_any() {
        let opts = json!({"show": {"mode": ["manual"], "include": ["all", "some"]}});
        assert!(is_shown(
            opts.clone(),
            json!({"mode": "manual", "include": "some"}),
            1.0
        ));
        assert!(!is_shown(
            opts.clone(),
            json!({"mode": "raw", "include": "some"}),
            1.0
        ));
        assert!(!is_shown(opts, json!({"mode": "manual"}), 1.0));
        let hide = json!({"hide": {"method": ["GET"]}});
        assert!(!is_shown(hide.clone(), json!({"method": "GET"}), 1.0));
        assert!(is_shown(hide, json!({"method": "POST"}), 1.0));
    }

    #[test]
    fn versions_compare_by_value_and_by_condition() {
        let exact = json!({"show": {"@version": [1, 2]}});
        assert!(is_shown(exact.clone(), json!({}), 2.0));
        assert!(!is_shown(exact, json!({}), 2.1));
        let from = json!({"show": {"@version": [{"_cnd": {"gte": 3.3}}]}});
        assert!(is_shown(from.clone(), json!({}), 3.4));
        assert!(!is_shown(from, json!({}), 3.2));
        let between =
            json!({"hide": {"@version": [{"_cnd": {"between": {"from": 2, "to": 2.2}}}]}});
        assert!(!is_shown(between.clone(), json!({}), 2.1));
        assert!(is_shown(between, json!({}), 2.3));
        let not = json!({"show": {"mode": [{"_cnd": {"not": "raw"}}]}});
        assert!(is_shown(not.clone(), json!({"mode": "manual"}), 1.0));
        assert!(!is_shown(not, json!({"mode": "raw"}), 1.0));
    }

    #[test]
    fn root_names_read_the_top_level_and_arrays_hold_any_value() {
        let level = json!({"field": "cronExpression"});
        let root = json!({"mode": "everyX"});
        let (level, root) = (level.as_object().unwrap(), root.as_object().unwrap());
        let scope = Scope {
            level,
            root,
            version: 1.0,
        };
        assert!(shown(
            Some(&json!({"show": {"/mode": ["everyX"], "field": ["cronExpression"]}})),
            &scope
        ));
        assert!(is_shown(
            json!({"show": {"m": ["b"]}}),
            json!({"m": ["a", "b"]}),
            1.0
        ));
    }

    #[test]
    fn defaults_fill_in_shown_properties_in_order() {
        let props = vec![
            json!({"name": "mode", "default": "manual"}),
            json!({"name": "fields", "default": "x", "displayOptions": {"show": {"mode": ["manual"]}}}),
            json!({"name": "json", "default": "{}", "displayOptions": {"show": {"mode": ["raw"]}}}),
        ];
        let values = with_defaults(&props, &Map::new(), None, 1.0);
        assert_eq!(
            Value::Object(values),
            json!({"mode": "manual", "fields": "x"})
        );
    }

    fn why(options: Value, level: Value, version: f64) -> Option<String> {
        at(level, version, |scope| why_hidden(Some(&options), scope))
    }

    #[test]
    fn a_hidden_property_says_what_would_show_it() {
        let show = json!({"show": {"mode": ["raw", "json"]}});
        assert_eq!(
            why(show.clone(), json!({"mode": "manual"}), 1.0).as_deref(),
            Some("mode 'raw' or 'json'")
        );
        assert_eq!(why(show, json!({"mode": "raw"}), 1.0), None);
        let hide = json!({"hide": {"@version": [{"_cnd": {"gte": 3.4}}]}});
        assert_eq!(
            why(hide, json!({}), 3.4).as_deref(),
            Some("typeVersion < 3.4")
        );
        let hide = json!({"hide": {"/method": ["GET", "HEAD"]}});
        assert_eq!(
            why(hide, json!({"method": "GET"}), 1.0).as_deref(),
            Some("method other than 'GET', 'HEAD'")
        );
    }

    #[test]
    fn a_condition_on_an_expression_or_on_tool_use_hides_nothing() {
        let show = json!({"show": {"mode": ["raw"]}});
        assert_eq!(why(show, json!({"mode": "={{ $json.m }}"}), 1.0), None);
        let multi = json!({"show": {"m": ["a"]}});
        assert_eq!(why(multi, json!({"m": ["b", "={{ 1 }}"]}), 1.0), None);
        assert_eq!(
            why(json!({"show": {"@tool": [true]}}), json!({}), 1.0),
            None
        );
    }
}
