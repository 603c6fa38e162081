//! Variables read in expressions that are certainly undefined where they
//! are read.

use super::super::expressions::variable_reads;
use super::super::workflow::{Task, Workflow};
use super::error;
use crate::classify::Diagnostic;
use crate::pilotage::text_range::TextRange;
use std::collections::{HashMap, HashSet};

/// Names every expression can read without a publish: the request context
/// Mistral adds to every execution.
const ALWAYS_DEFINED: [&str; 1] = ["openstack"];

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
