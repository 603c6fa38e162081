//! `mistral/v2` against the real OpenStack Mistral: the language-loop
//! suite and the engine-run tests, from this language's tables (here and in
//! `engine_runs`); and what only this language checks: `runs` (both
//! languages on one gateway each on its own engine, actions the
//! configuration hides) and `completeness` (run and step statuses).

mod completeness;
mod engine_runs;
mod runs;

use crate::common::answers::codes;
use crate::common::mistral::{MistralEnv, greet_program};
use crate::suite::LoopLanguage;
use serde_json::{Value, json};

pub struct MistralV2 {
    m: MistralEnv,
}

/// A one-workflow document with these tasks (already indented by 4).
fn doc(tasks: &str) -> String {
    format!("version: '2.0'\nwf:\n  input:\n    - name: x\n  tasks:\n{tasks}")
}

fn noop(name: &str) -> String {
    format!("    {name}:\n      action: std.noop\n")
}

/// (code, rejected program, accepted program) for every code validate gives.
fn cases() -> Vec<(&'static str, String, String)> {
    let echo = |arg: &str| doc(&format!("    t1:\n      action: std.echo {arg}\n"));
    vec![
        (
            "yaml_syntax",
            doc("    t1:\n      action: std.noop\n      publish: [unclosed\n"),
            doc(&noop("t1")),
        ),
        (
            "invalid_structure",
            doc(&noop("t1")).replace("version: '2.0'\n", ""),
            doc(&noop("t1")),
        ),
        (
            "unknown_property",
            doc("    t1:\n      action: std.noop\n      retries: 3\n"),
            doc(
                "    t1:\n      action: std.noop\n      retry:\n        count: 3\n        delay: 0\n",
            ),
        ),
        (
            "type_mismatch",
            doc("    t1:\n      action: std.noop\n      publish: [a]\n"),
            doc("    t1:\n      action: std.noop\n      publish:\n        a: 1\n"),
        ),
        (
            "invalid_value",
            doc(
                "    t0:\n      action: std.noop\n      on-success: [t1]\n    t1:\n      action: std.noop\n      join: some\n",
            ),
            doc(
                "    t0:\n      action: std.noop\n      on-success: [t1]\n    t1:\n      action: std.noop\n      join: all\n",
            ),
        ),
        (
            "conflicting_properties",
            doc("    t1:\n      action: std.noop\n      workflow: other\n"),
            doc(&noop("t1")),
        ),
        (
            "unknown_task",
            doc("    t1:\n      action: std.noop\n      on-success: [t9]\n"),
            doc(&format!(
                "    t1:\n      action: std.noop\n      on-success: [t2]\n{}",
                noop("t2")
            )),
        ),
        (
            "malformed_expression",
            echo("output=<% $.name + %>"),
            echo("output=<% $.name + 'y' %>"),
        ),
        (
            "unknown_capability",
            echo("output=1").replace("std.echo", "std.ecko"),
            echo("output=1"),
        ),
        ("missing_input", echo(""), echo("output=1")),
        (
            "unexpected_input",
            echo("output=1 colour='red'"),
            echo("output=1"),
        ),
        (
            "dropped_parameter",
            echo("output=red"),
            echo("output='red'"),
        ),
        (
            "duplicate_task",
            doc(&format!("{}{}", noop("t1"), noop("t1"))),
            doc(&format!("{}{}", noop("t1"), noop("t2"))),
        ),
        ("reserved_character", doc(&noop("t#1")), doc(&noop("t_1"))),
        (
            "reserved_id",
            doc(&format!(
                "    t1:\n      action: std.noop\n      on-success: [t1.next]\n{}",
                noop("t1.next")
            )),
            doc(&format!(
                "    t1:\n      action: std.noop\n      on-success: [t1_next]\n{}",
                noop("t1_next")
            )),
        ),
        (
            "undefined_variable",
            echo("output=<% $.nothing %>"),
            echo("output=<% $.name %>"),
        ),
        (
            "constraint",
            doc(
                "    a:\n      action: std.noop\n      on-success: [b]\n    b:\n      action: std.noop\n      on-success: [a]\n",
            ),
            doc(
                "    a:\n      action: std.noop\n      on-success: [b]\n    b:\n      action: std.noop\n",
            ),
        ),
    ]
}

impl LoopLanguage for MistralV2 {
    crate::engine_loop_language!();

    const GUIDES: &'static str = "guides/mistral-v2";
    const MIN_EXAMPLES: usize = 4;
    const CORE_GUIDE_MARKS: [&'static str; 2] = ["with-items", "publish"];
    const LOOKUP: (&'static str, &'static str, &'static str) = ("echo", "std.echo", "safe");
    const PLAN_RISK: &'static str = "safe";

    fn check_entry(&self, entry: &Value) {
        assert_eq!(
            entry["entry"]["input_schema"]["required"],
            json!(["output"]),
            "{entry}"
        );
    }

    fn mistaken_program(&self) -> Value {
        json!(greet_program().replace("std.echo output=", "std.echo outptu="))
    }

    fn check_mistake(&self, answer: &Value) {
        assert!(
            codes(answer).contains(&"unexpected_input".to_string()),
            "{answer}"
        );
        let path = &answer["diagnostics"][0]["path"];
        assert!(
            path["start"]["line"].as_u64().is_some() && path["end"]["column"].as_u64().is_some(),
            "a text range: {path}"
        );
    }

    fn program(&self) -> Value {
        json!(greet_program())
    }

    fn run_extra(&self) -> Value {
        json!({"input": {"name": "ada"}})
    }

    async fn engine_mark(&self) -> Value {
        json!(self.m.mistral.executions(&self.m.a.tenant).await.len())
    }

    fn check_ran(&self, before: &Value, after: &Value, answer: &Value) {
        assert_eq!(answer["output"], json!({"greeting": "hello ada"}));
        let steps = answer["trace"]["steps"].as_array().unwrap();
        assert_eq!(steps[0]["id"], "hello", "{steps:?}");
        assert_eq!(steps[0]["calls"], "std.echo");
        assert_eq!(
            steps[0]["output"],
            json!({"result": "hello ada"}),
            "{steps:?}"
        );
        assert_eq!(
            after.as_u64(),
            before.as_u64().map(|n| n + 1),
            "one execution in the caller's Mistral project"
        );
    }

    fn check_example_program(&self, name: &str, program: &Value) {
        assert!(program.is_string(), "{name} is YAML text");
    }

    fn program_cases(&self) -> Vec<(&'static str, Value, Value)> {
        cases()
            .into_iter()
            .map(|(code, rejected, accepted)| (code, json!(rejected), json!(accepted)))
            .collect()
    }

    fn input_binding(&self) -> (Value, Value, Value) {
        (
            json!(greet_program()),
            json!({"nom": "x"}),
            json!({"name": "x"}),
        )
    }

    fn ceiling(&self) -> (Value, Value) {
        let http = doc("    t1:\n      action: std.http url='https://example.org'\n");
        (json!(http), json!(greet_program()))
    }

    async fn finish(&self) {
        self.m.clean().await;
    }
}

crate::language_loop_tests!(MistralV2);
crate::engine_run_tests!(MistralV2);
