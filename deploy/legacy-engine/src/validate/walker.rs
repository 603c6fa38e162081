//! The walk over a workflow's steps: ids, kinds, the shape of each kind, and the
//! scope that decides which step outputs an expression may read.
//!
//! Scope rules (README "Scope rules"): a block sees the steps before it in its own
//! block and in enclosing blocks; branch arms are transparent (their steps become
//! visible after the branch); loop bodies are closed (only the loop's own output is
//! visible after it); a branch or loop never sees itself from inside.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Env;
use super::problem::{Kind, Problem};
use super::unused::Flow;
use crate::language::expr::is_expression;
use crate::language::path::Where;

/// An enclosing loop, as seen from inside its body.
#[derive(Clone, Debug)]
pub(super) struct Frame {
    pub id: String,
    pub as_name: Option<String>,
}

/// What a step can see: the ids of steps whose output it may read, and its loops.
#[derive(Clone, Debug, Default)]
pub(super) struct Scope {
    pub visible: HashSet<String>,
    pub loops: Vec<Frame>,
}

pub(super) struct Walker<'a> {
    pub env: &'a Env<'a>,
    pub workflow: &'a Value,
    pub problems: Vec<Problem>,
    seen: HashSet<String>,
    /// For every step id (first occurrence), the loops around it, outermost first.
    pub loops_of: HashMap<String, Vec<String>>,
    /// Top-level input fields the `input` schema declares, if it declares any.
    pub declared_input: Option<HashSet<String>>,
    pub flow: Flow,
}

impl<'a> Walker<'a> {
    pub fn new(env: &'a Env<'a>, workflow: &'a Value) -> Self {
        Walker {
            env,
            workflow,
            problems: Vec::new(),
            seen: HashSet::new(),
            loops_of: HashMap::new(),
            declared_input: None,
            flow: Flow::default(),
        }
    }

    pub fn push(&mut self, kind: Kind, at: Where) {
        self.problems.push(Problem::at(kind, at));
    }

    pub fn push_bare(&mut self, kind: Kind) {
        self.problems.push(Problem::bare(kind));
    }

    pub fn run(mut self, steps: &'a [Value]) -> Vec<Problem> {
        index_loops(steps, &mut Vec::new(), &mut self.loops_of);
        match self.workflow.get("input") {
            None | Some(Value::Null) => {}
            Some(Value::Object(schema)) => {
                self.declared_input = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect());
            }
            Some(_) => self.push_bare(Kind::BadInputSchema),
        }
        let mut scope = Scope::default();
        self.walk_block(steps, &Where::root().key("steps"), &mut scope);
        match self.workflow.get("output") {
            None | Some(Value::Null) => {}
            Some(mapping @ Value::Object(_)) => {
                self.check_value_exprs(mapping, &Where::root().key("output"), "output", &scope)
            }
            Some(_) => self.push_bare(Kind::BadOutputMapping),
        }
        for (step, at) in self.flow.unused_outputs() {
            self.push(Kind::UnusedOutput { step }, at);
        }
        self.problems
    }

    /// Walks one block; returns the ids it exposes to whatever follows its
    /// enclosing branch (its own steps plus, transparently, its arms' steps).
    pub fn walk_block(&mut self, steps: &'a [Value], at: &Where, scope: &mut Scope) -> Vec<String> {
        let mut exports = Vec::new();
        for (k, step) in steps.iter().enumerate() {
            let here = at.index(k);
            if !step.is_object() {
                self.push(Kind::MissingId { position: k + 1 }, here);
                continue;
            }
            let id = self.check_id(step, &here, k + 1);
            let name = id.clone().unwrap_or_else(|| format!("#{}", k + 1));
            let arm_exports = self.check_step(step, &here, &name, id.as_deref(), scope);
            if let Some(id) = &id {
                scope.visible.insert(id.clone());
                exports.push(id.clone());
            }
            for exported in arm_exports {
                scope.visible.insert(exported.clone());
                exports.push(exported);
            }
        }
        exports
    }

    fn check_id(&mut self, step: &Value, here: &Where, position: usize) -> Option<String> {
        match step.get("id") {
            Some(Value::String(id)) if !id.is_empty() => {
                if !self.seen.insert(id.clone()) {
                    self.push(Kind::DuplicateId { id: id.clone() }, here.key("id"));
                }
                Some(id.clone())
            }
            _ => {
                self.push(Kind::MissingId { position }, here.clone());
                None
            }
        }
    }

    fn check_step(
        &mut self,
        step: &'a Value,
        here: &Where,
        name: &str,
        id: Option<&str>,
        scope: &Scope,
    ) -> Vec<String> {
        let kind = match step.get("kind") {
            Some(Value::String(kind)) => kind.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        match kind.as_str() {
            "call" => {
                self.check_call(step, here, name, id, scope);
                Vec::new()
            }
            "set" => {
                match step.get("value") {
                    None => self.push(
                        Kind::SetShape {
                            step: name.to_owned(),
                        },
                        here.clone(),
                    ),
                    Some(value) => self.check_value_exprs(value, &here.key("value"), name, scope),
                }
                Vec::new()
            }
            "branch" => self.check_branch(step, here, name, scope),
            "for_each" => {
                self.check_for_each(step, here, name, scope);
                Vec::new()
            }
            _ => {
                self.push(Kind::UnsupportedStep { kind }, here.key("kind"));
                Vec::new()
            }
        }
    }

    fn check_branch(
        &mut self,
        step: &'a Value,
        here: &Where,
        name: &str,
        scope: &Scope,
    ) -> Vec<String> {
        let when = step.get("when").filter(|v| !v.is_null());
        let then = step.get("then");
        let otherwise = step.get("else");
        let then_ok = matches!(then, Some(Value::Array(list)) if !list.is_empty());
        let else_ok = matches!(otherwise, None | Some(Value::Null | Value::Array(_)));
        if when.is_none() || !then_ok || !else_ok {
            self.push(
                Kind::BranchShape {
                    step: name.to_owned(),
                },
                here.clone(),
            );
        }
        if let Some(when) = when {
            self.check_condition(when, &here.key("when"), name, scope);
        }
        let mut exports = Vec::new();
        for (key, arm) in [("then", then), ("else", otherwise)] {
            if let Some(Value::Array(list)) = arm {
                // Each arm starts from the scope before the branch: the `else` arm
                // does not see the `then` arm.
                let mut arm_scope = scope.clone();
                exports.extend(self.walk_block(list, &here.key(key), &mut arm_scope));
            }
        }
        exports
    }

    fn check_for_each(&mut self, step: &'a Value, here: &Where, name: &str, scope: &Scope) {
        let items = step.get("items").filter(|v| !v.is_null());
        let items_ok = match items {
            Some(Value::String(text)) => is_expression(text),
            Some(Value::Array(_)) => true,
            _ => false,
        };
        let as_name = step
            .get("as")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let body = step.get("do");
        let body_ok = matches!(body, Some(Value::Array(list)) if !list.is_empty());
        if !items_ok || as_name.is_none() || !body_ok {
            self.push(
                Kind::ForEachShape {
                    step: name.to_owned(),
                },
                here.clone(),
            );
        }
        if let Some(items) = items
            && items_ok
        {
            self.check_value_exprs(items, &here.key("items"), name, scope);
        }
        if let Some(Value::Array(list)) = body {
            let mut body_scope = scope.clone();
            body_scope.loops.push(Frame {
                id: name.to_owned(),
                as_name: as_name.map(str::to_owned),
            });
            // A closed body: nothing it declares is exported past the loop.
            self.walk_block(list, &here.key("do"), &mut body_scope);
        }
    }
}

/// Records, for every step id, the ids of the loops around it (outermost first).
fn index_loops(steps: &[Value], chain: &mut Vec<String>, out: &mut HashMap<String, Vec<String>>) {
    for (k, step) in steps.iter().enumerate() {
        let id = step
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        if let Some(id) = id {
            out.entry(id.to_owned()).or_insert_with(|| chain.clone());
        }
        for key in ["then", "else"] {
            if let Some(list) = step.get(key).and_then(Value::as_array) {
                index_loops(list, chain, out);
            }
        }
        if let Some(list) = step.get("do").and_then(Value::as_array) {
            chain.push(id.map_or_else(|| format!("#{}", k + 1), str::to_owned));
            index_loops(list, chain, out);
            chain.pop();
        }
    }
}
