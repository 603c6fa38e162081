//! The loop's policy against a scripted server: what is transmitted, what
//! is not, and how each kind of answer ends the command. Drift recovery is
//! tested here because a catalog edit between validate and execute cannot
//! be timed from outside a real server; the end-to-end counterpart edits
//! the catalog from inside the test's HTTP front (`host/tests/`).

use super::*;
use crate::fake::{self, FakeServer, ok, outcome, request_error, valid_with_plan, with_guides};
use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::report::Recorder;
use crate::server::{ToolAnswer, TransportError};
use serde_json::json;

/// Answers every approval request the same way and counts them.
struct Fixed {
    grant: bool,
    asked: usize,
}

impl Approver for Fixed {
    fn approve(&mut self, _r: &ApprovalRequest<'_>) -> Approval {
        self.asked += 1;
        if self.grant {
            Approval::Granted("test".into())
        } else {
            Approval::Refused("test".into())
        }
    }
}

fn grant() -> Fixed {
    Fixed {
        grant: true,
        asked: 0,
    }
}

fn refuse() -> Fixed {
    Fixed {
        grant: false,
        asked: 0,
    }
}

async fn run_with(server: &FakeServer, approver: &mut Fixed, spec: RunSpec) -> (Exit, Recorder) {
    let mut rec = Recorder::default();
    let exit = run(server, None, &spec, approver, &mut rec).await;
    (exit, rec)
}

fn spec() -> RunSpec {
    RunSpec::new(json!({"steps": []}))
}

#[tokio::test]
async fn catalog_drift_is_recovered_by_revalidating() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, n| match tool {
            "validate_workflow" => ok(valid_with_plan(&format!("cv_{}", n + 1), false, false)),
            "run_workflow" if n == 0 => ok(outcome(false, "catalog_drift")),
            "run_workflow" => ok(outcome(true, "success")),
            _ => request_error("not_found"),
        }),
    );
    let (exit, rec) = run_with(&server, &mut grant(), spec()).await;
    assert_eq!(exit, Exit::Success, "{:?}", rec.lines);
    let validates = server.calls_to("validate_workflow");
    let executes = server.calls_to("run_workflow");
    assert_eq!(validates.len(), 2, "re-validated once after the drift");
    assert_eq!(executes.len(), 2);
    // Each execute carries the token of the validation before it.
    assert_eq!(executes[0]["expected_catalog_version"], "cv_1");
    assert_eq!(executes[1]["expected_catalog_version"], "cv_2");
    assert_eq!(executes[0]["mode"], "immediate");
    // Same runnable and input: the same idempotency key is safe to reuse.
    assert_eq!(
        executes[0]["idempotency_key"],
        executes[1]["idempotency_key"]
    );
    // Rediscovery after the drift (Part III §3.3).
    assert_eq!(server.calls_to("pilotage_manifest").len(), 2);
    assert!(
        rec.lines.iter().any(|l| l == "drift 1/3"),
        "{:?}",
        rec.lines
    );
}

#[tokio::test]
async fn drift_recovery_is_bounded() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => ok(valid_with_plan("cv_x", false, false)),
            "run_workflow" => ok(outcome(false, "catalog_drift")),
            _ => request_error("not_found"),
        }),
    );
    let mut s = spec();
    s.max_drift_rounds = 2;
    let (exit, rec) = run_with(&server, &mut grant(), s).await;
    assert_eq!(exit, Exit::NotOk);
    assert_eq!(server.calls_to("run_workflow").len(), 3, "1 + 2 recoveries");
    assert_eq!(
        rec.lines.last().map(String::as_str),
        Some("drift exhausted 2")
    );
}

#[tokio::test]
async fn an_invalid_program_is_a_value_and_is_not_retried() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => ok(json!({"valid": false, "catalog_version": "cv_1",
                "diagnostics": [{"severity": "error", "code": "unknown_capability", "path": "/steps/0", "message": "m"}]})),
            _ => panic!("nothing else may be called: {tool}"),
        }),
    );
    let (exit, _) = run_with(&server, &mut grant(), spec()).await;
    assert_eq!(exit, Exit::NotOk);
    assert_eq!(server.calls_to("validate_workflow").len(), 1);
    assert!(server.calls_to("run_workflow").is_empty());
}

#[tokio::test]
async fn an_error_diagnostic_blocks_execution_even_when_valid_says_true() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => {
                let mut v = valid_with_plan("cv_1", false, false);
                v["diagnostics"] = json!([{"severity": "error", "code": "constraint", "path": "", "message": "m"}]);
                ok(v)
            }
            _ => panic!("nothing else may be called: {tool}"),
        }),
    );
    let (exit, _) = run_with(&server, &mut grant(), spec()).await;
    assert_eq!(exit, Exit::NotOk);
    assert!(server.calls_to("run_workflow").is_empty());
}

#[tokio::test]
async fn failed_and_unknown_outcomes_are_values_and_are_not_retried() {
    for status in [
        "error",
        "partial",
        "quarantined",
        "validation_error",
        "promotion_drift",
    ] {
        let server = FakeServer::new(
            fake::language(true),
            with_guides(move |tool, _args, _n| match tool {
                "validate_workflow" => ok(valid_with_plan("cv_1", false, false)),
                "run_workflow" => ok(outcome(false, status)),
                _ => request_error("not_found"),
            }),
        );
        let (exit, rec) = run_with(&server, &mut grant(), spec()).await;
        assert_eq!(exit, Exit::NotOk, "{status}");
        assert_eq!(
            server.calls_to("run_workflow").len(),
            1,
            "{status}: no retry"
        );
        assert_eq!(server.calls_to("validate_workflow").len(), 1, "{status}");
        if status == "quarantined" {
            assert!(
                rec.lines.iter().any(|l| l == "executed 1 partial"),
                "an unknown ok:false status is handled as partial: {:?}",
                rec.lines
            );
        }
    }
}

#[tokio::test]
async fn an_unknown_request_error_kind_is_internal_and_not_retried() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => ok(valid_with_plan("cv_1", false, false)),
            "run_workflow" => request_error("rate_limited"),
            _ => request_error("not_found"),
        }),
    );
    let (exit, rec) = run_with(&server, &mut grant(), spec()).await;
    assert_eq!(exit, Exit::Failure);
    assert_eq!(server.calls_to("run_workflow").len(), 1);
    let failed = rec
        .lines
        .iter()
        .find(|l| l.starts_with("failed"))
        .expect("failure line");
    assert!(failed.contains("request error internal"), "{failed}");
    assert!(failed.contains("rate_limited"), "{failed}");
}

#[tokio::test]
async fn a_lost_execute_answer_is_not_retried() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => ok(valid_with_plan("cv_1", false, false)),
            "run_workflow" => Err(TransportError::Timeout {
                what: "tools/call run_workflow".into(),
                secs: 1,
            }),
            _ => request_error("not_found"),
        }),
    );
    let (exit, rec) = run_with(&server, &mut grant(), spec()).await;
    assert_eq!(exit, Exit::Failure);
    assert_eq!(server.calls_to("run_workflow").len(), 1);
    assert!(rec.lines.iter().any(|l| l.starts_with("failed execute")));
}

#[tokio::test]
async fn a_destructive_plan_without_approval_is_never_transmitted() {
    for (destructive, open_world) in [(true, false), (false, true)] {
        let server = FakeServer::new(
            fake::language(true),
            with_guides(move |tool, _args, _n| match tool {
                "validate_workflow" => ok(valid_with_plan("cv_1", destructive, open_world)),
                _ => panic!("nothing else may be called: {tool}"),
            }),
        );
        let mut approver = refuse();
        let (exit, _) = run_with(&server, &mut approver, spec()).await;
        assert_eq!(exit, Exit::Refused);
        assert_eq!(approver.asked, 1);
        assert!(server.calls_to("run_workflow").is_empty());
    }
}

#[tokio::test]
async fn a_safe_plan_executes_without_asking() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => ok(valid_with_plan("cv_1", false, false)),
            "run_workflow" => ok(outcome(true, "success")),
            _ => request_error("not_found"),
        }),
    );
    let mut approver = refuse();
    let (exit, _) = run_with(&server, &mut approver, spec()).await;
    assert_eq!(exit, Exit::Success);
    assert_eq!(approver.asked, 0);
}

/// Without `plan`: the gate aggregates the catalog entries of the
/// server-provided references.
fn no_plan_server(references: Option<Value>) -> FakeServer {
    FakeServer::new(
        fake::language(false),
        with_guides(move |tool, args, _n| match tool {
            "validate_workflow" => {
                let mut v = json!({"valid": true, "diagnostics": [], "catalog_version": "cv_1"});
                if let Some(r) = &references {
                    v["references"] = r.clone();
                }
                ok(v)
            }
            "pilotage_catalog" => match args.get("id").and_then(Value::as_str) {
                Some("crm.delete_customer") => ok(json!({"catalog_version": "cv_1", "entry": {
                    "id": "crm.delete_customer", "kind": "capability", "risk": "destructive",
                    "risk_hints": {"readOnly": false, "destructive": true, "openWorld": false}}})),
                Some("util.echo") => ok(json!({"catalog_version": "cv_1", "entry": {
                    "id": "util.echo", "kind": "capability", "risk": "safe",
                    "risk_hints": {"readOnly": true, "destructive": false, "openWorld": false}}})),
                _ => request_error("not_found"),
            },
            "run_workflow" => ok(outcome(true, "success")),
            _ => request_error("not_found"),
        }),
    )
}

#[tokio::test]
async fn without_a_plan_the_references_decide() {
    let server = no_plan_server(Some(json!(["util.echo", "crm.delete_customer"])));
    let mut approver = refuse();
    let (exit, _) = run_with(&server, &mut approver, spec()).await;
    assert_eq!(exit, Exit::Refused);
    assert_eq!(server.calls_to("pilotage_catalog").len(), 2);
    assert!(server.calls_to("run_workflow").is_empty());

    let server = no_plan_server(Some(json!(["util.echo"])));
    let mut approver = refuse();
    let (exit, _) = run_with(&server, &mut approver, spec()).await;
    assert_eq!(exit, Exit::Success);
    assert_eq!(approver.asked, 0);

    // A reference the catalog does not know is risky.
    let server = no_plan_server(Some(json!(["util.echo", "ghost.entry"])));
    let (exit, _) = run_with(&server, &mut refuse(), spec()).await;
    assert_eq!(exit, Exit::Refused);
}

#[tokio::test]
async fn without_plan_or_references_every_execution_needs_approval() {
    let server = no_plan_server(None);
    let mut approver = refuse();
    let (exit, _) = run_with(&server, &mut approver, spec()).await;
    assert_eq!(exit, Exit::Refused);
    assert_eq!(approver.asked, 1);
    assert!(server.calls_to("pilotage_catalog").is_empty());

    let server = no_plan_server(None);
    let mut approver = grant();
    let (exit, _) = run_with(&server, &mut approver, spec()).await;
    assert_eq!(exit, Exit::Success);
}

#[tokio::test]
async fn a_declared_plan_that_is_missing_fails_closed() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => {
                ok(json!({"valid": true, "diagnostics": [], "catalog_version": "cv_1"}))
            }
            _ => panic!("nothing else may be called: {tool}"),
        }),
    );
    let (exit, _) = run_with(&server, &mut refuse(), spec()).await;
    assert_eq!(exit, Exit::Refused);
}

#[tokio::test]
async fn a_tool_list_change_triggers_rediscovery() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => ok(valid_with_plan("cv_1", false, false)),
            "run_workflow" => ok(outcome(true, "success")),
            _ => request_error("not_found"),
        }),
    );
    server.tools_changed.set(true);
    let (exit, _) = run_with(&server, &mut grant(), spec()).await;
    assert_eq!(exit, Exit::Success);
    assert_eq!(server.calls_to("pilotage_manifest").len(), 2);
}

#[tokio::test]
async fn a_malformed_answer_is_a_server_error_not_a_crash() {
    let server = FakeServer::new(
        fake::language(true),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => ok(valid_with_plan("cv_1", false, false)),
            "run_workflow" => Ok(ToolAnswer {
                structured: Some(json!({"run_id": "r", "outcome": {"status": 7}})),
                is_error: false,
            }),
            _ => request_error("not_found"),
        }),
    );
    let (exit, _) = run_with(&server, &mut grant(), spec()).await;
    assert_eq!(exit, Exit::Failure);
}
