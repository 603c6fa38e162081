//! Every message shape of dialect a, end to end: exact text, level and `where`.
//! Every text seen here must match a shape documented in README.md, and every
//! documented shape must be produced by at least one case.

mod common;

use common::cases::{Expect, cases};
use common::{Engine, call, set, shapes};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn find(problems: &Value, expect: &Expect) -> bool {
    problems.as_array().expect("problems").iter().any(|p| {
        p["level"] == expect.0
            && p["text"] == expect.1.as_str()
            && p.get("where").and_then(Value::as_str) == expect.2
    })
}

fn texts(problems: &Value) -> Vec<String> {
    problems
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| p["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test]
async fn every_message_shape_has_its_exact_text_and_location() {
    let engine = Engine::start();
    let mut seen = Vec::new();
    for (name, tenant, workflow, context, expect) in cases() {
        let mut request = json!({ "workflow": workflow });
        if let Some(context) = context {
            request["context"] = context;
        }
        let (status, body) = engine
            .post("/api/v1/workflows/check", Some(tenant), &request)
            .await;
        assert_eq!(status, StatusCode::OK, "{name}: {body}");
        assert!(
            find(&body["problems"], &expect),
            "{name}: expected {expect:?} in {}",
            body["problems"]
        );
        assert_eq!(body["ok"], expect.0 == "WARN", "{name}: ok flag in {body}");
        seen.extend(texts(&body["problems"]));
    }

    // 27 is only produced by a run: the input does not fit the input schema.
    let workflow = json!({"input": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
        "steps": [call("g", "crm.get_customer", json!({"id": "$.input.id"}))]});
    let run = engine
        .run("acme", json!({"workflow": workflow, "input": {}}))
        .await;
    assert_eq!(run["state"], "REJECTED");
    let expect = (
        "ERROR",
        "run input does not match the workflow input schema: missing required field 'id'"
            .to_owned(),
        None,
    );
    assert!(find(&run["problems"], &expect), "{run}");
    seen.extend(texts(&run["problems"]));

    shapes::assert_complete('a', &seen);
}

#[tokio::test]
async fn a_clean_workflow_checks_ok_and_context_satisfies_shape_22() {
    let engine = Engine::start();
    let workflow = json!({"steps": [
        call("c", "crm.get_customer", json!({"id": "$.context.customer"})),
        {"id": "b", "kind": "branch", "when": {"op": "eq", "left": "$.steps.c.output.tier", "right": "gold"},
         "then": [call("inv", "billing.create_invoice", json!({"customer_id": "$.steps.c.output.id", "amount_cents": 100}))]},
        set("done", json!({"invoice": "$.steps.inv.output.invoice_id"}))
    ]});
    let request = json!({"workflow": workflow, "context": {"customer": "cus_1"}});
    let (status, body) = engine
        .post("/api/v1/workflows/check", Some("acme"), &request)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"ok": true, "problems": []}));
}

#[tokio::test]
async fn problems_come_in_document_order_then_output_then_warnings() {
    let engine = Engine::start();
    let body = engine
        .check(
            "acme",
            json!({"output": {"x": "$.steps.nope.output"}, "steps": [
                call("g", "crm.get_customer", json!({"id": "cus_1"})),
                {"id": "k", "kind": "bogus"},
                set("s", json!("$.item")),
            ]}),
        )
        .await;
    assert_eq!(
        texts(&body["problems"]),
        vec![
            "unknown step kind 'bogus'",
            "'$.item' used outside of a loop in step 's'",
            "step 'output': reference to step 'nope' which has not run yet",
            "output of step 'g' is never used",
        ]
    );
}

#[test]
fn readme_patterns_match_like_globs() {
    use shapes::matches;
    assert!(matches(
        "unknown capability '<X>'",
        "unknown capability 'a.b'"
    ));
    assert!(!matches(
        "unknown capability '<X>'",
        "unknown capability 'a' (did you mean 'b'?)"
    ));
    assert!(matches("step #<N> has no id", "step #3 has no id"));
    assert!(matches("unknown step kind '<K>'", "unknown step kind ''"));
    assert!(matches("a <X> b <Y> c", "a 1 b 2 c"));
}
