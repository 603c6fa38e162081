//! The completeness gate (Part IV §4.2): every closed value the gateway can
//! emit — diagnostic codes, run statuses, step statuses, request-error kinds —
//! is enumerated in the closed-sets guide the server publishes, and has a
//! concrete rejected case (the value appears) and an accepted case (a
//! corrected request where it does not), through the real endpoint.

mod common;

use common::{Mcp, TestEnv, valid_program};
use pilotage_gateway::pilotage::{RequestErrorKind, RunStatus, StepStatus};
use serde_json::{Value, json};

async fn session(env: &TestEnv) -> Mcp {
    let mut c = env.anonymous();
    c.initialize().await;
    c
}

async fn closed_sets_body(c: &Mcp) -> String {
    let g = c
        .call(
            "pilotage_get_guide",
            json!({"language": "workflow/v1", "id": "closed-sets"}),
        )
        .await;
    g.structured["guide"]["body"]
        .as_str()
        .expect("body")
        .to_string()
}

fn diag_codes(r: &Value) -> Vec<String> {
    r["diagnostics"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|x| x["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn step(id: &str, cap: &str, with: Value) -> Value {
    json!({"id": id, "kind": "call", "capability": cap, "with": with})
}

fn sets(n: usize) -> Value {
    let steps: Vec<Value> = (0..n)
        .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": i}))
        .collect();
    json!({"steps": steps})
}

/// (code, rejected program, accepted program) for every code validate emits.
fn program_cases() -> Vec<(&'static str, Value, Value)> {
    let echo = |v: Value| step("e", "util.echo", json!({"value": v}));
    let with_output = |steps: Value| json!({"steps": steps, "output": {"v": "$.steps.e.output"}});
    vec![
        (
            "unknown_capability",
            with_output(json!([step("e", "util.ecko", json!({"value": 1}))])),
            with_output(json!([echo(json!(1))])),
        ),
        (
            "missing_parameter",
            with_output(json!([step("e", "util.echo", json!({}))])),
            with_output(json!([echo(json!(1))])),
        ),
        (
            "type_mismatch",
            json!({"steps": [step("i", "billing.create_invoice", json!({"customer_id": "cus_1", "amount_cents": "12"}))]}),
            json!({"steps": [step("i", "billing.create_invoice", json!({"customer_id": "cus_1", "amount_cents": 12}))]}),
        ),
        (
            "unexpected_parameter",
            with_output(json!([step(
                "e",
                "util.echo",
                json!({"value": 1, "extra": 2})
            )])),
            with_output(json!([echo(json!(1))])),
        ),
        (
            "duplicate_id",
            json!({"steps": [{"id": "a", "kind": "set", "value": 1}, {"id": "a", "kind": "set", "value": 2}]}),
            json!({"steps": [{"id": "a", "kind": "set", "value": 1}, {"id": "b", "kind": "set", "value": 2}]}),
        ),
        (
            "missing_id",
            json!({"steps": [{"kind": "set", "value": 1}]}),
            json!({"steps": [{"id": "a", "kind": "set", "value": 1}]}),
        ),
        (
            "reserved_character",
            json!({"steps": [{"id": "a#b", "kind": "set", "value": 1}]}),
            json!({"steps": [{"id": "ab", "kind": "set", "value": 1}]}),
        ),
        (
            "unknown_kind",
            json!({"steps": [{"id": "a", "kind": "print", "value": 1}]}),
            json!({"steps": [{"id": "a", "kind": "set", "value": 1}]}),
        ),
        (
            "malformed_expression",
            json!({"steps": [{"id": "a", "kind": "set", "value": 1}, {"id": "b", "kind": "set", "value": "$.steps..a"}]}),
            json!({"steps": [{"id": "a", "kind": "set", "value": 1}, {"id": "b", "kind": "set", "value": "$.steps.a.output"}]}),
        ),
        (
            "unresolved_reference",
            json!({"steps": [{"id": "b", "kind": "set", "value": "$.steps.a.output"}, {"id": "a", "kind": "set", "value": 1}]}),
            json!({"steps": [{"id": "a", "kind": "set", "value": 1}, {"id": "b", "kind": "set", "value": "$.steps.a.output"}]}),
        ),
        (
            "invalid_structure",
            json!({"steps": [{"id": "b", "kind": "branch", "then": [{"id": "x", "kind": "set", "value": 1}]}]}),
            json!({"steps": [{"id": "b", "kind": "branch", "when": {"op": "eq", "left": 1, "right": 1},
                "then": [{"id": "x", "kind": "set", "value": 1}]}]}),
        ),
        (
            "deprecated_capability",
            json!({"steps": [step("u", "crm.update_tier", json!({"id": "cus_1", "tier": "gold"}))]}),
            json!({"steps": [step("u", "crm.set_tier", json!({"id": "cus_1", "tier": "gold"}))]}),
        ),
        (
            "unused_output",
            json!({"steps": [step("a", "util.echo", json!({"value": 0})), echo(json!(1))],
                "output": {"v": "$.steps.e.output"}}),
            json!({"steps": [step("a", "util.echo", json!({"value": 0})), echo(json!(1))],
                "output": {"v": "$.steps.e.output", "w": "$.steps.a.output"}}),
        ),
        ("constraint", sets(201), sets(200)),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn every_diagnostic_code_is_enumerated_and_reached_both_ways() {
    let env = TestEnv::start().await;
    let c = session(&env).await;
    let guide = closed_sets_body(&c).await;
    let mut covered = Vec::new();
    for (code, rejected, accepted) in program_cases() {
        let bad = c
            .call("validate_workflow", json!({"workflow": rejected}))
            .await
            .structured;
        assert!(
            diag_codes(&bad).contains(&code.to_string()),
            "{code} not reached: {bad}"
        );
        let good = c
            .call("validate_workflow", json!({"workflow": accepted}))
            .await
            .structured;
        assert!(
            !diag_codes(&good).contains(&code.to_string()),
            "{code} on the corrected program: {good}"
        );
        assert_eq!(
            good["valid"], true,
            "{code}: corrected program is valid: {good}"
        );
        covered.push(code);
    }
    // The two binding codes: context through validate, input through execute.
    let bad = c
        .call(
            "validate_workflow",
            json!({"workflow": valid_program(), "context": {"x": 1}}),
        )
        .await;
    assert!(diag_codes(&bad.structured).contains(&"context_binding".to_string()));
    let good = c
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert!(!diag_codes(&good.structured).contains(&"context_binding".to_string()));
    covered.push("context_binding");
    let run =
        |input: Value| json!({"workflow": valid_program(), "mode": "immediate", "input": input});
    let bad = c.call("run_workflow", run(json!({"id": 1}))).await;
    assert!(
        diag_codes(&bad.structured).contains(&"input_binding".to_string()),
        "{}",
        bad.structured
    );
    let good = c.call("run_workflow", run(json!({"id": "cus_1"}))).await;
    assert_eq!(good.structured["outcome"]["status"], "success");
    covered.push("input_binding");
    // The gateway-native ceiling: a destructive step for a caller capped at write.
    let mut writer = env.client("acme-writer-key");
    writer.initialize().await;
    let delete = json!({"steps": [step("d", "crm.delete_customer", json!({"id": "cus_2"}))]});
    let bad = writer
        .call("validate_workflow", json!({"workflow": delete}))
        .await;
    assert!(
        diag_codes(&bad.structured).contains(&"risk_ceiling".to_string()),
        "{}",
        bad.structured
    );
    let good = writer
        .call(
            "validate_workflow",
            json!({"workflow": common::write_program("gold")}),
        )
        .await;
    assert_eq!(good.structured["valid"], true, "{}", good.structured);
    assert!(!diag_codes(&good.structured).contains(&"risk_ceiling".to_string()));
    covered.push("risk_ceiling");
    // Every code the guide enumerates is covered, and the guide lists each.
    let section = guide.split("## Diagnostic codes").nth(1).unwrap();
    let section = section.split("\n## ").next().unwrap();
    let listed: Vec<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let mut a = listed.clone();
    a.sort();
    covered.sort();
    assert_eq!(a, covered, "closed set in the guide vs codes reached");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_run_and_step_status_is_enumerated_and_reached_both_ways() {
    let env = TestEnv::with_config("tests/configs/conformance.toml", |c| {
        c.engine.run_deadline_ms = 500;
    })
    .await;
    let c = session(&env).await;
    let guide = closed_sets_body(&c).await;
    for s in RunStatus::ALL {
        assert!(
            guide.contains(&format!("`{}`", s.as_str())),
            "run status {} not in guide",
            s.as_str()
        );
    }
    for s in StepStatus::ALL {
        assert!(
            guide.contains(&format!("`{}`", s.as_str())),
            "step status {} not in guide",
            s.as_str()
        );
    }
    let exec = |program: Value, extra: Value| {
        let mut args = json!({"workflow": program, "mode": "immediate", "trace_level": "full"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    let status = |r: &common::CallResult| {
        r.structured["outcome"]["status"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let fail = |msg: &str| step("f", "util.fail", json!({"message": msg}));
    let echo = step("e", "util.echo", json!({"value": 1}));
    // success / error.
    let ok = c
        .call(
            "run_workflow",
            exec(
                json!({"steps": [echo.clone()], "output": {"v": "$.steps.e.output"}}),
                json!({}),
            ),
        )
        .await;
    assert_eq!(status(&ok), "success");
    let err = c
        .call(
            "run_workflow",
            exec(json!({"steps": [fail("no")]}), json!({})),
        )
        .await;
    assert_eq!(status(&err), "error");
    // partial: a step completed before the failure; the enclosing loop is partial.
    let looped = json!({"steps": [echo.clone(), {"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x",
        "do": [fail("inside")]}], "output": {"v": "$.steps.e.output"}});
    let partial = c
        .call(
            "run_workflow",
            exec(looped.clone(), json!({"input": {"xs": [1]}})),
        )
        .await;
    assert_eq!(status(&partial), "partial", "{}", partial.structured);
    let steps = partial.structured["trace"]["steps"].as_array().unwrap();
    let step_status = |id: &str| {
        steps
            .iter()
            .find(|s| s["id"] == id)
            .map(|s| s["outcome"]["status"].clone())
    };
    assert_eq!(step_status("e"), Some(json!("success")));
    assert_eq!(step_status("l"), Some(json!("partial")));
    assert_eq!(step_status("f#1"), Some(json!("error")));
    let not_partial = c
        .call("run_workflow", exec(looped, json!({"input": {"xs": []}})))
        .await;
    assert_eq!(
        status(&not_partial),
        "success",
        "the same program with nothing to iterate"
    );
    // timeout: the run's deadline (500 ms) passes inside a loop.
    let slow = json!({"steps": [{"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x",
        "do": [step("z", "util.sleep", json!({"ms": "$.item"}))]}], "output": {"v": "$.steps.l.output"}});
    let timeout = c
        .call(
            "run_workflow",
            exec(slow.clone(), json!({"input": {"xs": [300, 300, 300]}})),
        )
        .await;
    assert_eq!(status(&timeout), "timeout", "{}", timeout.structured);
    assert_eq!(
        timeout.structured["trace"]["steps"][0]["outcome"]["status"],
        "timeout"
    );
    let quick = c
        .call("run_workflow", exec(slow, json!({"input": {"xs": [1, 1]}})))
        .await;
    assert_eq!(status(&quick), "success");
    // validation_error / catalog_drift / promotion_drift are covered with their
    // accepted counterparts by the vectors PIL-EXECUTE-GUARD-B,
    // PIL-EXECUTE-DRIFT-B and PIL-EXECUTE-PROMOTION-DRIFT-B; reached here too.
    let refused = c
        .call(
            "run_workflow",
            exec(json!({"steps": [{"kind": "set"}]}), json!({})),
        )
        .await;
    assert_eq!(status(&refused), "validation_error");
    let drift = c
        .call(
            "run_workflow",
            exec(
                json!({"steps": [echo.clone()], "output": {"v": "$.steps.e.output"}}),
                json!({"expected_catalog_version": "cv_x"}),
            ),
        )
        .await;
    assert_eq!(status(&drift), "catalog_drift");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_error_kind_is_enumerated_and_reached_both_ways() {
    let env = TestEnv::start().await;
    let c = session(&env).await;
    let guide = closed_sets_body(&c).await;
    for k in RequestErrorKind::ALL {
        assert!(
            guide.contains(&format!("`{}`", k.as_str())),
            "request-error kind {} not in guide",
            k.as_str()
        );
    }
    let kind = |r: &common::CallResult| {
        if r.is_error {
            r.structured["error"]["kind"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        } else {
            "-".into()
        }
    };
    let g = |args: Value| c.call("pilotage_get_guide", args);
    // not_found
    assert_eq!(
        kind(&g(json!({"language": "workflow/v1", "id": "nope"})).await),
        "not_found"
    );
    assert_eq!(
        kind(&g(json!({"language": "workflow/v1", "id": "core"})).await),
        "-"
    );
    // invalid_request
    let run = |extra: Value| {
        let mut a = json!({"workflow": valid_program(), "input": {"id": "cus_1"}});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        c.call("run_workflow", a)
    };
    assert_eq!(kind(&run(json!({})).await), "invalid_request");
    assert_eq!(kind(&run(json!({"mode": "immediate"})).await), "-");
    // unknown_baseline
    let cs = |token: &str| {
        c.call(
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "changed_since", "catalog_version": token}),
        )
    };
    assert_eq!(kind(&cs("cv_nope").await), "unknown_baseline");
    let list = c
        .call(
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "list"}),
        )
        .await;
    assert_eq!(
        kind(&cs(list.structured["catalog_version"].as_str().unwrap()).await),
        "-"
    );
    // idempotency_conflict
    let key = format!("k{}", std::process::id());
    assert_eq!(
        kind(&run(json!({"mode": "immediate", "idempotency_key": key})).await),
        "-"
    );
    assert_eq!(
        kind(
            &run(json!({"mode": "immediate", "idempotency_key": key, "input": {"id": "cus_2"}}))
                .await
        ),
        "idempotency_conflict"
    );
    // bounds_exceeded
    let deep = |n: usize| {
        let mut v = json!(1);
        for _ in 0..n {
            v = json!({"x": v});
        }
        json!({"steps": [{"id": "s", "kind": "set", "value": v}]})
    };
    assert_eq!(
        kind(
            &c.call("validate_workflow", json!({"workflow": deep(40)}))
                .await
        ),
        "bounds_exceeded"
    );
    assert_eq!(
        kind(
            &c.call("validate_workflow", json!({"workflow": deep(10)}))
                .await
        ),
        "-"
    );
    // unsupported
    let staging = |store: bool| {
        c.call(
            "run_staging_workflow",
            json!({"workflow": valid_program(), "input": {"id": "cus_1"},
        "context": {"environment": "staging"}, "store": store}),
        )
    };
    assert_eq!(kind(&staging(true).await), "unsupported");
    assert_eq!(kind(&staging(false).await), "-");
    // internal: the engine's validator fails.
    env.engine
        .faults(json!({"tenant": "acme", "validator_500": true}))
        .await;
    let fresh =
        json!({"name": "internal-probe", "steps": [{"id": "a", "kind": "set", "value": 1}]});
    assert_eq!(
        kind(
            &c.call("validate_workflow", json!({"workflow": fresh.clone()}))
                .await
        ),
        "internal"
    );
    env.engine.faults(json!({})).await;
    assert_eq!(
        kind(
            &c.call("validate_workflow", json!({"workflow": fresh}))
                .await
        ),
        "-"
    );
}
