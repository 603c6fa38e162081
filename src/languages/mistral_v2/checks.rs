//! Gateway-native checks for what Mistral's validator lets through
//! (docs/mistral.md, "Let through by the validator"): each of these passes
//! `POST /v2/workflows/validate` and fails, or silently changes the
//! program, only when the task is reached, after earlier tasks ran.
//!
//! Every finding is located at a range of the actual text. The checks only
//! report what is certain from the document and the caller's catalog;
//! whatever depends on run-time values is left alone.

use super::expressions::variable_reads;
use super::workflow::{Document, InputKeys, Task, Workflow};
use crate::catalog::CatalogView;
use crate::classify::{Diagnostic, Severity};
use crate::languages::steps::{StepInfo, diagnostics};
use crate::pilotage::text_range::TextRange;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Names every expression can read without a publish: the request context
/// Mistral adds to every execution.
const ALWAYS_DEFINED: [&str; 1] = ["openstack"];

fn error(code: &str, at: TextRange, message: String, hint: Option<String>) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        code: code.into(),
        path: at.encode(),
        message,
        hint,
    }
}

/// Every native finding on `doc`, in document order per check.
pub fn all(doc: &Document, catalog: &CatalogView) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    out.extend(structure(doc));
    let Some(wf) = doc.workflows.first() else {
        return out;
    };
    out.extend(reserved_names(wf));
    out.extend(generated_id_clashes(wf));
    out.extend(duplicate_tasks(wf));
    out.extend(unknown_tasks(wf));
    out.extend(dropped_parameters(wf));
    out.extend(action_inputs(wf, &|name| {
        visible_input_schema(catalog, name)
    }));
    out.extend(undefined_variables(wf));
    out
}

/// Text the gateway cannot read as YAML. Mistral reports its own YAML
/// errors with their positions; the gateway refuses such text as well,
/// because a document it cannot read is one whose actions it cannot check
/// (its parser and Mistral's could disagree).
pub fn unreadable(text: &str) -> Option<Diagnostic> {
    let failure = super::document::parse(text).err()?;
    Some(error(
        "invalid_structure",
        failure.at,
        format!(
            "the program is not a YAML document the gateway can read: {}",
            failure.message
        ),
        Some("fix the YAML syntax at this position".into()),
    ))
}

/// One direct workflow per program, written without YAML aliases or merge
/// keys.
pub fn structure(doc: &Document) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = doc
        .unsupported
        .iter()
        .map(|(what, at)| {
            error(
                "invalid_structure",
                *at,
                format!("the document uses {what}; mistral/v2 programs are written out in full"),
                Some("write the aliased or merged values out where they are used".into()),
            )
        })
        .collect();
    out.extend(doc
        .workflows
        .iter()
        .skip(1)
        .map(|extra| {
            error(
                "invalid_structure",
                extra.name_range,
                format!(
                    "the document defines a second workflow '{}'; a mistral/v2 program is exactly one workflow",
                    extra.name
                ),
                Some("send each workflow as a program of its own".into()),
            )
        }));
    if let Some(wf) = doc.workflows.first()
        && wf.kind != "direct"
    {
        out.push(error(
            "invalid_structure",
            wf.kind_range.unwrap_or(wf.name_range),
            format!(
                "workflow type '{}' is not served; only 'direct' workflows can be planned and traced",
                wf.kind
            ),
            Some("use type: direct (the default) with on-success/on-error/on-complete transitions".into()),
        ));
    }
    out
}

/// `#` and `/` are reserved for trace identity (Part II §3.4).
pub fn reserved_names(wf: &Workflow) -> Vec<Diagnostic> {
    wf.tasks
        .iter()
        .filter(|t| t.name.contains(['#', '/']))
        .map(|t| {
            error(
                "reserved_character",
                t.key_range,
                format!(
                    "task name '{}' contains a reserved character ('#' and '/' are reserved for trace identity)",
                    t.name
                ),
                Some(format!("rename the task, e.g. '{}'", t.name.replace(['#', '/'], "_"))),
            )
        })
        .collect()
}

/// A task named like a construct id the plan and trace generate for
/// another task (`T.next`, `T.items`): the two would be indistinguishable.
pub fn generated_id_clashes(wf: &Workflow) -> Vec<Diagnostic> {
    let mut generated: HashMap<String, &str> = HashMap::new();
    for t in &wf.tasks {
        if super::plan::task_transitions(wf, t).next().is_some() {
            generated.insert(super::plan::branch_id(&t.name), &t.name);
        }
        if t.with_items.is_some() {
            generated.insert(super::plan::loop_id(&t.name), &t.name);
        }
    }
    wf.tasks
        .iter()
        .filter_map(|t| {
            let owner = generated.get(&t.name)?;
            Some(error(
                "reserved_id",
                t.key_range,
                format!(
                    "task name '{}' is the id the plan and trace give to a construct of task '{owner}'",
                    t.name
                ),
                Some(format!("rename the task, e.g. '{}'", t.name.replace('.', "_"))),
            ))
        })
        .collect()
}

/// A task key defined twice: YAML keeps the last definition silently.
pub fn duplicate_tasks(wf: &Workflow) -> Vec<Diagnostic> {
    wf.duplicate_tasks
        .iter()
        .map(|(name, at)| {
            let later = wf.tasks.iter().find(|t| &t.name == name);
            error(
                "duplicate_task",
                *at,
                format!(
                    "task '{name}' is defined more than once; only the last definition{} would run",
                    later.map_or(String::new(), |t| format!(
                        " (line {})",
                        t.key_range.start.line
                    ))
                ),
                Some("give each task a name of its own".into()),
            )
        })
        .collect()
}

/// A transition to a name that is neither a task nor an engine command.
pub fn unknown_tasks(wf: &Workflow) -> Vec<Diagnostic> {
    let names: Vec<String> = wf.tasks.iter().map(|t| t.name.clone()).collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for task in &wf.tasks {
        for t in &task.transitions {
            if t.command || names.contains(&t.target) || !seen.insert(t.target_range.encode()) {
                continue;
            }
            let close = crate::classify::close_matches(&t.target, &names);
            out.push(error(
                "unknown_task",
                t.target_range,
                format!(
                    "{} of task '{}' names '{}', which is no task of workflow '{}'",
                    t.on.key(),
                    task.name,
                    t.target,
                    wf.name
                ),
                Some(if close.is_empty() {
                    "name a task of this workflow, or an engine command (fail, succeed, pause, noop)"
                        .into()
                } else {
                    format!("close match: {}", close.join(", "))
                }),
            ));
        }
    }
    out
}

/// An unquoted word as an inline parameter value: Mistral drops the
/// parameter without a word (`std.echo output=red` runs without `output`).
pub fn dropped_parameters(wf: &Workflow) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for task in &wf.tasks {
        let Some(action) = &task.action else { continue };
        for p in action.params.iter().filter(|p| !p.kept) {
            let digits: String = p.raw.chars().take_while(char::is_ascii_digit).collect();
            let (what, hint) = if digits.is_empty() {
                (
                    "is an unquoted string: Mistral would silently drop it".to_string(),
                    format!("quote the value: {}='{}'", p.name, p.raw),
                )
            } else {
                (
                    format!("is not plain digits: Mistral would read it as {digits}"),
                    format!("write it as an expression: {}=<% {} %>", p.name, p.raw),
                )
            };
            out.push(error(
                "dropped_parameter",
                p.range,
                format!(
                    "inline parameter '{}={}' of task '{}' {what}",
                    p.name, p.raw, task.name
                ),
                Some(hint),
            ));
        }
    }
    out
}

/// The `input_schema` of an action the caller can see. Invisible actions
/// are reported as unknown by the validate operation, identically to
/// nonexistent ones: nothing here may tell them apart.
fn visible_input_schema(catalog: &CatalogView, name: &str) -> Option<Value> {
    catalog.capability_risk(name)?;
    catalog.get(name)?.get("input_schema").cloned()
}

/// Missing required and unexpected inputs of a visible action, against its
/// catalog entry's `input_schema` (`schema_of` answers only for visible
/// actions). Tasks whose `input` is an expression are skipped: their keys
/// are only known at run time.
pub fn action_inputs(wf: &Workflow, schema_of: &dyn Fn(&str) -> Option<Value>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for task in &wf.tasks {
        let Some(action) = &task.action else { continue };
        let Some(schema) = schema_of(&action.name) else {
            continue;
        };
        let mut given: Vec<(&str, TextRange)> = action
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.range))
            .collect();
        match &task.input {
            Some(InputKeys::Unknown) => continue,
            Some(InputKeys::Keys(keys)) => {
                given.extend(keys.iter().map(|k| (k.value.as_str(), k.range)));
            }
            None => {}
        }
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let names: HashSet<&str> = given.iter().map(|(n, _)| *n).collect();
        let missing: Vec<&str> = required
            .iter()
            .filter(|r| !names.contains(*r))
            .copied()
            .collect();
        if !missing.is_empty() {
            out.push(error(
                "missing_input",
                action.name_range,
                format!(
                    "task '{}' calls '{}' without its required input {}",
                    task.name,
                    action.name,
                    quoted_list(&missing)
                ),
                Some(format!(
                    "add {} inline or under input:",
                    missing
                        .iter()
                        .map(|m| format!("{m}=..."))
                        .collect::<Vec<_>>()
                        .join(" ")
                )),
            ));
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let open = matches!(
            schema.get("additionalProperties"),
            Some(Value::Bool(true) | Value::Object(_))
        );
        let Some(properties) = properties.filter(|_| !open) else {
            continue;
        };
        let mut known: Vec<String> = properties.keys().cloned().collect();
        known.sort();
        for (name, at) in &given {
            if properties.contains_key(*name) {
                continue;
            }
            let close = crate::classify::close_matches(name, &known);
            out.push(error(
                "unexpected_input",
                *at,
                format!(
                    "'{}' has no input '{name}' (task '{}')",
                    action.name, task.name
                ),
                Some(if close.is_empty() {
                    format!(
                        "its inputs are {}",
                        quoted_list(&known.iter().map(String::as_str).collect::<Vec<_>>())
                    )
                } else {
                    format!("close match: {}", close.join(", "))
                }),
            ));
        }
    }
    out
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A `$.name` (YAQL) or `_.name` (Jinja) read that is certainly undefined:
/// not a workflow input, not in `vars`, not published by the task itself or
/// by any task that can run before it along transitions, and not a
/// `with-items` variable of the task. Names published to the `global` scope
/// count as defined everywhere.
pub fn undefined_variables(wf: &Workflow) -> Vec<Diagnostic> {
    let mut base: HashSet<&str> = ALWAYS_DEFINED.into_iter().collect();
    base.extend(wf.inputs.iter().map(|p| p.name.as_str()));
    base.extend(wf.vars.iter().map(String::as_str));
    for t in &wf.tasks {
        base.extend(t.global_publishes.iter().map(String::as_str));
    }
    let ancestors = ancestors(wf);
    let by_name: HashMap<&str, &Task> = wf.tasks.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut out = Vec::new();
    for task in &wf.tasks {
        let mut defined = base.clone();
        defined.extend(task.publishes.iter().map(String::as_str));
        if let Some(w) = &task.with_items {
            defined.extend(w.vars.iter().map(String::as_str));
        }
        for a in ancestors.get(task.name.as_str()).into_iter().flatten() {
            if let Some(t) = by_name.get(a) {
                defined.extend(t.publishes.iter().map(String::as_str));
            }
        }
        for s in &task.scalars {
            for name in variable_reads(&s.value) {
                if !defined.contains(name.as_str()) {
                    out.push(undefined(&name, s.range, &format!("task '{}'", task.name)));
                }
            }
        }
    }
    // The workflow's output sees the final context: every publish.
    let mut all = base;
    for t in &wf.tasks {
        all.extend(t.publishes.iter().map(String::as_str));
    }
    for s in &wf.output_scalars {
        for name in variable_reads(&s.value) {
            if !all.contains(name.as_str()) {
                out.push(undefined(
                    &name,
                    s.range,
                    &format!("the output of workflow '{}'", wf.name),
                ));
            }
        }
    }
    out
}

fn undefined(name: &str, at: TextRange, place: &str) -> Diagnostic {
    error(
        "undefined_variable",
        at,
        format!("{place} reads '{name}', which no input, vars entry or earlier publish defines"),
        Some(format!(
            "declare '{name}' in the workflow's input, or publish it in a task that runs before (a task in a parallel branch does not count)"
        )),
    )
}

/// Task name → every task that can run before it along transitions.
fn ancestors(wf: &Workflow) -> HashMap<&str, HashSet<&str>> {
    let mut parents: HashMap<&str, Vec<&str>> = HashMap::new();
    for t in &wf.tasks {
        for tr in t.transitions.iter().filter(|tr| !tr.command) {
            parents
                .entry(tr.target.as_str())
                .or_default()
                .push(t.name.as_str());
        }
    }
    let mut out = HashMap::new();
    for t in &wf.tasks {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut todo: Vec<&str> = parents.get(t.name.as_str()).cloned().unwrap_or_default();
        while let Some(p) = todo.pop() {
            if seen.insert(p) {
                todo.extend(parents.get(p).into_iter().flatten().copied());
            }
        }
        out.insert(t.name.as_str(), seen);
    }
    out
}

/// The diagnostic for an action or sub-workflow the caller cannot see,
/// located at the task.
pub fn unknown_capability(step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
    diagnostics::unknown_capability(step.pointer.clone(), "action or workflow", name, visible)
}

#[cfg(test)]
mod tests {
    use super::super::workflow::read;
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
        let doc =
            read("version: '2.0'\nwf:\n  tasks:\n    t:\n      <<: {action: std.ssh}\n").unwrap();
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
}
