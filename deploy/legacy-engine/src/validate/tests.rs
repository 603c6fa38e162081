//! Unit tests of the validator's decisions (shapes, locations and scope rules). The
//! exact wording of each dialect is tested end to end under `tests/`.

use serde_json::{Map, Value, json};

use super::problem::{Kind, Level, Problem};
use super::{Env, validate};
use crate::world::Engine;
use crate::world::seed::{DEFAULT_SEED, Seed};

fn check_with(tenant: &str, workflow: Value, context: Option<Value>) -> Vec<Problem> {
    let engine = Engine::new(Seed::parse(DEFAULT_SEED).expect("seed"));
    let view = engine.view(tenant);
    let context: Option<Map<String, Value>> = context.and_then(|c| c.as_object().cloned());
    validate(
        &workflow,
        &Env {
            view: &view,
            context: context.as_ref(),
        },
    )
}

fn check(workflow: Value) -> Vec<Problem> {
    check_with("acme", workflow, None)
}

fn kinds(problems: &[Problem]) -> Vec<&Kind> {
    problems.iter().map(|p| &p.kind).collect()
}

fn echo(id: &str, value: Value) -> Value {
    json!({"id": id, "kind": "call", "capability": "util.echo", "with": {"value": value}})
}

#[test]
fn a_clean_workflow_has_no_problems() {
    let problems = check(json!({"steps": [
        {"id": "c", "kind": "call", "capability": "crm.get_customer", "with": {"id": "$.input.id"}},
        {"id": "b", "kind": "branch", "when": {"op": "eq", "left": "$.steps.c.output.tier", "right": "gold"},
         "then": [{"id": "t", "kind": "set", "value": "vip"}], "else": [{"id": "e", "kind": "set", "value": "std"}]},
        {"id": "s", "kind": "set", "value": ["$.steps.t.output", "$.steps.e.output", "$.steps.b.output"]}
    ]}));
    assert_eq!(problems, vec![]);
}

#[test]
fn branch_arms_are_transparent_but_not_to_each_other() {
    let problems = check(json!({"steps": [
        {"id": "b", "kind": "branch", "when": {"exists": "$.input.x"},
         "then": [{"id": "t", "kind": "set", "value": 1}, {"id": "t2", "kind": "set", "value": "$.steps.t.output"}],
         "else": [{"id": "e", "kind": "set", "value": "$.steps.t.output"}]},
        {"id": "after", "kind": "set", "value": "$.steps.t2.output"}
    ]}));
    assert_eq!(
        kinds(&problems),
        vec![&Kind::NotRunYet {
            step: "e".into(),
            other: "t".into()
        }]
    );
}

#[test]
fn loop_bodies_are_closed() {
    let problems = check(json!({"steps": [
        {"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x", "do": [
            echo("in", json!("$.vars.x")),
            {"id": "in2", "kind": "set", "value": ["$.steps.in.output", "$.item", "$.steps.l.output"]}
        ]},
        {"id": "after", "kind": "set", "value": ["$.steps.in.output", "$.steps.l.output", "$.item", "$.vars.x"]}
    ]}));
    assert_eq!(
        kinds(&problems),
        vec![
            &Kind::NotRunYet {
                step: "in2".into(),
                other: "l".into()
            },
            &Kind::OnlyInLoop {
                step: "after".into(),
                other: "in".into(),
                loop_id: "l".into()
            },
            &Kind::LoopValueOutsideLoop {
                step: "after".into(),
                expr: "$.item".into()
            },
            &Kind::LoopValueOutsideLoop {
                step: "after".into(),
                expr: "$.vars.x".into()
            },
        ]
    );
}

#[test]
fn structural_shapes_carry_legacy_locations() {
    let problems = check(json!({"steps": [
        {"kind": "set", "value": 1},
        {"id": "a", "kind": "set", "value": 1},
        {"id": "a", "kind": "set"},
        {"id": "k", "kind": "loop"},
        {"id": "b", "kind": "branch", "then": []},
        {"id": "f", "kind": "for_each", "items": "$.input.xs"},
    ]}));
    let rendered: Vec<(String, Option<String>)> = problems
        .iter()
        .map(|p| {
            (
                format!("{:?}", p.kind),
                p.at.as_ref().map(|w| w.to_string()),
            )
        })
        .collect();
    assert_eq!(rendered[0].1.as_deref(), Some("steps[0]"));
    assert_eq!(problems[0].kind, Kind::MissingId { position: 1 });
    assert_eq!(problems[1].kind, Kind::DuplicateId { id: "a".into() });
    assert_eq!(rendered[1].1.as_deref(), Some("steps[2].id"));
    assert_eq!(problems[2].kind, Kind::SetShape { step: "a".into() });
    assert_eq!(
        problems[3].kind,
        Kind::UnsupportedStep {
            kind: "loop".into()
        }
    );
    assert_eq!(rendered[3].1.as_deref(), Some("steps[3].kind"));
    assert_eq!(problems[4].kind, Kind::BranchShape { step: "b".into() });
    assert_eq!(problems[5].kind, Kind::ForEachShape { step: "f".into() });
    assert_eq!(problems.len(), 6);
}

#[test]
fn capability_checks() {
    let problems = check_with(
        "public",
        json!({"output": {"x": "$.steps.a.output"}, "steps": [
            {"id": "a", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_1", "tier": "gold"}},
            {"id": "b", "kind": "call", "capability": "crm.delete_customr", "with": {}},
            {"id": "c", "kind": "call", "capability": "util.sleep", "with": {"ms": "soon", "extra": 1}},
        ]}),
        None,
    );
    assert_eq!(
        problems[0].kind,
        Kind::NotEnabled {
            name: "crm.set_tier".into(),
            tenant: "public".into()
        }
    );
    assert_eq!(
        problems[1].kind,
        Kind::UnknownCapability {
            name: "crm.delete_customr".into(),
            suggestion: Some("crm.delete_customer".into())
        }
    );
    assert_eq!(
        problems[2].kind,
        Kind::TypeMismatch {
            param: "ms".into(),
            capability: "util.sleep".into(),
            expected: "integer".into(),
            got: "string".into()
        }
    );
    assert_eq!(
        problems[2].at.as_ref().map(|w| w.to_string()).as_deref(),
        Some("steps[2].with.ms")
    );
    assert_eq!(
        problems[3].kind,
        Kind::UnexpectedParam {
            param: "extra".into(),
            capability: "util.sleep".into()
        }
    );
    assert_eq!(problems[4].kind, Kind::UnusedOutput { step: "c".into() });
    assert_eq!(problems[4].level(), Level::Warn);
    assert_eq!(problems.len(), 5);
}

#[test]
fn unused_output_is_any_read_call_no_expression_names() {
    // The documented rule, literally: the last step is still "unused" without a
    // mapping, and so is a loop body's last call even when the loop output is used.
    let problems = check(json!({"output": {"all": "$.steps.l.output"}, "steps": [
        {"id": "l", "kind": "for_each", "items": ["cus_1"], "as": "c", "do": [
            {"id": "g", "kind": "call", "capability": "crm.get_customer", "with": {"id": "$.item"}}
        ]},
        {"id": "w", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_1", "tier": "gold"}},
        {"id": "f", "kind": "call", "capability": "crm.find_customer", "with": {"query": "a"}}
    ]}));
    assert_eq!(
        kinds(&problems),
        vec![
            &Kind::UnusedOutput { step: "g".into() },
            &Kind::UnusedOutput { step: "f".into() }
        ]
    );
    let problems = check(json!({"steps": [
        {"id": "g", "kind": "call", "capability": "crm.get_customer", "with": {"id": "cus_1"}},
        {"id": "s", "kind": "set", "value": "$.steps.g.output.name"}
    ]}));
    assert_eq!(problems, vec![]);
}

#[test]
fn context_input_and_limits() {
    let wf = json!({"input": {"type": "object", "properties": {"id": {"type": "string"}}},
        "steps": [{"id": "s", "kind": "set", "value": ["$.context.user", "$.input.nope", "$.input.id"]}]});
    let problems = check(wf.clone());
    assert_eq!(
        problems[0].kind,
        Kind::ContextMissing {
            step: "s".into(),
            key: "user".into()
        }
    );
    assert_eq!(
        problems[1].kind,
        Kind::UndeclaredInput {
            field: "nope".into()
        }
    );
    assert_eq!(
        problems[1].at.as_ref().map(|w| w.to_string()).as_deref(),
        Some("steps[0].value[1]")
    );
    let with_context = check_with("acme", wf, Some(json!({"user": "u1"})));
    assert_eq!(
        kinds(&with_context),
        vec![&Kind::UndeclaredInput {
            field: "nope".into()
        }]
    );

    let many: Vec<Value> = (0..201)
        .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": i}))
        .collect();
    assert_eq!(
        kinds(&check(json!({ "steps": many }))),
        vec![&Kind::StepBudget {
            count: 201,
            limit: 200
        }]
    );
    assert_eq!(kinds(&check(json!({"steps": {}}))), vec![&Kind::NoSteps]);
}
