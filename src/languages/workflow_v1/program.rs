//! The shape of a `workflow/v1` program as the gateway needs to know it: every
//! step with its JSON Pointer, kind, called capability and enclosing constructs.
//!
//! The gateway does not re-implement the engine's validator; it reads only what
//! it must know for bounds, reserved ids, visibility checks, locators, plans and
//! trace mapping. Anything malformed is left for the engine to report.
//!
//! Memory stays proportional to the program: [`shape`] measures a program
//! without allocating per step (so bounds are checked before anything is
//! built), and [`steps`] shares enclosing ids between the steps they enclose
//! instead of copying them into each step.

use crate::languages::steps::{Ancestors, StepInfo, StepKind};
use serde_json::Value;
use std::sync::Arc;

/// The kind of a step object, from its `kind` member.
fn kind_of(step: &Value) -> StepKind {
    match step.get("kind").and_then(Value::as_str) {
        Some("call") => StepKind::Call,
        Some("branch") => StepKind::Branch,
        Some("for_each") => StepKind::Loop,
        Some("set") => StepKind::Set,
        _ => StepKind::Other,
    }
}

/// What the bounds look at, measured without building anything per step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Steps, nested ones included.
    pub steps: usize,
    /// Bytes of the longest step id.
    pub longest_id: usize,
}

/// Measures the step lists of a program. Recursion follows the step
/// nesting, so callers check the JSON depth bound first.
pub fn shape(program: &Value) -> Shape {
    let mut out = Shape::default();
    if let Some(list) = program.get("steps").and_then(Value::as_array) {
        measure(list, &mut out);
    }
    out
}

fn measure(list: &[Value], out: &mut Shape) {
    for step in list {
        out.steps += 1;
        if let Some(id) = step.get("id").and_then(Value::as_str) {
            out.longest_id = out.longest_id.max(id.len());
        }
        for member in nested_lists(step) {
            measure(member.1, out);
        }
    }
}

/// The step lists a step encloses, with their member names.
fn nested_lists(step: &Value) -> impl Iterator<Item = (&'static str, &[Value])> {
    let members: &[&'static str] = match kind_of(step) {
        StepKind::Branch => &["then", "else"],
        StepKind::Loop => &["do"],
        _ => &[],
    };
    members.iter().filter_map(move |m| {
        step.get(*m)
            .and_then(Value::as_array)
            .map(|a| (*m, a.as_slice()))
    })
}

/// All steps in document order (the expected execution order).
pub fn steps(program: &Value) -> Vec<StepInfo> {
    // Counted first (nothing allocated) so the list is built at its size.
    let mut out = Vec::with_capacity(shape(program).steps);
    if let Some(list) = program.get("steps").and_then(Value::as_array) {
        let top = Scope {
            arm: None,
            in_loop: None,
            ancestors: Arc::from(Vec::new()),
        };
        walk(list, "/steps", &top, &mut out);
    }
    out
}

struct Scope {
    arm: Option<(Arc<str>, &'static str)>,
    in_loop: Option<Arc<str>>,
    ancestors: Ancestors,
}

fn walk(list: &[Value], base: &str, scope: &Scope, out: &mut Vec<StepInfo>) {
    for (i, step) in list.iter().enumerate() {
        let pointer = format!("{base}/{i}");
        let id = step.get("id").and_then(Value::as_str);
        let kind = kind_of(step);
        out.push(StepInfo {
            id: id.map(str::to_string),
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
        let mut own: Option<Arc<str>> = None;
        for (member, inner) in nested_lists(step) {
            // One shared copy of this construct's id for everything inside it.
            let own = own
                .get_or_insert_with(|| Arc::from(id.unwrap_or_default()))
                .clone();
            let is_loop = kind == StepKind::Loop;
            let ancestors: Ancestors = scope
                .ancestors
                .iter()
                .cloned()
                .chain([(own.clone(), is_loop)])
                .collect();
            let scope = if is_loop {
                Scope {
                    arm: None,
                    in_loop: Some(own),
                    ancestors,
                }
            } else {
                Scope {
                    arm: Some((own, member)),
                    in_loop: scope.in_loop.clone(),
                    ancestors,
                }
            };
            walk(inner, &format!("{pointer}/{member}"), &scope, out);
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
        assert_eq!(s[2].arm, Some(("b".into(), "then")));
        assert_eq!(s[3].pointer, "/steps/1/else/0");
        assert_eq!(s[4].arm, None);
        assert_eq!(s[4].in_loop.as_deref(), Some("l"));
        assert_eq!(
            s[4].ancestors[..],
            [("b".into(), false), ("l".into(), true)]
        );
        assert_eq!(
            shape(&p),
            Shape {
                steps: 5,
                longest_id: 1
            }
        );
        assert_eq!(depth(&json!({"a": [1, {"b": {}}]})), 4);
    }

    #[test]
    fn enclosing_ids_are_shared_not_copied() {
        let long = "b".repeat(10_000);
        let inner: Vec<Value> = (0..100)
            .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": 1}))
            .collect();
        let p = json!({"steps": [{"id": long, "kind": "branch", "then": inner}]});
        let s = steps(&p);
        let first = s[1].arm.as_ref().map(|(b, _)| b.clone());
        let last = s[100].arm.as_ref().map(|(b, _)| b.clone());
        match (first, last) {
            (Some(a), Some(b)) => assert!(Arc::ptr_eq(&a, &b)),
            other => panic!("steps inside the branch have no arm: {other:?}"),
        }
        assert!(Arc::ptr_eq(&s[1].ancestors, &s[100].ancestors));
    }
}
