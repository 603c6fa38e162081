//! The shape of a `workflow/v1` program as the gateway needs to know it: every
//! step with its JSON Pointer, kind, called capability and enclosing constructs.
//!
//! The gateway does not re-implement the engine's validator; it reads only what
//! it must know for bounds, reserved ids, visibility checks, locators, plans and
//! trace mapping. Anything malformed is left for the engine to report.

use serde_json::Value;

/// Step kinds of `workflow/v1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Call,
    Branch,
    Loop,
    Set,
    Other,
}

/// One step, wherever it is nested.
#[derive(Debug, Clone)]
pub struct StepInfo {
    pub id: Option<String>,
    pub kind: StepKind,
    /// JSON Pointer of the step object, e.g. `/steps/1/then/0`.
    pub pointer: String,
    pub capability: Option<String>,
    /// Innermost enclosing branch arm, when it is nearer than any loop:
    /// `(branch id, "then" | "else")`.
    pub arm: Option<(String, String)>,
    /// Innermost enclosing loop id.
    pub in_loop: Option<String>,
    /// Enclosing construct ids, outermost first, with whether each is a loop.
    pub ancestors: Vec<(String, bool)>,
}

/// All steps in document order (the expected execution order).
pub fn steps(program: &Value) -> Vec<StepInfo> {
    let mut out = Vec::new();
    if let Some(list) = program.get("steps").and_then(Value::as_array) {
        walk(list, "/steps", &Scope::default(), &mut out);
    }
    out
}

#[derive(Default, Clone)]
struct Scope {
    arm: Option<(String, String)>,
    in_loop: Option<String>,
    ancestors: Vec<(String, bool)>,
}

fn walk(list: &[Value], base: &str, scope: &Scope, out: &mut Vec<StepInfo>) {
    for (i, step) in list.iter().enumerate() {
        let pointer = format!("{base}/{i}");
        let id = step.get("id").and_then(Value::as_str).map(str::to_string);
        let kind = match step.get("kind").and_then(Value::as_str) {
            Some("call") => StepKind::Call,
            Some("branch") => StepKind::Branch,
            Some("for_each") => StepKind::Loop,
            Some("set") => StepKind::Set,
            _ => StepKind::Other,
        };
        out.push(StepInfo {
            id: id.clone(),
            kind,
            pointer: pointer.clone(),
            capability: (kind == StepKind::Call)
                .then(|| step.get("capability").and_then(Value::as_str))
                .flatten()
                .map(str::to_string),
            arm: scope.arm.clone(),
            in_loop: scope.in_loop.clone(),
            ancestors: scope.ancestors.clone(),
        });
        let own = id.unwrap_or_default();
        match kind {
            StepKind::Branch => {
                for label in ["then", "else"] {
                    if let Some(arm) = step.get(label).and_then(Value::as_array) {
                        let mut inner = scope.clone();
                        inner.arm = Some((own.clone(), label.to_string()));
                        inner.ancestors.push((own.clone(), false));
                        walk(arm, &format!("{pointer}/{label}"), &inner, out);
                    }
                }
            }
            StepKind::Loop => {
                if let Some(body) = step.get("do").and_then(Value::as_array) {
                    let mut inner = scope.clone();
                    inner.arm = None;
                    inner.in_loop = Some(own.clone());
                    inner.ancestors.push((own.clone(), true));
                    walk(body, &format!("{pointer}/do"), &inner, out);
                }
            }
            _ => {}
        }
    }
}

/// JSON nesting depth of a value (a scalar is depth 0, `{}` is 1).
pub fn depth(value: &Value) -> usize {
    // Iterative so a hostile program cannot overflow the stack here.
    let mut max = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(items) => {
                max = max.max(d + 1);
                stack.extend(items.iter().map(|i| (i, d + 1)));
            }
            Value::Object(map) => {
                max = max.max(d + 1);
                stack.extend(map.values().map(|i| (i, d + 1)));
            }
            _ => {}
        }
    }
    max
}

/// Step id → pointer, for locators of messages that name a step.
pub fn pointers(steps: &[StepInfo]) -> std::collections::HashMap<String, String> {
    steps
        .iter()
        .filter_map(|s| Some((s.id.clone()?, s.pointer.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn walks_nested_steps_with_marks() {
        let p = json!({"steps": [
            {"id": "a", "kind": "call", "capability": "x"},
            {"id": "b", "kind": "branch", "then": [{"id": "c", "kind": "set", "value": 1}],
             "else": [{"id": "l", "kind": "for_each", "do": [{"id": "d", "kind": "call", "capability": "y"}]}]}
        ]});
        let s = steps(&p);
        let ids: Vec<_> = s.iter().map(|s| s.id.clone().unwrap()).collect();
        assert_eq!(ids, ["a", "b", "c", "l", "d"]);
        assert_eq!(s[2].arm, Some(("b".into(), "then".into())));
        assert_eq!(s[3].pointer, "/steps/1/else/0");
        assert_eq!(s[4].arm, None);
        assert_eq!(s[4].in_loop.as_deref(), Some("l"));
        assert_eq!(
            s[4].ancestors,
            vec![("b".into(), false), ("l".into(), true)]
        );
        assert_eq!(depth(&json!({"a": [1, {"b": {}}]})), 4);
    }
}
