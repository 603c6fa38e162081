//! The workflows that produce every message shape, shared by the dialect a and
//! dialect b tests. Each case names its tenant, optional context, and the dialect a
//! problem it must produce.

use serde_json::{Value, json};

use super::{call, set};

/// One expected problem: level, text and `where` (None = absent).
pub type Expect = (&'static str, String, Option<&'static str>);

fn nested_branches(depth: usize) -> Value {
    let mut steps = json!([set("leaf", json!(1))]);
    for level in 0..depth - 1 {
        steps = json!([{"id": format!("b{level}"), "kind": "branch", "when": {"exists": "$.input.x"}, "then": steps}]);
    }
    json!({ "steps": steps })
}

pub fn cases() -> Vec<(&'static str, &'static str, Value, Option<Value>, Expect)> {
    let e = |text: &str| -> String { text.to_owned() };
    let many: Vec<Value> = (0..201).map(|i| set(&format!("s{i}"), json!(i))).collect();
    vec![
        (
            "1 unknown, close name",
            "acme",
            json!({"steps": [call("a", "crm.get_custmer", json!({"id": "cus_1"}))]}),
            None,
            (
                "ERROR",
                e("unknown capability 'crm.get_custmer' (did you mean 'crm.get_customer'?)"),
                Some("steps[0].capability"),
            ),
        ),
        (
            "1 unknown, nothing close",
            "acme",
            json!({"steps": [call("a", "payroll.run", json!({}))]}),
            None,
            (
                "ERROR",
                e("unknown capability 'payroll.run'"),
                Some("steps[0].capability"),
            ),
        ),
        (
            "1 suggestion leaks a name the tenant cannot see",
            "public",
            json!({"steps": [call("a", "crm.delete_customr", json!({"id": "cus_1"}))]}),
            None,
            (
                "ERROR",
                e("unknown capability 'crm.delete_customr' (did you mean 'crm.delete_customer'?)"),
                Some("steps[0].capability"),
            ),
        ),
        (
            "2 not enabled",
            "public",
            json!({"steps": [call("a", "crm.set_tier", json!({"id": "cus_1", "tier": "gold"}))]}),
            None,
            (
                "ERROR",
                e("capability 'crm.set_tier' is not enabled for tenant public"),
                Some("steps[0].capability"),
            ),
        ),
        (
            "3 missing parameter",
            "acme",
            json!({"steps": [call("a", "crm.set_tier", json!({"tier": "gold"}))]}),
            None,
            (
                "ERROR",
                e("missing required parameter 'id' for crm.set_tier"),
                Some("steps[0].with"),
            ),
        ),
        (
            "4 wrong type, nested in an arm",
            "acme",
            json!({"steps": [set("s", json!(1)), {"id": "b", "kind": "branch", "when": {"op": "eq", "left": 1, "right": 1},
           "then": [call("inv", "billing.create_invoice", json!({"customer_id": "cus_1", "amount_cents": "12.00"}))]}]}),
            None,
            (
                "ERROR",
                e("parameter 'amount_cents' of billing.create_invoice expects integer, got string"),
                Some("steps[1].then[0].with.amount_cents"),
            ),
        ),
        (
            "4 with is not an object",
            "acme",
            json!({"steps": [call("a", "util.echo", json!([1]))]}),
            None,
            (
                "ERROR",
                e("parameter 'with' of util.echo expects object, got array"),
                Some("steps[0].with"),
            ),
        ),
        (
            "5 enum",
            "acme",
            json!({"steps": [call("a", "crm.set_tier", json!({"id": "cus_1", "tier": "platinum"}))]}),
            None,
            (
                "ERROR",
                e(
                    "invalid value 'platinum' for parameter 'tier' of crm.set_tier (allowed: bronze, silver, gold)",
                ),
                Some("steps[0].with.tier"),
            ),
        ),
        (
            "5 range",
            "acme",
            json!({"steps": [call("a", "util.sleep", json!({"ms": 9000}))]}),
            None,
            (
                "ERROR",
                e("invalid value '9000' for parameter 'ms' of util.sleep (allowed: 0..5000)"),
                Some("steps[0].with.ms"),
            ),
        ),
        (
            "6 unexpected parameter",
            "acme",
            json!({"steps": [call("a", "crm.get_customer", json!({"id": "cus_1", "verbose": true}))]}),
            None,
            (
                "ERROR",
                e("unexpected parameter 'verbose' for crm.get_customer"),
                Some("steps[0].with.verbose"),
            ),
        ),
        (
            "7 duplicate id",
            "acme",
            json!({"steps": [set("a", json!(1)), set("b", json!(2)), set("a", json!(3))]}),
            None,
            ("ERROR", e("duplicate step id 'a'"), Some("steps[2].id")),
        ),
        (
            "8 missing id, position in its own block",
            "acme",
            json!({"steps": [{"id": "b", "kind": "branch", "when": {"exists": "$.input.x"},
           "then": [set("t", json!(1)), {"kind": "set", "value": 2}]}]}),
            None,
            ("ERROR", e("step #2 has no id"), Some("steps[0].then[1]")),
        ),
        (
            "9 unknown kind",
            "acme",
            json!({"steps": [set("a", json!(1)), {"id": "k", "kind": "while"}]}),
            None,
            (
                "ERROR",
                e("unknown step kind 'while'"),
                Some("steps[1].kind"),
            ),
        ),
        (
            "10 malformed expression",
            "acme",
            json!({"steps": [set("s", json!({"x": "$.steps.a"}))]}),
            None,
            (
                "ERROR",
                e("step 's': cannot parse expression '$.steps.a'"),
                None,
            ),
        ),
        (
            "11 not run yet",
            "acme",
            json!({"steps": [set("s", json!("$.steps.later.output")), set("later", json!(1))]}),
            None,
            (
                "ERROR",
                e("step 's': reference to step 'later' which has not run yet"),
                None,
            ),
        ),
        (
            "12 only visible inside a loop",
            "acme",
            json!({"steps": [{"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x",
           "do": [call("e", "util.echo", json!({"value": "$.item"}))]}, set("after", json!("$.steps.e.output"))]}),
            None,
            (
                "ERROR",
                e("step 'after': step 'e' is only visible inside loop 'l'"),
                None,
            ),
        ),
        (
            "13 branch shape",
            "acme",
            json!({"steps": [set("a", json!(1)), {"id": "b", "kind": "branch", "when": {"exists": "$.input.x"}, "then": []}]}),
            None,
            (
                "ERROR",
                e("branch 'b' needs a 'when' condition and a non-empty 'then' list"),
                Some("steps[1]"),
            ),
        ),
        (
            "14 for_each shape",
            "acme",
            json!({"steps": [set("a", json!(1)), {"id": "f", "kind": "for_each", "items": "$.input.xs", "do": [set("x", json!(1))]}]}),
            None,
            (
                "ERROR",
                e("for_each 'f' needs 'items', 'as' and a non-empty 'do' list"),
                Some("steps[1]"),
            ),
        ),
        (
            "15 set shape",
            "acme",
            json!({"steps": [set("a", json!(1)), {"id": "s", "kind": "set"}]}),
            None,
            ("ERROR", e("set step 's' needs a 'value'"), Some("steps[1]")),
        ),
        (
            "16 unknown operator",
            "acme",
            json!({"steps": [set("a", json!(1)), {"id": "b", "kind": "branch", "when": {"op": "contains", "left": 1, "right": 2},
           "then": [set("t", json!(1))]}]}),
            None,
            (
                "ERROR",
                e("unknown condition operator 'contains'"),
                Some("steps[1].when"),
            ),
        ),
        (
            "16 unknown operator, deeper",
            "acme",
            json!({"steps": [{"id": "b", "kind": "branch", "when": {"and": [{"exists": "$.input.x"}, {"xor": []}]},
           "then": [set("t", json!(1))]}]}),
            None,
            (
                "ERROR",
                e("unknown condition operator 'xor'"),
                Some("steps[0].when.and[1]"),
            ),
        ),
        (
            "17 item outside a loop",
            "acme",
            json!({"steps": [set("s", json!("$.item.id"))]}),
            None,
            (
                "ERROR",
                e("'$.item' used outside of a loop in step 's'"),
                None,
            ),
        ),
        (
            "17 loop variable outside its loop",
            "acme",
            json!({"steps": [set("s", json!("$.vars.c.id"))]}),
            None,
            (
                "ERROR",
                e("'$.vars.c' used outside of a loop in step 's'"),
                None,
            ),
        ),
        (
            "18 undeclared input field",
            "acme",
            json!({"input": {"type": "object", "properties": {"id": {"type": "string"}}},
           "steps": [call("g", "crm.get_customer", json!({"id": "$.input.customer"}))]}),
            None,
            (
                "ERROR",
                e("input field 'customer' is not declared in the workflow input schema"),
                Some("steps[0].with.id"),
            ),
        ),
        (
            "19 deprecated",
            "acme",
            json!({"steps": [call("u", "crm.update_tier", json!({"id": "cus_1", "tier": "gold"}))]}),
            None,
            (
                "WARN",
                e("capability 'crm.update_tier' is deprecated: use crm.set_tier"),
                Some("steps[0].capability"),
            ),
        ),
        (
            "20 unused output",
            "acme",
            json!({"output": {"n": 1}, "steps": [call("g", "crm.get_customer", json!({"id": "cus_1"}))]}),
            None,
            (
                "WARN",
                e("output of step 'g' is never used"),
                Some("steps[0]"),
            ),
        ),
        (
            "21 step budget",
            "acme",
            json!({ "steps": many }),
            None,
            (
                "ERROR",
                e("E_LIMIT_0042: step budget exhausted (201/200)"),
                None,
            ),
        ),
        (
            "22 context missing",
            "acme",
            json!({"steps": [set("s", json!("$.context.user"))]}),
            None,
            (
                "ERROR",
                e("step 's': context value 'user' is not available"),
                None,
            ),
        ),
        (
            "22 context key missing",
            "acme",
            json!({"steps": [set("s", json!("$.context.user"))]}),
            Some(json!({"org": "x"})),
            (
                "ERROR",
                e("step 's': context value 'user' is not available"),
                None,
            ),
        ),
        (
            "23 no steps",
            "acme",
            json!({"name": "x", "steps": "none"}),
            None,
            ("ERROR", e("workflow must have a 'steps' list"), None),
        ),
        (
            "24 nesting depth",
            "acme",
            nested_branches(17),
            None,
            (
                "ERROR",
                e("E_LIMIT_0043: nesting depth exhausted (17/16)"),
                None,
            ),
        ),
        (
            "25 input schema",
            "acme",
            json!({"input": "id", "steps": [set("s", json!(1))]}),
            None,
            (
                "ERROR",
                e("workflow 'input' must be a JSON Schema object"),
                None,
            ),
        ),
        (
            "26 output mapping",
            "acme",
            json!({"output": ["$.steps.s.output"], "steps": [set("s", json!(1))]}),
            None,
            (
                "ERROR",
                e("workflow 'output' must be an object of expressions"),
                None,
            ),
        ),
    ]
}
