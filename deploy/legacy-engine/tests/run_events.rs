//! Runs end to end in dialect a: every event kind with its fields and loop counters,
//! the FAILED / TIMED_OUT / REJECTED states, scope at run time, dry runs and what
//! reaches the world.

mod common;

use common::{Engine, call, set, types};
use serde_json::{Value, json};

#[tokio::test]
async fn every_event_kind_in_order_with_loop_counters() {
    let engine = Engine::start();
    let workflow = json!({"steps": [
        {"id": "outer", "kind": "for_each", "items": ["cus_1", "cus_2"], "as": "c", "do": [
            {"id": "inner", "kind": "for_each", "items": [1, 2], "as": "n", "do": [
                call("e", "util.echo", json!({"value": {"c": "$.vars.c", "n": "$.item"}}))
            ]},
            {"id": "b", "kind": "branch", "when": {"op": "eq", "left": "$.vars.c", "right": "cus_1"},
             "then": [set("t", json!("first"))], "else": [set("f", json!("other"))]}
        ]},
        set("done", json!({"outer": "$.steps.outer.output"}))
    ]});
    let body = engine
        .run("acme", json!({"workflow": workflow, "trace": true}))
        .await;
    assert_eq!(body["state"], "COMPLETED", "{body}");
    assert_eq!(body["error"], Value::Null);
    assert_eq!(body["result"], json!({"outer": ["first", "other"]}));
    assert!(body.get("problems").is_none());
    let events = &body["events"];
    assert_eq!(
        types(events),
        vec![
            "loop_enter",
            "loop_next",
            "loop_enter",
            "loop_next",
            "call",
            "loop_next",
            "call",
            "loop_exit",
            "branch",
            "set",
            "loop_next",
            "loop_enter",
            "loop_next",
            "call",
            "loop_next",
            "call",
            "loop_exit",
            "branch",
            "set",
            "loop_exit",
            "set",
        ]
    );
    let iters: Vec<Value> = events
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["iter"].clone())
        .collect();
    assert_eq!(
        iters,
        vec![
            json!([]),
            json!([]),
            json!([1]),
            json!([1]),
            json!([1, 1]),
            json!([1]),
            json!([1, 2]),
            json!([1]),
            json!([1]),
            json!([1]),
            json!([]),
            json!([2]),
            json!([2]),
            json!([2, 1]),
            json!([2]),
            json!([2, 2]),
            json!([2]),
            json!([2]),
            json!([2]),
            json!([]),
            json!([]),
        ]
    );
    assert_eq!(
        events[0],
        json!({"type": "loop_enter", "step": "outer", "count": 2, "iter": []})
    );
    assert_eq!(
        events[1],
        json!({"type": "loop_next", "step": "outer", "index": 1, "item": "cus_1", "iter": []})
    );
    let first_call = &events[4];
    assert_eq!(first_call["type"], "call");
    assert_eq!(first_call["step"], "e");
    assert_eq!(first_call["capability"], "util.echo");
    assert_eq!(first_call["args"], json!({"value": {"c": "cus_1", "n": 1}}));
    assert_eq!(
        first_call["result"],
        json!({"value": {"c": "cus_1", "n": 1}})
    );
    assert_eq!(first_call["status"], "ok");
    assert_eq!(first_call["error"], Value::Null);
    assert!(first_call["ms"].is_u64());
    let exit = &events[7];
    assert_eq!(exit["step"], "inner");
    assert_eq!(exit["iterations"], 2);
    assert_eq!(exit["reason"], "items exhausted");
    assert!(exit["ms"].is_u64());
    let branch = &events[8];
    assert_eq!(branch["arm"], "then");
    assert_eq!(branch["cond"], "$.vars.c eq \"cus_1\"");
    assert_eq!(branch["value"], true);
    assert!(branch["ms"].is_u64());
    assert_eq!(events[17]["arm"], "else");
    assert_eq!(events[17]["value"], false);
    assert_eq!(
        events[9],
        json!({"type": "set", "step": "t", "value": "first", "ms": events[9]["ms"], "iter": [1]})
    );
    assert_eq!(events[20]["value"], json!({"outer": ["first", "other"]}));
}

#[tokio::test]
async fn without_trace_there_are_no_events_and_ids_count_up() {
    let engine = Engine::start();
    let workflow = json!({"steps": [set("s", json!(1))]});
    let first = engine.run("acme", json!({"workflow": workflow})).await;
    let second = engine.run("globex", json!({"workflow": workflow})).await;
    assert_eq!(first["run"], "r-000001");
    assert_eq!(second["run"], "r-000002");
    assert_eq!(first["events"], Value::Null);
    assert_eq!(
        first["result"],
        json!(1),
        "without a mapping the result is the last step's output"
    );
    assert_eq!(engine.state("acme").await["runs"], 1);
}

#[tokio::test]
async fn a_failing_call_stops_the_run_and_keeps_earlier_side_effects() {
    let engine = Engine::start();
    let before = engine.digest("acme").await;
    let workflow = json!({"steps": [
        {"id": "l", "kind": "for_each", "items": "$.input.ids", "as": "id", "do": [
            call("st", "crm.set_tier", json!({"id": "$.item", "tier": "silver"}))
        ]},
        call("never", "util.echo", json!({"value": "$.steps.l.output"}))
    ]});
    let body = engine
        .run("acme", json!({"workflow": workflow, "input": {"ids": ["cus_1", "cus_9", "cus_3"]}, "trace": true}))
        .await;
    assert_eq!(body["state"], "FAILED");
    assert_eq!(body["error"], "step 'st' failed: no such customer 'cus_9'");
    assert_eq!(body["result"], Value::Null);
    let events = &body["events"];
    assert_eq!(
        types(events),
        vec![
            "loop_enter",
            "loop_next",
            "call",
            "loop_next",
            "call",
            "loop_exit"
        ]
    );
    assert_eq!(events[2]["status"], "ok");
    assert_eq!(events[4]["status"], "failed");
    assert_eq!(events[4]["error"], "no such customer 'cus_9'");
    assert_eq!(events[4]["result"], Value::Null);
    assert_eq!(events[4]["iter"], json!([2]));
    assert_eq!(
        events[5],
        json!({"type": "loop_exit", "step": "l", "iterations": 2, "reason": "body failed",
        "ms": events[5]["ms"], "iter": []})
    );

    let state = engine.state("acme").await;
    assert_ne!(
        state["digest"],
        before.as_str(),
        "the successful call before the failure stays done"
    );
    assert_eq!(state["customers"][0]["tier"], "silver");
    assert_eq!(state["customers"][2]["tier"], "bronze");
    assert_eq!(state["audit"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn arguments_are_checked_again_at_run_time() {
    let engine = Engine::start();
    let workflow = json!({"steps": [call("st", "crm.set_tier", json!({"id": "cus_1", "tier": "$.input.tier"}))]});
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"tier": "platinum"}, "trace": true}),
        )
        .await;
    assert_eq!(body["state"], "FAILED");
    let message = "invalid value 'platinum' for parameter 'tier' of crm.set_tier (allowed: bronze, silver, gold)";
    assert_eq!(body["error"], format!("step 'st' failed: {message}"));
    assert_eq!(body["events"][0]["error"], message);
    assert_eq!(
        body["events"][0]["args"],
        json!({"id": "cus_1", "tier": "platinum"})
    );
}

#[tokio::test]
async fn util_fail_fails_with_its_message() {
    let engine = Engine::start();
    let workflow = json!({"steps": [call("f", "util.fail", json!({"message": "boom"}))]});
    let body = engine
        .run("public", json!({"workflow": workflow, "trace": true}))
        .await;
    assert_eq!(body["state"], "FAILED");
    assert_eq!(body["error"], "step 'f' failed: boom");
    assert_eq!(types(&body["events"]), vec!["call"]);
}

#[tokio::test]
async fn a_timed_out_run_changes_nothing() {
    let engine = Engine::start();
    let before = engine.digest("acme").await;
    let workflow = json!({"steps": [
        call("st", "crm.set_tier", json!({"id": "cus_3", "tier": "gold"})),
        call("z", "util.sleep", json!({"ms": 5000})),
        set("after", json!("$.steps.z.output"))
    ]});
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "trace": true, "deadline_ms": 150}),
        )
        .await;
    assert_eq!(body["state"], "TIMED_OUT");
    assert_eq!(body["error"], "deadline of 150 ms exceeded");
    assert_eq!(body["result"], Value::Null);
    assert_eq!(
        types(&body["events"]),
        vec!["call"],
        "the interrupted sleep has no event"
    );
    assert_eq!(engine.digest("acme").await, before);
}

#[tokio::test]
async fn rejected_runs_execute_nothing() {
    let engine = Engine::start();
    let before = engine.digest("acme").await;
    let workflow = json!({"steps": [
        call("st", "crm.set_tier", json!({"id": "cus_3", "tier": "gold"})),
        call("x", "crm.get_custmer", json!({"id": "cus_1"}))
    ]});
    let body = engine
        .run("acme", json!({"workflow": workflow, "trace": true}))
        .await;
    assert_eq!(body["state"], "REJECTED");
    assert_eq!(body["error"], "workflow rejected");
    assert_eq!(body["result"], Value::Null);
    assert_eq!(body["events"], json!([]));
    assert_eq!(
        body["problems"],
        json!([{"level": "ERROR", "text": "unknown capability 'crm.get_custmer' (did you mean 'crm.get_customer'?)",
                "where": "steps[1].capability"}])
    );
    assert_eq!(engine.digest("acme").await, before);
    assert_eq!(engine.state("acme").await["runs"], 1);
}

#[tokio::test]
async fn dry_runs_leave_the_world_unchanged() {
    let engine = Engine::start();
    let before = engine.state("acme").await;
    let workflow = json!({
    "output": {"invoice": "$.steps.inv.output", "mail": "$.steps.m.output", "tier": "$.steps.st.output",
               "deleted": "$.steps.d.output", "listed": "$.steps.l.output.count"},
    "steps": [
        call("inv", "billing.create_invoice", json!({"customer_id": "cus_1", "amount_cents": 1200, "memo": "x"})),
        call("m", "mail.send", json!({"to": "ada@example.com", "subject": "Hi", "body": "Invoice"})),
        call("st", "crm.set_tier", json!({"id": "cus_2", "tier": "gold"})),
        call("d", "crm.delete_customer", json!({"id": "cus_3"})),
        call("l", "billing.list_invoices", json!({}))
    ]});
    let dry = engine
        .run(
            "acme",
            json!({"workflow": workflow, "dry_run": true, "trace": true}),
        )
        .await;
    assert_eq!(dry["state"], "COMPLETED", "{dry}");
    assert_eq!(
        dry["result"],
        json!({"invoice": {"invoice_id": "inv_1", "customer_id": "cus_1", "amount_cents": 1200},
               "mail": {"message_id": "msg_1", "queued": true},
               "tier": {"id": "cus_2", "tier": "gold", "previous": "silver"},
               "deleted": {"id": "cus_3", "deleted": true},
               "listed": 1})
    );
    let after_dry = engine.state("acme").await;
    assert_eq!(after_dry["digest"], before["digest"]);
    assert_eq!(after_dry["invoices"], json!([]));
    assert_eq!(after_dry["outbox"], json!([]));

    let real = engine.run("acme", json!({"workflow": workflow})).await;
    assert_eq!(real["state"], "COMPLETED");
    assert_eq!(
        real["result"], dry["result"],
        "a dry run predicts the real one"
    );
    let after_real = engine.state("acme").await;
    assert_ne!(after_real["digest"], before["digest"]);
    assert_eq!(after_real["invoices"].as_array().map(Vec::len), Some(1));
    assert_eq!(after_real["outbox"].as_array().map(Vec::len), Some(1));
    assert_eq!(after_real["customers"].as_array().map(Vec::len), Some(2));
    assert_eq!(after_real["audit"].as_array().map(Vec::len), Some(4));
    assert_eq!(
        engine.state("globex").await["digest"],
        before["digest"],
        "other tenants are untouched"
    );
}

#[tokio::test]
async fn reads_do_not_move_the_digest() {
    let engine = Engine::start();
    let before = engine.digest("public").await;
    let workflow = json!({"steps": [
        call("f", "crm.find_customer", json!({"query": "a"})),
        call("g", "crm.get_customer", json!({"id": "$.steps.f.output.matches.0.id"}))
    ]});
    let body = engine.run("public", json!({"workflow": workflow})).await;
    assert_eq!(body["state"], "COMPLETED");
    assert_eq!(body["result"]["name"], "Ada");
    assert_eq!(engine.digest("public").await, before);
}

#[tokio::test]
async fn untaken_arms_read_null_and_loop_bodies_forget_the_previous_iteration() {
    let engine = Engine::start();
    let workflow = json!({
    "output": {"after": "$.steps.after.output", "loop": "$.steps.l.output", "ctx": "$.context.who",
               "first": "$.input.xs.0", "missing": "$.input.nope.deeper"},
    "steps": [
        {"id": "b", "kind": "branch", "when": {"op": "eq", "left": 1, "right": 2},
         "then": [set("t", json!("yes"))], "else": [set("e", json!("no"))]},
        set("after", json!({"t": "$.steps.t.output", "e": "$.steps.e.output", "b": "$.steps.b.output"})),
        {"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "flag", "do": [
            {"id": "lb", "kind": "branch", "when": {"op": "eq", "left": "$.item", "right": true},
             "then": [set("x", json!("ran"))]},
            set("y", json!(["$.steps.x.output", "$.steps.lb.output"]))
        ]}
    ]});
    let body = engine
        .run("acme", json!({"workflow": workflow, "input": {"xs": [true, false]}, "context": {"who": "agent"}}))
        .await;
    assert_eq!(body["state"], "COMPLETED", "{body}");
    assert_eq!(
        body["result"],
        json!({"after": {"t": null, "e": "no", "b": "no"}, "loop": [["ran", "ran"], [null, null]],
               "ctx": "agent", "first": true, "missing": null})
    );
}

#[tokio::test]
async fn conditions_evaluate_like_documented() {
    let engine = Engine::start();
    let branch = |id: &str, when: Value| {
        json!({"id": id, "kind": "branch", "when": when, "then": [set(&format!("{id}_t"), json!(true))],
               "else": [set(&format!("{id}_f"), json!(false))]})
    };
    let workflow = json!({
    "output": {"a": "$.steps.a.output", "b": "$.steps.b.output", "c": "$.steps.c.output",
               "d": "$.steps.d.output", "e": "$.steps.e.output"},
    "steps": [
        branch("a", json!({"and": [{"op": "ge", "left": "$.input.n", "right": 10}, {"not": {"exists": "$.input.memo"}}]})),
        branch("b", json!({"or": [{"op": "lt", "left": "$.input.s", "right": "b"}, {"op": "eq", "left": 1, "right": 2}]})),
        branch("c", json!({"op": "eq", "left": "$.input.n", "right": 10.0})),
        branch("d", json!({"op": "gt", "left": "$.input.s", "right": 1})),
        branch("e", json!({"and": []}))
    ]});
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"n": 10, "s": "a"}, "trace": true}),
        )
        .await;
    assert_eq!(
        body["result"],
        json!({"a": true, "b": true, "c": true, "d": false, "e": true}),
        "{body}"
    );
    assert_eq!(
        body["events"][0]["cond"],
        "$.input.n ge 10 and not exists $.input.memo"
    );
}
