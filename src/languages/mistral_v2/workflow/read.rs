//! Reading a Mistral v2 document into the [`super::Workflow`] model: the
//! YAML tree walked key by key, each part kept with its text range.

use super::super::document::{self, Node, NodeKind};
use super::action_line::action_call;
use super::{
    Document, ENGINE_COMMANDS, InputKeys, InputParam, On, Scalar, Task, Transition, WithItems,
    Workflow,
};
use crate::pilotage::text_range::TextRange;
use serde_json::Value;

/// Reads `text` (`None` when it is not YAML the gateway can parse, or
/// holds no document).
pub fn read(text: &str) -> Option<Document> {
    let root = document::parse(text).ok()??;
    Some(read_document(&root))
}

fn read_document(root: &Node) -> Document {
    let mut workflows = Vec::new();
    for (key, body) in root.entries().unwrap_or_default() {
        let Some(name) = key.as_str() else { continue };
        if name == "version" || body.entries().is_none() {
            continue;
        }
        workflows.push(read_workflow(name, key, body));
    }
    Document {
        workflows,
        unsupported: document::unsupported_feature(root),
    }
}

fn span(key: &Node, body: &Node) -> TextRange {
    TextRange {
        start: key.range.start,
        end: key.range.end.max(body.range.end),
    }
}

fn scalar(node: &Node) -> Option<Scalar> {
    Some(Scalar {
        value: node.as_str()?.to_string(),
        range: node.range,
    })
}

fn read_workflow(name: &str, key: &Node, body: &Node) -> Workflow {
    let kind_node = body.get("type");
    let inputs = body
        .get("input")
        .and_then(Node::items)
        .map(|items| items.iter().filter_map(input_param).collect())
        .unwrap_or_default();
    let vars = body
        .get("vars")
        .and_then(Node::entries)
        .map(|e| {
            e.iter()
                .filter_map(|(k, _)| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut output_scalars = Vec::new();
    for k in ["output", "output-on-error"] {
        if let Some(n) = body.get(k) {
            let mut found = Vec::new();
            n.scalars(&mut found);
            output_scalars.extend(found.into_iter().filter_map(scalar));
        }
    }
    let defaults = body
        .get("task-defaults")
        .map(|d| transitions(d, true))
        .unwrap_or_default();
    let mut tasks: Vec<Task> = Vec::new();
    let mut duplicate_tasks = Vec::new();
    for (k, v) in body
        .get("tasks")
        .and_then(Node::entries)
        .unwrap_or_default()
    {
        let Some(task_name) = k.as_str() else {
            continue;
        };
        if let Some(i) = tasks.iter().position(|t| t.name == task_name) {
            let earlier = tasks.remove(i);
            duplicate_tasks.push((earlier.name, earlier.key_range));
        }
        tasks.push(read_task(task_name, k, v, &defaults));
    }
    Workflow {
        name: name.to_string(),
        name_range: key.range,
        range: span(key, body),
        kind: kind_node
            .and_then(Node::as_str)
            .unwrap_or("direct")
            .to_string(),
        kind_range: kind_node.map(|n| n.range),
        inputs,
        vars,
        output_scalars,
        tasks,
        duplicate_tasks,
    }
}

fn input_param(item: &Node) -> Option<InputParam> {
    if let Some(name) = item.as_str() {
        return Some(InputParam {
            name: name.to_string(),
            default: None,
        });
    }
    let entries = item.entries()?;
    let (k, v) = entries.first().filter(|_| entries.len() == 1)?;
    Some(InputParam {
        name: k.as_str()?.to_string(),
        default: Some(to_json(v)),
    })
}

/// A node as the JSON value YAML's core schema gives it (plain scalars are
/// typed; quoted ones are strings). Aliases are not expanded: `null`.
pub fn to_json(node: &Node) -> Value {
    match &node.kind {
        NodeKind::Scalar { value, plain, .. } => {
            if !plain {
                return Value::String(value.clone());
            }
            if node.is_null() {
                return Value::Null;
            }
            match value.as_str() {
                "true" | "True" | "TRUE" => return Value::Bool(true),
                "false" | "False" | "FALSE" => return Value::Bool(false),
                _ => {}
            }
            if let Ok(i) = value.parse::<i64>() {
                return Value::from(i);
            }
            if value.chars().any(|c| c.is_ascii_digit())
                && let Ok(f) = value.parse::<f64>()
                && f.is_finite()
            {
                return Value::from(f);
            }
            Value::String(value.clone())
        }
        NodeKind::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        NodeKind::Map(entries) => Value::Object(
            entries
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), to_json(v))))
                .collect(),
        ),
        NodeKind::Alias => Value::Null,
    }
}

fn read_task(name: &str, key: &Node, body: &Node, defaults: &[Transition]) -> Task {
    let action = body.get("action").and_then(action_call);
    let workflow = body.get("workflow").and_then(|w| {
        let s = scalar(w)?;
        let first = s.value.split_whitespace().next()?.to_string();
        Some(Scalar {
            value: first,
            range: s.range,
        })
    });
    let input = body.get("input").map(|i| match i.entries() {
        Some(e) => InputKeys::Keys(e.iter().filter_map(|(k, _)| scalar(k)).collect()),
        None => InputKeys::Unknown,
    });
    let mut publishes = Vec::new();
    let mut global_publishes = Vec::new();
    for k in ["publish", "publish-on-error"] {
        if let Some(p) = body.get(k) {
            publish_keys(p, &mut publishes, &mut global_publishes);
        }
    }
    for on in On::ALL {
        if let Some(t) = body.get(on.key())
            && let Some(p) = t.get("publish")
        {
            publish_keys(p, &mut publishes, &mut global_publishes);
        }
    }
    let mut own = transitions(body, false);
    // task-defaults apply to each kind the task does not define itself.
    for on in On::ALL {
        if body.get(on.key()).is_none() {
            own.extend(defaults.iter().filter(|t| t.on == on).cloned());
        }
    }
    let with_items = body.get("with-items").map(|w| {
        let mut texts = Vec::new();
        w.scalars(&mut texts);
        WithItems {
            vars: texts
                .iter()
                .filter_map(|s| {
                    let v = s.as_str()?;
                    let (var, _) = v.split_once(" in ")?;
                    Some(var.trim().to_string())
                })
                .collect(),
            range: w.range,
        }
    });
    let mut found = Vec::new();
    body.scalars(&mut found);
    Task {
        name: name.to_string(),
        key_range: key.range,
        range: span(key, body),
        action,
        workflow,
        input,
        publishes,
        global_publishes,
        transitions: own,
        with_items,
        join: body.get("join").and_then(Node::as_str).map(str::to_string),
        scalars: found.into_iter().filter_map(scalar).collect(),
    }
}

/// Published names: a mapping's keys, or under Mistral's `branch`/`global`
/// scopes of a transition's `publish`.
fn publish_keys(node: &Node, out: &mut Vec<String>, global: &mut Vec<String>) {
    for (k, v) in node.entries().unwrap_or_default() {
        match k.as_str() {
            Some("branch") if v.entries().is_some() => {
                out.extend(keys(v));
            }
            Some("global") if v.entries().is_some() => {
                let names = keys(v);
                out.extend(names.iter().cloned());
                global.extend(names);
            }
            Some(name) => out.push(name.to_string()),
            None => {}
        }
    }
}

fn keys(map: &Node) -> Vec<String> {
    map.entries()
        .unwrap_or_default()
        .iter()
        .filter_map(|(k, _)| k.as_str().map(str::to_string))
        .collect()
}

/// The transitions written in `body` (a task or `task-defaults`).
fn transitions(body: &Node, inherited: bool) -> Vec<Transition> {
    let mut out = Vec::new();
    for on in On::ALL {
        let Some(value) = body.get(on.key()) else {
            continue;
        };
        // The `next` form: `{publish: ..., next: <targets>}`.
        let targets = match value.entries() {
            Some(_) => value.get("next"),
            None => Some(value),
        };
        let Some(targets) = targets else { continue };
        let entries: Vec<&Node> = match targets.items() {
            Some(items) => items.iter().collect(),
            None => vec![targets],
        };
        for entry in entries {
            let (target_node, condition) = match entry.entries() {
                Some([(k, v)]) => (k, Some(v)),
                Some(_) => continue,
                None => (entry, None),
            };
            let Some(text) = target_node.as_str() else {
                continue;
            };
            let Some(target) = text.split_whitespace().next() else {
                continue;
            };
            out.push(Transition {
                on,
                target: target.to_string(),
                target_range: target_node.range,
                command: ENGINE_COMMANDS.contains(&target),
                condition: condition.map(|c| match c.as_str() {
                    Some(s) => s.to_string(),
                    None => to_json(c).to_string(),
                }),
                inherited,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DOC: &str = "\
version: '2.0'
wf:
  input:
    - name
    - punct: '!'
    - count: 2
  vars:
    seen: 0
  output:
    greeting: <% $.greeting %>
  task-defaults:
    on-error: [cleanup]
  tasks:
    greet:
      action: std.echo output=\"hi\" delay=0 colour=red
      publish:
        greeting: <% task().result %>
      on-success:
        - each: <% $.count > 0 %>
        - done
      on-complete: audit
    each:
      with-items: x in <% [1, 2] %>
      concurrency: 2
      action: std.echo
      input:
        output: <% $.x %>
      on-success:
        publish:
          branch:
            last: 1
        next: [done, fail]
    done:
      workflow: sub
      join: all
      on-error: []
    audit:
      action: std.noop
    cleanup:
      action: std.noop
";

    #[test]
    fn reads_the_workflow_with_positions() {
        let doc = read(DOC).unwrap();
        assert_eq!(doc.workflows.len(), 1);
        let wf = &doc.workflows[0];
        assert_eq!(wf.name, "wf");
        assert_eq!(wf.name_range.encode(), "@2:1-2:2");
        assert_eq!(wf.kind, "direct");
        let inputs: Vec<_> = wf
            .inputs
            .iter()
            .map(|p| (p.name.as_str(), p.default.clone()))
            .collect();
        assert_eq!(
            inputs,
            [
                ("name", None),
                ("punct", Some(json!("!"))),
                ("count", Some(json!(2)))
            ]
        );
        assert_eq!(wf.vars, ["seen"]);
        assert_eq!(wf.output_scalars[0].value, "<% $.greeting %>");
        let names: Vec<_> = wf.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["greet", "each", "done", "audit", "cleanup"]);
        let greet = &wf.tasks[0];
        assert_eq!(greet.key_range.encode(), "@14:5-14:9");
        assert_eq!(greet.range.encode(), "@14:5-21:24");
        let action = greet.action.as_ref().unwrap();
        assert_eq!(action.name, "std.echo");
        assert_eq!(action.name_range.encode(), "@15:15-15:22");
        let params: Vec<_> = action
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.raw.as_str(), p.kept, p.range.encode()))
            .collect();
        assert_eq!(
            params,
            [
                ("output", "\"hi\"", true, "@15:24-15:34".to_string()),
                ("delay", "0", true, "@15:36-15:42".to_string()),
                ("colour", "red", false, "@15:44-15:53".to_string()),
            ]
        );
        assert_eq!(greet.publishes, ["greeting"]);
    }

    #[test]
    fn reads_every_transition_form() {
        let doc = read(DOC).unwrap();
        let wf = &doc.workflows[0];
        let t = |i: usize| -> Vec<(On, String, Option<String>, bool, bool)> {
            wf.tasks[i]
                .transitions
                .iter()
                .map(|t| {
                    (
                        t.on,
                        t.target.clone(),
                        t.condition.clone(),
                        t.command,
                        t.inherited,
                    )
                })
                .collect()
        };
        assert_eq!(
            t(0),
            [
                (
                    On::Success,
                    "each".into(),
                    Some("<% $.count > 0 %>".into()),
                    false,
                    false
                ),
                (On::Success, "done".into(), None, false, false),
                (On::Complete, "audit".into(), None, false, false),
                (On::Error, "cleanup".into(), None, false, true),
            ]
        );
        // The `next` form with a branch publish; an engine command target.
        assert_eq!(
            t(1),
            [
                (On::Success, "done".into(), None, false, false),
                (On::Success, "fail".into(), None, true, false),
                (On::Error, "cleanup".into(), None, false, true),
            ]
        );
        assert_eq!(wf.tasks[1].publishes, ["last"]);
        assert_eq!(wf.tasks[1].with_items.as_ref().unwrap().vars, ["x"]);
        // An own (empty) on-error replaces the default one.
        assert_eq!(t(2), []);
        assert_eq!(wf.tasks[2].workflow.as_ref().unwrap().value, "sub");
        assert_eq!(wf.tasks[2].join.as_deref(), Some("all"));
        assert!(matches!(&wf.tasks[1].input, Some(InputKeys::Keys(k)) if k[0].value == "output"));
    }

    #[test]
    fn a_duplicate_task_key_keeps_the_last_definition() {
        let doc = read("version: '2.0'\nwf:\n  tasks:\n    a:\n      action: std.noop\n    a:\n      action: std.echo output=1\n").unwrap();
        let wf = &doc.workflows[0];
        assert_eq!(wf.tasks.len(), 1);
        assert_eq!(wf.tasks[0].action.as_ref().unwrap().name, "std.echo");
        assert_eq!(
            wf.duplicate_tasks,
            [("a".to_string(), TextRange::decode("@4:5-4:5").unwrap())]
        );
    }

    #[test]
    fn unparsable_text_is_no_document() {
        assert!(read("wf: [").is_none());
        assert!(read("").is_none());
        assert!(read("- a\n- b\n").unwrap().workflows.is_empty());
    }
}
