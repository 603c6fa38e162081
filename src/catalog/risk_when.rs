//! A step's risk when its catalog entry's risk depends on a parameter
//! value (`risk_when`): an HTTP Request that only reads (`GET`) is safer than
//! the same node type sending `DELETE`. The operations ask this for every
//! planned step; a language only hands over the step's parameters.
//!
//! An entry's rules: `[{"parameter": "method", "default": "GET", "in":
//! ["GET", "HEAD"], "risk": "safe"}]`. The first rule whose parameter value
//! (or its `default` when the step leaves the parameter out) is one of `in`
//! gives the step's risk; otherwise the entry's own risk does. A rule never
//! applies when the step's parameters are unknown, and a rule naming a risk
//! level the gateway does not know is skipped: both keep the entry's risk.

use super::CatalogView;
use crate::pilotage::RiskHints;
use serde_json::Value;

/// The risk level and hints of a step calling `capability` with
/// `parameters`, as the caller's view gives them; `None` when the caller
/// cannot see the capability.
pub fn step_risk(
    view: &CatalogView,
    capability: &str,
    parameters: Option<&Value>,
) -> Option<(String, RiskHints)> {
    let hints = view.capability_risk(capability)?;
    let entry = view.get(capability);
    if let (Some(entry), Some(parameters)) = (entry, parameters)
        && let Some(by_rule) = rule_risk(entry.member("risk_when"), parameters)
    {
        return Some(by_rule);
    }
    let level = entry
        .and_then(|e| e.member("risk").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| hints.level().to_string());
    Some((level, hints))
}

/// The risk the first matching rule of an entry's `risk_when` gives a
/// step with `parameters`.
fn rule_risk(risk_when: Option<&Value>, parameters: &Value) -> Option<(String, RiskHints)> {
    let rules = risk_when?.as_array()?;
    rules.iter().find_map(|rule| {
        let name = rule.get("parameter")?.as_str()?;
        let value = parameters.get(name).or_else(|| rule.get("default"))?;
        let listed = rule.get("in")?.as_array()?.contains(value);
        if !listed {
            return None;
        }
        let level = rule.get("risk")?.as_str()?;
        let hints = rule
            .get("risk_hints")
            .and_then(RiskHints::from_json)
            .or_else(|| hints_of_level(level))?;
        Some((level.to_string(), hints))
    })
}

/// The hints of one of the gateway's risk levels (the inverse of
/// [`RiskHints::level`]).
pub fn hints_of_level(level: &str) -> Option<RiskHints> {
    let (read_only, destructive, open_world) = match level {
        "safe" => (true, false, false),
        "write" => (false, false, false),
        "external" => (false, false, true),
        "destructive" => (false, true, true),
        _ => return None,
    };
    Some(RiskHints {
        read_only,
        destructive,
        open_world,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view() -> CatalogView {
        CatalogView::from_capabilities(vec![
            json!({"id": "http", "risk": "destructive",
            "risk_hints": {"readOnly": false, "destructive": true, "openWorld": true},
            "risk_when": [
                {"parameter": "method", "default": "GET", "in": ["GET", "HEAD"], "risk": "safe"},
                {"parameter": "method", "in": ["POST"], "risk": "whatever"},
                {"parameter": "method", "in": ["PUT"], "risk": "write"}
            ]}),
            json!({"id": "plain", "risk": "external",
                "risk_hints": {"readOnly": false, "destructive": false, "openWorld": true}}),
        ])
    }

    #[test]
    fn the_first_matching_rule_gives_the_risk() {
        let view = view();
        let get = step_risk(&view, "http", Some(&json!({"method": "GET"}))).unwrap();
        assert_eq!(get, ("safe".to_string(), RiskHints::SAFE));
        // Left out: the rule's default applies.
        assert_eq!(
            step_risk(&view, "http", Some(&json!({}))).unwrap().0,
            "safe"
        );
        let put = step_risk(&view, "http", Some(&json!({"method": "PUT"}))).unwrap();
        assert_eq!(put.0, "write");
        assert!(!put.1.read_only && !put.1.destructive && !put.1.open_world);
    }

    #[test]
    fn no_rule_unknown_levels_and_unknown_parameters_keep_the_entry_risk() {
        let view = view();
        for parameters in [
            Some(json!({"method": "DELETE"})),
            // An expression is no listed value.
            Some(json!({"method": "={{ $json.m }}"})),
            // A rule with a level the gateway does not know is skipped.
            Some(json!({"method": "POST"})),
            None,
        ] {
            let (level, hints) = step_risk(&view, "http", parameters.as_ref()).unwrap();
            assert_eq!(level, "destructive");
            assert!(hints.destructive);
        }
        let plain = step_risk(&view, "plain", Some(&json!({"method": "GET"}))).unwrap();
        assert_eq!(plain.0, "external");
        assert_eq!(step_risk(&view, "hidden", None), None);
    }

    #[test]
    fn levels_and_hints_agree() {
        for level in ["safe", "write", "external", "destructive"] {
            assert_eq!(hints_of_level(level).map(RiskHints::level), Some(level));
        }
        assert_eq!(hints_of_level("spicy"), None);
    }
}
