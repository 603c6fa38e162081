//! Unit tests of the native checks, each on a small document.

use super::super::workflow::{Workflow, read};
use super::*;
use serde_json::json;

fn wf(text: &str) -> Workflow {
    read(text).unwrap().workflows.remove(0)
}

fn codes_at(d: &[Diagnostic]) -> Vec<(String, String)> {
    d.iter().map(|d| (d.code.clone(), d.path.clone())).collect()
}

#[test]
fn reserved_characters_and_duplicate_tasks() {
    let w = wf(
        "version: '2.0'\nwf:\n  tasks:\n    a#1:\n      action: std.noop\n    b:\n      action: std.noop\n    b:\n      action: std.noop\n",
    );
    assert_eq!(
        codes_at(&reserved_names(&w)),
        [("reserved_character".to_string(), "@4:5-4:7".to_string())]
    );
    let d = duplicate_tasks(&w);
    assert_eq!(
        codes_at(&d),
        [("duplicate_task".to_string(), "@6:5-6:5".to_string())]
    );
    assert!(d[0].message.contains("(line 8)"), "{}", d[0].message);
}

#[test]
fn a_task_named_like_a_generated_id() {
    let w = wf(
        "version: '2.0'\nwf:\n  tasks:\n    a:\n      on-success: [a.next]\n    a.next:\n      with-items: i in [1]\n    a.next.items: {}\n    b.next: {}\n",
    );
    assert_eq!(
        codes_at(&generated_id_clashes(&w)),
        [
            ("reserved_id".to_string(), "@6:5-6:10".to_string()),
            ("reserved_id".to_string(), "@8:5-8:16".to_string()),
        ]
    );
}

#[test]
fn transitions_to_unknown_tasks_with_a_close_match() {
    let w = wf(
        "version: '2.0'\nwf:\n  tasks:\n    first:\n      action: std.noop\n      on-success:\n        - secnd: <% true %>\n        - fail\n      on-error: second\n    second:\n      action: std.noop\n",
    );
    let d = unknown_tasks(&w);
    assert_eq!(
        codes_at(&d),
        [("unknown_task".to_string(), "@7:11-7:15".to_string())]
    );
    assert_eq!(d[0].hint.as_deref(), Some("close match: second"));
}

#[test]
fn unquoted_inline_strings_are_dropped_by_mistral() {
    let w = wf(
        "version: '2.0'\nwf:\n  tasks:\n    t:\n      action: std.echo output=red delay=1 x='y'\n",
    );
    let d = dropped_parameters(&w);
    assert_eq!(
        codes_at(&d),
        [("dropped_parameter".to_string(), "@5:24-5:33".to_string())]
    );
    assert_eq!(d[0].hint.as_deref(), Some("quote the value: output='red'"));
}

#[test]
fn missing_and_unexpected_inputs_of_visible_actions_only() {
    let w = wf(
        "version: '2.0'\nwf:\n  tasks:\n    h:\n      action: std.http methd='GET'\n    e:\n      action: std.echo\n      input:\n        output: 1\n        colour: red\n    x:\n      action: std.echo\n      input: <% $.anything %>\n    hidden:\n      action: secret.thing\n",
    );
    let schema = |name: &str| match name {
        "std.http" => Some(
            json!({"type": "object", "properties": {"url": {}, "method": {"default": "GET"}}, "required": ["url"], "additionalProperties": false}),
        ),
        "std.echo" => Some(
            json!({"type": "object", "properties": {"output": {}, "delay": {"default": 0}}, "required": ["output"]}),
        ),
        _ => None,
    };
    let d = action_inputs(&w, &schema);
    assert_eq!(
        codes_at(&d),
        [
            ("missing_input".to_string(), "@5:15-5:22".to_string()),
            ("unexpected_input".to_string(), "@5:24-5:34".to_string()),
            ("unexpected_input".to_string(), "@10:9-10:14".to_string()),
        ]
    );
    assert_eq!(d[1].hint.as_deref(), Some("close match: method"));
    assert!(d[0].message.contains("'url'"));
}

#[test]
fn undefined_variables_only_where_certain() {
    let w = wf(
        "version: '2.0'\nwf:\n  input: [name]\n  vars:\n    v: 1\n  output:\n    r: <% $.late %>\n    bad: <% $.never %>\n  tasks:\n    a:\n      action: std.echo output=<% $.name %>\n      publish:\n        x: 1\n      on-success: [b, c]\n    b:\n      action: std.echo output=<% $.x %>\n      publish:\n        late: 2\n    c:\n      action: std.echo output=<% $.late %>\n    d:\n      with-items: i in <% [1] %>\n      action: std.echo output=<% $.i + $.v %>\n      publish:\n        own: <% $.own2 %>\n",
    );
    let d = undefined_variables(&w);
    let found: Vec<_> = d
        .iter()
        .map(|d| (d.path.as_str(), d.message.split('\'').nth(3).unwrap_or("")))
        .collect();
    // c runs beside b, not after it; own2 is published nowhere; the
    // output sees every publish but not 'never'.
    assert_eq!(
        found,
        [
            ("@20:15-20:42", "late"),
            ("@25:14-25:25", "own2"),
            ("@8:10-8:22", "never"),
        ]
    );
}

#[test]
fn aliases_merge_keys_and_unreadable_text_are_refused() {
    let doc = read("version: '2.0'\nwf:\n  tasks:\n    t:\n      <<: {action: std.ssh}\n").unwrap();
    assert_eq!(
        codes_at(&structure(&doc)),
        [("invalid_structure".to_string(), "@5:7-5:8".to_string())]
    );
    let d = unreadable("version: '2.0'\nwf: [\n").unwrap();
    assert_eq!(d.code, "invalid_structure");
    assert!(TextRange::decode(&d.path).is_some());
    assert!(unreadable("version: '2.0'\n").is_none());
}

#[test]
fn one_direct_workflow_per_program() {
    let doc = read("version: '2.0'\none:\n  type: reverse\n  tasks: {a: {action: std.noop}}\ntwo:\n  tasks: {b: {action: std.noop}}\n").unwrap();
    assert_eq!(
        codes_at(&structure(&doc)),
        [
            ("invalid_structure".to_string(), "@5:1-5:3".to_string()),
            ("invalid_structure".to_string(), "@3:9-3:15".to_string()),
        ]
    );
}
