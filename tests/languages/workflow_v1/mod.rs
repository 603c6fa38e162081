//! `workflow/v1` against the bundled `legacy-engine`: the language-loop
//! suite, and what only this language checks (`completeness`).

mod completeness;

use crate::common::{LANG, Mcp, TestEnv, valid_program, write_program};
use crate::suite::LoopLanguage;
use serde_json::{Value, json};

pub struct WorkflowV1 {
    env: TestEnv,
}

pub fn step(id: &str, cap: &str, with: Value) -> Value {
    json!({"id": id, "kind": "call", "capability": cap, "with": with})
}

fn sets(n: usize) -> Value {
    let steps: Vec<Value> = (0..n)
        .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": i}))
        .collect();
    json!({"steps": steps})
}

/// Invoices the gold customers among those `find` returns.
fn invoice_gold_customers(amount_cents: Value) -> Value {
    json!({"name": "invoice gold customers", "steps": [
        {"id": "find", "kind": "call", "capability": "crm.find_customer", "with": {"query": "a"}},
        {"id": "each", "kind": "for_each", "items": "$.steps.find.output.matches", "as": "c", "do": [
            {"id": "gold", "kind": "branch", "when": {"op": "eq", "left": "$.item.tier", "right": "gold"},
             "then": [{"id": "bill", "kind": "call", "capability": "billing.create_invoice",
                       "with": {"customer_id": "$.item.id", "amount_cents": amount_cents}}]}]}
    ], "output": {"billed": "$.steps.each.output"}})
}

impl LoopLanguage for WorkflowV1 {
    const NAME: &'static str = LANG;
    const VALIDATE: &'static str = "validate_workflow";
    const EXECUTE: &'static str = "run_workflow";
    const TRACE: &'static str = "trace_workflow";
    const GUIDES: &'static str = "guides/workflow-v1";
    const MIN_EXAMPLES: usize = 1;
    const CORE_GUIDE_MARKS: [&'static str; 2] = ["for_each", "branch"];
    const LOOKUP: (&'static str, &'static str, &'static str) =
        ("invoice", "billing.create_invoice", "write");
    const PLAN_RISK: &'static str = "write";

    async fn start() -> Self {
        WorkflowV1 {
            env: TestEnv::start().await,
        }
    }

    fn caller(&self) -> Mcp {
        self.env.anonymous()
    }

    async fn capped_caller(&self) -> Mcp {
        // Capped at write by the default configuration.
        let mut writer = self.env.client("acme-writer-key");
        writer.initialize().await;
        writer
    }

    fn mistaken_program(&self) -> Value {
        invoice_gold_customers(json!("1000"))
    }

    fn check_mistake(&self, answer: &Value) {
        let d = &answer["diagnostics"][0];
        assert_eq!(d["code"], "type_mismatch", "{answer}");
        assert_eq!(d["path"], "/steps/1/do/0/then/0/with/amount_cents");
    }

    fn program(&self) -> Value {
        invoice_gold_customers(json!(1000))
    }

    async fn engine_mark(&self) -> Value {
        self.env.engine.state("acme").await
    }

    fn check_ran(&self, before: &Value, after: &Value, answer: &Value) {
        assert_ne!(after["digest"], before["digest"], "the invoice exists");
        let steps = answer["trace"]["steps"].as_array().unwrap();
        assert!(
            steps
                .iter()
                .any(|s| s["id"].as_str().unwrap().starts_with("bill#")),
            "{steps:?}"
        );
        assert!(
            steps
                .iter()
                .any(|s| s["id"].as_str().unwrap().starts_with("gold#")
                    && s["decisions"][0]["took"] == "then")
        );
    }

    /// (code, rejected program, accepted program) for every code validate emits.
    fn program_cases(&self) -> Vec<(&'static str, Value, Value)> {
        let echo = |v: Value| step("e", "util.echo", json!({"value": v}));
        let with_output =
            |steps: Value| json!({"steps": steps, "output": {"v": "$.steps.e.output"}});
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

    fn input_binding(&self) -> (Value, Value, Value) {
        (valid_program(), json!({"id": 1}), json!({"id": "cus_1"}))
    }

    fn ceiling(&self) -> (Value, Value) {
        let delete = json!({"steps": [step("d", "crm.delete_customer", json!({"id": "cus_2"}))]});
        (delete, write_program("gold"))
    }
}

crate::language_loop_tests!(WorkflowV1);
