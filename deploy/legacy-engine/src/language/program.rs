//! The compiled form of a workflow: what the runner executes once the validator has
//! accepted the document. Compiling never guesses: a document the validator would
//! reject does not compile.

use serde_json::{Map, Value};

use super::condition::Cond;
use super::expr::{Expr, is_expression};
use super::path::Where;

/// A compiled workflow.
#[derive(Clone, Debug)]
pub struct Program {
    pub steps: Vec<Step>,
    /// The `output` mapping, if the workflow has one.
    pub output: Option<Template>,
    /// The `input` JSON Schema, if the workflow has one.
    pub input_schema: Option<Value>,
}

/// A compiled step.
#[derive(Clone, Debug)]
pub struct Step {
    pub id: String,
    pub body: StepBody,
}

/// What a step does.
#[derive(Clone, Debug)]
pub enum StepBody {
    Call {
        capability: String,
        with: Template,
    },
    Set {
        value: Template,
    },
    Branch {
        when: Cond,
        then: Vec<Step>,
        otherwise: Vec<Step>,
    },
    ForEach {
        items: Template,
        as_name: String,
        body: Vec<Step>,
        /// Every step id declared anywhere inside the body: their outputs are
        /// forgotten at the start of each iteration (loop bodies are closed).
        body_ids: Vec<String>,
    },
}

/// A JSON value whose strings may be expressions, resolved recursively.
#[derive(Clone, Debug)]
pub enum Template {
    Literal(Value),
    Expr(Expr),
    Array(Vec<Template>),
    Object(Vec<(String, Template)>),
}

impl Template {
    /// Compiles a value; `None` when one of its expressions does not parse.
    pub fn compile(value: &Value) -> Option<Template> {
        Some(match value {
            Value::String(s) if is_expression(s) => Template::Expr(Expr::parse(s)?),
            Value::Array(items) => {
                let parts = items
                    .iter()
                    .map(Template::compile)
                    .collect::<Option<Vec<_>>>()?;
                if parts.iter().all(|p| matches!(p, Template::Literal(_))) {
                    Template::Literal(value.clone())
                } else {
                    Template::Array(parts)
                }
            }
            Value::Object(map) => {
                let mut parts = Vec::with_capacity(map.len());
                for (key, item) in map {
                    parts.push((key.clone(), Template::compile(item)?));
                }
                if parts.iter().all(|(_, p)| matches!(p, Template::Literal(_))) {
                    Template::Literal(value.clone())
                } else {
                    Template::Object(parts)
                }
            }
            other => Template::Literal(other.clone()),
        })
    }

    /// Resolves every expression with `lookup`.
    pub fn resolve(&self, lookup: &mut dyn FnMut(&Expr) -> Value) -> Value {
        match self {
            Template::Literal(v) => v.clone(),
            Template::Expr(e) => lookup(e),
            Template::Array(parts) => {
                Value::Array(parts.iter().map(|p| p.resolve(lookup)).collect())
            }
            Template::Object(parts) => {
                let mut map = Map::new();
                for (key, part) in parts {
                    map.insert(key.clone(), part.resolve(lookup));
                }
                Value::Object(map)
            }
        }
    }
}

/// Every string in `value` that is meant as an expression, with its location
/// below `at` (parsed or not: the validator reports the ones that do not parse).
pub fn expression_strings<'a>(value: &'a Value, at: &Where, out: &mut Vec<(&'a str, Where)>) {
    match value {
        Value::String(s) if is_expression(s) => out.push((s, at.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                expression_strings(item, &at.index(i), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                expression_strings(item, &at.key(key), out);
            }
        }
        _ => {}
    }
}

impl Program {
    /// Compiles a validated workflow document.
    pub fn compile(workflow: &Value) -> Result<Program, String> {
        let steps = workflow
            .get("steps")
            .and_then(Value::as_array)
            .ok_or("workflow has no steps list")?;
        let output = match workflow.get("output") {
            None | Some(Value::Null) => None,
            Some(mapping) => {
                Some(Template::compile(mapping).ok_or("output mapping does not compile")?)
            }
        };
        Ok(Program {
            steps: compile_block(steps)?,
            output,
            input_schema: workflow.get("input").filter(|v| !v.is_null()).cloned(),
        })
    }

    /// The capability of every call step, nested ones included.
    pub fn capabilities(&self) -> Vec<&str> {
        let mut out = Vec::new();
        collect_capabilities(&self.steps, &mut out);
        out
    }
}

fn collect_capabilities<'a>(steps: &'a [Step], out: &mut Vec<&'a str>) {
    for step in steps {
        match &step.body {
            StepBody::Call { capability, .. } => out.push(capability),
            StepBody::Set { .. } => {}
            StepBody::Branch {
                then, otherwise, ..
            } => {
                collect_capabilities(then, out);
                collect_capabilities(otherwise, out);
            }
            StepBody::ForEach { body, .. } => collect_capabilities(body, out),
        }
    }
}

fn compile_block(steps: &[Value]) -> Result<Vec<Step>, String> {
    steps.iter().map(compile_step).collect()
}

fn compile_step(step: &Value) -> Result<Step, String> {
    let field = |name: &str| step.get(name).filter(|v| !v.is_null());
    let text = |name: &str| field(name).and_then(Value::as_str);
    let list = |name: &str| -> Result<Vec<Step>, String> {
        match field(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => compile_block(items),
            Some(_) => Err(format!("'{name}' is not a list")),
        }
    };
    let id = text("id")
        .filter(|s| !s.is_empty())
        .ok_or("step without id")?
        .to_owned();
    let template =
        |v: Option<&Value>| Template::compile(v.unwrap_or(&Value::Null)).ok_or("bad expression");
    let body = match text("kind") {
        Some("call") => StepBody::Call {
            capability: text("capability")
                .ok_or("call without capability")?
                .to_owned(),
            with: template(field("with"))?,
        },
        Some("set") => StepBody::Set {
            value: template(step.get("value"))?,
        },
        Some("branch") => StepBody::Branch {
            when: Cond::parse(field("when").ok_or("branch without when")?, &Where::root())
                .map_err(|_| "bad condition")?,
            then: list("then")?,
            otherwise: list("else")?,
        },
        Some("for_each") => {
            let body = list("do")?;
            let mut body_ids = Vec::new();
            collect_ids(&body, &mut body_ids);
            StepBody::ForEach {
                items: template(field("items"))?,
                as_name: text("as").ok_or("for_each without as")?.to_owned(),
                body,
                body_ids,
            }
        }
        _ => return Err(format!("step '{id}' has an unknown kind")),
    };
    Ok(Step { id, body })
}

fn collect_ids(steps: &[Step], out: &mut Vec<String>) {
    for step in steps {
        out.push(step.id.clone());
        match &step.body {
            StepBody::Branch {
                then, otherwise, ..
            } => {
                collect_ids(then, out);
                collect_ids(otherwise, out);
            }
            StepBody::ForEach { body, .. } => collect_ids(body, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compiles_nested_steps_and_collects_body_ids() {
        let wf = json!({"steps": [
            {"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x", "do": [
                {"id": "b", "kind": "branch", "when": {"exists": "$.item"},
                 "then": [{"id": "c", "kind": "call", "capability": "util.echo", "with": {"value": "$.item"}}]}
            ]}
        ]});
        let program = Program::compile(&wf).expect("compiles");
        let StepBody::ForEach { body_ids, .. } = &program.steps[0].body else {
            panic!("expected a loop");
        };
        assert_eq!(body_ids, &vec!["b".to_owned(), "c".to_owned()]);
        assert_eq!(program.capabilities(), vec!["util.echo"]);
    }

    #[test]
    fn templates_resolve_recursively() {
        let t = Template::compile(&json!({"a": ["$.input.x", 2], "b": "lit"})).expect("compiles");
        let v = t.resolve(&mut |e| json!(e.text.clone()));
        assert_eq!(v, json!({"a": ["$.input.x", 2], "b": "lit"}));
        assert!(Template::compile(&json!(["$.bogus"])).is_none());
    }
}
