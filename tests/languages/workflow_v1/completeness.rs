//! The completeness gate (Part IV §4.2) for what only `workflow/v1` emits
//! through the legacy engine: every run status, step status and
//! request-error kind is enumerated in the closed-sets guide the server
//! publishes, and has a concrete rejected case (the value appears) and an
//! accepted case (a corrected request where it does not), through the real
//! endpoint. The diagnostic codes are the shared suite's.

use super::step;
use crate::common::answers::anonymous_session as session;
use crate::common::guides::guide_body;
use crate::common::{LANG, Mcp, TestEnv, valid_program};
use pilotage_gateway::pilotage::{RequestErrorKind, RunStatus, StepStatus};
use serde_json::{Value, json};

async fn closed_sets_body(c: &Mcp) -> String {
    guide_body(c, LANG, "closed-sets").await
}

#[tokio::test(flavor = "multi_thread")]
async fn every_run_and_step_status_is_enumerated_and_reached_both_ways() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
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
    let status = |r: &crate::common::CallResult| {
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
    let kind = |r: &crate::common::CallResult| {
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
