//! The JavaScript of a workflow: every `={{ … }}` parameter string and
//! every Code node's `jsCode`. n8n renders an unclosed `{{` literally,
//! evaluates a `$` variable it does not have, or a call of a method no
//! value has, to nothing, and fails a node
//! whose JavaScript does not parse only when the node runs;
//! an expression reading a node that does not exist, that runs later, or
//! that sits on another If or Switch arm fails (or reads nothing) at that
//! point too. Each finding is located at the parameter holding the text.

use super::{error, finding};
use crate::classify::{Diagnostic, Severity};
use crate::languages::n8n_v1::document::{CODE, Node, Workflow, escape};
use crate::languages::n8n_v1::dollar_names::FreeNames;
use crate::languages::n8n_v1::expression_names;
use crate::languages::n8n_v1::graph::Graph;
use crate::languages::n8n_v1::javascript::{self, UnclosedExpression};
use serde_json::Value;
use std::collections::HashMap;

/// Every finding on the expressions and Code of `wf`.
pub fn all(wf: &Workflow, graph: &Graph) -> Vec<Diagnostic> {
    let mut scan = Scan {
        wf,
        graph,
        descendants: HashMap::new(),
        out: Vec::new(),
    };
    for (x, node) in wf.nodes.iter().enumerate() {
        if let Some(parameters) = node.parameters {
            scan.value(
                x,
                node,
                parameters,
                format!("{}/parameters", node.pointer()),
            );
        }
    }
    scan.out
}

struct Scan<'w, 'a> {
    wf: &'w Workflow<'a>,
    graph: &'w Graph,
    /// Node → the nodes a run reaches after it, computed once per node.
    descendants: HashMap<usize, Vec<bool>>,
    out: Vec<Diagnostic>,
}

impl Scan<'_, '_> {
    fn value(&mut self, x: usize, node: &Node, value: &Value, at: String) {
        match value {
            Value::Object(fields) => {
                for (key, v) in fields {
                    self.value(x, node, v, format!("{at}/{}", escape(key)));
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.value(x, node, v, format!("{at}/{i}"));
                }
            }
            Value::String(text) if is_code(node, &at) => self.code(x, text, at),
            Value::String(text) => self.expression(x, text, at),
            _ => {}
        }
    }

    fn code(&mut self, x: usize, body: &str, at: String) {
        if body.trim().is_empty() {
            // An empty body is a missing parameter: the adapter's finding.
            return;
        }
        if let Some(why) = javascript::function_body_error(body) {
            self.out.push(error(
                "malformed_expression",
                at.clone(),
                format!("the Code node's JavaScript does not parse: {why}"),
            ));
        }
        self.references(x, &javascript::node_references(body), at);
    }

    fn expression(&mut self, x: usize, text: &str, at: String) {
        let insides = match javascript::expressions(text) {
            Ok(insides) => insides,
            Err(UnclosedExpression) => {
                self.out.push(finding(
                    Severity::Error,
                    "malformed_expression",
                    at,
                    "an expression opens `{{` and never closes it: n8n would send the text as it is".into(),
                    Some("close it with `}}`".into()),
                ));
                return;
            }
        };
        if let Some((inside, why)) = insides
            .iter()
            .find_map(|e| javascript::expression_error(e).map(|why| (e, why)))
        {
            self.out.push(error(
                "malformed_expression",
                at.clone(),
                format!("the expression `{{{{{inside}}}}}` is not valid JavaScript: {why}"),
            ));
        }
        let free: Vec<FreeNames> = insides.iter().map(|e| javascript::names(e)).collect();
        self.variables(x, &free, &at);
        self.methods(x, &free, &at);
        let names: Vec<String> = insides
            .iter()
            .flat_map(|e| javascript::node_references(e))
            .collect();
        self.references(x, &names, at);
    }

    /// `unresolved_reference` for each `$` variable the expressions read
    /// that n8n's expressions do not have (`$foo`, `$josn`): n8n evaluates
    /// it to nothing and the node goes on with an empty value.
    fn variables(&mut self, x: usize, free: &[FreeNames], at: &str) {
        let node = &self.wf.nodes[x].name;
        let names = free.iter().flat_map(|f| &f.dollar);
        let unknown = unknown_names(
            names,
            expression_names::is_known,
            expression_names::close_to,
        );
        for (name, hint) in unknown {
            let message = format!(
                "'{node}' reads `{name}`, which n8n's expressions do not have: n8n {} evaluates it to nothing, silently",
                expression_names::n8n_version()
            );
            self.out.push(finding(
                Severity::Error,
                "unresolved_reference",
                at.to_string(),
                message,
                hint,
            ));
        }
    }

    /// `unresolved_reference` for each method the expressions call that no
    /// value in n8n's expressions has (`$json.a.noSuchFunction()`): n8n
    /// evaluates the call to nothing, and what uses the value then fails or
    /// goes on empty.
    fn methods(&mut self, x: usize, free: &[FreeNames], at: &str) {
        let node = &self.wf.nodes[x].name;
        let names = free.iter().flat_map(|f| &f.methods);
        let unknown = unknown_names(
            names,
            expression_names::is_method,
            expression_names::methods_close_to,
        );
        for (name, hint) in unknown {
            let message = format!(
                "'{node}' calls `.{name}()`, a method no value in n8n's expressions has (no string, number, array, object, date or object of n8n's): n8n {} evaluates the call to nothing, and the node goes on with an empty value or fails on it",
                expression_names::n8n_version()
            );
            self.out.push(finding(
                Severity::Error,
                "unresolved_reference",
                at.to_string(),
                message,
                hint,
            ));
        }
    }

    /// `unresolved_reference` for each name read from node `x` that
    /// cannot have run before it; each name once per parameter.
    fn references(&mut self, x: usize, names: &[String], at: String) {
        let mut seen: Vec<&str> = Vec::new();
        for name in names {
            if seen.contains(&name.as_str()) {
                continue;
            }
            seen.push(name);
            if let Some(d) = self.reference(x, name, &at) {
                self.out.push(d);
            }
        }
    }

    fn reference(&mut self, x: usize, name: &str, at: &str) -> Option<Diagnostic> {
        let reader = self.wf.nodes[x].name;
        let Some(r) = self.wf.position(name) else {
            return Some(finding(
                Severity::Error,
                "unresolved_reference",
                at.to_string(),
                format!("'{reader}' reads node '{name}', which the workflow does not have"),
                name_hint(self.wf, name),
            ));
        };
        if r == x || self.graph.dist[x].is_none() {
            return None;
        }
        if self.after(r)[x] {
            return None;
        }
        let why = if self.after(x)[r] {
            format!("'{reader}' reads node '{name}', which runs after it")
        } else if self.graph.on_exclusive_arms(x, r) {
            format!(
                "'{reader}' reads node '{name}', which is on another branch: a run that reaches '{reader}' never ran '{name}'"
            )
        } else {
            return None;
        };
        Some(error("unresolved_reference", at.to_string(), why))
    }

    fn after(&mut self, i: usize) -> &Vec<bool> {
        let graph = self.graph;
        self.descendants
            .entry(i)
            .or_insert_with(|| graph.descendants(i))
    }
}

/// Whether the string at `at` is the JavaScript body of a Code node.
fn is_code(node: &Node, at: &str) -> bool {
    node.kind == CODE
        && at == format!("{}/parameters/jsCode", node.pointer())
        && node
            .parameter("language")
            .and_then(Value::as_str)
            .is_none_or(|l| l == "javaScript")
}

/// A hint naming the node meant: one whose name differs only in case, or
/// close matches.
pub(super) fn name_hint(wf: &Workflow, name: &str) -> Option<String> {
    if let Some(n) = wf
        .nodes
        .iter()
        .find(|n| n.name.to_lowercase() == name.to_lowercase())
    {
        return Some(format!(
            "node names are case-sensitive: the node is named '{}'",
            n.name
        ));
    }
    let names: Vec<String> = wf.nodes.iter().map(|n| n.name.to_string()).collect();
    let close = crate::classify::close_matches(name, &names);
    (!close.is_empty()).then(|| format!("close match: {}", close.join(", ")))
}

/// The names `known` does not have, each once (a parameter names a mistake
/// once however often it repeats it), with a hint of the close matches.
fn unknown_names<'a>(
    names: impl Iterator<Item = &'a String>,
    known: fn(&str) -> bool,
    close_to: fn(&str) -> Vec<String>,
) -> Vec<(&'a str, Option<String>)> {
    let mut unknown: Vec<(&str, Option<String>)> = Vec::new();
    for name in names {
        if known(name) || unknown.iter().any(|(seen, _)| seen == name) {
            continue;
        }
        let close = close_to(name);
        let hint = (!close.is_empty()).then(|| format!("close match: {}", close.join(", ")));
        unknown.push((name, hint));
    }
    unknown
}
