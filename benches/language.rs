//! Micro benchmarks of the `workflow/v1` program model on a 200-step
//! workflow: the step walk, plan derivation (what validate adds to a valid
//! verdict), and the mapping of the engine's event log to a Pilotage trace
//! (what execute does with every run's events).
//!
//! The workflow is 20 blocks of 10 steps: a call; a branch with a call and a
//! `set` on `then` and a `set` on `else`; a `for_each` whose body has two
//! calls and a `set`; a final `set`. The event log is the one the legacy
//! engine writes for it when every `find` matches three customers and every
//! branch takes `then`: 380 events, 300 trace steps.

use criterion::{Criterion, criterion_group, criterion_main};
use pilotage_gateway::engines::profile::EngineProfile;
use pilotage_gateway::languages::RunEnd;
use pilotage_gateway::languages::workflow_v1::trace::map_events;
use pilotage_gateway::languages::workflow_v1::{plan, program};
use pilotage_gateway::pilotage::RiskHints;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hint::black_box;

const BLOCKS: usize = 20;
const ITEMS: u64 = 3;

fn workflow() -> Value {
    let mut steps = Vec::new();
    for i in 0..BLOCKS {
        steps.push(
            json!({"id": format!("find_{i}"), "kind": "call", "capability": "crm.find_customer",
                          "with": {"query": "$.input.query"}}),
        );
        steps.push(json!({"id": format!("any_{i}"), "kind": "branch",
            "when": {"op": "ge", "left": format!("$.steps.find_{i}.output.count"), "right": 1},
            "then": [
                {"id": format!("first_{i}"), "kind": "call", "capability": "crm.get_customer",
                 "with": {"id": format!("$.steps.find_{i}.output.matches.0.id")}},
                {"id": format!("first_row_{i}"), "kind": "set",
                 "value": {"name": format!("$.steps.first_{i}.output.name")}}
            ],
            "else": [{"id": format!("none_{i}"), "kind": "set", "value": "no match"}]}));
        steps.push(json!({"id": format!("each_{i}"), "kind": "for_each",
            "items": format!("$.steps.find_{i}.output.matches"), "as": "customer",
            "do": [
                {"id": format!("invoices_{i}"), "kind": "call", "capability": "billing.list_invoices",
                 "with": {"customer_id": "$.item.id"}},
                {"id": format!("row_{i}"), "kind": "set",
                 "value": {"customer": "$.item.name", "invoices": format!("$.steps.invoices_{i}.output.count")}},
                {"id": format!("echo_{i}"), "kind": "call", "capability": "util.echo",
                 "with": {"value": format!("$.steps.row_{i}.output")}}
            ]}));
        steps.push(json!({"id": format!("done_{i}"), "kind": "set",
                          "value": {"block": i, "rows": format!("$.steps.each_{i}.output")}}));
    }
    json!({"name": "two_hundred_steps", "input": {"type": "object"}, "steps": steps})
}

fn customer(k: u64) -> Value {
    json!({"id": format!("cus_{k}"), "name": format!("Customer {k}"), "tier": "gold"})
}

/// The legacy engine's event log for `workflow()` (dialect a).
fn events() -> Vec<Value> {
    let mut ev = Vec::new();
    for i in 0..BLOCKS {
        let matches: Vec<Value> = (1..=ITEMS).map(customer).collect();
        ev.push(
            json!({"type": "call", "step": format!("find_{i}"), "capability": "crm.find_customer",
            "args": {"query": ""}, "result": {"count": ITEMS, "matches": matches},
            "status": "ok", "error": null, "ms": 0, "iter": []}),
        );
        ev.push(json!({"type": "branch", "step": format!("any_{i}"), "arm": "then",
            "cond": format!("$.steps.find_{i}.output.count ge 1"), "value": true, "ms": 0, "iter": []}));
        ev.push(json!({"type": "call", "step": format!("first_{i}"), "capability": "crm.get_customer",
            "args": {"id": "cus_1"}, "result": customer(1), "status": "ok", "error": null, "ms": 0, "iter": []}));
        ev.push(
            json!({"type": "set", "step": format!("first_row_{i}"), "value": {"name": "Customer 1"},
            "ms": 0, "iter": []}),
        );
        ev.push(
            json!({"type": "loop_enter", "step": format!("each_{i}"), "count": ITEMS, "iter": []}),
        );
        for k in 1..=ITEMS {
            ev.push(
                json!({"type": "loop_next", "step": format!("each_{i}"), "index": k,
                "item": customer(k), "iter": []}),
            );
            ev.push(json!({"type": "call", "step": format!("invoices_{i}"), "capability": "billing.list_invoices",
                "args": {"customer_id": format!("cus_{k}")}, "result": {"count": 0, "invoices": []},
                "status": "ok", "error": null, "ms": 0, "iter": [k]}));
            let row = json!({"customer": format!("Customer {k}"), "invoices": 0});
            ev.push(json!({"type": "set", "step": format!("row_{i}"), "value": row, "ms": 0, "iter": [k]}));
            ev.push(
                json!({"type": "call", "step": format!("echo_{i}"), "capability": "util.echo",
                "args": {"value": row}, "result": {"value": row}, "status": "ok", "error": null,
                "ms": 0, "iter": [k]}),
            );
        }
        ev.push(
            json!({"type": "loop_exit", "step": format!("each_{i}"), "iterations": ITEMS,
            "reason": "items exhausted", "ms": 1, "iter": []}),
        );
        ev.push(json!({"type": "set", "step": format!("done_{i}"), "value": {"block": i}, "ms": 0, "iter": []}));
    }
    ev
}

fn bench(c: &mut Criterion) {
    let program = workflow();
    let steps = program::steps(&program);
    assert_eq!(steps.len(), 200);
    let events = events();
    let risks: HashMap<&str, RiskHints> = [
        "crm.find_customer",
        "crm.get_customer",
        "billing.list_invoices",
        "util.echo",
    ]
    .into_iter()
    .map(|name| (name, RiskHints::SAFE))
    .collect();
    let risk_of = |cap: &str| risks.get(cap).map(|h| (h.level().to_string(), *h));
    let mapping = EngineProfile::default();
    let trace = map_events(&events, &mapping, &steps, RunEnd::Completed);
    assert_eq!(trace.len(), 300);

    let mut group = c.benchmark_group("language_200_steps");
    group.bench_function("steps_walk", |b| {
        b.iter(|| black_box(program::steps(&program)));
    });
    group.bench_function("plan_derive", |b| {
        b.iter(|| black_box(plan::derive(&steps, risk_of)));
    });
    group.bench_function("walk_and_plan", |b| {
        b.iter(|| black_box(plan::derive(&program::steps(&program), risk_of)));
    });
    group.bench_function("events_to_trace", |b| {
        b.iter(|| black_box(map_events(&events, &mapping, &steps, RunEnd::Completed)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
