//! The parts of a Mistral v2 workflow document the gateway reads, with their
//! text ranges: the workflow's name, `input`, `vars` and `output`, and its
//! tasks in document order with their action or sub-workflow, inputs,
//! publishes, transitions and `with-items`.
//!
//! This is not Mistral's validator: anything malformed is left out here and
//! left for Mistral to report. Only the last definition of a duplicated task
//! key is a task (YAML's, and so Mistral's, rule); the earlier ones are kept
//! as [`Workflow::duplicate_tasks`] for the checks.

use super::document::{self, Node, NodeKind};
use crate::pilotage::text_range::{Position, TextRange};
use serde_json::Value;

/// Mistral's engine commands: transition targets that are not tasks.
pub const ENGINE_COMMANDS: [&str; 4] = ["fail", "succeed", "pause", "noop"];

/// A parsed document: its workflows in document order.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub workflows: Vec<Workflow>,
    /// A YAML feature the gateway does not follow (alias, merge key), and
    /// where.
    pub unsupported: Option<(&'static str, TextRange)>,
}

/// One workflow.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub name: String,
    pub name_range: TextRange,
    /// The workflow's key through the end of its body.
    pub range: TextRange,
    /// `type:` as written (`direct` when absent).
    pub kind: String,
    pub kind_range: Option<TextRange>,
    /// `None` when `input` is not a list of names and one-entry maps.
    pub inputs: Vec<InputParam>,
    /// Names in `vars:`.
    pub vars: Vec<String>,
    /// Every written scalar of `output` and `output-on-error`.
    pub output_scalars: Vec<Scalar>,
    pub tasks: Vec<Task>,
    /// Earlier definitions of a task key defined again later: name and key range.
    pub duplicate_tasks: Vec<(String, TextRange)>,
}

/// One `input` entry.
#[derive(Debug, Clone)]
pub struct InputParam {
    pub name: String,
    /// The default, as YAML types it; `None` when there is none (required).
    pub default: Option<Value>,
}

/// A scalar's value and range.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub value: String,
    pub range: TextRange,
}

/// One task.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub key_range: TextRange,
    /// The task's key through the end of its body.
    pub range: TextRange,
    pub action: Option<ActionCall>,
    /// `workflow:`: the sub-workflow's name and the scalar's range.
    pub workflow: Option<Scalar>,
    /// `input:` keys, or `None` when `input` is absent.
    pub input: Option<InputKeys>,
    /// Names published by the task (`publish`, `publish-on-error`, and the
    /// `publish` of its transitions).
    pub publishes: Vec<String>,
    /// Names a transition publishes to Mistral's `global` scope, which every
    /// task can read once published.
    pub global_publishes: Vec<String>,
    /// Transitions, including those inherited from `task-defaults`.
    pub transitions: Vec<Transition>,
    pub with_items: Option<WithItems>,
    pub join: Option<String>,
    /// Every written scalar value of the task's body, for expression checks.
    pub scalars: Vec<Scalar>,
}

/// The written `input:` of a task.
#[derive(Debug, Clone)]
pub enum InputKeys {
    /// A mapping: its keys.
    Keys(Vec<Scalar>),
    /// An expression or anything else whose keys cannot be known statically.
    Unknown,
}

/// `action: NAME key=value ...`.
#[derive(Debug, Clone)]
pub struct ActionCall {
    pub name: String,
    /// The name's range.
    pub name_range: TextRange,
    pub params: Vec<InlineParam>,
}

/// One inline `key=value` parameter.
#[derive(Debug, Clone)]
pub struct InlineParam {
    pub name: String,
    pub raw: String,
    /// Whether Mistral keeps it as written: a quoted string, an expression,
    /// a bracketed value, `true`/`false`/`null` or digits. Anything else is
    /// silently dropped by Mistral (an unquoted word, `-3`, `True`), or cut
    /// to its leading digits (`0.5` is read as `0`).
    pub kept: bool,
    pub range: TextRange,
}

/// The transition kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum On {
    Success,
    Error,
    Complete,
}

impl On {
    pub const ALL: [On; 3] = [On::Success, On::Error, On::Complete];
    /// The task key, which is also the `event` Mistral records.
    pub fn key(self) -> &'static str {
        match self {
            On::Success => "on-success",
            On::Error => "on-error",
            On::Complete => "on-complete",
        }
    }
    pub fn from_event(event: &str) -> Option<On> {
        On::ALL.into_iter().find(|o| o.key() == event)
    }
}

/// One target of a transition.
#[derive(Debug, Clone)]
pub struct Transition {
    pub on: On,
    /// The target task or engine command (first word of the entry).
    pub target: String,
    pub target_range: TextRange,
    /// Whether the target is one of [`ENGINE_COMMANDS`].
    pub command: bool,
    /// The condition text, for a `{target: condition}` entry.
    pub condition: Option<String>,
    /// Whether it comes from `task-defaults`.
    pub inherited: bool,
}

/// `with-items: var in <expr>` (one or several `var in ...` entries).
#[derive(Debug, Clone)]
pub struct WithItems {
    /// The iteration variables.
    pub vars: Vec<String>,
    pub range: TextRange,
}

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

/// Splits `action:` into its name and inline parameters.
fn action_call(node: &Node) -> Option<ActionCall> {
    let text = node.as_str()?;
    // Offsets into the text map to columns only for a plain one-line
    // scalar, whose value is exactly what was written.
    let exact = matches!(node.kind, NodeKind::Scalar { plain: true, .. }) && !text.contains('\n');
    let at = |from: usize, to: usize| {
        if !exact {
            return node.range;
        }
        let col = |i: usize| node.range.start.column + text[..i].chars().count();
        TextRange {
            start: Position {
                line: node.range.start.line,
                column: col(from),
            },
            end: Position {
                line: node.range.start.line,
                column: col(to).saturating_sub(1).max(col(from)),
            },
        }
    };
    let lead = text.len() - text.trim_start().len();
    let name_end = text[lead..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| lead + i);
    let name = text[lead..name_end].to_string();
    if name.is_empty() {
        return None;
    }
    let mut params = Vec::new();
    let bytes = text.as_bytes();
    // Every step moves `i` forward by at least one whole character.
    let char_len = |i: usize| text[i..].chars().next().map_or(1, char::len_utf8);
    let mut i = name_end;
    while i < text.len() {
        if text[i..].starts_with(char::is_whitespace) {
            i += char_len(i);
            continue;
        }
        let start = i;
        let key_end = text[i..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .map_or(text.len(), |k| i + k);
        if key_end == start || bytes.get(key_end) != Some(&b'=') {
            // Not `key=value`: skip the word (Mistral ignores it too).
            let next = i + char_len(i);
            i = text[next..]
                .find(char::is_whitespace)
                .map_or(text.len(), |k| next + k);
            continue;
        }
        let value_start = key_end + 1;
        let value_end = value_end(text, value_start);
        let raw = text[value_start..value_end].to_string();
        params.push(InlineParam {
            name: text[start..key_end].to_string(),
            kept: kept(&raw),
            raw,
            range: at(start, value_end),
        });
        i = if value_end > value_start {
            value_end
        } else {
            value_start
        };
    }
    Some(ActionCall {
        name,
        name_range: at(lead, name_end),
        params,
    })
}

/// Where an inline value starting at `from` ends (exclusive byte offset).
fn value_end(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let closing = |open: &str, close: &str| {
        rest.strip_prefix(open)
            .and_then(|r| r.find(close))
            .map(|k| from + open.len() + k + close.len())
    };
    let end = if rest.starts_with("<%") {
        closing("<%", "%>")
    } else if rest.starts_with("{{") {
        closing("{{", "}}")
    } else if rest.starts_with('\'') {
        closing("'", "'")
    } else if rest.starts_with('"') {
        closing("\"", "\"")
    } else if rest.starts_with('[') || rest.starts_with('{') {
        balanced(rest).map(|k| from + k)
    } else {
        None
    };
    end.unwrap_or_else(|| {
        rest.find(char::is_whitespace)
            .map_or(text.len(), |k| from + k)
    })
}

/// The end of a bracketed value, counting brackets outside quotes.
fn balanced(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether Mistral keeps an inline value as written (see
/// [`InlineParam::kept`]). Its inline-parameter pattern accepts digits
/// only as numbers: `-3` and `True` are dropped, `0.5` is read as `0`
/// (measured against Mistral 23.0.0).
fn kept(raw: &str) -> bool {
    let quoted =
        |open: char, close: char| raw.len() >= 2 && raw.starts_with(open) && raw.ends_with(close);
    quoted('\'', '\'')
        || quoted('"', '"')
        || quoted('[', ']')
        || quoted('{', '}')
        || (raw.starts_with("<%") && raw.ends_with("%>"))
        || matches!(raw, "true" | "false" | "null")
        || (!raw.is_empty() && raw.chars().all(|c| c.is_ascii_digit()))
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

    #[test]
    fn inline_values_mistral_keeps() {
        for raw in [
            "'a b'",
            "\"x\"",
            "<% $.x %>",
            "{{ 1 + 1 }}",
            "[1, 2]",
            "{\"a\": 1}",
            "true",
            "null",
            "12",
        ] {
            assert!(kept(raw), "{raw}");
        }
        for raw in ["red", "a.b", "yes", "True", "1a", "-3", "0.5", ""] {
            assert!(!kept(raw), "{raw}");
        }
        let text = "a: 'std.http url=''http://x/a b'' body={\"k\": [1, \"}\"]} n=<% 1 + 2 %>'";
        let doc = document::parse(text).unwrap().unwrap();
        let call = action_call(doc.get("a").unwrap()).unwrap();
        assert_eq!(call.name, "std.http");
        let raws: Vec<_> = call.params.iter().map(|p| p.raw.as_str()).collect();
        assert_eq!(
            raws,
            ["'http://x/a b'", "{\"k\": [1, \"}\"]}", "<% 1 + 2 %>"]
        );
    }
}
