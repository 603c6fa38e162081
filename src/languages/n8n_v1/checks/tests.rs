//! The checks on small workflows written for the case at hand: what each
//! reports, and the look-alikes it must leave alone.

use super::all;
use crate::catalog::CatalogView;
use crate::classify::{Diagnostic, Severity};
use serde_json::{Value, json};

pub(super) fn node(name: &str, kind: &str) -> Value {
    json!({"name": name, "type": kind, "typeVersion": 1, "position": [0, 0], "parameters": {}})
}

pub(super) fn with(mut n: Value, parameters: Value) -> Value {
    n["parameters"] = parameters;
    n
}

pub(super) fn to(target: &str) -> Value {
    json!({"node": target, "type": "main", "index": 0})
}

pub(super) fn workflow(nodes: Vec<Value>, connections: Value) -> Value {
    json!({"name": "t", "nodes": nodes, "connections": connections})
}

fn errors(program: &Value) -> Vec<Diagnostic> {
    all(program, &CatalogView::from_capabilities(Vec::new()))
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect()
}

/// Each finding's code and place, in order.
fn code_paths(found: &[Diagnostic]) -> Vec<(&str, &str)> {
    found
        .iter()
        .map(|d| (d.code.as_str(), d.path.as_str()))
        .collect()
}

fn codes_at(program: &Value) -> Vec<(String, String)> {
    errors(program)
        .into_iter()
        .map(|d| (d.code, d.path))
        .collect()
}

pub(super) const START: &str = "n8n-nodes-base.manualTrigger";
pub(super) const SET: &str = "n8n-nodes-base.set";
pub(super) const IF: &str = "n8n-nodes-base.if";
pub(super) const NOOP: &str = "n8n-nodes-base.noOp";

#[test]
fn a_cycle_an_if_arm_leads_out_of_may_end() {
    let program = workflow(
        vec![
            node("Start", START),
            node("Try", SET),
            node("Done?", IF),
            node("End", NOOP),
        ],
        json!({"Start": {"main": [[to("Try")]]}, "Try": {"main": [[to("Done?")]]},
               "Done?": {"main": [[to("End")], [to("Try")]]}}),
    );
    assert_eq!(codes_at(&program), []);
    // A Set sending its items both out and back never ends.
    let program = workflow(
        vec![node("Start", START), node("Try", SET), node("End", NOOP)],
        json!({"Start": {"main": [[to("Try")]]}, "Try": {"main": [[to("End"), to("Try")]]}}),
    );
    assert_eq!(
        codes_at(&program),
        [(
            "invalid_structure".into(),
            "/connections/Try/main/0/1".into()
        )]
    );
}

#[test]
fn references_to_parallel_nodes_ancestors_and_loop_bodies_are_fine() {
    let program = workflow(
        vec![
            node("Start", START),
            node("A", SET),
            with(
                node("B", SET),
                json!({"v": "={{ $('A').first().json.x + $node[\"Start\"].json.y }}"}),
            ),
            with(node("C", NOOP), json!({"v": "={{ $('C').item }}"})),
        ],
        json!({"Start": {"main": [[to("A"), to("B")]]}, "B": {"main": [[to("C")]]}}),
    );
    assert_eq!(codes_at(&program), []);
}

#[test]
fn a_join_after_both_arms_may_read_either() {
    let program = workflow(
        vec![
            node("Start", START),
            node("If", IF),
            node("Yes", SET),
            node("No", SET),
            with(
                node("Join", NOOP),
                json!({"v": "={{ $('Yes').isExecuted ? 1 : $('No').item }}"}),
            ),
        ],
        json!({"Start": {"main": [[to("If")]]}, "If": {"main": [[to("Yes")], [to("No")]]},
               "Yes": {"main": [[to("Join")]]}, "No": {"main": [[to("Join")]]}}),
    );
    assert_eq!(codes_at(&program), []);
}

#[test]
fn an_error_output_a_fallback_output_and_ai_connections_exist() {
    let mut fetch = node("Fetch", "n8n-nodes-base.httpRequest");
    fetch["onError"] = json!("continueErrorOutput");
    let switch = with(
        node("Route", "n8n-nodes-base.switch"),
        json!({"rules": {"values": [{"outputKey": "a"}]}, "options": {"fallbackOutput": "extra"}}),
    );
    let mut route = switch;
    route["typeVersion"] = json!(3.2);
    let program = workflow(
        vec![
            node("Start", START),
            fetch,
            route,
            node("Bad", NOOP),
            node("Other", NOOP),
            node("Model", "@n8n/n8n-nodes-langchain.lmChatOpenAi"),
        ],
        json!({"Start": {"main": [[to("Fetch")]]},
               "Fetch": {"main": [[to("Route")], [to("Bad")]]},
               "Route": {"main": [[], [to("Other")]]},
               "Model": {"ai_languageModel": [[{"node": "Route", "type": "ai_languageModel", "index": 0}]]}}),
    );
    assert_eq!(codes_at(&program), []);
    // Without the error output, Fetch's output 1 sends nothing, when the
    // catalog says Fetch has one output.
    let mut program = program;
    program["nodes"][1]
        .as_object_mut()
        .map(|n| n.remove("onError"));
    let view = CatalogView::from_capabilities(vec![json!({"id": "n8n-nodes-base.httpRequest",
        "n8n": {"outputs": 1, "inputs": 1}})]);
    let found: Vec<_> = all(&program, &view)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.path)
        .collect();
    assert_eq!(found, ["/connections/Fetch/main/1"]);
}

#[test]
fn merge_inputs_follow_number_inputs() {
    let mut merge = with(
        node("Merge", "n8n-nodes-base.merge"),
        json!({"numberInputs": 3}),
    );
    merge["typeVersion"] = json!(3.2);
    let program = workflow(
        vec![node("Start", START), merge],
        json!({"Start": {"main": [[{"node": "Merge", "type": "main", "index": 2}, {"node": "Merge", "type": "main", "index": 3}]]}}),
    );
    assert_eq!(
        codes_at(&program),
        [(
            "invalid_structure".into(),
            "/connections/Start/main/0/1/index".into()
        )]
    );
}

#[test]
fn code_in_python_and_literal_text_are_not_javascript() {
    let program = workflow(
        vec![
            node("Start", START),
            with(
                node("Py", "n8n-nodes-base.code"),
                json!({"language": "python", "jsCode": "", "pythonCode": "return [x for x in"}),
            ),
            with(
                node("Text", SET),
                json!({"v": "{{ not an expression", "w": "={{ {a: {b: 1}} }}"}),
            ),
        ],
        json!({"Start": {"main": [[to("Py")]]}, "Py": {"main": [[to("Text")]]}}),
    );
    assert_eq!(codes_at(&program), []);
}

#[test]
fn names_with_a_slash_are_refused_and_escaped_in_pointers() {
    let program = workflow(
        vec![node("Start", START), node("A/B", NOOP)],
        json!({"Start": {"main": [[to("A/B")]]}, "A/B": {"main": [[to("Gone")]]}}),
    );
    assert_eq!(
        codes_at(&program),
        [
            ("reserved_character".into(), "/nodes/1/name".into()),
            (
                "unknown_task".into(),
                "/connections/A~1B/main/0/0/node".into()
            )
        ]
    );
}

#[test]
fn a_hash_or_a_slash_in_a_name_is_reserved_and_the_hint_renames_it() {
    for (name, reserved, renamed) in [
        ("Fetch #2", '#', "Fetch 2"),
        ("Read/Write", '/', "Read Write"),
    ] {
        let program = workflow(
            vec![node("Start", START), node(name, NOOP)],
            json!({"Start": {"main": [[to(name)]]}}),
        );
        let found = errors(&program);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, "reserved_character");
        assert_eq!(found[0].path, "/nodes/1/name");
        assert!(
            found[0].message.contains(&format!("'{reserved}'")),
            "{found:?}"
        );
        assert_eq!(
            found[0].hint.as_deref(),
            Some(format!("rename it, for example '{renamed}'").as_str())
        );
    }
}

#[test]
fn a_trigger_from_the_catalog_and_odd_values_never_panic() {
    let view = CatalogView::from_capabilities(vec![
        json!({"id": "acme.onEvent", "n8n": {"trigger": true, "inputs": 0, "outputs": 1}}),
    ]);
    let program = workflow(
        vec![node("Listen", "acme.onEvent"), node("Then", NOOP)],
        json!({"Listen": {"main": [[to("Then")]]}, "Then": {"main": [[{"node": "Listen", "type": "main", "index": 0}]]}}),
    );
    let found: Vec<_> = all(&program, &view)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.code, d.path))
        .collect();
    // No trigger missing; the connection into the trigger has no input;
    // the cycle through it has no way out.
    assert!(
        found.contains(&(
            "invalid_structure".into(),
            "/connections/Then/main/0/0/index".into()
        )),
        "{found:?}"
    );
    assert!(!found.iter().any(|(_, p)| p == "/nodes"), "{found:?}");
    for odd in [
        json!({"nodes": [1, null, {"name": 3}], "connections": {"x": 1, "y": {"main": 2}, "z": {"main": [3, [4]]}}}),
        json!({"nodes": [{"name": "A", "type": "n8n-nodes-base.switch", "parameters": {"rules": "={{ 1 }}"}}], "connections": {"A": {"main": [[{"node": "A", "index": -1}]]}}}),
        json!({"nodes": [], "settings": {"executionOrder": 1}}),
    ] {
        let _ = all(&odd, &view);
    }
}

/// A catalog describing the Manual Trigger as n8n 2.41.1 serves it: one a
/// workflow.
fn single_manual_trigger() -> CatalogView {
    CatalogView::from_capabilities(vec![
        json!({"id": START, "n8n": {"trigger": true, "inputs": 0, "outputs": 1, "max_nodes": 1}}),
        json!({"id": SET, "n8n": {"trigger": false, "inputs": 1, "outputs": 1}}),
    ])
}

#[test]
fn nodes_past_their_types_max_nodes_are_refused_where_they_are() {
    let program = workflow(
        vec![
            node("Start", START),
            node("Set", SET),
            node("Start again", START),
            node("Third", START),
        ],
        json!({"Start": {"main": [[to("Set")]]}, "Start again": {"main": [[to("Set")]]},
               "Third": {"main": [[to("Set")]]}}),
    );
    let found: Vec<_> = all(&program, &single_manual_trigger())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let at = code_paths(&found);
    assert_eq!(
        at,
        [
            ("invalid_structure", "/nodes/2"),
            ("invalid_structure", "/nodes/3")
        ]
    );
    assert!(
        found[0].message.contains("maxNodes"),
        "{}",
        found[0].message
    );
    assert!(
        found[0]
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("'Start'"))
    );
    // A type whose entry sets no limit may repeat.
    let two_sets = workflow(
        vec![node("Start", START), node("A", SET), node("B", SET)],
        json!({"Start": {"main": [[to("A"), to("B")]]}}),
    );
    assert!(
        all(&two_sets, &single_manual_trigger())
            .iter()
            .all(|d| d.severity != Severity::Error)
    );
}

#[test]
fn a_workflow_whose_every_trigger_is_disabled_cannot_start() {
    let mut start = node("Start", START);
    start["disabled"] = json!(true);
    let program = workflow(
        vec![start.clone(), node("Set", SET)],
        json!({"Start": {"main": [[to("Set")]]}}),
    );
    assert_eq!(
        codes_at(&program),
        [("invalid_structure".into(), "/nodes/0/disabled".into())]
    );
    // One enabled trigger beside it is enough.
    let mut webhook = node("Hook", "n8n-nodes-base.webhook");
    webhook["parameters"] = json!({"path": "p"});
    let program = workflow(
        vec![start, webhook, node("Set", SET)],
        json!({"Start": {"main": [[to("Set")]]}, "Hook": {"main": [[to("Set")]]}}),
    );
    assert_eq!(codes_at(&program), []);
}

#[test]
fn a_dollar_variable_n8n_does_not_have_is_refused_at_its_parameter() {
    let program = workflow(
        vec![
            node("Start", START),
            with(
                node("Set", SET),
                json!({"a": "={{ $josn.name }} and {{ $foo }} and {{ $foo.bar }}",
                       "b": "={{ $json.list.map($x => $x.a) }} {{ $if($json.ok, 1, 2) }} {{ $now }} {{ $vars.v }}",
                       "c": "$foo is literal text here"}),
            ),
        ],
        json!({"Start": {"main": [[to("Set")]]}}),
    );
    let found = errors(&program);
    let at = code_paths(&found);
    // `$josn` and `$foo`, each once; nothing in `b` or `c`.
    assert_eq!(
        at,
        [
            ("unresolved_reference", "/nodes/1/parameters/a"),
            ("unresolved_reference", "/nodes/1/parameters/a")
        ]
    );
    assert!(found[0].message.contains("`$josn`"), "{}", found[0].message);
    assert_eq!(found[0].hint.as_deref(), Some("close match: $json"));
    assert!(found[1].message.contains("`$foo`"), "{}", found[1].message);
}

#[test]
fn a_method_no_value_has_is_refused_at_its_parameter() {
    let program = workflow(
        vec![
            node("Start", START),
            with(
                node("Set", SET),
                json!({"a": "={{ $json.a.noSuchFunction() }} {{ $json.b?.toUppercase() }} {{ $json.c.noSuchFunction?.() }}",
                       "b": "={{ $json.s.toUpperCase().trim() + $('Start').first().json.d.toDateTime().toFormat('x') }}",
                       "c": "={{ $input.all().map(i => i.json.n.toFixed(2)).isEmpty() + $now.minus({days: 1}).toISO() }}",
                       "d": "={{ 'x.noSuchFunction()' /* y.noSuchFunction() */ + ({ mine() { return 1 } }).mine() }}",
                       "e": ".noSuchFunction() is literal text here"}),
            ),
        ],
        json!({"Start": {"main": [[to("Set")]]}}),
    );
    let found = errors(&program);
    let at = code_paths(&found);
    // `noSuchFunction` once and `toUppercase`; nothing in `b` to `e`.
    assert_eq!(
        at,
        [
            ("unresolved_reference", "/nodes/1/parameters/a"),
            ("unresolved_reference", "/nodes/1/parameters/a")
        ]
    );
    assert!(
        found[0].message.contains("`.noSuchFunction()`"),
        "{}",
        found[0].message
    );
    assert!(found[1].message.contains("`.toUppercase()`"));
    assert!(
        found[1]
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("toUpperCase")),
        "{:?}",
        found[1].hint
    );
}

/// Webhook and Form Triggers as their descriptions say: they listen.
fn listening() -> CatalogView {
    CatalogView::from_capabilities(vec![
        json!({"id": "n8n-nodes-base.webhook", "n8n": {"trigger": true, "inputs": 0, "outputs": 1, "webhook": true}}),
        json!({"id": "n8n-nodes-base.formTrigger", "n8n": {"trigger": true, "inputs": 0, "outputs": 1, "webhook": true}}),
    ])
}

fn hook(name: &str, kind: &str, parameters: Value) -> Value {
    let mut n = node(name, kind);
    n["parameters"] = parameters;
    n
}

#[test]
fn webhooks_on_one_path_and_method_are_refused_at_the_second() {
    let errors = |nodes: Vec<Value>| -> Vec<String> {
        all(&workflow(nodes, json!({})), &listening())
            .into_iter()
            .filter(|d| d.severity == Severity::Error && d.message.contains("webhook path"))
            .map(|d| d.path)
            .collect()
    };
    let web = "n8n-nodes-base.webhook";
    let form = "n8n-nodes-base.formTrigger";
    assert_eq!(
        errors(vec![
            hook("A", web, json!({"path": "in", "httpMethod": "POST"})),
            hook("B", web, json!({"path": "/in", "httpMethod": "POST"})),
        ]),
        ["/nodes/1"]
    );
    assert!(
        errors(vec![
            hook("A", web, json!({"path": "in", "httpMethod": "POST"})),
            hook("B", web, json!({"path": "in", "httpMethod": "GET"})),
            hook(
                "C",
                web,
                json!({"path": "={{ 'in' }}", "httpMethod": "POST"})
            ),
        ])
        .is_empty()
    );
    // A form answers every method on its path.
    assert_eq!(
        errors(vec![
            hook("Ask", form, json!({"options": {"path": "ask"}})),
            hook("Hook", web, json!({"path": "ask", "httpMethod": "GET"})),
        ]),
        ["/nodes/1"]
    );
    // A disabled node listens on nothing.
    let mut off = hook("B", web, json!({"path": "in", "httpMethod": "POST"}));
    off["disabled"] = json!(true);
    assert!(
        errors(vec![
            hook("A", web, json!({"path": "in", "httpMethod": "POST"})),
            off
        ])
        .is_empty()
    );
}
