//! Trace vectors (Part II §5.8, §6.6).

use crate::common::{GLOBEX, assert_shape, valid_program};
use crate::support::{assert_corresponds, error_kind, run, session, status, validate};
use serde_json::{Value, json};

fn branching() -> Value {
    json!({"steps": [
        {"id": "get", "kind": "call", "capability": "crm.get_customer", "with": {"id": "$.input.id"}},
        {"id": "tier", "kind": "branch", "when": {"op": "eq", "left": "$.steps.get.output.tier", "right": "gold"},
         "then": [{"id": "thank", "kind": "call", "capability": "util.echo", "with": {"value": "thanks"}}],
         "else": [{"id": "upsell", "kind": "call", "capability": "util.echo", "with": {"value": "upgrade?"}}]}
    ], "output": {"said": "$.steps.thank.output.value"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_branch_decision_g() {
    let (_env, c) = session().await;
    let v = validate(&c, branching()).await;
    assert_eq!(v.structured["valid"], true, "{}", v.structured);
    let plan = &v.structured["plan"];
    let arm = |id: &str| {
        plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()["arm"]
            .clone()
    };
    assert_eq!(arm("thank"), json!({"branch": "tier", "label": "then"}));
    assert_eq!(arm("upsell"), json!({"branch": "tier", "label": "else"}));
    for (id, taken, absent) in [("cus_1", "then", "upsell"), ("cus_2", "else", "thank")] {
        let r = run(
            &c,
            branching(),
            json!({"input": {"id": id}, "trace_level": "full"}),
        )
        .await;
        assert_eq!(status(&r), "success", "{}", r.structured);
        let steps = r.structured["trace"]["steps"].as_array().unwrap();
        let branch = steps
            .iter()
            .find(|s| s["id"] == "tier")
            .expect("branch entry");
        assert_eq!(branch["decisions"][0]["took"], taken);
        assert_eq!(branch["decisions"][0]["at"], "tier");
        assert!(
            branch["decisions"][0]["because"]
                .as_str()
                .is_some_and(|b| !b.is_empty())
        );
        assert!(branch.get("input").is_none() && branch.get("output").is_none());
        assert!(
            steps.iter().all(|s| s["id"] != absent),
            "untaken arm absent"
        );
        assert_corresponds(plan, &r.structured["trace"], true);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_zero_iteration_loop_g() {
    let (_env, c) = session().await;
    let program = json!({"input": {"type": "object"}, "steps": [
        {"id": "each", "kind": "for_each", "items": "$.input.items", "as": "x",
         "do": [{"id": "say", "kind": "call", "capability": "util.echo", "with": {"value": "$.item"}}]}
    ], "output": {"all": "$.steps.each.output"}});
    let r = run(
        &c,
        program.clone(),
        json!({"input": {"items": []}, "trace_level": "full"}),
    )
    .await;
    assert_eq!(status(&r), "success", "{}", r.structured);
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0]["id"], "each");
    let d = steps[0]["decisions"].as_array().unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["took"], "exit");
    // Iterations are qualified with #n.
    let r = run(
        &c,
        program,
        json!({"input": {"items": [1, 2]}, "trace_level": "full"}),
    )
    .await;
    let ids: Vec<&str> = r.structured["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["each", "say#1", "say#2"]);
    let took: Vec<&str> = r.structured["trace"]["steps"][0]["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["took"].as_str().unwrap())
        .collect();
    assert_eq!(took, ["continue", "continue", "exit"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_partial_b() {
    let (env, c) = session().await;
    let program = json!({"steps": [
        {"id": "set", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_2", "tier": "gold"}},
        {"id": "boom", "kind": "call", "capability": "util.fail", "with": {"message": "downstream outage"}},
        {"id": "after", "kind": "call", "capability": "util.echo", "with": {"value": 1}}
    ], "output": {"v": "$.steps.after.output"}});
    let v = validate(&c, program.clone()).await;
    assert_eq!(v.structured["valid"], true, "{}", v.structured);
    let r = run(&c, program, json!({"trace_level": "full"})).await;
    assert!(!r.is_error);
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert_eq!(status(&r), "partial");
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let ids: Vec<&str> = steps.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["set", "boom"], "the executed prefix");
    assert_eq!(steps[1]["outcome"]["status"], "error");
    assert!(
        r.structured.get("output").is_none(),
        "no output when not ok"
    );
    assert_corresponds(&v.structured["plan"], &r.structured["trace"], false);
    env.engine.reset().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_store_false_g() {
    let (_env, c) = session().await;
    let r = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "store": false}),
    )
    .await;
    assert!(!r.is_error);
    let run_id = r.structured["run_id"].as_str().expect("run_id").to_string();
    let f = c.call("trace_workflow", json!({"run_id": run_id})).await;
    assert_eq!(error_kind(&f), "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_store_retain_g() {
    let (_env, c) = session().await;
    let r = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "store": true, "trace_level": "none"}),
    )
    .await;
    assert_eq!(status(&r), "success");
    assert!(r.structured.get("trace").is_none());
    let f = c
        .call("trace_workflow", json!({"run_id": r.structured["run_id"]}))
        .await;
    assert!(!f.is_error, "{}", f.structured);
    assert_shape(&f.structured, "TraceFetchResponse");
    assert_eq!(
        f.structured["trace"]["level"], "full",
        "recorded at the declared level"
    );
    assert_eq!(f.structured["outcome"], r.structured["outcome"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_retained_g() {
    let (_env, c) = session().await;
    let r = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_3"}, "store": true, "trace_level": "full"}),
    )
    .await;
    let f = c
        .call("trace_workflow", json!({"run_id": r.structured["run_id"]}))
        .await;
    assert_shape(&f.structured, "TraceFetchResponse");
    assert_eq!(
        f.structured, r.structured,
        "the same envelope rode the execute response"
    );
    // Retention without store: the declared PT24H keeps it too.
    let r2 = run(&c, valid_program(), json!({"input": {"id": "cus_3"}})).await;
    let f2 = c
        .call("trace_workflow", json!({"run_id": r2.structured["run_id"]}))
        .await;
    assert_eq!(f2.structured, r2.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_level_g() {
    let (_env, c) = session().await;
    let r = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "store": true}),
    )
    .await;
    let f = c
        .call(
            "trace_workflow",
            json!({"run_id": r.structured["run_id"], "trace_level": "summary"}),
        )
        .await;
    assert_shape(&f.structured, "TraceFetchResponse");
    assert_eq!(f.structured["trace"]["level"], "summary");
    for s in f.structured["trace"]["steps"].as_array().unwrap() {
        assert!(s.get("input").is_none(), "summary omits input: {s}");
    }
    let full = c
        .call(
            "trace_workflow",
            json!({"run_id": r.structured["run_id"], "trace_level": "full"}),
        )
        .await;
    assert_eq!(full.structured["trace"]["level"], "full");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_level_b() {
    let (_env, c) = session().await;
    let r = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "store": true}),
    )
    .await;
    let f = c
        .call(
            "trace_workflow",
            json!({"run_id": r.structured["run_id"], "trace_level": "none"}),
        )
        .await;
    assert_eq!(error_kind(&f), "invalid_request");
    assert_shape(&f.structured, "RequestError");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_indistinguishable_b() {
    let (_env, c) = session().await;
    let unstored = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "store": false}),
    )
    .await;
    let refused = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "expected_catalog_version": "cv_old"}),
    )
    .await;
    assert_eq!(status(&refused), "catalog_drift");
    let g = crate::common::Mcp::new(&c.url, Some(GLOBEX));
    let theirs = run(
        &g,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "store": true}),
    )
    .await;
    assert_eq!(status(&theirs), "success");
    let mut results = Vec::new();
    for id in [
        json!("run_00000000000000000000000000000000"),
        unstored.structured["run_id"].clone(),
        refused.structured["run_id"].clone(),
        theirs.structured["run_id"].clone(),
    ] {
        let f = c.call("trace_workflow", json!({"run_id": id})).await;
        assert_eq!(error_kind(&f), "not_found");
        results.push(f.raw["result"].to_string());
    }
    assert!(
        results.windows(2).all(|w| w[0] == w[1]),
        "byte-identical: {results:?}"
    );
}
